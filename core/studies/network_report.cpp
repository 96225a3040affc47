#include "core/studies/network_report.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/base/yaml_source.h"
#include "core/estimate/scenario.h"

namespace orrery::studies {

namespace fs = std::filesystem;
using hardware::Collective;

namespace {

// SYSTEM is a file holding `system:` or a system preset name.
bool LoadSystemArg(const std::string& arg, const engine::PresetStore& store,
                   hardware::SystemSpec& out, base::Diagnostics& d) {
  const size_t before = d.size();
  std::error_code ec;
  if (fs::exists(arg, ec)) {
    const auto root = base::LoadYamlFile(arg, d);
    if (!root) return false;
    if (!root->IsMap() || !(*root)["system"]) {
      d.Add(base::LocationOf(*root, arg), "system", "",
            "expected a system document (top-level key `system:`); `orrery network` takes a "
            "system, not a " + std::string(root->IsMap() && root->begin() != root->end() &&
                                                   root->begin()->first.IsScalar()
                                               ? root->begin()->first.Scalar()
                                               : "document"));
      return false;
    }
    engine::LoadSystemMap((*root)["system"], "system", arg, store, out, d);
    return d.size() == before;
  }
  return engine::LoadSystemPreset(arg, store, {"<command line>", 0, 0}, "system", out, d);
}

// system.X=..., system.network[i].X=..., prices.X=...
bool ApplySet(hardware::SystemSpec& sys, hardware::PriceSpec& prices, const std::string& assignment,
              const base::SourceLocation& where, base::Diagnostics& d) {
  const size_t eq = assignment.find('=');
  const std::string path = eq == std::string::npos ? assignment : assignment.substr(0, eq);
  if (path.rfind("prices.", 0) == 0 && eq != std::string::npos) {
    return hardware::PriceSchema().SetText(prices, path.substr(7), assignment.substr(eq + 1), where,
                                           path, d);
  }
  if (path.rfind("system.", 0) != 0) {
    d.Add(where, path, "",
          "orrery network takes system.* and prices.* paths (e.g. system.nodes=512, "
          "system.network[1].topology=rail-only, prices.switch_price=40 kUSD)");
    return false;
  }
  engine::Scenario s;
  s.system = sys;
  if (!engine::ApplyOverride(s, assignment, d, &where)) return false;
  sys = s.system;
  return true;
}

}  // namespace

bool LoadPrices(const std::string& arg, const std::string& config_dir, hardware::PriceSpec& out,
                base::Diagnostics& d) {
  std::error_code ec;
  const std::string path = fs::exists(arg, ec) ? arg : config_dir + "/prices/" + arg + ".yaml";
  if (!fs::exists(path, ec)) {
    d.Add({"<command line>", 0, 0}, "--prices", arg,
          "no such file, and no price table of that name under " + config_dir + "/prices/");
    return false;
  }
  return hardware::LoadPricesFile(path, out, d);
}

// EP is carved out of cp x dp, its members consecutive in whichever is
// innermost (the placement of core/estimate/training_estimator.cpp).
bool GroupFromPlan(const std::string& order, int64_t devices, int64_t tp, int64_t cp, int64_t ep,
                   int64_t dp, int64_t pp, const std::string& group, int64_t& size, int64_t& stride,
                   std::string& error) {
  if (dp == 0) dp = devices / std::max<int64_t>(1, tp * cp * pp);
  if (tp * cp * pp * dp != devices) {
    error = "tp*cp*pp*dp = " + std::to_string(tp * cp * pp * dp) + " but the system has " +
            std::to_string(devices) + " devices";
    return false;
  }
  int64_t s = 1, tp_s = 0, cp_s = 0, dp_s = 0, pp_s = 0, ep_s = 0;
  std::stringstream in(order);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name == "tp") { tp_s = s; s *= tp; }
    else if (name == "cp") { cp_s = s; if (ep_s == 0) ep_s = s; s *= cp; }
    else if (name == "dp") { dp_s = s; if (ep_s == 0) ep_s = s; s *= dp; }
    else if (name == "pp") { pp_s = s; s *= pp; }
    else if (name == "ep") continue;
    else {
      error = "unknown group '" + name + "' in --order (expected tp, cp, ep, dp, pp)";
      return false;
    }
  }
  if (tp_s == 0 || cp_s == 0 || dp_s == 0 || pp_s == 0) {
    error = "--order must name tp, cp, dp and pp once each (e.g. tp,cp,ep,dp,pp)";
    return false;
  }
  if (group == "tp") { size = tp; stride = tp_s; }
  else if (group == "cp") { size = cp; stride = cp_s; }
  else if (group == "dp") { size = dp; stride = dp_s; }
  else if (group == "pp") { size = pp; stride = pp_s; }
  else if (group == "ep") { size = ep; stride = ep_s; }
  else {
    error = "unknown --group '" + group + "' (expected tp, cp, ep, dp or pp)";
    return false;
  }
  return true;
}

bool ParseCollective(const std::string& text, Collective& c, std::string& hint) {
  static const std::vector<std::pair<std::string, Collective>> names = {
      {"all-reduce", Collective::kAllReduce},     {"reduce-scatter", Collective::kReduceScatter},
      {"all-gather", Collective::kAllGather},     {"all-to-all", Collective::kAllToAll},
      {"broadcast", Collective::kBroadcast},      {"send-recv", Collective::kSendRecv},
      {"p2p", Collective::kSendRecv}};
  std::vector<std::string> all;
  for (const auto& [n, v] : names) {
    if (n == text) {
      c = v;
      return true;
    }
    all.push_back(n);
  }
  hint = base::DidYouMean(text, all);
  return false;
}

bool BuildNetworkReport(const NetworkQuery& q, NetworkReport& out, base::Diagnostics& d,
                        std::string& error) {
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  hardware::SystemSpec sys;
  hardware::PriceSpec prices;
  if (q.loaded) sys = *q.loaded;
  else LoadSystemArg(q.system, store, sys, d);
  LoadPrices(q.prices, store.dir(), prices, d);
  if (d.ok()) {
    for (const auto& s : q.sets) ApplySet(sys, prices, s, {"--set " + s, 0, 0}, d);
    if (d.ok() && !q.sets.empty()) hardware::CheckSystem(sys, "system", {"--set", 0, 0}, d);
  }
  if (!d.ok()) return false;
  const hardware::AlphaBetaNetwork net(sys);
  out.system = sys.name;
  out.device = sys.device.name;
  out.prices = prices.name;
  out.devices = hardware::DeviceCount(sys);
  out.nodes = sys.nodes;
  out.devices_per_node = sys.devices_per_node;
  out.cost = hardware::CountParts(sys, prices);
  out.tiers.clear();
  for (int i = 0; i < net.tiers(); ++i) {
    const auto& t = sys.network[static_cast<size_t>(i)];
    const hardware::TierGeometry& g = net.geometry(i);
    TierRow r;
    r.index = i;
    r.name = t.name;
    r.topology = hardware::TopologyName(t.topology);
    r.domain = net.domain(i);
    r.links_per_device = g.links;
    r.link_bandwidth = g.link_bandwidth;
    r.bandwidth = net.bandwidth(i);
    r.latency = t.latency;
    r.hop_latency = t.hop_latency;
    r.base_latency = t.base_latency;
    r.diameter_hops = hardware::Diameter(g);
    r.geometry_levels = g.levels;
    r.in_network_reduction = t.in_network_reduction;
    r.parts = out.cost.tiers[static_cast<size_t>(i)];
    out.tiers.push_back(std::move(r));
  }
  out.has_collective = q.has_collective;
  if (!q.has_collective) return true;

  const CollectiveQuery& c = q.collective;
  int64_t size = c.size, stride = c.stride;
  if (!c.group.empty() &&
      !GroupFromPlan(c.order, out.devices, c.tp, c.cp, c.ep, c.dp, c.pp, c.group, size, stride, error))
    return false;
  if (size < 1 || stride < 1 || (size - 1) * stride >= out.devices) {
    error = "a group of " + std::to_string(size) + " members " + std::to_string(stride) +
            " apart needs " + std::to_string((size - 1) * stride + 1) + " devices; the system has " +
            std::to_string(out.devices);
    return false;
  }
  const hardware::GroupPlacement place = net.Place(size, stride);
  const hardware::CollectiveReport rep = net.Explain(c.collective, c.bytes, place);
  CollectiveRow& row = out.collective;
  row.collective = hardware::CollectiveName(c.collective);
  row.bytes = c.bytes;
  row.group = c.group;
  row.members = place.size;
  row.stride = place.stride;
  row.time_s = rep.time_s;
  row.base_latency_s = rep.base_latency_s;
  row.algbw = rep.algbw;
  row.busbw = rep.busbw;
  row.top_tier = rep.top_tier >= 0 ? sys.network[static_cast<size_t>(rep.top_tier)].name : "";
  row.top_tier_rail_only =
      rep.top_tier > 0 && net.geometry(rep.top_tier).kind == hardware::Topology::kRailOnly;
  row.rail_aligned = rep.rail_aligned;
  row.forwarded = rep.forwarded;
  row.forwarded_hb_bytes = rep.forwarded_hb_bytes;
  row.algorithms.clear();
  for (int i = 0; i < net.tiers(); ++i)
    if (rep.algorithm[static_cast<size_t>(i)] != hardware::CollectiveAlgorithm::kAuto)
      row.algorithms.emplace_back(sys.network[static_cast<size_t>(i)].name,
                                  hardware::CollectiveAlgorithmName(rep.algorithm[static_cast<size_t>(i)]));
  return true;
}

}  // namespace orrery::studies
