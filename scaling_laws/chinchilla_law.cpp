#include "scaling_laws/chinchilla_law.h"

#include <Eigen/Dense>
#include <LBFGS.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>

namespace orrery::scaling_laws {

double ChinchillaParams::Loss(double params_n, double tokens_d) const {
  return E + A / std::pow(params_n, alpha) + B / std::pow(tokens_d, beta);
}

InitGrid InitGrid::Hoffmann() {
  InitGrid g;
  for (int i = 0; i <= 4; ++i) g.alpha.push_back(0.5 * i);
  g.beta = g.alpha;
  for (int i = -2; i <= 2; ++i) g.e.push_back(0.5 * i);
  for (int i = 0; i <= 5; ++i) g.a.push_back(5.0 * i);
  g.b = g.a;
  return g;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double Huber(double r, double delta) {
  const double ar = std::abs(r);
  return ar <= delta ? 0.5 * r * r : delta * (ar - 0.5 * delta);
}
double HuberSlope(double r, double delta) {
  return std::abs(r) <= delta ? r : (r > 0 ? delta : -delta);
}

// Log-space data, computed once per fit.
struct LogData {
  Eigen::ArrayXd log_n, log_d, log_l;
  explicit LogData(const RunTable& t)
      : log_n(t.points.size()), log_d(t.points.size()), log_l(t.points.size()) {
    for (size_t i = 0; i < t.points.size(); ++i) {
      log_n[i] = std::log(t.points[i].params_n);
      log_d[i] = std::log(t.points[i].tokens_d);
      log_l[i] = std::log(t.points[i].loss);
    }
  }
  Eigen::Index size() const { return log_n.size(); }
};

// x = (a, b, e, alpha, beta). Returns the objective and fills `grad` if given.
class HuberObjective {
 public:
  HuberObjective(const LogData& data, double delta, bool average)
      : data_(data), delta_(delta), scale_(average ? 1.0 / data.size() : 1.0) {}

  double operator()(const Eigen::VectorXd& x, Eigen::VectorXd& grad) {
    if (++evaluations_ > budget_) throw BudgetExhausted();
    const double value = Evaluate(x, &grad);
    if (value < best_value_) {
      best_value_ = value;
      best_x_ = x;
    }
    return value;
  }

  double Evaluate(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const {
    const double a = x[0], b = x[1], e = x[2], alpha = x[3], beta = x[4];
    double total = 0.0;
    double g[5] = {0, 0, 0, 0, 0};
    for (Eigen::Index i = 0; i < data_.size(); ++i) {
      const double t1 = a - alpha * data_.log_n[i];
      const double t2 = b - beta * data_.log_d[i];
      const double t3 = e;
      const double m = std::max({t1, t2, t3});
      const double w1 = std::exp(t1 - m), w2 = std::exp(t2 - m), w3 = std::exp(t3 - m);
      const double s = w1 + w2 + w3;
      const double r = m + std::log(s) - data_.log_l[i];
      total += Huber(r, delta_);
      if (grad != nullptr) {
        const double h = HuberSlope(r, delta_) / s;
        g[0] += h * w1;
        g[1] += h * w2;
        g[2] += h * w3;
        g[3] -= h * w1 * data_.log_n[i];
        g[4] -= h * w2 * data_.log_d[i];
      }
    }
    if (grad != nullptr) {
      grad->resize(5);
      for (int k = 0; k < 5; ++k) (*grad)[k] = scale_ * g[k];
    }
    return scale_ * total;
  }

  // Thrown out of the solver when the evaluation budget is spent.
  struct BudgetExhausted {};
  void SetBudget(size_t evaluations) { budget_ = evaluations; }
  bool exhausted() const { return evaluations_ > budget_; }

  void ResetBest() { best_value_ = kInf; }
  double best_value() const { return best_value_; }
  const Eigen::VectorXd& best_x() const { return best_x_; }

 private:
  const LogData& data_;
  double delta_;
  double scale_;
  double best_value_ = kInf;
  Eigen::VectorXd best_x_;
  size_t evaluations_ = 0;
  size_t budget_ = std::numeric_limits<size_t>::max();
};

// A fitted parameter set that can be printed: every value finite.
bool Finite(const ChinchillaParams& p) {
  return std::isfinite(p.E) && std::isfinite(p.A) && std::isfinite(p.B) &&
         std::isfinite(p.alpha) && std::isfinite(p.beta);
}

ChinchillaParams FromX(const Eigen::VectorXd& x) {
  return ChinchillaParams{std::exp(x[2]), std::exp(x[0]), std::exp(x[1]), x[3], x[4]};
}
Eigen::VectorXd ToX(const ChinchillaParams& p) {
  Eigen::VectorXd x(5);
  x << std::log(p.A), std::log(p.B), std::log(p.E), p.alpha, p.beta;
  return x;
}

LBFGSpp::LBFGSParam<double> SolverParams(const HuberFitOptions& o) {
  LBFGSpp::LBFGSParam<double> p;  // LBFGSpp defaults
  if (!o.solver_defaults) {
    p.m = 10;
    p.epsilon = o.gradient_tolerance;
    p.epsilon_rel = 0.0;
    p.past = 1;
    p.delta = o.objective_tolerance;
    p.max_iterations = o.max_iterations;
    p.max_linesearch = 60;
    p.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
  } else {
    p.max_iterations = o.max_iterations;
  }
  return p;
}

// Runs L-BFGS from x0. LBFGSpp reports line-search trouble near the optimum
// by throwing; the best point evaluated is kept either way.
// Returns (objective, x) with objective = +inf when nothing finite was seen.
std::pair<double, Eigen::VectorXd> RunLbfgs(HuberObjective& f, const Eigen::VectorXd& x0,
                                            const LBFGSpp::LBFGSParam<double>& params) {
  LBFGSpp::LBFGSSolver<double> solver(params);
  Eigen::VectorXd x = x0;
  double fx = 0.0;
  f.ResetBest();
  try {
    solver.minimize(f, x, fx);
  } catch (const std::exception&) {
    // Line search failed to make progress: keep the best point seen.
  } catch (const HuberObjective::BudgetExhausted&) {
    return {kInf, x0};
  }
  // exp() of a log-parameter can overflow (B = inf): not a usable fit.
  if (!std::isfinite(f.best_value()) || !Finite(FromX(f.best_x()))) return {kInf, x0};
  return {f.best_value(), f.best_x()};
}

void FillDiagnostics(const RunTable& table, double delta, ChinchillaFit* fit) {
  fit->objective = ChinchillaObjective(table, fit->params, delta, false);
  fit->residuals.clear();
  for (const auto& p : table.points) {
    fit->residuals.push_back(std::log(fit->params.Loss(p.params_n, p.tokens_d)) -
                             std::log(p.loss));
  }
  fit->warnings = SpreadWarnings(table);
  if (fit->params.alpha <= 0.0 || fit->params.beta <= 0.0) {
    fit->warnings.push_back("a fitted exponent is not positive: the law is not decreasing in N or D");
  }
  if (fit->params.E < 1e-3 * std::min<double>(1.0, fit->params.E + 1.0)) {
    fit->warnings.push_back("E is close to zero: the irreducible loss is not determined by the data");
  }
}

}  // namespace

double ChinchillaObjective(const RunTable& table, const ChinchillaParams& params,
                           double huber_delta, bool average) {
  const LogData data(table);
  HuberObjective f(data, huber_delta, average);
  return f.Evaluate(ToX(params), nullptr);
}

base::Result<ChinchillaFit> FitChinchillaHuberFrom(const RunTable& table, const ChinchillaParams& start,
                                             const HuberFitOptions& options) {
  if (table.points.size() < 5) {
    return base::Error{"Chinchilla fit needs at least 5 points, got " +
                 std::to_string(table.points.size())};
  }
  if (!(start.A > 0 && start.B > 0 && start.E > 0)) {
    return base::Error{"Chinchilla fit start needs positive E, A, B"};
  }
  const LogData data(table);
  HuberObjective f(data, options.huber_delta, options.average);
  f.SetBudget(options.max_evaluations);
  auto [value, x] = RunLbfgs(f, ToX(start), SolverParams(options));
  if (f.exhausted())
    return base::Error{"Chinchilla fit did not converge within " +
                       std::to_string(options.max_evaluations) + " objective evaluations"};
  if (!std::isfinite(value)) return base::Error{"Chinchilla fit: objective not finite from the start point"};
  ChinchillaFit fit;
  fit.method = "huber-lbfgs";
  fit.params = FromX(x);
  fit.starts = 1;
  FillDiagnostics(table, options.huber_delta, &fit);
  if (!std::isfinite(fit.objective))
    return base::Error{"Chinchilla fit: the objective at the fitted law is not finite"};
  return fit;
}

base::Result<ChinchillaFit> FitChinchillaHuber(const RunTable& table, const HuberFitOptions& options) {
  if (table.points.size() < 5) {
    return base::Error{"Chinchilla fit needs at least 5 points, got " +
                 std::to_string(table.points.size())};
  }
  const InitGrid& g = options.grid;
  if (g.size() == 0) return base::Error{"Chinchilla fit: empty initialisation grid"};
  const LogData data(table);
  HuberObjective f(data, options.huber_delta, options.average);

  std::vector<Eigen::VectorXd> starts;
  starts.reserve(g.size());
  for (double a : g.a)
    for (double b : g.b)
      for (double e : g.e)
        for (double alpha : g.alpha)
          for (double beta : g.beta) {
            Eigen::VectorXd x(5);
            x << a, b, e, alpha, beta;
            starts.push_back(x);
          }
  if (options.max_starts > 0 && options.max_starts < starts.size()) {
    std::vector<std::pair<double, size_t>> scored;
    scored.reserve(starts.size());
    for (size_t i = 0; i < starts.size(); ++i) scored.emplace_back(f.Evaluate(starts[i], nullptr), i);
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& l, const auto& r) { return l.first < r.first; });
    std::vector<Eigen::VectorXd> kept;
    for (size_t i = 0; i < options.max_starts; ++i) kept.push_back(starts[scored[i].second]);
    starts = std::move(kept);
  }

  const auto params = SolverParams(options);
  double best_value = kInf;
  Eigen::VectorXd best_x;
  f.SetBudget(options.max_evaluations);
  for (const auto& x0 : starts) {
    auto [value, x] = RunLbfgs(f, x0, params);
    if (f.exhausted())
      return base::Error{"Chinchilla fit did not converge within " +
                         std::to_string(options.max_evaluations) +
                         " objective evaluations over " + std::to_string(starts.size()) +
                         " starts: the points do not determine the law (try --method varpro, or "
                         "fewer starts with --starts K)"};
    if (value < best_value) {
      best_value = value;
      best_x = x;
    }
  }
  if (!std::isfinite(best_value))
    return base::Error{"Chinchilla fit: no start gave a finite objective with finite parameters "
                       "(the points do not determine the law)"};
  ChinchillaFit fit;
  fit.method = "huber-lbfgs";
  fit.params = FromX(best_x);
  fit.starts = starts.size();
  FillDiagnostics(table, options.huber_delta, &fit);
  if (!std::isfinite(fit.objective))
    return base::Error{"Chinchilla fit: the objective at the fitted law is not finite"};
  return fit;
}

// ---------------------------------------------------------------------------
// Variable projection.

namespace {

// Non-negative least squares for at most 3 unknowns: min |W (X c - y)|^2,
// c >= 0, solved exactly by trying every active set (2^3 subsets) and keeping
// the best feasible one. Exact because the problem is convex and small.
Eigen::Vector3d Nnls3(const Eigen::MatrixX3d& X, const Eigen::VectorXd& y) {
  Eigen::Vector3d best = Eigen::Vector3d::Zero();
  double best_cost = y.squaredNorm();
  for (int mask = 1; mask < 8; ++mask) {
    std::array<int, 3> cols{};
    int k = 0;
    for (int j = 0; j < 3; ++j)
      if (mask & (1 << j)) cols[k++] = j;
    Eigen::MatrixXd Xs(X.rows(), k);
    for (int j = 0; j < k; ++j) Xs.col(j) = X.col(cols[j]);
    const Eigen::VectorXd cs = Xs.colPivHouseholderQr().solve(y);
    if ((cs.array() < 0.0).any() || !cs.allFinite()) continue;
    const double cost = (Xs * cs - y).squaredNorm();
    if (cost < best_cost) {
      best_cost = cost;
      best.setZero();
      for (int j = 0; j < k; ++j) best[cols[j]] = cs[j];
    }
  }
  return best;
}

struct Profile {
  const RunTable& table;
  const LogData& data;
  const VarProOptions& options;

  // Returns the summed log-space Huber objective at the IRLS/NNLS solution of
  // (E, A, B) for fixed exponents, and the parameters.
  double operator()(double alpha, double beta, ChinchillaParams* out) const {
    const Eigen::Index n = data.size();
    Eigen::MatrixX3d X(n, 3);
    Eigen::VectorXd loss(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      X(i, 0) = 1.0;
      X(i, 1) = std::exp(-alpha * data.log_n[i]);
      X(i, 2) = std::exp(-beta * data.log_d[i]);
      loss[i] = std::exp(data.log_l[i]);
    }
    Eigen::VectorXd w = loss.cwiseInverse();  // relative residuals ~ log residuals
    Eigen::Vector3d c = Eigen::Vector3d::Zero();
    for (int it = 0; it < options.irls_iterations; ++it) {
      const Eigen::MatrixX3d Xw = w.asDiagonal() * X;
      const Eigen::VectorXd yw = w.cwiseProduct(loss);
      c = Nnls3(Xw, yw);
      // Huber IRLS weights on the relative residual: sqrt(min(1, delta/|r|)).
      const Eigen::ArrayXd r = ((X * c - loss).array() / loss.array());
      const Eigen::ArrayXd hw =
          (options.huber_delta / r.abs().max(1e-300)).min(1.0).sqrt();
      w = (hw / loss.array()).matrix();
    }
    ChinchillaParams p{c[0], c[1], c[2], alpha, beta};
    if (out != nullptr) *out = p;
    double total = 0.0;
    for (Eigen::Index i = 0; i < n; ++i) {
      const double pred = c[0] + c[1] * X(i, 1) + c[2] * X(i, 2);
      if (!(pred > 0.0)) return kInf;
      total += Huber(std::log(pred) - data.log_l[i], options.huber_delta);
    }
    return total;
  }
};

}  // namespace

base::Result<ChinchillaFit> FitChinchillaVarPro(const RunTable& table, const VarProOptions& options) {
  if (table.points.size() < 5) {
    return base::Error{"Chinchilla fit needs at least 5 points, got " +
                 std::to_string(table.points.size())};
  }
  if (!(options.grid_step > 0 && options.exponent_max > options.exponent_min &&
        options.exponent_min > 0)) {
    return base::Error{"variable projection: need 0 < exponent_min < exponent_max and grid_step > 0"};
  }
  const LogData data(table);
  const Profile profile{table, data, options};
  double best = kInf, best_alpha = 0, best_beta = 0;
  for (double alpha = options.exponent_min; alpha <= options.exponent_max + 1e-12;
       alpha += options.grid_step) {
    for (double beta = options.exponent_min; beta <= options.exponent_max + 1e-12;
         beta += options.grid_step) {
      const double v = profile(alpha, beta, nullptr);
      if (v < best) {
        best = v;
        best_alpha = alpha;
        best_beta = beta;
      }
    }
  }
  if (!std::isfinite(best)) return base::Error{"variable projection: no exponent pair gave a finite fit"};
  // Compass search refinement in (alpha, beta).
  double step = options.grid_step;
  // Bounded: each round either improves or halves the step, and the search
  // stays inside [exponent_min, exponent_max], so a profile that keeps
  // decreasing towards infinity cannot walk for ever.
  for (int round = 0; round < 100000 && step > options.refine_tolerance; ++round) {
    bool improved = false;
    const double moves[4][2] = {{step, 0}, {-step, 0}, {0, step}, {0, -step}};
    for (const auto& m : moves) {
      const double a = best_alpha + m[0], b = best_beta + m[1];
      if (a < options.exponent_min || b < options.exponent_min || a > options.exponent_max ||
          b > options.exponent_max)
        continue;
      const double v = profile(a, b, nullptr);
      if (v < best) {
        best = v;
        best_alpha = a;
        best_beta = b;
        improved = true;
      }
    }
    if (!improved) step *= 0.5;
  }
  ChinchillaFit fit;
  fit.method = "varpro-nnls";
  profile(best_alpha, best_beta, &fit.params);
  FillDiagnostics(table, options.huber_delta, &fit);
  if (!Finite(fit.params) || !std::isfinite(fit.objective))
    return base::Error{"variable projection: the fit is not finite (the points do not determine the law)"};
  if (best_alpha <= options.exponent_min + 1e-9 || best_beta <= options.exponent_min + 1e-9 ||
      best_alpha >= options.exponent_max - 1e-9 || best_beta >= options.exponent_max - 1e-9) {
    fit.warnings.push_back("variable projection: an exponent sits on the search boundary");
  }
  return fit;
}

}  // namespace orrery::scaling_laws
