#pragma once
// A system's network as a report: per tier its topology, domain, links,
// bandwidth, diameter, bisection and the parts it needs with their cost and
// power (hardware/network.h, hardware/cost_model.h), and optionally the time
// of one collective on a group of the system's devices. What `orrery
// network SYSTEM` prints; the api (core/api/network.h) is its door.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/diagnostics.h"
#include "hardware/cost_model.h"
#include "hardware/network.h"

namespace orrery::studies {

// One collective to time. The group is either a group of a training plan
// (`group` = tp|cp|ep|dp|pp with the degrees and the group order) or given
// explicitly (`size` members `stride` devices apart).
struct CollectiveQuery {
  hardware::Collective collective = hardware::Collective::kAllReduce;
  double bytes = 0;
  std::string group;  // tp, cp, ep, dp, pp; empty: size and stride
  int64_t size = 0, stride = 1;
  int64_t tp = 1, cp = 1, ep = 1, dp = 0, pp = 1;  // dp 0: devices / (tp cp pp)
  std::string order = "tp,cp,ep,dp,pp";            // innermost first
};

struct NetworkQuery {
  std::string system;              // a system file or preset name
  std::optional<hardware::SystemSpec> loaded;  // or: a system already loaded (`system` unused)
  std::string prices = "default";  // a price table name (configs/prices/) or file
  std::vector<std::string> sets;   // system.*, system.network[i].*, prices.* = value
  bool has_collective = false;
  CollectiveQuery collective;
};

struct TierRow {
  int index = 0;
  std::string name, topology;
  int64_t domain = 0, links_per_device = 0, diameter_hops = 0, geometry_levels = 0;
  double link_bandwidth = 0, bandwidth = 0, latency = 0, hop_latency = 0, base_latency = 0;
  bool in_network_reduction = false;
  hardware::TierParts parts;
};

struct CollectiveRow {
  std::string collective;  // its name (all-reduce, ...)
  double bytes = 0;
  std::string group;
  int64_t members = 0, stride = 0;
  double time_s = 0, base_latency_s = 0, algbw = 0, busbw = 0;
  std::string top_tier;          // name of the innermost tier holding the group ("" none)
  bool top_tier_rail_only = false;  // the group's top tier (above the HB domain) is rail-only
  bool rail_aligned = true, forwarded = false;
  double forwarded_hb_bytes = 0;
  std::vector<std::pair<std::string, std::string>> algorithms;  // tier name, algorithm used
};

struct NetworkReport {
  std::string system, device, prices;
  int64_t devices = 0, nodes = 0, devices_per_node = 0;
  std::vector<TierRow> tiers;
  hardware::SystemCost cost;
  bool has_collective = false;
  CollectiveRow collective;
};

// Builds the report. Input errors (unknown preset, a bad --set) go to `d`;
// a group that does not fit the system sets `error`. Returns true on success.
bool BuildNetworkReport(const NetworkQuery& q, NetworkReport& out, base::Diagnostics& d,
                        std::string& error);

// Parses a collective's name (all-reduce, reduce-scatter, all-gather,
// all-to-all, broadcast, send-recv, p2p); `hint` gets a did-you-mean.
bool ParseCollective(const std::string& text, hardware::Collective& c, std::string& hint);

// Size and stride of one parallel group, from the degrees and the group
// order (innermost first), as the training estimator places them.
bool GroupFromPlan(const std::string& order, int64_t devices, int64_t tp, int64_t cp, int64_t ep,
                   int64_t dp, int64_t pp, const std::string& group, int64_t& size, int64_t& stride,
                   std::string& error);

// Loads a price table: a file, or a name under the preset store's prices/.
bool LoadPrices(const std::string& arg, const std::string& config_dir, hardware::PriceSpec& out,
                base::Diagnostics& d);

}  // namespace orrery::studies
