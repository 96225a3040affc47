// `orrery network`: topology, parts, cost, power, one collective; and the
// rail-only study (`orrery network study FILE`).

#include "cli/network_command.h"

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "cli/cli_common.h"
#include "core/base/yaml_source.h"
#include "core/estimate/scenario.h"
#include "core/estimate/training_estimator.h"
#include "hardware/cost_model.h"
#include "hardware/network.h"
#include "parallelism/plan_spec.h"

namespace orrery::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;
using base::Dimension;
using base::FormatQuantity;
using hardware::Collective;

namespace {

// ---------------------------------------------------------------------------
// Loading

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

// PRICES is a file or a name under configs/prices/.
std::string PricesPath(const std::string& arg, const engine::PresetStore& store) {
  std::error_code ec;
  if (fs::exists(arg, ec)) return arg;
  return store.dir() + "/prices/" + arg + ".yaml";
}

bool LoadPrices(const std::string& arg, const engine::PresetStore& store, hardware::PriceSpec& out,
                base::Diagnostics& d) {
  const std::string path = PricesPath(arg, store);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    d.Add({"<command line>", 0, 0}, "--prices", arg,
          "no such file, and no price table of that name under " + store.dir() + "/prices/");
    return false;
  }
  return hardware::LoadPricesFile(path, out, d);
}

// --set system.X=..., system.network[i].X=..., prices.X=...
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

// ---------------------------------------------------------------------------
// Groups from a plan

// Size and stride of one parallel group, from the degrees and the group
// order (innermost first), as the training estimator places them: EP is
// carved out of cp x dp, its members consecutive in whichever is innermost.
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

// ---------------------------------------------------------------------------
// Output

std::string Money(double usd) {
  std::ostringstream os;
  if (usd >= 1e6) os << std::fixed << std::setprecision(2) << usd / 1e6 << " MUSD";
  else if (usd >= 1e3) os << std::fixed << std::setprecision(1) << usd / 1e3 << " kUSD";
  else os << std::fixed << std::setprecision(0) << usd << " USD";
  return os.str();
}

std::string Percent(double fraction) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << 100 * fraction << " %";
  return os.str();
}

void PrintTable(std::ostream& out, const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w(header.size());
  for (size_t c = 0; c < header.size(); ++c) w[c] = header[c].size();
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], r[c].size());
  auto line = [&](const std::vector<std::string>& r) {
    for (size_t c = 0; c < r.size(); ++c) {
      out << r[c];
      if (c + 1 < r.size()) out << std::string(w[c] - r[c].size() + 2, ' ');
    }
    out << "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

void PrintCsv(std::ostream& out, const std::vector<std::string>& header,
              const std::vector<std::vector<std::string>>& rows) {
  for (size_t c = 0; c < header.size(); ++c) out << (c ? "," : "") << CsvField(header[c]);
  out << "\n";
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) out << (c ? "," : "") << CsvField(r[c]);
    out << "\n";
  }
}


// ---------------------------------------------------------------------------
// orrery network SYSTEM

struct CollectiveAsk {
  bool asked = false;
  Collective c = Collective::kAllReduce;
  double bytes = 0;
  std::string group;  // tp, cp, ... or "" for --size/--stride
  int64_t size = 0, stride = 1;
};

nlohmann::json TierJson(const hardware::AlphaBetaNetwork& net, const hardware::NetworkTier& t,
                        const hardware::TierParts& p, int i) {
  const hardware::TierGeometry& g = net.geometry(i);
  nlohmann::json j;
  j["name"] = t.name;
  j["topology"] = hardware::TopologyName(t.topology);
  j["domain"] = net.domain(i);
  j["links_per_device"] = g.links;
  j["link_bandwidth_bytes_per_s"] = g.link_bandwidth;
  j["bandwidth_bytes_per_s"] = t.bandwidth;
  j["latency_s"] = t.latency;
  j["hop_latency_s"] = t.hop_latency;
  j["base_latency_s"] = t.base_latency;
  j["diameter_hops"] = hardware::Diameter(g);
  j["switch_levels"] = g.levels;
  j["in_network_reduction"] = t.in_network_reduction;
  j["bisection_bytes_per_s"] = p.bisection;
  j["switches"] = p.switches;
  j["links"] = p.links;
  j["transceivers"] = p.transceivers;
  j["nic_ports"] = p.nic_ports;
  j["cost_usd"] = p.cost();
  j["power_w"] = p.power();
  j["cost_parts_usd"] = {{"switches", p.switch_cost},
                         {"transceivers", p.transceiver_cost},
                         {"cables", p.cable_cost},
                         {"nics", p.nic_cost}};
  return j;
}

int RunTopology(const std::string& system_arg, const std::string& prices_arg,
                const std::vector<std::string>& sets, const CollectiveAsk& ask, int64_t tp,
                int64_t cp, int64_t ep, int64_t dp, int64_t pp, const std::string& order,
                Format fmt, std::ostream& out, std::ostream& err) {
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  base::Diagnostics d;
  hardware::SystemSpec sys;
  hardware::PriceSpec prices;
  LoadSystemArg(system_arg, store, sys, d);
  LoadPrices(prices_arg, store, prices, d);
  if (d.ok()) {
    for (const auto& s : sets) ApplySet(sys, prices, s, {"--set " + s, 0, 0}, d);
    if (d.ok() && !sets.empty()) hardware::CheckSystem(sys, "system", {"--set", 0, 0}, d);
  }
  if (!d.ok()) {
    PrintDiagnostics(d, err);
    return kExitInvalid;
  }
  const int64_t devices = hardware::DeviceCount(sys);
  const hardware::AlphaBetaNetwork net(sys);
  const hardware::SystemCost cost = hardware::CountParts(sys, prices);

  // The collective, when asked.
  hardware::CollectiveReport rep;
  hardware::GroupPlacement place;
  if (ask.asked) {
    int64_t size = ask.size, stride = ask.stride;
    if (!ask.group.empty()) {
      std::string error;
      if (!GroupFromPlan(order, devices, tp, cp, ep, dp, pp, ask.group, size, stride, error)) {
        err << "error: " << error << "\n";
        return kExitInvalid;
      }
    }
    if (size < 1 || stride < 1 || (size - 1) * stride >= devices) {
      err << "error: a group of " << size << " members " << stride << " apart needs "
          << (size - 1) * stride + 1 << " devices; the system has " << devices << "\n";
      return kExitInvalid;
    }
    place = net.Place(size, stride);
    rep = net.Explain(ask.c, ask.bytes, place);
  }

  if (fmt == Format::kJson) {
    nlohmann::json j;
    j["system"] = sys.name;
    j["devices"] = devices;
    j["device"] = sys.device.name;
    j["prices"] = prices.name;
    for (int i = 0; i < net.tiers(); ++i)
      j["tiers"].push_back(TierJson(net, sys.network[static_cast<size_t>(i)],
                                    cost.tiers[static_cast<size_t>(i)], i));
    j["cost"] = {{"devices_usd", cost.device_cost},         {"devices_power_w", cost.device_power},
                 {"network_usd", cost.network_cost},        {"network_power_w", cost.network_power},
                 {"scale_out_usd", cost.scale_out_cost},    {"scale_out_power_w", cost.scale_out_power},
                 {"fabric_usd", cost.fabric_cost},          {"fabric_power_w", cost.fabric_power}};
    if (ask.asked) {
      nlohmann::json c;
      c["collective"] = hardware::CollectiveName(ask.c);
      c["bytes"] = ask.bytes;
      c["group"] = ask.group;
      c["members"] = place.size;
      c["stride"] = place.stride;
      c["time_s"] = rep.time_s;
      c["base_latency_s"] = rep.base_latency_s;
      c["algbw_bytes_per_s"] = rep.algbw;
      c["busbw_bytes_per_s"] = rep.busbw;
      c["top_tier"] = rep.top_tier >= 0 ? sys.network[static_cast<size_t>(rep.top_tier)].name : "";
      c["rail_aligned"] = rep.rail_aligned;
      c["forwarded"] = rep.forwarded;
      c["forwarded_hb_bytes"] = rep.forwarded_hb_bytes;
      for (int i = 0; i < net.tiers(); ++i)
        if (rep.algorithm[static_cast<size_t>(i)] != hardware::CollectiveAlgorithm::kAuto)
          c["algorithms"][sys.network[static_cast<size_t>(i)].name] =
              hardware::CollectiveAlgorithmName(rep.algorithm[static_cast<size_t>(i)]);
      j["collective"] = c;
    }
    out << j.dump(2) << "\n";
    return kExitOk;
  }

  const std::vector<std::string> tier_header = {
      "tier", "name", "topology", "domain", "links", "link bw", "bw/device", "latency", "diameter",
      "bisection/domain", "switches", "levels", "cables", "transceivers", "NIC ports", "cost", "power"};
  std::vector<std::vector<std::string>> tier_rows;
  for (int i = 0; i < net.tiers(); ++i) {
    const auto& t = sys.network[static_cast<size_t>(i)];
    const auto& p = cost.tiers[static_cast<size_t>(i)];
    const auto& g = net.geometry(i);
    tier_rows.push_back({std::to_string(i), t.name, hardware::TopologyName(t.topology),
                         std::to_string(net.domain(i)), std::to_string(g.links),
                         FormatQuantity(g.link_bandwidth, Dimension::kBandwidth),
                         FormatQuantity(t.bandwidth, Dimension::kBandwidth),
                         FormatQuantity(t.latency, Dimension::kTime),
                         std::to_string(hardware::Diameter(g)) + " hops",
                         FormatQuantity(p.bisection, Dimension::kBandwidth),
                         std::to_string(p.switches), std::to_string(p.switch_levels),
                         std::to_string(p.links), std::to_string(p.transceivers),
                         std::to_string(p.nic_ports), Money(p.cost()),
                         FormatQuantity(p.power(), Dimension::kPower)});
  }
  std::vector<std::string> coll_header;
  std::vector<std::vector<std::string>> coll_rows;
  if (ask.asked) {
    std::string algos;
    for (int i = 0; i < net.tiers(); ++i)
      if (rep.algorithm[static_cast<size_t>(i)] != hardware::CollectiveAlgorithm::kAuto)
        algos += std::string(algos.empty() ? "" : " + ") + sys.network[static_cast<size_t>(i)].name +
                 ":" + hardware::CollectiveAlgorithmName(rep.algorithm[static_cast<size_t>(i)]);
    coll_header = {"collective", "bytes", "group", "members", "stride", "time", "algbw", "busbw",
                   "algorithms", "rail_aligned", "forwarded"};
    coll_rows.push_back({hardware::CollectiveName(ask.c), FormatQuantity(ask.bytes, Dimension::kBytes),
                         ask.group.empty() ? "-" : ask.group, std::to_string(place.size),
                         std::to_string(place.stride), FormatQuantity(rep.time_s, Dimension::kTime),
                         FormatQuantity(rep.algbw, Dimension::kBandwidth),
                         FormatQuantity(rep.busbw, Dimension::kBandwidth), algos,
                         rep.rail_aligned ? "yes" : "no", rep.forwarded ? "yes" : "no"});
  }
  if (fmt == Format::kCsv) {
    if (ask.asked) PrintCsv(out, coll_header, coll_rows);
    else PrintCsv(out, tier_header, tier_rows);
    return kExitOk;
  }
  out << sys.name << ": " << devices << " x " << sys.device.name << " (" << sys.nodes << " nodes of "
      << sys.devices_per_node << "); prices: " << prices.name << "\n\n";
  PrintTable(out, tier_header, tier_rows);
  out << "\nnetwork: " << Money(cost.network_cost) << ", "
      << FormatQuantity(cost.network_power, Dimension::kPower) << "  (scale-out fabric without NICs: "
      << Money(cost.fabric_cost) << ", " << FormatQuantity(cost.fabric_power, Dimension::kPower)
      << ")\n";
  out << "devices: " << Money(cost.device_cost) << ", "
      << FormatQuantity(cost.device_power, Dimension::kPower) << " at TDP\n";
  const double total_cost = cost.device_cost + cost.network_cost;
  const double total_power = cost.device_power + cost.network_power;
  if (total_cost > 0)
    out << "network share: " << Percent(cost.network_cost / total_cost) << " of cost, "
        << Percent(total_power > 0 ? cost.network_power / total_power : 0) << " of power\n";
  if (ask.asked) {
    out << "\n" << hardware::CollectiveName(ask.c) << " of "
        << FormatQuantity(ask.bytes, Dimension::kBytes) << " over "
        << (ask.group.empty() ? std::string("the group") : ask.group + " group") << " ("
        << place.size << " members, " << place.stride << " apart): "
        << FormatQuantity(rep.time_s, Dimension::kTime) << "\n  algorithm bandwidth "
        << FormatQuantity(rep.algbw, Dimension::kBandwidth) << ", bus bandwidth "
        << FormatQuantity(rep.busbw, Dimension::kBandwidth) << "\n  " << coll_rows[0][8]
        << "; base latency " << FormatQuantity(rep.base_latency_s, Dimension::kTime) << "\n";
    if (rep.top_tier > 0 && net.geometry(rep.top_tier).kind == hardware::Topology::kRailOnly)
      out << "  members " << (rep.rail_aligned ? "share a rail" : "sit on different rails")
          << (rep.forwarded ? "; cross-rail traffic forwarded through the HB domain (+" +
                                  FormatQuantity(rep.forwarded_hb_bytes, Dimension::kBytes) +
                                  " per member on it)"
                            : "; the collective keeps its cross-domain traffic on rails")
          << "\n";
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------
// orrery network study FILE

struct StudyCase {
  std::string name;
  std::string model;
  std::vector<std::pair<std::string, std::string>> fabrics;  // label, system preset
  std::vector<std::pair<std::string, base::SourceLocation>> sets;
  YAML::Node training, workload;
  base::SourceLocation where;
};

struct Study {
  std::string name, citation, prices = "default", baseline;
  std::vector<std::pair<std::string, std::string>> fabrics;
  std::vector<StudyCase> cases;
};

std::vector<std::pair<std::string, std::string>> ParseFabrics(const YAML::Node& n,
                                                              const std::string& path,
                                                              const std::string& file,
                                                              base::Diagnostics& d) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!n.IsMap() || n.size() < 2) {
    d.Add(base::LocationOf(n, file), path, "",
          "expected a map of at least two fabrics, label: system preset (e.g. clos: dgx-h100-superpod)");
    return out;
  }
  for (const auto& kv : n) {
    if (!kv.first.IsScalar() || !kv.second.IsScalar()) {
      d.Add(base::LocationOf(kv.first, file), path, "", "expected label: system preset name");
      continue;
    }
    out.emplace_back(kv.first.Scalar(), kv.second.Scalar());
  }
  return out;
}

bool ParseStudy(const std::string& file, Study& st, base::Diagnostics& d) {
  const size_t before = d.size();
  const auto root = base::LoadYamlFile(file, d);
  if (!root) return false;
  const YAML::Node m = (*root)["study"];
  if (!root->IsMap() || !m || !m.IsMap()) {
    d.Add(base::LocationOf(*root, file), "study", "", "expected a map under the top-level key `study:`");
    return false;
  }
  static const std::vector<std::string> keys = {"name", "citation", "prices", "baseline", "fabrics",
                                                "cases"};
  static const std::vector<std::string> case_keys = {"name", "model", "fabrics", "set", "training",
                                                     "workload", "note"};
  for (const auto& kv : m) {
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      d.Add(base::LocationOf(kv.first, file), "study." + k, "", "unknown key in study",
            base::DidYouMean(k, keys));
  }
  auto scalar = [&](const char* key, std::string& outv) {
    if (const YAML::Node n = m[key]) {
      if (n.IsScalar()) outv = n.Scalar();
      else d.Add(base::LocationOf(n, file), std::string("study.") + key, "", "expected a single value");
    }
  };
  scalar("name", st.name);
  scalar("citation", st.citation);
  scalar("prices", st.prices);
  scalar("baseline", st.baseline);
  if (const YAML::Node f = m["fabrics"]) st.fabrics = ParseFabrics(f, "study.fabrics", file, d);
  const YAML::Node cases = m["cases"];
  if (!cases || !cases.IsSequence() || cases.size() == 0) {
    d.Add(base::LocationOf(cases ? cases : m, file), "study.cases", "",
          "expected a non-empty sequence of cases");
    return false;
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    const YAML::Node c = cases[i];
    const std::string at = "study.cases[" + std::to_string(i) + "]";
    StudyCase sc;
    sc.where = base::LocationOf(c, file);
    if (!c.IsMap()) {
      d.Add(sc.where, at, "", "expected a map (name, model, fabrics, set, training, workload)");
      continue;
    }
    for (const auto& kv : c) {
      const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (std::find(case_keys.begin(), case_keys.end(), k) == case_keys.end())
        d.Add(base::LocationOf(kv.first, file), at + "." + k, "", "unknown key in a study case",
              base::DidYouMean(k, case_keys));
    }
    if (c["name"] && c["name"].IsScalar()) sc.name = c["name"].Scalar();
    if (c["model"] && c["model"].IsScalar()) sc.model = c["model"].Scalar();
    else d.Add(sc.where, at + ".model", "", "required key is missing (a model preset name)");
    sc.fabrics = c["fabrics"] ? ParseFabrics(c["fabrics"], at + ".fabrics", file, d) : st.fabrics;
    if (sc.fabrics.empty() && !c["fabrics"])
      d.Add(sc.where, at + ".fabrics", "", "no fabrics: give study.fabrics or the case's own");
    if (const YAML::Node s = c["set"]) {
      if (!s.IsMap()) d.Add(base::LocationOf(s, file), at + ".set", "", "expected a map of path: value");
      else
        for (const auto& kv : s)
          sc.sets.emplace_back(kv.first.Scalar() + "=" + (kv.second.IsScalar() ? kv.second.Scalar() : ""),
                               base::LocationOf(kv.second, file));
    }
    sc.training = c["training"];
    sc.workload = c["workload"];
    if (!sc.training || !sc.workload)
      d.Add(sc.where, at, "", "a case needs `training` and `workload` maps");
    st.cases.push_back(std::move(sc));
  }
  if (st.baseline.empty() && !st.fabrics.empty()) st.baseline = st.fabrics.front().first;
  return d.size() == before;
}

struct StudyRow {
  std::string case_name, fabric, system, model;
  int64_t devices = 0;
  bool feasible = false;
  std::string reason;
  double iteration_s = 0, ep_comm_s = 0, dp_comm_s = 0, tp_comm_s = 0, pp_s = 0;
  double fabric_cost = 0, fabric_power = 0, scale_out_cost = 0, scale_out_power = 0;
  double device_cost = 0;
  bool baseline = false;
  int base_index = -1;  // row of this case's baseline
};

int RunStudy(const std::string& file, Format fmt, std::ostream& out, std::ostream& err) {
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  base::Diagnostics d;
  Study st;
  ParseStudy(file, st, d);
  hardware::PriceSpec prices;
  if (d.ok()) LoadPrices(st.prices, store, prices, d);
  if (!d.ok()) {
    PrintDiagnostics(d, err);
    return kExitInvalid;
  }
  std::vector<StudyRow> rows;
  for (const StudyCase& c : st.cases) {
    int base_row = -1;
    for (const auto& [label, preset] : c.fabrics) {
      engine::Scenario s;
      s.file = file;
      s.name = c.name;
      engine::LoadModelPreset(c.model, store, c.where, "study.case.model", s.model, d);
      engine::LoadSystemPreset(preset, store, c.where, "study.case.fabrics." + label, s.system, d);
      if (c.training)
        parallelism::TrainingPlanSchema().Parse(c.training, "study.case.training", file, s.training, d);
      if (c.workload)
        parallelism::WorkloadSchema().Parse(c.workload, "study.case.workload", file, s.workload, d);
      for (const auto& [assignment, where] : c.sets) engine::ApplyOverride(s, assignment, d, &where);
      if (!d.ok()) break;
      hardware::CheckSystem(s.system, "study.case.fabrics." + label, c.where, d);
      engine::CrossCheck(s, d);
      if (!d.ok()) break;
      const engine::TrainingEstimator est(s.model, s.system);
      const engine::TrainingEstimate e = est.Run(s.training, s.workload);
      const hardware::SystemCost cost = hardware::CountParts(s.system, prices);
      StudyRow r;
      r.case_name = c.name;
      r.fabric = label;
      r.system = s.system.name;
      r.model = s.model.name;
      r.devices = hardware::DeviceCount(s.system);
      r.feasible = e.feasible();
      if (!r.feasible) r.reason = engine::ExplainInfeasible(e, s);
      r.iteration_s = e.iteration_s;
      r.ep_comm_s = e.time.ep_comm;
      r.dp_comm_s = e.time.dp_comm;
      r.tp_comm_s = e.time.tp_comm;
      r.pp_s = e.time.pp_p2p;
      r.fabric_cost = cost.fabric_cost;
      r.fabric_power = cost.fabric_power;
      r.scale_out_cost = cost.scale_out_cost;
      r.scale_out_power = cost.scale_out_power;
      r.device_cost = cost.device_cost;
      r.baseline = label == st.baseline;
      if (r.baseline) base_row = static_cast<int>(rows.size());
      rows.push_back(std::move(r));
    }
    if (!d.ok()) break;
    for (auto& r : rows)
      if (r.case_name == c.name && r.base_index < 0) r.base_index = base_row;
  }
  if (!d.ok()) {
    PrintDiagnostics(d, err);
    return kExitInvalid;
  }
  auto rel = [&](const StudyRow& r, double StudyRow::*f) -> double {
    if (r.base_index < 0) return 0;
    const double b = rows[static_cast<size_t>(r.base_index)].*f;
    return b > 0 ? r.*f / b - 1 : 0;
  };
  if (fmt == Format::kJson) {
    nlohmann::json j;
    j["study"] = st.name;
    j["citation"] = st.citation;
    j["prices"] = prices.name;
    j["baseline"] = st.baseline;
    for (const auto& r : rows) {
      nlohmann::json x = {{"case", r.case_name},
                          {"fabric", r.fabric},
                          {"system", r.system},
                          {"model", r.model},
                          {"devices", r.devices},
                          {"feasible", r.feasible},
                          {"reason", r.reason},
                          {"iteration_s", r.iteration_s},
                          {"ep_comm_s", r.ep_comm_s},
                          {"dp_comm_s", r.dp_comm_s},
                          {"tp_comm_s", r.tp_comm_s},
                          {"pp_p2p_s", r.pp_s},
                          {"fabric_cost_usd", r.fabric_cost},
                          {"fabric_power_w", r.fabric_power},
                          {"scale_out_cost_usd", r.scale_out_cost},
                          {"scale_out_power_w", r.scale_out_power},
                          {"device_cost_usd", r.device_cost},
                          {"iteration_vs_baseline", rel(r, &StudyRow::iteration_s)},
                          {"ep_comm_vs_baseline", rel(r, &StudyRow::ep_comm_s)},
                          {"fabric_cost_vs_baseline", rel(r, &StudyRow::fabric_cost)},
                          {"fabric_power_vs_baseline", rel(r, &StudyRow::fabric_power)},
                          {"scale_out_cost_vs_baseline", rel(r, &StudyRow::scale_out_cost)},
                          {"scale_out_power_vs_baseline", rel(r, &StudyRow::scale_out_power)}};
      j["rows"].push_back(x);
    }
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  const std::vector<std::string> header = {
      "case", "fabric", "GPUs", "iteration", "vs base", "all-to-all", "vs base", "fabric cost",
      "vs base", "fabric power", "vs base", "with NICs", "vs base"};
  std::vector<std::vector<std::string>> table;
  for (const auto& r : rows) {
    const auto pct = [&](double v) {
      return r.baseline ? std::string("-") : (v >= 0 ? "+" : "") + Percent(v);
    };
    table.push_back({r.case_name, r.fabric, std::to_string(r.devices),
                     r.feasible ? FormatQuantity(r.iteration_s, Dimension::kTime) : "infeasible",
                     pct(rel(r, &StudyRow::iteration_s)),
                     r.ep_comm_s > 0 ? FormatQuantity(r.ep_comm_s, Dimension::kTime) : "-",
                     r.ep_comm_s > 0 ? pct(rel(r, &StudyRow::ep_comm_s)) : "-", Money(r.fabric_cost),
                     pct(rel(r, &StudyRow::fabric_cost)),
                     FormatQuantity(r.fabric_power, Dimension::kPower),
                     pct(rel(r, &StudyRow::fabric_power)), Money(r.scale_out_cost),
                     pct(rel(r, &StudyRow::scale_out_cost))});
  }
  if (fmt == Format::kCsv) {
    PrintCsv(out, header, table);
    return kExitOk;
  }
  out << "study: " << st.name << "\n";
  if (!st.citation.empty()) out << "claim: " << st.citation << "\n";
  out << "prices: " << prices.name << "; baseline fabric: " << st.baseline
      << "; fabric = scale-out switches, transceivers and cables (NICs are the same in both)\n\n";
  PrintTable(out, header, table);
  for (const auto& r : rows)
    if (!r.feasible) out << "\n" << r.case_name << " / " << r.fabric << ": " << r.reason << "\n";
  return kExitOk;
}

}  // namespace

int RunNetwork(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery network SYSTEM [--prices NAME|FILE] [--set PATH=VALUE]... [--format table|json|csv]\n"
      "               [--collective NAME --bytes SIZE (--group tp|cp|ep|dp|pp [--tp N ...] |\n"
      "                --size N [--stride S])]\n"
      "orrery network study STUDY.yaml [--format table|json|csv]\n\n"
      "Prints a system's network: for every tier its topology, domain, links and\n"
      "bandwidth, diameter and bisection bandwidth, and the parts it needs for the\n"
      "system's devices (switches, cables, transceivers, NIC ports) with their cost\n"
      "and power from a price table (configs/prices/), beside the devices' own cost\n"
      "and power. With --collective it also prints the time of one collective and\n"
      "its algorithm and bus bandwidth (NCCL's definitions), the tiers it crosses,\n"
      "and on rail-only fabrics whether its traffic is forwarded through the HB\n"
      "domain. SYSTEM is a system file or preset name.\n\n"
      "`orrery network study FILE` runs a fabric study (configs/studies/rail-only.yaml):\n"
      "for each case and fabric, the training iteration time, its exposed all-to-all\n"
      "time, and the fabric's cost and power, each against the baseline fabric.\n\noptions");
  std::string format = "table", prices = "default", collective, bytes_text, group,
              order = "tp,cp,ep,dp,pp";
  std::vector<std::string> sets;
  int64_t tp = 1, cp = 1, ep = 1, dp = 0, pp = 1, size = 0, stride = 1;
  opts.add_options()("help,h", "show this help")(
      "prices", po::value(&prices), "price table: a name under configs/prices/ or a file (default: default)")(
      "set", po::value(&sets)->composing(),
      "override system.* or prices.* (e.g. --set system.nodes=512 --set "
      "system.network[1].topology=rail-only --set 'prices.switch_price=40 kUSD')")(
      "format", po::value(&format), "table | json | csv (csv: the tiers, or the collective when asked)")(
      "collective", po::value(&collective),
      "all-reduce | reduce-scatter | all-gather | all-to-all | broadcast | send-recv")(
      "bytes", po::value(&bytes_text), "buffer size with a unit, e.g. 1GiB, 64 MiB")(
      "group", po::value(&group), "the plan's group: tp | cp | ep | dp | pp")(
      "tp", po::value(&tp), "tensor-parallel degree (default 1)")(
      "cp", po::value(&cp), "context-parallel degree (default 1)")(
      "ep", po::value(&ep), "expert-parallel degree, carved out of cp x dp (default 1)")(
      "pp", po::value(&pp), "pipeline stages (default 1)")(
      "dp", po::value(&dp), "data-parallel degree (default: devices / (tp cp pp))")(
      "order", po::value(&order), "group order, innermost first (default tp,cp,ep,dp,pp)")(
      "size", po::value(&size), "explicit group: members")(
      "stride", po::value(&stride), "explicit group: devices between consecutive members (default 1)");
  po::options_description hidden;
  hidden.add_options()("what", po::value<std::vector<std::string>>(), "");
  po::positional_options_description pos;
  pos.add("what", 2);
  po::variables_map vm;
  try {
    po::options_description all;
    all.add(opts).add(hidden);
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see orrery network --help)\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts
        << "\nExamples:\n"
           "  orrery network dgx-h100-superpod\n"
           "  orrery network dgx-h100-superpod --collective all-reduce --bytes 64MiB --size 8\n"
           "  orrery network dgx-h100-rail-only --collective all-to-all --bytes 256MiB --group ep "
           "--tp 2 --ep 16\n"
           "  orrery network gh200-nvl256 --set system.network[1].topology=rail-only --format json\n"
           "  orrery network tpu-v4-pod --collective all-reduce --bytes 1GiB --size 4096\n"
           "  orrery network study configs/studies/rail-only.yaml\n";
    return kExitOk;
  }
  const std::vector<std::string> what =
      vm.count("what") ? vm["what"].as<std::vector<std::string>>() : std::vector<std::string>{};
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  if (!what.empty() && what[0] == "study") {
    if (what.size() != 2) {
      err << "error: missing STUDY.yaml (see orrery network --help)\n";
      return kExitUsage;
    }
    return RunStudy(what[1], fmt, out, err);
  }
  if (what.size() != 1) {
    err << "error: " << (what.empty() ? "missing SYSTEM" : "one SYSTEM expected")
        << " (see orrery network --help)\n";
    return kExitUsage;
  }
  CollectiveAsk ask;
  if (!collective.empty()) {
    ask.asked = true;
    std::string hint;
    if (!ParseCollective(collective, ask.c, hint)) {
      err << "error: --collective '" << collective << "' is not one of all-reduce, reduce-scatter, "
          << "all-gather, all-to-all, broadcast, send-recv" << (hint.empty() ? "" : "; " + hint) << "\n";
      return kExitUsage;
    }
    const base::QuantityParse q = base::ParseQuantity(bytes_text, Dimension::kBytes);
    if (bytes_text.empty() || !q.value || *q.value <= 0) {
      err << "error: --bytes '" << bytes_text << "': "
          << (bytes_text.empty() ? "required with --collective" : q.value ? "must be > 0" : q.error)
          << (q.hint.empty() ? "" : "; " + q.hint) << " (e.g. --bytes 1GiB)\n";
      return kExitUsage;
    }
    ask.bytes = *q.value;
    if (group.empty() == (size == 0)) {
      err << "error: give either --group (with the plan's degrees) or --size [--stride]\n";
      return kExitUsage;
    }
    ask.group = group;
    ask.size = size;
    ask.stride = stride;
  } else if (!group.empty() || size != 0) {
    err << "error: --group/--size need --collective and --bytes\n";
    return kExitUsage;
  }
  return RunTopology(what[0], prices, sets, ask, tp, cp, ep, dp, pp, order, fmt, out, err);
}

}  // namespace orrery::cli
