#include "models/transformer.h"

#include <algorithm>

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
  return op;
}

Op Elementwise(const char* name, double bytes) {
  Op op;
  op.name = name;
  op.kind = OpKind::kElementwise;
  op.bytes = bytes;
  return op;
}

}  // namespace

void LayerOps(const ModelSpec& m, const LayerShape& s, bool moe, int64_t ep, OpList& out) {
  out.count = 0;
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
  const double mask = 1;  // dropout mask, one byte per element

  out.Add(Elementwise("input_norm", 2 * norm_tokens * h * e));
  out.Add(Gemm("qkv_proj", tokens, (heads + 2 * kv) * d, h, e));
  if (s.flash) {
    // FlashAttention (Dao et al. 2022): reads Q, K, V, writes O and the
    // softmax statistics; no s x s matrix in memory.
    Op op;
    op.name = "flash_attention";
    op.kind = OpKind::kFlashAttention;
    op.flops = 4 * b * seq * kv_len * heads * d;
    op.bytes = b * (2 * seq * heads * d + 2 * kv_len * kv * d) * e;
    op.m = seq;
    op.n = kv_len;
    op.k = d;
    op.batch = b * heads;
    op.attention_core = true;
    out.Add(op);
  } else {
    // Materialised attention (Megatron-LM 2021-22): Q K^T, fused
    // scale-mask-softmax, dropout, then attention over values.
    const double scores = b * heads * seq * kv_len;
    Op qk;
    qk.name = "attention_scores";
    qk.kind = OpKind::kBatchedGemm;
    qk.m = seq;
    qk.n = kv_len;
    qk.k = d;
    qk.batch = b * heads;
    qk.flops = 2 * scores * d;
    qk.bytes = (b * heads * seq * d + b * kv * kv_len * d) * e + scores * e;
    qk.attention_core = true;
    out.Add(qk);
    Op sm = Elementwise("softmax", 2 * scores * e);
    sm.attention_core = true;
    out.Add(sm);
    Op dr = Elementwise("attention_dropout", scores * (2 * e + mask));
    dr.attention_core = true;
    out.Add(dr);
    Op av;
    av.name = "attention_over_values";
    av.kind = OpKind::kBatchedGemm;
    av.m = seq;
    av.n = d;
    av.k = kv_len;
    av.batch = b * heads;
    av.flops = 2 * scores * d;
    av.bytes = scores * e + (b * kv * kv_len * d + b * heads * seq * d) * e;
    av.attention_core = true;
    out.Add(av);
  }
  out.Add(Gemm("out_proj", tokens, h, heads * d, e));
  out.Add(Elementwise("dropout_residual", norm_tokens * h * (3 * e + mask)));
  out.Add(Elementwise("post_attention_norm", 2 * norm_tokens * h * e));
  const bool swiglu = m.activation == Activation::kSwiglu;
  const double up_n = swiglu ? 2 : 1;
  if (moe) {
    // Router, then each token runs top_k experts; with ep expert groups the
    // tokens are exchanged by all-to-all (the estimator adds that), and a
    // device computes experts/ep experts on the tokens routed to them. With
    // balanced routing its expert work equals top_k dense MLPs on `tokens`.
    const double fe = static_cast<double>(ExpertFfn(m)) / t;
    const double routed = tokens * static_cast<double>(m.top_k);
    out.Add(Gemm("router", tokens, static_cast<double>(m.experts), h, e));
    Op up = Gemm("expert_up", routed, up_n * fe, h, e);
    // Weights of every local expert are read once per microbatch.
    const double local_experts = static_cast<double>(m.experts) / static_cast<double>(ep);
    up.bytes = (routed * h + routed * up_n * fe) * e + local_experts * up_n * fe * h * e;
    up.expert = true;
    out.Add(up);
    out.Add(Elementwise(swiglu ? "swiglu" : "gelu", routed * fe * (swiglu ? 3 : 2) * e));
    Op down = Gemm("expert_down", routed, h, fe, e);
    down.bytes = (routed * fe + routed * h) * e + local_experts * fe * h * e;
    down.expert = true;
    out.Add(down);
  } else {
    const double ft = f / t;
    out.Add(Gemm("mlp_up", tokens, up_n * ft, h, e));
    out.Add(Elementwise(swiglu ? "swiglu" : "gelu", tokens * ft * (swiglu ? 3 : 2) * e));
    out.Add(Gemm("mlp_down", tokens, h, ft, e));
  }
  out.Add(Elementwise("dropout_residual", norm_tokens * h * (3 * e + mask)));
}

void HeadOps(const ModelSpec& m, const LayerShape& s, OpList& out) {
  out.count = 0;
  const double tokens = static_cast<double>(s.micro_batch * s.seq);
  const double h = static_cast<double>(m.hidden);
  const double v = static_cast<double>(m.vocab) / static_cast<double>(s.tp);
  const double norm_tokens = s.sequence_parallel ? tokens / static_cast<double>(s.tp) : tokens;
  out.Add(Elementwise("final_norm", 2 * norm_tokens * h * s.act_bytes));
  out.Add(Gemm("lm_head", tokens, v, h, s.act_bytes));
  // Cross-entropy over the vocabulary shard: read logits, write fp32 softmax.
  out.Add(Elementwise("cross_entropy", tokens * v * (s.act_bytes + 4)));
}

void EmbeddingOps(const ModelSpec& m, const LayerShape& s, OpList& out) {
  out.count = 0;
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
  // Attention: Q, K, V and output projections (+ biases).
  double p = h * (a + 2 * g) * d + bias * (a + 2 * g) * d + a * d * h + bias * h;
  p += 2 * norm * h;  // two norms
  const double mats = m.activation == Activation::kSwiglu ? 3 : 2;
  if (moe) {
    const double fe = static_cast<double>(ExpertFfn(m));
    p += static_cast<double>(m.experts) * (mats * h * fe + bias * (fe + h)) +
         h * static_cast<double>(m.experts);
  } else {
    const double f = static_cast<double>(FfnSize(m));
    p += mats * h * f + bias * (f * (mats - 1) + h);
  }
  return p;
}

double EmbeddingParameters(const ModelSpec& m, int64_t seq_len) {
  const double h = static_cast<double>(m.hidden);
  double p = static_cast<double>(m.vocab) * h;
  if (m.position == Position::kLearned)
    p += static_cast<double>(m.max_seq > 0 ? m.max_seq : seq_len) * h;
  return p;
}

double HeadParameters(const ModelSpec& m) {
  const double norm = (m.norm == Norm::kLayerNorm ? 2.0 : 1.0) * static_cast<double>(m.hidden);
  return norm + (m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab * m.hidden));
}

double ParameterCount(const ModelSpec& m, int64_t seq_len) {
  const double moe_layers = static_cast<double>(MoeLayerCount(m));
  const double dense_layers = static_cast<double>(m.layers) - moe_layers;
  return dense_layers * LayerParameters(m, false) + moe_layers * LayerParameters(m, true) +
         EmbeddingParameters(m, seq_len) + HeadParameters(m);
}

double ActivatedParameterCount(const ModelSpec& m, int64_t seq_len) {
  if (m.experts <= 1) return ParameterCount(m, seq_len);
  ModelSpec active = m;
  active.experts = m.top_k;
  return ParameterCount(active, seq_len);
}

double ModelFlopsPerIteration(const ModelSpec& m, int64_t global_batch, int64_t seq) {
  LayerShape s;
  s.micro_batch = global_batch;
  s.seq = seq;
  s.full_seq = seq;
  s.tp = 1;
  s.flash = true;
  OpList ops;
  double forward = 0;
  const int64_t moe_layers = MoeLayerCount(m);
  for (int pass = 0; pass < 2; ++pass) {
    const bool moe = pass == 1;
    const double count = static_cast<double>(moe ? moe_layers : m.layers - moe_layers);
    if (count == 0) continue;
    LayerOps(m, s, moe, 1, ops);
    double layer = 0;
    for (int i = 0; i < ops.count; ++i) layer += ops.ops[static_cast<size_t>(i)].flops;
    forward += count * layer;
  }
  HeadOps(m, s, ops);
  for (int i = 0; i < ops.count; ++i) forward += ops.ops[static_cast<size_t>(i)].flops;
  // Backward is twice the forward (two GEMMs per GEMM).
  return 3 * forward;
}

}  // namespace orrery::models
