// `orrery estimate`: one training iteration, closed form.

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/estimate_output.h"
#include "core/engine/training_estimator.h"

namespace orrery::cli {

namespace po = boost::program_options;

int RunEstimate(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery estimate SCENARIO.yaml [--set PATH=VALUE]... [--format table|json|csv]\n\n"
      "Predicts one training iteration of the scenario: time and where it goes,\n"
      "memory per device, MFU/HFU, tokens/s, and (with workload.train_tokens) days,\n"
      "GPU-hours, energy and cost. SCENARIO is a file or a scenario preset name.\n\noptions");
  std::string format = "table";
  std::vector<std::string> sets;
  opts.add_options()("help,h", "show this help")(
      "set", po::value(&sets)->composing(),
      "override one parameter, e.g. --set training.tp=4 --set 'system.device.memory_capacity=141 GB'"
      " (orrery explain lists the paths)")("format", po::value(&format), "table | json | csv");
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
           "  orrery estimate gpt3-175b-a100 --set training.recompute=full --format json\n";
    return kExitOk;
  }
  if (!vm.count("scenario")) {
    err << "error: missing SCENARIO (see orrery estimate --help)\n";
    return kExitUsage;
  }
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
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
  const engine::TrainingEstimator estimator(scenario->model, scenario->system);
  const engine::TrainingEstimate e = estimator.Run(scenario->training, scenario->workload);
  PrintEstimate(*scenario, e, fmt, out);
  return kExitOk;
}

}  // namespace orrery::cli
