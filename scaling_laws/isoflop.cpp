#include "scaling_laws/isoflop.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace orrery::scaling_laws {

base::Result<PowerLawFit> FitPowerLaw(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return base::Error{"power-law fit needs >= 2 (x, y) pairs"};
  const double m = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0 && y[i] > 0)) return base::Error{"power-law fit needs positive values"};
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly; syy += ly * ly;
  }
  const double vx = sxx - sx * sx / m, vy = syy - sy * sy / m, cxy = sxy - sx * sy / m;
  if (!(vx > 1e-12)) return base::Error{"power-law fit: x has no spread"};
  PowerLawFit f;
  f.exponent = cxy / vx;
  f.coefficient = std::exp((sy - f.exponent * sx) / m);
  f.r_squared = vy > 0 ? cxy * cxy / (vx * vy) : 1.0;
  return f;
}

base::Result<IsoFlopFit> FitIsoFlop(const RunTable& table, const IsoFlopOptions& options) {
  std::vector<RunPoint> pts = table.points;
  std::sort(pts.begin(), pts.end(),
            [](const RunPoint& a, const RunPoint& b) { return a.compute_c < b.compute_c; });
  IsoFlopFit fit;
  std::vector<double> cs, ns, ds;
  size_t i = 0;
  while (i < pts.size()) {
    size_t j = i;
    while (j < pts.size() && pts[j].compute_c <= pts[i].compute_c * (1 + options.budget_tolerance)) ++j;
    IsoFlopBudget b;
    b.points = j - i;
    double c_sum = 0, ln_lo = 1e300, ln_hi = -1e300;
    for (size_t k = i; k < j; ++k) {
      c_sum += pts[k].compute_c;
      ln_lo = std::min(ln_lo, std::log(pts[k].params_n));
      ln_hi = std::max(ln_hi, std::log(pts[k].params_n));
    }
    b.compute_flops = c_sum / b.points;
    char label[64];
    std::snprintf(label, sizeof label, "budget C=%.3g", b.compute_flops);
    if (b.points >= options.min_points_per_budget && ln_hi - ln_lo > 1e-9) {
      // L = q0 + q1 u + q2 u^2 with u = ln N - centre (conditioning).
      const double centre = 0.5 * (ln_lo + ln_hi);
      Eigen::MatrixXd X(b.points, 3);
      Eigen::VectorXd y(b.points);
      for (size_t k = i; k < j; ++k) {
        const double u = std::log(pts[k].params_n) - centre;
        X.row(k - i) << 1.0, u, u * u;
        y[k - i] = pts[k].loss;
      }
      const Eigen::Vector3d q = X.colPivHouseholderQr().solve(y);
      b.curvature = 2 * q[2];
      if (q[2] > 0) {
        const double u_opt = -q[1] / (2 * q[2]);
        b.params_opt = std::exp(centre + u_opt);
        b.tokens_opt = b.compute_flops / (options.flops_per_param_token * b.params_opt);
        b.loss_opt = q[0] + q[1] * u_opt + q[2] * u_opt * u_opt;
        b.extrapolated = centre + u_opt < ln_lo || centre + u_opt > ln_hi;
        b.used = !(b.extrapolated && options.drop_extrapolated);
        if (b.extrapolated) {
          fit.warnings.push_back(std::string(label) +
                                 ": the parabola's minimum lies outside the sampled N range");
        }
      } else {
        fit.warnings.push_back(std::string(label) + ": loss is not convex in log N; budget skipped");
      }
    } else if (b.points < options.min_points_per_budget) {
      fit.warnings.push_back(std::string(label) + ": only " + std::to_string(b.points) +
                             " runs; budget skipped");
    }
    if (b.used) {
      cs.push_back(b.compute_flops);
      ns.push_back(b.params_opt);
      ds.push_back(b.tokens_opt);
    }
    fit.budgets.push_back(b);
    i = j;
  }
  if (cs.size() < 2) {
    return base::Error{"IsoFLOP fit needs at least 2 budgets with >= " +
                 std::to_string(options.min_points_per_budget) +
                 " runs and a convex loss curve; found " + std::to_string(cs.size())};
  }
  fit.params_fit = FitPowerLaw(cs, ns).value();
  fit.tokens_fit = FitPowerLaw(cs, ds).value();
  if (std::log10(cs.back() / cs.front()) < 1.0) {
    fit.warnings.push_back("budgets span less than a decade of compute: the exponents are poorly determined");
  }
  return fit;
}

}  // namespace orrery::scaling_laws
