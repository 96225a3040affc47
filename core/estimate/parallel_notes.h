#pragma once
// Plain sentences on where a plan's expert- and context-parallel groups sit
// on the network tiers, what their exchanges cost, and why the context-
// parallel scheme is the one it is. For the faces (search and estimate
// output); not on the hot path.

#include <string>
#include <vector>

#include "core/estimate/scenario.h"
#include "core/estimate/training_estimator.h"

namespace orrery::engine {

// Empty for a plan with ep = 1 and cp = 1, or one Run() refused before
// costing (bad split, no network).
std::vector<std::string> ParallelNotes(const Scenario& s, const TrainingEstimate& e);

}  // namespace orrery::engine
