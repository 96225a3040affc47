#pragma once
// Fabric studies (configs/studies/rail-only.yaml): for each case (a model,
// a training plan and a workload) and each fabric (a system preset), the
// closed-form training estimate, its communication parts, and the fabric's
// parts, cost and power, each against the study's baseline fabric. The
// rail-only claim it tests: Wang et al. 2023, "How to Build Low-cost Networks
// for Large Language Models (without Sacrificing Performance)", arXiv:2307.12169.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"

namespace orrery::studies {

struct FabricStudyRow {
  std::string case_name, fabric, system, model;
  int64_t devices = 0;
  bool feasible = false;
  std::string reason;
  double iteration_s = 0, ep_comm_s = 0, dp_comm_s = 0, tp_comm_s = 0, pp_s = 0;
  double fabric_cost = 0, fabric_power = 0, scale_out_cost = 0, scale_out_power = 0;
  double device_cost = 0;
  bool baseline = false;
  int base_index = -1;  // row of this case's baseline (-1: none)
};

struct FabricStudy {
  std::string name, citation, prices, baseline;
  std::vector<FabricStudyRow> rows;
  // r.*field / baseline.*field - 1 (0 without a baseline or when it is 0).
  double VsBaseline(const FabricStudyRow& r, double FabricStudyRow::*field) const;
};

// Parses the study file and runs every case on every fabric. `step` is
// called after each (case, fabric) with the count done and the total; it
// returns false to stop (then the result holds the rows done so far and
// RunFabricStudy returns false with no diagnostic added).
bool RunFabricStudy(const std::string& file, const std::string& config_dir, FabricStudy& out,
                    base::Diagnostics& d,
                    const std::function<bool(uint64_t done, uint64_t total)>& step = {});

}  // namespace orrery::studies
