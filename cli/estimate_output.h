#pragma once
// Presenting a training estimate as a table, JSON or CSV. Field names of the
// JSON and CSV forms are documented in README.md ("Estimate output").

#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/cli_common.h"
#include "core/estimate/training_estimator.h"

namespace orrery::cli {

nlohmann::ordered_json EstimateJson(const engine::Scenario& s, const engine::TrainingEstimate& e);
// One CSV header line and one row: the JSON flattened, keys joined with '.',
// cells quoted when they hold a comma, quote or newline.
void PrintJsonAsCsvRow(const nlohmann::ordered_json& j, std::ostream& out);
void PrintEstimate(const engine::Scenario& s, const engine::TrainingEstimate& e, Format f,
                   std::ostream& out);

}  // namespace orrery::cli
