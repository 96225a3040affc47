#pragma once
// Presenting an event-driven estimate: the closed-form fields (README.md
// "Estimate output") with time from the simulation, plus the event engine's
// own: schedule, per-stage busy/idle, bubble, peak in-flight activations.

#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/cli_common.h"
#include "core/estimate/event_estimator.h"

namespace orrery::cli {

nlohmann::ordered_json EventJson(const engine::Scenario& s, const engine::EventEstimate& e);
void PrintEventEstimate(const engine::Scenario& s, const engine::EventEstimate& e, Format f,
                        std::ostream& out);

}  // namespace orrery::cli
