#include "models/transformer.h"

#include <algorithm>
#include <initializer_list>

namespace orrery::models {
namespace {

Op Gemm(const char* name, double m, double n, double k, double bytes_per) {
  Op op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flops = 2 * m * n * k;
  op.bytes = (m * k + k * n + m * n) * bytes_per;
  op.out_bytes = m * n * bytes_per;
  return op;
}

Op Elementwise(const char* name, double bytes) {
  Op op;
  op.name = name;
  op.kind = OpKind::kElementwise;
  op.bytes = bytes;
  op.op_sac_recompute = 1;  // not in torchtitan's _save_list (LayerOps)
  return op;
}

// Soft-capping, cap * tanh(x / cap) (Gemma 2 report, Sec. 2), as eager code
// writes it (NeMo's Gemma2DotProductAttention and Gemma2OutputLayer,
// transformers' eager Gemma 2): x / cap, tanh, * cap, each reading and
// writing the `elements` (6e an element). Backward: the product's and the
// division's gradients read and write it (2e each); tanh's reads it and its
// saved output and writes it (3e): 7e.
Op SoftcapOp(const char* name, double elements, double e) {
  Op op = Elementwise(name, 6 * elements * e);
  op.bwd_bytes = 7 * elements * e;
  return op;
}

// torchtitan's op-level SAC counter (transformer.h, LayerOps): `widths` are
// the output widths of the aten.mm calls one operator stands for, in call
// order; returns the share of its output width whose call count is even
// (recomputed) and advances the count.
double MmRecomputeShare(int& mm_count, std::initializer_list<double> widths) {
  double all = 0, recomputed = 0;
  for (const double w : widths) {
    ++mm_count;
    all += w;
    if (mm_count % 2 == 0) recomputed += w;
  }
  return all > 0 ? recomputed / all : 0.0;
}
Op Counted(Op op, int& mm_count) {
  op.op_sac_recompute = MmRecomputeShare(mm_count, {op.n});
  return op;
}
// Sets a linear layer's GEMM's bias-gradient bytes, `rows` tokens of its
// output width (Op::bias_grad_bytes), where the framework reduces them in a
// kernel of its own. In place: LayerOps runs on the estimator's hot path,
// and an operator copied by value costs its 104 bytes each time.
void SetBiasGrad(Op& op, bool bias_grad, double rows) {
  if (bias_grad && op.m > 0) op.bias_grad_bytes = static_cast<float>(rows / op.m * op.out_bytes);
}

// A norm over `elements` activation elements: fused, or as eager code runs
// it (NormBytesPerElement), with its non-vectorized passes
// (EagerNormUnvecPasses) when it is an eager RMSNorm.
Op NormOp(const char* name, const ModelSpec& m, bool eager, double elements, double e) {
  Op op = Elementwise(name, elements * NormBytesPerElement(m.norm, eager, e));
  if (eager && m.norm == Norm::kRmsNorm) {
    const UnvecPasses u = EagerNormUnvecPasses(e);
    op.unvec_bytes = static_cast<float>(elements * u.fwd_bytes);
    op.unvec_elements = static_cast<float>(elements * u.fwd_elements);
    op.bwd_unvec_bytes = static_cast<float>(elements * u.bwd_bytes);
    op.bwd_unvec_elements = static_cast<float>(elements * u.bwd_elements);
  }
  return op;
}

// Adds `norm` to `out`, with its backward's traffic: a fused norm's
// backward is one pass that reads dY and X and writes dX (3e an element),
// the weight's (and bias's) gradient summed beside it into per-block fp32
// partials that a small second kernel finishes (apex's FastLayerNorm,
// NVIDIA/apex PR 1037: "the main backward kernel crucially reads the large
// input tensors dout and x only once ... still needs a second launch to
// finalize wgrad"; Transformer Engine's normalization kernels, the same
// design; the partials, a few hundred rows of h floats, are left out).
// Where the plan computes the weight's gradient in a kernel of its own
// (LayerShape::norm_weight_grad_kernel) that kernel follows, reading dY and
// X again (2e): PyTorch's LayerNorm backward (aten/src/ATen/native/cuda/
// layer_norm_kernel.cu, LayerNormBackwardKernelImplInternal:
// layer_norm_grad_input_kernel, then GammaBetaBackwardCUDAKernel), apex's
// and Megatron's non-persistent kernel (layer_norm_cuda_kernel.cu:
// cuComputePartGradGammaBeta, then cuComputeGradInput) and the two kernels
// torch.compile generates. An eager RMSNorm's passes, its weight's
// gradient among them, are priced as they run (NormOp).
// `norm` by reference, set in place: LayerOps runs on the estimator's hot
// path (SetBiasGrad).
[[gnu::always_inline]] inline void AddNorm(OpList& out, Op& norm, const ModelSpec& m, const LayerShape& s, double elements, double e) {
  const bool passes = s.eager && m.norm == Norm::kRmsNorm;
  const bool own_kernel = s.norm_weight_grad_kernel && !passes;
  if (!passes) norm.bwd_bytes = 3 * e * elements;
  out.Add(norm);
  if (own_kernel) {
    Op grad = Elementwise("norm_weight_grad", 0);
    grad.bwd_bytes = 2 * e * elements;
    out.Add(grad);
  }
}

// Element accesses per FFN element of the activation: a fused gated unit
// (SwiGLU / GeGLU, Shazeer 2020, Eq. 6) reads the gate and the up
// projection and writes their product once (3); eager code runs the
// nonlinearity as its own kernel (reads and writes the gate: 2) and then
// the product (reads two, writes one: 3), 5 (litgpt's LLaMAMLP / GemmaMLP:
// act(fc_1(x)) * fc_2(x)). An ungated GELU reads and writes once either way (2).
double ActivationPasses(bool gated, bool eager) {
  if (!gated) return 2;
  return eager ? 5 : 3;
}

}  // namespace

void LayerOps(const ModelSpec& m, const LayerShape& s, bool moe, int64_t ep, OpList& out) {
  out.count = 0;
  out.early_stop_tail = 0;
  const double b = static_cast<double>(s.micro_batch);
  const double seq = static_cast<double>(s.seq);
  const double kv_len = static_cast<double>(s.full_seq);
  const double t = static_cast<double>(s.tp);
  const double h = static_cast<double>(m.hidden);
  const double d = static_cast<double>(HeadDim(m));
  const double heads = static_cast<double>(m.heads) / t;  // query heads on this device
  // KV heads are split over TP when they divide it, else replicated (one per device).
  const double kv = std::max(1.0, static_cast<double>(KvHeads(m)) / t);
  const double f = static_cast<double>(FfnSize(m));
  const double e = s.act_bytes;
  const double tokens = b * seq;
  // Norms, dropout and residuals run on the whole sequence, or on 1/t of it
  // with sequence parallelism (Korthikanti et al. 2022, Sec. 4.2.2).
  const double norm_tokens = s.sequence_parallel ? tokens / t : tokens;
  // Dropout masks, one byte per element, written only where the model drops
  // (ModelSpec::hidden_dropout / attention_dropout): a fused
  // bias-dropout-add without dropout reads the branch and the residual and
  // writes their sum (3e), with dropout it also writes the mask (3e + 1).
  const double mask = s.dropout && m.hidden_dropout > 0 ? 1 : 0;
  int mm = 0;  // aten.mm calls so far (op-level SAC, see transformer.h)
  // The linear layers that carry biases (LayerParameters: the Q, K, V and
  // output projections outside MLA, the MLP's, experts' and shared experts'
  // matrices; not the router) reduce their output gradients into the bias
  // gradients in kernels of their own where the framework does so.
  const bool bias_grad = m.bias && s.separate_bias_grad;

  // A fused norm reads its input and writes its output once; an eager
  // RMSNorm makes the passes EagerNormBytesPerElement counts
  // (NormBytesPerElement: an eager LayerNorm is one kernel).
  Op input_norm = NormOp("input_norm", m, s.eager, norm_tokens * h, e);
  input_norm.module_norm = UsesMla(m);
  AddNorm(out, input_norm, m, s, norm_tokens * h, e);
  // Per-head query/key and value sizes (equal to d without MLA).
  const double dqk = static_cast<double>(QkHeadDim(m));
  const double dv = static_cast<double>(VHeadDim(m));
  // RoPE in a kernel of its own on a fused plan writes new queries and keys
  // (rope_kernel, below): what makes the packed layout's value copy and
  // concatenation run.
  const bool rope_new_keys = s.rope_kernel && !s.eager && m.position == Position::kRope && !UsesMla(m);
  // So does a QK-norm (below), whose kernel writes new keys.
  const bool qk_norm = m.qk_norm && !UsesMla(m);
  const bool new_keys = rope_new_keys || (qk_norm && !s.eager);
  if (UsesMla(m)) {
    // Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434, Sec. 2.1,
    // Eqs. 9-19, with the decoupled RoPE key): queries through a q_lora_rank
    // latent, keys and values through a kv_lora_rank latent plus one shared
    // RoPE key. The down projections are replicated on every TP rank
    // (Megatron-Core runs them duplicated); the up projections split their
    // heads over TP.
    const double r = static_cast<double>(m.rope_head_dim);
    const double cq = static_cast<double>(m.q_lora_rank);
    const double ckv = static_cast<double>(m.kv_lora_rank);
    if (m.q_lora_rank > 0) {
      out.Add(Counted(Gemm("q_down_proj", tokens, cq, h, e), mm));
      Op q_up = Counted(Gemm("q_up_proj", tokens, heads * dqk, cq, e), mm);
      q_up.mla_up = true;
      out.Add(q_up);
    } else {
      out.Add(Counted(Gemm("q_proj", tokens, heads * dqk, h, e), mm));
    }
    out.Add(Counted(Gemm("kv_down_proj", tokens, ckv + r, h, e), mm));
    Op kv_up = Counted(Gemm("kv_up_proj", tokens, heads * (d + dv), ckv, e), mm);
    kv_up.mla_up = true;
    out.Add(kv_up);
  } else {
    // wq, wk, wv: three mm calls (transformer.h).
    Op qkv = Gemm("qkv_proj", tokens, (heads + 2 * kv) * d, h, e);
    qkv.op_sac_recompute = MmRecomputeShare(mm, {heads * d, kv * d, kv * d});
    SetBiasGrad(qkv, bias_grad, tokens);
    out.Add(qkv);
    // Megatron-Core's packed layout with Transformer Engine's attention
    // (packed_qkv_copies; a fused plan's): with RoPE, a QK-norm or
    // grouped-query attention the three gradients reaching TE's SplitAlongDim
    // are not adjacent views of one buffer (RoPE's or the norms' backward in
    // kernels of their own and the attention kernel write them apart), so
    // its backward runs torch.cat (noop_ok false); without any of them, the
    // attention takes Q, K and V packed (sbh3d) and writes one packed
    // gradient, which it returns as is.
    const bool packed = s.packed_qkv_copies && !s.eager;
    const bool packed_cat = packed && (new_keys || kv < heads);
    if (s.qkv_split_cat || packed_cat) {
      // Q, K and V split off the fused projection's output by views
      // (torch.split / chunk: MPT's qkv.chunk(3), Megatron-LM's
      // split_tensor_along_last_dim, litgpt's qkv.split, TE's SplitAlongDim):
      // their backward is a cat (split_backward, tools/autograd/
      // derivatives.yaml), which reads the three gradients and writes the
      // projection's output gradient. Nothing forward: the views copy
      // nothing.
      Op split = Elementwise("qkv_split_grad", 0);
      split.bwd_bytes = 2 * qkv.out_bytes;
      out.Add(split);
    }
    if (packed && kv < heads) {
      // Megatron-Core lays the fused projection's output out as [sq, b, ng,
      // (np/ng + 2) hn] and splits it by views (get_query_key_value_tensors);
      // query.reshape(sq, b, -1, hn) then merges the groups with the heads
      // within a group, whose strides ((np/ng + 2) hn and hn) do not chain,
      // so with grouped-query attention the reshape copies the queries: it
      // reads and writes them once, forward. Its backward reshapes a
      // contiguous gradient, a view.
      Op copy = Elementwise("query_copy", 2 * tokens * heads * d * e);
      copy.bwd_bytes = kNoBackward;
      out.Add(copy);
    }
  }
  if (qk_norm) {
    // QK-norm (ModelSpec::qk_norm): a norm over each head's query and each
    // head's key, one module each, between the projection and RoPE:
    // Megatron-Core's get_query_key_value_tensors calls q_layernorm on the
    // queries after their reshape and k_layernorm on the keys (TENorm with
    // the head's width, megatron/core/transformer/attention.py; Megatron-Bridge's
    // Qwen3 providers set qk_layernorm), Hugging Face's Qwen3Attention runs
    // q_norm and k_norm (Qwen3RMSNorm) on the per-head views. Each is a norm
    // over its rows of one head's width, priced as the layer's norms are
    // (NormOp, AddNorm): the queries' on tokens x heads x d elements, the
    // keys' on tokens x kv x d, the whole sequence (after the projection
    // sequence parallelism has gathered it).
    const double q_elements = tokens * heads * d;
    const double k_elements = tokens * kv * d;
    Op q_norm = NormOp("q_norm", m, s.eager, q_elements, e);
    AddNorm(out, q_norm, m, s, q_elements, e);
    Op k_norm = NormOp("k_norm", m, s.eager, k_elements, e);
    AddNorm(out, k_norm, m, s, k_elements, e);
  }
  if (s.eager && m.position == Position::kRope) {
    // Rotary embedding of the queries and keys (Su et al. 2021, RoFormer,
    // Eq. 34: x cos + rotate_half(x) sin) as eager code writes it (litgpt's
    // apply_rope): negate the second half (reads and writes half the
    // elements), concatenate (reads and writes all), x * cos, rotated * sin
    // (each reads and writes all; the cos/sin tables are one sequence's worth
    // and left out) and the sum (reads two, writes one): 10 element accesses,
    // 10e bytes per query or key element. A fused plan runs it in a kernel
    // of its own (rope_kernel, below) or inside the attention or QKV kernel,
    // which is not counted.
    //
    // Its non-vectorized part (Op::unvec_bytes) is torchtitan's complex form
    // of the same rotation (torchtitan/models/llama/model.py,
    // apply_rotary_emb: view_as_complex(x.float()) * freqs_cis, then
    // type_as), 2e + 16 = 10e bytes in bf16 too: the upcast (unrolled, e + 4
    // bytes) and the complex product with the broadcast table (8 bytes per
    // real element), one element each, forward; backward the product with
    // the conjugate table and the upcast of the incoming bf16 gradient, the
    // same. The H200 profile (validation/gpu_step/h200/shapes/) shows these
    // four kernels per layer at 0.112 ms a pass for 8192 tokens of Llama 3.2
    // 1B's 2560 query and key features; 2 elements each at the measured
    // element rate price 0.124 ms.
    const double qk = tokens * (heads * dqk + (UsesMla(m) ? heads : kv) * dqk);
    Op rope = Elementwise("rope", 10 * qk * e);
    rope.unvec_bytes = rope.bwd_unvec_bytes = static_cast<float>(qk * (e + 12));
    rope.unvec_elements = rope.bwd_unvec_elements = static_cast<float>(2 * qk);
    out.Add(rope);
  } else if (rope_new_keys) {
    // RoPE in a kernel of its own (Transformer Engine's FusedRoPEFunc, which
    // Megatron-Core's apply_rotary_pos_emb calls on the queries and on the
    // keys under apply_rope_fusion): tex.fused_rope_forward reads each query
    // and key element and writes the rotated one into a new tensor (the
    // cos/sin table, one sequence of fp32 frequencies, left out), and
    // fused_rope_backward does the same to their gradients: 2e an element
    // each way. The new keys are what make the values' copy and the split's
    // concatenation run (packed_qkv_copies, qkv_split_cat).
    const double qk = tokens * (heads + kv) * d;
    Op rope = Elementwise("rope", 2 * qk * e);
    rope.bwd_bytes = 2 * qk * e;
    out.Add(rope);
  }
  if (s.packed_qkv_copies && !s.eager && s.flash && new_keys) {
    // Transformer Engine's attention checks the layout of the queries, keys
    // and values it is given (get_qkv_layout): keys written new by RoPE or a
    // QK-norm and
    // values still strided views of the packed projection have different
    // strides, a layout it does not take ("not_supported"), so it makes all
    // three contiguous, which copies the values, forward; the backward of
    // .contiguous() passes the gradient on. Inside the attention module, so
    // selective recompute runs it again with the attention core.
    Op copy = Elementwise("value_copy", 2 * tokens * kv * d * e);
    copy.bwd_bytes = kNoBackward;
    copy.attention_core = true;
    out.Add(copy);
  }
  // MLA expands the latent into per-head keys and values: no KV-head sharing.
  const double kv_att = UsesMla(m) ? heads : kv;
  if (s.eager && kv_att < heads) {
    // Grouped-query attention in eager code repeats each key/value head for
    // the query heads that share it before attention (torchtitan's
    // repeat_kv: expand, then reshape, which copies): a strided copy of K
    // and of V, each reading its kv heads and writing the query heads' worth,
    // in the generic (non-vectorized) kernel, one element per element
    // written. Its backward sums the copies' gradients back onto the kv
    // heads, a reduction reading and writing as much, vectorized. The H200
    // profile (validation/gpu_step/h200/shapes/) shows the two copies at
    // 0.037 ms each for 8192 tokens of Llama 3.2 1B (8 KV heads of 64 for 32
    // query heads).
    const double kv_copy = 2 * tokens * (kv_att + heads) * d * e;
    Op rep = Elementwise("repeat_kv", kv_copy);
    rep.bwd_bytes = kv_copy;
    rep.unvec_bytes = static_cast<float>(kv_copy);
    rep.unvec_elements = static_cast<float>(2 * tokens * heads * d);
    out.Add(rep);
  }
  if (s.flash) {
    // FlashAttention (Dao et al. 2022): reads Q, K, V, writes O and the
    // softmax statistics; no s x s matrix in memory.
    // With a sliding window (ModelSpec::sliding_window) the kernel skips
    // the blocks outside the band, and chunked layers (attention_chunk)
    // run each chunk as a sequence of its own: the layers' mean share of
    // the scores (LocalAttentionShare), counted in the model FLOPs too. A
    // materialised attention computes every score and masks: no share.
    Op op;
    op.name = "flash_attention";
    op.kind = OpKind::kFlashAttention;
    op.flops = 2 * b * seq * kv_len * heads * (dqk + dv) * LocalAttentionShare(m, kv_len);
    op.bytes = b * (seq * heads * (dqk + dv) + kv_len * kv_att * (dqk + dv)) * e;
    op.m = seq;
    op.n = kv_len;
    op.k = 0.5 * (dqk + dv);
    op.batch = static_cast<float>(b * heads);
    op.attention_core = true;
    // Kept by op-level SAC (aten._scaled_dot_product_flash_attention is in
    // torchtitan's _save_list): its output O and its fp32 logsumexp, one
    // per query row and head (FlashAttention-2, Dao 2023, Algorithm 1's L).
    op.out_bytes = b * seq * heads * dv * e + 4 * b * heads * seq;
    out.Add(op);
  } else {
    // Materialised attention (Megatron-LM 2021-22): Q K^T, fused
    // scale-mask-softmax, dropout (when the model drops attention
    // probabilities), then attention over values.
    const double scores = b * heads * seq * kv_len;
    Op qk;
    qk.name = "attention_scores";
    qk.kind = OpKind::kBatchedGemm;
    qk.m = seq;
    qk.n = kv_len;
    qk.k = dqk;
    qk.batch = static_cast<float>(b * heads);
    qk.flops = 2 * scores * dqk;
    qk.bytes = (b * heads * seq * dqk + b * kv_att * kv_len * dqk) * e + scores * e;
    qk.attention_core = true;
    qk.op_sac_recompute = 1;  // aten.bmm: not in torchtitan's _save_list
    out.Add(qk);
    if (m.attention_softcap > 0) {
      // ModelSpec::attention_softcap over every score (SoftcapOp).
      Op cap = SoftcapOp("attention_softcap", scores, e);
      cap.attention_core = true;
      out.Add(cap);
    }
    // Per score element, in bytes of e: the fused softmax reads the scores
    // and writes the probabilities (2e); its backward runs in place on the
    // output gradient, reading it and the saved probabilities and writing
    // the input gradient (3e: Megatron-LM's scaled_masked_softmax_cuda.cu,
    // bwd_cuda, "backward pass is completely in-place"). Dropout reads and
    // writes the probabilities and writes a one-byte mask (2e + 1); its
    // backward (PyTorch native_dropout_backward: gradient x mask x scale)
    // reads the gradient and the mask and writes the gradient (2e + 1).
    Op sm = Elementwise("softmax", 2 * scores * e);
    sm.bwd_bytes = 3 * scores * e;
    sm.attention_core = true;
    out.Add(sm);
    if (s.dropout && m.attention_dropout > 0) {
      // Reads the softmax output, writes the dropped copy and its mask.
      Op dr = Elementwise("attention_dropout", scores * (2 * e + 1));
      dr.bwd_bytes = scores * (2 * e + 1);
      dr.attention_core = true;
      out.Add(dr);
    }
    Op av;
    av.name = "attention_over_values";
    av.kind = OpKind::kBatchedGemm;
    av.m = seq;
    av.n = dv;
    av.k = kv_len;
    av.batch = static_cast<float>(b * heads);
    av.flops = 2 * scores * dv;
    av.bytes = scores * e + (b * kv_att * kv_len * dv + b * heads * seq * dv) * e;
    av.attention_core = true;
    av.op_sac_recompute = 1;
    out.Add(av);
  }
  // Eager code turns the attention output (batch, heads, seq, dv) back into
  // (batch, seq, heads x dv) with transpose(1, 2) and a reshape, which copies
  // nothing: PyTorch's SDPA kernels allocate their output as (batch, seq,
  // heads, dv) and return a transposed view of it, so the reshape finds it
  // contiguous (the H200 profile, validation/gpu_step/h200/shapes/, has no
  // copy of the attention output's shape).
  Op out_proj = Counted(Gemm("out_proj", tokens, h, heads * dv, e), mm);
  SetBiasGrad(out_proj, bias_grad && !UsesMla(m), norm_tokens);
  out.Add(out_proj);
  out.Add(Elementwise(mask > 0 ? "dropout_residual" : "residual_add", norm_tokens * h * (3 * e + mask)));
  Op mlp_norm = NormOp("post_attention_norm", m, s.eager, norm_tokens * h, e);
  mlp_norm.dense_mlp = !moe;
  mlp_norm.module_norm = moe;
  AddNorm(out, mlp_norm, m, s, norm_tokens * h, e);
  const bool swiglu = m.activation == Activation::kSwiglu;
  const double up_n = swiglu ? 2 : 1;
  if (moe) {
    // Router, then each token runs top_k experts; with ep expert groups the
    // tokens are exchanged by all-to-all (the estimator adds that), and a
    // device computes experts/ep experts on the tokens routed to them. With
    // balanced routing its expert work equals top_k dense MLPs on `tokens`;
    // the busiest device does `expert_load` times that.
    //
    // Expert tensor parallelism (etp, 0 = tp): under MoE parallel folding
    // (arXiv 2504.14960) each of the tp ranks routes its own 1/t of the
    // tokens (sequence parallelism) and the etp ranks of an expert gather
    // theirs, so a device computes etp/t of `tokens` x top_k on 1/etp of
    // each expert's width: the same FLOPs as etp = t, in GEMMs of other
    // shapes, and whole experts' weights when etp = 1.
    const double et = s.etp > 0 ? static_cast<double>(s.etp) : t;
    const double fe = static_cast<double>(ExpertFfn(m)) / et;
    const double routed = tokens * (et / t) * static_cast<double>(m.top_k) * s.expert_load;
    Op router = Counted(Gemm("router", tokens, static_cast<double>(m.experts), h, e), mm);
    router.router = true;
    out.Add(router);
    Op up = Gemm("expert_up", routed, up_n * fe, h, e);
    // Weights of every local expert are read once per microbatch.
    const double local_experts = static_cast<double>(m.experts) / static_cast<double>(ep);
    up.bytes = (routed * h + routed * up_n * fe) * e + local_experts * up_n * fe * h * e;
    up.expert = true;
    up.op_sac_recompute = 1;  // grouped, not aten.mm (transformer.h)
    SetBiasGrad(up, bias_grad, routed);
    out.Add(up);
    Op expert_act = Elementwise(swiglu ? "swiglu" : "gelu", routed * fe * ActivationPasses(swiglu, s.eager) * e);
    expert_act.expert_act = true;
    out.Add(expert_act);
    Op down = Gemm("expert_down", routed, h, fe, e);
    down.bytes = (routed * fe + routed * h) * e + local_experts * fe * h * e;
    down.expert = true;
    down.op_sac_recompute = 1;
    SetBiasGrad(down, bias_grad, routed);
    out.Add(down);
    if (m.shared_experts > 0) {
      // Shared experts (DeepSeekMoE, arXiv 2401.06066, Sec. 3.2, Eq. 9): a
      // dense MLP of their summed width on every token, split over TP like
      // the dense MLP, with no all-to-all.
      const double fs = static_cast<double>(SharedExpertFfn(m)) / t;
      Op shared_up = Gemm("shared_up", tokens, up_n * fs, h, e);
      shared_up.op_sac_recompute = swiglu ? MmRecomputeShare(mm, {fs, fs}) : MmRecomputeShare(mm, {fs});
      SetBiasGrad(shared_up, bias_grad, tokens);
      out.Add(shared_up);
      out.Add(Elementwise(swiglu ? "shared_swiglu" : "shared_gelu", tokens * fs * ActivationPasses(swiglu, s.eager) * e));
      Op shared_down = Counted(Gemm("shared_down", tokens, h, fs, e), mm);
      SetBiasGrad(shared_down, bias_grad, norm_tokens);
      out.Add(shared_down);
    }
  } else {
    const double ft = f / t;
    // Gated: w1 then w3, two mm calls of equal width (transformer.h).
    Op up = Gemm("mlp_up", tokens, up_n * ft, h, e);
    up.op_sac_recompute = swiglu ? MmRecomputeShare(mm, {ft, ft}) : MmRecomputeShare(mm, {ft});
    up.dense_mlp = true;
    SetBiasGrad(up, bias_grad, tokens);
    out.Add(up);
    Op act = Elementwise(swiglu ? "swiglu" : "gelu", tokens * ft * ActivationPasses(swiglu, s.eager) * e);
    act.dense_mlp = true;
    out.Add(act);
    Op down = Counted(Gemm("mlp_down", tokens, h, ft, e), mm);
    down.dense_mlp = true;
    SetBiasGrad(down, bias_grad, norm_tokens);
    out.Add(down);
  }
  out.Add(Elementwise(mask > 0 ? "dropout_residual" : "residual_add", norm_tokens * h * (3 * e + mask)));
  // A checkpoint stopping early (OpList::early_stop_tail): the residual add
  // and, in a dense layer, the down projection before it; nothing when the
  // closing operator drops out (its mask is saved) or in a MoE layer, whose
  // combine of the experts' outputs saves the routing weights after the
  // last expert GEMM.
  if (mask == 0) out.early_stop_tail = moe ? 1 : 2;
}

void HeadOps(const ModelSpec& m, const LayerShape& s, OpList& out) {
  out.count = 0;
  out.early_stop_tail = 0;
  const double tokens = static_cast<double>(s.micro_batch * s.seq);
  const double h = static_cast<double>(m.hidden);
  const double v = static_cast<double>(m.vocab) / static_cast<double>(s.tp);
  const double norm_tokens = s.sequence_parallel ? tokens / static_cast<double>(s.tp) : tokens;
  Op final_norm = NormOp("final_norm", m, s.eager, norm_tokens * h, s.act_bytes);
  AddNorm(out, final_norm, m, s, norm_tokens * h, s.act_bytes);
  out.Add(Gemm("lm_head", tokens, v, h, s.act_bytes));
  if (m.final_logit_softcap > 0) {
    // ModelSpec::final_logit_softcap over the logits in the activations'
    // type (SoftcapOp).
    out.Add(SoftcapOp("logit_softcap", tokens * v, s.act_bytes));
  }
  // Cross-entropy over the vocabulary shard: read logits, write fp32 softmax.
  out.Add(Elementwise("cross_entropy", tokens * v * (s.act_bytes + 4)));
}

void EmbeddingOps(const ModelSpec& m, const LayerShape& s, OpList& out) {
  out.count = 0;
  out.early_stop_tail = 0;
  const double tokens = static_cast<double>(s.micro_batch * s.seq);
  const double h = static_cast<double>(m.hidden);
  out.Add(Elementwise("embedding", 2 * tokens * h * s.act_bytes));
}

double LayerParameters(const ModelSpec& m, bool moe) {
  const double h = static_cast<double>(m.hidden);
  const double d = static_cast<double>(HeadDim(m));
  const double a = static_cast<double>(m.heads);
  const double g = static_cast<double>(KvHeads(m));
  const double bias = m.bias ? 1 : 0;
  const double norm = m.norm == Norm::kLayerNorm ? 2 : 1;  // scale (+ shift)
  double p = 0;
  if (UsesMla(m)) {
    // MLA (DeepSeek-V2 Sec. 2.1): W^DQ (h x d_c'), its RMSNorm, W^UQ/W^QR
    // (d_c' x a (d + d^R)); W^DKV and W^KR (h x (d_c + d^R)), its RMSNorm,
    // W^UK/W^UV (d_c x a (d + d_v)); W^O (a d_v x h).
    const double r = static_cast<double>(m.rope_head_dim);
    const double dqk = static_cast<double>(QkHeadDim(m));
    const double dv = static_cast<double>(VHeadDim(m));
    const double cq = static_cast<double>(m.q_lora_rank);
    const double ckv = static_cast<double>(m.kv_lora_rank);
    p += m.q_lora_rank > 0 ? h * cq + cq + cq * a * dqk : h * a * dqk;
    p += h * (ckv + r) + ckv + ckv * a * (d + dv) + a * dv * h;
  } else {
    // Attention: Q, K, V and output projections (+ biases).
    p += h * (a + 2 * g) * d + bias * (a + 2 * g) * d + a * d * h + bias * h;
  }
  p += 2 * norm * h;  // two norms
  // QK-norm: one weight (and bias) a head wide each for queries and keys.
  if (m.qk_norm && !UsesMla(m)) p += 2 * norm * d;
  const double mats = m.activation == Activation::kSwiglu ? 3 : 2;
  if (moe) {
    const double fe = static_cast<double>(ExpertFfn(m));
    const double fs = static_cast<double>(SharedExpertFfn(m));
    p += static_cast<double>(m.experts) * (mats * h * fe + bias * (fe + h)) +
         h * static_cast<double>(m.experts);
    if (fs > 0) p += mats * h * fs + bias * (fs + h);
  } else {
    const double f = static_cast<double>(FfnSize(m));
    p += mats * h * f + bias * (f * (mats - 1) + h);
  }
  return p;
}

double HeadParameters(const ModelSpec& m) {
  const double norm = (m.norm == Norm::kLayerNorm ? 2.0 : 1.0) * static_cast<double>(m.hidden);
  return norm + (m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab * m.hidden));
}

double RoutedExpertParameters(const ModelSpec& m) {
  if (m.experts <= 1) return 0;
  const double h = static_cast<double>(m.hidden);
  const double fe = static_cast<double>(ExpertFfn(m));
  const double mats = m.activation == Activation::kSwiglu ? 3 : 2;
  const double bias = m.bias ? 1 : 0;
  return static_cast<double>(m.experts) * (mats * h * fe + bias * (fe + h));
}

double MtpParameters(const ModelSpec& m) {
  if (m.mtp_depth <= 0) return 0;
  const double h = static_cast<double>(m.hidden);
  const double norm = m.norm == Norm::kLayerNorm ? 2 : 1;
  return static_cast<double>(m.mtp_depth) * (LayerParameters(m, m.experts > 1) + 2 * h * h + 2 * norm * h);
}

double ParameterCount(const ModelSpec& m, int64_t seq_len) {
  const double moe_layers = static_cast<double>(MoeLayerCount(m));
  const double dense_layers = static_cast<double>(m.layers) - moe_layers;
  return dense_layers * LayerParameters(m, false) + moe_layers * LayerParameters(m, true) +
         EmbeddingParameters(m, seq_len) + HeadParameters(m);
}

double ActivatedParameterCount(const ModelSpec& m, int64_t seq_len) {
  if (m.experts <= 1) return ParameterCount(m, seq_len);
  // Each MoE layer as if it had only its top-k experts and a k-wide router.
  // (Not a model with experts = top_k: at top-1 that model has no MoE layer
  // at all, MoeLayerCount being 0 for one expert, and loses the shared
  // experts with them.)
  const double per_expert = RoutedExpertParameters(m) / static_cast<double>(m.experts);
  const double inactive = static_cast<double>(m.experts - std::min(m.top_k, m.experts)) *
                          (per_expert + static_cast<double>(m.hidden));
  return ParameterCount(m, seq_len) - static_cast<double>(MoeLayerCount(m)) * inactive;
}

double ModelFlopsPerIteration(const ModelSpec& m, int64_t global_batch, int64_t seq) {
  OpList ops;
  return ModelFlopsPerIteration(m, global_batch, seq, ops);
}

double ModelFlopsPerIteration(const ModelSpec& m, int64_t global_batch, int64_t seq, OpList& ops) {
  double attention = 0;
  return ModelFlopsPerIteration(m, global_batch, seq, ops, attention);
}

double ModelFlopsPerIteration(const ModelSpec& m, int64_t global_batch, int64_t seq, OpList& ops,
                              double& attention_flops) {
  LayerShape s;
  s.micro_batch = global_batch;
  s.seq = seq;
  s.full_seq = seq;
  s.tp = 1;
  s.flash = true;
  double forward = 0;
  double attention = 0;  // forward, the attention cores' part of `forward`
  // One layer's FLOPs, and its attention core's into `core`.
  auto layer_flops = [&ops](double& core) {
    double layer = 0;
    core = 0;
    for (int i = 0; i < ops.count; ++i) {
      const Op& op = ops.ops[static_cast<size_t>(i)];
      layer += op.flops;
      if (op.attention_core) core += op.flops;
    }
    return layer;
  };
  const int64_t moe_layers = MoeLayerCount(m);
  for (int pass = 0; pass < 2; ++pass) {
    const bool moe = pass == 1;
    const double count = static_cast<double>(moe ? moe_layers : m.layers - moe_layers);
    if (count == 0) continue;
    LayerOps(m, s, moe, 1, ops);
    double core = 0;
    forward += count * layer_flops(core);
    attention += count * core;
  }
  HeadOps(m, s, ops);
  double head = 0;
  for (int i = 0; i < ops.count; ++i) head += ops.ops[static_cast<size_t>(i)].flops;
  forward += head;
  if (m.mtp_depth > 0) {
    // Each MTP module: its block, the 2h -> h projection, the shared head
    // (DeepSeek-V3 Sec. 2.2, Eqs. 21-23).
    LayerOps(m, s, m.experts > 1, 1, ops);
    double core = 0;
    const double block = layer_flops(core);
    attention += static_cast<double>(m.mtp_depth) * core;
    const double tokens = static_cast<double>(global_batch) * static_cast<double>(seq);
    const double h = static_cast<double>(m.hidden);
    forward += static_cast<double>(m.mtp_depth) * (block + 2 * tokens * 2 * h * h + head);
  }
  // Backward is twice the forward (two GEMMs per GEMM).
  attention_flops = 3 * attention;
  return 3 * forward;
}

}  // namespace orrery::models
