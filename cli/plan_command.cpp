// `orrery plan`: parses options, calls orrery::Plan (core/api/plan.h; the
// work is core/planning/planner.h), presents the chain.

#include <boost/program_options.hpp>

#include <cmath>

#include "cli/api_support.h"
#include "cli/cli_common.h"
#include "core/api/plan.h"
#include "core/api/text.h"
#include "core/base/csv.h"
#include "core/base/quantity.h"

namespace orrery::cli {

namespace po = boost::program_options;
using base::Dimension;

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
                ratio, heads of head_dim, GQA groups, the MLP rule. A shape
                more than 2x from N (a budget below the family's smallest), or
                a global batch of more than 2x D, answers another question:
                no plan, the reason printed, exit status 3
  4 plan        `orrery search` for the built model (objective time, top 1): tp,
                pp, interleaving, micro-batch (up to 8), recompute, sequence
                parallelism, TP overlap, ZeRO stage, DP overlap; no context
                parallelism or offload, the default group order
  5 training    steps = ceil(D / batch tokens); days = steps x iteration time;
                GPU-hours; energy = steps x GPUs x TDP x iteration x PUE; cost =
                GPU-hours x price
  6 goodput     failures (the system's reliability: section), checkpoints
                (storage:) and stragglers: goodput, the checkpoint interval, and
                the effective days; --deadline and --days are met in effective
                days (docs/goodput.md). --goodput-runs N adds a Monte-Carlo of N
                whole runs: mean, p50 and p90 days (--seed S; same seed, same answer)
With a fit file holding bootstrap replicates, each replicate goes through the
same chain and the ranges are their percentile intervals (the fit's level).

GPU count: --gpus N (a multiple of the node size, or a divisor of it); or
--deadline DAYS: the fewest GPUs (powers of two from one GPU, node multiples
beyond) that finish in time, up to --max-gpus (default: the preset's count);
otherwise the whole preset system.

Quantities: --budget takes FLOP (1e24 or '1e24 FLOP'), --days/--deadline days
(90 or '90 d'), --price-per-gpu-hour USD per GPU-hour (2.5 or '2.5 USD/h').

Exit status: 0 a plan was found; 1 invalid input (unknown preset, a loss the
law cannot reach); 2 usage error; 3 no feasible plan (the reason is printed).

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

}  // namespace

int RunPlan(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(kHelp);
  std::string loss, budget, days, deadline, inference, price, pue, batch_tokens;
  std::string law_name = "chinchilla", family_name = "llama", system_name, format = "table";
  int64_t gpus = 0, max_gpus = 0, seq_len = 0;
  size_t range_samples = 200;
  int64_t goodput_runs = 0;
  uint64_t seed = 1;
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
    ("goodput-runs", po::value(&goodput_runs), "Monte-Carlo: draw N whole runs with failures")
    ("seed", po::value(&seed), "seed of the Monte-Carlo's draws (default 1)")
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
    for (const auto& p : PlanFamilyKeys())
      out << "  " << p.key << std::string(p.key.size() < 18 ? 18 - p.key.size() : 1, ' ') << p.help
          << " [" << p.RuleText() << (p.required ? ", required" : "; default " + p.default_text)
          << "]\n";
    out << "\nFamilies here: ";
    for (const auto& n : PlanFamilyNames()) out << n << " ";
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

  if (goodput_runs < 0 || goodput_runs > 1000000) {
    err << "error: --goodput-runs must be in [0, 1000000], got " << goodput_runs << "\n";
    return kExitUsage;
  }
  PlanRequest plan;
  plan.goodput_runs = goodput_runs;
  plan.goodput_seed = seed;
  plan.law = law_name;
  plan.family = family_name;
  plan.system = system_name;
  plan.chain = req;
  const PlanResult r = Plan(plan);
  if (r.status == Status::kInvalidInput) return PrintFailure(r, err);
  switch (fmt) {
    case Format::kJson: out << ToJson(r).dump(2) << "\n"; break;
    case Format::kCsv: text::PrintPlanCsv(r, out); break;
    case Format::kTable: text::PrintPlanTable(r, out); break;
  }
  return PrintFailure(r, err);  // 0, or 3 with the reason when no plan is feasible
}

}  // namespace orrery::cli
