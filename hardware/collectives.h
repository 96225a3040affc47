#pragma once
// Collective algorithms on one tier: closed-form time of each algorithm for
// a group of n members, given the bandwidth and step latency the group gets.
// network.h picks the algorithm and composes tiers; this file is the
// formulas, each with its source. All functions are allocation-free; the
// three a collective's price compares (RingTime, TreeTime, DirectTime) are
// inline, as the closed-form estimate calls them a dozen times a plan.
//
// Conventions (Thakur, Rabenseifner and Gropp 2005, "Optimization of
// collective communication operations in MPICH", IJHPCA 19(1), Sec. 2):
// S is the full buffer (an all-reduce of S bytes, an all-gather producing S,
// an all-to-all where each member holds S, a broadcast of S), B the bandwidth
// one member drives per direction (bytes/s, already scaled by the efficiency
// at this message size), alpha the latency of one algorithm step.

#include <cstdint>
#include <limits>

namespace orrery::hardware {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSendRecv };
const char* CollectiveName(Collective c);

inline constexpr double kNotSupported = std::numeric_limits<double>::infinity();

// What a tier offers one group: per-member bandwidth per direction, bytes/s,
// and seconds per algorithm step.
struct StepCost {
  double bandwidth = 0;
  double alpha = 0;
};

// Ring algorithms (Patarasuk and Yuan 2009, "Bandwidth optimal all-reduce
// algorithms for clusters of workstations", JPDC 69(2), Sec. 3; Thakur et al.
// 2005 Sec. 4 for reduce-scatter, all-gather and the pairwise-exchange
// all-to-all):
//   all-reduce                 2 (n-1) alpha + 2 (n-1)/n S / B
//   reduce-scatter, all-gather   (n-1) alpha +   (n-1)/n S / B
//   all-to-all (pairwise)        (n-1) alpha +   (n-1)/n S / B
//   broadcast (pipelined chain)  (n-1) alpha +           S / B
//   send/recv                          alpha +           S / B
inline double RingTime(Collective c, double bytes, int64_t n, const StepCost& s) {
  if (n <= 1 || bytes <= 0) return 0;
  const double nn = static_cast<double>(n);
  switch (c) {
    case Collective::kAllReduce: return 2 * (nn - 1) * s.alpha + 2 * (nn - 1) / nn * bytes / s.bandwidth;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll: return (nn - 1) * s.alpha + (nn - 1) / nn * bytes / s.bandwidth;
    case Collective::kBroadcast: return (nn - 1) * s.alpha + bytes / s.bandwidth;
    case Collective::kSendRecv: return s.alpha + bytes / s.bandwidth;
  }
  return kNotSupported;
}

// Double binary tree (Sanders, Speck and Traeff 2009, "Two-tree algorithms for
// full bandwidth broadcast, reduction and scan", Parallel Computing 35(12),
// Sec. 2-4; NCCL 2.4 uses it): two trees each carry half the buffer; every
// member is interior in at most one, so each phase moves S per member.
//   all-reduce (reduce + broadcast)  2 ceil(log2 n) alpha + 2 S / B
//   broadcast                          ceil(log2 n) alpha +   S / B
// Other collectives: kNotSupported.
// ceil(log2 n): the depth of a binary tree of n members.
inline double Log2Ceil(int64_t n) {
  double steps = 0;
  for (int64_t v = 1; v < n; v *= 2) ++steps;
  return steps;
}
inline double TreeTime(Collective c, double bytes, int64_t n, const StepCost& s) {
  if (n <= 1 || bytes <= 0) return 0;
  switch (c) {
    case Collective::kAllReduce: return 2 * Log2Ceil(n) * s.alpha + 2 * bytes / s.bandwidth;
    case Collective::kBroadcast: return Log2Ceil(n) * s.alpha + bytes / s.bandwidth;
    default: return kNotSupported;
  }
}

// Direct (one-shot / pairwise, all peers at once): one step, every member
// sends its share to every peer concurrently over `s.bandwidth`, the sum of
// the links it can drive towards its n-1 peers (a full mesh: (n-1) links; a
// switch: its injection bandwidth). Thakur et al. 2005 Sec. 4.5 (all-to-all,
// long messages); one-shot all-reduce = direct reduce-scatter + all-gather.
//   reduce-scatter, all-gather, all-to-all  alpha + (n-1)/n S / B
//   all-reduce                            2 alpha + 2 (n-1)/n S / B
//   broadcast (root sends S to each peer)   alpha + (n-1) S / B
//   send/recv                               alpha + S / B
inline double DirectTime(Collective c, double bytes, int64_t n, const StepCost& s) {
  if (n <= 1 || bytes <= 0) return 0;
  const double nn = static_cast<double>(n);
  switch (c) {
    case Collective::kAllReduce: return 2 * s.alpha + 2 * (nn - 1) / nn * bytes / s.bandwidth;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll: return s.alpha + (nn - 1) / nn * bytes / s.bandwidth;
    case Collective::kBroadcast: return s.alpha + (nn - 1) * bytes / s.bandwidth;
    case Collective::kSendRecv: return s.alpha + bytes / s.bandwidth;
  }
  return kNotSupported;
}

// In-network reduction (NVLink SHARP on NVSwitch, InfiniBand SHARP): each
// member sends S up once and receives the reduced S down once (Graham et al.
// 2016, "Scalable Hierarchical Aggregation Protocol (SHArP)", COMHPC, Sec. 3;
// Klenk et al. 2020, "An in-network architecture for accelerating
// shared-memory multiprocessor collectives", ISCA, Sec. 3):
//   all-reduce  2 alpha + S / B     (B: algorithm bandwidth, its own efficiency)
// Reduce-scatter and all-gather gain no bandwidth from it (each member still
// serves (n-1)/n S) and are left to the other algorithms: kNotSupported.
double InNetworkTime(Collective c, double bytes, const StepCost& s);

// One dimension of a torus (or a ring tier) as a group uses it.
struct TorusDim {
  int64_t n = 1;           // members along this dimension
  double link_bandwidth = 0;  // bytes/s per link per direction (efficiency applied)
  double alpha = 0;        // seconds per step between neighbours of this dimension
  bool wrap = true;        // the members close a ring (they cover the whole dimension)
};

// Dimension-ordered (bucket) algorithms on a torus (Chan, Heimlich, Purkayastha
// and van de Geijn 2007, "Collective communication: theory, practice, and
// experience", CCPE 19(13), Sec. 6): reduce-scatter along dimension 1, then
// along dimension 2 on 1/n1 of the data, ...; all-gather in reverse. Along a
// whole dimension a bidirectional ring sends half each way (B = 2 b); along a
// segment that does not close the ring, B = b.
//   reduce-scatter = all-gather = sum_d (n_d-1) alpha_d + (n_d-1)/n_d S_d / B_d,
//   S_1 = S, S_(d+1) = S_d / n_d;  all-reduce = reduce-scatter + all-gather.
// All-to-all, dimension by dimension: uniform traffic on a ring of n loads
// each directed link with S floor(n^2/4) / (2 n) bytes (Dally and Towles 2004,
// Sec. 3.3.1: channel load k/8 per unit injection on a k-ary ring), on a line
// twice that:  sum_d (n_d-1) alpha_d + S floor(n_d^2/4) / (2 n_d b_d) [x2 on a line].
// Broadcast: pipelined along the dimensions, S / B_1 + sum_d ceil(n_d/2) alpha_d.
// With every port in use (Chan et al. 2007 Sec. 6, multiple simultaneous
// ports), the buffer splits into one part per dimension, each part taking the
// dimensions in a rotated order, so all links stay busy: the time is the
// slowest part's, TorusTime(S / k) for the rotation (network.cpp uses it for
// reduce-scatter, all-gather and all-reduce when that is faster).
double TorusTime(Collective c, double bytes, const TorusDim* dims, int ndims);

}  // namespace orrery::hardware
