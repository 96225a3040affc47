// Tests of the Chinchilla law fitters: exact recovery of a planted law, and
// recovery within its statistical uncertainty when seeded noise is added.
// The reproduction of Epoch AI's refit (Besiroglu et al. 2024) needs data
// that may not be redistributed and runs as `orrery validate --scaling-laws`.

#include "scaling_laws/chinchilla_law.h"

#include <gtest/gtest.h>

#include <cmath>

#include <Eigen/Dense>

#include "scaling_laws/test_support.h"

namespace orrery::scaling_laws {
namespace {

TEST(ChinchillaLaw, LossIsEquationTwo) {
  // Hoffmann et al. 2022 Eq. 10 (rounded): E=1.69, A=406.4, B=410.7, 0.34, 0.28.
  const ChinchillaParams p{1.69, 406.4, 410.7, 0.34, 0.28};
  const double n = 70e9, d = 1.4e12;
  EXPECT_DOUBLE_EQ(p.Loss(n, d), 1.69 + 406.4 / std::pow(n, 0.34) + 410.7 / std::pow(d, 0.28));
}

TEST(ChinchillaLaw, HoffmannGridHas4500Starts) {
  EXPECT_EQ(InitGrid::Hoffmann().size(), 4500u);
}

TEST(ChinchillaFit, RecoversExactSyntheticLaw) {
  const ChinchillaParams truth{1.8, 500.0, 2000.0, 0.35, 0.37};
  RunTable t;
  for (double n : {1e8, 3e8, 1e9, 3e9, 1e10})
    for (double d : {2e9, 1e10, 5e10, 2e11}) t.points.push_back({n, d, 6 * n * d, truth.Loss(n, d)});
  HuberFitOptions o;
  o.max_starts = 100;
  auto fit = FitChinchillaHuber(t, o);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_NEAR(fit->params.alpha, 0.35, 1e-4);
  EXPECT_NEAR(fit->params.beta, 0.37, 1e-4);
  EXPECT_NEAR(fit->params.E, 1.8, 1e-3);
  EXPECT_LT(fit->objective, 1e-12);
  auto vp = FitChinchillaVarPro(t);
  ASSERT_TRUE(vp.ok()) << vp.error().message;
  EXPECT_NEAR(vp->params.alpha, 0.35, 1e-4);
  EXPECT_NEAR(vp->params.beta, 0.37, 1e-4);
}

TEST(ChinchillaFit, TooFewPointsIsAnError) {
  RunTable t;
  t.points.push_back({1e9, 1e10, 6e19, 3.0});
  auto fit = FitChinchillaHuber(t);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.error().message.find("at least 5 points"), std::string::npos);
}

// A planted law near Epoch's refit of Chinchilla (Besiroglu et al. 2024:
// E 1.82, A 482, B 2085, alpha 0.348, beta 0.366) on a 7 x 6 grid of model
// sizes (70M - 16B) and token counts (1B - 1T), with multiplicative noise:
// ln L = ln L_true + sigma z, z standard normal from seed 2024, sigma 0.01
// (1 % scatter, about that of the Chinchilla points around the fit).
constexpr double kSigma = 0.01;
const ChinchillaParams kPlanted{1.82, 482.0, 2085.0, 0.348, 0.366};

RunTable PlantedRuns(uint64_t seed) {
  testing::SeededNormal z(seed);
  RunTable t;
  for (double n : {7e7, 2e8, 5e8, 1.2e9, 3e9, 7e9, 1.6e10})
    for (double d : {1e9, 4e9, 1.6e10, 6.4e10, 2.5e11, 1e12})
      t.points.push_back({n, d, 6 * n * d, kPlanted.Loss(n, d) * std::exp(kSigma * z())});
  return t;
}

// The Huber loss with delta 1e-3 << sigma is, for these residuals, least
// absolute deviations, whose standard errors under Gaussian noise are
// sqrt(pi/2) = 1.25 times those of least squares (asymptotic efficiency
// 2/pi). The fit must land within 4 such standard errors of the planted
// value: a Gaussian deviation that large has probability 6e-5.
TEST(ChinchillaFit, RecoversPlantedLawThroughNoise) {
  const RunTable t = PlantedRuns(2024);
  const Eigen::VectorXd se = testing::LeastSquaresStandardErrors(t, kPlanted, kSigma);
  const double k = 4.0 * std::sqrt(std::acos(-1.0) / 2.0);
  HuberFitOptions o;
  o.max_starts = 100;
  auto fit = FitChinchillaHuber(t, o);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  const ChinchillaParams& p = fit->params;
  std::printf("planted E 1.82 A 482 B 2085 alpha 0.348 beta 0.366; fit E %.4f A %.1f B %.0f "
              "alpha %.4f beta %.4f; standard errors %.3g %.3g %.3g %.3g %.3g\n",
              p.E, p.A, p.B, p.alpha, p.beta, se[0], se[1], se[2], se[3], se[4]);
  EXPECT_NEAR(p.E, kPlanted.E, k * se[0]);
  EXPECT_NEAR(p.A, kPlanted.A, k * se[1]);
  EXPECT_NEAR(p.B, kPlanted.B, k * se[2]);
  EXPECT_NEAR(p.alpha, kPlanted.alpha, k * se[3]);
  EXPECT_NEAR(p.beta, kPlanted.beta, k * se[4]);
  // The errors are statistical, not zero: at least one exponent is off by
  // more than 1e-4 (the noise-free recovery above is exact to 1e-4).
  EXPECT_GT(std::max(std::abs(p.alpha - kPlanted.alpha), std::abs(p.beta - kPlanted.beta)), 1e-4);
  EXPECT_EQ(fit->residuals.size(), t.points.size());

  // Variable projection lands on the same optimum as L-BFGS: exponents
  // within a tenth of a standard error of each other.
  auto vp = FitChinchillaVarPro(t);
  ASSERT_TRUE(vp.ok()) << vp.error().message;
  EXPECT_NEAR(vp->params.alpha, p.alpha, 0.1 * se[3]);
  EXPECT_NEAR(vp->params.beta, p.beta, 0.1 * se[4]);
  EXPECT_LT(vp->objective, fit->objective * 1.005);
}

}  // namespace
}  // namespace orrery::scaling_laws
