// Bootstrap intervals: percentiles, determinism, and the width of the
// intervals of a Chinchilla fit to runs from a planted law with known noise.

#include "scaling_laws/bootstrap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include <Eigen/Dense>

#include "scaling_laws/test_support.h"

namespace orrery::scaling_laws {
namespace {

TEST(Bootstrap, PercentileInterpolates) {
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3}, 1.0), 3.0);
}

TEST(Bootstrap, SameSeedSameIntervals) {
  RunTable t;
  for (int i = 1; i <= 20; ++i) t.points.push_back({1.0 * i, 1.0, 1.0, 1.0 + 0.1 * i});
  const Estimator mean = [](const RunTable& r) -> base::Result<std::vector<double>> {
    double s = 0;
    for (const auto& p : r.points) s += p.loss;
    return std::vector<double>{s / r.points.size()};
  };
  auto a = Bootstrap(t, 50, 7, {"mean"}, mean);
  auto b = Bootstrap(t, 50, 7, {"mean"}, mean);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->intervals[0].lo, b->intervals[0].lo);
  EXPECT_EQ(a->intervals[0].hi, b->intervals[0].hi);
  EXPECT_LT(a->intervals[0].lo, 2.05);
  EXPECT_GT(a->intervals[0].hi, 2.05);
}

// Bootstrap of a fit to runs from a planted law with 1 % multiplicative
// noise (ln L = ln L_true + 0.01 z, z from seed 7). Resampling the points
// estimates the spread of the fit, so the 95 % interval of alpha must be
// about 2 x 1.96 standard errors wide: the least-absolute-deviation standard
// error sqrt(pi/2) x sigma x sqrt(diag((J^T J)^-1)) (see
// chinchilla_law_test.cpp), computed here in closed form for the exponent
// alone as a check of scale: we accept a width between half and twice that.
// The interval contains the point estimate, and the same seed gives the same
// intervals.
TEST(Bootstrap, PlantedLawIntervalsHaveTheNoiseWidth) {
  const ChinchillaParams truth{1.82, 482.0, 2085.0, 0.348, 0.366};
  const double sigma = 0.01;
  testing::SeededNormal z(7);
  RunTable t;
  for (double n : {7e7, 2e8, 5e8, 1.2e9, 3e9, 7e9, 1.6e10})
    for (double d : {1e9, 4e9, 1.6e10, 6.4e10, 2.5e11, 1e12})
      t.points.push_back({n, d, 6 * n * d, truth.Loss(n, d) * std::exp(sigma * z())});
  HuberFitOptions o;
  o.max_starts = 50;
  auto fit = FitChinchillaHuber(t, o);
  ASSERT_TRUE(fit.ok()) << fit.error().message;

  // Standard error of alpha from the Gauss-Newton covariance at the fit.
  const ChinchillaParams& p = fit->params;
  const double se_alpha =
      std::sqrt(std::acos(-1.0) / 2.0) * testing::LeastSquaresStandardErrors(t, p, sigma)(3);
  auto b = BootstrapChinchilla(t, p, 100, 20240416);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->failures, 0u);
  ASSERT_EQ(b->names[3], "alpha");
  const Interval alpha = b->intervals[3];
  const double width = alpha.hi - alpha.lo, expected = 2 * 1.96 * se_alpha;
  std::printf("alpha %.4f, 95 %% interval [%.4f, %.4f], width %.4f, expected %.4f\n", p.alpha,
              alpha.lo, alpha.hi, width, expected);
  EXPECT_GT(width, 0.5 * expected);
  EXPECT_LT(width, 2.0 * expected);
  for (size_t k = 0; k < b->names.size(); ++k) {
    const double point = k == 0 ? p.E : k == 1 ? p.A : k == 2 ? p.B : k == 3 ? p.alpha
                       : k == 4 ? p.beta : p.beta / (p.alpha + p.beta);
    EXPECT_LE(b->intervals[k].lo, point) << b->names[k];
    EXPECT_GE(b->intervals[k].hi, point) << b->names[k];
  }
  auto again = BootstrapChinchilla(t, p, 100, 20240416);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->intervals[3].lo, alpha.lo);
  EXPECT_EQ(again->intervals[3].hi, alpha.hi);
}

}  // namespace
}  // namespace orrery::scaling_laws
