#include "core/estimate/parallel_notes.h"

#include <cmath>

#include "core/base/format.h"
#include "core/estimate/parallel_comm.h"
#include "hardware/network.h"
#include "models/transformer.h"
#include "parallelism/schedule.h"

namespace orrery::engine {

namespace {

using base::FormatBandwidth;
using base::FormatBytes;
using base::FormatPercent;
using base::FormatTime;
using parallelism::CpScheme;

// The innermost tier holding the whole group.
int TopTier(const hardware::GroupPlacement& g) {
  int t = 0;
  while (t < g.tiers - 1 && g.per_domain[static_cast<size_t>(t)] < g.size) ++t;
  return t;
}

std::string TierName(const hardware::SystemSpec& s, int tier) {
  if (tier < 0 || tier >= static_cast<int>(s.network.size())) return "the network";
  const std::string& n = s.network[static_cast<size_t>(tier)].name;
  return n.empty() ? "tier " + std::to_string(tier) : n;
}

double TierBandwidth(const hardware::SystemSpec& s, int tier) {
  return hardware::DeviceTierBandwidth(s, tier);
}

std::string ExpertNote(const Scenario& s, const TrainingEstimate& e, const OperatorCosts& c,
                       const TrainingEstimator& est) {
  const auto& p = s.training;
  const hardware::GroupPlacement& g = c.ep_group;
  const double load = parallelism::ExpertLoadFactor(p);
  const double bytes = ExpertAllToAllBytes(s.model, DispatchedTokens(p, c.tokens), c.act_bytes, load);
  const double one = ExpertAllToAllTime(est.network(), g, s.model, bytes);
  const int top = TopTier(g);
  const int64_t etp = parallelism::ExpertTensorParallel(p);
  const std::string ep = "EP " + std::to_string(p.ep) +
                         (etp != p.tp ? " (folded over tp x cp x dp with ETP " + std::to_string(etp) + ")" : "");
  std::string line;
  if (top == 0) {
    line = ep + " sits inside one " + TierName(s.system, 0) + " domain (" +
           FormatBandwidth(TierBandwidth(s.system, 0)) +
           " per device): every dispatch and combine all-to-all stays on it";
  } else {
    const int64_t k = std::max<int64_t>(1, g.per_domain[0]);
    const double crossing = static_cast<double>(p.ep - k) / static_cast<double>(p.ep);
    const int64_t dom = s.system.network.empty() ? 0 : s.system.network[0].domain;
    const int64_t span = p.ep * std::max<int64_t>(1, g.stride);
    if (dom > 0 && span < dom && dom % span != 0) {
      line = ep + " groups do not tile the " + std::to_string(dom) + "-device " + TierName(s.system, 0) +
             " domains: the worst-placed group straddles two, and its " + std::to_string(k) +
             " members on one side send " + FormatPercent(crossing, 0) +
             " of every dispatch and combine all-to-all across " + TierName(s.system, top);
    } else {
      line = ep + " spans " + std::to_string(p.ep / k) + " " + TierName(s.system, 0) + " domains of " +
             std::to_string(k) + " members: " + FormatPercent(crossing, 0) +
             " of every dispatch and combine all-to-all crosses " + TierName(s.system, top);
    }
    line += " at " + FormatBandwidth(TierBandwidth(s.system, top)) + " per device instead of " +
            FormatBandwidth(TierBandwidth(s.system, 0));
    // Node-limited routing (ExpertAllToAllTime): a token crosses once per
    // destination node and is forwarded to its experts inside it.
    const int64_t limit = RoutingNodeLimit(s.model, g.size, k);
    if (limit > 0 && limit < s.model.top_k && k < g.size)
      line += "; with node-limited routing (" +
              std::string(s.model.routing_node_limit > 0 && s.model.routing_node_limit == limit
                              ? "routing_node_limit"
                              : "routing groups") +
              ": a token's " + std::to_string(s.model.top_k) + " experts on at most " + std::to_string(limit) +
              " nodes) a token crosses " + TierName(s.system, top) + " once per destination node, at most " +
              std::to_string(limit) + " of its " + std::to_string(s.model.top_k) +
              " copies, and reaches its experts there over " + TierName(s.system, 0);
  }
  line += "; each moves " + FormatBytes(bytes) + " per device per MoE layer and microbatch in " +
          FormatTime(one) + " (x" + base::FormatPlain(kExpertAllToAllsPerLayer) +
          " per layer, busiest rank at " + base::FormatPlain(load, 3) + "x the balanced load); " +
          FormatTime(e.time.ep_comm) +
          (parallelism::OverlapsExpertComm(p) ? " exposed per iteration after overlapping other microbatches' compute, "
                             : " per iteration, ") +
          FormatPercent(e.iteration_s > 0 ? e.time.ep_comm / e.iteration_s : 0) + " of the step.";
  return line;
}

std::string CpNote(const Scenario& s, const TrainingEstimate& e, const OperatorCosts& c,
                   const TrainingEstimator& est) {
  const auto& p = s.training;
  parallelism::TrainingPlan any = p;
  any.cp_scheme = CpScheme::kAuto;
  double each[4] = {0, 0, 0, 0};
  const CpScheme best = ChooseCpScheme(est.network(), c.cp_group, s.model, any, c.tokens, c.act_bytes,
                                       c.dense.attention_fwd, nullptr, each);
  const CpScheme runs = p.cp_scheme == CpScheme::kAuto ? best : p.cp_scheme;
  const int top = TopTier(c.cp_group);
  std::string line = "CP " + std::to_string(p.cp) + " (on " + TierName(s.system, top) + ") runs " +
                     parallelism::CpSchemeName(runs) +
                     (p.cp_scheme == CpScheme::kAuto ? " (chosen by cp_scheme=auto)" : " (set by the plan)") +
                     ": exposed K/V exchange per layer and microbatch";
  constexpr CpScheme kAll[3] = {CpScheme::kRing, CpScheme::kAllGather, CpScheme::kUlysses};
  for (CpScheme x : kAll) {
    const double t = each[static_cast<int>(x)];
    line += std::string(x == CpScheme::kRing ? " " : ", ") + parallelism::CpSchemeName(x) + " " +
            (std::isfinite(t)                         ? FormatTime(t)
             : !CpSchemeRunsAttention(x, p.attention) ? std::string("impossible (materialized attention)")
                                                      : "impossible (" +
                                                            std::to_string(s.model.heads / std::max<int64_t>(1, p.tp)) +
                                                            " heads per tp rank do not split over cp)");
  }
  const CpVolume ring = CpVolumeOf(s.model, CpScheme::kRing, c.tokens, p.tp, p.cp, c.act_bytes);
  const bool materialized = p.attention == parallelism::Attention::kMaterialized;
  line += "; one layer's attention takes " + FormatTime(c.dense.attention_fwd) + " forward" +
          (materialized ? std::string(", materialized: ring and all-gather need a fused attention kernel")
                        : ", behind which ring hides its " + std::to_string(p.cp - 1) + " steps of " +
                              FormatBytes(ring.fwd_bytes / static_cast<double>(p.cp - 1)) +
                              ", while all-gather and ulysses wait for their collectives");
  // Sliding-window or chunked layers (CpExposedOverLayers): their attention
  // and the scheme they run beside the global layers'. A materialised
  // attention computes every score (ChooseCpScheme).
  const double seq = CpSequence(p, c.tokens);
  if (!materialized && models::LocalAttentionShare(s.model, seq) < 1) {
    const LayerAttention a = LayerAttentionOf(s.model, c.dense.attention_fwd, seq);
    const CpScheme local = LocalLayersCpScheme(est.network(), c.cp_group, s.model, runs, c.tokens, p.tp, p.cp,
                                               c.act_bytes, a.local);
    const bool window = s.model.sliding_window > 0;
    line += " (the mean over the layers: a global layer's attention takes " + FormatTime(a.global) + ", each of the " +
            std::to_string(models::LocalLayers(s.model)) + " layers with a " +
            std::to_string(window ? s.model.sliding_window : s.model.attention_chunk) +
            (window ? "-token window " : "-token chunk ") + FormatTime(a.local) + " and runs " +
            parallelism::CpSchemeName(local) +
            (local != runs ? ", Transformer Engine's ring taking no window" : "") +
            (window ? "" : ", its chunks exchanged as packed sequences") + ", still exchanging the whole sequence's K/V)";
  }
  if (runs == best) {
    line += std::string("; ") + parallelism::CpSchemeName(best) + " exposes the least";
  } else {
    line += std::string("; ") + parallelism::CpSchemeName(best) + " would expose less";
  }
  line += " (" + FormatTime(e.time.cp_comm) + " per iteration, " +
          FormatPercent(e.iteration_s > 0 ? e.time.cp_comm / e.iteration_s : 0) + " of the step).";
  return line;
}

}  // namespace

std::vector<std::string> ParallelNotes(const Scenario& s, const TrainingEstimate& e) {
  std::vector<std::string> out;
  const auto& p = s.training;
  const bool costed = e.feasible() || e.infeasible == Infeasible::kOutOfMemory;
  if (!costed || (p.ep <= 1 && p.cp <= 1)) return out;
  const TrainingEstimator est(s.model, s.system);
  const OperatorCosts c = est.Costs(p, s.workload);
  if (p.ep > 1 && s.model.experts > 1) out.push_back(ExpertNote(s, e, c, est));
  if (p.cp > 1) out.push_back(CpNote(s, e, c, est));
  return out;
}

}  // namespace orrery::engine
