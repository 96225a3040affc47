#include "core/api/network.h"

#include "core/api/estimate.h"
#include "core/estimate/scenario.h"
#include "core/search/search.h"

namespace orrery {

NetworkResult Network(const NetworkRequest& request) {
  NetworkResult r;
  studies::NetworkQuery q;
  q.system = request.system;
  q.prices = request.prices;
  q.sets = request.sets;
  if (!request.collective.empty()) {
    q.has_collective = true;
    std::string hint;
    if (!studies::ParseCollective(request.collective, q.collective.collective, hint)) {
      r.status = Status::kUsage;
      r.reason = "--collective '" + request.collective +
                 "' is not one of all-reduce, reduce-scatter, all-gather, all-to-all, broadcast, "
                 "send-recv" + (hint.empty() ? "" : "; " + hint);
      return r;
    }
    if (!(request.bytes > 0)) {
      r.status = Status::kUsage;
      r.reason = "the collective needs bytes > 0 (e.g. --bytes 1GiB)";
      return r;
    }
    if (request.group.empty() == (request.size == 0)) {
      r.status = Status::kUsage;
      r.reason = "give either --group (with the plan's degrees) or --size [--stride]";
      return r;
    }
    studies::CollectiveQuery& c = q.collective;
    c.bytes = request.bytes;
    c.group = request.group;
    c.size = request.size;
    c.stride = request.stride;
    c.tp = request.tp;
    c.cp = request.cp;
    c.ep = request.ep;
    c.dp = request.dp;
    c.pp = request.pp;
    c.order = request.order;
  } else if (!request.group.empty() || request.size != 0) {
    r.status = Status::kUsage;
    r.reason = "--group/--size need --collective and --bytes";
    return r;
  }
  std::string error;
  if (!studies::BuildNetworkReport(q, r.report, r.diagnostics, error)) {
    r.status = Status::kInvalidInput;
    r.reason = error;
  }
  return r;
}

NetworkStudyResult NetworkStudy(const NetworkStudyRequest& request, const Control& control) {
  NetworkStudyResult r;
  const bool finished = studies::RunFabricStudy(
      request.file, engine::PresetStore::DefaultConfigDir(), r.study, r.diagnostics,
      [&](uint64_t done, uint64_t total) {
        control.Report(done, total, "cases");
        return !control.Cancelled();
      });
  if (!r.diagnostics.ok()) {
    r.status = Status::kInvalidInput;
  } else if (!finished) {
    r.status = Status::kCancelled;
    r.reason = "cancelled";
  }
  return r;
}

ScenarioNetworkResult ScenarioNetwork(const ScenarioNetworkRequest& request) {
  ScenarioNetworkResult r;
  const engine::Scenario& s = request.scenario;
  engine::Scenario t = s;
  if (!request.fabric_system.empty()) {
    const engine::PresetStore store(ConfigDir());
    if (!engine::LoadSystemPreset(request.fabric_system, store, {"", 0, 0}, "system", t.system,
                                  r.diagnostics)) {
      r.status = Status::kInvalidInput;
      return r;
    }
    t.system.device = s.system.device;  // the fabric is what is compared
    t.system.device_preset = s.system.device_preset;
    r.reason = engine::ResizeSystem(t.system, hardware::DeviceCount(s.system));
    if (!r.reason.empty()) {
      r.status = Status::kInvalidInput;
      return r;
    }
  }
  if (!request.outer_topology.empty()) {
    if (t.system.network.empty()) {
      r.status = Status::kInvalidInput;
      r.reason = "the system has no network tier";
      return r;
    }
    const std::string tier = "system.network[" + std::to_string(t.system.network.size() - 1) + "]";
    engine::ApplyOverride(t, tier + ".topology=" + request.outer_topology, r.diagnostics);
    if (r.diagnostics.ok()) hardware::CheckSystem(t.system, "system", {"", 0, 0}, r.diagnostics);
    if (!r.diagnostics.ok()) {
      r.status = Status::kInvalidInput;
      return r;
    }
    t.system.name += ", " + t.system.network.back().name + " " + request.outer_topology;
  }
  studies::NetworkQuery q;
  q.loaded = t.system;
  q.prices = request.prices;
  std::string error;
  if (!studies::BuildNetworkReport(q, r.report, r.diagnostics, error)) {
    r.status = Status::kInvalidInput;
    r.reason = error;
    return r;
  }
  if (t.has_training) {
    EstimateRequest er;
    er.scenario = ScenarioInput::Loaded(std::move(t));
    const EstimateResult e = Estimate(er);
    r.has_estimate = e.has_estimate;
    r.estimate = e.estimate;
    r.estimate_reason = !e.diagnostics.ok() ? e.diagnostics.items().front().message : e.reason;
  }
  return r;
}

nlohmann::ordered_json ToJson(const NetworkResult& r) {
  const studies::NetworkReport& n = r.report;
  nlohmann::ordered_json j;
  j["schema_version"] = kSchemaVersion;
  j["system"] = n.system;
  j["devices"] = n.devices;
  j["device"] = n.device;
  j["prices"] = n.prices;
  j["tiers"] = nlohmann::ordered_json::array();
  for (const studies::TierRow& t : n.tiers) {
    const hardware::TierParts& p = t.parts;
    nlohmann::ordered_json x;
    x["name"] = t.name;
    x["topology"] = t.topology;
    x["domain"] = t.domain;
    x["links_per_device"] = t.links_per_device;
    x["link_bandwidth_bytes_per_s"] = t.link_bandwidth;
    x["bandwidth_bytes_per_s"] = t.bandwidth;
    x["latency_s"] = t.latency;
    x["hop_latency_s"] = t.hop_latency;
    x["base_latency_s"] = t.base_latency;
    x["diameter_hops"] = t.diameter_hops;
    x["switch_levels"] = t.geometry_levels;
    x["in_network_reduction"] = t.in_network_reduction;
    x["bisection_bytes_per_s"] = p.bisection;
    x["switches"] = p.switches;
    x["links"] = p.links;
    x["transceivers"] = p.transceivers;
    x["nic_ports"] = p.nic_ports;
    x["cost_usd"] = p.cost();
    x["power_w"] = p.power();
    x["cost_parts_usd"] = {{"switches", p.switch_cost},
                           {"transceivers", p.transceiver_cost},
                           {"cables", p.cable_cost},
                           {"nics", p.nic_cost}};
    j["tiers"].push_back(x);
  }
  const hardware::SystemCost& c = n.cost;
  j["cost"] = {{"devices_usd", c.device_cost},      {"devices_power_w", c.device_power},
               {"network_usd", c.network_cost},     {"network_power_w", c.network_power},
               {"scale_out_usd", c.scale_out_cost}, {"scale_out_power_w", c.scale_out_power},
               {"fabric_usd", c.fabric_cost},       {"fabric_power_w", c.fabric_power}};
  if (n.has_collective) {
    const studies::CollectiveRow& k = n.collective;
    nlohmann::ordered_json x;
    x["collective"] = k.collective;
    x["bytes"] = k.bytes;
    x["group"] = k.group;
    x["members"] = k.members;
    x["stride"] = k.stride;
    x["time_s"] = k.time_s;
    x["base_latency_s"] = k.base_latency_s;
    x["algbw_bytes_per_s"] = k.algbw;
    x["busbw_bytes_per_s"] = k.busbw;
    x["top_tier"] = k.top_tier;
    x["rail_aligned"] = k.rail_aligned;
    x["forwarded"] = k.forwarded;
    x["forwarded_hb_bytes"] = k.forwarded_hb_bytes;
    for (const auto& [tier, algorithm] : k.algorithms) x["algorithms"][tier] = algorithm;
    j["collective"] = x;
  }
  return j;
}

nlohmann::ordered_json ToJson(const NetworkStudyResult& r) {
  const studies::FabricStudy& st = r.study;
  using Row = studies::FabricStudyRow;
  nlohmann::ordered_json j;
  j["schema_version"] = kSchemaVersion;
  j["study"] = st.name;
  j["citation"] = st.citation;
  j["prices"] = st.prices;
  j["baseline"] = st.baseline;
  j["rows"] = nlohmann::ordered_json::array();
  for (const Row& x : st.rows) {
    j["rows"].push_back({{"case", x.case_name},
                         {"fabric", x.fabric},
                         {"system", x.system},
                         {"model", x.model},
                         {"devices", x.devices},
                         {"feasible", x.feasible},
                         {"reason", x.reason},
                         {"iteration_s", x.iteration_s},
                         {"ep_comm_s", x.ep_comm_s},
                         {"dp_comm_s", x.dp_comm_s},
                         {"tp_comm_s", x.tp_comm_s},
                         {"pp_p2p_s", x.pp_s},
                         {"fabric_cost_usd", x.fabric_cost},
                         {"fabric_power_w", x.fabric_power},
                         {"scale_out_cost_usd", x.scale_out_cost},
                         {"scale_out_power_w", x.scale_out_power},
                         {"device_cost_usd", x.device_cost},
                         {"iteration_vs_baseline", st.VsBaseline(x, &Row::iteration_s)},
                         {"ep_comm_vs_baseline", st.VsBaseline(x, &Row::ep_comm_s)},
                         {"fabric_cost_vs_baseline", st.VsBaseline(x, &Row::fabric_cost)},
                         {"fabric_power_vs_baseline", st.VsBaseline(x, &Row::fabric_power)},
                         {"scale_out_cost_vs_baseline", st.VsBaseline(x, &Row::scale_out_cost)},
                         {"scale_out_power_vs_baseline", st.VsBaseline(x, &Row::scale_out_power)}});
  }
  return j;
}

}  // namespace orrery
