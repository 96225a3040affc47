#include "hardware/system_spec.h"

#include "core/base/yaml_source.h"
#include "hardware/curve_yaml.h"
#include "hardware/topology.h"

namespace orrery::hardware {

using base::Dimension;

const base::Schema<SystemSpec>& SystemSchema() {
  static const base::Schema<SystemSpec> schema = [] {
    base::Schema<SystemSpec> s("system", "Devices, nodes, memory tiers and network tiers.");
    s.String("name", &SystemSpec::name, "", "Name shown in reports.")
        .String("citation", &SystemSpec::citation, "", "Sources of the numbers.")
        .Int("devices_per_node", &SystemSpec::devices_per_node, 1, 1e6, "8", "Devices in one node.")
        .Int("nodes", &SystemSpec::nodes, 1, 1e7, "1", "Nodes in the system.")
        .Quantity("host_memory", &SystemSpec::host_memory, Dimension::kBytes, 0, 1e16, "0 B",
                  "Host (CPU) memory per node, the offload target: optimizer states offloaded "
                  "(training.offload_optimizer) by the node's devices must fit in it (0 = not "
                  "checked).")
        .Quantity("host_bandwidth", &SystemSpec::host_bandwidth, Dimension::kBandwidth, 0, 1e14,
                  "0 B/s", "Bandwidth from one device to host memory (PCIe), per direction.")
        .Quantity("price_per_device_hour", &SystemSpec::price_per_device_hour,
                  Dimension::kMoneyRate, 0, 1e6, "0 USD/h",
                  "Rental price of one device for one hour (0 = unknown).")
        .Real("pue", &SystemSpec::pue, 1, 5, "1.0",
              "Power usage effectiveness: facility power / IT power.")
        .Real("grid_co2_kg_per_kwh", &SystemSpec::grid_co2_kg_per_kwh, 0, 5, "0",
              "Carbon intensity of the electricity, kg CO2e per kWh (0 = not given; e.g. 0.37 "
              "for the US average of 2022, EPA eGRID2022); sets the training run's carbon.")
        .Quantity("pool_bandwidth", &SystemSpec::pool_bandwidth, Dimension::kBandwidth, 0, 1e15,
                  "0 B/s",
                  "Bandwidth per device per direction between two device pools (`pools`; "
                  "heterogeneous clusters, docs/heterogeneous.md); 0 = the outermost network "
                  "tier's bandwidth.");
    return s;
  }();
  return schema;
}

const base::Schema<NetworkTier>& NetworkTierSchema() {
  static const base::Schema<NetworkTier> schema = [] {
    base::Schema<NetworkTier> s("network tier", "One level of the network, innermost first.");
    s.String("name", &NetworkTier::name, "", "Name (nvlink, infiniband, ...).")
        .Int("domain", &NetworkTier::domain, 0, 1e9, "0",
             "Devices connected any-to-any at this tier; 0 = every device of the system.")
        .Quantity("bandwidth", &NetworkTier::bandwidth, Dimension::kBandwidth, 1e6, 1e15, "",
                  "Bandwidth per device per direction (at least 1 MB/s: below that a "
                  "collective's time overflows).")
        .Quantity("latency", &NetworkTier::latency, Dimension::kTime, 0, 1, "0 s",
                  "Latency of one step of a collective algorithm (alpha).")
        .Enum("topology", &NetworkTier::topology,
              {{"switch", Topology::kSwitch},
               {"full-mesh", Topology::kFullMesh},
               {"ring", Topology::kRing},
               {"fat-tree", Topology::kFatTree},
               {"rail-only", Topology::kRailOnly},
               {"torus", Topology::kTorus}},
              "switch",
              "How one domain is wired: switch (any-to-any, e.g. NVSwitch or one flat switch), "
              "full-mesh, ring, fat-tree (Clos; rail-optimised when `rails` is set), rail-only "
              "(one switch network per rail, no spine; Wang et al. 2023), torus (`dims`).")
        .Int("links", &NetworkTier::links, 0, 1e5, "0",
             "Links (ports) per device into this tier; `bandwidth` is their sum. 0 = the "
             "topology's own: 1 for switch, fat-tree, rail-only; 2 for ring; 2 per dimension "
             "for torus; domain-1 for full-mesh.")
        .Quantity("hop_latency", &NetworkTier::hop_latency, Dimension::kTime, 0, 1, "0 s",
                  "Latency of one link traversal (wire plus switch port); a message pays it "
                  "once per hop of its route.")
        .Quantity("base_latency", &NetworkTier::base_latency, Dimension::kTime, 0, 1, "0 s",
                  "Fixed cost of one collective call (launch and synchronisation; NCCL's "
                  "baseLat); sets the small-message floor with `latency`.")
        .Int("radix", &NetworkTier::radix, 0, 1e5, "0",
             "Ports per switch (fat-tree, rail-only, switch); 0 = switches not modelled "
             "(no part count, no size check).")
        .Int("levels", &NetworkTier::levels, 1, 3, "2",
             "Fat-tree levels (1-3): the most the fabric may use; it is wired with the fewest (from 2) "
             "that connect its devices. For rail-only, the most levels one rail's own Clos may use.")
        .Real("oversubscription", &NetworkTier::oversubscription, 1, 64, "1",
              "Fat-tree leaf downlinks per uplink (1 = full bisection); traffic that leaves a "
              "leaf gets bandwidth / oversubscription.")
        .Int("rails", &NetworkTier::rails, 0, 1e6, "0",
             "Rails of a rail-optimised fat-tree or a rail-only tier: devices of one domain of "
             "the tier inside (the HB domain); 0 = that size. Must equal it when given.")
        .String("dims", &NetworkTier::dims, "",
                "Torus dimensions, e.g. 16x16x16 (1 to 3 numbers joined by x); their product "
                "must equal the tier's domain.")
        .Bool("in_network_reduction", &NetworkTier::in_network_reduction, "false",
              "The switches reduce in the network (NVLink SHARP / InfiniBand SHARP): an "
              "all-reduce sends S up and receives S down once.")
        .Enum("algorithm", &NetworkTier::algorithm,
              {{"auto", CollectiveAlgorithm::kAuto},
               {"ring", CollectiveAlgorithm::kRing},
               {"tree", CollectiveAlgorithm::kTree},
               {"direct", CollectiveAlgorithm::kDirect},
               {"in-network", CollectiveAlgorithm::kInNetwork}},
              "auto",
              "Collective algorithm on this tier: auto (the fastest it supports, as NCCL's "
              "tuner picks), ring, tree (double binary tree), direct (pairwise / one-shot), "
              "in-network (needs in_network_reduction).");
    return s;
  }();
  return schema;
}

const base::Schema<DevicePool>& DevicePoolSchema() {
  static const base::Schema<DevicePool> schema = [] {
    base::Schema<DevicePool> s(
        "device pool",
        "A further pool of nodes of another device type (heterogeneous cluster; "
        "docs/heterogeneous.md). It shares the system's network, PUE and reliability; "
        "`device` (a preset name or a device map) is required.");
    s.String("name", &DevicePool::name, "",
             "Name shown in reports; empty = the device preset's name (or the device's).")
        .Int("devices_per_node", &DevicePool::devices_per_node, 0, 1e6, "0",
             "Devices in one node of the pool; 0 = the system's devices_per_node.")
        .Int("nodes", &DevicePool::nodes, 1, 1e7, "1", "Nodes in the pool.")
        .Quantity("price_per_device_hour", &DevicePool::price_per_device_hour,
                  Dimension::kMoneyRate, 0, 1e6, "0 USD/h",
                  "Rental price of one device of the pool for one hour; 0 = the system's.");
    return s;
  }();
  return schema;
}

const base::Schema<HostSpec>& HostSchema() {
  static const base::Schema<HostSpec> schema = [] {
    base::Schema<HostSpec> s("host", "The host CPU that drives the devices.");
    s.String("cpu", &HostSpec::cpu, "",
             "The host CPU's name (e.g. Intel Xeon Platinum 8480C); empty = not stated.")
        .Quantity("op_launch_time", &HostSpec::op_launch_time, Dimension::kTime, 0, 1e-3, "0 s",
                  "Host CPU time to issue one eager PyTorch operator that launches one kernel "
                  "(Python binding, autograd, ATen dispatcher, cudaLaunchKernel), measured on "
                  "this CPU; 0 = not measured. TransformerEngine issue 2053 measures "
                  "torch.nn.Linear's forward at 13.48 us on DGX H100's Xeon Platinum 8480C, "
                  "37.08 us on GB200's Grace and 33.17 us on GH200's. At most 1 ms. `orrery "
                  "validate` prices dropless MoE rows' host wait with it; an estimate reads "
                  "training.host_kernel_launch.")
        .String("op_launch_source", &HostSpec::op_launch_source, "",
                "Where op_launch_time was measured (shown in validation's assumptions).");
    return s;
  }();
  return schema;
}

const std::vector<std::string>& NetworkTierCurveKeys() {
  static const std::vector<std::string> keys = {"efficiency", "in_network_efficiency"};
  return keys;
}

const char* TopologyName(Topology t) {
  switch (t) {
    case Topology::kSwitch: return "switch";
    case Topology::kFullMesh: return "full-mesh";
    case Topology::kRing: return "ring";
    case Topology::kFatTree: return "fat-tree";
    case Topology::kRailOnly: return "rail-only";
    case Topology::kTorus: return "torus";
  }
  return "?";
}

const char* CollectiveAlgorithmName(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::kAuto: return "auto";
    case CollectiveAlgorithm::kRing: return "ring";
    case CollectiveAlgorithm::kTree: return "tree";
    case CollectiveAlgorithm::kDirect: return "direct";
    case CollectiveAlgorithm::kInNetwork: return "in-network";
  }
  return "?";
}

namespace {

// A curve of [message size, efficiency] pairs; an absent node leaves `out` empty.
void ParseTierCurve(const YAML::Node& e, const std::string& at, const std::string& file,
                    Curve& out, base::Diagnostics& diags) {
  if (!e) return;
  ParseEfficiencyCurve(e, at, file, Dimension::kBytes, "message size", "[64 MiB, 0.8]", out, diags);
}

}  // namespace

const std::vector<std::string>& SystemSubsectionKeys() {
  static const std::vector<std::string> keys = {"device", "network", "reliability", "storage",
                                                "pools", "host"};
  return keys;
}

void ParseSystem(const YAML::Node& map, const std::string& path, const std::string& file,
                 SystemSpec& out, base::Diagnostics& diags,
                 const std::vector<std::string>& extra_keys, bool over_base) {
  std::vector<std::string> elsewhere = SystemSubsectionKeys();
  elsewhere.insert(elsewhere.end(), extra_keys.begin(), extra_keys.end());
  SystemSchema().Parse(map, path, file, out, diags, elsewhere, over_base);
  if (!map.IsMap()) return;
  if (!over_base) {
    out.reliability = ReliabilitySpec{};
    out.storage = StorageSpec{};
    out.host = HostSpec{};
  }
  if (const YAML::Node rel = map["reliability"])
    ReliabilitySchema().Parse(rel, path + ".reliability", file, out.reliability, diags, {}, over_base);
  if (const YAML::Node sto = map["storage"])
    StorageSchema().Parse(sto, path + ".storage", file, out.storage, diags, {}, over_base);
  if (const YAML::Node host = map["host"])
    HostSchema().Parse(host, path + ".host", file, out.host, diags, {}, over_base);
  if (!over_base || map["pools"]) out.pools.clear();
  if (const YAML::Node pools = map["pools"]) {
    if (!pools.IsSequence()) {
      diags.Add(base::LocationOf(pools, file), path + ".pools", "",
                std::string("expected a sequence of device pools, got a ") +
                    base::NodeKindName(pools));
    } else {
      // Each pool's `device` is the caller's (a preset name or a map), as the system's own.
      for (size_t i = 0; i < pools.size(); ++i) {
        DevicePool pool;
        DevicePoolSchema().Parse(pools[i], path + ".pools[" + std::to_string(i) + "]", file, pool,
                                 diags, {"device"});
        out.pools.push_back(std::move(pool));
      }
    }
  }
  const YAML::Node net = map["network"];
  if (over_base && !net) return;  // the base's tiers
  out.network.clear();
  if (!net) {
    diags.Add(base::LocationOf(map, file), path + ".network", "",
              "required key is missing (a sequence of network tiers, innermost first)");
    return;
  }
  if (!net.IsSequence() || net.size() == 0) {
    diags.Add(base::LocationOf(net, file), path + ".network", "",
              std::string("expected a non-empty sequence of network tiers, got a ") +
                  base::NodeKindName(net));
    return;
  }
  for (size_t i = 0; i < net.size(); ++i) {
    const std::string at = path + ".network[" + std::to_string(i) + "]";
    NetworkTier tier;
    NetworkTierSchema().Parse(net[i], at, file, tier, diags, NetworkTierCurveKeys());
    tier.where = base::LocationOf(net[i], file);
    if (net[i].IsMap()) {
      ParseTierCurve(net[i]["efficiency"], at + ".efficiency", file, tier.efficiency, diags);
      ParseTierCurve(net[i]["in_network_efficiency"], at + ".in_network_efficiency", file,
                     tier.in_network_efficiency, diags);
    }
    out.network.push_back(std::move(tier));
  }
}

void RefusePools(const SystemSpec& s, const std::string& what, const base::SourceLocation& where,
                 base::Diagnostics& diags) {
  if (s.pools.empty()) return;
  diags.Add(where, "system.pools",
            std::to_string(s.pools.size()) + (s.pools.size() == 1 ? " pool" : " pools") + " beside the system's own devices",
            what + " does not model device pools; `orrery estimate` (closed form) and `orrery search` "
                   "do (docs/heterogeneous.md)");
}

void CheckSystem(const SystemSpec& s, const std::string& path, const base::SourceLocation& where,
                 base::Diagnostics& diags) {
  const int64_t total = DeviceCount(s);
  int64_t prev = 1;
  for (size_t i = 0; i < s.network.size(); ++i) {
    const std::string at = path + ".network[" + std::to_string(i) + "].domain";
    const int64_t d = s.network[i].domain == 0 ? total : s.network[i].domain;
    if (d < prev || d % prev != 0)
      diags.Add(where, at, std::to_string(d),
                "each tier's domain must be a multiple of the tier inside it (" +
                    std::to_string(prev) + ")");
    prev = d;
  }
  if (!s.network.empty() && s.network.back().domain != 0 && s.network.back().domain < total)
    diags.Add(where, path + ".network[" + std::to_string(s.network.size() - 1) + "].domain",
              std::to_string(s.network.back().domain),
              "the outermost tier must reach every device (" + std::to_string(total) +
                  "); use 0 for 'all'");
  CheckTopology(s, path, where, diags);
}

}  // namespace orrery::hardware
