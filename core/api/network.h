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

// JSON (docs/output-schema.md): SI units, the unit in the key.
nlohmann::ordered_json ToJson(const NetworkResult& r);
nlohmann::ordered_json ToJson(const NetworkStudyResult& r);

}  // namespace orrery
