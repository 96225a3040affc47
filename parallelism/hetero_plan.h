#pragma once
// How a plan uses the device pools of a heterogeneous system
// (hardware/system_spec.h DevicePool): the scenario's `hetero:` section.
//
//   pipeline  the pipeline runs through the pools in order (pool 0, the
//             system's own devices, first); pool g holds layers[g]
//             consecutive layers on its stages. Every pool uses the plan's
//             tp and dp, so pool g has devices_g / (tp x dp) stages.
//   data      every pool runs the whole model with the plan's tp, pp and cp
//             and fills its devices with data parallelism; pool g takes
//             batch[g] sequences of each global batch, and the pools'
//             gradients are summed across them every iteration.
//
// An empty list means the naive split a homogeneous planner would make:
// layers in proportion to the pool's stage count, batch in proportion to
// its device count. `orrery search` finds the best split.

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/param.h"

namespace orrery::parallelism {

enum class HeteroSplit { kPipeline, kData };
const char* HeteroSplitName(HeteroSplit s);

struct HeteroPlan {
  bool given = false;  // the scenario has a `hetero:` section
  HeteroSplit split = HeteroSplit::kPipeline;
  std::string layers;  // "40,40": layers per pool (pipeline); "" = by stage count
  std::string batch;   // "1024,1024": sequences per pool (data); "" = by device count
};

const base::Schema<HeteroPlan>& HeteroPlanSchema();

// Reads `hetero:` (a map; `layers` and `batch` may be YAML sequences or
// comma-separated text).
void ParseHeteroPlan(const YAML::Node& map, const std::string& path, const std::string& file,
                     HeteroPlan& out, base::Diagnostics& diags);

// "40,40" -> {40, 40}. Empty text gives an empty list. False (with `why`)
// when an entry is not a whole number >= 1.
bool ParseCountList(const std::string& text, std::vector<int64_t>& out, std::string& why);
// {40, 40} -> "40,40".
std::string CountListText(const std::vector<int64_t>& v);

}  // namespace orrery::parallelism
