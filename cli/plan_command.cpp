// `orrery plan`: a loss target or a compute budget -> N, D -> a model shape
// -> the best training plan -> days, GPU-hours, energy, cost (with ranges
// from the law's bootstrap replicates). The work is core/planning/planner.h;
// this file parses options and presents the chain.

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <cmath>

#include "cli/cli_common.h"
#include "core/base/quantity.h"
#include "core/base/yaml_source.h"
#include "core/planning/planner.h"
#include "core/estimate/scenario.h"
#include "models/transformer.h"
#include "core/base/csv.h"
#include "scaling_laws/law_presets.h"

namespace orrery::cli {

namespace po = boost::program_options;
using base::Dimension;
using base::FormatNumber;
using base::FormatQuantity;

namespace {

const char* kHelp = R"(orrery plan: from a loss target or a compute budget to a model, a training
plan, days, GPU-hours, energy and cost.

usage:
  orrery plan --loss L       --system PRESET [--gpus N | --deadline DAYS] [options]
  orrery plan --budget FLOP  --system PRESET [--gpus N | --deadline DAYS] [options]
  orrery plan --gpus N --days D --system PRESET [options]

The chain, printed step by step:
  1 law         a Chinchilla law L = E + A/N^alpha + B/D^beta: a preset (--law
                chinchilla, epoch, ...; `orrery fit --list-presets`) or a fit file
                written by `orrery fit POINTS.csv --bootstrap K --format json|yaml`
  2 N and D     --loss: the cheapest run reaching L (Hoffmann et al. 2022 Eq. 4
                inverted; with --inference-tokens T the Sardana et al. 2023
                optimum of 6 N D + 2 N T at that loss). --budget: the compute-
                optimal split of C = 6 N D. --gpus --days: the budget whose
                compute-optimal model trains in exactly that many days there.
  3 model       the --family shape (configs/families/: llama, gpt; or a YAML
                file) whose parameter count is nearest N: layers from the aspect
                ratio, heads of head_dim, GQA groups, the MLP rule
  4 plan        `orrery search` for the built model (objective time, top 1): tp,
                pp, interleaving, micro-batch (up to 8), recompute, sequence
                parallelism, TP overlap, ZeRO stage, DP overlap; no context
                parallelism or offload, the default group order
  5 training    steps = ceil(D / batch tokens); days = steps x iteration time;
                GPU-hours; energy = steps x GPUs x TDP x iteration x PUE; cost =
                GPU-hours x price
With a fit file holding bootstrap replicates, each replicate goes through the
same chain and the ranges are their percentile intervals (the fit's level).

GPU count: --gpus N (a multiple of the node size, or a divisor of it); or
--deadline DAYS: the fewest GPUs (powers of two from one GPU, node multiples
beyond) that finish in time, up to --max-gpus (default: the preset's count);
otherwise the whole preset system.

Quantities: --budget takes FLOP (1e24 or '1e24 FLOP'), --days/--deadline days
(90 or '90 d'), --price-per-gpu-hour USD per GPU-hour (2.5 or '2.5 USD/h').

Exit status: 0 a plan was found; 1 invalid input (unknown preset, a loss the
law cannot reach, no feasible plan); 2 usage error.

Examples:
  orrery plan --loss 2.0 --law epoch --system dgx-h100-superpod --price-per-gpu-hour 2.5 --pue 1.2
  orrery plan --budget 1e24 --law chinchilla --family gpt --system selene --format json
  orrery plan --gpus 1024 --days 30 --system dgx-h100-superpod
  orrery plan --loss 2.1 --inference-tokens 2e13 --deadline 60 --max-gpus 16384 --system eos
  orrery fit runs.csv --bootstrap 100 --format json > law.json
  orrery plan --loss 2.3 --law law.json --system dgx-h100-superpod

options)";

// A number with the unit named by the option, or a quantity with its own
// unit. `scale` converts the bare number to SI.
bool ParseAmount(const std::string& text, const char* option, Dimension dim, double scale,
                 double& out, std::ostream& err) {
  double v = 0;
  if (base::ParseDouble(text, &v)) {
    if (!std::isfinite(v) || v < 0) {
      err << "error: " << option << ": expected a finite number >= 0, got '" << text << "'\n";
      return false;
    }
    out = v * scale;
    return true;
  }
  const base::QuantityParse q = base::ParseQuantity(text, dim);
  if (!q.value || *q.value < 0) {
    err << "error: " << option << ": expected a number or a " << base::DimensionName(dim)
        << ", got '" << text << "'" << (q.error.empty() ? "" : ": " + q.error)
        << (q.hint.empty() ? "" : "; " + q.hint) << "\n";
    return false;
  }
  out = *q.value;
  return true;
}

const char* RecomputeName(parallelism::Recompute r) {
  switch (r) {
    case parallelism::Recompute::kNone: return "none";
    case parallelism::Recompute::kSelective: return "selective";
    case parallelism::Recompute::kFull: return "full";
  }
  return "?";
}

const char* ActivationName(models::Activation a) {
  return a == models::Activation::kSwiglu ? "swiglu" : "gelu";
}

nlohmann::json RangeJson(const engine::Range& r) { return nlohmann::json::array({r.lo, r.hi}); }

nlohmann::json ToJson(const engine::LawWithUncertainty& law, const engine::FamilySpec& family,
                      const engine::PlanRequest& req, const engine::PlanResult& r) {
  const engine::ChainPoint& p = r.point;
  const auto& L = law.point;
  nlohmann::json j;
  j["law"] = {{"name", law.name}, {"source", law.source}, {"E", L.E}, {"A", L.A}, {"B", L.B},
              {"alpha", L.alpha}, {"beta", L.beta}, {"bootstrap_replicates", law.samples.size()}};
  nlohmann::json target;
  switch (req.goal) {
    case engine::PlanGoal::kLoss:
      target = {{"goal", "loss"}, {"loss", req.target_loss}, {"inference_tokens", req.inference_tokens}};
      break;
    case engine::PlanGoal::kBudget:
      target = {{"goal", "budget"}, {"budget_flops", req.budget_flops}};
      break;
    case engine::PlanGoal::kGpuDays:
      target = {{"goal", "gpus_days"}, {"gpus", req.gpus}, {"days", req.days}};
      break;
  }
  if (req.deadline_days > 0) target["deadline_days"] = req.deadline_days;
  j["target"] = target;
  j["allocation"] = {{"N", p.params_n},
                     {"D", p.tokens_d},
                     {"C", p.compute_flops},
                     {"flops_per_param_token", req.flops_per_param_token},
                     {"tokens_per_param", p.tokens_d / p.params_n},
                     {"loss", p.loss},
                     {"inference_flops", p.inference_flops}};
  const auto& m = p.model;
  j["model"] = {{"family", family.name},
                {"name", m.name},
                {"layers", m.layers},
                {"hidden", m.hidden},
                {"heads", m.heads},
                {"kv_heads", models::KvHeads(m)},
                {"head_dim", models::HeadDim(m)},
                {"ffn", models::FfnSize(m)},
                {"vocab", m.vocab},
                {"activation", ActivationName(m.activation)},
                {"tied_embeddings", m.tied_embeddings},
                {"params", p.model_params},
                {"params_vs_N", p.model_params / p.params_n - 1},
                {"aspect_ratio", static_cast<double>(m.hidden) / static_cast<double>(m.layers)},
                {"engine_model_flops_per_token", p.model_flops_per_token},
                {"engine_flops_per_param_token", p.model_flops_per_token / p.model_params}};
  j["system"] = {{"name", r.system.name},
                 {"device", r.system.device.name},
                 {"gpus", p.gpus},
                 {"devices_per_node", r.system.devices_per_node},
                 {"pue", r.system.pue},
                 {"tdp_w", r.system.device.tdp},
                 {"price_per_gpu_hour_usd", r.system.price_per_device_hour * 3600}};
  const auto& b = p.best;
  if (b.found) {
    const auto& pl = b.plan;
    const auto& e = b.estimate;
    j["plan"] = {{"tp", pl.tp},
                 {"pp", pl.pp},
                 {"interleave", pl.interleave},
                 {"tp_comm_overlap", pl.tp_comm_overlap},
                 {"dp_overlap", pl.dp_overlap},
                 {"dp", e.dp},
                 {"micro_batch", pl.micro_batch},
                 {"microbatches", e.microbatches},
                 {"recompute", RecomputeName(pl.recompute)},
                 {"zero", pl.zero},
                 {"sequence_parallel", pl.sequence_parallel},
                 {"plans_in_space", b.candidates},
                 {"plans_evaluated", b.evaluated},
                 {"plans_feasible", b.feasible}};
    j["iteration"] = {{"global_batch", p.global_batch},
                      {"seq_len", p.seq_len},
                      {"tokens", p.global_batch * p.seq_len},
                      {"iteration_s", e.iteration_s},
                      {"mfu", e.mfu},
                      {"model_flops", e.model_flops},
                      {"memory_per_device_bytes", e.memory.total()},
                      {"memory_capacity_bytes", e.memory_capacity}};
    j["training"] = {{"steps", p.steps},
                     {"tokens", p.tokens_trained},
                     {"model_flops", p.train_model_flops},
                     {"days", p.days},
                     {"gpu_hours", p.gpu_hours},
                     {"energy_mwh", p.energy_j / 3.6e9},
                     {"cost_usd", p.cost_usd}};
  }
  j["feasible"] = p.infeasible.empty();
  j["reason"] = p.infeasible;
  if (r.has_range) {
    j["range"] = {{"level", r.level},
                  {"replicates", r.range_samples},
                  {"replicates_infeasible", r.range_infeasible},
                  {"N", RangeJson(r.params_n)},
                  {"D", RangeJson(r.tokens_d)},
                  {"C", RangeJson(r.compute_flops)},
                  {"loss", RangeJson(r.loss)},
                  {"gpus", RangeJson(r.gpus)},
                  {"days", RangeJson(r.days)},
                  {"gpu_hours", RangeJson(r.gpu_hours)},
                  {"energy_mwh", RangeJson({r.energy_j.lo / 3.6e9, r.energy_j.hi / 3.6e9})},
                  {"cost_usd", RangeJson(r.cost_usd)}};
  }
  j["notes"] = r.notes;
  return j;
}

// Flattens the JSON to "path,value" rows.
void Flatten(const nlohmann::json& j, const std::string& prefix, std::ostream& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) Flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else if (j.is_array() && !j.empty() && !j[0].is_string()) {
    for (size_t i = 0; i < j.size(); ++i) Flatten(j[i], prefix + "[" + std::to_string(i) + "]", out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      std::string s = j[i].get<std::string>();
      for (char& c : s)
        if (c == '"') c = '\'';
      out << prefix << "[" << i << "],\"" << s << "\"\n";
    }
  } else if (j.is_string()) {
    std::string s = j.get<std::string>();
    for (char& c : s)
      if (c == '"') c = '\'';
    out << prefix << ",\"" << s << "\"\n";
  } else {
    out << prefix << "," << j.dump() << "\n";
  }
}

std::string Sci(double v) { return std::isfinite(v) ? FormatNumber(v, 4) : "inf"; }
std::string Days(double v) { return std::isfinite(v) ? FormatNumber(v, 4) : "inf"; }
std::string Money(double usd) {
  if (!std::isfinite(usd)) return "inf";
  if (usd >= 1e6) return FormatNumber(usd / 1e6, 4) + " M USD";
  if (usd >= 1e3) return FormatNumber(usd / 1e3, 4) + " k USD";
  return FormatNumber(usd, 4) + " USD";
}
std::string Span(double lo, double hi) {
  return Sci(lo) + " .. " + Sci(hi);
}

void PrintTable(const engine::LawWithUncertainty& law, const engine::FamilySpec& family,
                const engine::PlanRequest& req, const engine::PlanResult& r, std::ostream& out) {
  const engine::ChainPoint& p = r.point;
  const auto& L = law.point;
  const bool range = r.has_range;
  const std::string pct = FormatNumber(100 * r.level, 3) + " %";
  out << "1 law        " << law.name << ": L = " << FormatNumber(L.E, 5) << " + "
      << FormatNumber(L.A, 5) << "/N^" << FormatNumber(L.alpha, 4) << " + " << FormatNumber(L.B, 5)
      << "/D^" << FormatNumber(L.beta, 4) << "\n             " << law.source << "\n";
  if (range)
    out << "             " << law.samples.size() << " bootstrap replicates; ranges below are "
        << pct << " intervals over " << r.range_samples << " of them\n";

  out << "2 N and D    ";
  switch (req.goal) {
    case engine::PlanGoal::kLoss:
      out << (req.inference_tokens > 0
                  ? "cheapest training + inference (" + Sci(req.inference_tokens) +
                        " inference tokens, Sardana et al. 2023) reaching loss "
                  : "cheapest training run reaching loss ")
          << FormatNumber(req.target_loss, 5) << "\n";
      break;
    case engine::PlanGoal::kBudget:
      out << "compute-optimal split of " << Sci(req.budget_flops) << " FLOP (Hoffmann et al. 2022 Eq. 4)\n";
      break;
    case engine::PlanGoal::kGpuDays:
      out << "compute-optimal budget that " << req.gpus << " GPUs train in " << Days(req.days)
          << " days\n";
      break;
  }
  out << "             N = " << Sci(p.params_n) << " parameters, D = " << Sci(p.tokens_d)
      << " tokens (" << FormatNumber(p.tokens_d / p.params_n, 3) << " per parameter)\n"
      << "             C = " << FormatNumber(req.flops_per_param_token) << " N D = "
      << Sci(p.compute_flops) << " FLOP, predicted loss " << FormatNumber(p.loss, 5) << "\n";
  if (p.inference_flops > 0)
    out << "             inference: " << Sci(p.inference_flops) << " FLOP (2 N per token)\n";
  if (range)
    out << "             range: N " << Span(r.params_n.lo, r.params_n.hi) << ", D "
        << Span(r.tokens_d.lo, r.tokens_d.hi) << ", C " << Span(r.compute_flops.lo, r.compute_flops.hi)
        << ", loss " << FormatNumber(r.loss.lo, 5) << " .. " << FormatNumber(r.loss.hi, 5) << "\n";

  const auto& m = p.model;
  out << "3 model      " << m.name << " (" << family.name << " family): " << m.layers
      << " layers, d_model " << m.hidden << ", " << m.heads << " heads (" << models::KvHeads(m)
      << " KV) of " << models::HeadDim(m) << ", " << ActivationName(m.activation) << " ffn "
      << models::FfnSize(m) << ", vocab " << m.vocab << "\n"
      << "             " << Sci(p.model_params) << " parameters ("
      << FormatNumber(100 * (p.model_params / p.params_n - 1), 3) << " % vs N), d_model/layers "
      << FormatNumber(static_cast<double>(m.hidden) / static_cast<double>(m.layers), 4) << "\n";
  if (p.best.found)
    out << "             engine: " << FormatNumber(p.model_flops_per_token / p.model_params, 4)
        << " FLOP per parameter per token (vs " << FormatNumber(req.flops_per_param_token)
        << " in C = k N D)\n";

  out << "4 system     " << r.system.name << ": " << p.gpus << " x " << r.system.device.name
      << ", PUE " << FormatNumber(r.system.pue, 3) << ", TDP "
      << FormatQuantity(r.system.device.tdp, Dimension::kPower) << ", "
      << FormatNumber(r.system.price_per_device_hour * 3600, 4) << " USD per GPU-hour\n";

  if (!p.best.found) {
    out << "5 plan       INFEASIBLE: " << p.infeasible << "\n";
  } else {
    const auto& pl = p.best.plan;
    const auto& e = p.best.estimate;
    out << "5 plan       tp " << pl.tp << ", pp " << pl.pp
        << (pl.interleave > 1 ? " (interleave " + std::to_string(pl.interleave) + ")" : "")
        << ", dp " << e.dp << ", micro-batch " << pl.micro_batch << " (" << e.microbatches
        << " per iteration), recompute " << RecomputeName(pl.recompute) << ", ZeRO-" << pl.zero
        << (pl.sequence_parallel ? ", sequence parallel" : "")
        << (pl.tp_comm_overlap ? ", TP overlap" : "") << "\n"
        << "             orrery search: best of " << p.best.candidates << " plans ("
        << p.best.evaluated << " estimated, " << p.best.feasible << " feasible): iteration " << FormatQuantity(e.iteration_s, Dimension::kTime) << " for "
        << p.global_batch << " x " << p.seq_len << " tokens, MFU "
        << FormatNumber(100 * e.mfu, 3) << " %, "
        << FormatQuantity(e.memory.total(), Dimension::kBytes) << " of "
        << FormatQuantity(e.memory_capacity, Dimension::kBytes) << " per GPU\n";
    if (!p.infeasible.empty()) out << "             INFEASIBLE: " << p.infeasible << "\n";
    out << "6 training   " << p.steps << " steps (" << Sci(p.tokens_trained) << " tokens, "
        << Sci(p.train_model_flops) << " model FLOP)\n"
        << "             " << Days(p.days) << " days, " << Sci(p.gpu_hours) << " GPU-hours, "
        << FormatNumber(p.energy_j / 3.6e9, 4) << " MWh, " << Money(p.cost_usd) << "\n";
    if (range)
      out << "             range: " << Days(r.days.lo) << " .. " << Days(r.days.hi) << " days, "
          << Sci(r.gpu_hours.lo) << " .. " << Sci(r.gpu_hours.hi) << " GPU-hours, "
          << FormatNumber(r.energy_j.lo / 3.6e9, 4) << " .. " << FormatNumber(r.energy_j.hi / 3.6e9, 4)
          << " MWh, " << Money(r.cost_usd.lo) << " .. " << Money(r.cost_usd.hi)
          << (req.deadline_days > 0 ? ", GPUs " + Sci(r.gpus.lo) + " .. " + Sci(r.gpus.hi) : "")
          << "\n";
  }
  if (range && r.range_infeasible > 0)
    out << "             (" << r.range_infeasible << " of " << r.range_samples
        << " replicates found no answer; they count as infinite)\n";
  for (const auto& n : r.notes) out << "note: " << n << "\n";
}

}  // namespace

int RunPlan(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(kHelp);
  std::string loss, budget, days, deadline, inference, price, pue, batch_tokens;
  std::string law_name = "chinchilla", family_name = "llama", system_name, format = "table";
  int64_t gpus = 0, max_gpus = 0, seq_len = 0;
  size_t range_samples = 200;
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("loss", po::value(&loss), "target loss (nats/token)")
    ("budget", po::value(&budget), "training compute budget, FLOP (C = 6 N D)")
    ("days", po::value(&days), "with --gpus: train for this many days")
    ("gpus", po::value(&gpus), "GPU count (a multiple of the node size, or a divisor of it)")
    ("deadline", po::value(&deadline), "finish within this many days: choose the GPU count")
    ("max-gpus", po::value(&max_gpus), "largest GPU count --deadline may choose")
    ("law", po::value(&law_name)->default_value("chinchilla"),
     "a chinchilla-kind preset (orrery fit --list-presets) or a fit file (json/yaml)")
    ("family", po::value(&family_name)->default_value("llama"),
     "model family: a preset in configs/families/ or a YAML file")
    ("system", po::value(&system_name), "system preset (orrery presets list) or YAML file")
    ("inference-tokens", po::value(&inference), "with --loss: lifetime inference tokens (Sardana et al. 2023)")
    ("price-per-gpu-hour", po::value(&price), "USD per GPU-hour (default: the system preset's)")
    ("pue", po::value(&pue), "power usage effectiveness (default: the system preset's)")
    ("batch-tokens", po::value(&batch_tokens), "tokens per global batch (default: the family's)")
    ("seq-len", po::value(&seq_len), "training sequence length (default: the family's)")
    ("range-samples", po::value(&range_samples)->default_value(200),
     "bootstrap replicates carried through the chain (0: no ranges)")
    ("format", po::value(&format)->default_value("table"), "table | json | csv");
  // clang-format on
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see orrery plan --help)\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts << "\nFamily files (configs/families/*.yaml, one top-level key `family:`):\n";
    for (const auto& p : engine::FamilySchema().Infos())
      out << "  " << p.key << std::string(p.key.size() < 18 ? 18 - p.key.size() : 1, ' ') << p.help
          << " [" << p.RuleText() << (p.required ? ", required" : "; default " + p.default_text)
          << "]\n";
    out << "\nFamilies here: ";
    for (const auto& n : engine::FamilyNames(engine::PresetStore::DefaultConfigDir())) out << n << " ";
    out << "\n";
    return kExitOk;
  }
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  const int goals = (vm.count("loss") ? 1 : 0) + (vm.count("budget") ? 1 : 0) + (vm.count("days") ? 1 : 0);
  if (goals != 1) {
    err << "error: give exactly one of --loss L, --budget FLOP, or --gpus N --days D"
        << " (see orrery plan --help)\n";
    return kExitUsage;
  }
  if (system_name.empty()) {
    err << "error: missing --system PRESET (orrery presets list shows them)\n";
    return kExitUsage;
  }
  engine::PlanRequest req;
  req.range_samples = range_samples;
  req.seq_len = seq_len;
  if (vm.count("loss")) {
    req.goal = engine::PlanGoal::kLoss;
    if (!ParseAmount(loss, "--loss", Dimension::kDimensionless, 1, req.target_loss, err)) return kExitUsage;
  } else if (vm.count("budget")) {
    req.goal = engine::PlanGoal::kBudget;
    if (!ParseAmount(budget, "--budget", Dimension::kFlops, 1, req.budget_flops, err)) return kExitUsage;
  } else {
    req.goal = engine::PlanGoal::kGpuDays;
    if (!vm.count("gpus")) {
      err << "error: --days needs --gpus N (the budget is what N GPUs do in D days)\n";
      return kExitUsage;
    }
    if (!ParseAmount(days, "--days", Dimension::kTime, 86400, req.days, err)) return kExitUsage;
    req.days /= 86400;
  }
  if (vm.count("gpus") && gpus <= 0) {
    err << "error: --gpus: expected a positive count, got " << gpus << "\n";
    return kExitUsage;
  }
  req.gpus = gpus;
  if (vm.count("deadline")) {
    if (!ParseAmount(deadline, "--deadline", Dimension::kTime, 86400, req.deadline_days, err))
      return kExitUsage;
    req.deadline_days /= 86400;
    if (!(req.deadline_days > 0)) {
      err << "error: --deadline must be > 0 days\n";
      return kExitUsage;
    }
    if (gpus > 0) {
      err << "error: give --gpus or --deadline, not both (the deadline chooses the GPU count)\n";
      return kExitUsage;
    }
  }
  if (max_gpus < 0) {
    err << "error: --max-gpus must be positive\n";
    return kExitUsage;
  }
  req.max_gpus = max_gpus;
  if (vm.count("inference-tokens") &&
      !ParseAmount(inference, "--inference-tokens", Dimension::kDimensionless, 1, req.inference_tokens, err))
    return kExitUsage;
  if (vm.count("price-per-gpu-hour") &&
      !ParseAmount(price, "--price-per-gpu-hour", Dimension::kMoneyRate, 1.0 / 3600, req.price_per_gpu_s, err))
    return kExitUsage;
  if (vm.count("pue")) {
    if (!ParseAmount(pue, "--pue", Dimension::kDimensionless, 1, req.pue, err)) return kExitUsage;
    if (req.pue < 1) {
      err << "error: --pue: a PUE is at least 1, got '" << pue << "'\n";
      return kExitUsage;
    }
  }
  if (vm.count("batch-tokens") &&
      !ParseAmount(batch_tokens, "--batch-tokens", Dimension::kDimensionless, 1, req.batch_tokens, err))
    return kExitUsage;
  if (seq_len < 0) {
    err << "error: --seq-len must be positive\n";
    return kExitUsage;
  }

  // Inputs: law, family, system.
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  base::Diagnostics diags;
  const auto law = engine::LoadLaw(law_name, scaling_laws::DefaultPresetCatalogPath(), diags);
  const auto family = engine::LoadFamily(family_name, store.dir(), diags);
  hardware::SystemSpec system;
  const bool system_file = system_name.find('/') != std::string::npos ||
                           system_name.ends_with(".yaml") || system_name.ends_with(".yml");
  if (system_file) {
    if (auto doc = base::LoadYamlFile(system_name, diags)) {
      if (!doc->IsMap() || !(*doc)["system"])
        diags.Add(base::LocationOf(*doc, system_name), "", "", "expected a top-level key 'system'");
      else
        engine::LoadSystemMap((*doc)["system"], "system", system_name, store, system, diags);
    }
  } else {
    engine::LoadSystemPreset(system_name, store, base::SourceLocation{"--system", 0, 0}, "system",
                             system, diags);
  }
  if (!diags.ok() || !law || !family) {
    PrintDiagnostics(diags, err);
    return kExitInvalid;
  }

  const engine::PlanResult r = engine::Plan(*law, *family, system, req);
  if (!r.error.empty()) {
    err << "error: " << r.error << "\n";
    return kExitInvalid;
  }
  switch (fmt) {
    case Format::kJson: out << ToJson(*law, *family, req, r).dump(2) << "\n"; break;
    case Format::kCsv:
      out << "key,value\n";
      Flatten(ToJson(*law, *family, req, r), "", out);
      break;
    case Format::kTable: PrintTable(*law, *family, req, r, out); break;
  }
  if (!r.point.infeasible.empty()) {
    err << "error: " << r.point.infeasible << "\n";
    return kExitInvalid;
  }
  return kExitOk;
}

}  // namespace orrery::cli
