#include "core/estimate/inference_estimator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "hardware/device_model.h"
#include "models/kv_cache.h"
#include "models/transformer.h"

namespace orrery::engine {

using hardware::DataType;
using models::Op;
using models::OpKind;
using parallelism::InferenceDeployment;

namespace {

// Activations between kernels, collectives and attention math are 16-bit;
// fp8/int8 `activations` apply to GEMM inputs only.
constexpr double kAct16 = 2;
constexpr DataType kAttentionType = DataType::kBf16;

// Weight-only integer quantization (W4A16 / W8A16: AWQ, GPTQ; the Marlin
// kernels) stores int4 weights with one 16-bit scale per group of 128
// weights along K (group size 128 in Lin et al. 2024, "AWQ", Sec. 4 setup,
// and the GPTQ checkpoints Marlin serves, Frantar et al. 2024, arXiv
// 2408.11743): 0.5 + 2 / 128 = 0.515625 bytes per weight. int8 weight-only
// checkpoints scale per output channel, a negligible n x 2 bytes. Embedding
// and LM head stay 16-bit (AWQ and GPTQ quantize the decoder's linear
// layers only).
constexpr double kInt4GroupSize = 128;
double StoredWeightBytes(DataType weights) {
  const double b = hardware::BytesPer(weights);
  return weights == DataType::kInt4 ? b + kAct16 / kInt4GroupSize : b;
}
bool WeightOnly(DataType weights, DataType activations) {
  return (weights == DataType::kInt4 || weights == DataType::kInt8) &&
         hardware::BytesPer(weights) < hardware::BytesPer(activations);
}

// Dequantization inside a weight-only GEMM's main loop: each weight becomes
// 16-bit as w = s (q - z), two half-precision operations per weight (the
// affine group quantizer of Lin et al. 2024, Sec. 2, and Frantar et al.
// 2023, GPTQ), run on the CUDA cores, not the tensor cores. A Marlin thread
// block covers at most 4 x 16 = 64 rows of the activation matrix, so a
// batch of m rows dequantizes every weight ceil(m / 64) times (Frantar et
// al. 2024, arXiv 2408.11743, the kernel's partitioning of larger batches
// into 64-row slices). The operations are half2-packed, two per instruction,
// at twice the FP32 non-tensor rate (Hopper whitepaper: 133.8 vs 66.9
// TFLOPS FP16 vs FP32 non-tensor on H100 SXM; the A100's 4x is taken as 2x,
// a bound on the cost). Returns seconds; 0 without an FP32 peak.
constexpr double kMarlinRows = 64;
double DequantTime(const hardware::DeviceSpec& dev, double weight_elements, double rows) {
  if (dev.peak_fp32 <= 0) return 0;
  const double slices = std::ceil(std::max(1.0, rows) / kMarlinRows);
  return 2 * weight_elements * slices / (2 * dev.peak_fp32 * hardware::ClockFraction(dev));
}

// Per device, one layer.
struct LayerCost {
  double gemm = 0, attention = 0, elementwise = 0, comm = 0;
  double flops = 0, weight_bytes = 0, kv_bytes = 0;
  double compute() const { return gemm + attention + elementwise + comm; }
};

}  // namespace

IterationShape IterationShape::Prefill(double seqs, double tokens, double cached, const models::ModelSpec* m) {
  IterationShape s;
  s.prefill_seqs = seqs;
  s.prefill_tokens = seqs * tokens;
  // Causal attention: token i of the chunk sees the cached keys and i keys of
  // the chunk (itself included).
  s.prefill_pairs = seqs * (tokens * cached + tokens * (tokens + 1) / 2);
  s.prefill_context = seqs * (cached + tokens);
  s.prefill_pairs_local = s.prefill_pairs;
  s.prefill_context_local = s.prefill_context;
  if (m != nullptr && models::LocalLayers(*m) > 0) {
    // A local layer: the keys in reach of positions cached + 1 .. cached +
    // tokens, and the cache it reads, the span before the chunk and the chunk.
    s.prefill_pairs_local = seqs * (models::LocalKeysSum(*m, cached + tokens) - models::LocalKeysSum(*m, cached));
    s.prefill_context_local = seqs * (std::min(cached, models::LocalSpan(*m)) + tokens);
  }
  return s;
}

IterationShape IterationShape::Decode(double seqs, double context, const models::ModelSpec* m) {
  IterationShape s;
  s.decode_seqs = seqs;
  s.decode_context = seqs * context;
  s.decode_context_local = m != nullptr ? seqs * models::LocalKeys(*m, context) : s.decode_context;
  return s;
}

IterationShape& IterationShape::operator+=(const IterationShape& o) {
  prefill_seqs += o.prefill_seqs;
  prefill_tokens += o.prefill_tokens;
  prefill_pairs += o.prefill_pairs;
  prefill_context += o.prefill_context;
  decode_seqs += o.decode_seqs;
  decode_context += o.decode_context;
  prefill_pairs_local += o.prefill_pairs_local;
  prefill_context_local += o.prefill_context_local;
  decode_context_local += o.decode_context_local;
  return *this;
}

double SpeculativeTokensPerStep(int64_t k, double a) {
  if (k <= 0) return 1;
  if (a >= 1) return static_cast<double>(k + 1);
  return (1 - std::pow(a, static_cast<double>(k + 1))) / (1 - a);
}

InferenceInfeasible CheckShape(const models::ModelSpec& m, const hardware::SystemSpec& system,
                               const InferenceDeployment& d) {
  if (d.tp * d.pp > hardware::DeviceCount(system)) return InferenceInfeasible::kDeviceCount;
  const int64_t kv = models::KvHeads(m);
  if (m.heads % d.tp != 0 || models::FfnSize(m) % d.tp != 0 || (kv % d.tp != 0 && d.tp % kv != 0) ||
      d.pp > m.layers || m.experts % d.ep != 0 || d.tp % d.ep != 0)
    return InferenceInfeasible::kSplit;
  if (hardware::PeakFlops(system.device, d.activations) <= 0) return InferenceInfeasible::kDatatype;
  if (d.tp * d.pp > 1 && system.network.empty()) return InferenceInfeasible::kNoNetwork;
  return InferenceInfeasible::kNone;
}

InferenceEstimator::InferenceEstimator(const models::ModelSpec& model,
                                       const hardware::SystemSpec& system,
                                       const models::ModelSpec* draft)
    : model_(model),
      system_(system),
      draft_(draft),
      network_(system),
      devices_(hardware::DeviceCount(system)) {}

PassTime InferenceEstimator::Pass(const InferenceDeployment& d, const IterationShape& it) const {
  return PassOf(model_, d, it, nullptr);
}

PassTime InferenceEstimator::Pass(const InferenceDeployment& d, const IterationShape& it,
                                  PassCache& cache) const {
  return PassOf(model_, d, it, &cache);
}

PassTime InferenceEstimator::DraftPass(const InferenceDeployment& d,
                                       const IterationShape& it) const {
  if (draft_ == nullptr) return PassTime{};
  return PassOf(*draft_, d, it, nullptr);
}

PassTime InferenceEstimator::DraftPass(const InferenceDeployment& d, const IterationShape& it,
                                       PassCache& cache) const {
  if (draft_ == nullptr) return {};
  return PassOf(*draft_, d, it, &cache);
}

PassTime InferenceEstimator::PassOf(const models::ModelSpec& m, const InferenceDeployment& d,
                                    const IterationShape& it, PassCache* cache) const {
  PassTime p;
  const double tokens = it.prefill_tokens + it.decode_seqs;  // rows of every GEMM
  const double seqs = it.prefill_seqs + it.decode_seqs;      // rows of the LM head
  if (tokens <= 0) return p;
  const hardware::DeviceSpec& dev = system_.device;
  const DataType ct = parallelism::ComputeType(d);
  // Weight bytes of the decoder layers' GEMMs (`quantized`) and of the
  // embedding and LM head: 16-bit for weight-only checkpoints.
  const bool weight_only = WeightOnly(d.weights, d.activations);
  const double wb = StoredWeightBytes(d.weights);
  const double ab = hardware::BytesPer(d.activations);
  const double kvb = hardware::BytesPer(d.kv_cache);
  const double tp = static_cast<double>(d.tp);
  const double h = static_cast<double>(m.hidden);

  models::LayerShape shape;
  shape.micro_batch = 1;
  shape.seq = std::max<int64_t>(1, std::llround(tokens));
  shape.full_seq = shape.seq;
  shape.tp = d.tp;
  shape.sequence_parallel = false;
  shape.flash = true;
  shape.act_bytes = kAct16;
  shape.dropout = false;  // inference: no dropout masks, whatever the model trains with

  // A GEMM reads its weights (k x n) at the weight precision and its input
  // at the activation precision, and writes a 16-bit output.
  auto gemm_bytes = [&](const Op& op, double weight_elements, double per_weight) {
    return weight_elements * per_weight + op.m * op.k * ab + op.m * op.n * kAct16;
  };
  // Inputs of a layer's GEMMs narrower than 16 bits (FP8, NVFP4, MXFP4) are
  // quantized from the 16-bit activation first: read at 2 bytes, written at
  // the narrow size with its block scales (BytesPer: NVFP4 one E4M3 scale per
  // 16 values, NVIDIA's NVFP4 format; MXFP4 one E8M0 scale per 32, OCP MX
  // v1.0 Sec. 5). The quantize is taken as fused into the kernel that makes
  // the input (norm, activation), so it adds memory traffic but no launch.
  // Embedding and LM head stay 16-bit (ModelOpt's FP8/NVFP4 configurations
  // leave lm_head and MoE routers unquantized): `quantized` is false for
  // them, and the router GEMM is skipped.
  const double quantize_bytes_per = ab < kAct16 ? kAct16 + ab : 0.0;
  auto time_ops = [&](const models::OpList& ops, PassCache::Layer& c, bool quantized) {
    const bool dequant = weight_only && quantized;
    const double per_weight = weight_only && !quantized ? kAct16 : wb;
    for (int i = 0; i < ops.count; ++i) {
      const Op& op = ops.ops[static_cast<size_t>(i)];
      switch (op.kind) {
        case OpKind::kGemm:
        case OpKind::kBatchedGemm: {
          if (quantized && quantize_bytes_per > 0 && std::strcmp(op.name, "router") != 0) {
            const double q = op.m * op.k * op.batch * quantize_bytes_per;
            c.elementwise += q / (dev.memory_bandwidth * dev.memory_efficiency.At(q));
          }
          if (!op.expert) {
            const double w = op.k * op.n * op.batch;
            c.gemm += hardware::GemmTime(dev, ct, op.flops, gemm_bytes(op, w, per_weight),
                                         dequant ? DequantTime(dev, w, op.m) : 0.0);
            c.weight_bytes += w * per_weight;
          } else {
            // Expert GEMMs of a MoE layer, one grouped kernel. With uniform
            // routing of `tokens` tokens to top_k of E experts, an expert is
            // used with probability 1 - (1 - top_k/E)^tokens; only used
            // experts' weights are read. A device holds E/ep experts, each
            // split over tp/ep devices: op.n * op.k * ep weights each.
            const double e = static_cast<double>(m.experts);
            const double ep = static_cast<double>(d.ep);
            const double used = 1 - std::pow(1 - static_cast<double>(m.top_k) / e, tokens);
            const double experts = std::max(1.0, e / ep * used);
            const double w = experts * op.n * op.k * ep;
            // Each used expert dequantizes its own weights for its share of
            // the device's op.m routed rows.
            const double rows = op.m / experts;
            const double one = hardware::GemmTime(
                dev, ct, op.flops / experts, gemm_bytes(op, w, per_weight) / experts,
                dequant ? DequantTime(dev, w / experts, rows) : 0.0);
            c.gemm += experts * (one - dev.kernel_overhead) + dev.kernel_overhead;
            c.weight_bytes += w * per_weight;
          }
          c.gemm_flops[static_cast<size_t>(c.gemm_ops++)] = op.flops;
          break;
        }
        case OpKind::kFlashAttention:
          break;  // timed below, for prefill and decode tokens apart
        case OpKind::kElementwise:
          c.elementwise += hardware::MemoryTime(dev, op.bytes);
          break;
      }
    }
  };

  // --- attention core, per layer and device ---------------------------------
  const double heads = static_cast<double>(m.heads) / tp;
  const double hd = static_cast<double>(models::HeadDim(m));
  const double kv_elems = models::KvElementsPerTokenPerLayerPerDevice(m, d.tp);
  // FLOP per (query, key) pair and head: Q.K and P.V, 2 * 2 * d (Vaswani et
  // al. 2017). MLA with the up-projections absorbed scores against the
  // latent and rope key and reads values from the latent (DeepSeek-V2 Sec.
  // 2.1.2): 2 (d_c + d_r) + 2 d_c.
  const double pair_flops =
      models::UsesLatentAttention(m)
          ? 2.0 * static_cast<double>(2 * m.kv_lora_rank + m.rope_head_dim)
          : 4.0 * hd;
  // With local layers (a share f of them) a layer's mean pairs and keys:
  // (1 - f) of the whole context's and f of the local layers' own.
  const double f_local = models::LocalLayerFraction(m);
  const auto mean = [f_local](double all, double local) { return (1 - f_local) * all + f_local * local; };
  LayerCost attn;
  if (it.prefill_tokens > 0) {
    const double flops = mean(it.prefill_pairs, it.prefill_pairs_local) * heads * pair_flops;
    const double kv_io = (mean(it.prefill_context, it.prefill_context_local) + it.prefill_tokens) * kv_elems * kvb;
    const double bytes = it.prefill_tokens * 2 * heads * hd * kAct16 + kv_io;
    attn.attention += hardware::FlashAttentionTime(dev, kAttentionType, flops, bytes, false);
    attn.flops += flops;
    attn.kv_bytes += kv_io;
  }
  if (it.decode_seqs > 0) {
    const double context = mean(it.decode_context, it.decode_context_local);
    const double flops = context * heads * pair_flops;
    // A kernel with one thread block per (sequence, query head) loads the
    // cache of the block's KV head for each of the heads / kv_heads query
    // heads that share it (FasterTransformer's and TensorRT-LLM's masked MHA
    // before XQA; TensorRT-LLM blogs/XQA-kernel.md: XQA's gain is "reducing
    // data loading and conversion", 2.4x Llama-70B throughput on H200).
    const double group =
        d.gqa_shared_kv || models::UsesLatentAttention(m)
            ? 1.0
            : heads / std::max(1.0, static_cast<double>(models::KvHeads(m)) / tp);
    const double kv_io = (context + it.decode_seqs) * kv_elems * kvb * group;
    const double bytes = it.decode_seqs * 2 * heads * hd * kAct16 + kv_io;
    attn.attention += hardware::FlashAttentionTime(dev, kAttentionType, flops, bytes, false);
    attn.flops += flops;
    attn.kv_bytes += kv_io;
  }

  // --- offload link -----------------------------------------------------------
  double link = 0;
  if (d.offload_weights > 0 || d.offload_kv > 0) {
    link = system_.host_bandwidth;
    if (d.offload_to == parallelism::OffloadTarget::kNvme) link = std::min(link, d.nvme_bandwidth);
  }

  // --- what depends only on the token and sequence counts --------------------
  // (from `cache` when an earlier pass had the same counts)
  const double moe_layers = static_cast<double>(models::MoeLayerCount(m));
  const double dense_layers = static_cast<double>(m.layers) - moe_layers;
  std::optional<PassCache::Entry> own;  // without a cache (a large struct: made only then)
  PassCache::Entry* tw = nullptr;
  bool known = false;
  if (cache == nullptr) {
    tw = &own.emplace();
  } else {
    uint64_t kt = 0, ks = 0;
    std::memcpy(&kt, &tokens, sizeof kt);
    std::memcpy(&ks, &seqs, sizeof ks);
    const uint64_t hash = (kt ^ (ks * 0x9E3779B97F4A7C15ULL)) * 0xFF51AFD7ED558CCDULL;
    tw = &cache->entries_[(hash >> 32) % PassCache::kEntries];
    known = tw->model == &m && tw->deployment == &d && tw->tokens == tokens && tw->seqs == seqs;
  }
  if (!known) {
    models::OpList ops;
    for (int pass = 0; pass < 2; ++pass) {
      tw->layer[pass] = PassCache::Layer{};
      if ((pass == 1 ? moe_layers : dense_layers) <= 0) continue;
      models::LayerOps(m, shape, pass == 1, d.ep, ops);
      time_ops(ops, tw->layer[pass], true);
    }
    // Embedding, LM head and sampling (logits only for the last token of
    // each sequence).
    PassCache::Layer ends;
    models::EmbeddingOps(m, shape, ops);
    time_ops(ops, ends, false);
    models::LayerShape head = shape;
    head.seq = std::max<int64_t>(1, std::llround(seqs));
    models::HeadOps(m, head, ops);
    time_ops(ops, ends, false);
    tw->ends_gemm = ends.gemm;
    tw->ends_elementwise = ends.elementwise;
    tw->ends_weight_bytes = ends.weight_bytes;
    tw->ends_flops = 0;
    for (int i = 0; i < ends.gemm_ops; ++i) tw->ends_flops += ends.gemm_flops[static_cast<size_t>(i)];
    // Collectives per layer.
    tw->tp_layer = 0;
    if (d.tp > 1) {
      const auto g = network_.Place(d.tp, 1);
      tw->tp_layer = 2 * network_.Time(hardware::Collective::kAllReduce, tokens * h * kAct16, g);
    }
    tw->pp_comm = 0;
    if (d.pp > 1) {
      const auto g = network_.Place(d.pp, d.tp);
      tw->pp_comm = static_cast<double>(d.pp - 1) *
                    network_.Time(hardware::Collective::kSendRecv, tokens * h * kAct16, g);
    }
    tw->model = &m;
    tw->deployment = &d;
    tw->tokens = tokens;
    tw->seqs = seqs;
  }

  // --- the layers -------------------------------------------------------------
  for (int pass = 0; pass < 2; ++pass) {
    const bool moe = pass == 1;
    const double count = moe ? moe_layers : dense_layers;
    if (count <= 0) continue;
    LayerCost c = attn;
    const PassCache::Layer& l = tw->layer[pass];
    c.gemm += l.gemm;
    c.elementwise += l.elementwise;
    c.weight_bytes += l.weight_bytes;
    for (int i = 0; i < l.gemm_ops; ++i) c.flops += l.gemm_flops[static_cast<size_t>(i)];
    c.comm = tw->tp_layer;
    double exposed = 0;
    if (link > 0) {
      const double moved = d.offload_weights * c.weight_bytes + d.offload_kv * c.kv_bytes;
      exposed = std::max(0.0, moved / link - c.compute());
    }
    p.gemm += count * c.gemm;
    p.attention += count * c.attention;
    p.elementwise += count * c.elementwise;
    p.tp_comm += count * c.comm;
    p.offload += count * exposed;
    p.flops += count * c.flops * tp;
    p.weight_bytes += count * c.weight_bytes * tp;
    p.kv_bytes += count * c.kv_bytes * tp;
  }
  p.gemm += tw->ends_gemm;
  p.elementwise += tw->ends_elementwise;
  p.flops += tw->ends_flops * tp;
  p.weight_bytes += tw->ends_weight_bytes * tp;
  p.pp_comm = tw->pp_comm;
  p.total = p.gemm + p.attention + p.elementwise + p.tp_comm + p.pp_comm + p.offload;
  return p;
}

double InferenceEstimator::WeightParamsPerDevice(const models::ModelSpec& m,
                                                 const InferenceDeployment& d,
                                                 double* layers) const {
  const double tp = static_cast<double>(d.tp);
  const double moe_layers = static_cast<double>(models::MoeLayerCount(m));
  const double all_layers = static_cast<double>(m.layers);
  const double per_layer = ((all_layers - moe_layers) * models::LayerParameters(m, false) +
                            moe_layers * models::LayerParameters(m, true)) /
                           all_layers;
  const int64_t pp = std::max<int64_t>(1, d.pp);
  const int64_t first_stage_layers = (m.layers + pp - 1) / pp;  // ceil: the fullest stage paces
  const double stage_layers = static_cast<double>(first_stage_layers);
  // Every matrix, experts included (E/ep experts split over tp/ep), is split tp ways.
  const double stage = stage_layers * per_layer / tp;
  const double embed = models::EmbeddingParameters(m, d.input + d.output) / tp;
  const double head =
      (m.tied_embeddings ? (d.pp > 1 ? static_cast<double>(m.vocab * m.hidden) : 0.0)
                         : models::HeadParameters(m)) /
      tp;
  const double first = stage + embed + (d.pp == 1 ? head : 0.0);
  const double last = stage + head;
  if (layers != nullptr) *layers = stage;
  return std::max(first, last);
}

double InferenceEstimator::KvBytesPerTokenPerDevice(const InferenceDeployment& d) const {
  return models::KvBytesPerTokenPerDevice(model_, hardware::BytesPer(d.kv_cache), d.tp, d.pp);
}

double InferenceEstimator::ActivationBytes(const models::ModelSpec& m,
                                           const InferenceDeployment& d, double pass_tokens,
                                           double pass_seqs) const {
  // The live tensors of one layer at its peak: residual stream and norm
  // output (2 h), Q/K/V (heads + 2 kv heads), the MLP's up projection and its
  // activation (SwiGLU: 2 f + f; GeLU: f + f), all 16-bit, on pass_tokens
  // tokens; plus fp32 logits of one token per sequence. An estimate of what
  // vLLM measures by profiling a dummy forward pass.
  const double tp = static_cast<double>(d.tp);
  const double h = static_cast<double>(m.hidden);
  const double hd = static_cast<double>(models::HeadDim(m));
  const double qkv = (static_cast<double>(m.heads) + 2 * static_cast<double>(models::KvHeads(m))) *
                     hd / tp;
  const double up = m.activation == models::Activation::kSwiglu ? 3.0 : 2.0;
  const double f = std::max(static_cast<double>(models::FfnSize(m)),
                            m.experts > 1 ? static_cast<double>(m.top_k * models::ExpertFfn(m))
                                          : 0.0) /
                   tp;
  const double per_token = (2 * h + qkv + up * f) * kAct16;
  const double logits = static_cast<double>(m.vocab) / tp * 4;
  return pass_tokens * per_token + pass_seqs * logits;
}

InferenceMemory InferenceEstimator::Memory(const InferenceDeployment& d, double seqs,
                                           double tokens, double pass_tokens,
                                           double pass_seqs) const {
  InferenceMemory mem;
  // Offloading moves layer weights (FlexGen); embeddings and the LM head stay.
  double layers = 0;
  const double params = WeightParamsPerDevice(model_, d, &layers);
  // Weight-only checkpoints keep the embedding and LM head 16-bit (see
  // StoredWeightBytes).
  const double ends_bytes = WeightOnly(d.weights, d.activations) ? kAct16 : hardware::BytesPer(d.weights);
  mem.weights = layers * (1 - d.offload_weights) * StoredWeightBytes(d.weights) +
                (params - layers) * ends_bytes;
  // Local layers keep a window or a chunk of a sequence (models::KvHeldTokens).
  mem.kv_cache = seqs * models::KvHeldTokens(model_, tokens) * KvBytesPerTokenPerDevice(d) * (1 - d.offload_kv);
  mem.activations = ActivationBytes(model_, d, pass_tokens, pass_seqs);
  if (draft_ != nullptr && d.speculate > 0) {
    mem.draft = WeightParamsPerDevice(*draft_, d) * hardware::BytesPer(d.weights) +
                seqs * models::KvHeldTokens(*draft_, tokens) *
                    models::KvBytesPerTokenPerDevice(*draft_, hardware::BytesPer(d.kv_cache), d.tp,
                                                     d.pp);
  }
  return mem;
}

double InferenceEstimator::KvCapacityTokens(const InferenceDeployment& d,
                                            double pass_tokens) const {
  const InferenceMemory fixed =
      Memory(d, 0, 0, pass_tokens, std::min(pass_tokens, static_cast<double>(d.max_batch)));
  const double free = system_.device.memory_capacity * d.memory_fraction - fixed.total();
  const double per_token = KvBytesPerTokenPerDevice(d) * (1 - d.offload_kv) +
                           (draft_ != nullptr && d.speculate > 0
                                ? models::KvBytesPerTokenPerDevice(
                                      *draft_, hardware::BytesPer(d.kv_cache), d.tp, d.pp)
                                : 0.0);
  if (free <= 0) return 0;
  return per_token > 0 ? free / per_token : 0;
}

InferenceEstimate InferenceEstimator::Run(const InferenceDeployment& d) const {
  InferenceEstimate e;
  e.devices = d.tp * d.pp;
  e.memory_capacity = system_.device.memory_capacity;
  e.memory_usable = e.memory_capacity * d.memory_fraction;
  e.infeasible = CheckShape(model_, system_, d);
  if (!e.feasible()) return e;
  const double b = static_cast<double>(d.batch);
  const double in = static_cast<double>(d.input);
  const double out = static_cast<double>(d.output);

  e.prefill = Pass(d, IterationShape::Prefill(b, in, 0, &model_));
  e.ttft_s = e.prefill.total;
  // Decode steps j = 1 .. out-1 attend to in + j cached tokens; attention
  // time is linear in the context, so the mean step is the step at in + out/2.
  // A local layer's keys are not linear in it: their mean over the steps,
  // (LocalKeysSum(in + out - 1) - LocalKeysSum(in)) / (out - 1).
  const double mid = in + out / 2;
  IterationShape step = IterationShape::Decode(b, mid, &model_);
  if (out > 1)
    step.decode_context_local =
        b * (models::LocalKeysSum(model_, in + out - 1) - models::LocalKeysSum(model_, in)) / (out - 1);
  e.decode = Pass(d, step);
  e.tpot_s = e.decode.total;
  if (d.speculate > 0) {
    // One target pass verifies k + 1 tokens per sequence (the k drafts and
    // the bonus token); the draft proposes k tokens one step at a time.
    const double k = static_cast<double>(d.speculate);
    const PassTime verify = Pass(d, IterationShape::Prefill(b, k + 1, mid, &model_));
    const double draft_step = draft_ != nullptr
                                  ? DraftPass(d, IterationShape::Decode(b, mid, draft_)).total
                                  : d.draft_cost * e.decode.total;
    e.tokens_per_step = SpeculativeTokensPerStep(d.speculate, d.acceptance);
    e.tpot_s = (verify.total + k * draft_step) / e.tokens_per_step;
  }
  e.e2e_s = e.ttft_s + (out - 1) * e.tpot_s;
  e.output_tokens_per_s = b * out / e.e2e_s;
  e.output_tokens_per_s_per_device = e.output_tokens_per_s / static_cast<double>(e.devices);
  e.total_tokens_per_s = b * (in + out) / e.e2e_s;
  e.energy_per_token_j = static_cast<double>(e.devices) * hardware::BusyPower(system_.device) * e.e2e_s *
                         system_.pue / (b * out);

  e.memory = Memory(d, b, in + out, b * in, b);
  if (e.memory.total() > e.memory_usable) e.infeasible = InferenceInfeasible::kOutOfMemory;
  // Memory is linear in the batch and in the context: solve for the limits.
  const double fixed = Memory(d, 0, 0, 0, 0).total();
  const double per_seq = Memory(d, 1, in + out, in, 1).total() - fixed;
  e.max_batch = per_seq > 0 ? static_cast<int64_t>(std::max(0.0, (e.memory_usable - fixed) / per_seq)) : 0;
  // At this batch, with the whole context as prompt (the larger activations).
  const double at0 = Memory(d, b, 0, 0, b).total();
  const double per_token = Memory(d, b, 1, b, b).total() - at0;
  // Held tokens that fit, turned back into a context: KvHeldTokens is t up
  // to the local span, then grows at (1 - f) a token; -1 when every layer
  // is local and the span fits (no memory limit).
  const double held = per_token > 0 ? std::max(0.0, (e.memory_usable - at0) / per_token) : 0.0;
  const double span = models::LocalSpan(model_), f = models::LocalLayerFraction(model_);
  if (f <= 0 || held <= span) {
    e.max_context = static_cast<int64_t>(held);
  } else {
    e.max_context = f >= 1 ? -1 : static_cast<int64_t>(span + (held - span) / (1 - f));
  }
  return e;
}

std::string ExplainInfeasible(const InferenceEstimate& e, const Scenario& s) {
  const parallelism::InferenceDeployment d = s.inference.value_or(InferenceDeployment{});
  using base::Dimension;
  using base::FormatQuantity;
  switch (e.infeasible) {
    case InferenceInfeasible::kNone: return {};
    case InferenceInfeasible::kDeviceCount:
      return "tp x pp = " + std::to_string(d.tp * d.pp) + " devices but the system has " +
             std::to_string(hardware::DeviceCount(s.system));
    case InferenceInfeasible::kSplit:
      return "tp/ep do not divide the heads, KV heads, MLP or experts, or pp exceeds the layers";
    case InferenceInfeasible::kDatatype:
      return std::string("the device has no peak rate for ") +
             hardware::DataTypeName(d.activations) + " activations";
    case InferenceInfeasible::kNoNetwork:
      return "the deployment spans devices but the system declares no network tier";
    case InferenceInfeasible::kOutOfMemory:
      return "needs " + FormatQuantity(e.memory.total(), Dimension::kBytes) + " per device (weights " +
             FormatQuantity(e.memory.weights, Dimension::kBytes) + ", KV cache " +
             FormatQuantity(e.memory.kv_cache, Dimension::kBytes) + ", activations " +
             FormatQuantity(e.memory.activations, Dimension::kBytes) +
             (e.memory.draft > 0 ? ", draft " + FormatQuantity(e.memory.draft, Dimension::kBytes)
                                 : std::string()) +
             ") but " + base::FormatNumber(d.memory_fraction * 100, 3) + " % of the device is " +
             FormatQuantity(e.memory_usable, Dimension::kBytes) + "; at most " +
             std::to_string(e.max_batch) + " sequences of " + std::to_string(d.input + d.output) +
             " tokens fit";
  }
  return {};
}

}  // namespace orrery::engine
