// Scenario, device, system and model YAML through the loader `orrery check`,
// `estimate` and `infer` use; an accepted scenario is cross-checked and, when
// it passes, estimated. Properties: no crash or hang; a rejection is a located
// message; an accepted estimate keeps the result invariants (finite,
// non-negative times, memory and energy; fractions in [0, 1]).

#include <cstddef>
#include <cstdint>

#include "core/estimate/inference_estimator.h"
#include "core/estimate/result_invariants.h"
#include "core/estimate/scenario.h"
#include "core/estimate/training_estimator.h"
#include "fuzz/fuzz_support.h"

using namespace orrery;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const engine::PresetStore store(fuzz::ConfigDir());
  const std::string file = fuzz::AsFile(data, size, ".yaml");
  base::Diagnostics d;
  const auto kind = engine::CheckFile(file, store, d);
  if (!kind) {
    fuzz::RequireLocated(d, file);
    return 0;
  }
  if (*kind != engine::DocKind::kScenario || !d.ok()) return 0;
  base::Diagnostics ld;
  auto s = engine::LoadScenarioFile(file, store, ld);
  if (!s) {
    fuzz::RequireLocated(ld, file);
    return 0;
  }
  base::Diagnostics cd;
  engine::CrossCheck(*s, cd);
  if (!cd.ok()) return 0;
  if (s->has_training) {
    const engine::TrainingEstimator est(s->model, s->system);
    const engine::TrainingEstimate e = est.Run(s->training, s->workload);
    fuzz::Require(e.infeasible != engine::Infeasible::kInvalidResult,
                  engine::ExplainInfeasible(e, *s));
    if (e.feasible()) fuzz::Require(e.iteration_s > 0, "a feasible plan without a positive time");
  }
  if (s->inference) {
    const engine::InferenceEstimator est(s->model, s->system,
                                         s->draft_model ? &*s->draft_model : nullptr);
    const engine::InferenceEstimate e = est.Run(*s->inference);
    if (e.feasible()) {
      for (double v : {e.ttft_s, e.tpot_s, e.e2e_s, e.output_tokens_per_s, e.total_tokens_per_s,
                       e.energy_per_token_j, e.memory_capacity})
        fuzz::Require(fuzz::FiniteNonNegative(v), "an inference figure is negative or not finite");
    }
  }
  return 0;
}
