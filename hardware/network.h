#pragma once
// The communication seam: "time of collective C of S bytes over group G".
// One abstract interface so that topology models can be swapped (the
// network issue adds rail-only, torus, in-network reduction behind it).
//
// A group is described by where its members sit: `per_domain[i]` members
// share one domain of tier i. For TP=8 on 8-GPU nodes, the TP group has
// per_domain = {8, 8}; the DP group of stride 8 has per_domain = {1, dp}.

#include <array>
#include <cstdint>

#include "hardware/system_spec.h"

namespace orrery::hardware {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSendRecv };
const char* CollectiveName(Collective c);

inline constexpr int kMaxTiers = 6;

struct GroupPlacement {
  int64_t size = 1;
  int tiers = 0;
  std::array<int64_t, kMaxTiers> per_domain{};  // members inside one domain of tier i
  // A flat ring over all members: every member's full ring volume crosses
  // the outermost tier the group spans (no use of the faster inner tiers).
  // What non-topology-aware collectives achieve; hierarchical otherwise.
  bool flat = false;
};

class Network {
 public:
  virtual ~Network() = default;
  // Where a group of `size` members, consecutive members `stride` devices
  // apart, lands on the tiers.
  virtual GroupPlacement Place(int64_t size, int64_t stride) const = 0;
  // Seconds for collective `c` on a buffer of `bytes` (the full buffer: an
  // all-reduce of S bytes, an all-gather producing S bytes, an all-to-all
  // where each member holds S bytes, a point-to-point send of S bytes).
  virtual double Time(Collective c, double bytes, const GroupPlacement& g) const = 0;
};

// Alpha-beta model over a hierarchy of tiers (Thakur, Rabenseifner and Gropp
// 2005, "Optimization of collective communication operations in MPICH",
// IJHPCA 19(1), Table 1; Patarasuk and Yuan 2009 for bandwidth-optimal ring
// all-reduce). Within a tier, ring algorithms:
//   all-reduce      2 (n-1)/n * S / B + 2 (n-1) alpha
//   reduce-scatter    (n-1)/n * S / B +   (n-1) alpha   (all-gather the same)
//   all-to-all        (n-1)/n * S / B +   (n-1) alpha   (pairwise exchange)
//   send/recv                   S / B +         alpha
// with B = tier bandwidth x bus-bandwidth efficiency at that message size.
// Across tiers, hierarchical: reduce-scatter inside the inner domain, the
// collective on 1/k of the data across domains, all-gather back (the
// two-level scheme NCCL and Megatron use; Jia et al. 2018, arXiv 1807.11205).
class AlphaBetaNetwork final : public Network {
 public:
  explicit AlphaBetaNetwork(const SystemSpec& system);
  GroupPlacement Place(int64_t size, int64_t stride) const override;
  double Time(Collective c, double bytes, const GroupPlacement& g) const override;

  // Ring collective of n members inside tier `tier` only.
  double TierTime(Collective c, double bytes, int64_t n, int tier) const;

 private:
  double TimeFrom(Collective c, double bytes, const GroupPlacement& g, int tier) const;

  int tiers_ = 0;
  std::array<int64_t, kMaxTiers> domain_{};
  std::array<const NetworkTier*, kMaxTiers> tier_{};
};

}  // namespace orrery::hardware
