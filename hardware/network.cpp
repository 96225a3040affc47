#include "hardware/network.h"

#include <algorithm>

namespace orrery::hardware {

AlphaBetaNetwork::AlphaBetaNetwork(const SystemSpec& system) {
  const int64_t total = DeviceCount(system);
  tiers_ = static_cast<int>(std::min<size_t>(system.network.size(), kMaxTiers));
  for (int i = 0; i < tiers_; ++i) {
    const NetworkTier& t = system.network[static_cast<size_t>(i)];
    tier_[static_cast<size_t>(i)] = &t;
    domain_[static_cast<size_t>(i)] = t.domain == 0 ? total : std::min(t.domain, total);
  }
  if (tiers_ > 0) domain_[static_cast<size_t>(tiers_ - 1)] = std::max(total, domain_[static_cast<size_t>(tiers_ - 1)]);
  int64_t inner = 1;
  for (int i = 0; i < tiers_; ++i) {
    const auto k = static_cast<size_t>(i);
    geo_[k] = MakeGeometry(*tier_[k], domain_[k], inner, total);
    bandwidth_[k] = tier_[k]->bandwidth;
    inner = domain_[k];
  }
  if (tiers_ > 0) {
    const double capped = DeviceTierBandwidth(system, 0);
    if (capped < bandwidth_[0]) {
      geo_[0].link_bandwidth *= capped / bandwidth_[0];
      bandwidth_[0] = capped;
    }
  }
}

double DeviceTierBandwidth(const SystemSpec& system, int tier) {
  if (tier < 0 || tier >= static_cast<int>(system.network.size())) return 0;
  const double b = system.network[static_cast<size_t>(tier)].bandwidth;
  const double cap = system.device.scaleup_bandwidth;
  return tier == 0 && cap > 0 && cap < b ? cap : b;
}

GroupPlacement AlphaBetaNetwork::Place(int64_t size, int64_t stride) const {
  GroupPlacement g;
  g.size = size;
  g.tiers = tiers_;
  g.stride = std::max<int64_t>(1, stride);
  for (int i = 0; i < tiers_; ++i) {
    const int64_t dom = domain_[static_cast<size_t>(i)];
    // Members fitting in one domain: the domain holds dom/stride strides.
    const int64_t fit = stride >= dom ? 1 : dom / stride;
    g.per_domain[static_cast<size_t>(i)] = std::max<int64_t>(1, std::min(size, fit));
  }
  return g;
}

double AlphaBetaNetwork::Base(int top) const {
  double b = 0;
  for (int i = 0; i <= top && i < tiers_; ++i) b = std::max(b, tier_[static_cast<size_t>(i)]->base_latency);
  return b;
}

bool AlphaBetaNetwork::RailOnlyCrossing(int top, int64_t stride) const {
  const TierGeometry& g = geo_[static_cast<size_t>(top)];
  return top > 0 && g.kind == Topology::kRailOnly && stride % g.inner != 0;
}

StepCost AlphaBetaNetwork::SwitchedStep(int tier, int64_t last, double eff) const {
  const NetworkTier& t = *tier_[static_cast<size_t>(tier)];
  const TierGeometry& g = geo_[static_cast<size_t>(tier)];
  const int hops = std::max(Hops(g, 0, last), 2);
  double bw = bandwidth_[static_cast<size_t>(tier)] * eff;
  if (g.kind == Topology::kFatTree && hops > 2) bw /= t.oversubscription;
  return {bw, t.latency + hops * t.hop_latency};
}

double AlphaBetaNetwork::PointToPoint(double bytes, int64_t a, int64_t b, int tier) const {
  return PointToPointAt(bytes, a, b, tier, tier_[static_cast<size_t>(tier)]->efficiency.At(bytes));
}

double AlphaBetaNetwork::PointToPointAt(double bytes, int64_t a, int64_t b, int tier, double eff) const {
  const NetworkTier& t = *tier_[static_cast<size_t>(tier)];
  const TierGeometry& g = geo_[static_cast<size_t>(tier)];
  const int hops = Hops(g, a, b);
  double bw = bandwidth_[static_cast<size_t>(tier)] * eff;
  switch (g.kind) {
    case Topology::kFullMesh:
      bw = g.link_bandwidth * static_cast<double>(std::max<int64_t>(1, g.links / std::max<int64_t>(1, g.domain - 1))) * eff;
      break;
    case Topology::kRing:
    case Topology::kTorus: bw = g.link_bandwidth * eff; break;
    case Topology::kFatTree:
      if (hops > 2) bw /= t.oversubscription;
      break;
    case Topology::kSwitch:
    case Topology::kRailOnly: break;
  }
  return t.latency + hops * t.hop_latency + bytes / bw;
}

double AlphaBetaNetwork::Single(Collective c, double bytes, int64_t n, int64_t stride, int tier,
                                CollectiveReport* r) const {
  if (n <= 1 || bytes <= 0) return 0;
  const NetworkTier& t = *tier_[static_cast<size_t>(tier)];
  const TierGeometry& g = geo_[static_cast<size_t>(tier)];
  const double eff = t.efficiency.At(bytes);
  const int64_t last = (n - 1) * stride;
  double times[5] = {kNotSupported, kNotSupported, kNotSupported, kNotSupported, kNotSupported};
  const auto at = [](CollectiveAlgorithm a) { return static_cast<size_t>(a); };
  if (c == Collective::kSendRecv) {
    times[at(CollectiveAlgorithm::kDirect)] = PointToPointAt(bytes, 0, stride, tier, eff);
  } else {
    switch (g.kind) {
      case Topology::kSwitch:
      case Topology::kFatTree:
      case Topology::kRailOnly: {
        const StepCost st = SwitchedStep(tier, last, eff);
        times[at(CollectiveAlgorithm::kRing)] = RingTime(c, bytes, n, st);
        times[at(CollectiveAlgorithm::kTree)] = TreeTime(c, bytes, n, st);
        // Through switches only the all-to-all is inherently direct: one-shot
        // reduce-scatter/all-gather on a switch moves the ring's volume and is
        // not what NCCL runs for them.
        if (c == Collective::kAllToAll) times[at(CollectiveAlgorithm::kDirect)] = DirectTime(c, bytes, n, st);
        if (t.in_network_reduction) {
          const double ie = t.in_network_efficiency.x.empty() ? eff : t.in_network_efficiency.At(bytes);
          StepCost in{bandwidth_[static_cast<size_t>(tier)] * ie, st.alpha};
          if (g.kind == Topology::kFatTree && Hops(g, 0, last) > 2) in.bandwidth /= t.oversubscription;
          times[at(CollectiveAlgorithm::kInNetwork)] = InNetworkTime(c, bytes, in);
        }
        break;
      }
      case Topology::kFullMesh: {
        // One link (or links/(D-1) parallel links) to each peer.
        const double pair = static_cast<double>(std::max<int64_t>(1, g.links / std::max<int64_t>(1, g.domain - 1)));
        const StepCost one{g.link_bandwidth * pair * eff, t.latency + t.hop_latency};
        times[at(CollectiveAlgorithm::kRing)] = RingTime(c, bytes, n, one);
        times[at(CollectiveAlgorithm::kTree)] = TreeTime(c, bytes, n, one);
        const StepCost all{one.bandwidth * static_cast<double>(n - 1), one.alpha};
        times[at(CollectiveAlgorithm::kDirect)] = DirectTime(c, bytes, n, all);
        break;
      }
      case Topology::kRing:
      case Topology::kTorus: {
        // Decompose the group into dimensions: members `stride` apart fill a
        // dimension (closing its ring) before moving to the next.
        TorusDim dims[3];
        int nd = 0;
        int64_t s = stride, left = n;
        bool regular = true;
        for (int d = 0; d < g.ndims && left > 1; ++d) {
          const int64_t ext = g.dims[static_cast<size_t>(d)];
          if (s % ext == 0) {
            s /= ext;
            continue;
          }
          if (ext % s != 0) {
            regular = false;
            break;
          }
          const int64_t fit = ext / s;
          TorusDim& x = dims[nd++];
          // `s` interleaved groups share this dimension's links.
          x.link_bandwidth = g.link_bandwidth * eff / static_cast<double>(s);
          x.alpha = t.latency + static_cast<double>(s) * t.hop_latency;
          if (left < fit) {
            x.n = left;
            x.wrap = false;
            left = 1;
          } else {
            if (left % fit != 0) {
              regular = false;
              break;
            }
            x.n = fit;
            x.wrap = true;  // the whole dimension: its ring closes (2 links per dimension)
            left /= fit;
          }
          s = 1;
        }
        if (regular && left == 1) {
          times[at(CollectiveAlgorithm::kRing)] = TorusTime(c, bytes, dims, nd);
          if (nd > 1 && (c == Collective::kAllReduce || c == Collective::kReduceScatter ||
                         c == Collective::kAllGather)) {
            // Multi-port: nd parts of S/nd at once, each starting at a
            // different dimension, so every dimension's links stay busy.
            double slowest = 0;
            TorusDim rotated[3];
            for (int rot = 0; rot < nd; ++rot) {
              for (int d = 0; d < nd; ++d) rotated[d] = dims[(d + rot) % nd];
              slowest = std::max(slowest, TorusTime(c, bytes / nd, rotated, nd));
            }
            times[at(CollectiveAlgorithm::kRing)] = std::min(times[at(CollectiveAlgorithm::kRing)], slowest);
          }
        } else {
          // Irregular placement: a logical ring whose neighbours are h hops apart.
          const int h = std::max(1, Hops(g, 0, stride));
          times[at(CollectiveAlgorithm::kRing)] =
              RingTime(c, bytes, n, {g.link_bandwidth * eff / h, t.latency + h * t.hop_latency});
        }
        break;
      }
    }
  }
  // The tier's algorithm when it applies to this collective, else the fastest.
  size_t pick = at(t.algorithm);
  if (t.algorithm == CollectiveAlgorithm::kAuto || !(times[pick] < kNotSupported)) {
    pick = at(CollectiveAlgorithm::kRing);
    for (size_t a = 1; a < 5; ++a)
      if (times[a] < times[pick]) pick = a;
  }
  if (r != nullptr) r->algorithm[static_cast<size_t>(tier)] = static_cast<CollectiveAlgorithm>(pick);
  return times[pick];
}

double AlphaBetaNetwork::TimeFrom(Collective c, double bytes, const GroupPlacement& g, int tier,
                                  CollectiveReport* r) const {
  // Find the innermost tier that holds the whole group.
  int top = tier;
  while (top < tiers_ - 1 && g.per_domain[static_cast<size_t>(top)] < g.size) ++top;
  if (r != nullptr && r->span_from < 0) r->span_from = tier;
  if (top == tier) return Single(c, bytes, g.size, g.stride, top, r);
  // Members of the group inside one domain of `tier`.
  const int64_t k = g.per_domain[static_cast<size_t>(tier)];
  if (k <= 1) {
    if (r != nullptr) r->span_from = -1;
    return TimeFrom(c, bytes, g, tier + 1, r);
  }
  const bool crossing = RailOnlyCrossing(top, g.stride);
  if (r != nullptr && crossing) r->rail_aligned = false;

  if (c == Collective::kSendRecv || c == Collective::kBroadcast) {
    // The bottleneck pair crosses the top tier: member k_in-1 to member k_in.
    const int64_t kin = std::max<int64_t>(1, g.per_domain[static_cast<size_t>(top - 1)]);
    const int64_t a = (kin - 1) * g.stride, b = kin * g.stride;
    const TierGeometry& tg = geo_[static_cast<size_t>(top)];
    if (top > 0 && tg.kind == Topology::kRailOnly && a % tg.inner != b % tg.inner) {
      // Forwarded: to the HB-domain peer on b's rail, then along that rail;
      // the bandwidth parts pipeline, both latencies add.
      const int64_t via = a - a % tg.inner + b % tg.inner;
      const double hb = PointToPoint(bytes, a, via, top - 1);
      const double rail = PointToPoint(bytes, via, b, top);
      const double hb_lat = PointToPoint(0, a, via, top - 1);
      const double rail_lat = PointToPoint(0, via, b, top);
      double t = hb_lat + rail_lat + std::max(hb - hb_lat, rail - rail_lat);
      if (c == Collective::kBroadcast)
        t += static_cast<double>(g.size - 2) * std::max(hb_lat, rail_lat);
      if (r != nullptr) {
        r->forwarded = true;
        r->forwarded_hb_bytes = bytes;
        r->algorithm[static_cast<size_t>(top)] = CollectiveAlgorithm::kRing;
        r->algorithm[static_cast<size_t>(top - 1)] = CollectiveAlgorithm::kDirect;
      }
      return t;
    }
    if (c == Collective::kSendRecv) {
      if (r != nullptr) r->algorithm[static_cast<size_t>(top)] = CollectiveAlgorithm::kDirect;
      return PointToPoint(bytes, a, b, top);
    }
    return Single(c, bytes, g.size, g.stride, top, r);
  }

  if (c == Collective::kAllToAll) {
    const int64_t kin = std::max<int64_t>(1, g.per_domain[static_cast<size_t>(top - 1)]);
    const int64_t n = g.size;
    const int64_t m = n / kin;  // domains of top-1 the group spans
    GroupPlacement sub = g;
    sub.size = kin;
    for (int i = 0; i < tiers_; ++i)
      sub.per_domain[static_cast<size_t>(i)] = std::min(g.per_domain[static_cast<size_t>(i)], kin);
    if (crossing) {
      // Wang et al. 2023 Sec. 5: HB-domain all-to-all of the whole buffer
      // (regroup by destination rail), then a rail all-to-all among the m
      // members of each rail.
      const double hb = TimeFrom(Collective::kAllToAll, bytes, sub, tier, r);
      const double rail = Single(Collective::kAllToAll, bytes, m, g.stride * kin, top, r);
      if (r != nullptr) {
        r->forwarded = true;
        r->forwarded_hb_bytes = static_cast<double>(kin - 1) / static_cast<double>(kin) * bytes;
      }
      return hb + rail;
    }
    const TierGeometry& tg = geo_[static_cast<size_t>(top)];
    if (tg.kind == Topology::kSwitch || tg.kind == Topology::kFatTree ||
        tg.kind == Topology::kRailOnly) {
      // Inner share (kin-1)/n S on the inner links and outer share (n-kin)/n S
      // on the outer links, at once.
      const double inner = TimeFrom(Collective::kAllToAll,
                                    bytes * static_cast<double>(kin) / static_cast<double>(n), sub,
                                    tier, r);
      const StepCost st =
          SwitchedStep(top, (n - 1) * g.stride, tier_[static_cast<size_t>(top)]->efficiency.At(bytes));
      const double outer = static_cast<double>(m - 1) * st.alpha +
                           static_cast<double>(n - kin) / static_cast<double>(n) * bytes / st.bandwidth;
      if (r != nullptr) r->algorithm[static_cast<size_t>(top)] = CollectiveAlgorithm::kDirect;
      return std::max(inner, outer);
    }
    return Single(c, bytes, g.size, g.stride, top, r);
  }

  if (g.flat) {
    // A flat ring over all members: every member's full ring volume crosses
    // the outermost tier the group spans.
    return Single(c, bytes, g.size, g.stride, top, r);
  }
  GroupPlacement outer = g;
  outer.size = g.size / k;
  outer.stride = g.stride * k;
  for (int i = tier; i < tiers_; ++i)
    outer.per_domain[static_cast<size_t>(i)] =
        std::max<int64_t>(1, g.per_domain[static_cast<size_t>(i)] / k);
  const double kk = static_cast<double>(k);
  // The phases pipeline: the collective moves in chunks, and while the outer
  // tier carries one chunk the inner links carry the next, so the bandwidth
  // parts overlap and the slowest tier paces the whole, while the latencies
  // add (the pipeline fills). This is NCCL's own cost model of a ring that
  // spans nodes (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel: bus
  // bandwidth = channels x the ring's inter-node speed, latency = intra steps x
  // intraLat + inter steps x interLat), not a sum of phase times; on two DGX
  // H100 nodes it gives a bus bandwidth near the eight NICs' (NVIDIA's "46-48
  // GB/s per NIC" for NDR in a two-node ring: nccl-tests issue 290, 2025),
  // where the phases in sequence gave about half.
  // A phase's latency is its time for one byte (Single and TimeFrom price
  // zero bytes at zero).
  constexpr double kOneByte = 1;
  const auto pipelined = [](double in, double in_latency, double out, double out_latency) {
    return in_latency + out_latency + std::max(in - in_latency, out - out_latency);
  };
  switch (c) {
    case Collective::kAllReduce: {
      const double in = Single(Collective::kReduceScatter, bytes, k, g.stride, tier, r) +
                        Single(Collective::kAllGather, bytes, k, g.stride, tier, nullptr);
      const double in_lat = Single(Collective::kReduceScatter, kOneByte, k, g.stride, tier, nullptr) +
                            Single(Collective::kAllGather, kOneByte, k, g.stride, tier, nullptr);
      const double out = TimeFrom(Collective::kAllReduce, bytes / kk, outer, tier + 1, r);
      const double out_lat = TimeFrom(Collective::kAllReduce, kOneByte, outer, tier + 1, nullptr);
      return pipelined(in, in_lat, out, out_lat);
    }
    case Collective::kReduceScatter:
    case Collective::kAllGather: {
      const double in = Single(c, bytes, k, g.stride, tier, r);
      const double in_lat = Single(c, kOneByte, k, g.stride, tier, nullptr);
      const double out = TimeFrom(c, bytes / kk, outer, tier + 1, r);
      const double out_lat = TimeFrom(c, kOneByte, outer, tier + 1, nullptr);
      return pipelined(in, in_lat, out, out_lat);
    }
    default: break;
  }
  return Single(c, bytes, g.size, g.stride, top, r);
}

double AlphaBetaNetwork::Time(Collective c, double bytes, const GroupPlacement& g) const {
  if (g.size <= 1 || tiers_ == 0 || bytes <= 0) return 0;
  int top = 0;
  while (top < tiers_ - 1 && g.per_domain[static_cast<size_t>(top)] < g.size) ++top;
  return TimeFrom(c, bytes, g, 0, nullptr) + Base(top);
}

double AlphaBetaNetwork::TierTime(Collective c, double bytes, int64_t n, int tier) const {
  if (tier < 0 || tier >= tiers_) return 0;
  return Single(c, bytes, n, 1, tier, nullptr);
}

CollectiveReport AlphaBetaNetwork::Explain(Collective c, double bytes, const GroupPlacement& g) const {
  CollectiveReport r;
  if (g.size <= 1 || tiers_ == 0 || bytes <= 0) return r;
  int top = 0;
  while (top < tiers_ - 1 && g.per_domain[static_cast<size_t>(top)] < g.size) ++top;
  r.top_tier = top;
  r.base_latency_s = Base(top);
  r.time_s = TimeFrom(c, bytes, g, 0, &r) + r.base_latency_s;
  const double n = static_cast<double>(g.size);
  r.algbw = bytes / r.time_s;
  switch (c) {
    case Collective::kAllReduce: r.busbw = r.algbw * 2 * (n - 1) / n; break;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll: r.busbw = r.algbw * (n - 1) / n; break;
    case Collective::kBroadcast:
    case Collective::kSendRecv: r.busbw = r.algbw; break;
  }
  return r;
}

double AlphaBetaNetwork::SendTime(int64_t src, int64_t dst, double bytes) const {
  if (src == dst || tiers_ == 0) return 0;
  int tier = 0;
  while (tier < tiers_ - 1 && src / domain_[static_cast<size_t>(tier)] != dst / domain_[static_cast<size_t>(tier)])
    ++tier;
  const TierGeometry& g = geo_[static_cast<size_t>(tier)];
  if (tier > 0 && g.kind == Topology::kRailOnly && src % g.inner != dst % g.inner) {
    const int64_t via = src - src % g.inner + dst % g.inner;
    const double hb = PointToPoint(bytes, src, via, tier - 1);
    const double rail = PointToPoint(bytes, via, dst, tier);
    const double hb_lat = PointToPoint(0, src, via, tier - 1);
    const double rail_lat = PointToPoint(0, via, dst, tier);
    return Base(tier) + hb_lat + rail_lat + std::max(hb - hb_lat, rail - rail_lat);
  }
  return Base(tier) + PointToPoint(bytes, src, dst, tier);
}

}  // namespace orrery::hardware
