#pragma once
// orrery::Network: a system's network (tiers, parts, cost, power) and,
// optionally, the time of one collective on a group of its devices.
// orrery::NetworkStudy: a fabric study (configs/studies/rail-only.yaml).
// The work is core/studies/; `orrery network` is the command-line face.
//
//   orrery::NetworkRequest req;
//   req.system = "dgx-h100-superpod";
//   req.collective = "all-reduce"; req.bytes = 64 * 1024 * 1024; req.size = 8;
//   orrery::NetworkResult r = orrery::Network(req);
//   if (r.ok()) std::cout << r.report.collective.time_s;

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/api/common.h"
#include "core/estimate/training_estimator.h"
#include "core/studies/fabric_study.h"
#include "core/studies/network_report.h"

namespace orrery {

struct NetworkRequest {
  std::string system;              // a system file or preset name
  std::string prices = "default";  // a price table (configs/prices/ name) or file
  std::vector<std::string> sets;   // system.*, system.network[i].*, prices.* = value
  // The collective to time; empty: none. all-reduce, reduce-scatter,
  // all-gather, all-to-all, broadcast, send-recv.
  std::string collective;
  double bytes = 0;                // buffer, bytes (> 0 with a collective)
  // The group: a plan's group (tp|cp|ep|dp|pp with the degrees below and the
  // group order, innermost first), or `size` members `stride` devices apart.
  std::string group;
  int64_t size = 0, stride = 1;
  int64_t tp = 1, cp = 1, ep = 1, dp = 0, pp = 1;  // dp 0: devices / (tp cp pp)
  std::string order = "tp,cp,ep,dp,pp";
};

struct NetworkResult : ResultBase {
  studies::NetworkReport report;
};

// kUsage: a malformed request (unknown collective, no bytes, both or neither
// of group and size); kInvalidInput: diagnostics (presets, --set) or a group
// that does not fit the system (reason).
NetworkResult Network(const NetworkRequest& request);

struct NetworkStudyRequest {
  std::string file;  // a study YAML (top-level key `study:`)
};

struct NetworkStudyResult : ResultBase {
  studies::FabricStudy study;
};

// Progress: one unit per (case, fabric). Cancelled: the rows done so far.
NetworkStudyResult NetworkStudy(const NetworkStudyRequest& request, const Control& control = {});

// orrery::ScenarioNetwork: the network of a scenario's system as it stands
// (presets picked, keys edited: the GUI's scenario) with the scenario's own
// training plan estimated on it; or the same on another fabric, for a
// what-if: a system preset's network (the scenario's device kept and the
// system resized to the scenario's device count), or the outermost tier's
// topology replaced ("rail-only": the rail-only study's comparison, Wang et
// al. 2023, configs/studies/rail-only.yaml).
struct ScenarioNetworkRequest {
  engine::Scenario scenario;
  std::string fabric_system;       // "" = the scenario's own; else a system preset or file
  std::string outer_topology;      // "" = as is; else the outermost tier's new topology
  std::string prices = "default";  // a price table (configs/prices/ name) or file
};

struct ScenarioNetworkResult : ResultBase {
  studies::NetworkReport report;
  bool has_estimate = false;          // false when the scenario has no training section
  engine::TrainingEstimate estimate;  // the scenario's plan on this fabric
  std::string estimate_reason;        // why that plan is infeasible or invalid there ("" when not)
};

// kInvalidInput with the reason or diagnostics: an unknown preset, a system
// that cannot be resized to the scenario's devices, a topology the tier
// cannot take. An infeasible plan is not a failure: `estimate_reason` says why.
ScenarioNetworkResult ScenarioNetwork(const ScenarioNetworkRequest& request);

// JSON (docs/output-schema.md): SI units, the unit in the key.
nlohmann::ordered_json ToJson(const NetworkResult& r);
nlohmann::ordered_json ToJson(const NetworkStudyResult& r);

}  // namespace orrery
