#include "core/api/estimate.h"

#include <string>

#include "core/estimate/chrome_trace.h"
#include "core/estimate/parallel_notes.h"
#include "models/transformer.h"

namespace orrery {

const char* EstimateEngineName(EstimateEngine e) {
  return e == EstimateEngine::kEvent ? "event" : "closed";
}

bool ParseEstimateEngine(std::string_view text, EstimateEngine& out) {
  if (text == "closed") out = EstimateEngine::kClosed;
  else if (text == "event") out = EstimateEngine::kEvent;
  else return false;
  return true;
}

EstimateResult Estimate(const EstimateRequest& req) {
  EstimateResult r;
  r.engine = req.engine;
  auto scenario = ResolveScenario(req.scenario, r.diagnostics);
  if (scenario) engine::CrossCheck(*scenario, r.diagnostics);
  if (scenario && r.diagnostics.ok() && !scenario->has_training)
    r.diagnostics.Add({scenario->file, 0, 0}, "scenario.training", "",
                      "the scenario has no training section (for its inference section use "
                      "orrery infer)");
  if (!scenario || !r.diagnostics.ok()) {
    r.status = Status::kInvalidInput;
    return r;
  }
  r.scenario = std::move(*scenario);
  const engine::Scenario& s = r.scenario;
  r.parameters = models::ParameterCount(s.model, s.workload.seq_len);
  if (!s.system.pools.empty()) {
    // A heterogeneous system: the closed form per pool, combined (core/hetero).
    if (req.engine == EstimateEngine::kEvent) {
      r.status = Status::kUsage;
      r.reason = "the event engine does not model device pools (system.pools); use the closed form";
      return r;
    }
    r.hetero = hetero::Evaluate(s);
    r.has_estimate = true;
    if (!r.hetero->feasible) {
      r.status = Status::kInfeasible;
      r.reason = r.hetero->reason;
    }
    return r;
  }
  if (req.engine == EstimateEngine::kClosed) {
    const engine::TrainingEstimator estimator(s.model, s.system);
    r.estimate = estimator.Run(s.training, s.workload);
  } else {
    const engine::EventEstimator estimator(s.model, s.system);
    engine::EventOptions options;
    options.keep_timeline = req.keep_timeline;
    r.event = estimator.Run(s.training, s.workload, options);
    const engine::EventEstimate& e = *r.event;
    if (e.error != engine::EventError::kNone) {
      // A plan the closed form accepts but this schedule cannot run: the
      // input names a schedule or straggler the pipeline does not have.
      const bool straggler = e.error == engine::EventError::kStraggler;
      std::string rule = engine::ExplainEventError(e, s);
      if (e.step_error == parallelism::StepError::kInterleaveMultiple)
        rule += " (" + std::to_string(e.estimate.microbatches) + " microbatches, pp " +
                std::to_string(s.training.pp) + ")";
      r.diagnostics.Add({s.file, 0, 0},
                        straggler ? "training.straggler_stage" : "training.schedule",
                        straggler ? std::to_string(s.training.straggler_stage)
                                  : parallelism::PipelineScheduleName(e.schedule),
                        rule);
      r.status = Status::kInvalidInput;
      return r;
    }
    r.estimate = e.estimate;
  }
  r.has_estimate = true;
  r.notes = engine::ParallelNotes(s, r.estimate);
  if (req.operator_breakdown && r.estimate.iteration_s > 0) {
    const engine::TrainingEstimator estimator(s.model, s.system);
    const engine::TrainingEstimate& closed = r.event ? r.event->closed_form : r.estimate;
    r.ops = estimator.Breakdown(s.training, s.workload, closed);
  }
  if (!r.estimate.feasible()) {
    r.status = Status::kInfeasible;
    r.reason = engine::ExplainInfeasible(r.estimate, s);
    return r;
  }
  r.goodput = goodput::Evaluate(goodput::MakeInputs(s.system, s.training, r.parameters,
                                                    r.estimate.iteration_s,
                                                    r.estimate.train_time_s));
  if (req.goodput_runs > 0 && r.estimate.train_time_s > 0)
    r.goodput_mc = goodput::Simulate(*r.goodput, req.goodput_runs, req.goodput_seed);
  return r;
}

bool WriteChromeTrace(const EstimateResult& r, std::ostream& out) {
  if (!r.event || !r.event->simulated() || r.event->timeline.start.empty()) return false;
  engine::WriteChromeTrace(r.event->graph, r.event->timeline, r.scenario.name, out);
  return static_cast<bool>(out);
}

}  // namespace orrery
