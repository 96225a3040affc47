#pragma once
// The timeline of one simulated step as a Chrome trace-event file
// ("Trace Event Format", the JSON object form with a `traceEvents` array)
// that Perfetto (ui.perfetto.dev) and chrome://tracing open:
//   - one process per pipeline stage ("stage 3"), one thread per stream
//     ("compute", "tp", "pp", "dp"), named with metadata ("M") events;
//   - one complete ("X") event per task with work in it: name ("F mb12 c1",
//     "B mb3", "W mb3", "R mb3", "TP mb3", "send mb3", "grad reduce #2",
//     "param gather mb3", "optimizer"), category (the task kind), start `ts`
//     and `dur` in microseconds, and args {microbatch, chunk}.
// Events are written in program order, so each track's events are in time
// order.

#include <ostream>
#include <string>

#include "core/base/event_queue.h"
#include "parallelism/step_graph.h"

namespace orrery::engine {

// Writes the trace. `title` goes to the file's metadata.
void WriteChromeTrace(const parallelism::StepGraph& g, const base::Timeline& t,
                      const std::string& title, std::ostream& out);

// The trace-event name of task `i`.
std::string TraceName(const parallelism::StepGraph& g, int32_t i);

}  // namespace orrery::engine
