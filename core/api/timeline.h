#pragma once
// orrery::StepTimeline: the event engine's simulated step as a list of
// tasks a face can draw (one row per pipeline stage and stream: compute,
// TP, PP point-to-point, DP), from an orrery::Estimate made with the event
// engine and keep_timeline (core/api/estimate.h). The same tasks are what
// orrery::WriteChromeTrace writes for ui.perfetto.dev.
//
//   orrery::EstimateRequest req;
//   req.scenario = orrery::ScenarioInput::File("gpt3-175b-a100");
//   req.engine = orrery::EstimateEngine::kEvent;
//   req.keep_timeline = true;
//   orrery::StepTimeline t = orrery::Timeline(orrery::Estimate(req));

#include <string>
#include <vector>

#include "core/api/estimate.h"
#include "parallelism/step_graph.h"

namespace orrery {

using parallelism::StreamKind;
using parallelism::TaskKind;
inline constexpr int kStreamsPerStage = parallelism::kStreamsPerStage;

struct TimelineTask {
  int stage = 0;
  StreamKind stream = StreamKind::kCompute;
  double start_s = 0, finish_s = 0;  // from the start of the step
  std::string name;                  // "F mb12 c1", "grad reduce #2", ... (as in the Chrome trace)
  TaskKind kind = TaskKind::kForward;
};

struct StepTimeline {
  bool ok = false;
  std::string error;                 // why there is no timeline (the estimate's reason or error)
  std::vector<TimelineTask> tasks;   // tasks that take time, in task order
  int stages = 0;
  double makespan_s = 0;             // the simulated step
  double closed_form_s = 0;          // the closed form's step, for comparison
  double bubble_fraction = 0;        // of the critical stage
  std::string schedule;              // "1f1b", "interleaved", ...
};

// The tasks of `r`'s simulated step. Not ok (with the reason) when `r` is
// not an event estimate kept with its timeline, or was not simulated.
StepTimeline Timeline(const EstimateResult& r);

// "compute", "TP", "PP", "DP": the row label of a stream.
const char* StreamLabel(StreamKind s);

}  // namespace orrery
