// `orrery search`: the best plans for a scenario's model on its system.

#include <boost/program_options.hpp>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_common.h"
#include "cli/estimate_output.h"
#include "cli/run_support.h"
#include "core/search/search.h"

namespace orrery::cli {

namespace po = boost::program_options;
using base::Dimension;
using base::FormatQuantity;

namespace {

// "4096" or "512-4096": device counts to search. A range takes every whole
// number of nodes in it (and the sub-node counts that divide a node).
bool ParseGpus(const std::string& text, int64_t per_node, std::vector<int64_t>& out, std::string& err) {
  const size_t dash = text.find('-');
  auto num = [](const std::string& t, int64_t& v) {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return false;
    v = std::stoll(t);
    return v >= 1;
  };
  int64_t a = 0, b = 0;
  if (dash == std::string::npos) {
    if (!num(text, a)) {
      err = "--gpus expects N or A-B with whole numbers >= 1, got '" + text + "'";
      return false;
    }
    out = {a};
    return true;
  }
  if (!num(text.substr(0, dash), a) || !num(text.substr(dash + 1), b) || b < a) {
    err = "--gpus expects N or A-B with 1 <= A <= B, got '" + text + "'";
    return false;
  }
  for (int64_t n = a; n <= b && n < per_node; ++n)
    if (per_node % n == 0) out.push_back(n);
  for (int64_t nodes = (a + per_node - 1) / per_node; nodes * per_node <= b; ++nodes)
    if (nodes >= 1) out.push_back(nodes * per_node);
  if (out.empty()) {
    err = "--gpus " + text + " holds no whole number of " + std::to_string(per_node) + "-device nodes";
    return false;
  }
  if (out.size() > 4096) {
    err = "--gpus " + text + " spans " + std::to_string(out.size()) + " device counts; narrow it (at most 4096)";
    return false;
  }
  return true;
}

std::string Count(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::string Pct(double x) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << 100 * x << " %";
  return os.str();
}

const char* ScoreUnit(engine::Objective o) {
  switch (o) {
    case engine::Objective::kTime: return "s/token";
    case engine::Objective::kCost: return "USD/token";
    case engine::Objective::kEnergy: return "J/token";
    case engine::Objective::kTokensPerDollar: return "tokens/USD";
  }
  return "";
}

double ShownScore(engine::Objective o, double score) {
  return o == engine::Objective::kTokensPerDollar ? (score > 0 ? 1 / score : 0) : score;
}

nlohmann::ordered_json StatsJson(const engine::SearchStats& s) {
  return {{"candidates", s.candidates},
          {"pruned", s.pruned_divisibility + s.pruned_memory + s.pruned_time},
          {"pruned_divisibility", s.pruned_divisibility},
          {"pruned_memory", s.pruned_memory},
          {"pruned_time_bound", s.pruned_time},
          {"evaluated", s.evaluated},
          {"probes", s.probes},
          {"out_of_memory", s.out_of_memory},
          {"feasible", s.feasible},
          {"shapes", s.shapes},
          {"threads", s.threads},
          {"wall_s", s.wall_s}};
}

}  // namespace

int RunSearch(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
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
      "only supplies what is not searched (precision, attention kernel, optimizer).\n\noptions");
  int top = 5;
  int threads = 0;
  std::string objective = "time", format = "table", gpus;
  std::vector<std::string> sets;
  int64_t max_mb = 0;
  opts.add_options()("help,h", "show this help")("top", po::value(&top), "plans to print (default 5)")(
      "objective", po::value(&objective),
      "rank by time (s per token), cost (USD per token), energy (J per token) or "
      "tokens-per-dollar (default time)")(
      "gpus", po::value(&gpus), "device count N, or a range A-B of whole nodes (default: the system's)")(
      "threads", po::value(&threads), "worker threads (default: every core)")(
      "format", po::value(&format), "table | json | csv")(
      "set", po::value(&sets)->composing(), "override a parameter first, e.g. --set system.nodes=64")(
      "round-batch",
      "per plan, use the largest multiple of dp not above the global batch (Calculon's rule) "
      "instead of requiring dp to divide it")(
      "no-offload", "leave optimizer offload out of the space")(
      "no-cp", "leave context parallelism out of the space")(
      "default-order", "only the default group order tp,cp,ep,dp,pp")(
      "max-micro-batch", po::value(&max_mb), "largest micro-batch size to try (default: any)")(
      "quiet,q", "no progress output");
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
    err << "error: " << e.what() << " (see orrery search --help)\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts
        << "\nExamples:\n"
           "  orrery search configs/scenarios/llama3-70b-h100.yaml --top 3\n"
           "  orrery search gpt3-175b-1024-a100 --gpus 512-1024 --objective time --format json\n"
           "  orrery search configs/sweeps/megatron-1t-4096-a100.yaml --round-batch --top 5\n"
           "  mpirun -np 4 orrery search llama3-70b-h100       (shapes shared among ranks)\n"
           "\nExit status: 0 plans found, 1 invalid scenario or option value, 2 usage error or\n"
           "no feasible plan (the message says why, e.g. the smallest weights + optimizer\n"
           "per GPU against the device memory).\n";
    return kExitOk;
  }
  if (!vm.count("scenario")) {
    err << "error: missing SCENARIO (see orrery search --help)\n";
    return kExitUsage;
  }
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  engine::SearchOptions o;
  if (!engine::ParseObjective(objective, o.objective)) {
    err << "error: --objective: unknown objective '" << objective << "'"
        << [&] {
             const std::string h = base::DidYouMean(objective, {"time", "cost", "energy", "tokens-per-dollar"});
             return h.empty() ? std::string() : "; " + h;
           }()
        << " (time, cost, energy or tokens-per-dollar)\n";
    return kExitUsage;
  }
  if (top < 1 || top > 1000) {
    err << "error: --top must be in [1, 1000], got " << top << "\n";
    return kExitUsage;
  }
  if (threads < 0 || threads > 1024) {
    err << "error: --threads must be in [0, 1024] (0 = every core), got " << threads << "\n";
    return kExitUsage;
  }
  o.top = top;
  o.threads = threads;
  o.space.round_batch = vm.count("round-batch") > 0;
  o.space.offload = vm.count("no-offload") == 0;
  o.space.context_parallel = vm.count("no-cp") == 0;
  o.space.all_group_orders = vm.count("default-order") == 0;
  o.space.max_micro_batch = max_mb;

  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  base::Diagnostics diags;
  auto scenario = engine::LoadScenarioFile(vm["scenario"].as<std::string>(), store, diags);
  if (scenario)
    for (const auto& s : sets) engine::ApplyOverride(*scenario, s, diags);
  if (!scenario || !diags.ok()) {
    PrintDiagnostics(diags, err);
    return kExitInvalid;
  }
  if (!gpus.empty()) {
    std::string e;
    if (!ParseGpus(gpus, scenario->system.devices_per_node, o.device_counts, e)) {
      err << "error: " << e << "\n";
      return kExitUsage;
    }
  }
  if (const std::string why = engine::ObjectiveProblem(o.objective, scenario->system); !why.empty()) {
    err << "error: " << why << "\n";
    return kExitInvalid;
  }

  std::unique_ptr<engine::Comm> comm = MakeComm();
  o.shard = comm->rank();
  o.shards = comm->size();
  Progress progress(err, "search", "shapes", vm.count("quiet") > 0 || comm->rank() != 0);
  if (vm.count("quiet") == 0 && comm->rank() == 0) o.progress = progress.Callback();
  engine::SearchResult r = engine::Search(*scenario, o);
  progress.Finish();
  if (comm->size() > 1) {
    const std::vector<std::string> parts = comm->Gather(engine::CandidatesToText(r));
    if (comm->rank() != 0) return kExitOk;
    std::vector<engine::SearchResult> results(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!engine::CandidatesFromText(parts[i], results[i])) {
        err << "error: rank " << i << " sent a result that does not parse\n";
        return kExitInvalid;
      }
    }
    r = engine::MergeSearchResults(results, top + (o.event_check ? o.event_spare : 0));
    for (auto& c : r.top) engine::Reestimate(*scenario, c);
    if (o.event_check) engine::CheckWithEvents(*scenario, o, r);
  }
  if (r.top.empty()) {
    err << "orrery search: " << r.why_none << "\n"
        << "  (" << Count(r.stats.candidates) << " candidates: " << Count(r.stats.pruned_divisibility)
        << " do not divide the model, " << Count(r.stats.pruned_memory)
        << " overflow memory before activations, " << Count(r.stats.out_of_memory)
        << " overflow with activations)\n";
    return kExitUsage;
  }

  const engine::SearchStats& st = r.stats;
  const uint64_t pruned = st.pruned_divisibility + st.pruned_memory + st.pruned_time;
  nlohmann::ordered_json doc;
  doc["scenario"] = scenario->name;
  doc["model"] = scenario->model.name;
  doc["device"] = scenario->system.device.name;
  doc["objective"] = engine::ObjectiveName(o.objective);
  doc["stats"] = StatsJson(st);
  nlohmann::ordered_json plans = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.top.size(); ++i) {
    const engine::SearchCandidate& c = r.top[i];
    const engine::Scenario one = engine::ScenarioOf(*scenario, c.knobs);
    nlohmann::ordered_json j;
    j["rank"] = i + 1;
    j["score"] = ShownScore(o.objective, c.score);
    j["score_unit"] = ScoreUnit(o.objective);
    j["global_batch"] = c.knobs.global_batch;
    j["plan"] = {{"tp", c.knobs.tp}, {"pp", c.knobs.pp}, {"cp", c.knobs.cp}, {"ep", c.knobs.ep},
                 {"dp", c.knobs.dp}, {"micro_batch", c.knobs.micro_batch},
                 {"interleave", c.knobs.interleave},
                 {"recompute", c.knobs.recompute == parallelism::Recompute::kFull ? "full"
                               : c.knobs.recompute == parallelism::Recompute::kSelective ? "selective"
                                                                                         : "none"},
                 {"sequence_parallel", c.knobs.sequence_parallel}, {"zero", c.knobs.zero},
                 {"dp_overlap", c.knobs.dp_overlap}, {"tp_comm_overlap", c.knobs.tp_comm_overlap},
                 {"offload_optimizer", c.knobs.offload}, {"group_order", c.knobs.group_order.data()}};
    nlohmann::ordered_json est = EstimateJson(one, c.estimate);
    est.erase("plan");
    est.erase("scenario");
    est.erase("model");
    j["closed_form_iteration_s"] = c.closed_form_s;
    j["estimate"] = est;
    plans.push_back(j);
  }
  doc["top"] = plans;
  nlohmann::ordered_json dis = nlohmann::ordered_json::array();
  for (const auto& d : r.disagreements)
    dis.push_back({{"plan", engine::DescribeKnobs(d.knobs)}, {"closed_form_iteration_s", d.closed_form_s},
                   {"event_iteration_s", d.event_s}, {"event_rejected", !d.why.empty()}, {"why", d.why}});
  doc["event_disagreements"] = dis;
  if (r.top.size() > 1) doc["why_first"] = engine::WhyBetter(r.top[0], r.top[1]);

  if (fmt == Format::kJson) {
    out << doc.dump(2) << "\n";
    return kExitOk;
  }
  if (fmt == Format::kCsv) {
    // One row per plan: flattened keys of the plan and estimate objects.
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : plans) {
      nlohmann::ordered_json flat_src = p;
      const auto flat = flat_src.flatten();
      std::vector<std::string> row;
      for (auto it = flat.begin(); it != flat.end(); ++it) {
        std::string key = it.key().substr(1);
        std::replace(key.begin(), key.end(), '/', '.');
        if (rows.empty()) header.push_back(key);
        std::string v = it->is_string() ? it->get<std::string>() : it->dump();
        if (v.find_first_of(",\"\n") != std::string::npos) {
          std::string q = "\"";
          for (char ch : v) {
            q += ch;
            if (ch == '"') q += '"';
          }
          v = q + "\"";
        }
        row.push_back(v);
      }
      rows.push_back(row);
    }
    for (size_t i = 0; i < header.size(); ++i) out << (i ? "," : "") << header[i];
    out << "\n";
    for (const auto& row : rows) {
      for (size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << row[i];
      out << "\n";
    }
    return kExitOk;
  }

  const auto& s = *scenario;
  out << "search     " << s.model.name << " on "
      << (o.device_counts.size() > 1 ? gpus : std::to_string(hardware::DeviceCount(s.system))) << " x "
      << s.system.device.name << ", global batch " << s.workload.global_batch
      << (o.space.round_batch ? " (rounded down to a multiple of dp)" : "") << " x " << s.workload.seq_len
      << " tokens, objective " << engine::ObjectiveName(o.objective) << "\n"
      << "space      " << Count(st.candidates) << " candidates in " << Count(st.shapes) << " shapes\n"
      << "pruned     " << Count(pruned) << " (divisibility " << Count(st.pruned_divisibility)
      << ", weights+optimizer memory " << Count(st.pruned_memory) << ", time bound "
      << Count(st.pruned_time) << ")\n"
      << "evaluated  " << Count(st.evaluated) << " (+ " << Count(st.probes) << " bound probes): "
      << Count(st.feasible) << " fit, " << Count(st.out_of_memory) << " out of memory\n"
      << "wall       " << base::FormatNumber(st.wall_s, 3) << " s on " << st.threads << " thread"
      << (st.threads == 1 ? "" : "s") << (comm->size() > 1 ? " x " + std::to_string(comm->size()) + " ranks" : "")
      << " (" << base::FormatNumber(static_cast<double>(st.candidates) / std::max(1e-9, st.wall_s), 3)
      << " candidates/s)\n";
  for (size_t i = 0; i < r.top.size(); ++i) {
    const engine::SearchCandidate& c = r.top[i];
    const engine::TrainingEstimate& e = c.estimate;
    out << "\n#" << i + 1 << "  " << FormatQuantity(e.iteration_s, Dimension::kTime) << " per iteration, MFU "
        << Pct(e.mfu) << ", " << base::FormatNumber(e.tokens_per_s) << " tokens/s";
    if (o.objective != engine::Objective::kTime)
      out << ", " << base::FormatNumber(ShownScore(o.objective, c.score), 4) << " " << ScoreUnit(o.objective);
    out << "\n    " << engine::DescribeKnobs(c.knobs) << "\n    time  ";
    const std::pair<const char*, double> parts[] = {
        {"fwd", e.time.forward},       {"bwd", e.time.backward},    {"recompute", e.time.recompute},
        {"tp", e.time.tp_comm},        {"cp", e.time.cp_comm},      {"ep", e.time.ep_comm},
        {"bubble", e.time.pp_bubble},  {"p2p", e.time.pp_p2p},      {"dp", e.time.dp_comm},
        {"optimizer", e.time.optimizer}, {"offload", e.time.offload}};
    bool first = true;
    for (const auto& [name, v] : parts) {
      if (v == 0) continue;
      out << (first ? "" : " | ") << name << " " << FormatQuantity(v, Dimension::kTime);
      first = false;
    }
    out << "\n    memory " << FormatQuantity(e.memory.total(), Dimension::kBytes) << " of "
        << FormatQuantity(e.memory_capacity, Dimension::kBytes) << " (weights "
        << FormatQuantity(e.memory.weights, Dimension::kBytes) << ", gradients "
        << FormatQuantity(e.memory.gradients, Dimension::kBytes) << ", optimizer "
        << FormatQuantity(e.memory.optimizer, Dimension::kBytes) << ", activations "
        << FormatQuantity(e.memory.activations, Dimension::kBytes) << ")\n";
  }
  if (r.top.size() > 1) out << "\nwhy #1 beats #2: " << engine::WhyBetter(r.top[0], r.top[1]) << "\n";
  if (!r.disagreements.empty()) {
    out << "\nclosed form and event engine disagree by more than "
        << base::FormatNumber(100 * o.event_tolerance, 2) << " % on " << r.disagreements.size()
        << " finalist" << (r.disagreements.size() == 1 ? "" : "s") << " (ranked by the event engine):\n";
    for (const auto& d : r.disagreements) {
      out << "  " << engine::DescribeKnobs(d.knobs) << ": closed form "
          << FormatQuantity(d.closed_form_s, Dimension::kTime) << ", ";
      if (d.why.empty()) out << "event " << FormatQuantity(d.event_s, Dimension::kTime) << "\n";
      else out << "event engine rejects it: " << d.why << "\n";
    }
  }
  return kExitOk;
}

}  // namespace orrery::cli
