#include "core/estimate/parallel_comm.h"

#include "hardware/device_model.h"
#include "models/transformer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace orrery::engine {

using hardware::Collective;
using parallelism::CpScheme;

hardware::GroupPlacement PlaceTiled(const hardware::Network& net, const hardware::SystemSpec& sys,
                                    int64_t size, int64_t stride) {
  hardware::GroupPlacement g = net.Place(size, stride);
  const int64_t span = size * std::max<int64_t>(1, stride);
  const int tiers = std::min<int>(g.tiers, static_cast<int>(sys.network.size()));
  const int64_t devices = hardware::DeviceCount(sys);
  for (int i = 0; i < tiers; ++i) {
    // A domain larger than the whole system (a 64-GPU job on a 72-GPU NVL72
    // preset) holds every group: nothing straddles it.
    const int64_t dom = std::min(sys.network[static_cast<size_t>(i)].domain, devices);
    if (dom <= 0 || dom % span == 0 || span % dom == 0) continue;
    const int64_t piece = std::gcd(span, dom) / std::max<int64_t>(1, stride);
    auto& pd = g.per_domain[static_cast<size_t>(i)];
    pd = std::max<int64_t>(1, std::min(pd, piece));
  }
  return g;
}

double ExpertAllToAllBytes(const models::ModelSpec& m, double tokens, double act_bytes, double load) {
  if (m.experts <= 1) return 0;
  return tokens * static_cast<double>(m.top_k) * static_cast<double>(m.hidden) * act_bytes * load;
}

int64_t RoutingNodeLimit(const models::ModelSpec& m, int64_t ep, int64_t per_node) {
  int64_t limit = m.routing_node_limit;
  const int64_t groups = m.routing_groups, chosen = m.routing_group_limit;
  if (groups > 1 && chosen > 0 && chosen < groups && per_node > 0 && ep > per_node && ep % per_node == 0) {
    const int64_t nodes = ep / per_node;
    int64_t derived = 0;
    if (groups % nodes == 0) derived = chosen;
    else if (nodes % groups == 0) derived = chosen * (nodes / groups);
    if (derived > 0) limit = limit > 0 ? std::min(limit, derived) : derived;
  }
  return limit;
}

double ExpertAllToAllTime(const hardware::Network& net, const hardware::GroupPlacement& g,
                          const models::ModelSpec& m, double bytes) {
  const int64_t inner = g.tiers > 0 ? g.per_domain[0] : g.size;
  if (inner >= g.size || g.tiers < 2) return net.Time(Collective::kAllToAll, bytes, g);
  const int64_t limit = RoutingNodeLimit(m, g.size, inner);
  if (limit <= 0 || m.top_k <= limit) return net.Time(Collective::kAllToAll, bytes, g);
  const double share = static_cast<double>(limit) / static_cast<double>(m.top_k);
  hardware::GroupPlacement node = g;  // the members inside one scale-up domain
  node.size = inner;
  for (int i = 0; i < g.tiers; ++i)
    node.per_domain[static_cast<size_t>(i)] = std::min(g.per_domain[static_cast<size_t>(i)], inner);
  return std::max(net.Time(Collective::kAllToAll, share * bytes, g),
                  net.Time(Collective::kAllToAll, bytes, node));
}

ExpertPermuteTraffic ExpertPermuteBytes(const models::ModelSpec& m, const parallelism::TrainingPlan& p,
                                        double tokens_on_device, double act_bytes, double load) {
  ExpertPermuteTraffic t;
  if (m.experts <= 1) return t;
  const double row = static_cast<double>(m.hidden) * act_bytes;
  const double etp = static_cast<double>(parallelism::ExpertTensorParallel(p));
  const double rows = tokens_on_device * etp / static_cast<double>(p.tp) * static_cast<double>(m.top_k) * load;
  t.permute_bytes = 2 * rows * row;
  t.unpermute_bytes = 2 * rows * row;
  return t;
}

double ExpertPermuteTime(const hardware::DeviceSpec& d, const ExpertPermuteTraffic& t) {
  return hardware::MemoryTime(d, t.permute_bytes) + hardware::MemoryTime(d, t.unpermute_bytes);
}

LayerKernels MoeLayerKernels(const models::OpList& ops, double local_experts, bool fp8,
                             parallelism::Fp8Recipe recipe, bool expert_parallel) {
  LayerKernels k;
  const double experts = std::max(1.0, std::ceil(local_experts));
  // Quantize kernels per FP8 tensor cast (Fp8LinearCastTimes): the cast,
  // and the amax pass before it under current scaling.
  const double quantize = !fp8 ? 0 : recipe == parallelism::Fp8Recipe::kCurrent ? 2 : 1;
  // Splits a grouped GEMM quantizes separately (Fp8GroupedCastTimes).
  const double splits = recipe == parallelism::Fp8Recipe::kDelayed ? 1 : experts;
  bool routed = false;
  for (int i = 0; i < ops.count; ++i) {
    const models::Op& op = ops.ops[static_cast<size_t>(i)];
    if (op.expert) {
      k.fwd += experts + splits * quantize;
      k.bwd += 2 * experts + splits * quantize;
      // One te.GroupedLinear call, one split per local expert.
      k.te_modules_fwd += 1;
      k.te_kernels_fwd += experts + splits * quantize;
      k.te_splits_fwd += experts;
      k.after_sync_fwd += experts + splits * quantize;
      k.after_sync_te_modules_fwd += 1;
      k.after_sync_te_kernels_fwd += experts + splits * quantize;
      continue;
    }
    const bool gemm = op.kind == models::OpKind::kGemm || op.kind == models::OpKind::kBatchedGemm;
    const bool linear = op.kind == models::OpKind::kGemm && !op.router;
    const bool elementwise = op.kind == models::OpKind::kElementwise;
    const double fwd_kernels = elementwise && op.bytes <= 0 ? 0 : 1 + (linear ? quantize : 0);
    k.fwd += fwd_kernels;
    k.bwd += elementwise ? (models::BackwardBytes(op) > 0 ? 1 : 0) : (gemm ? 2 : 1) + (linear ? quantize : 0);
    if (linear) {
      // One te.Linear / te.LayerNormLinear call: its GEMM and its casts.
      k.te_modules_fwd += 1;
      k.te_kernels_fwd += fwd_kernels;
    }
    // Operators after the router run after the dispatcher's sync.
    if (routed) {
      k.after_sync_fwd += fwd_kernels;
      if (linear) {
        k.after_sync_te_modules_fwd += 1;
        k.after_sync_te_kernels_fwd += fwd_kernels;
      }
    }
    routed = routed || op.router;
  }
  if (routed) {
    // Router top-k (fused), then the dispatcher (MoeLayerKernels' comment);
    // after the sync the unpermute, the all-to-alls and the sorts.
    k.fwd += 1 + 1 + 2;
    k.bwd += 1 + 2;
    k.after_sync_fwd += 1;
    if (expert_parallel) {
      k.fwd += 6 + 3;
      k.bwd += 3;
      k.after_sync_fwd += 3;
    }
    if (experts > 1) {
      k.fwd += 2;
      k.bwd += 2;
      k.after_sync_fwd += 2;
    }
  }
  return k;
}

double HostBoundTime(double device_s, double kernels, double host_per_kernel) {
  return std::max(device_s, kernels * host_per_kernel);
}

double MoeForwardHostTime(const LayerKernels& k, double per_kernel, double per_module, double per_split) {
  const double splits = k.te_splits_fwd * per_split;
  if (per_module <= 0) return k.fwd * per_kernel + splits;
  return (k.fwd - k.te_kernels_fwd) * per_kernel + k.te_modules_fwd * per_module + splits;
}

double MoeForwardHostTimeAfterSync(const LayerKernels& k, double per_kernel, double per_module,
                                   double per_split) {
  LayerKernels after;
  after.fwd = k.after_sync_fwd;
  after.te_modules_fwd = k.after_sync_te_modules_fwd;
  after.te_kernels_fwd = k.after_sync_te_kernels_fwd;
  after.te_splits_fwd = k.te_splits_fwd;
  return MoeForwardHostTime(after, per_kernel, per_module, per_split);
}

double SyncedForwardTime(double device_s, double host_s, double host_after_sync, double device_before_sync) {
  return std::max({device_s, host_s, host_after_sync + device_before_sync});
}

double ExpertGemmTime(const hardware::DeviceSpec& d, hardware::DataType dt, double flops, double bytes,
                      double local_experts, bool mxfp8) {
  if (local_experts <= 1) return hardware::GemmTime(d, dt, flops, bytes, 0.0, mxfp8);
  const double one =
      hardware::GemmTime(d, dt, flops / local_experts, bytes / local_experts, 0.0, mxfp8) - d.kernel_overhead;
  return local_experts * one + d.kernel_overhead;
}

namespace {

// Query heads on one device, and the K/V heads it holds (split over TP when
// they divide it, else one per device, as models/transformer.cpp).
double QueryHeads(const models::ModelSpec& m, int64_t tp) {
  return static_cast<double>(m.heads) / static_cast<double>(tp);
}
double KvHeadsOnDevice(const models::ModelSpec& m, int64_t tp) {
  if (models::UsesMla(m)) return QueryHeads(m, tp);  // MLA expands K/V per query head
  return std::max(1.0, static_cast<double>(models::KvHeads(m)) / static_cast<double>(tp));
}

}  // namespace

double KvBytes(const models::ModelSpec& m, double tokens, int64_t tp, double act_bytes) {
  const double per_head = static_cast<double>(models::QkHeadDim(m) + models::VHeadDim(m));
  return tokens * KvHeadsOnDevice(m, tp) * per_head * act_bytes;
}

bool CpSchemeFits(const models::ModelSpec& m, CpScheme scheme, int64_t tp, int64_t cp) {
  if (scheme != CpScheme::kUlysses) return true;
  return tp > 0 && cp > 0 && m.heads % tp == 0 && (m.heads / tp) % cp == 0;
}

bool CpSchemeRunsAttention(CpScheme scheme, parallelism::Attention attention) {
  return attention != parallelism::Attention::kMaterialized || scheme == CpScheme::kUlysses ||
         scheme == CpScheme::kAuto;
}

bool CpPlanRuns(const models::ModelSpec& m, const parallelism::TrainingPlan& p) {
  if (p.cp <= 1) return true;
  if (p.cp_scheme != CpScheme::kAuto)
    return CpSchemeFits(m, p.cp_scheme, p.tp, p.cp) && CpSchemeRunsAttention(p.cp_scheme, p.attention);
  for (CpScheme s : {CpScheme::kRing, CpScheme::kAllGather, CpScheme::kUlysses})
    if (CpSchemeFits(m, s, p.tp, p.cp) && CpSchemeRunsAttention(s, p.attention)) return true;
  return false;
}

CpVolume CpVolumeOf(const models::ModelSpec& m, CpScheme scheme, double tokens, int64_t tp, int64_t cp,
                    double act_bytes) {
  CpVolume v;
  if (cp <= 1) return v;
  const double c = static_cast<double>(cp);
  const double kv = KvBytes(m, tokens, tp, act_bytes);
  switch (scheme) {
    case CpScheme::kAuto:
    case CpScheme::kRing:
      v.fwd_bytes = (c - 1) * kv;
      v.bwd_bytes = 2 * (c - 1) * kv;
      v.buffer_bytes = 4 * kv;
      break;
    case CpScheme::kAllGather:
      v.fwd_bytes = (c - 1) * kv;
      v.bwd_bytes = 2 * (c - 1) * kv;
      v.buffer_bytes = c * kv;
      break;
    case CpScheme::kUlysses: {
      const double q = tokens * QueryHeads(m, tp) * static_cast<double>(models::QkHeadDim(m)) * act_bytes;
      const double o = tokens * QueryHeads(m, tp) * static_cast<double>(models::VHeadDim(m)) * act_bytes;
      // K/V heads fewer than cp are replicated so that each rank gets one.
      const double kv_heads = KvHeadsOnDevice(m, tp);
      const double kv_sent = kv * std::max(kv_heads, c) / kv_heads;
      const double all = q + kv_sent + o;
      v.fwd_bytes = (c - 1) / c * all;
      v.bwd_bytes = (c - 1) / c * all;
      v.buffer_bytes = all;
      break;
    }
  }
  return v;
}

CpExposed CpExposedTime(const hardware::Network& net, const hardware::GroupPlacement& g,
                        const models::ModelSpec& m, CpScheme scheme, double tokens, int64_t tp,
                        int64_t cp, double act_bytes, double attention_fwd) {
  CpExposed e;
  if (cp <= 1) return e;
  const double c = static_cast<double>(cp);
  const double kv = KvBytes(m, tokens, tp, act_bytes);
  switch (scheme) {
    case CpScheme::kAuto:
    case CpScheme::kRing: {
      // Each of the cp - 1 steps sends one block while the attention of the
      // block received before runs; a step whose transfer outlasts its
      // block's compute exposes the difference.
      const double step_f = net.Time(Collective::kSendRecv, kv, g);
      const double step_b = net.Time(Collective::kSendRecv, 2 * kv, g);
      e.fwd = (c - 1) * std::max(0.0, step_f - attention_fwd / c);
      e.bwd = (c - 1) * std::max(0.0, step_b - 2.5 * attention_fwd / c);
      break;
    }
    case CpScheme::kAllGather: {
      const double gather = net.Time(Collective::kAllGather, c * kv, g);
      e.fwd = gather;
      e.bwd = gather + net.Time(Collective::kReduceScatter, c * kv, g);
      break;
    }
    case CpScheme::kUlysses: {
      const double q = tokens * QueryHeads(m, tp) * static_cast<double>(models::QkHeadDim(m)) * act_bytes;
      const double o = tokens * QueryHeads(m, tp) * static_cast<double>(models::VHeadDim(m)) * act_bytes;
      const double kv_heads = KvHeadsOnDevice(m, tp);
      const double kv_sent = kv * std::max(kv_heads, c) / kv_heads;
      const double one = net.Time(Collective::kAllToAll, q + kv_sent, g) + net.Time(Collective::kAllToAll, o, g);
      e.fwd = one;
      e.bwd = one;
      break;
    }
  }
  return e;
}

LayerAttention LayerAttentionOf(const models::ModelSpec& m, double attention_fwd, double seq) {
  LayerAttention a;
  a.global = attention_fwd / models::LocalAttentionShare(m, seq);
  a.local = a.global * models::LocalLayerWork(m, seq);
  return a;
}

CpScheme LocalLayersCpScheme(const hardware::Network& net, const hardware::GroupPlacement& g,
                             const models::ModelSpec& m, CpScheme scheme, double tokens, int64_t tp,
                             int64_t cp, double act_bytes, double local_attention_fwd) {
  if (m.sliding_window <= 0) return scheme;
  if (scheme != CpScheme::kRing && scheme != CpScheme::kAuto) return scheme;
  if (!CpSchemeFits(m, CpScheme::kUlysses, tp, cp)) return CpScheme::kAllGather;
  const double gather =
      CpExposedTime(net, g, m, CpScheme::kAllGather, tokens, tp, cp, act_bytes, local_attention_fwd).total();
  const double ulysses =
      CpExposedTime(net, g, m, CpScheme::kUlysses, tokens, tp, cp, act_bytes, local_attention_fwd).total();
  return ulysses < gather ? CpScheme::kUlysses : CpScheme::kAllGather;
}

CpExposed CpExposedOverLayers(const hardware::Network& net, const hardware::GroupPlacement& g,
                              const models::ModelSpec& m, CpScheme scheme, double tokens, int64_t tp,
                              int64_t cp, double act_bytes, double attention_fwd, double seq) {
  if (models::LocalAttentionShare(m, seq) >= 1)
    return CpExposedTime(net, g, m, scheme, tokens, tp, cp, act_bytes, attention_fwd);
  const LayerAttention a = LayerAttentionOf(m, attention_fwd, seq);
  const double f = models::LocalLayerFraction(m);
  const CpExposed global = CpExposedTime(net, g, m, scheme, tokens, tp, cp, act_bytes, a.global);
  const CpScheme ws = LocalLayersCpScheme(net, g, m, scheme, tokens, tp, cp, act_bytes, a.local);
  const CpExposed windowed = CpExposedTime(net, g, m, ws, tokens, tp, cp, act_bytes, a.local);
  CpExposed e;
  e.fwd = (1 - f) * global.fwd + f * windowed.fwd;
  e.bwd = (1 - f) * global.bwd + f * windowed.bwd;
  return e;
}

CpScheme ChooseCpScheme(const hardware::Network& net, const hardware::GroupPlacement& g,
                        const models::ModelSpec& m, const parallelism::TrainingPlan& p, double tokens,
                        double act_bytes, double attention_fwd, CpExposed* chosen, double* each) {
  const double seq = CpSequence(p, tokens);
  constexpr CpScheme kSchemes[3] = {CpScheme::kRing, CpScheme::kAllGather, CpScheme::kUlysses};
  CpScheme best = p.cp_scheme;
  CpExposed best_t;
  double best_total = std::numeric_limits<double>::infinity();
  if (each != nullptr) each[static_cast<int>(CpScheme::kAuto)] = std::numeric_limits<double>::infinity();
  for (CpScheme s : kSchemes) {
    double total = std::numeric_limits<double>::infinity();
    CpExposed t;
    if (CpSchemeFits(m, s, p.tp, p.cp) && CpSchemeRunsAttention(s, p.attention)) {
      // A materialised attention computes every score, windowed or not
      // (models::LayerOps): its layers are alike.
      t = p.attention == parallelism::Attention::kMaterialized
              ? CpExposedTime(net, g, m, s, tokens, p.tp, p.cp, act_bytes, attention_fwd)
              : CpExposedOverLayers(net, g, m, s, tokens, p.tp, p.cp, act_bytes, attention_fwd, seq);
      total = t.total();
    }
    if (each != nullptr) each[static_cast<int>(s)] = total;
    const bool wanted = p.cp_scheme == CpScheme::kAuto ? total < best_total : s == p.cp_scheme;
    if (wanted) {
      best = s;
      best_t = t;
      best_total = total;
    }
  }
  if (chosen != nullptr) *chosen = best_t;
  return best;
}

}  // namespace orrery::engine
