#include "scaling_laws/law_json.h"

namespace orrery::scaling_laws {
namespace {

nlohmann::json Residuals(const RunTable& table, const std::vector<double>& residuals) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < table.points.size() && i < residuals.size(); ++i) {
    const auto& p = table.points[i];
    out.push_back({{"line", p.line}, {"N", p.params_n}, {"D", p.tokens_d}, {"L", p.loss},
                   {"log_residual", residuals[i]}});
  }
  return out;
}

}  // namespace

nlohmann::json BootstrapToJson(const BootstrapResult& b) {
  nlohmann::json j = {{"level", b.level}, {"resamples", b.resamples}, {"failures", b.failures}};
  for (size_t k = 0; k < b.names.size(); ++k) {
    j["intervals"][b.names[k]] = {b.intervals[k].lo, b.intervals[k].hi};
  }
  // Every replicate, index-aligned across names, so that a reader can carry
  // the joint uncertainty (A and alpha are strongly correlated) further.
  for (size_t k = 0; k < b.names.size() && k < b.samples.size(); ++k) {
    j["samples"][b.names[k]] = b.samples[k];
  }
  return j;
}

nlohmann::json ChinchillaFitToJson(const ChinchillaFit& fit, const RunTable& table,
                                   const BootstrapResult* bootstrap) {
  const auto& p = fit.params;
  nlohmann::json j = {
      {"law", "chinchilla"},
      {"formula", "L = E + A/N^alpha + B/D^beta"},
      {"method", fit.method},
      {"source", table.source},
      {"parameters", {{"E", p.E}, {"A", p.A}, {"B", p.B}, {"alpha", p.alpha}, {"beta", p.beta}}},
      {"a_opt", p.beta / (p.alpha + p.beta)},
      {"objective_sum_huber", fit.objective},
      {"points", table.points.size()},
      {"starts", fit.starts},
      {"notes", table.notes},
      {"warnings", fit.warnings},
      {"residuals", Residuals(table, fit.residuals)},
  };
  if (bootstrap != nullptr) j["bootstrap"] = BootstrapToJson(*bootstrap);
  return j;
}

nlohmann::json KaplanFitsToJson(const KaplanFit1D& n_fit, const KaplanFit1D& d_fit,
                                const KaplanFitND& nd_fit, const RunTable& table) {
  std::vector<std::string> warnings = nd_fit.warnings;
  warnings.insert(warnings.end(), n_fit.warnings.begin(), n_fit.warnings.end());
  warnings.insert(warnings.end(), d_fit.warnings.begin(), d_fit.warnings.end());
  return {
      {"law", "kaplan"},
      {"source", table.source},
      {"L_N", {{"formula", "L = (N_c/N)^alpha_N"}, {"N_c", n_fit.law.scale},
               {"alpha_N", n_fit.law.exponent}, {"rms_log_residual", n_fit.rms_log_residual}}},
      {"L_D", {{"formula", "L = (D_c/D)^alpha_D"}, {"D_c", d_fit.law.scale},
               {"alpha_D", d_fit.law.exponent}, {"rms_log_residual", d_fit.rms_log_residual}}},
      {"L_ND", {{"formula", "L = [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^alpha_D"},
                {"N_c", nd_fit.law.n_c}, {"D_c", nd_fit.law.d_c},
                {"alpha_N", nd_fit.law.alpha_n}, {"alpha_D", nd_fit.law.alpha_d},
                {"rms_log_residual", nd_fit.rms_log_residual}}},
      {"points", table.points.size()},
      {"notes", table.notes},
      {"warnings", warnings},
      {"residuals", Residuals(table, nd_fit.residuals)},
  };
}

nlohmann::json IsoFlopFitToJson(const IsoFlopFit& fit, const BootstrapResult* bootstrap) {
  nlohmann::json budgets = nlohmann::json::array();
  for (const auto& b : fit.budgets) {
    budgets.push_back({{"C", b.compute_flops}, {"points", b.points}, {"N_opt", b.params_opt},
                       {"D_opt", b.tokens_opt}, {"L_opt", b.loss_opt},
                       {"extrapolated", b.extrapolated}, {"used", b.used}});
  }
  nlohmann::json j = {
      {"law", "isoflop"},
      {"method", "Chinchilla Approach 2: parabola in ln N per budget, power law of the vertices"},
      {"N_opt", {{"coefficient", fit.params_fit.coefficient}, {"exponent_a", fit.params_fit.exponent},
                 {"r_squared", fit.params_fit.r_squared}}},
      {"D_opt", {{"coefficient", fit.tokens_fit.coefficient}, {"exponent_b", fit.tokens_fit.exponent},
                 {"r_squared", fit.tokens_fit.r_squared}}},
      {"budgets", budgets},
      {"warnings", fit.warnings},
  };
  if (bootstrap != nullptr) j["bootstrap"] = BootstrapToJson(*bootstrap);
  return j;
}

nlohmann::json ComputeOptimumToJson(const ComputeOptimum& o) {
  return {{"C", o.compute_flops}, {"N_opt", o.params_n}, {"D_opt", o.tokens_d},
          {"tokens_per_param", o.tokens_per_param}, {"L_opt", o.loss}};
}

}  // namespace orrery::scaling_laws
