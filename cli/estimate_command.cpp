// `orrery estimate`: one training iteration, closed form or event-driven.
// Parses options, calls orrery::Estimate, presents the result.

#include <fstream>

#include "cli/cli_common.h"
#include "core/api/estimate.h"
#include "core/api/json.h"
#include "core/api/text.h"

namespace orrery::cli {

namespace po = boost::program_options;

int RunEstimate(const Args& args, std::ostream& out, std::ostream& err) {
  VerbOptions v("estimate",
      "orrery estimate SCENARIO.yaml [--set PATH=VALUE]... [--format table|json|csv]\n"
      "                [--engine closed|event] [--trace FILE] [--ops]\n\n"
      "Predicts one training iteration of the scenario: time and where it goes,\n"
      "memory per device, MFU/HFU, tokens/s, and (with workload.train_tokens) days,\n"
      "GPU-hours, energy and cost. SCENARIO is a file or a scenario preset name.\n\n"
      "Goodput: failures (system.reliability), checkpoints (system.storage) and\n"
      "stragglers turn the step time into effective training days, with the\n"
      "checkpoint interval that maximises goodput (Young 1974, Daly 2006; docs/goodput.md).\n\n"
      "--engine closed (the default) uses the closed form: microseconds, assumes the\n"
      "schedule's bubble and perfect overlap. --engine event replays the iteration of one\n"
      "data-parallel replica as tasks on each stage's compute, TP, p2p and DP streams with the\n"
      "same operator and collective costs: the schedule (training.schedule: 1f1b, interleaved,\n"
      "gpipe, zb-h1, v-min, v-half, v-zb, dualpipe), uneven layers, embedding and LM head on\n"
      "the end stages, a straggler (training.straggler_stage, training.straggler_slowdown),\n"
      "DP buckets and ZeRO gathers overlapping compute. It adds per-stage busy/idle time, bubble and peak\n"
      "in-flight activations, and --trace writes the step for ui.perfetto.dev or\n"
      "chrome://tracing.\n\n"
      "--ops adds where the time goes per operator, from the functions the estimate prices\n"
      "with: each operator of one layer (QKV, attention core, projection, MLP GEMMs, norms,\n"
      "activation, dropout and residual kernels, FP8 casts), the LM head with its loss and the\n"
      "embedding, forward and backward seconds per microbatch on one device, FLOP and bytes,\n"
      "the fraction of peak reached and the bound (compute, memory or launch); then per\n"
      "iteration the optimizer step and each kind of communication, its traffic against what\n"
      "stays exposed (--format json: the `ops` object).");
  std::string engine_name = "closed", trace;
  bool ops = false;
  int64_t goodput_runs = 0;
  uint64_t seed = 1;
  v.Positional("scenario").Set().Formats();
  v.add_options()("engine", po::value(&engine_name), "closed (default) | event")(
      "trace", po::value(&trace),
      "write the simulated step as Chrome trace-event JSON to FILE (implies --engine event)")(
      "goodput-runs", po::value(&goodput_runs),
      "draw N whole training runs with failures (Monte-Carlo; needs workload.train_tokens) and "
      "report the mean, p50 and p90 completion time")(
      "seed", po::value(&seed), "seed of the Monte-Carlo's draws (default 1; same seed, same answer)")(
      "ops", po::bool_switch(&ops),
      "add the per-operator breakdown: each operator's forward and backward time per microbatch, "
      "FLOP, bytes, fraction of peak and bound; communication traffic against exposed");
  v.Examples(
      "\nExamples:\n  orrery estimate configs/scenarios/gpt3-175b-a100.yaml\n"
      "  orrery estimate gpt3-175b-a100 --set training.recompute=full --format json\n"
      "  orrery estimate gpt3-175b-a100 --engine event --trace step.json\n"
      "  orrery estimate gpt3-175b-a100 --ops\n"
      "  orrery estimate gpt3-175b-a100 --set workload.train_tokens=300e9 --goodput-runs 1000\n"
      "  orrery estimate gpt3-175b-a100 --engine event --set training.straggler_stage=3 \\\n"
      "      --set training.straggler_slowdown=1.2\n"
      "  orrery estimate gpt3-175b-a100 --engine event --set training.schedule=v-half "
      "--set training.interleave=2\n");
  if (const int code = v.Parse(args, out, err); code >= 0) return code;
  if (!v.Has("scenario")) return v.Usage(err, "missing SCENARIO");
  EstimateRequest req;
  if (!ParseEstimateEngine(engine_name, req.engine))
    return v.Usage(err, "--engine '" + engine_name + "': must be closed or event" +
                            (engine_name.rfind("ev", 0) == 0 ? "; did you mean 'event'?" : ""));
  if (!trace.empty() && v.Has("engine") && req.engine == EstimateEngine::kClosed)
    return v.Usage(err, "--trace needs the event engine; the closed form has no timeline");
  if (!trace.empty()) req.engine = EstimateEngine::kEvent;
  req.keep_timeline = !trace.empty();
  if (goodput_runs < 0 || goodput_runs > 1000000)
    return v.Usage(err, "--goodput-runs " + std::to_string(goodput_runs) +
                            ": must be in [0, 1000000]");
  req.goodput_runs = goodput_runs;
  req.goodput_seed = seed;
  req.operator_breakdown = ops;
  req.scenario = ScenarioInput::File(v.Arg("scenario"), v.sets());
  req.scenario.model_config = v.model_config();

  const EstimateResult r = Estimate(req);
  if (!r.has_estimate) return v.Report(r, err);
  const bool traced = !trace.empty() && r.event && r.event->simulated();
  if (traced) {
    std::ofstream file(trace);
    if (!file || !WriteChromeTrace(r, file)) {
      err << "error: --trace " << trace << ": cannot write the file\n";
      return kExitInvalid;
    }
  }
  if (v.format() == Format::kJson) out << ToJson(r).dump(2) << "\n";
  else if (v.format() == Format::kCsv) WriteCsv(ToJson(r), out);
  else text::PrintEstimateTable(r, out);
  if (traced && v.format() == Format::kTable)
    out << "trace: " << trace << " (" << r.event->step.tasks << " tasks; open in ui.perfetto.dev)\n";
  return ExitCode(r.status);
}

}  // namespace orrery::cli
