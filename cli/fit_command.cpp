#include "core/base/diagnostics.h"
#include "cli/fit_command.h"

#include <boost/program_options.hpp>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>

#include "scaling_laws/bootstrap.h"
#include "scaling_laws/chinchilla_law.h"
#include "scaling_laws/compute_optimal.h"
#include "core/base/csv.h"
#include "scaling_laws/isoflop.h"
#include "scaling_laws/kaplan_law.h"
#include "scaling_laws/law_json.h"
#include "scaling_laws/law_presets.h"
#include "scaling_laws/run_table.h"

namespace orrery::cli {
namespace po = boost::program_options;
namespace sl = orrery::scaling_laws;

namespace {

constexpr int kOk = 0;
constexpr int kInvalid = 1;   // the data, file, preset or law cannot be used
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

std::string Num(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

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

// YAML form of a JSON document: maps stay maps, arrays of numbers are written
// in flow style ([1, 2, 3]), arrays of maps as one flow map per line.
void EmitYaml(const nlohmann::json& j, YAML::Emitter& e) {
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      e << YAML::BeginMap;
      for (const auto& [key, value] : j.items()) {
        e << YAML::Key << key << YAML::Value;
        EmitYaml(value, e);
      }
      e << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array: {
      bool scalars = true;
      for (const auto& x : j) scalars = scalars && !x.is_structured();
      e << (scalars ? YAML::Flow : YAML::Block) << YAML::BeginSeq;
      for (const auto& x : j) {
        if (x.is_object()) e << YAML::Flow;
        EmitYaml(x, e);
      }
      e << YAML::EndSeq;
      break;
    }
    case nlohmann::json::value_t::string: e << j.get<std::string>(); break;
    case nlohmann::json::value_t::boolean: e << j.get<bool>(); break;
    case nlohmann::json::value_t::number_integer: e << j.get<int64_t>(); break;
    case nlohmann::json::value_t::number_unsigned: e << j.get<uint64_t>(); break;
    case nlohmann::json::value_t::number_float: e << j.get<double>(); break;
    default: e << YAML::Null; break;
  }
}

// Writes `j` as JSON or YAML (both readable by `orrery plan --law FILE`).
void PrintStructured(const nlohmann::json& j, const std::string& format, std::ostream& out) {
  if (format == "yaml") {
    YAML::Emitter e;
    e.SetDoublePrecision(12);
    EmitYaml(j, e);
    out << e.c_str() << "\n";
  } else {
    out << j.dump(2) << "\n";
  }
}

void PrintWarnings(const std::vector<std::string>& warnings, std::ostream& err) {
  for (const auto& w : warnings) err << "warning: " << w << "\n";
}

int ListPresets(const sl::PresetCatalog& cat, const Options& o, std::ostream& out) {
  if (o.format != "table") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& p : cat.presets) {
      j.push_back({{"name", p.name}, {"aliases", p.aliases}, {"kind", p.kind_name},
                   {"parameters", p.parameters}, {"formula", p.formula}, {"source", p.source},
                   {"notes", p.notes}});
    }
    PrintStructured(j, o.format, out);
    return kOk;
  }
  for (const auto& p : cat.presets) {
    out << p.name;
    for (const auto& a : p.aliases) out << " (" << a << ")";
    out << "  [" << p.kind_name << "]  " << p.formula << "\n    " << p.source << "\n";
  }
  return kOk;
}

int PresetAnswer(const sl::PresetCatalog& cat, const Options& o, std::ostream& out,
                 std::ostream& err) {
  auto preset = cat.Find(o.preset);
  if (!preset) {
    err << "orrery fit: " << preset.error().message << "\n";
    return kInvalid;
  }
  double k = 6, budget = 0, target = 0, inference = 0;
  if (!PositiveNumber(o.flops_per_param_token, "--flops-per-param-token", &k, err)) return kBadInput;
  if (!o.budget.empty() && !PositiveNumber(o.budget, "--budget", &budget, err)) return kBadInput;
  if (!o.target_loss.empty() && !PositiveNumber(o.target_loss, "--target-loss", &target, err))
    return kBadInput;
  if (!o.inference_tokens.empty() &&
      !PositiveNumber(o.inference_tokens, "--inference-tokens", &inference, err))
    return kBadInput;
  if (budget <= 0 && target <= 0) {
    err << "orrery fit: --preset needs --budget FLOP (> 0) or --target-loss L\n";
    return kBadInput;
  }
  nlohmann::json j = {{"preset", preset->name}, {"kind", preset->kind_name},
                      {"formula", preset->formula}, {"source", preset->source}};
  std::string table;
  if (preset->kind == sl::LawKind::kAllocation) {
    if (budget <= 0) {
      err << "orrery fit: preset '" << preset->name << "' is an allocation rule; give --budget\n";
      return kBadInput;
    }
    auto a = sl::EvaluateAllocation(*preset, budget).value();
    j["C"] = budget;
    j["N_opt"] = a.params_n;
    j["D_opt"] = a.tokens_d;
    table += "C      " + Num(budget) + " FLOP\nN_opt  " + Num(a.params_n) + "\nD_opt  " +
             Num(a.tokens_d) + " tokens\n";
  } else if (preset->kind == sl::LawKind::kChinchilla) {
    const sl::ChinchillaParams law = preset->Chinchilla().value();
    if (budget > 0) {
      auto closed = sl::ComputeOptimalClosedForm(law, budget, k);
      auto numeric = sl::ComputeOptimalNumeric(law, budget, k);
      if (!closed || !numeric) {
        err << "orrery fit: " << (closed ? numeric.error() : closed.error()).message << "\n";
        return kInvalid;
      }
      j["compute_optimal"] = sl::ComputeOptimumToJson(*closed);
      j["compute_optimal"]["N_opt_numeric"] = numeric->params_n;
      j["compute_optimal"]["exponent_a"] = closed->exponent_a;
      table += "C                " + Num(budget) + " FLOP (C = " + Num(k) + " N D)\n";
      table += "N_opt            " + Num(closed->params_n) + " parameters (numeric: " +
               Num(numeric->params_n) + ")\n";
      table += "D_opt            " + Num(closed->tokens_d) + " tokens\n";
      table += "tokens/param     " + Num(closed->tokens_per_param) + "\n";
      table += "loss             " + Num(closed->loss, 5) + "\n";
      table += "N_opt ~ C^a      a = " + Num(closed->exponent_a) + "\n";
      if (target <= 0) target = closed->loss;
    }
    if (!o.inference_tokens.empty() || (budget <= 0 && target > 0)) {
      auto ia = sl::InferenceAwareOptimal(law, target, inference, k, 2.0);
      if (!ia) {
        err << "orrery fit: " << ia.error().message << "\n";
        return kInvalid;
      }
      j["inference_aware"] = {{"target_loss", ia->target_loss}, {"N", ia->params_n},
                              {"D_train", ia->tokens_train}, {"D_inference", ia->tokens_inference},
                              {"training_flops", ia->training_flops},
                              {"inference_flops", ia->inference_flops},
                              {"total_flops", ia->total_flops}};
      table += "\ncheapest model reaching loss " + Num(target, 5) + " with " + Num(inference) +
               " inference tokens (Sardana et al. 2023):\n";
      table += "N                " + Num(ia->params_n) + "\nD_train          " +
               Num(ia->tokens_train) + " tokens (" + Num(ia->tokens_train / ia->params_n) +
               " per param)\ntraining FLOP    " + Num(ia->training_flops) +
               "\ninference FLOP   " + Num(ia->inference_flops) + "\ntotal FLOP       " +
               Num(ia->total_flops) + "\n";
    }
  } else {
    err << "orrery fit: preset '" << preset->name << "' is of kind '" << preset->kind_name
        << "'; compute-optimal answers need a 'chinchilla' or 'allocation' preset"
        << (preset->name.rfind("kaplan", 0) == 0 ? " (try kaplan2020_compute_optimal)" : "")
        << "\n";
    return kInvalid;
  }
  if (o.format != "table") {
    PrintStructured(j, o.format, out);
  } else {
    out << preset->name << ": " << preset->formula << "\n  " << preset->source << "\n\n" << table;
  }
  return kOk;
}

int FitPoints(const Options& o, std::ostream& out, std::ostream& err) {
  sl::RunColumns cols;
  cols.params = o.n_col;
  cols.tokens = o.d_col;
  cols.compute = o.c_col;
  cols.loss = o.loss_col;
  if (!PositiveNumber(o.flops_per_param_token, "--flops-per-param-token",
                      &cols.flops_per_param_token, err))
    return kBadInput;
  for (const auto& w : o.where) {
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0) {
      err << "orrery fit: --where: expected COLUMN=VALUE, got '" << w << "'\n";
      return kBadInput;
    }
    cols.where.emplace_back(w.substr(0, eq), w.substr(eq + 1));
  }
  auto runs = sl::LoadRuns(o.points, cols);
  if (!runs) {
    err << "orrery fit: " << runs.error().message << "\n";
    return kInvalid;
  }
  for (const auto& n : runs->notes) err << "note: " << n << "\n";
  const bool json = o.format != "table";  // json or yaml

  if (o.law == "chinchilla") {
    base::Result<sl::ChinchillaFit> fit = base::Error{""};
    if (o.method == "varpro") {
      fit = sl::FitChinchillaVarPro(*runs);
    } else {
      sl::HuberFitOptions opts;
      opts.max_starts = o.starts;
      fit = sl::FitChinchillaHuber(*runs, opts);
    }
    if (!fit) {
      err << "orrery fit: " << fit.error().message << "\n";
      return kInvalid;
    }
    std::optional<sl::BootstrapResult> boot;
    if (o.bootstrap > 0) {
      auto b = sl::BootstrapChinchilla(*runs, fit->params, o.bootstrap, o.seed);
      if (!b) {
        err << "orrery fit: " << b.error().message << "\n";
        return kInvalid;
      }
      boot = *b;
    }
    if (json) {
      PrintStructured(sl::ChinchillaFitToJson(*fit, *runs, boot ? &*boot : nullptr), o.format, out);
    } else {
      const auto& p = fit->params;
      out << "Chinchilla law L = E + A/N^alpha + B/D^beta  (" << fit->method << ", "
          << runs->points.size() << " runs from " << runs->source << ")\n";
      const double vals[] = {p.E, p.A, p.B, p.alpha, p.beta, p.beta / (p.alpha + p.beta)};
      const char* names[] = {"E", "A", "B", "alpha", "beta", "a_opt"};
      for (int i = 0; i < 6; ++i) {
        out << "  " << names[i] << std::string(8 - std::string(names[i]).size(), ' ')
            << Num(vals[i], 6);
        if (boot) {
          out << "   [" << Num(boot->intervals[i].lo) << ", " << Num(boot->intervals[i].hi) << "]";
        }
        out << "\n";
      }
      if (boot) out << "  (" << Num(100 * boot->level, 3) << "% bootstrap intervals, "
                    << boot->resamples << " resamples)\n";
      double ss = 0;
      for (double r : fit->residuals) ss += r * r;
      out << "  objective (sum Huber)  " << Num(fit->objective, 7) << "\n"
          << "  rms log residual       " << Num(std::sqrt(ss / fit->residuals.size())) << "\n";
    }
    PrintWarnings(fit->warnings, err);
    return kOk;
  }
  if (o.law == "kaplan") {
    auto n_fit = sl::FitKaplanN(*runs);
    auto d_fit = sl::FitKaplanD(*runs);
    auto nd_fit = sl::FitKaplanND(*runs);
    for (const auto* e : {n_fit.ok() ? nullptr : &n_fit.error(), d_fit.ok() ? nullptr : &d_fit.error(),
                          nd_fit.ok() ? nullptr : &nd_fit.error()}) {
      if (e != nullptr) {
        err << "orrery fit: " << e->message << "\n";
        return kInvalid;
      }
    }
    if (json) {
      PrintStructured(sl::KaplanFitsToJson(*n_fit, *d_fit, *nd_fit, *runs), o.format, out);
    } else {
      out << "Kaplan et al. 2020 laws (" << runs->points.size() << " runs from " << runs->source
          << ")\n"
          << "  L(N)   = (" << Num(n_fit->law.scale) << "/N)^" << Num(n_fit->law.exponent)
          << "   rms log residual " << Num(n_fit->rms_log_residual) << "\n"
          << "  L(D)   = (" << Num(d_fit->law.scale) << "/D)^" << Num(d_fit->law.exponent)
          << "   rms log residual " << Num(d_fit->rms_log_residual) << "\n"
          << "  L(N,D) = [(" << Num(nd_fit->law.n_c) << "/N)^(" << Num(nd_fit->law.alpha_n) << "/"
          << Num(nd_fit->law.alpha_d) << ") + " << Num(nd_fit->law.d_c) << "/D]^"
          << Num(nd_fit->law.alpha_d) << "   rms log residual " << Num(nd_fit->rms_log_residual)
          << "\n";
    }
    PrintWarnings(nd_fit->warnings, err);
    PrintWarnings(n_fit->warnings, err);
    PrintWarnings(d_fit->warnings, err);
    return kOk;
  }
  // isoflop
  sl::IsoFlopOptions iso;
  iso.flops_per_param_token = cols.flops_per_param_token;
  auto fit = sl::FitIsoFlop(*runs, iso);
  if (!fit) {
    err << "orrery fit: " << fit.error().message << "\n";
    return kInvalid;
  }
  std::optional<sl::BootstrapResult> boot;
  if (o.bootstrap > 0) {
    const sl::Estimator est = [&](const sl::RunTable& t) -> base::Result<std::vector<double>> {
      auto f = sl::FitIsoFlop(t, iso);
      if (!f) return f.error();
      return std::vector<double>{f->params_fit.exponent, f->tokens_fit.exponent};
    };
    auto b = sl::Bootstrap(*runs, o.bootstrap, o.seed, {"a", "b"}, est);
    if (!b) {
      err << "orrery fit: " << b.error().message << "\n";
      return kInvalid;
    }
    boot = *b;
  }
  if (json) {
    PrintStructured(sl::IsoFlopFitToJson(*fit, boot ? &*boot : nullptr), o.format, out);
  } else {
    out << "IsoFLOP (Chinchilla Approach 2), " << runs->points.size() << " runs from "
        << runs->source << "\n  budget C      runs  N_opt        D_opt        L_opt\n";
    for (const auto& b : fit->budgets) {
      char line[160];
      std::snprintf(line, sizeof line, "  %-12.4g  %4zu  %-11.4g  %-11.4g  %.4f%s\n",
                    b.compute_flops, b.points, b.params_opt, b.tokens_opt, b.loss_opt,
                    b.used ? (b.extrapolated ? "  (vertex outside data)" : "") : "  (skipped)");
      out << line;
    }
    out << "  N_opt = " << Num(fit->params_fit.coefficient) << " C^" << Num(fit->params_fit.exponent);
    if (boot) out << "  [" << Num(boot->intervals[0].lo) << ", " << Num(boot->intervals[0].hi) << "]";
    out << "\n  D_opt = " << Num(fit->tokens_fit.coefficient) << " C^" << Num(fit->tokens_fit.exponent);
    if (boot) out << "  [" << Num(boot->intervals[1].lo) << ", " << Num(boot->intervals[1].hi) << "]";
    out << "\n";
  }
  PrintWarnings(fit->warnings, err);
  return kOk;
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
  if (o.law != "chinchilla" && o.law != "kaplan" && o.law != "isoflop") {
    std::string guess = base::ClosestMatch(o.law, {"chinchilla", "kaplan", "isoflop"});
    err << "orrery fit: --law: expected chinchilla, kaplan or isoflop, got '" << o.law << "'"
        << (guess.empty() ? "" : "; did you mean '" + guess + "'?") << "\n";
    return kBadInput;
  }
  if (o.method != "lbfgs" && o.method != "varpro") {
    err << "orrery fit: --method: expected lbfgs or varpro, got '" << o.method << "'\n";
    return kBadInput;
  }
  try {
    if (o.list_presets || !o.preset.empty()) {
      if (!o.points.empty()) {
        err << "orrery fit: give either POINTS.csv or --preset/--list-presets, not both\n";
        return kBadInput;
      }
      auto cat = sl::LoadPresetCatalog(o.presets_file.empty() ? sl::DefaultPresetCatalogPath()
                                                              : o.presets_file);
      if (!cat) {
        err << "orrery fit: " << cat.error().message << "\n";
        return kInvalid;
      }
      return o.list_presets ? ListPresets(*cat, o, out) : PresetAnswer(*cat, o, out, err);
    }
    if (o.points.empty()) {
      err << "orrery fit: missing POINTS.csv (or --preset NAME)\n(see orrery fit --help)\n";
      return kBadInput;
    }
    return FitPoints(o, out, err);
  } catch (const std::exception& e) {
    // The library reports errors as values; this guards against the
    // unexpected (e.g. allocation failure) so the CLI never crashes.
    err << "orrery fit: internal error: " << e.what() << "\n";
    return kInvalid;
  }
}

}  // namespace orrery::cli
