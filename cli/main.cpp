// The `orrery` command: one verb per job, each with its own --help.

#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/fit_command.h"
#include "cli/network_command.h"
#include "cli/report_command.h"

namespace {

struct Verb {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>&, std::ostream&, std::ostream&);
};

const Verb kVerbs[] = {
    {"estimate", "predict one training iteration: time breakdown, memory, MFU", orrery::cli::RunEstimate},
    {"infer", "predict serving: TTFT, TPOT, throughput, memory; simulate a request stream", orrery::cli::RunInfer},
    {"validate", "compare predictions with measured runs (validation/*.csv)", orrery::cli::RunValidate},
    {"check", "validate configuration files; exit 1 with the errors", orrery::cli::RunCheck},
    {"presets", "list shipped presets, or show one with units", orrery::cli::RunPresets},
    {"explain", "document a configuration key (or --markdown for all)", orrery::cli::RunExplain},
    {"fit", "fit a scaling law to measured runs; compute-optimal N and D", orrery::cli::RunFitCommand},
    {"plan", "loss target or budget -> model, plan, days, GPU-hours, MWh, cost", orrery::cli::RunPlan},
    {"network", "a system's topology, parts, cost and power; collective times; fabric studies", orrery::cli::RunNetwork},
    {"bench", "time the closed-form estimator (estimates per second)", orrery::cli::RunBench},
    {"calibrate", "measure this machine's kernels into a device profile; check a CPU layer", orrery::cli::RunCalibrate},
    {"search", "best training plans for a model on a system (top K, why #1 wins)", orrery::cli::RunSearch},
    {"sweep", "what-if grid over any parameters into a resumable SQLite store", orrery::cli::RunSweep},
    {"report", "a scenario, search or plan question -> self-contained HTML (and PDF) report", orrery::cli::RunReport},
    {"db", "list or export (csv/json) the result store of sweeps", orrery::cli::RunDb},
};

void PrintUsage(std::ostream& os) {
  os << "orrery: analytical performance simulator for LLM training and inference\n\n"
        "usage: orrery <verb> [options]    (orrery <verb> --help for each verb)\n\nverbs:\n";
  for (const Verb& v : kVerbs) {
    std::string name = v.name;
    name.resize(10, ' ');
    os << "  " << name << v.summary << "\n";
  }
  os << "\nexamples:\n"
        "  orrery estimate configs/scenarios/gpt3-175b-a100.yaml\n"
        "  orrery estimate configs/scenarios/gpt3-175b-a100.yaml --set training.pp=4 --format json\n"
        "  orrery infer configs/scenarios/llama2-70b-h100-infer.yaml --batch 8 --output 256\n"
        "  orrery validate --max-mape 10\n"
        "  orrery presets show h100-sxm\n"
        "  orrery explain training.recompute\n\n"
        "Presets are read from $ORRERY_CONFIG_DIR, else from share/orrery/configs beside an\n"
        "installed orrery (<prefix>/bin/../share/orrery/configs), else from the source tree's configs/.\n"
        "Exit status: 0 ok; 1 invalid input or a failed tolerance; 2 usage error;\n"
        "3 no feasible plan or an infeasible result (the reason is printed).\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintUsage(std::cout);
    return args.empty() ? orrery::cli::kExitUsage : orrery::cli::kExitOk;
  }
  if (args[0] == "--version") {
    std::cout << "orrery 0.1.0\n";
    return 0;
  }
  const std::string verb = args[0];
  args.erase(args.begin());
  for (const Verb& v : kVerbs) {
    if (verb == v.name) {
      try {
        return v.run(args, std::cout, std::cerr);
      } catch (const std::exception& e) {
        // Verbs report errors themselves; this is the last line of defence so
        // that nothing the user gives can abort the program.
        std::cerr << "orrery " << verb << ": error: " << e.what() << "\n";
        return orrery::cli::kExitInvalid;
      }
    }
  }
  std::cerr << "orrery: unknown verb '" << verb << "'";
  std::vector<std::string> names;
  for (const Verb& v : kVerbs) names.push_back(v.name);
  const std::string hint = orrery::base::DidYouMean(verb, names);
  if (!hint.empty()) std::cerr << "; " << hint;
  std::cerr << " (see orrery --help)\n";
  return orrery::cli::kExitUsage;
}
