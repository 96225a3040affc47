#pragma once
// Nonparametric bootstrap (Efron 1979): resample the runs with replacement,
// refit, and report percentile intervals. Deterministic for a given seed
// (std::mt19937_64 drawing indices by std::uniform_int_distribution, so
// results are reproducible with one standard library).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scaling_laws/chinchilla_law.h"
#include "core/base/result.h"
#include "scaling_laws/run_table.h"

namespace orrery::scaling_laws {

struct Interval {
  double lo = 0.0;
  double hi = 0.0;
};

struct BootstrapResult {
  std::vector<std::string> names;               // one per estimated quantity
  std::vector<Interval> intervals;              // percentile interval per name
  std::vector<std::vector<double>> samples;     // samples[name][replicate]
  double level = 0.95;
  size_t resamples = 0;                         // successful refits
  size_t failures = 0;                          // refits that returned an error
};

using Estimator = std::function<base::Result<std::vector<double>>(const RunTable&)>;

// The most resamples Bootstrap accepts.
inline constexpr size_t kMaxBootstrapResamples = 100000;

// Runs `resamples` replicates of `estimator` on resampled copies of `table`.
// Intervals are the (1-level)/2 and (1+level)/2 percentiles (linear
// interpolation between order statistics). Errors: resamples outside
// [2, kMaxBootstrapResamples], or fewer
// than half of the refits succeeded.
base::Result<BootstrapResult> Bootstrap(const RunTable& table, size_t resamples, uint64_t seed,
                                  const std::vector<std::string>& names, const Estimator& estimator,
                                  double level = 0.95);

// Bootstrap of the Chinchilla Huber fit, each replicate refitted from the
// point estimate (Besiroglu et al. 2024). Quantities: E, A, B, alpha, beta,
// a_opt = beta / (alpha + beta) (the exponent of N_opt in C).
base::Result<BootstrapResult> BootstrapChinchilla(const RunTable& table, const ChinchillaParams& point,
                                            size_t resamples, uint64_t seed,
                                            const HuberFitOptions& options = {},
                                            double level = 0.95);

// Percentile of sorted data with linear interpolation, q in [0, 1].
double Percentile(std::vector<double> values, double q);

}  // namespace orrery::scaling_laws
