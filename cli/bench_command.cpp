// `orrery bench`: how fast the estimators run on one core. Parses options,
// calls orrery::Bench or orrery::BenchEvent, presents.

#include "cli/cli_common.h"
#include "core/api/bench.h"
#include "core/api/json.h"
#include "core/base/format.h"

namespace orrery::cli {

namespace po = boost::program_options;
using namespace base;  // the Format* functions

namespace {

int RunEventBench(const Args& args, std::ostream& out, std::ostream& err) {
  VerbOptions v("bench --engine event",
      "orrery bench --engine event [--stages P] [--microbatches M] [--interleave V]\n"
      "             [--schedule NAME] [--repeat N] [--format table|json|csv]\n\n"
      "Times the event-driven engine on one core: builds the task graph of one iteration of a\n"
      "P-stage pipeline with M microbatches and V chunks per device, simulates it and analyses\n"
      "the timeline (busy/idle, bubble, in-flight activations per stage). Each pass is one\n"
      "task (F 10 ms, B 20 ms per stage, split over the chunks but dualpipe's, whole stages;\n"
      "W = half of B for zb-h1, the V-shapes and dualpipe's zero-bubble passes), each\n"
      "stage-to-stage send one task (50 us), plus 4 gradient buckets overlapping the last\n"
      "backward and the optimizer step per stage. Prints the best of N\n"
      "runs: tasks, events (task completions), wall time, simulated events per second, and\n"
      "the CPU time of that run (on a loaded machine wall time also counts other processes).");
  EventBenchRequest req;
  std::string engine = "event";
  v.Formats();
  v.add_options()("engine", po::value(&engine), "event (closed: see orrery bench)")(
      "stages", po::value(&req.stages), "pipeline stages P (default 64)")(
      "microbatches", po::value(&req.microbatches), "microbatches per iteration M (default 1024)")(
      "interleave", po::value(&req.interleave), "chunks per device V (default 2)")(
      "schedule", po::value(&req.schedule), "gpipe | 1f1b | interleaved | zb-h1 | v-min | v-half | v-zb | dualpipe")(
      "repeat", po::value(&req.repeat), "runs; the fastest is reported (default 3)");
  v.Examples(
      "\nExamples:\n"
      "  orrery bench --engine event                      # p 64, m 1024, v 2 (interleaved)\n"
      "  orrery bench --engine event --stages 8 --microbatches 64 --interleave 1\n"
      "  orrery bench --engine event --schedule v-half --stages 16 --microbatches 256\n");
  if (const int code = v.Parse(args, out, err); code >= 0) return code;
  const EventBenchResult r = BenchEvent(req);
  if (r.status == Status::kUsage) return v.Usage(err, r.reason);
  if (!r.ok()) return v.Report(r, err);
  if (v.format() == Format::kJson) out << ToJson(r).dump(2) << "\n";
  else if (v.format() == Format::kCsv) WriteCsv(ToJson(r), out);
  else {
    const double events = static_cast<double>(r.events);
    out << "event engine    " << r.schedule << ", " << r.stages << " stages x " << r.microbatches
        << " microbatches x " << r.chunks << " chunks, one thread\n"
        << "graph           " << FormatCount(static_cast<double>(r.tasks), "tasks") << ", "
        << FormatCount(static_cast<double>(r.dependencies), "dependencies") << "\n"
        << "build           " << FormatTime(r.build_s) << "\n"
        << "simulate        " << FormatTime(r.simulate_s) << "  ("
        << FormatRate(events / r.simulate_s, "events") << ")\n"
        << "analyse         " << FormatTime(r.analyze_s) << "\n"
        << "wall            " << FormatTime(r.wall_s) << "  (" << FormatRate(events / r.wall_s, "events")
        << " end to end; best of " << r.repeat << ")\n"
        << "cpu             " << FormatTime(r.cpu_s) << "  (this thread, the same run)\n"
        << "(simulated iteration " << FormatTime(r.simulated_iteration_s) << ", bubble "
        << FormatPercent(r.bubble_fraction) << ")\n";
  }
  return kExitOk;
}

}  // namespace

int RunBench(const Args& args, std::ostream& out, std::ostream& err) {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--engine=event" || (args[i] == "--engine" && i + 1 < args.size() && args[i + 1] == "event"))
      return RunEventBench(args, out, err);
  VerbOptions v("bench",
      "orrery bench [SCENARIO] [--seconds S]\n\n"
      "Times TrainingEstimator::Run on one core (one thread) over varying plans of the\n"
      "scenario (default: GPT-3 175B on 1024 A100, configs/scenarios/gpt3-175b-1024-a100.yaml)\n"
      "and prints estimates per second, from scratch and against a workload prepared once\n"
      "per micro-batch (half of --seconds each), per second of wall time and per second of\n"
      "this thread's CPU time (the figure to compare on a loaded machine).\n"
      "orrery bench --engine event --help: the event-driven engine's speed instead.");
  BenchRequest req;
  std::string engine = "closed";
  v.Positional("scenario").Formats();
  v.add_options()("seconds", po::value(&req.seconds), "how long to run (default 2)")(
      "engine", po::value(&engine), "closed (default) | event");
  if (const int code = v.Parse(args, out, err); code >= 0) return code;
  if (engine != "closed") return v.Usage(err, "--engine '" + engine + "': must be closed or event");
  if (v.Has("scenario")) req.scenario = ScenarioInput::File(v.Arg("scenario"));
  const BenchResult r = Bench(req);
  if (r.status == Status::kUsage) return v.Usage(err, "--" + r.reason);
  if (!r.ok()) return v.Report(r, err);
  if (v.format() == Format::kJson) out << ToJson(r).dump(2) << "\n";
  else if (v.format() == Format::kCsv) WriteCsv(ToJson(r), out);
  else
    out << "scenario        " << r.scenario << " (" << r.model << ", " << r.devices << " x " << r.device
        << ")\n"
        << "estimates       " << FormatCount(static_cast<double>(r.estimates)) << " in "
        << FormatTime(r.elapsed_s) << " on one thread\n"
        << "rate            " << FormatRate(static_cast<double>(r.estimates) / r.elapsed_s, "estimates")
        << "\n"
        << "per estimate    " << FormatTime(r.elapsed_s / static_cast<double>(r.estimates)) << "\n"
        << "prepared        "
        << FormatRate(static_cast<double>(r.prepared_estimates) / r.prepared_elapsed_s, "estimates")
        << " (" << FormatTime(r.prepared_elapsed_s / static_cast<double>(r.prepared_estimates))
        << " each: workload prepared once per micro-batch, as a search runs a block)\n"
        << "per CPU second  "
        << FormatRate(r.cpu_s > 0 ? static_cast<double>(r.estimates) / r.cpu_s : 0.0, "estimates")
        << " from scratch, "
        << FormatRate(r.prepared_cpu_s > 0 ? static_cast<double>(r.prepared_estimates) / r.prepared_cpu_s : 0.0,
                      "estimates")
        << " prepared (this thread's CPU time: on a loaded machine\n"
        << "                wall time also counts other processes)\n"
        << "(checksum " << FormatTime(r.mean_iteration_s) << " mean iteration)\n";
  return kExitOk;
}

}  // namespace orrery::cli
