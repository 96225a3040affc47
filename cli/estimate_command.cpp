// `orrery estimate`: one training iteration, closed form or event-driven.

#include <boost/program_options.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/estimate_output.h"
#include "cli/event_output.h"
#include "core/estimate/chrome_trace.h"
#include "core/estimate/event_estimator.h"
#include "core/estimate/training_estimator.h"

namespace orrery::cli {

namespace po = boost::program_options;

int RunEstimate(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery estimate SCENARIO.yaml [--set PATH=VALUE]... [--format table|json|csv]\n"
      "                [--engine closed|event] [--trace FILE]\n\n"
      "Predicts one training iteration of the scenario: time and where it goes,\n"
      "memory per device, MFU/HFU, tokens/s, and (with workload.train_tokens) days,\n"
      "GPU-hours, energy and cost. SCENARIO is a file or a scenario preset name.\n\n"
      "--engine closed (the default) uses the closed form: microseconds, assumes the\n"
      "schedule's bubble and perfect overlap. --engine event replays the iteration of one\n"
      "data-parallel replica as tasks on each stage's compute, TP, p2p and DP streams with the\n"
      "same operator and collective costs: the schedule (training.schedule: 1f1b, interleaved,\n"
      "gpipe, zb-h1, v-min, v-half, v-zb), uneven layers, embedding and LM head on the end\n"
      "stages, a straggler (training.straggler_stage, training.straggler_slowdown), DP buckets\n"
      "and ZeRO gathers overlapping compute. It adds per-stage busy/idle time, bubble and peak\n"
      "in-flight activations, and --trace writes the step for ui.perfetto.dev or\n"
      "chrome://tracing.\n\noptions");
  std::string format = "table";
  std::vector<std::string> sets;
  std::string engine_name = "closed", trace;
  opts.add_options()("help,h", "show this help")(
      "set", po::value(&sets)->composing(),
      "override one parameter, e.g. --set training.tp=4 --set 'system.device.memory_capacity=141 GB'"
      " (orrery explain lists the paths)")("format", po::value(&format), "table | json | csv")(
      "engine", po::value(&engine_name), "closed (default) | event")(
      "trace", po::value(&trace),
      "write the simulated step as Chrome trace-event JSON to FILE (implies --engine event)");
  po::options_description hidden;
  hidden.add_options()("scenario", po::value<std::string>(), "");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  try {
    po::options_description all;
    all.add(opts).add(hidden);
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see orrery estimate --help)\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts
        << "\nExamples:\n  orrery estimate configs/scenarios/gpt3-175b-a100.yaml\n"
           "  orrery estimate gpt3-175b-a100 --set training.recompute=full --format json\n"
           "  orrery estimate gpt3-175b-a100 --engine event --trace step.json\n"
           "  orrery estimate gpt3-175b-a100 --engine event --set training.straggler_stage=3 \\\n"
           "      --set training.straggler_slowdown=1.2\n"
           "  orrery estimate gpt3-175b-a100 --engine event --set training.schedule=v-half "
           "--set training.interleave=2\n";
    return kExitOk;
  }
  if (!vm.count("scenario")) {
    err << "error: missing SCENARIO (see orrery estimate --help)\n";
    return kExitUsage;
  }
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  if (engine_name != "closed" && engine_name != "event") {
    err << "error: --engine '" << engine_name << "': must be closed or event"
        << (engine_name.rfind("ev", 0) == 0 ? "; did you mean 'event'?" : "")
        << " (see orrery estimate --help)\n";
    return kExitUsage;
  }
  if (!trace.empty() && vm.count("engine") && engine_name == "closed") {
    err << "error: --trace needs the event engine; the closed form has no timeline"
           " (see orrery estimate --help)\n";
    return kExitUsage;
  }
  const bool event = engine_name == "event" || !trace.empty();
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  base::Diagnostics diags;
  auto scenario = engine::LoadScenarioFile(vm["scenario"].as<std::string>(), store, diags);
  if (scenario)
    for (const auto& s : sets) engine::ApplyOverride(*scenario, s, diags);
  if (scenario && diags.ok()) engine::CrossCheck(*scenario, diags);
  if (!scenario || !diags.ok()) {
    PrintDiagnostics(diags, err);
    return kExitInvalid;
  }
  if (!scenario->has_training) {
    err << "error: " << scenario->file
        << ": the scenario has no training section (for its inference section use orrery infer)\n";
    return kExitInvalid;
  }
  if (event) {
    const engine::EventEstimator estimator(scenario->model, scenario->system);
    engine::EventOptions options;
    options.keep_timeline = !trace.empty();
    const engine::EventEstimate e = estimator.Run(scenario->training, scenario->workload, options);
    if (e.error != engine::EventError::kNone) {
      const bool straggler = e.error == engine::EventError::kStraggler;
      err << scenario->file << ": error: "
          << (straggler ? "training.straggler_stage" : "training.schedule") << ": value '"
          << (straggler ? std::to_string(scenario->training.straggler_stage)
                        : parallelism::PipelineScheduleName(e.schedule))
          << "': " << engine::ExplainEventError(e, *scenario);
      if (e.step_error == parallelism::StepError::kInterleaveMultiple)
        err << " (" << e.estimate.microbatches << " microbatches, pp " << scenario->training.pp << ")";
      err << "\n";
      return kExitInvalid;
    }
    if (!trace.empty() && e.simulated()) {
      std::ofstream file(trace);
      if (file) engine::WriteChromeTrace(e.graph, e.timeline, scenario->name, file);
      if (!file) {
        err << "error: --trace " << trace << ": cannot write the file\n";
        return kExitInvalid;
      }
    }
    PrintEventEstimate(*scenario, e, fmt, out);
    if (!trace.empty() && e.simulated() && fmt == Format::kTable)
      out << "trace: " << trace << " (" << e.step.tasks << " tasks; open in ui.perfetto.dev)\n";
    return kExitOk;
  }
  const engine::TrainingEstimator estimator(scenario->model, scenario->system);
  const engine::TrainingEstimate e = estimator.Run(scenario->training, scenario->workload);
  PrintEstimate(*scenario, e, fmt, out);
  return kExitOk;
}

}  // namespace orrery::cli
