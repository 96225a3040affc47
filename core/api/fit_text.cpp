// The tables of `orrery fit`, and its JSON as JSON or YAML.

#include "core/api/text.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>

namespace orrery::text {

namespace sl = orrery::scaling_laws;

namespace {

std::string Num(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

}  // namespace

// YAML form of a JSON document: maps stay maps, arrays of numbers are written
// in flow style ([1, 2, 3]), arrays of maps as one flow map per line.
namespace {

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

}  // namespace

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

void PrintFitTable(const FitResult& r, std::ostream& out) {
  if (r.catalog) {
    for (const auto& p : r.catalog->presets) {
      out << p.name;
      for (const auto& a : p.aliases) out << " (" << a << ")";
      out << "  [" << p.kind_name << "]  " << p.formula << "\n    " << p.source << "\n";
    }
    return;
  }
  if (r.answer) {
    const sl::PresetAnswer& a = *r.answer;
    const double k = a.question.flops_per_param_token;
    out << a.preset.name << ": " << a.preset.formula << "\n  " << a.preset.source << "\n\n";
    if (a.allocation)
      out << "C      " << Num(a.question.budget_flops) << " FLOP\nN_opt  " << Num(a.allocation->params_n)
          << "\nD_opt  " << Num(a.allocation->tokens_d) << " tokens\n";
    if (a.optimum) {
      const auto& c = *a.optimum;
      out << "C                " << Num(a.question.budget_flops) << " FLOP (C = " << Num(k) << " N D)\n"
          << "N_opt            " << Num(c.params_n) << " parameters (numeric: " << Num(a.numeric_params_n) << ")\n"
          << "D_opt            " << Num(c.tokens_d) << " tokens\n"
          << "tokens/param     " << Num(c.tokens_per_param) << "\n"
          << "loss             " << Num(c.loss, 5) << "\n"
          << "N_opt ~ C^a      a = " << Num(c.exponent_a) << "\n";
      const sl::FittedRange range = sl::FittedRangeOf(a.preset);
      for (const std::string& note :
           {sl::ExtrapolationNote("N_opt", c.params_n, range.n_min, range.n_max, "parameters"),
            sl::ExtrapolationNote("D_opt", c.tokens_d, range.d_min, range.d_max, "tokens")})
        if (!note.empty()) out << "note: " << note << "\n";
    }
    if (a.inference_aware) {
      const auto& ia = *a.inference_aware;
      out << "\ncheapest model reaching loss " << Num(a.inference_target_loss, 5) << " with "
          << Num(a.question.inference_tokens) << " inference tokens (Sardana et al. 2023):\n"
          << "N                " << Num(ia.params_n) << "\nD_train          " << Num(ia.tokens_train)
          << " tokens (" << Num(ia.tokens_train / ia.params_n) << " per param)\ntraining FLOP    "
          << Num(ia.training_flops) << "\ninference FLOP   " << Num(ia.inference_flops)
          << "\ntotal FLOP       " << Num(ia.total_flops) << "\n";
    }
    return;
  }
  const sl::FitRunsOutcome& f = *r.fit;
  const auto& boot = f.bootstrap;
  if (f.chinchilla) {
    const auto& p = f.chinchilla->params;
    out << "Chinchilla law L = E + A/N^alpha + B/D^beta  (" << f.chinchilla->method << ", "
        << f.runs.points.size() << " runs from " << f.runs.source << ")\n";
    const double vals[] = {p.E, p.A, p.B, p.alpha, p.beta, p.beta / (p.alpha + p.beta)};
    const char* names[] = {"E", "A", "B", "alpha", "beta", "a_opt"};
    for (int i = 0; i < 6; ++i) {
      out << "  " << names[i] << std::string(8 - std::string(names[i]).size(), ' ') << Num(vals[i], 6);
      if (boot) out << "   [" << Num(boot->intervals[i].lo) << ", " << Num(boot->intervals[i].hi) << "]";
      out << "\n";
    }
    if (boot) out << "  (" << Num(100 * boot->level, 3) << "% bootstrap intervals, " << boot->resamples << " resamples)\n";
    double ss = 0;
    for (double x : f.chinchilla->residuals) ss += x * x;
    out << "  objective (sum Huber)  " << Num(f.chinchilla->objective, 7) << "\n"
        << "  rms log residual       " << Num(std::sqrt(ss / f.chinchilla->residuals.size())) << "\n";
  } else if (f.kaplan_nd) {
    const auto &n = *f.kaplan_n, &d = *f.kaplan_d;
    const auto &nd = *f.kaplan_nd;
    out << "Kaplan et al. 2020 laws (" << f.runs.points.size() << " runs from " << f.runs.source << ")\n"
        << "  L(N)   = (" << Num(n.law.scale) << "/N)^" << Num(n.law.exponent) << "   rms log residual "
        << Num(n.rms_log_residual) << "\n"
        << "  L(D)   = (" << Num(d.law.scale) << "/D)^" << Num(d.law.exponent) << "   rms log residual "
        << Num(d.rms_log_residual) << "\n"
        << "  L(N,D) = [(" << Num(nd.law.n_c) << "/N)^(" << Num(nd.law.alpha_n) << "/" << Num(nd.law.alpha_d)
        << ") + " << Num(nd.law.d_c) << "/D]^" << Num(nd.law.alpha_d) << "   rms log residual "
        << Num(nd.rms_log_residual) << "\n";
  } else if (f.isoflop) {
    const auto& fit = *f.isoflop;
    out << "IsoFLOP (Chinchilla Approach 2), " << f.runs.points.size() << " runs from " << f.runs.source
        << "\n  budget C      runs  N_opt        D_opt        L_opt\n";
    for (const auto& b : fit.budgets) {
      char line[160];
      std::snprintf(line, sizeof line, "  %-12.4g  %4zu  %-11.4g  %-11.4g  %.4f%s\n", b.compute_flops, b.points,
                    b.params_opt, b.tokens_opt, b.loss_opt,
                    b.used ? (b.extrapolated ? "  (vertex outside data)" : "") : "  (skipped)");
      out << line;
    }
    out << "  N_opt = " << Num(fit.params_fit.coefficient) << " C^" << Num(fit.params_fit.exponent);
    if (boot) out << "  [" << Num(boot->intervals[0].lo) << ", " << Num(boot->intervals[0].hi) << "]";
    out << "\n  D_opt = " << Num(fit.tokens_fit.coefficient) << " C^" << Num(fit.tokens_fit.exponent);
    if (boot) out << "  [" << Num(boot->intervals[1].lo) << ", " << Num(boot->intervals[1].hi) << "]";
    out << "\n";
  }
}

}  // namespace orrery::text
