// Kaplan et al. 2020 forms: evaluation against the paper's constants and
// recovery of known laws.

#include "scaling_laws/kaplan_law.h"

#include <gtest/gtest.h>

#include <cmath>

namespace orrery::scaling_laws {
namespace {

// Eq. 1.5 reduces to Eq. 1.1 as D -> infinity (Kaplan et al. 2020 Sec. 4).
TEST(KaplanLaw, NDReducesToNAtInfiniteData) {
  const KaplanNDParams nd{6.4e13, 1.8e13, 0.076, 0.103};  // Table 2
  const double n = 1e9;
  EXPECT_NEAR(nd.Loss(n, 1e30), std::pow(6.4e13 / n, 0.076), 1e-9);
}

TEST(KaplanFit, RecoversPowerLawsAndND) {
  const KaplanNDParams truth{6.4e13, 1.8e13, 0.076, 0.103};
  RunTable t;
  for (double n : {1e7, 1e8, 1e9, 1e10})
    for (double d : {1e9, 1e10, 1e11, 1e12}) t.points.push_back({n, d, 6 * n * d, truth.Loss(n, d)});
  auto nd = FitKaplanND(t);
  ASSERT_TRUE(nd.ok()) << nd.error().message;
  EXPECT_NEAR(nd->law.alpha_n, 0.076, 1e-4);
  EXPECT_NEAR(nd->law.alpha_d, 0.103, 1e-4);
  EXPECT_NEAR(std::log(nd->law.n_c), std::log(6.4e13), 1e-2);
  EXPECT_LT(nd->rms_log_residual, 1e-6);

  RunTable line;
  const PowerLaw1D law{8.8e13, 0.076};  // Table 5 L(N)
  for (double n : {1e6, 1e7, 1e8, 1e9}) line.points.push_back({n, 1, 1, law.Loss(n)});
  auto n_fit = FitKaplanN(line);
  ASSERT_TRUE(n_fit.ok());
  EXPECT_NEAR(n_fit->law.exponent, 0.076, 1e-12);
  EXPECT_NEAR(n_fit->law.scale / 8.8e13, 1.0, 1e-8);
  EXPECT_FALSE(FitKaplanD(line).ok());  // all D equal: an error, not a NaN
}

// Loss that hardly moves with N: slope ~1e-6 per e-fold, so N_c =
// exp(intercept / exponent) = exp(ln 2.6 / 1e-6) overflows. Found by the
// scaling fuzz target (fuzz/regressions/scaling/flat-loss-kaplan-scale.csv);
// it used to return scale = inf. Now an error naming the cause.
TEST(KaplanFit, FlatLossIsAnErrorNotAnInfiniteScale) {
  RunTable t;
  // L = 2.6 * N^-1e-6: log L = log 2.6 - 1e-6 log N.
  for (double n : {1e8, 1e9, 1e10, 1e11}) t.points.push_back({n, 1e10, 6e18, 2.6 * std::pow(n, -1e-6)});
  auto fit = FitKaplanN(t);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.error().message.find("does not follow a power law in N"), std::string::npos)
      << fit.error().message;
  EXPECT_NE(fit.error().message.find("N_c is out of range"), std::string::npos) << fit.error().message;
}

}  // namespace
}  // namespace orrery::scaling_laws
