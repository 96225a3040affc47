// `orrery search`: the best plans for a scenario's model on its system.
// Parses options, calls orrery::Search, presents the result.

#include "cli/cli_common.h"
#include "cli/run_support.h"
#include "core/api/json.h"
#include "core/api/search.h"
#include "core/api/text.h"
#include "core/base/format.h"

namespace orrery::cli {

namespace po = boost::program_options;
using namespace base;  // the Format* functions

int RunSearch(const Args& args, std::ostream& out, std::ostream& err) {
  VerbOptions v("search",
      "orrery search SCENARIO.yaml [--top K] [--objective time|cost|energy|tokens-per-dollar]\n"
      "                            [--gpus N|A-B] [--threads N] [--format table|json|csv]\n\n"
      "Finds the best training plans for the scenario's model on its system at its global\n"
      "batch: every TP, PP, CP, EP (MoE) and DP split of the devices, every micro-batch size,\n"
      "interleaving, recompute mode, sequence parallelism, ZeRO stage, DP and TP overlap,\n"
      "optimizer offload and order of the groups on the network tiers. Plans that cannot\n"
      "divide the model are dropped before costing, plans whose weights + gradients +\n"
      "optimizer states alone overflow the device before activations are counted, and\n"
      "blocks of plans whose compute time alone is worse than the K-th best are skipped.\n"
      "Of the plans costed, the summary says how many fit, how many overflow memory with\n"
      "their activations and how many break a pipeline rule (interleaved 1F1B whose\n"
      "microbatches are not a multiple of pp; DualPipe with an odd pp or fewer than 2 pp\n"
      "microbatches). Prints the top K with their breakdowns and why #1 beats #2. The\n"
      "scenario's own plan only supplies what is not searched (precision, attention kernel,\n"
      "optimizer, training.recompute_interval: which layers a full-recompute plan\n"
      "recomputes, and the pipeline schedule: 1F1B and interleaved 1F1B are searched as\n"
      "one, by interleave; GPipe, ZB-H1, the V-shapes and DualPipe are kept as asked; a\n"
      "pipelined plan's line says its schedule).");
  SearchRequest req;
  std::string objective = "time";
  v.Positional("scenario").Formats().Threads().Quiet().Set(
      "override a parameter first, e.g. --set system.nodes=64");
  v.add_options()("top", po::value(&req.top), "plans to print (default 5)")(
      "objective", po::value(&objective),
      "rank by time (s per token), cost (USD per token), energy (J per token) or "
      "tokens-per-dollar (default time)")(
      "gpus", po::value(&req.gpus), "device count N, or a range A-B of whole nodes (default: the system's)")(
      "round-batch",
      "per plan, use the largest multiple of dp not above the global batch (Calculon's rule) "
      "instead of requiring dp to divide it")(
      "no-offload", "leave optimizer offload out of the space")(
      "no-cp", "leave context parallelism out of the space")(
      "uneven-stages",
      "also try pp that does not divide the layers (ceil(L/pp) layers per stage, the last "
      "stage the rest), e.g. DeepSeek-V3's 61 layers")(
      "default-order", "only the default group order tp,cp,ep,dp,pp")(
      "max-micro-batch", po::value(&req.max_micro_batch), "largest micro-batch size to try (default: any)");
  v.Examples(
      "\nExamples:\n"
      "  orrery search configs/scenarios/llama3-70b-h100.yaml --top 3\n"
      "  orrery search gpt3-175b-1024-a100 --gpus 512-1024 --objective time --format json\n"
      "  orrery search configs/sweeps/megatron-1t-4096-a100.yaml --round-batch --top 5\n"
      "  mpirun -np 4 orrery search llama3-70b-h100       (shapes shared among ranks)\n");
  if (const int code = v.Parse(args, out, err); code >= 0) return code;
  if (!v.Has("scenario")) return v.Usage(err, "missing SCENARIO");
  if (!ParseObjectiveName(objective, req.objective)) {
    const std::string hint = base::DidYouMean(objective, {"time", "cost", "energy", "tokens-per-dollar"});
    return v.Usage(err, "--objective: unknown objective '" + objective + "'" +
                            (hint.empty() ? "" : "; " + hint) + " (time, cost, energy or tokens-per-dollar)");
  }
  req.scenario = ScenarioInput::File(v.Arg("scenario"), v.sets());
  req.scenario.model_config = v.model_config();
  req.threads = v.threads();
  req.round_batch = v.Has("round-batch");
  req.offload = !v.Has("no-offload");
  req.context_parallel = !v.Has("no-cp");
  req.uneven_stages = v.Has("uneven-stages");
  req.all_group_orders = !v.Has("default-order");
  std::unique_ptr<engine::Comm> comm = MakeComm();
  req.comm = comm.get();
  Progress progress(err, "search", "shapes", v.quiet() || comm->rank() != 0);
  Control control;
  if (!v.quiet()) control.progress = progress.Callback();
  const SearchResult r = Search(req, control);
  progress.Finish();
  if (!r.primary) return kExitOk;
  if (r.status == Status::kUsage) return v.Usage(err, "--" + r.reason);
  if (r.status != Status::kOk && r.top.empty()) return v.Report(r, err);
  if (v.format() == Format::kJson) out << ToJson(r).dump(2) << "\n";
  else if (v.format() == Format::kCsv) {
    // The document is held: a range over ToJson(r)["top"] would outlive it.
    const Json doc = ToJson(r);
    WriteCsv(std::vector<Json>(doc["top"].begin(), doc["top"].end()), out);
  } else text::PrintSearchTable(r, req.gpus, out);
  return v.Report(r, err);
}

}  // namespace orrery::cli
