#include "hardware/network.h"

#include <algorithm>

namespace orrery::hardware {

const char* CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "all-reduce";
    case Collective::kReduceScatter: return "reduce-scatter";
    case Collective::kAllGather: return "all-gather";
    case Collective::kAllToAll: return "all-to-all";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kSendRecv: return "send/recv";
  }
  return "?";
}

AlphaBetaNetwork::AlphaBetaNetwork(const SystemSpec& system) {
  const int64_t total = DeviceCount(system);
  tiers_ = static_cast<int>(std::min<size_t>(system.network.size(), kMaxTiers));
  for (int i = 0; i < tiers_; ++i) {
    const NetworkTier& t = system.network[static_cast<size_t>(i)];
    tier_[static_cast<size_t>(i)] = &t;
    domain_[static_cast<size_t>(i)] = t.domain == 0 ? total : std::min(t.domain, total);
  }
  if (tiers_ > 0) domain_[static_cast<size_t>(tiers_ - 1)] = std::max(total, domain_[static_cast<size_t>(tiers_ - 1)]);
}

GroupPlacement AlphaBetaNetwork::Place(int64_t size, int64_t stride) const {
  GroupPlacement g;
  g.size = size;
  g.tiers = tiers_;
  for (int i = 0; i < tiers_; ++i) {
    const int64_t dom = domain_[static_cast<size_t>(i)];
    // Members fitting in one domain: the domain holds dom/stride strides.
    const int64_t fit = stride >= dom ? 1 : dom / stride;
    g.per_domain[static_cast<size_t>(i)] = std::max<int64_t>(1, std::min(size, fit));
  }
  return g;
}

double AlphaBetaNetwork::TierTime(Collective c, double bytes, int64_t n, int tier) const {
  if (n <= 1 || bytes <= 0) return 0;
  const NetworkTier& t = *tier_[static_cast<size_t>(tier)];
  const double nn = static_cast<double>(n);
  double volume = 0;  // bytes each member sends, per the ring algorithm
  double steps = 0;
  double message = bytes;  // size whose efficiency applies
  switch (c) {
    case Collective::kAllReduce:
      volume = 2 * (nn - 1) / nn * bytes;
      steps = 2 * (nn - 1);
      break;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
      volume = (nn - 1) / nn * bytes;
      steps = nn - 1;
      break;
    case Collective::kBroadcast:
      // Pipelined ring broadcast: S / B once the pipeline is full.
      volume = bytes;
      steps = nn - 1;
      break;
    case Collective::kSendRecv:
      volume = bytes;
      steps = 1;
      break;
  }
  const double bw = t.bandwidth * t.efficiency.At(message);
  return volume / bw + steps * t.latency;
}

double AlphaBetaNetwork::TimeFrom(Collective c, double bytes, const GroupPlacement& g,
                                  int tier) const {
  // Find the innermost tier that holds the whole group.
  int top = tier;
  while (top < tiers_ - 1 && g.per_domain[static_cast<size_t>(top)] < g.size) ++top;
  if (top == tier || g.flat || c == Collective::kSendRecv || c == Collective::kAllToAll ||
      c == Collective::kBroadcast) {
    // One tier carries it all. For all-to-all and point-to-point the slowest
    // tier crossed is the bottleneck.
    return TierTime(c, bytes, g.size, top);
  }
  // Members of the group inside one domain of `tier`.
  const int64_t k = g.per_domain[static_cast<size_t>(tier)];
  if (k <= 1) return TimeFrom(c, bytes, g, tier + 1);
  GroupPlacement outer = g;
  outer.size = g.size / k;
  for (int i = tier; i < tiers_; ++i)
    outer.per_domain[static_cast<size_t>(i)] =
        std::max<int64_t>(1, g.per_domain[static_cast<size_t>(i)] / k);
  switch (c) {
    case Collective::kAllReduce:
      return TierTime(Collective::kReduceScatter, bytes, k, tier) +
             TimeFrom(Collective::kAllReduce, bytes / static_cast<double>(k), outer, tier + 1) +
             TierTime(Collective::kAllGather, bytes, k, tier);
    case Collective::kReduceScatter:
      return TierTime(Collective::kReduceScatter, bytes, k, tier) +
             TimeFrom(Collective::kReduceScatter, bytes / static_cast<double>(k), outer, tier + 1);
    case Collective::kAllGather:
      return TimeFrom(Collective::kAllGather, bytes / static_cast<double>(k), outer, tier + 1) +
             TierTime(Collective::kAllGather, bytes, k, tier);
    default: break;
  }
  return TierTime(c, bytes, g.size, top);
}

double AlphaBetaNetwork::Time(Collective c, double bytes, const GroupPlacement& g) const {
  if (g.size <= 1 || tiers_ == 0) return 0;
  return TimeFrom(c, bytes, g, 0);
}

}  // namespace orrery::hardware
