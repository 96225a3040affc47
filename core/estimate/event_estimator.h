#pragma once
// The event-driven training estimator: replays one iteration of one
// data-parallel replica as tasks on streams (parallelism/step_graph.h) with
// the durations the closed-form estimator computes (TrainingEstimator::Costs),
// so that the pipeline schedule, overlap and imbalance are simulated instead
// of assumed:
//   - layers split over stages as the plan says (uneven when L is not a
//     multiple of pp, or with first/last_stage_layers), the embedding on the
//     first stage and the LM head and loss on the last only;
//   - a straggler stage (training.straggler_stage / straggler_slowdown);
//   - DP gradient buckets during the last backward, ZeRO-1/2 parameter
//     gathers during the first forward, ZeRO-3 per-pass gathers with
//     prefetch, TP collectives exposed or beside the GEMMs, synchronous p2p.
// Memory, FLOPs and feasibility come from the closed form; time, and the
// metrics that follow from it, from the simulation.
//
// Not the hot path: a run builds a graph of O(stages x chunks x microbatches)
// tasks. Costs ~0.2-0.5 us per task on one core (see `orrery bench --engine event`).

#include <cstdint>
#include <vector>

#include "core/base/event_queue.h"
#include "core/estimate/training_estimator.h"
#include "parallelism/step_graph.h"

namespace orrery::engine {

struct EventOptions {
  // Keep the task graph and the timeline in the result (for a trace).
  bool keep_timeline = false;
  // Give every stage the cost of the closed form's pace-setting stage (its
  // assumption): what the agreement test compares. Off for estimates.
  bool uniform_stages = false;
};

// Why the event engine cannot simulate a plan the closed form accepts.
enum class EventError {
  kNone,
  kSchedule,        // the schedule cannot run this shape (see step_error)
  kStraggler,       // straggler_stage is not a stage of the pipeline
  kDeadlock,        // the simulation did not finish (an internal error)
};

struct EventEstimate {
  TrainingEstimate closed_form;   // the closed form, as is
  TrainingEstimate estimate;      // memory and FLOPs from it; time simulated
  EventError error = EventError::kNone;
  parallelism::StepError step_error = parallelism::StepError::kNone;
  bool simulated() const { return error == EventError::kNone && step.complete; }
  parallelism::PipelineSchedule schedule = parallelism::PipelineSchedule::kOneFOneB;
  parallelism::StepResult step;   // per-stage busy/idle, bubble, in-flight activations
  std::vector<double> stage_layers;  // transformer layers per pipeline device
  double simulate_s = 0;          // wall time: build + simulate + analyse
  // With EventOptions::keep_timeline:
  parallelism::StepGraph graph;
  base::Timeline timeline;
};

// One sentence on why the event engine could not simulate (empty when it did).
std::string ExplainEventError(const EventEstimate& e, const Scenario& s);

class EventEstimator {
 public:
  // Borrows the model and system; they must outlive the estimator.
  EventEstimator(const models::ModelSpec& model, const hardware::SystemSpec& system);
  // Keeps references to both: temporaries would dangle (as TrainingEstimator).
  EventEstimator(models::ModelSpec&&, const hardware::SystemSpec&) = delete;
  EventEstimator(const models::ModelSpec&, hardware::SystemSpec&&) = delete;

  EventEstimate Run(const parallelism::TrainingPlan& plan, const parallelism::Workload& workload,
                    const EventOptions& options = {}) const;

  // The step of `plan` as the simulator sees it (also what Run() simulates).
  // Returns kNone and fills `out`, or the reason it cannot.
  EventError Spec(const parallelism::TrainingPlan& plan, const parallelism::Workload& workload,
                  const EventOptions& options, parallelism::StepSpec& out,
                  std::vector<double>* stage_layers = nullptr) const;

  const TrainingEstimator& closed_form() const { return closed_; }

 private:
  const models::ModelSpec& model_;
  const hardware::SystemSpec& system_;
  TrainingEstimator closed_;
};

// The step-graph schedule a plan runs (interleave > 1 selects interleaved
// 1F1B, as in the closed form).
parallelism::PipelineSchedule StepSchedule(const parallelism::TrainingPlan& plan);

}  // namespace orrery::engine
