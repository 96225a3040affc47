#pragma once
// Topologies of one network tier: how the devices of one domain are wired,
// how many hops a message between two of them takes, how many links a group
// can use, the bisection bandwidth, and the checks that reject wiring that
// cannot exist (issue 4).
//
// Devices are numbered 0..N-1 in the order of the tiers: device d sits in
// domain d / domain_i of tier i, at local rank d % domain_(i-1) of the domain
// inside. A *rail* of a scale-out tier is the set of devices with the same
// local rank in their HB (scale-up) domain.
//
//   switch (NVSwitch; one flat switch)       full-mesh              ring
//            [ S ]                           d0 ─── d1          d0 ─ d1 ─ d2
//          /  |  |  \    d -> S -> d          │ ╲ ╱ │           │          │
//         d0 d1 d2 d3    = 2 hops             │ ╱ ╲ │           d5 ─ d4 ─ d3
//                                            d3 ─── d2   1 hop  min(|a-b|, n-|a-b|) hops
//
//   fat-tree, 2 levels, rail-optimised       rail-only (Wang et al. 2023): no spine
//     spine   [S0]      [S1]                   rail 0: [R0]       rail 1: [R1]
//            /    \    /    \ .                      |    \ .            |    \ .
//     leaf [L r0] [L r1] [L r0] [L r1]          HB   [d0 d1]  [d0 d1]   (d0 of every HB
//           |      |      |      |                                    domain on R0, d1 on R1)
//     HB  [d0 ─── d1]   [d0 ─── d1]           d0 of one HB domain to d1 of another:
//     same leaf: 2 hops; else 2 x levels       d0 -> (HB) d1 -> R1 -> d1 = forwarded
//
//   torus (dims 4x4x4): a wrap-around ring in every dimension, 2 links per dimension;
//   hops = sum over dimensions of min(|da|, n - |da|).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/diagnostics.h"
#include "hardware/system_spec.h"

namespace orrery::hardware {

// What one tier looks like once its domain is known. Plain data, built once
// per network; every query below is allocation-free.
struct TierGeometry {
  Topology kind = Topology::kSwitch;
  int64_t domain = 1;             // devices in one domain of this tier
  int64_t inner = 1;              // devices in one domain of the tier inside (1 for tier 0)
  int64_t links = 1;              // links per device (resolved from NetworkTier::links)
  double link_bandwidth = 0;      // bytes/s per link per direction
  int ndims = 0;                  // torus and ring: dimensions
  std::array<int64_t, 3> dims{};  // torus and ring: extent of each dimension
  int64_t leaf_devices = 0;       // fat-tree: devices under one leaf; rail-only: HB domains
                                  // under one rail leaf (0 = no leaf level modelled)
  int levels = 1;                 // switch levels a message may climb (fat-tree; rail-only: per rail)
  bool rail_wired = false;        // leaves serve one rail each (rail-only; fat-tree with `rails`)
};

// Parses "16x16x16" (1 to 3 positive integers joined by 'x'); false if malformed.
bool ParseTorusDims(std::string_view text, std::array<int64_t, 3>& dims, int& ndims);

// The links per device a topology has when NetworkTier::links is 0.
int64_t DefaultLinks(Topology kind, int64_t domain, int ndims);

// Endpoints a fat-tree of `levels` levels of `radix`-port switches connects,
// leaf downlinks:uplinks = oversubscription : 1. One level is one switch (radix
// ports). Two: at most `radix` leaves of d = radix*o/(1+o) downlinks. Three: a
// folded Clos of pods (Al-Fares, Loukissas and Vahdat 2008, "A scalable,
// commodity data center network architecture", SIGCOMM, Sec. 3: k^3/4 hosts at
// o = 1): d * radix/2 * radix.
int64_t FatTreeCapacity(int64_t radix, int levels, double oversubscription);
// Leaf downlinks for `radix` ports at `oversubscription` (floor(radix*o/(1+o))).
int64_t LeafDownlinks(int64_t radix, double oversubscription);

// Geometry of tier `t` whose domain holds `domain` devices inside a system of
// `total`, around an inner domain of `inner` devices. Assumes CheckTopology passed.
TierGeometry MakeGeometry(const NetworkTier& t, int64_t domain, int64_t inner, int64_t total);

// Switch or wire hops from device a to device b inside one domain of the tier
// (indices are system device numbers). For rail-only this is the route inside
// one rail network; a cross-rail route adds the HB-domain hops (network.h).
int Hops(const TierGeometry& g, int64_t a, int64_t b);

// Hops of the longest shortest route inside one domain (the diameter).
int Diameter(const TierGeometry& g);

// Bisection bandwidth of one domain, bytes/s per direction: the least total
// bandwidth across any cut of the domain into halves (Dally and Towles 2004,
// "Principles and Practices of Interconnection Networks", Sec. 3.3).
//   switch, rail-only (rail-aligned traffic): D/2 * B
//   fat-tree: D/2 * B / oversubscription
//   full-mesh: (D/2)^2 links of b            ring: 2 links of b
//   torus: 2 * D / max(dim) links of b (the cut across the longest dimension)
double BisectionBandwidth(const NetworkTier& t, const TierGeometry& g);

// Checks every tier's topology fields: rails equal to the HB domain size, a
// radix large enough for the size, torus dimensions that multiply to the
// domain, links a full mesh needs, in-network reduction only on switches.
// Messages name the tier's file:line:col (NetworkTier::where, else `where`).
void CheckTopology(const SystemSpec& s, const std::string& path, const base::SourceLocation& where,
                   base::Diagnostics& diags);

}  // namespace orrery::hardware
