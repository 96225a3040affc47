// `orrery search`: the best plans for a scenario's model on its system.
// Parses options, calls orrery::Search, presents the result.

#include "cli/cli_common.h"
#include "cli/run_support.h"
#include "core/api/json.h"
#include "core/api/search.h"
#include "core/base/format.h"

namespace orrery::cli {

namespace po = boost::program_options;
using namespace base;  // the Format* functions

namespace {

void PrintTable(const SearchResult& r, const std::string& gpus, std::ostream& out) {
  const engine::Scenario& s = r.scenario;
  const engine::SearchStats& st = r.stats;
  const uint64_t pruned = st.pruned_divisibility + st.pruned_memory + st.pruned_time;
  out << "search     " << s.model.name << " on "
      << (r.device_counts.size() > 1 ? gpus : std::to_string(hardware::DeviceCount(s.system)))
      << " x " << s.system.device.name << ", global batch " << s.workload.global_batch
      << " x " << s.workload.seq_len << " tokens, objective " << engine::ObjectiveName(r.objective)
      << "\n"
      << "space      " << FormatGrouped(st.candidates) << " candidates in " << FormatGrouped(st.shapes)
      << " shapes\n"
      << "pruned     " << FormatGrouped(pruned) << " (divisibility " << FormatGrouped(st.pruned_divisibility)
      << ", weights+optimizer memory " << FormatGrouped(st.pruned_memory) << ", time bound "
      << FormatGrouped(st.pruned_time) << ")\n"
      << "evaluated  " << FormatGrouped(st.evaluated) << " (+ " << FormatGrouped(st.probes)
      << " bound probes): " << FormatGrouped(st.feasible) << " fit, " << FormatGrouped(st.out_of_memory)
      << " out of memory\n"
      << "wall       " << FormatTime(st.wall_s) << " on " << st.threads << " thread"
      << (st.threads == 1 ? "" : "s") << (r.ranks > 1 ? " x " + std::to_string(r.ranks) + " ranks" : "")
      << " (" << FormatRate(static_cast<double>(st.candidates) / std::max(1e-9, st.wall_s), "candidates")
      << ")\n";
  for (size_t i = 0; i < r.top.size(); ++i) {
    const engine::SearchCandidate& c = r.top[i].candidate;
    const engine::TrainingEstimate& e = c.estimate;
    out << "\n#" << i + 1 << "  " << FormatTime(e.iteration_s) << " per iteration, MFU "
        << FormatPercent(e.mfu) << ", " << FormatRate(e.tokens_per_s, "tokens");
    if (r.objective != Objective::kTime)
      out << ", " << FormatPlain(ShownScore(r.objective, c.score)) << " " << ScoreUnit(r.objective);
    out << "\n    " << engine::DescribeKnobs(c.knobs) << "\n    time  ";
    const std::pair<const char*, double> parts[] = {
        {"fwd", e.time.forward},         {"bwd", e.time.backward},   {"recompute", e.time.recompute},
        {"tp", e.time.tp_comm},          {"cp", e.time.cp_comm},     {"ep", e.time.ep_comm},
        {"bubble", e.time.pp_bubble},    {"p2p", e.time.pp_p2p},     {"dp", e.time.dp_comm},
        {"optimizer", e.time.optimizer}, {"offload", e.time.offload}};
    bool first = true;
    for (const auto& [name, v] : parts) {
      if (v == 0) continue;
      out << (first ? "" : " | ") << name << " " << FormatTime(v);
      first = false;
    }
    out << "\n    memory " << FormatBytes(e.memory.total()) << " of " << FormatBytes(e.memory_capacity)
        << " (weights " << FormatBytes(e.memory.weights) << ", gradients "
        << FormatBytes(e.memory.gradients) << ", optimizer " << FormatBytes(e.memory.optimizer)
        << ", activations " << FormatBytes(e.memory.activations) << ")\n";
    const goodput::Result& g = r.top[i].goodput;
    out << "    goodput " << FormatPercent(g.goodput);
    if (g.interval_s > 0)
      out << " (a failure every " << FormatTime(g.in.mtbf_s) << ", checkpoint every "
          << FormatTime(g.interval_s) << ")";
    if (g.effective_s > 0) out << ", " << FormatTime(g.effective_s) << " effective training";
    out << "\n";
  }
  if (!r.why_first.empty()) out << "\nwhy #1 beats #2: " << r.why_first << "\n";
  if (!r.disagreements.empty()) {
    out << "\nclosed form and event engine disagree by more than "
        << base::FormatNumber(100 * r.event_tolerance, 2) << " % on " << r.disagreements.size()
        << " finalist" << (r.disagreements.size() == 1 ? "" : "s") << " (ranked by the event engine):\n";
    for (const auto& d : r.disagreements) {
      out << "  " << engine::DescribeKnobs(d.knobs) << ": closed form "
          << FormatQuantity(d.closed_form_s, Dimension::kTime) << ", ";
      if (d.why.empty()) out << "event " << FormatQuantity(d.event_s, Dimension::kTime) << "\n";
      else out << "event engine rejects it: " << d.why << "\n";
    }
  }
}

}  // namespace

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
      "Prints the top K with their breakdowns and why #1 beats #2. The scenario's own plan\n"
      "only supplies what is not searched (precision, attention kernel, optimizer).");
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
  req.threads = v.threads();
  req.round_batch = v.Has("round-batch");
  req.offload = !v.Has("no-offload");
  req.context_parallel = !v.Has("no-cp");
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
    std::vector<Json> rows;
    for (const Json& plan : ToJson(r)["top"]) rows.push_back(plan);
    WriteCsv(rows, out);
  } else PrintTable(r, req.gpus, out);
  return v.Report(r, err);
}

}  // namespace orrery::cli
