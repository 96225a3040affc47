// `orrery bench --engine event`: how fast the event-driven engine simulates a
// large pipeline step on one core.

#include <boost/program_options.hpp>
#include <chrono>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "core/base/event_queue.h"
#include "core/base/quantity.h"
#include "parallelism/step_graph.h"

namespace orrery::cli {

namespace po = boost::program_options;

int RunEventBench(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery bench --engine event [--stages P] [--microbatches M] [--interleave V]\n"
      "             [--schedule NAME] [--repeat N] [--format table|json|csv]\n\n"
      "Times the event-driven engine on one core: builds the task graph of one iteration of a\n"
      "P-stage pipeline with M microbatches and V chunks per device, simulates it and analyses\n"
      "the timeline (busy/idle, bubble, in-flight activations per stage). Each pass is one\n"
      "task (F 10 ms, B 20 ms per stage, split over the chunks; W = half of B for zb-h1 and\n"
      "the V-shapes), each stage-to-stage send one task (50 us), plus 4 gradient buckets\n"
      "overlapping the last backward and the optimizer step per stage. Prints the best of N\n"
      "runs: tasks, events (task completions), wall time and simulated events per second.\n\n"
      "Examples:\n"
      "  orrery bench --engine event                      # p 64, m 1024, v 2 (interleaved)\n"
      "  orrery bench --engine event --stages 8 --microbatches 64 --interleave 1\n"
      "  orrery bench --engine event --schedule v-half --stages 16 --microbatches 256\n\noptions");
  std::string engine = "event", schedule = "interleaved", format = "table";
  int64_t stages = 64, microbatches = 1024, interleave = 2, repeat = 3;
  opts.add_options()("help,h", "show this help")("engine", po::value(&engine), "event (closed: see orrery bench)")(
      "stages", po::value(&stages), "pipeline stages P (default 64)")(
      "microbatches", po::value(&microbatches), "microbatches per iteration M (default 1024)")(
      "interleave", po::value(&interleave), "chunks per device V (default 2)")(
      "schedule", po::value(&schedule), "gpipe | 1f1b | interleaved | zb-h1 | v-min | v-half | v-zb")(
      "repeat", po::value(&repeat), "runs; the fastest is reported (default 3)")(
      "format", po::value(&format), "table | json | csv");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see orrery bench --engine event --help)\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts;
    return kExitOk;
  }
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  using parallelism::PipelineSchedule;
  const PipelineSchedule all[] = {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB,
                                  PipelineSchedule::kInterleaved, PipelineSchedule::kZeroBubbleH1,
                                  PipelineSchedule::kVMin, PipelineSchedule::kVHalf,
                                  PipelineSchedule::kVZeroBubble};
  PipelineSchedule sched = PipelineSchedule::kInterleaved;
  bool known = false;
  std::vector<std::string> names;
  for (const auto s : all) {
    names.push_back(parallelism::PipelineScheduleName(s));
    if (schedule == names.back()) {
      sched = s;
      known = true;
    }
  }
  if (!known) {
    const std::string hint = base::DidYouMean(schedule, names);
    err << "error: --schedule '" << schedule << "': not a schedule" << (hint.empty() ? "" : "; " + hint)
        << " (see orrery bench --engine event --help)\n";
    return kExitUsage;
  }
  if (stages < 1 || stages > 4096 || microbatches < 1 || microbatches > 1 << 20 || interleave < 1 ||
      interleave > 64 || repeat < 1 || repeat > 100) {
    err << "error: need 1 <= stages <= 4096, 1 <= microbatches <= 1048576, 1 <= interleave <= 64, "
           "1 <= repeat <= 100\n";
    return kExitUsage;
  }

  parallelism::StepSpec spec;
  spec.stages = stages;
  spec.microbatches = microbatches;
  spec.schedule = sched;
  spec.chunks = sched == PipelineSchedule::kGpipe || sched == PipelineSchedule::kOneFOneB ||
                        sched == PipelineSchedule::kZeroBubbleH1
                    ? 1
                    : (sched == PipelineSchedule::kInterleaved ? interleave : 2);
  const double v = static_cast<double>(spec.chunks);
  parallelism::ChunkWork w;
  w.forward = 10e-3 / v;
  w.backward = 20e-3 / v;
  w.backward_weight = 10e-3 / v;
  w.activation_bytes = 1e9 / v;
  spec.work.assign(static_cast<size_t>(spec.stages * spec.chunks), w);
  parallelism::StageDp dp;
  dp.grad_reduce = 100e-3;
  dp.buckets = 4;
  dp.optimizer = 5e-3;
  spec.dp.assign(static_cast<size_t>(spec.stages), dp);
  spec.p2p = 50e-6;

  using clock = std::chrono::steady_clock;
  double best_build = 1e300, best_sim = 1e300, best_analyze = 1e300, best_total = 1e300;
  parallelism::StepResult result;
  size_t deps = 0;
  base::Simulator sim;
  base::Timeline timeline;
  for (int64_t k = 0; k < repeat; ++k) {
    const auto t0 = clock::now();
    parallelism::StepGraph g;
    const parallelism::StepError e = parallelism::BuildStepGraph(spec, g);
    if (e != parallelism::StepError::kNone) {
      err << "error: " << parallelism::StepErrorText(e) << "\n";
      return kExitInvalid;
    }
    const auto t1 = clock::now();
    sim.Run(g.graph, timeline);
    const auto t2 = clock::now();
    result = parallelism::Analyze(g, timeline);
    const auto t3 = clock::now();
    deps = g.graph.dependency_count();
    const double build = std::chrono::duration<double>(t1 - t0).count();
    const double simulate = std::chrono::duration<double>(t2 - t1).count();
    const double analyze = std::chrono::duration<double>(t3 - t2).count();
    if (build + simulate + analyze < best_total) {
      best_total = build + simulate + analyze;
      best_build = build;
      best_sim = simulate;
      best_analyze = analyze;
    }
  }
  if (!result.complete) {
    err << "error: the simulated step did not finish (an internal error)\n";
    return kExitInvalid;
  }
  const double events = static_cast<double>(result.events);
  nlohmann::ordered_json j;
  j["schedule"] = parallelism::PipelineScheduleName(sched);
  j["stages"] = spec.stages;
  j["microbatches"] = spec.microbatches;
  j["chunks"] = spec.chunks;
  j["tasks"] = result.tasks;
  j["dependencies"] = deps;
  j["events"] = result.events;
  j["build_s"] = best_build;
  j["simulate_s"] = best_sim;
  j["analyze_s"] = best_analyze;
  j["wall_s"] = best_total;
  j["events_per_s"] = events / best_sim;
  j["events_per_s_end_to_end"] = events / best_total;
  j["simulated_iteration_s"] = result.iteration;
  j["bubble_fraction"] = result.bubble_fraction;
  if (fmt == Format::kJson) {
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  if (fmt == Format::kCsv) {
    std::string header, row;
    for (auto it = j.begin(); it != j.end(); ++it) {
      header += (header.empty() ? "" : ",") + it.key();
      row += (row.empty() ? "" : ",") + (it->is_string() ? it->get<std::string>() : it->dump());
    }
    out << header << "\n" << row << "\n";
    return kExitOk;
  }
  using base::Dimension;
  using base::FormatQuantity;
  out << "event engine    " << j["schedule"].get<std::string>() << ", " << spec.stages << " stages x "
      << spec.microbatches << " microbatches x " << spec.chunks << " chunks, one thread\n"
      << "graph           " << result.tasks << " tasks, " << deps << " dependencies\n"
      << "build           " << FormatQuantity(best_build, Dimension::kTime) << "\n"
      << "simulate        " << FormatQuantity(best_sim, Dimension::kTime) << "  ("
      << base::FormatNumber(events / best_sim, 4) << " events/s)\n"
      << "analyse         " << FormatQuantity(best_analyze, Dimension::kTime) << "\n"
      << "wall            " << FormatQuantity(best_total, Dimension::kTime) << "  ("
      << base::FormatNumber(events / best_total, 4) << " events/s end to end; best of " << repeat
      << ")\n"
      << "(simulated iteration " << FormatQuantity(result.iteration, Dimension::kTime) << ", bubble "
      << base::FormatNumber(100 * result.bubble_fraction, 3) << " %)\n";
  return kExitOk;
}

}  // namespace orrery::cli
