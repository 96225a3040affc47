#pragma once
// orrery::Estimate: one training iteration of a scenario, with the closed
// form (microseconds; assumes the schedule's bubble and perfect overlap) or
// the event engine (replays the iteration of one data-parallel replica as
// tasks on streams with the same costs; core/estimate/event_estimator.h).
//
//   orrery::EstimateRequest req;
//   req.scenario = orrery::ScenarioInput::File("gpt3-175b-a100", {"training.pp=16"});
//   orrery::EstimateResult r = orrery::Estimate(req);
//   // r.status: kOk, kInfeasible (r.reason says why), kInvalidInput (r.diagnostics)
//   double step_s = r.estimate.iteration_s;

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/api/common.h"
#include "core/estimate/event_estimator.h"
#include "core/estimate/training_estimator.h"
#include "core/goodput/goodput.h"
#include "core/hetero/hetero.h"

namespace orrery {

enum class EstimateEngine { kClosed, kEvent };
const char* EstimateEngineName(EstimateEngine e);
// "closed" or "event"; false otherwise.
bool ParseEstimateEngine(std::string_view text, EstimateEngine& out);

struct EstimateRequest {
  ScenarioInput scenario;
  EstimateEngine engine = EstimateEngine::kClosed;
  // Event engine: keep the task graph and timeline so that WriteChromeTrace
  // can export the step (costs memory proportional to the tasks).
  bool keep_timeline = false;
  // Goodput's Monte-Carlo (core/goodput/goodput.h): whole training runs
  // (workload.train_tokens) drawn with failures; 0 = the closed form only.
  int64_t goodput_runs = 0;
  uint64_t goodput_seed = 1;
  // Where the time goes per operator (engine::TrainingEstimator::Breakdown):
  // each operator of one layer, the LM head and the embedding, forward and
  // backward per microbatch, and each kind of communication, traffic against
  // exposed. Priced apart from the estimate, only when asked.
  bool operator_breakdown = false;
};

struct EstimateResult : ResultBase {
  engine::Scenario scenario;          // as loaded, overridden and checked
  EstimateEngine engine = EstimateEngine::kClosed;
  // The estimate shown: the closed form's, or with the event engine the
  // simulated one (time from the simulation, memory and FLOPs from the
  // closed form).
  engine::TrainingEstimate estimate;
  std::optional<engine::EventEstimate> event;  // with EstimateEngine::kEvent
  bool has_estimate = false;                   // false when the input was invalid
  // Failures, checkpoints and stragglers over the step time (a feasible
  // estimate); effective time when workload.train_tokens is given.
  std::optional<goodput::Result> goodput;
  std::optional<goodput::MonteCarlo> goodput_mc;  // with goodput_runs > 0 and train_tokens
  double parameters = 0;                       // the model's parameter count
  // Where the plan's expert- and context-parallel groups sit and why its CP
  // scheme (engine::ParallelNotes); empty without EP or CP.
  std::vector<std::string> notes;
  // A system with device pools (system.pools): the pools' split, costed by
  // core/hetero; `estimate` is then left empty.
  std::optional<hetero::Result> hetero;
  // With EstimateRequest::operator_breakdown, for an estimate with times
  // (the closed form's, also under the event engine).
  std::optional<engine::OperatorBreakdown> ops;
};

// Loads, overrides and cross-checks the scenario, then estimates. Status:
// kOk; kInfeasible with `reason` when the plan does not fit (the figures are
// still filled where they can be); kInvalidInput with located diagnostics.
EstimateResult Estimate(const EstimateRequest& req);

// Writes the simulated step as Chrome trace-event JSON (ui.perfetto.dev,
// chrome://tracing). Needs an event estimate made with keep_timeline; false
// when there is none.
bool WriteChromeTrace(const EstimateResult& r, std::ostream& out);

}  // namespace orrery
