// Tests of the Chinchilla law fitters against the Epoch AI replication
// (Besiroglu et al. 2024) golden values in
// ../shared/scaling_data/reference/epoch_refit_golden.json.

#include "scaling_laws/chinchilla_law.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "scaling_laws/law_presets.h"
#include "scaling_laws/test_support.h"

namespace orrery::scaling_laws {
namespace {

using testing::EpochChinchillaPoints240;
using testing::DataFile;

nlohmann::json Golden() {
  std::ifstream in(DataFile("reference/epoch_refit_golden.json"));
  return nlohmann::json::parse(in);
}

double RelErr(double got, double want) { return std::abs(got - want) / std::abs(want); }

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

// Acceptance (issue 8): summed Huber on the 240 Epoch points reaches the
// golden optimum: objective <= 1.018273e-3 (relative 1e-4), E, alpha, beta
// within 0.5 %, A and B within 2 % (the objective is flat along A and B).
TEST(ChinchillaFit, EpochPointsReproduceEpochRefit) {
  ORRERY_SKIP_WITHOUT_DATA_FILE("epoch_chinchilla/chinchilla_fig4_points_NDCL.csv");
  ORRERY_SKIP_WITHOUT_DATA_FILE("reference/epoch_refit_golden.json");
  const RunTable t = EpochChinchillaPoints240();
  ASSERT_EQ(t.points.size(), 240u);
  const auto g = Golden()["sum_objective_fit"];
  auto fit = FitChinchillaHuber(t);  // full 4500-start Hoffmann grid
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  const auto& p = fit->params;
  RecordProperty("objective", std::to_string(fit->objective));
  EXPECT_LE(fit->objective, g["objective"].get<double>() * (1 + 1e-4));
  EXPECT_LT(RelErr(p.E, g["E"]), 0.005) << p.E;
  EXPECT_LT(RelErr(p.alpha, g["alpha"]), 0.005) << p.alpha;
  EXPECT_LT(RelErr(p.beta, g["beta"]), 0.005) << p.beta;
  EXPECT_LT(RelErr(p.A, g["A"]), 0.02) << p.A;
  EXPECT_LT(RelErr(p.B, g["B"]), 0.02) << p.B;
  EXPECT_EQ(fit->residuals.size(), 240u);
  EXPECT_TRUE(fit->warnings.empty());
  std::printf("Huber fit: E=%.5f A=%.3f B=%.3f alpha=%.5f beta=%.5f objective=%.7e\n", p.E, p.A,
              p.B, p.alpha, p.beta, fit->objective);
}
}  // namespace
}  // namespace orrery::scaling_laws

namespace orrery::scaling_laws {
namespace {

// Cross-check: variable projection (grid over exponents, NNLS for E, A, B)
// lands on the same optimum as L-BFGS on the Epoch points: exponents within
// 1 %, objective within 0.5 % of the golden optimum.
TEST(ChinchillaFit, VarProAgreesWithLbfgsOnEpochPoints) {
  ORRERY_SKIP_WITHOUT_DATA_FILE("epoch_chinchilla/chinchilla_fig4_points_NDCL.csv");
  ORRERY_SKIP_WITHOUT_DATA_FILE("reference/epoch_refit_golden.json");
  const RunTable t = EpochChinchillaPoints240();
  const auto g = Golden()["sum_objective_fit"];
  auto vp = FitChinchillaVarPro(t);
  ASSERT_TRUE(vp.ok()) << vp.error().message;
  const auto& p = vp->params;
  std::printf("VarPro: E=%.5f A=%.3f B=%.3f alpha=%.5f beta=%.5f objective=%.7e\n", p.E, p.A, p.B,
              p.alpha, p.beta, vp->objective);
  EXPECT_LT(RelErr(p.alpha, g["alpha"]), 0.01);
  EXPECT_LT(RelErr(p.beta, g["beta"]), 0.01);
  EXPECT_LT(RelErr(p.E, g["E"]), 0.01);
  EXPECT_LT(vp->objective, g["objective"].get<double>() * 1.005);
}

// Besiroglu et al. 2024 Sec. 3: averaging the Huber loss (instead of summing)
// shrinks the gradient 240-fold, and a default stopping rule then halts early
// with biased parameters (their example: E 1.77, alpha 0.375, beta 0.306).
TEST(ChinchillaFit, MeanObjectiveWithDefaultTolerancesStopsEarly) {
  ORRERY_SKIP_WITHOUT_DATA_FILE("epoch_chinchilla/chinchilla_fig4_points_NDCL.csv");
  ORRERY_SKIP_WITHOUT_DATA_FILE("reference/epoch_refit_golden.json");
  const RunTable t = EpochChinchillaPoints240();
  const auto g = Golden()["sum_objective_fit"];
  HuberFitOptions mean;
  mean.average = true;
  mean.solver_defaults = true;
  mean.max_starts = 90;
  auto early = FitChinchillaHuber(t, mean);
  ASSERT_TRUE(early.ok());
  const auto& p = early->params;
  std::printf("Mean objective, default tolerances: E=%.4f A=%.1f B=%.1f alpha=%.4f beta=%.4f "
              "sum objective=%.6e\n", p.E, p.A, p.B, p.alpha, p.beta, early->objective);
  // Worse than the true optimum by more than the acceptance tolerance...
  EXPECT_GT(early->objective, g["objective"].get<double>() * (1 + 1e-3));
  // ...with exponents off by more than the 0.5 % the summed fit achieves.
  EXPECT_GT(std::max(RelErr(p.alpha, g["alpha"]), RelErr(p.beta, g["beta"])), 0.005);
}

}  // namespace
}  // namespace orrery::scaling_laws

namespace orrery::scaling_laws {
namespace {

// Keeping the 5 high-loss outliers (all 245 points) moves the fit to the
// values Besiroglu et al. 2024 report for that case (preset
// besiroglu2024_refit_with_outliers, from secondary notes: E 1.89, A 463.3,
// B 12530, alpha 0.345, beta 0.452). Tolerances reflect the notes' rounding
// and the flat A, B directions: E, beta 1 %, alpha 2 %, B 5 %, A 10 %.
TEST(ChinchillaFit, AllEpochPointsMatchTheWithOutliersRefit) {
  ORRERY_SKIP_WITHOUT_DATA_FILE("epoch_chinchilla/chinchilla_fig4_points_NDCL.csv");
  ORRERY_SKIP_WITHOUT_DATA_FILE("reference/epoch_refit_golden.json");
  auto all = LoadRuns(DataFile("epoch_chinchilla/chinchilla_fig4_points_NDCL.csv"), {});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->points.size(), 245u);
  auto cat = LoadPresetCatalog(std::string(ORRERY_TEST_CONFIG_DIR) +
                               "/scaling_laws/published_laws.csv");
  ASSERT_TRUE(cat.ok()) << cat.error().message;
  const ChinchillaParams want =
      cat->Find("besiroglu2024_refit_with_outliers")->Chinchilla().value();
  // L-BFGS from the 200 best of the 4500 grid starts (the full grid is
  // exercised above; this keeps the suite within its time budget).
  HuberFitOptions opts;
  opts.max_starts = 200;
  auto fit = FitChinchillaHuber(*all, opts);
  ASSERT_TRUE(fit.ok());
  const auto& p = fit->params;
  std::printf("245 points: E=%.4f A=%.1f B=%.0f alpha=%.4f beta=%.4f\n", p.E, p.A, p.B, p.alpha,
              p.beta);
  EXPECT_LT(RelErr(p.E, want.E), 0.01);
  EXPECT_LT(RelErr(p.beta, want.beta), 0.01);
  EXPECT_LT(RelErr(p.alpha, want.alpha), 0.02);
  EXPECT_LT(RelErr(p.B, want.B), 0.05);
  EXPECT_LT(RelErr(p.A, want.A), 0.10);
}

}  // namespace
}  // namespace orrery::scaling_laws
