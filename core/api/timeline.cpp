#include "core/api/timeline.h"

#include "core/estimate/chrome_trace.h"

namespace orrery {

StepTimeline Timeline(const EstimateResult& r) {
  StepTimeline t;
  if (!r.diagnostics.ok()) {
    t.error = r.diagnostics.items().front().message;
    return t;
  }
  if (!r.event) {
    t.error = "not an event-engine estimate (EstimateEngine::kEvent)";
    return t;
  }
  const engine::EventEstimate& e = *r.event;
  t.schedule = parallelism::PipelineScheduleName(e.schedule);
  t.closed_form_s = e.closed_form.iteration_s;
  if (!r.reason.empty()) {
    t.error = r.reason;
    return t;
  }
  if (!e.simulated() || e.timeline.start.size() != e.graph.info.size()) {
    t.error = "the step was not simulated with its timeline kept (keep_timeline)";
    return t;
  }
  t.ok = true;
  t.stages = static_cast<int>(e.graph.stages);
  t.makespan_s = e.timeline.makespan;
  t.bubble_fraction = e.step.bubble_fraction;
  const size_t n = e.graph.info.size();
  t.tasks.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const double a = e.timeline.start[i], b = e.timeline.finish[i];
    if (!(b > a)) continue;  // joins and empty tasks
    const auto& info = e.graph.info[i];
    t.tasks.push_back({info.stage, info.stream, a, b, engine::TraceName(e.graph, static_cast<int32_t>(i)), info.kind});
  }
  return t;
}

const char* StreamLabel(StreamKind s) { return parallelism::StreamName(s); }

}  // namespace orrery
