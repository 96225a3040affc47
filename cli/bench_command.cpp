// `orrery bench`: how many closed-form estimates one core makes per second.

#include <boost/program_options.hpp>
#include <chrono>

#include "cli/cli_common.h"
#include "core/estimate/training_estimator.h"

namespace orrery::cli {

namespace po = boost::program_options;

// `orrery bench --engine event` (cli/event_bench.cpp).
int RunEventBench(const Args& args, std::ostream& out, std::ostream& err);

int RunBench(const Args& args, std::ostream& out, std::ostream& err) {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--engine=event" || (args[i] == "--engine" && i + 1 < args.size() && args[i + 1] == "event"))
      return RunEventBench(args, out, err);
  po::options_description opts(
      "orrery bench [SCENARIO] [--seconds S]\n\n"
      "Times TrainingEstimator::Run on one core (one thread) over varying plans of the\n"
      "scenario (default: GPT-3 175B on 1024 A100, configs/scenarios/gpt3-175b-1024-a100.yaml)\n"
      "and prints estimates per second.\n"
      "orrery bench --engine event --help: the event-driven engine's speed instead.\n\noptions");
  double seconds = 2;
  std::string engine = "closed";
  opts.add_options()("help,h", "show this help")("seconds", po::value(&seconds), "how long to run (default 2)")(
      "engine", po::value(&engine), "closed (default) | event");
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
    err << "error: " << e.what() << "\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts;
    return kExitOk;
  }
  if (engine != "closed") {
    err << "error: --engine '" << engine << "': must be closed or event\n";
    return kExitUsage;
  }
  if (!(seconds > 0 && seconds <= 600)) {
    err << "error: --seconds must be in (0, 600]\n";
    return kExitUsage;
  }
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  base::Diagnostics diags;
  const std::string name = vm.count("scenario") ? vm["scenario"].as<std::string>() : "gpt3-175b-1024-a100";
  auto s = engine::LoadScenarioFile(name, store, diags);
  if (s) engine::CrossCheck(*s, diags);
  if (!s || !diags.ok()) {
    PrintDiagnostics(diags, err);
    return kExitInvalid;
  }
  const engine::TrainingEstimator estimator(s->model, s->system);
  // Vary the plan the way a search does: microbatch size and recompute mode.
  parallelism::TrainingPlan plans[6];
  for (int i = 0; i < 6; ++i) {
    plans[i] = s->training;
    plans[i].micro_batch = 1 << (i % 2);
    plans[i].recompute = static_cast<parallelism::Recompute>(i % 3);
  }
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto limit = start + std::chrono::duration<double>(seconds);
  long long n = 0;
  double sink = 0;
  while (clock::now() < limit) {
    for (int k = 0; k < 1000; ++k) {
      const auto e = estimator.Run(plans[(n + k) % 6], s->workload);
      sink += e.iteration_s;
    }
    n += 1000;
  }
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  out << "scenario        " << name << " (" << s->model.name << ", "
      << hardware::DeviceCount(s->system) << " x " << s->system.device.name << ")\n"
      << "estimates       " << n << " in " << base::FormatNumber(elapsed) << " s on one thread\n"
      << "rate            " << base::FormatNumber(static_cast<double>(n) / elapsed, 4)
      << " estimates/s\n"
      << "per estimate    " << base::FormatQuantity(elapsed / static_cast<double>(n), base::Dimension::kTime)
      << "\n(checksum " << base::FormatNumber(sink / static_cast<double>(n)) << " s mean iteration)\n";
  return kExitOk;
}

}  // namespace orrery::cli
