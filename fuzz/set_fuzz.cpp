// `--set path=value` expressions applied to a shipped scenario, then the
// cross-checks and the closed-form estimate: the parameter registry's parsing
// and ranges against the estimator. One expression per input line.

#include <cstddef>
#include <cstdint>
#include <sstream>

#include "core/estimate/scenario.h"
#include "core/estimate/training_estimator.h"
#include "fuzz/fuzz_support.h"

using namespace orrery;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const engine::PresetStore store(fuzz::ConfigDir());
  static const engine::Scenario base = [] {
    base::Diagnostics d;
    auto s = engine::LoadScenarioFile("gpt3-175b-a100", store, d);
    fuzz::Require(s.has_value(), "the base scenario does not load: " + d.ToString());
    return *s;
  }();
  if (size > 4096) return 0;
  engine::Scenario s = base;
  std::istringstream lines(std::string(reinterpret_cast<const char*>(data), size));
  for (std::string line; std::getline(lines, line);) {
    base::Diagnostics d;
    if (!engine::ApplyOverride(s, line, d)) {
      fuzz::Require(!d.ok(), "an override rejected without a message: " + line);
      return 0;
    }
  }
  base::Diagnostics cd;
  engine::CrossCheck(s, cd);
  if (!cd.ok()) return 0;
  const engine::TrainingEstimator est(s.model, s.system);
  const engine::TrainingEstimate e = est.Run(s.training, s.workload);
  fuzz::Require(e.infeasible != engine::Infeasible::kInvalidResult, engine::ExplainInfeasible(e, s));
  return 0;
}
