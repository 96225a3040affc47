#pragma once
// Presentation of `orrery fit` results.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "core/api/fit.h"

namespace orrery::cli {

// The law, the preset's answer, or the preset list, as a table.
void PrintFitTable(const FitResult& r, std::ostream& out);

// Writes `j` as JSON or YAML (both readable by `orrery plan --law FILE`).
void PrintStructured(const nlohmann::json& j, const std::string& format, std::ostream& out);

}  // namespace orrery::cli
