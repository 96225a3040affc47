// `orrery fit`: parses options, calls orrery::Fit (core/api/fit.h; the work
// is scaling_laws/fit_runs.h), presents the law, the answer or the list.

#include "cli/fit_command.h"

#include <boost/program_options.hpp>

#include <cmath>
#include <cstdio>
#include <exception>

#include "core/api/fit.h"
#include "core/api/text.h"
#include "core/base/csv.h"
#include "core/base/diagnostics.h"

namespace orrery::cli {
namespace po = boost::program_options;
namespace sl = orrery::scaling_laws;

namespace {

constexpr int kOk = 0;
constexpr int kBadInput = 2;  // usage: options, their values, their combination

const char* kUsage = R"(usage:
  orrery fit POINTS.csv [--law chinchilla|kaplan|isoflop] [options]
  orrery fit --preset NAME --budget FLOP [--inference-tokens T] [--format table|json|yaml]
  orrery fit --preset NAME --target-loss L [--inference-tokens T]
  orrery fit --list-presets

Fit a scaling law to training runs, or ask a published law how to spend a
compute budget.

POINTS.csv has one row per training run. Columns are found by their usual
names (N|params|params_N, D|tokens|tokens_D|training_tokens,
C|flops|flops_C|compute_budget, L|loss|validation_loss|final_loss) or named
with --n-col/--d-col/--c-col/--loss-col. Two of N, D, C are needed; the third
follows from C = k N D (k = --flops-per-param-token, 6 for dense training).

Laws:
  chinchilla  L = E + A/N^alpha + B/D^beta (Hoffmann et al. 2022 Eq. 2),
              summed Huber (delta 1e-3) on log loss, L-BFGS from the 4500-point
              Hoffmann/Epoch grid (Besiroglu et al. 2024). --method varpro
              fits by variable projection instead (a cross-check).
  kaplan      L(N) = (Nc/N)^aN, L(D) = (Dc/D)^aD and
              L(N,D) = [(Nc/N)^(aN/aD) + Dc/D]^aD (Kaplan et al. 2020 Eqs. 1.1, 1.2, 1.5)
  isoflop     Chinchilla Approach 2: a parabola in log N per compute budget,
              then N_opt = k C^a and D_opt = k C^b over budgets.

Output: a table, or with --format json|yaml the law with its residuals (log
L_pred - log L per run, with the CSV line), the data-spread warnings (N or D
spanning less than a decade, N and D confounded, too few runs) and, with
--bootstrap K, the percentile intervals and every replicate's parameters
(bootstrap.samples). That file is what `orrery plan --law FILE` reads to
carry the law's uncertainty through to days and cost. Warnings also go to
stderr.

Exit status: 0 success, 1 unreadable data or a fit/preset that cannot be
used, 2 usage error (unknown option, bad option value).

Examples:
  orrery fit runs.csv --bootstrap 200
  orrery fit scaling_laws/data/gemstones/gemstones_hot.csv --n-col params_active_precise \
      --bootstrap 100 --format yaml > gemstones-law.yaml
  orrery fit porian.csv --law isoflop --c-col flops --where config_id=4
  orrery fit --preset chinchilla --budget 5.76e23
  orrery fit --preset epoch --budget 1e24 --inference-tokens 2e13 --format json

Options)";

struct Options {
  std::string points;
  std::string law = "chinchilla";
  std::string method = "lbfgs";
  std::string n_col, d_col, c_col, loss_col;
  std::vector<std::string> where;
  std::string flops_per_param_token = "6";
  size_t bootstrap = 0;
  uint64_t seed = 20240416;
  size_t starts = 0;
  std::string format = "table";
  std::string preset;
  std::string budget;
  std::string target_loss;
  std::string inference_tokens;
  std::string presets_file;
  bool list_presets = false;
};

// Parses a positive number given on the command line; names the option.
bool PositiveNumber(const std::string& text, const char* option, double* value, std::ostream& err) {
  if (!base::ParseDouble(text, value) || !(*value >= 0)) {
    err << "orrery fit: " << option << ": expected a non-negative number, got '" << text << "'\n";
    return false;
  }
  return true;
}

}  // namespace

int RunFitCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Options o;
  po::options_description desc(kUsage);
  // clang-format off
  desc.add_options()
    ("help,h", "show this help")
    ("law", po::value(&o.law)->default_value("chinchilla"), "chinchilla | kaplan | isoflop")
    ("method", po::value(&o.method)->default_value("lbfgs"),
     "chinchilla fitter: lbfgs (Huber, grid-started L-BFGS) | varpro (variable projection)")
    ("n-col", po::value(&o.n_col), "column holding parameters N")
    ("d-col", po::value(&o.d_col), "column holding training tokens D")
    ("c-col", po::value(&o.c_col), "column holding training compute C (FLOP)")
    ("loss-col", po::value(&o.loss_col), "column holding the loss L")
    ("where", po::value(&o.where)->composing(), "keep rows with COLUMN=VALUE (repeatable)")
    ("flops-per-param-token", po::value(&o.flops_per_param_token)->default_value("6"),
     "k in C = k N D")
    ("bootstrap", po::value(&o.bootstrap)->default_value(0),
     "K > 0: K-resample bootstrap 95% intervals")
    ("seed", po::value(&o.seed)->default_value(20240416), "bootstrap random seed")
    ("starts", po::value(&o.starts)->default_value(0),
     "L-BFGS starts: 0 = all 4500 grid points, K = the K best grid points")
    ("format", po::value(&o.format)->default_value("table"),
     "table | json | yaml (json and yaml carry the residuals, warnings and bootstrap samples)")
    ("preset", po::value(&o.preset), "a published law (see --list-presets)")
    ("budget", po::value(&o.budget), "training compute budget in FLOP, e.g. 1e24")
    ("target-loss", po::value(&o.target_loss), "loss to reach (inference-aware optimum)")
    ("inference-tokens", po::value(&o.inference_tokens),
     "expected lifetime inference tokens (Sardana et al. 2023)")
    ("presets-file", po::value(&o.presets_file), "preset catalogue CSV (default: shipped one)")
    ("list-presets", po::bool_switch(&o.list_presets), "list the published laws and their sources")
    ("points", po::value(&o.points), "runs CSV (also the first positional argument)");
  // clang-format on
  po::positional_options_description pos;
  pos.add("points", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    err << "orrery fit: " << e.what() << "\n(see orrery fit --help)\n";
    return kBadInput;
  }
  if (vm.count("help")) {
    out << desc << "\n";
    return kOk;
  }
  if (o.format != "table" && o.format != "json" && o.format != "yaml") {
    const std::string guess = base::ClosestMatch(o.format, {"table", "json", "yaml"});
    err << "orrery fit: --format: expected table, json or yaml, got '" << o.format << "'"
        << (guess.empty() ? "" : "; did you mean '" + guess + "'?") << "\n";
    return kBadInput;
  }
  FitRequest req;
  req.points = o.points;
  req.preset = o.preset;
  req.list_presets = o.list_presets;
  req.presets_file = o.presets_file;
  req.law = o.law;
  req.method = o.method;
  req.n_col = o.n_col;
  req.d_col = o.d_col;
  req.c_col = o.c_col;
  req.loss_col = o.loss_col;
  for (const auto& w : o.where) {
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0) {
      err << "orrery fit: --where: expected COLUMN=VALUE, got '" << w << "'\n";
      return kBadInput;
    }
    req.where.emplace_back(w.substr(0, eq), w.substr(eq + 1));
  }
  req.bootstrap = o.bootstrap;
  req.seed = o.seed;
  req.starts = o.starts;
  if (!PositiveNumber(o.flops_per_param_token, "--flops-per-param-token", &req.flops_per_param_token, err) ||
      (!o.budget.empty() && !PositiveNumber(o.budget, "--budget", &req.budget_flops, err)) ||
      (!o.target_loss.empty() && !PositiveNumber(o.target_loss, "--target-loss", &req.target_loss, err)))
    return kBadInput;
  if (!o.inference_tokens.empty()) {
    double t = 0;
    if (!PositiveNumber(o.inference_tokens, "--inference-tokens", &t, err)) return kBadInput;
    req.inference_tokens = t;
  }
  const FitResult r = Fit(req);
  for (const auto& n : r.notes) err << "note: " << n << "\n";
  if (!r.ok()) {
    err << "orrery fit: " << r.reason << (r.status == Status::kUsage ? "\n(see orrery fit --help)" : "") << "\n";
    return static_cast<int>(r.status);
  }
  if (o.format == "table") text::PrintFitTable(r, out);
  else text::PrintStructured(ToJson(r), o.format, out);
  for (const auto& w : r.warnings) err << "warning: " << w << "\n";
  return kOk;
}

}  // namespace orrery::cli
