#include "hardware/cost_model.h"

#include <algorithm>

#include "core/base/yaml_source.h"
#include "hardware/topology.h"

namespace orrery::hardware {

using base::Dimension;

const base::Schema<PriceSpec>& PriceSchema() {
  static const base::Schema<PriceSpec> schema = [] {
    base::Schema<PriceSpec> s(
        "prices",
        "Unit prices and powers of network parts and devices (configs/prices/default.yaml is the "
        "cited default table); `orrery network` counts the parts each topology needs.");
    s.String("name", &PriceSpec::name, "", "Name shown in reports.")
        .String("citation", &PriceSpec::citation, "", "Sources of the numbers.")
        .Quantity("gpu_price", &PriceSpec::gpu_price, Dimension::kMoney, 0, 1e9, "0 USD",
                  "Price of one device when its device preset has no `price`.")
        .Quantity("switch_price", &PriceSpec::switch_price, Dimension::kMoney, 0, 1e9, "0 USD",
                  "Price of one switch box of `switch_radix` ports at `switch_port_speed`; other "
                  "radices and speeds scale per port.")
        .Quantity("switch_power", &PriceSpec::switch_power, Dimension::kPower, 0, 1e6, "0 W",
                  "Power of that switch box without transceivers; scales like the price.")
        .Int("switch_radix", &PriceSpec::switch_radix, 1, 1e5, "64", "Ports of the priced switch box.")
        .Quantity("switch_port_speed", &PriceSpec::switch_port_speed, Dimension::kBandwidth, 0,
                  1e15, "0 B/s", "Port speed of the priced switch box (0 = do not scale by speed).")
        .Quantity("transceiver_price", &PriceSpec::transceiver_price, Dimension::kMoney, 0, 1e7,
                  "0 USD", "Price of one transceiver (one end of an optical link).")
        .Quantity("transceiver_power", &PriceSpec::transceiver_power, Dimension::kPower, 0, 1e4,
                  "0 W", "Power of one transceiver.")
        .Quantity("transceiver_speed", &PriceSpec::transceiver_speed, Dimension::kBandwidth, 0,
                  1e15, "0 B/s", "Speed of the priced transceiver (0 = do not scale by speed).")
        .Quantity("cable_price", &PriceSpec::cable_price, Dimension::kMoney, 0, 1e7, "0 USD",
                  "Price of one cable (one per link).")
        .Quantity("nic_price", &PriceSpec::nic_price, Dimension::kMoney, 0, 1e7, "0 USD",
                  "Price of one NIC port.")
        .Quantity("nic_power", &PriceSpec::nic_power, Dimension::kPower, 0, 1e4, "0 W",
                  "Power of one NIC port.")
        .Quantity("nic_speed", &PriceSpec::nic_speed, Dimension::kBandwidth, 0, 1e15, "0 B/s",
                  "Speed of the priced NIC port (0 = do not scale by speed).")
        .Quantity("hb_switch_price", &PriceSpec::hb_switch_price, Dimension::kMoney, 0, 1e9,
                  "0 USD",
                  "Price of one scale-up switch plane (NVSwitch); 0 = part of the server price.")
        .Quantity("hb_switch_power", &PriceSpec::hb_switch_power, Dimension::kPower, 0, 1e6, "0 W",
                  "Power of one scale-up switch plane.");
    return s;
  }();
  return schema;
}

void ParsePrices(const YAML::Node& map, const std::string& path, const std::string& file,
                 PriceSpec& out, base::Diagnostics& diags) {
  PriceSchema().Parse(map, path, file, out, diags);
}

bool LoadPricesFile(const std::string& file, PriceSpec& out, base::Diagnostics& diags) {
  const size_t before = diags.size();
  const auto root = base::LoadYamlFile(file, diags);
  if (!root) return false;
  if (!root->IsMap() || !(*root)["prices"]) {
    diags.Add(base::LocationOf(*root, file), "prices", "",
              "expected a document with the top-level key `prices:`");
    return false;
  }
  ParsePrices((*root)["prices"], "prices", file, out, diags);
  return diags.size() == before;
}

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

double Scale(double speed, double reference) { return reference > 0 && speed > 0 ? speed / reference : 1.0; }

// Switches and switch-to-switch links of a Clos holding `endpoints` ports.
struct Clos {
  int64_t switches = 0;
  int64_t inner_links = 0;
  int64_t levels = 0;
};

Clos CountClos(int64_t endpoints, int64_t radix, int levels, double oversubscription) {
  Clos c;
  if (radix <= 0 || endpoints <= 0) return c;
  c.levels = levels;
  if (levels <= 1) {
    c.switches = CeilDiv(endpoints, radix);
    return c;
  }
  const int64_t d = LeafDownlinks(radix, oversubscription);
  const int64_t u = radix - d;
  const int64_t l1 = CeilDiv(endpoints, d);
  if (levels == 2) {
    const int64_t l2 = CeilDiv(l1 * u, radix);
    c.switches = l1 + l2;
    c.inner_links = l1 * u;
    return c;
  }
  const int64_t half = radix / 2;
  const int64_t l2 = CeilDiv(l1 * u, half);
  const int64_t l3 = CeilDiv(l2 * half, radix);
  c.switches = l1 + l2 + l3;
  c.inner_links = l1 * u + l2 * half;
  return c;
}

}  // namespace

SystemCost CountParts(const SystemSpec& s, const PriceSpec& p) {
  SystemCost out;
  const int64_t n = DeviceCount(s);
  out.devices = n;
  const double device_price = s.device.price > 0 ? s.device.price : p.gpu_price;
  out.device_cost = static_cast<double>(n) * device_price;
  out.device_power = static_cast<double>(n) * s.device.tdp;
  int64_t inner = 1;
  for (size_t i = 0; i < s.network.size(); ++i) {
    const NetworkTier& t = s.network[i];
    const int64_t domain = t.domain == 0 ? n : std::min(t.domain, n);
    const TierGeometry g = MakeGeometry(t, domain, inner, n);
    const int64_t domains = std::max<int64_t>(1, n / std::max<int64_t>(1, domain));
    TierParts tp;
    tp.name = t.name;
    tp.topology = t.topology;
    tp.scale_out = i > 0;
    tp.port_speed = g.link_bandwidth;
    tp.bisection = BisectionBandwidth(t, g);
    const int64_t endpoints = n * g.links;
    switch (t.topology) {
      case Topology::kSwitch:
        if (t.radix > 0) {
          tp.switches = CeilDiv(domain * g.links, t.radix) * domains;
          tp.switch_levels = 1;
        }
        tp.links = endpoints;
        break;
      case Topology::kFullMesh:
      case Topology::kRing:
      case Topology::kTorus:
        tp.links = endpoints / 2;
        break;
      case Topology::kFatTree: {
        const Clos c = CountClos(endpoints, t.radix, g.levels, t.oversubscription);  // the levels wired (MakeGeometry)
        tp.switches = c.switches;
        tp.switch_levels = c.levels;
        tp.links = endpoints + c.inner_links;
        break;
      }
      case Topology::kRailOnly: {
        const int64_t rails = std::max<int64_t>(1, g.inner);
        const int64_t per_rail = std::max<int64_t>(1, n / rails) * g.links;
        const Clos c = CountClos(per_rail, t.radix, g.levels, 1.0);
        // Rails smaller than a switch share boxes (one partition per rail).
        tp.switches = c.levels == 1 ? CeilDiv(rails * per_rail, t.radix) : c.switches * rails;
        tp.switch_levels = c.levels;
        tp.links = endpoints + c.inner_links * rails;
        break;
      }
    }
    // A scale-out tier above another is the upper layer of the same fabric
    // (Meta's pods of 3,072 GPUs joined by aggregation switches, configs/
    // systems/meta-roce-24k.yaml): it has no NICs or device cables of its
    // own. Its links are the uplinks of the domains below, their devices'
    // links over the tier's oversubscription, in place of the device links
    // counted above, and its own switches' links.
    const bool stacked = tp.scale_out && i > 1;
    if (stacked)
      tp.links += static_cast<int64_t>(static_cast<double>(endpoints) / std::max(1.0, t.oversubscription)) - endpoints;
    const double speed = g.link_bandwidth;
    if (tp.scale_out) {
      tp.nic_ports = stacked ? 0 : endpoints;
      tp.transceivers = 2 * tp.links;
      const double per_switch = static_cast<double>(t.radix) / static_cast<double>(p.switch_radix) *
                                Scale(speed, p.switch_port_speed);
      tp.switch_cost = static_cast<double>(tp.switches) * p.switch_price * per_switch;
      tp.switch_power = static_cast<double>(tp.switches) * p.switch_power * per_switch;
      tp.transceiver_cost = static_cast<double>(tp.transceivers) * p.transceiver_price * Scale(speed, p.transceiver_speed);
      tp.transceiver_power = static_cast<double>(tp.transceivers) * p.transceiver_power * Scale(speed, p.transceiver_speed);
      tp.cable_cost = static_cast<double>(tp.links) * p.cable_price;
      tp.nic_cost = static_cast<double>(tp.nic_ports) * p.nic_price * Scale(speed, p.nic_speed);
      tp.nic_power = static_cast<double>(tp.nic_ports) * p.nic_power * Scale(speed, p.nic_speed);
      out.scale_out_cost += tp.cost();
      out.scale_out_power += tp.power();
      out.fabric_cost += tp.cost() - tp.nic_cost;
      out.fabric_power += tp.power() - tp.nic_power;
    } else {
      tp.switch_cost = static_cast<double>(tp.switches) * p.hb_switch_price;
      tp.switch_power = static_cast<double>(tp.switches) * p.hb_switch_power;
    }
    out.network_cost += tp.cost();
    out.network_power += tp.power();
    out.tiers.push_back(std::move(tp));
    inner = domain;
  }
  return out;
}

}  // namespace orrery::hardware
