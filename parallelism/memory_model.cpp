#include "parallelism/memory_model.h"

#include <algorithm>

#include "parallelism/schedule.h"

namespace orrery::parallelism {

namespace {

// Bytes one layer keeps under torchtitan's op-level selective activation
// checkpointing (Recompute::kOp; the policy at models::LayerOps): the
// block's input, which the checkpoint keeps (2 sbh / sp), the outputs of
// the operators the policy saves (Op::out_bytes of each kept share: in
// Llama the outputs of wq, wv, w1 and w2, the attention output with its
// fp32 logsumexp), and with sequence parallelism the outputs of the two
// reduce-scatters (2 x 2 sbh / t, in torchtitan's _save_list). The operator
// list is filled on the stack, no allocation.
double OpSacActivationBytes(const models::ModelSpec& m, const TrainingPlan& p, int64_t b, int64_t s,
                            bool moe) {
  models::LayerShape shape;
  shape.micro_batch = b;
  shape.seq = s;
  shape.full_seq = s * p.cp;
  shape.tp = p.tp;
  shape.sequence_parallel = p.sequence_parallel;
  shape.flash = p.attention != Attention::kMaterialized;
  shape.act_bytes = 2;
  shape.expert_load = ExpertLoadFactor(p);
  shape.etp = p.etp;
  models::OpList ops;
  models::LayerOps(m, shape, moe, p.ep, ops);
  const double sbh = static_cast<double>(s) * static_cast<double>(b) * static_cast<double>(m.hidden) * 2;
  const double t = static_cast<double>(p.tp);
  double kept = p.sequence_parallel ? sbh / t + 2 * sbh / t : sbh;
  for (int i = 0; i < ops.count; ++i) {
    const models::Op& op = ops.ops[static_cast<size_t>(i)];
    kept += (1 - op.op_sac_recompute) * op.out_bytes;
  }
  return kept;
}

// The table of memory_model.h for a dense layer (moe = false) or a MoE layer
// under recompute mode `r` (the plan's, or that of one layer of a plan that
// recomputes every recompute_interval-th layer).
double ActivationBytes(const models::ModelSpec& m, const TrainingPlan& p, int64_t b, int64_t s,
                       bool moe, Recompute r) {
  const double sb = static_cast<double>(s) * static_cast<double>(b);
  const double h = static_cast<double>(m.hidden);
  const double t = static_cast<double>(p.tp);
  const double sp = p.sequence_parallel ? t : 1.0;
  if (r == Recompute::kFull) return 2 * sb * h / sp;
  if (r == Recompute::kOp) return OpSacActivationBytes(m, p, b, s, moe);
  const double d = static_cast<double>(models::HeadDim(m));
  const double a = static_cast<double>(m.heads);
  const double g = static_cast<double>(models::KvHeads(m));
  const double f = static_cast<double>(models::FfnSize(m));
  const bool swiglu = m.activation == models::Activation::kSwiglu;
  // Tensors outside the tensor-parallel regions (split only by SP):
  // two norm inputs (4 sbh), QKV input (2 sbh), MLP input (2 sbh), two
  // dropout masks (2 sbh): 10 sbh for GPT (Korthikanti et al. 2022, Sec.
  // 4.1, Eq. 1's 34 sbh = 10 outside + 24 inside); without hidden dropout
  // the masks are not made: 8 sbh.
  double outside = (m.hidden_dropout > 0 ? 10 : 8) * sb * h;
  // Inside (split by t): Q (2 sb a d), K and V (4 sb g d), attention output
  // (2 sb a d), MLP activations (GeLU: input and output 4 sbf; SwiGLU: gate,
  // up and product 6 sbf). For GPT this is 24 sbh.
  const double mlp_per_width = swiglu ? 6 : 4;
  double mlp = mlp_per_width * f;
  double outside_extra = 0;
  if (moe) {
    // Routed experts keep the MLP tensors of top_k x load copies of each
    // token, and the dispatcher the permuted copy of its input (2 bytes per
    // element per copy); shared experts a dense MLP of their width; the
    // router its fp32 logits (Megatron-Core MoE layer).
    const double copies = static_cast<double>(m.top_k) * ExpertLoadFactor(p);
    mlp = copies * (mlp_per_width * static_cast<double>(models::ExpertFfn(m)) + 2 * h) +
          mlp_per_width * static_cast<double>(models::SharedExpertFfn(m));
    outside_extra += 4 * static_cast<double>(m.experts) * sb;
  }
  double attention = 4 * a * d + 4 * g * d;
  if (models::UsesMla(m)) {
    // MLA: Q and the expanded K (a (d + d^R) each), V and the attention
    // output (a d_v each), inside TP; the query and KV latents (with the
    // RoPE key) before the up projections, replicated on every TP rank.
    const double dqk = static_cast<double>(models::QkHeadDim(m));
    const double dv = static_cast<double>(models::VHeadDim(m));
    attention = 4 * a * dqk + 4 * a * dv;
    // Recomputing the up projections keeps only the attention output
    // (2 a d_v bytes per token) of the four.
    if (RecomputesMlaUpProj(m, p)) attention = 2 * a * dv;
    outside_extra += 2 * static_cast<double>(m.q_lora_rank + m.kv_lora_rank + m.rope_head_dim) * sb * sp;
  }
  // Query and key norms (ModelSpec::qk_norm, Qwen3): each norm saves its
  // input for its backward, as the layer's norms do (Korthikanti et al.
  // 2022 Sec. 4.1 count a LayerNorm's input; Transformer Engine's RMSNorm
  // saves its input and the fp32 reciprocal RMS, a row's 4 bytes beside d
  // elements, not counted): the queries and keys before their norms, 2 sb
  // (a + g) d inside TP. The RoPE after them saves nothing of its own (its
  // backward rotates the gradient back by the same angles: Transformer
  // Engine's fused RoPE saves the frequencies; eager code's product with
  // constant cos/sin keeps no activation).
  const bool qk_norm = m.qk_norm && !models::UsesMla(m);
  if (qk_norm) attention += 2 * (a + g) * d;
  if (p.elementwise == Elementwise::kEager) {
    // PyTorch eager code (models::LayerOps' eager passes) saves more for
    // its backward than fused kernels. Its RMSNorm (torchtitan's
    // _norm(x.float()).type_as(x) * weight) keeps the fp32 upcast of its
    // input, which the square's and the normalising product's backward
    // read, and the bf16 normalised tensor the weight product's backward
    // reads: 4 + 2 bytes an element where a fused norm keeps its bf16
    // input (2), 4 more per norm, 8 sbh for the two. Grouped-query
    // attention repeats the K and V heads before SDPA (repeat_kv), which
    // then saves the repeated ones: 4 sb (a - g) d more inside TP.
    if (m.norm == models::Norm::kRmsNorm) outside += 8 * sb * h;
    // The query and key norms the same way (Hugging Face's Qwen3RMSNorm:
    // the fp32 upcast kept besides the bf16 output, 4 bytes an element
    // more than the fused norm's input).
    if (qk_norm && m.norm == models::Norm::kRmsNorm) attention += 4 * (a + g) * d;
    if (!models::UsesMla(m) && g < a) attention += 4 * (a - g) * d;
  }
  const bool fp8 = p.precision == hardware::DataType::kFp8;
  // Bytes an element of the quantized copy a linear layer keeps for its
  // weight gradient (SavedQuantizedBytes): 1 under the FP8 recipes, 0.5625
  // under NVFP4; what each kept copy saves against its 2-byte BF16 input.
  const double q = SavedQuantizedBytes(p);
  const double saved = 2 - q;
  if (fp8 && moe) {
    // The same rule for a MoE layer: Transformer Engine's GroupedLinear
    // (fc1 and fc2 of the routed experts) quantizes its input row-wise and
    // column-wise and keeps the column-wise FP8 copy for its weight
    // gradient (transformer_engine/pytorch/module/grouped_linear.py,
    // _GroupedLinear.forward: split_quantize of the input), so each routed
    // copy's permuted input (2 h) and its activation product (2 f_e) are
    // kept in 1 byte an element; the shared experts' down projection the
    // same (2 f_s -> f_s). The MLP's norm output stays BF16: the router, a
    // BF16 or FP32 linear outside Transformer Engine's FP8 recipe, keeps
    // it. The attention side as a dense layer's: its input projection's
    // norm output halves and the output projection's FP8 input is kept
    // beside the BF16 attention output.
    const double copies = static_cast<double>(m.top_k) * ExpertLoadFactor(p);
    const double dv = static_cast<double>(models::UsesMla(m) ? models::VHeadDim(m) : models::HeadDim(m));
    outside -= saved * sb * h;
    mlp -= saved * (copies * (static_cast<double>(models::ExpertFfn(m)) + h) +
                    static_cast<double>(models::SharedExpertFfn(m)));
    attention += q * a * dv;
  }
  if (fp8 && !moe) {
    // FP8 (Transformer Engine): a linear layer keeps for its weight-gradient
    // GEMM the FP8 copy of its input it cast in the forward pass, 1 byte per
    // element instead of the BF16 input's 2 (TE Linear / LayerNormLinear save
    // the quantised input: `inputmat_t` in TE 1.x, the column-wise
    // Float8Tensor in 2.x; TE user guide "Using FP8 with Transformer
    // Engine"). The QKV and MLP inputs (the norms' outputs, 2 sbh) and the
    // down projection's input (the activation's product, 2 sbf) halve; the
    // output projection's FP8 input is kept beside the BF16 attention output
    // that FlashAttention's backward needs (+ sb a d_v).
    const double dv = static_cast<double>(models::UsesMla(m) ? models::VHeadDim(m) : models::HeadDim(m));
    outside -= 2 * saved * sb * h;
    mlp -= saved * f;
    attention += q * a * dv;
  }
  if (!moe && RecomputesMlp(p)) {
    // The MLP block under its checkpoint (RecomputesMlp): its input, the
    // residual stream, is already counted as the norm's input; the norm's
    // output (2 sbh, 1 in FP8 as the up projection's FP8 copy; eager
    // RMSNorm's fp32 upcast, 4 sbh more) and the MLP's activations are not
    // kept.
    outside -= (fp8 ? q : 2) * sb * h;
    if (p.elementwise == Elementwise::kEager && m.norm == models::Norm::kRmsNorm) outside -= 4 * sb * h;
    mlp = 0;
  }
  if (RecomputesLayernorm(p)) {
    // A MoE layer's pre-MLP norm output (2 sbh, bf16 in FP8 too: the
    // router keeps it) and MLA's input norm output (2 sbh; in FP8 the down
    // projections' FP8 copy, 1 sbh, stays); a fused norm keeps nothing of
    // its own to free.
    if (moe) outside -= 2 * sb * h;
    if (models::UsesMla(m) && !fp8) outside -= 2 * sb * h;
  }
  if (moe && RecomputesMoeAct(p) && !fp8) {
    // The activation's product, 2 bytes an element of each routed copy.
    mlp -= static_cast<double>(m.top_k) * ExpertLoadFactor(p) * 2 * static_cast<double>(models::ExpertFfn(m));
  }
  const double inside = sb * (attention + mlp);
  // Attention scores: softmax output (2), dropout mask (1), dropout output (2)
  // per element of the b a s^2 score tensor (Korthikanti et al. 2022, Sec.
  // 4.1: 5 a s^2 b); without attention dropout only the softmax output (2),
  // which the attention over values reads; gone with flash or selective.
  // Soft-capping's tanh (ModelSpec::attention_softcap) keeps its output for
  // its backward (tanh_backward reads it; the division and the product by
  // the cap keep nothing): 2 more.
  const bool keep_scores = p.attention == Attention::kMaterialized && r == Recompute::kNone;
  const double per_score = (m.attention_dropout > 0 ? 5 : 2) + (m.attention_softcap > 0 ? 2 : 0);
  const double scores = keep_scores ? per_score * a * static_cast<double>(s) * sb : 0;
  return (outside + outside_extra) / sp + (inside + scores) / t;
}

// A layer's activation bytes averaged over a stage's layers: under recompute
// full with recompute_interval N, 1/N of them keep only their input
// (2 sbh / sp, Korthikanti et al. 2022 Sec. 5) and the rest everything, as
// without recompute (FullRecomputeShare, plan_spec.h).
double MeanActivationBytes(const models::ModelSpec& m, const TrainingPlan& p, int64_t b, int64_t s,
                           bool moe) {
  const double share = FullRecomputeShare(p);
  if (share <= 0 || share >= 1) return ActivationBytes(m, p, b, s, moe, p.recompute);
  return share * ActivationBytes(m, p, b, s, moe, Recompute::kFull) +
         (1 - share) * ActivationBytes(m, p, b, s, moe, Recompute::kNone);
}

}  // namespace

double LayerActivationBytes(const models::ModelSpec& m, const TrainingPlan& p, int64_t b,
                            int64_t s) {
  return MeanActivationBytes(m, p, b, s, false);
}

double MoeLayerActivationBytes(const models::ModelSpec& m, const TrainingPlan& p, int64_t b,
                               int64_t s) {
  return MeanActivationBytes(m, p, b, s, true);
}

ActivationTerms StageActivationTerms(const models::ModelSpec& m, const TrainingPlan& p, int64_t seq) {
  ActivationTerms a;
  const int64_t local_seq = seq / p.cp;
  // MoE layers spread evenly over the stages (models::MoeFraction).
  const double moe_share = models::MoeFraction(m);
  a.per_layer =
      (1 - moe_share) * LayerActivationBytes(m, p, p.micro_batch, local_seq) +
      (moe_share > 0 ? moe_share * MoeLayerActivationBytes(m, p, p.micro_batch, local_seq) : 0.0);
  if (p.recompute == Recompute::kFull) {
    // The layer being recomputed holds its full activations meanwhile
    // (RecomputesMlaUpProj is false under recompute full: nothing else to
    // switch off).
    a.recomputing_layer = ActivationBytes(m, p, p.micro_batch, local_seq, moe_share > 0, Recompute::kNone);
  } else if (RecomputesMlp(p) && moe_share < 1) {
    // A dense layer in its backward pass holds its MLP block's rebuilt
    // activations beside what it kept.
    TrainingPlan kept_all = p;
    kept_all.recompute_mlp = false;
    a.recomputing_layer = std::max(0.0, ActivationBytes(m, kept_all, p.micro_batch, local_seq, false, p.recompute) -
                                            ActivationBytes(m, p, p.micro_batch, local_seq, false, p.recompute));
  } else if (p.recompute == Recompute::kOp) {
    // The layer in its backward pass holds what it recomputed beside what
    // it kept: its full activations less the kept part already counted.
    const bool moe = moe_share > 0;
    a.recomputing_layer = std::max(0.0, ActivationBytes(m, p, p.micro_batch, local_seq, moe, Recompute::kNone) -
                                            ActivationBytes(m, p, p.micro_batch, local_seq, moe, Recompute::kOp));
  }
  // Logits in fp32 for the loss on the last stage: s b V / t * 4 bytes
  // (Korthikanti et al. 2022 Sec. 4.3 counts the output layer the same way).
  // PyTorch's cross entropy on fp32 logits (LossKernel::kTorchFp32:
  // F.cross_entropy(logits.float()), log_softmax then nll_loss) holds three
  // fp32 logit-sized tensors at once at the start of its backward:
  // log_softmax's output, saved for its backward; nll_loss_backward's
  // dense gradient; and the new gradient _log_softmax_backward_data writes
  // while it reads both (tools/autograd/derivatives.yaml: both backwards
  // are out of place). 12 bytes a logit, the peak of the step: every layer's
  // activations are still held then. (A caller that keeps the bf16 logits
  // alive through the backward, as litgpt's and this repository's
  // validation/gpu_step loop do, holds 2 more; torchtitan deletes them
  // before the backward.) Measured: the H200 step of Llama 3.2 1B
  // (validation/gpu_step) peaks at 52.2 GB allocated, against 36.4 GB
  // predicted with 4 bytes a logit.
  // Final logit soft-capping (ModelSpec::final_logit_softcap) keeps its
  // tanh's output, 2 bytes a logit, until the backward passes it.
  const double per_logit =
      (p.loss_kernel == LossKernel::kTorchFp32 ? 12.0 : 4.0) + (m.final_logit_softcap > 0 ? 2.0 : 0.0);
  a.logits = per_logit * static_cast<double>(local_seq * p.micro_batch) * static_cast<double>(m.vocab) /
             static_cast<double>(p.tp);
  return a;
}

MemoryBreakdown DeviceMemory(const models::ModelSpec& m, const TrainingPlan& p,
                             const MemoryInputs& in) {
  return DeviceMemory(p, in, StageActivationTerms(m, p, in.seq));
}

MemoryBreakdown DeviceMemory(const TrainingPlan& p, const MemoryInputs& in, const ActivationTerms& a) {
  MemoryBreakdown r;
  const double params = in.params_on_device;
  const double dp = static_cast<double>(in.dp);
  const double w_bytes = hardware::BytesPer(p.precision == hardware::DataType::kFp8
                                                ? hardware::DataType::kBf16
                                                : p.precision);
  const double opt_bytes = OptimizerStateBytesPerParam(p, w_bytes);
  // Dense weights shard over dp, routed experts over their own data-parallel
  // group (dp x cp / ep): each expert lives on dp x cp / ep devices only.
  const double edp = in.expert_dp > 0 ? static_cast<double>(in.expert_dp) : dp;
  const double experts = in.expert_params_on_device;
  const double dense = params - experts;
  const auto sharded = [&](int64_t from_stage) {
    return p.zero >= from_stage ? dense / dp + experts / edp : params;
  };
  r.weights = sharded(3) * w_bytes;
  // ZeRO-0/1/2 keep the gradient buffer the data-parallel reduction reads,
  // in its datatype (GradientBytes: fp32 in bf16 training, as the
  // estimator's reduction moves it); ZeRO-3's shards in the weights'.
  r.gradients = sharded(2) * (p.zero >= 3 ? w_bytes : GradientBytes(p));
  // ZeRO-3 under a pipeline (engine::Zero3GathersOncePerStep, core/estimate/
  // parallel_comm.h: torchtitan's reshard_after_forward = not pp_enabled,
  // PyTorch pipelining's set_reshard_after_backward(False) and
  // set_requires_gradient_sync(False) until the last backward): the stage's
  // unsharded weights stay resident beside their shards through the step,
  // and its unsharded gradients accumulate there, in fp32 where FSDP reduces
  // in fp32 (FSDP2 keeps the accumulated gradient in reduce_dtype).
  if (p.zero >= 3 && p.pp > 1 && dp > 1) {
    r.weights += params * w_bytes;
    r.gradients += params * (p.zero3_fp32_reduce ? 4.0 : w_bytes);
  }
  r.optimizer = p.offload_optimizer ? 0 : sharded(1) * opt_bytes;
  r.host_optimizer = p.offload_optimizer ? sharded(1) * opt_bytes : 0;
  // Microbatches whose activations are alive at the peak (first stage).
  const double pp = static_cast<double>(p.pp);
  const double mb = static_cast<double>(in.microbatches);
  double in_flight;
  if (p.schedule == Schedule::kGpipe) {
    in_flight = mb;
  } else if (RunsDualPipe(p)) {
    // DualPipe: pp + 1 stage-microbatches on every device (DeepSeek-V3
    // Table 2), of the two directions together.
    in_flight = std::min(pp + 1, mb);
  } else {
    // Stage i of a 1F1B pipeline holds p - i microbatches at its peak.
    in_flight = std::min(pp - static_cast<double>(in.stage), mb);
    if (p.interleave > 1) in_flight *= 1 + (pp - 1) / (pp * static_cast<double>(p.interleave));
  }
  // Activations of one layer per microbatch (StageActivationTerms), times
  // layers on this stage, times microbatches in flight; layers / pp of them
  // per microbatch on the stage.
  // Layers whose activations went to host memory (training.
  // offload_activation_layers, Megatron-Core --cpu-offloading-num-layers)
  // hold none on the device at the peak: their copies leave after their
  // forward and return one layer ahead in the backward, after the layers
  // kept on the device have freed theirs.
  const double offloaded = std::min(static_cast<double>(p.offload_activation_layers), in.layers_on_device);
  r.activations = a.per_layer * (in.layers_on_device - offloaded) * in_flight;
  r.host_activations = a.per_layer * offloaded * in_flight;
  // Zero unless the plan recomputes something (StageActivationTerms).
  r.activations += a.recomputing_layer;
  if (in.last_stage) r.temporary = a.logits;
  return r;
}

}  // namespace orrery::parallelism
