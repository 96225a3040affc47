#include "scaling_laws/kaplan_law.h"

#include <Eigen/Dense>
#include <LBFGS.h>

#include <cmath>
#include <exception>
#include <limits>

#include "core/base/quantity.h"

namespace orrery::scaling_laws {

double PowerLaw1D::Loss(double x) const { return std::pow(scale / x, exponent); }

double KaplanNDParams::Loss(double params_n, double tokens_d) const {
  return std::pow(std::pow(n_c / params_n, alpha_n / alpha_d) + d_c / tokens_d, alpha_d);
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// log L = exponent * (log x_c - log x) = intercept + slope * log x.
base::Result<KaplanFit1D> Fit1D(const RunTable& table, bool use_n) {
  const char* axis = use_n ? "N" : "D";
  const size_t m = table.points.size();
  if (m < 3) return base::Error{std::string("Kaplan L(") + axis + ") fit needs at least 3 points"};
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : table.points) {
    const double x = std::log(use_n ? p.params_n : p.tokens_d), y = std::log(p.loss);
    sx += x; sy += y; sxx += x * x; sxy += x * y;
  }
  const double var = sxx - sx * sx / m;
  if (!(var > 1e-12)) {
    return base::Error{std::string("Kaplan L(") + axis + ") fit: all points have the same " + axis};
  }
  const double slope = (sxy - sx * sy / m) / var;
  const double intercept = (sy - slope * sx) / m;
  KaplanFit1D fit;
  fit.law.exponent = -slope;
  if (!(fit.law.exponent > 0)) {
    fit.warnings.push_back(std::string("loss does not decrease with ") + axis +
                           ": the fitted exponent is not positive");
  }
  // intercept = exponent * log x_c. With loss (almost) flat in the axis the
  // exponent is ~0 and x_c = exp(intercept / exponent) leaves the range of a
  // double: no power law to report (a fuzzed point file found it).
  fit.law.scale = fit.law.exponent != 0 ? std::exp(intercept / fit.law.exponent) : kInf;
  if (!std::isfinite(fit.law.scale) || !(fit.law.scale > 0)) {
    return base::Error{std::string("Kaplan L(") + axis + ") fit: loss does not follow a power law in " +
                       axis + " (fitted exponent " + base::FormatNumber(fit.law.exponent, 4) +
                       "): the scale " + axis + "_c is out of range"};
  }
  double ss = 0;
  for (const auto& p : table.points) {
    const double r = std::log(fit.law.Loss(use_n ? p.params_n : p.tokens_d)) - std::log(p.loss);
    fit.residuals.push_back(r);
    ss += r * r;
  }
  fit.rms_log_residual = std::sqrt(ss / m);
  if (std::log10(std::exp(std::sqrt(var / m))) < 0.25) {
    fit.warnings.push_back(std::string(axis) + " has little spread: the exponent is poorly determined");
  }
  return fit;
}

// x = (log N_c, log D_c, alpha_N, alpha_D); objective sum (log pred - log L)^2.
class KaplanObjective {
 public:
  explicit KaplanObjective(const RunTable& t) {
    for (const auto& p : t.points) {
      log_n_.push_back(std::log(p.params_n));
      log_d_.push_back(std::log(p.tokens_d));
      log_l_.push_back(std::log(p.loss));
    }
  }
  double operator()(const Eigen::VectorXd& x, Eigen::VectorXd& grad) {
    const double v = Evaluate(x, &grad);
    if (v < best_value_) {
      best_value_ = v;
      best_x_ = x;
    }
    return v;
  }
  double Evaluate(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const {
    const double lnc = x[0], ldc = x[1], an = x[2], ad = x[3];
    double total = 0;
    Eigen::Vector4d g = Eigen::Vector4d::Zero();
    for (size_t i = 0; i < log_n_.size(); ++i) {
      const double lu = (an / ad) * (lnc - log_n_[i]);
      const double lv = ldc - log_d_[i];
      const double mx = std::max(lu, lv);
      const double eu = std::exp(lu - mx), ev = std::exp(lv - mx);
      const double log_s = mx + std::log(eu + ev);
      const double fu = eu / (eu + ev), fv = ev / (eu + ev);
      const double r = ad * log_s - log_l_[i];
      total += r * r;
      if (grad != nullptr) {
        g[0] += 2 * r * an * fu;
        g[1] += 2 * r * ad * fv;
        g[2] += 2 * r * fu * (lnc - log_n_[i]);
        g[3] += 2 * r * (log_s - fu * (an / ad) * (lnc - log_n_[i]));
      }
    }
    if (grad != nullptr) *grad = g;
    return total;
  }
  void ResetBest() { best_value_ = kInf; }
  double best_value() const { return best_value_; }
  const Eigen::VectorXd& best_x() const { return best_x_; }

 private:
  std::vector<double> log_n_, log_d_, log_l_;
  double best_value_ = kInf;
  Eigen::VectorXd best_x_;
};

}  // namespace

base::Result<KaplanFit1D> FitKaplanN(const RunTable& table) { return Fit1D(table, true); }
base::Result<KaplanFit1D> FitKaplanD(const RunTable& table) { return Fit1D(table, false); }

base::Result<KaplanFitND> FitKaplanND(const RunTable& table) {
  if (table.points.size() < 5) return base::Error{"Kaplan L(N, D) fit needs at least 5 points"};
  KaplanObjective f(table);
  LBFGSpp::LBFGSParam<double> param;
  param.m = 10;
  param.epsilon = 1e-10;
  param.epsilon_rel = 0;
  param.past = 1;
  param.delta = 1e-14;
  param.max_iterations = 2000;
  param.max_linesearch = 60;
  param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
  double best = kInf;
  Eigen::VectorXd best_x;
  for (double lnc : {20.0, 30.0, 40.0})
    for (double ldc : {20.0, 30.0, 40.0})
      for (double an : {0.05, 0.3})
        for (double ad : {0.05, 0.3}) {
          Eigen::VectorXd x(4);
          x << lnc, ldc, an, ad;
          LBFGSpp::LBFGSSolver<double> solver(param);
          double fx = 0;
          f.ResetBest();
          try {
            solver.minimize(f, x, fx);
          } catch (const std::exception&) {
            // line search stalled: the best point seen is kept below
          }
          if (f.best_value() < best && f.best_x()[3] > 0) {
            best = f.best_value();
            best_x = f.best_x();
          }
        }
  if (!std::isfinite(best)) return base::Error{"Kaplan L(N, D) fit: no start converged"};
  KaplanFitND fit;
  fit.law = {std::exp(best_x[0]), std::exp(best_x[1]), best_x[2], best_x[3]};
  double ss = 0;
  for (const auto& p : table.points) {
    const double r = std::log(fit.law.Loss(p.params_n, p.tokens_d)) - std::log(p.loss);
    fit.residuals.push_back(r);
    ss += r * r;
  }
  fit.rms_log_residual = std::sqrt(ss / table.points.size());
  fit.warnings = SpreadWarnings(table);
  return fit;
}

}  // namespace orrery::scaling_laws
