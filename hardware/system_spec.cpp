#include "hardware/system_spec.h"

#include "core/base/yaml_source.h"

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
                  "Host (CPU) memory per node, the offload target.")
        .Quantity("host_bandwidth", &SystemSpec::host_bandwidth, Dimension::kBandwidth, 0, 1e14,
                  "0 B/s", "Bandwidth from one device to host memory (PCIe), per direction.")
        .Quantity("price_per_device_hour", &SystemSpec::price_per_device_hour,
                  Dimension::kMoneyRate, 0, 1e6, "0 USD/h",
                  "Rental price of one device for one hour (0 = unknown).")
        .Real("pue", &SystemSpec::pue, 1, 5, "1.0",
              "Power usage effectiveness: facility power / IT power.");
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
        .Quantity("bandwidth", &NetworkTier::bandwidth, Dimension::kBandwidth, 0, 1e15, "",
                  "Bandwidth per device per direction.", true)
        .Quantity("latency", &NetworkTier::latency, Dimension::kTime, 0, 1, "0 s",
                  "Latency of one step of a collective algorithm (alpha).");
    return s;
  }();
  return schema;
}

const std::vector<std::string>& SystemSubsectionKeys() {
  static const std::vector<std::string> keys = {"device", "network"};
  return keys;
}

void ParseSystem(const YAML::Node& map, const std::string& path, const std::string& file,
                 SystemSpec& out, base::Diagnostics& diags) {
  SystemSchema().Parse(map, path, file, out, diags, SystemSubsectionKeys());
  if (!map.IsMap()) return;
  out.network.clear();
  const YAML::Node net = map["network"];
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
    NetworkTierSchema().Parse(net[i], at, file, tier, diags, {"efficiency"});
    if (net[i].IsMap() && net[i]["efficiency"]) {
      const YAML::Node e = net[i]["efficiency"];
      if (!e.IsSequence() || e.size() == 0) {
        diags.Add(base::LocationOf(e, file), at + ".efficiency", "",
                  "expected a sequence of [message size, efficiency] pairs");
      } else {
        for (size_t k = 0; k < e.size(); ++k) {
          const YAML::Node p = e[k];
          const std::string pk = at + ".efficiency[" + std::to_string(k) + "]";
          if (!p.IsSequence() || p.size() != 2 || !p[0].IsScalar() || !p[1].IsScalar()) {
            diags.Add(base::LocationOf(p, file), pk, "",
                      "expected a pair [message size, efficiency], e.g. [64 MiB, 0.8]");
            continue;
          }
          const auto x = base::ParseQuantity(p[0].Scalar(), Dimension::kBytes);
          const auto y = base::ParseQuantity(p[1].Scalar(), Dimension::kDimensionless);
          if (!x.value || *x.value <= 0 ||
              (!tier.efficiency.x.empty() && *x.value <= tier.efficiency.x.back())) {
            diags.Add(base::LocationOf(p[0], file), pk + "[0]", p[0].Scalar(),
                      x.value ? "sizes must be > 0 and increase" : x.error, x.hint);
            continue;
          }
          if (!y.value || !(*y.value > 0 && *y.value <= 1)) {
            diags.Add(base::LocationOf(p[1], file), pk + "[1]", p[1].Scalar(),
                      "efficiency must be a number in (0, 1]");
            continue;
          }
          tier.efficiency.x.push_back(*x.value);
          tier.efficiency.y.push_back(*y.value);
        }
      }
    }
    out.network.push_back(std::move(tier));
  }
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
}

}  // namespace orrery::hardware
