#include "hardware/topology.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace orrery::hardware {

bool ParseTorusDims(std::string_view text, std::array<int64_t, 3>& dims, int& ndims) {
  dims = {1, 1, 1};
  ndims = 0;
  size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  size_t end = text.size();
  while (end > i && text[end - 1] == ' ') --end;
  if (i == end) return false;
  while (i < end) {
    if (ndims == 3) return false;
    int64_t v = 0;
    size_t digits = 0;
    while (i < end && text[i] >= '0' && text[i] <= '9') {
      if (v > 1000000) return false;
      v = v * 10 + (text[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0 || v < 1) return false;
    dims[static_cast<size_t>(ndims++)] = v;
    if (i == end) break;
    if (text[i] != 'x' && text[i] != 'X') return false;
    ++i;
    if (i == end) return false;
  }
  return true;
}

int64_t DefaultLinks(Topology kind, int64_t domain, int ndims) {
  switch (kind) {
    case Topology::kRing: return 2;
    case Topology::kTorus: return 2 * std::max(1, ndims);
    case Topology::kFullMesh: return std::max<int64_t>(1, domain - 1);
    case Topology::kSwitch:
    case Topology::kFatTree:
    case Topology::kRailOnly: return 1;
  }
  return 1;
}

int64_t LeafDownlinks(int64_t radix, double oversubscription) {
  return static_cast<int64_t>(std::floor(static_cast<double>(radix) * oversubscription /
                                         (1.0 + oversubscription) + 1e-9));
}

int64_t FatTreeCapacity(int64_t radix, int levels, double oversubscription) {
  if (radix <= 0) return 0;
  if (levels <= 1) return radix;
  const int64_t d = LeafDownlinks(radix, oversubscription);
  if (d <= 0 || d >= radix) return 0;  // a leaf needs an uplink
  if (levels == 2) return d * radix;
  return d * (radix / 2) * radix;
}

namespace {

// Switch levels one rail network of a rail-only tier needs for `endpoints`
// ports: the fewest (up to `max_levels`) whose full-bisection Clos holds them.
int RailLevels(int64_t radix, int max_levels, int64_t endpoints) {
  if (radix <= 0) return 1;
  for (int l = 1; l <= max_levels; ++l)
    if (FatTreeCapacity(radix, l, 1.0) >= endpoints) return l;
  return max_levels;
}

}  // namespace

TierGeometry MakeGeometry(const NetworkTier& t, int64_t domain, int64_t inner, int64_t total) {
  TierGeometry g;
  g.kind = t.topology;
  g.domain = std::max<int64_t>(1, domain);
  g.inner = std::max<int64_t>(1, inner);
  if (t.topology == Topology::kTorus) {
    if (!ParseTorusDims(t.dims, g.dims, g.ndims)) {
      g.ndims = 1;
      g.dims = {g.domain, 1, 1};
    }
  } else if (t.topology == Topology::kRing) {
    g.ndims = 1;
    g.dims = {g.domain, 1, 1};
  }
  g.links = t.links > 0 ? t.links : DefaultLinks(t.topology, g.domain, g.ndims);
  g.link_bandwidth = t.bandwidth / static_cast<double>(g.links);
  g.levels = std::max(1, static_cast<int>(t.levels));
  if (t.topology == Topology::kFatTree && t.radix > 0 && g.levels > 1) {
    // `levels` is the most the fabric may use: a system scaled with
    // system.nodes is wired with the fewest (from two) whose Clos holds its
    // ports (Al-Fares et al. 2008: k-port switches connect k^2/2 hosts in two
    // levels, k^3/4 in three), as a SuperPOD adds a core level past one
    // spine's reach.
    const int64_t need = std::min(g.domain, std::max<int64_t>(1, total)) * g.links;
    for (int l = 2; l <= g.levels; ++l)
      if (FatTreeCapacity(t.radix, l, t.oversubscription) >= need) {
        g.levels = l;
        break;
      }
    g.leaf_devices = LeafDownlinks(t.radix, t.oversubscription) / g.links;
    g.rail_wired = t.rails > 0 && g.inner > 1;
  }
  if (t.topology == Topology::kRailOnly) {
    const int64_t hb_domains = std::max<int64_t>(1, std::min(g.domain, total) / g.inner);
    g.levels = RailLevels(t.radix, std::max(1, static_cast<int>(t.levels)), hb_domains * g.links);
    g.leaf_devices = g.levels > 1 ? LeafDownlinks(t.radix, 1.0) / g.links : hb_domains;
    g.rail_wired = true;
  }
  return g;
}

namespace {

int RingDistance(int64_t a, int64_t b, int64_t n) {
  const int64_t d = std::llabs(a - b) % n;
  return static_cast<int>(std::min(d, n - d));
}

// A rail-wired leaf serves one rail of `leaf_devices` HB domains; a plain
// leaf serves `leaf_devices` consecutive devices.
bool SameLeaf(const TierGeometry& g, int64_t a, int64_t b) {
  if (g.leaf_devices <= 0) return g.levels <= 1;
  if (g.rail_wired)
    return a % g.inner == b % g.inner &&
           (a / g.inner) / g.leaf_devices == (b / g.inner) / g.leaf_devices;
  return a / g.leaf_devices == b / g.leaf_devices;
}

}  // namespace

int Hops(const TierGeometry& g, int64_t a, int64_t b) {
  if (a == b) return 0;
  switch (g.kind) {
    case Topology::kSwitch: return 2;
    case Topology::kFullMesh: return 1;
    case Topology::kRing:
    case Topology::kTorus: {
      int64_t x = a % g.domain, y = b % g.domain;
      int hops = 0;
      for (int d = 0; d < g.ndims; ++d) {
        const int64_t n = g.dims[static_cast<size_t>(d)];
        hops += RingDistance(x % n, y % n, n);
        x /= n;
        y /= n;
      }
      return hops;
    }
    case Topology::kFatTree:
    case Topology::kRailOnly: return SameLeaf(g, a, b) ? 2 : 2 * g.levels;
  }
  return 2;
}

int Diameter(const TierGeometry& g) {
  switch (g.kind) {
    case Topology::kSwitch: return g.domain > 1 ? 2 : 0;
    case Topology::kFullMesh: return g.domain > 1 ? 1 : 0;
    case Topology::kRing:
    case Topology::kTorus: {
      int h = 0;
      for (int d = 0; d < g.ndims; ++d) h += static_cast<int>(g.dims[static_cast<size_t>(d)] / 2);
      return h;
    }
    case Topology::kFatTree:
    case Topology::kRailOnly: return 2 * g.levels;
  }
  return 2;
}

double BisectionBandwidth(const NetworkTier& t, const TierGeometry& g) {
  const int64_t half_domain = g.domain / 2;  // floor: an odd domain cuts one short
  const double half = static_cast<double>(half_domain);
  const double b = g.link_bandwidth;
  switch (g.kind) {
    case Topology::kSwitch:
    case Topology::kRailOnly: return half * t.bandwidth;
    case Topology::kFatTree: return half * t.bandwidth / t.oversubscription;
    case Topology::kFullMesh: {
      // Each pair across the cut has links / (D - 1) links of b.
      const double per_pair = static_cast<double>(g.links) / static_cast<double>(g.domain - 1);
      return half * static_cast<double>(g.domain - half_domain) * per_pair * b;
    }
    case Topology::kRing: return g.domain > 2 ? 2 * b : b;
    case Topology::kTorus: {
      int64_t longest = 1;
      for (int d = 0; d < g.ndims; ++d) longest = std::max(longest, g.dims[static_cast<size_t>(d)]);
      const double wires = longest > 2 ? 2.0 : 1.0;  // a ring of 2 has no wrap-around
      const int64_t cross_sections = g.domain / longest;  // rings along the longest dimension
      return wires * static_cast<double>(cross_sections) * b;
    }
  }
  return 0;
}

void CheckTopology(const SystemSpec& s, const std::string& path, const base::SourceLocation& where,
                   base::Diagnostics& diags) {
  const int64_t total = DeviceCount(s);
  int64_t inner = 1;
  for (size_t i = 0; i < s.network.size(); ++i) {
    const NetworkTier& t = s.network[i];
    const std::string at = path + ".network[" + std::to_string(i) + "]";
    const base::SourceLocation loc = t.where.line > 0 ? t.where : where;
    const int64_t domain = t.domain == 0 ? total : std::min(t.domain, total);
    const std::string kind = TopologyName(t.topology);
    std::array<int64_t, 3> dims{};
    int ndims = 0;
    if (t.topology == Topology::kTorus) {
      if (!ParseTorusDims(t.dims, dims, ndims)) {
        diags.Add(loc, at + ".dims", t.dims,
                  t.dims.empty() ? "a torus tier needs `dims`, e.g. 16x16x16"
                                 : "expected 1 to 3 positive integers joined by 'x', e.g. 16x16x16");
      } else if (dims[0] * dims[1] * dims[2] != domain) {
        diags.Add(loc, at + ".dims", t.dims,
                  "torus dimensions multiply to " + std::to_string(dims[0] * dims[1] * dims[2]) +
                      " but the tier spans " + std::to_string(domain) + " devices");
      }
    } else if (!t.dims.empty()) {
      diags.Add(loc, at + ".dims", t.dims, "`dims` applies only to topology torus (this tier is " +
                                               kind + ")");
    }
    if (t.topology == Topology::kRailOnly && i == 0)
      diags.Add(loc, at + ".topology", kind,
                "a rail-only tier needs a scale-up (HB-domain) tier inside it: a rail is the set of "
                "devices with the same local rank in their HB domain");
    if ((t.topology == Topology::kRailOnly || t.topology == Topology::kFatTree) && t.rails != 0) {
      if (i == 0)
        diags.Add(loc, at + ".rails", std::to_string(t.rails),
                  "rails need an HB-domain tier inside this one");
      else if (t.rails != inner)
        diags.Add(loc, at + ".rails", std::to_string(t.rails),
                  "a rail is the set of devices with the same local rank in their HB domain, so "
                  "rails must equal the devices of one domain of " +
                      s.network[i - 1].name + " (network[" + std::to_string(i - 1) + "]): " +
                      std::to_string(inner) + " (devices_per_node " +
                      std::to_string(s.devices_per_node) + ")");
    } else if (t.rails != 0) {
      diags.Add(loc, at + ".rails", std::to_string(t.rails),
                "`rails` applies only to topology fat-tree or rail-only (this tier is " + kind + ")");
    }
    const int64_t links = t.links > 0 ? t.links : DefaultLinks(t.topology, domain, ndims);
    if (t.topology == Topology::kFullMesh && domain > 1 && links < domain - 1)
      diags.Add(loc, at + ".links", std::to_string(links),
                "a full mesh of " + std::to_string(domain) + " devices needs at least " +
                    std::to_string(domain - 1) + " links per device (one to each other device)");
    if (t.topology == Topology::kTorus && ndims > 0 && links % (2 * ndims) != 0)
      diags.Add(loc, at + ".links", std::to_string(links),
                "a " + std::to_string(ndims) + "-D torus has 2 links per dimension per device: " +
                    "links must be a multiple of " + std::to_string(2 * ndims));
    if (t.radix > 0) {
      if (t.topology == Topology::kFatTree) {
        const int64_t need = domain * links;
        const int64_t cap = FatTreeCapacity(t.radix, static_cast<int>(t.levels), t.oversubscription);
        if (cap < need)
          diags.Add(loc, at + ".radix", std::to_string(t.radix),
                    "radix too small for the size: a " + std::to_string(t.levels) +
                        "-level fat-tree of " + std::to_string(t.radix) + "-port switches (" +
                        "oversubscription " + base::FormatNumber(t.oversubscription) +
                        ") connects at most " + std::to_string(cap) + " ports but this tier needs " +
                        std::to_string(need) + " (" + std::to_string(domain) + " devices x " +
                        std::to_string(links) + " links); raise radix or levels");
      } else if (t.topology == Topology::kRailOnly) {
        const int64_t need = std::max<int64_t>(1, domain / std::max<int64_t>(1, inner)) * links;
        const int64_t cap = FatTreeCapacity(t.radix, static_cast<int>(t.levels), 1.0);
        if (cap < need)
          diags.Add(loc, at + ".radix", std::to_string(t.radix),
                    "radix too small for the size: each rail connects " + std::to_string(need) +
                        " ports (" + std::to_string(domain / std::max<int64_t>(1, inner)) +
                        " HB domains x " + std::to_string(links) + " links) but " +
                        std::to_string(t.levels) + " level(s) of " + std::to_string(t.radix) +
                        "-port switches connect at most " + std::to_string(cap) +
                        "; raise radix or levels");
      } else if (t.topology == Topology::kSwitch) {
        if (t.radix < domain)
          diags.Add(loc, at + ".radix", std::to_string(t.radix),
                    "radix too small for the size: one switch plane must reach all " +
                        std::to_string(domain) + " devices of the domain");
      } else {
        diags.Add(loc, at + ".radix", std::to_string(t.radix),
                  "`radix` applies to switched topologies (switch, fat-tree, rail-only); this tier "
                  "is " + kind);
      }
    }
    if (t.topology == Topology::kFatTree && t.levels > 1 && t.radix > 0 &&
        LeafDownlinks(t.radix, t.oversubscription) >= t.radix)
      diags.Add(loc, at + ".oversubscription", base::FormatNumber(t.oversubscription),
                "leaves of " + std::to_string(t.radix) + " ports keep no uplink at this oversubscription");
    const bool switched = t.topology == Topology::kSwitch || t.topology == Topology::kFatTree ||
                          t.topology == Topology::kRailOnly;
    if (t.in_network_reduction && !switched)
      diags.Add(loc, at + ".in_network_reduction", "true",
                "in-network reduction needs switches (topology switch, fat-tree or rail-only); this "
                "tier is " + kind);
    if (t.algorithm == CollectiveAlgorithm::kInNetwork && !t.in_network_reduction)
      diags.Add(loc, at + ".algorithm", "in-network",
                "algorithm in-network needs in_network_reduction: true on this tier");
    inner = domain;
  }
}

}  // namespace orrery::hardware
