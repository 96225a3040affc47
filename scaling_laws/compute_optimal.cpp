#include "scaling_laws/compute_optimal.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/base/quantity.h"

namespace orrery::scaling_laws {
namespace {

base::Result<bool> CheckLaw(const ChinchillaParams& law) {
  if (!(law.A > 0 && law.B > 0 && law.alpha > 0 && law.beta > 0 && law.E >= 0)) {
    return base::Error{"compute-optimal: the law needs A, B, alpha, beta > 0 and E >= 0"};
  }
  return true;
}

// Golden-section minimisation of a unimodal f on [lo, hi].
double GoldenSection(const std::function<double(double)>& f, double lo, double hi, double tol) {
  const double inv_phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double c = hi - inv_phi * (hi - lo), d = lo + inv_phi * (hi - lo);
  double fc = f(c), fd = f(d);
  while (hi - lo > tol) {
    if (fc < fd) {
      hi = d; d = c; fd = fc;
      c = hi - inv_phi * (hi - lo); fc = f(c);
    } else {
      lo = c; c = d; fc = fd;
      d = lo + inv_phi * (hi - lo); fd = f(d);
    }
  }
  return 0.5 * (lo + hi);
}

}  // namespace

base::Result<ComputeOptimum> ComputeOptimalClosedForm(const ChinchillaParams& law, double compute_flops,
                                                double k) {
  if (auto ok = CheckLaw(law); !ok) return ok.error();
  if (!(compute_flops > 0 && k > 0)) return base::Error{"compute-optimal: budget and k must be positive"};
  const double s = law.alpha + law.beta;
  ComputeOptimum o;
  o.compute_flops = compute_flops;
  o.exponent_a = law.beta / s;
  o.g = std::pow(law.alpha * law.A / (law.beta * law.B), 1.0 / s);
  o.params_n = o.g * std::pow(compute_flops / k, law.beta / s);
  o.tokens_d = std::pow(compute_flops / k, law.alpha / s) / o.g;
  o.tokens_per_param = o.tokens_d / o.params_n;
  o.loss = law.Loss(o.params_n, o.tokens_d);
  return o;
}

base::Result<ComputeOptimum> ComputeOptimalNumeric(const ChinchillaParams& law, double compute_flops,
                                             double k) {
  if (auto ok = CheckLaw(law); !ok) return ok.error();
  if (!(compute_flops > 0 && k > 0)) return base::Error{"compute-optimal: budget and k must be positive"};
  const double log_budget = std::log(compute_flops / k);  // = log N + log D
  // The log of the reducible loss A/N^alpha + B/D^beta, which has the
  // loss's minimum: E only adds rounding, and beyond about 1e70 FLOP the
  // reducible part fell below E's last bit, the loss read flat and the
  // search wandered (1e300 FLOP gave N = 8e232 for the closed form's 1.8e135).
  const double log_a = std::log(law.A), log_b = std::log(law.B);
  auto log_reducible = [&](double log_n) {
    const double x = log_a - law.alpha * log_n, y = log_b - law.beta * (log_budget - log_n);
    const double m = std::max(x, y);
    return m + std::log(std::exp(x - m) + std::exp(y - m));
  };
  // N from 1 parameter to C/k (one token): the optimum lies inside.
  const double log_n = GoldenSection(log_reducible, 0.0, log_budget, 1e-12);
  ComputeOptimum o;
  o.compute_flops = compute_flops;
  o.params_n = std::exp(log_n);
  o.tokens_d = std::exp(log_budget - log_n);
  o.tokens_per_param = o.tokens_d / o.params_n;
  o.loss = law.Loss(o.params_n, o.tokens_d);
  return o;
}

base::Result<InferenceAwareOptimum> InferenceAwareOptimal(const ChinchillaParams& law, double target_loss,
                                                    double tokens_inference, double k_train,
                                                    double k_inf) {
  if (auto ok = CheckLaw(law); !ok) return ok.error();
  if (!(target_loss > law.E)) {
    return base::Error{"target loss " + base::FormatNumber(target_loss, 5) +
                       " is not above the law's irreducible loss E = " + base::FormatNumber(law.E, 5) +
                       ": no finite model and data reach it"};
  }
  if (!(tokens_inference >= 0)) return base::Error{"inference-aware optimum: inference tokens must be >= 0"};
  if (!(k_train > 0 && k_inf >= 0)) return base::Error{"inference-aware optimum: FLOP factors must be positive"};
  const double gap = target_loss - law.E;
  // Smallest model that can reach the loss with infinite data: A/N^alpha = gap.
  const double log_n_min = std::log(law.A / gap) / law.alpha;
  // Tokens needed by a model of size exp(log_n) to reach the target (Eq. 2 solved for D).
  auto log_tokens = [&](double log_n) {
    const double rest = gap - law.A * std::exp(-law.alpha * log_n);
    return (std::log(law.B) - std::log(rest)) / law.beta;
  };
  auto log_total = [&](double log_n) {
    const double d_train = std::exp(log_tokens(log_n));
    return log_n + std::log(k_train * d_train + k_inf * tokens_inference);
  };
  // Coarse log-spaced scan of t = log N - log N_min in [1e-9, 60], then refine.
  constexpr int kSteps = 4000;
  double best_t = 0, best_v = std::numeric_limits<double>::infinity();
  std::vector<double> ts(kSteps);
  for (int i = 0; i < kSteps; ++i) {
    ts[i] = 1e-9 * std::pow(60.0 / 1e-9, static_cast<double>(i) / (kSteps - 1));
    const double v = log_total(log_n_min + ts[i]);
    if (v < best_v) {
      best_v = v;
      best_t = i;
    }
  }
  const int bi = static_cast<int>(best_t);
  const double lo = ts[bi > 0 ? bi - 1 : 0], hi = ts[bi + 1 < kSteps ? bi + 1 : kSteps - 1];
  const double t = GoldenSection([&](double tt) { return log_total(log_n_min + tt); }, lo, hi, 1e-13);
  InferenceAwareOptimum o;
  o.target_loss = target_loss;
  o.params_n = std::exp(log_n_min + t);
  o.tokens_train = std::exp(log_tokens(log_n_min + t));
  o.tokens_inference = tokens_inference;
  o.training_flops = k_train * o.params_n * o.tokens_train;
  o.inference_flops = k_inf * o.params_n * tokens_inference;
  o.total_flops = o.training_flops + o.inference_flops;
  return o;
}

}  // namespace orrery::scaling_laws
