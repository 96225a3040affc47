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

#include "hardware/collectives.h"
#include "hardware/system_spec.h"
#include "hardware/topology.h"

namespace orrery::hardware {

// Collective and CollectiveName live in hardware/collectives.h.

inline constexpr int kMaxTiers = 6;

struct GroupPlacement {
  int64_t size = 1;
  int tiers = 0;
  std::array<int64_t, kMaxTiers> per_domain{};  // members inside one domain of tier i
  // A flat ring over all members: every member's full ring volume crosses
  // the outermost tier the group spans (no use of the faster inner tiers).
  // What non-topology-aware collectives achieve; hierarchical otherwise.
  bool flat = false;
  // Devices between consecutive members (what Place was given). Decides the
  // route on rings and tori and whether members share a rail.
  int64_t stride = 1;
};

// How one collective ran, for `orrery network` and the tests; the hot path
// (Network::Time) computes the same without filling it.
struct CollectiveReport {
  double time_s = 0;               // what Time() returns
  double base_latency_s = 0;       // part of time_s: once per call (largest of the tiers used)
  int top_tier = -1;               // innermost tier holding the whole group
  int span_from = -1;              // innermost tier whose links the group uses
  bool rail_aligned = true;        // rail-only tier: members in different HB domains share a rail
  bool forwarded = false;          // rail-only: cross-rail traffic forwarded through the HB domain
  double forwarded_hb_bytes = 0;   // bytes per member the forwarding adds to the HB domain
  // Algorithm used on each tier (kAuto where the tier carried nothing).
  std::array<CollectiveAlgorithm, kMaxTiers> algorithm{};
  // NCCL's conventions (nccl-tests doc/PERFORMANCE.md): algorithm bandwidth
  // S / t; bus bandwidth = algbw x 2(n-1)/n (all-reduce), (n-1)/n
  // (reduce-scatter, all-gather, all-to-all), 1 (broadcast, send/recv).
  double algbw = 0;
  double busbw = 0;
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
// all-reduce), one topology per tier (hardware/topology.h) and the algorithms
// of hardware/collectives.h. Within a tier the algorithm is the tier's
// `algorithm`, or with `auto` the fastest it supports (ring, double binary
// tree, direct, in-network), as NCCL's tuner picks by its cost model (NCCL
// src/graph/tuning.cc, ncclTopoTuneModel). B = tier bandwidth x efficiency at
// the message size; alpha = latency + hops x hop_latency; base_latency is paid
// once per call (NCCL's baseLat), the small-message floor.
//
// Across tiers, hierarchical: reduce-scatter inside the inner domain, the
// collective on 1/k of the data across domains, all-gather back (the
// two-level scheme; Jia et al. 2018, arXiv 1807.11205), its phases pipelined
// as NCCL runs them: the slowest tier's bandwidth time plus every phase's
// latency (NCCL src/graph/tuning.cc prices a ring over nodes so).
// Its outer phase pairs members of equal local rank, so it stays on their rail.
// All-to-all across tiers: the inner share ((k-1)/n S) and the outer share
// ((n-k)/n S) move at once on different links: max of the two. On a rail-only
// tier (Wang et al. 2023, "Rail-only: a low-cost high-performance network for
// training LLMs with trillion parameters", arXiv 2307.12169, Sec. 5), traffic
// between different rails of different HB domains is forwarded through the HB
// domain first: all-to-all = an HB-domain all-to-all of S (each member regroups
// its data by destination rail; (k-1)/k S per member crosses the HB domain)
// followed by a rail all-to-all among the n/k members of each rail; a
// point-to-point send crosses the HB domain and then the rail, pipelined
// (NCCL's PXN): max(S/B_hb, S/B_rail) + both alphas.
// Per-device bandwidth of tier `tier` of `system`: the tier's, the innermost
// held to the device's own scale-up links (DeviceSpec::scaleup_bandwidth,
// when set): an H800's 200 GB/s in a DGX H100's 450 GB/s NVSwitch tier.
double DeviceTierBandwidth(const SystemSpec& system, int tier);

class AlphaBetaNetwork final : public Network {
 public:
  // Borrows `system`'s tiers: the system must outlive the network. The
  // innermost tier is the scale-up domain: a device moves no more than its
  // scale-up links carry (system.device.scaleup_bandwidth, when set), however
  // fast the tier's switches are.
  explicit AlphaBetaNetwork(const SystemSpec& system);
  GroupPlacement Place(int64_t size, int64_t stride) const override;
  double Time(Collective c, double bytes, const GroupPlacement& g) const override;

  // Collective of n members, consecutive members adjacent, inside tier `tier`
  // only (its links alone; no base latency).
  double TierTime(Collective c, double bytes, int64_t n, int tier) const;

  // Time() with the details of how it ran.
  CollectiveReport Explain(Collective c, double bytes, const GroupPlacement& g) const;

  // One point-to-point message from device `src` to device `dst` over the
  // innermost tier holding both: base + latency + hops x hop_latency + S / B,
  // where B is one link on a mesh, ring or torus, the device's injection
  // bandwidth through switches (ASTRA-sim's analytical send/recv model).
  double SendTime(int64_t src, int64_t dst, double bytes) const;

  int tiers() const { return tiers_; }
  int64_t domain(int tier) const { return domain_[static_cast<size_t>(tier)]; }
  // Per-device bandwidth of a tier (DeviceTierBandwidth).
  double bandwidth(int tier) const { return bandwidth_[static_cast<size_t>(tier)]; }
  const TierGeometry& geometry(int tier) const { return geo_[static_cast<size_t>(tier)]; }

 private:
  double TimeFrom(Collective c, double bytes, const GroupPlacement& g, int tier,
                  CollectiveReport* r) const;
  // The collective of n members, `stride` devices apart, on tier `tier`'s links.
  double Single(Collective c, double bytes, int64_t n, int64_t stride, int tier,
                CollectiveReport* r) const;
  // Point-to-point between devices `a` and `b` on tier `tier`.
  double PointToPoint(double bytes, int64_t a, int64_t b, int tier) const;
  // The same with the tier's efficiency at `bytes` already read (`eff`):
  // Single() reads the curve once per call, not once per algorithm.
  double PointToPointAt(double bytes, int64_t a, int64_t b, int tier, double eff) const;
  // Tier `tier` as a switched fabric for a group reaching `last` devices out,
  // its efficiency at the message size `eff` (the tier's curve at the bytes).
  StepCost SwitchedStep(int tier, int64_t last, double eff) const;
  bool RailOnlyCrossing(int top, int64_t stride) const;
  double Base(int top) const;

  int tiers_ = 0;
  std::array<int64_t, kMaxTiers> domain_{};
  std::array<const NetworkTier*, kMaxTiers> tier_{};
  std::array<TierGeometry, kMaxTiers> geo_{};
  // Per-device bandwidth of each tier: the tier's, the innermost capped by
  // the device's own scale-up links (DeviceSpec::scaleup_bandwidth).
  std::array<double, kMaxTiers> bandwidth_{};
};

}  // namespace orrery::hardware
