#pragma once
// Presentation of `orrery plan` results: the chain step by step, or CSV.

#include <ostream>

#include "core/api/plan.h"

namespace orrery::cli {

void PrintPlanTable(const PlanResult& r, std::ostream& out);
void PrintPlanCsv(const PlanResult& r, std::ostream& out);  // key,value rows of the JSON

}  // namespace orrery::cli
