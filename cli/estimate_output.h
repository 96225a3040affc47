#pragma once
// The table of `orrery estimate` (JSON and CSV come from core/api/json.h).

#include <ostream>

#include "core/api/estimate.h"

namespace orrery::cli {

// Scenario, plan, time breakdown, memory per device, MFU and rates; with the
// event engine also the per-stage table.
void PrintEstimateTable(const EstimateResult& r, std::ostream& out);

}  // namespace orrery::cli
