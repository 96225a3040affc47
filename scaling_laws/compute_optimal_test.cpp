// Compute-optimal allocation and the preset catalogue, checked against
// optima worked out by hand from Hoffmann et al. 2022 Eq. 4 and against
// published allocations.

#include "scaling_laws/compute_optimal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "scaling_laws/law_presets.h"
#include "scaling_laws/run_table.h"
#include "scaling_laws/test_support.h"

namespace orrery::scaling_laws {
namespace {

double RelErr(double got, double want) { return std::abs(got - want) / std::abs(want); }

PresetCatalog Catalog() {
  auto cat = LoadPresetCatalog(std::string(ORRERY_TEST_CONFIG_DIR) +
                               "/scaling_laws/published_laws.csv");
  EXPECT_TRUE(cat.ok()) << cat.error().message;
  return cat.value();
}

TEST(LawPresets, CatalogLoadsAndEveryPresetIsCited) {
  const PresetCatalog cat = Catalog();
  EXPECT_GE(cat.presets.size(), 26u);
  for (const auto& p : cat.presets) {
    EXPECT_FALSE(p.source.empty()) << p.name;
    EXPECT_NE(p.source.find("20"), std::string::npos) << p.name << ": source lacks a year";
  }
  auto chin = cat.Find("chinchilla");
  ASSERT_TRUE(chin.ok());
  EXPECT_EQ(chin->name, "hoffmann2022_approach3_rounded");
  const ChinchillaParams p = chin->Chinchilla().value();
  EXPECT_DOUBLE_EQ(p.E, 1.69);
  EXPECT_DOUBLE_EQ(p.alpha, 0.34);
  EXPECT_TRUE(cat.Find("epoch").ok());
  EXPECT_TRUE(cat.Find("kaplan")->KaplanND().ok());
}

TEST(LawPresets, UnknownNameSuggestsTheClosest) {
  auto p = Catalog().Find("chinchila");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("did you mean 'chinchilla'?"), std::string::npos)
      << p.error().message;
}

TEST(LawPresets, MissingCatalogNamesTheFile) {
  auto cat = LoadPresetCatalog("/nonexistent/laws.csv");
  ASSERT_FALSE(cat.ok());
  EXPECT_NE(cat.error().message.find("/nonexistent/laws.csv"), std::string::npos);
}

// The runs the Hoffmann-data presets were fitted on (Hoffmann et al. 2022,
// abstract: 70 M to 16 B parameters, 5 to 500 B tokens), and the note for a
// value outside them: 3.305e11 parameters is 3.305e11 / 1.6e10 = 20.66x the
// largest; 3e7 is 7e7 / 3e7 = 2.33x below the smallest; 2e10 is 1.25x the
// largest, within the runs' own spread (1.5x), so nothing is said.
TEST(LawPresets, FittedRangeAndTheNoteBeyondIt) {
  const FittedRange r = FittedRangeOf(Catalog().Find("epoch").value());
  EXPECT_DOUBLE_EQ(r.n_min, 7e7);
  EXPECT_DOUBLE_EQ(r.n_max, 1.6e10);
  EXPECT_DOUBLE_EQ(r.d_min, 5e9);
  EXPECT_DOUBLE_EQ(r.d_max, 5e11);
  EXPECT_EQ(FittedRangeOf(Catalog().Find("kaplan").value()).n_max, 0.0);  // not stated
  EXPECT_EQ(ExtrapolationNote("N", 3.305e11, r.n_min, r.n_max, "parameters"),
            "N = 3.305e+11 parameters is 20.7x above the largest of the runs the law was fitted on (7e+07 "
            "to 1.6e+10 parameters): an extrapolation of the law");
  EXPECT_EQ(ExtrapolationNote("N", 3e7, r.n_min, r.n_max, "parameters"),
            "N = 3e+07 parameters is 2.33x below the smallest of the runs the law was fitted on (7e+07 "
            "to 1.6e+10 parameters): an extrapolation of the law");
  EXPECT_EQ(ExtrapolationNote("N", 2e10, r.n_min, r.n_max, "parameters"), "");
  EXPECT_EQ(ExtrapolationNote("N", 1e15, 0, 0, "parameters"), "");
  // One side stated: the note says which, not "0 to".
  EXPECT_EQ(ExtrapolationNote("D", 1e12, 0, 5e11, "tokens"),
            "D = 1e+12 tokens is 2x above the largest of the runs the law was fitted on (up to 5e+11 "
            "tokens): an extrapolation of the law");
  EXPECT_EQ(ExtrapolationNote("D", 1e9, 5e9, 0, "tokens"),
            "D = 1e+09 tokens is 5x below the smallest of the runs the law was fitted on (from 5e+09 "
            "tokens): an extrapolation of the law");
}

// The Gemstones preset fitted on checkpoints to 100 B tokens states the range
// of the file it was fitted on, which ships here: its smallest and largest N
// and D must be that file's (22 models of 48.4 M to 2.008 B parameters,
// checkpoints from 10.0 B to 100.0 B tokens).
TEST(LawPresets, GemstonesRangeIsTheShippedRunsRange) {
  const FittedRange r = FittedRangeOf(Catalog().Find("gemstones2025_hot_delta1e-3").value());
  RunColumns cols;
  cols.params = "params_active_precise";
  const auto runs = LoadRuns(testing::DataFile("gemstones/gemstones_hot.csv"), cols);
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->points.size(), 220u);
  double n_min = 1e300, n_max = 0, d_min = 1e300, d_max = 0;
  for (const RunPoint& p : runs->points) {
    n_min = std::min(n_min, p.params_n);
    n_max = std::max(n_max, p.params_n);
    d_min = std::min(d_min, p.tokens_d);
    d_max = std::max(d_max, p.tokens_d);
  }
  EXPECT_DOUBLE_EQ(r.n_min, n_min);
  EXPECT_DOUBLE_EQ(r.n_max, n_max);
  EXPECT_DOUBLE_EQ(r.d_min, d_min);
  EXPECT_DOUBLE_EQ(r.d_max, d_max);
  EXPECT_DOUBLE_EQ(r.n_max, 2007837696);
  // The preset fitted on all checkpoints, to 350 B tokens: the same models.
  const FittedRange all = FittedRangeOf(Catalog().Find("gemstones2025_hot_100b_plus_delta1e-3").value());
  EXPECT_DOUBLE_EQ(all.n_min, n_min);
  EXPECT_DOUBLE_EQ(all.d_max, 350119526400);
}

// Hoffmann et al. 2022 Eq. 4 on their Approach 3 law (Eq. 10, rounded: E
// 1.69, A 406.4, B 410.7, alpha 0.34, beta 0.28): N_opt = G (C/6)^a with a =
// beta / (alpha + beta) = 0.451613 and G = (alpha A / (beta B))^(1 / (alpha +
// beta)) = 1.344711, D_opt = C / (6 N_opt). At C = 1e21: N_opt = 1.824218e9,
// D_opt = 9.136336e10 (50.08 tokens per parameter), L = 2.328883. At
// Chinchilla's budget 5.76e23 (Table 3): N_opt = 3.218986e10, L = 1.930748.
// Worked out with the formulas above; the numerical optimum must agree.
TEST(ComputeOptimal, ClosedFormMatchesHoffmannEquationFour) {
  const ChinchillaParams law = Catalog().Find("hoffmann2022_approach3_rounded")->Chinchilla().value();
  auto o = ComputeOptimalClosedForm(law, 1e21);
  ASSERT_TRUE(o.ok());
  EXPECT_LT(RelErr(o->exponent_a, 0.451613), 1e-6);
  EXPECT_LT(RelErr(o->g, 1.344711), 1e-6);
  EXPECT_LT(RelErr(o->params_n, 1.824218e9), 1e-6);
  EXPECT_LT(RelErr(o->tokens_d, 9.136336e10), 1e-6);
  EXPECT_LT(RelErr(o->tokens_per_param, 50.0836), 1e-5);
  EXPECT_LT(RelErr(o->loss, 2.328883), 1e-6);
  auto chinchilla = ComputeOptimalClosedForm(law, 5.76e23);
  ASSERT_TRUE(chinchilla.ok());
  EXPECT_LT(RelErr(chinchilla->params_n, 3.218986e10), 1e-6);
  EXPECT_LT(RelErr(chinchilla->loss, 1.930748), 1e-6);
  // Budgets far beyond any run too, where the reducible loss is below the
  // last bit of E (the closed form: 1e300 FLOP -> N = 1.82e135).
  for (double c : {1e21, 5.76e23, 1e100, 1e300}) {
    auto closed = ComputeOptimalClosedForm(law, c).value();
    auto n = ComputeOptimalNumeric(law, c);
    ASSERT_TRUE(n.ok());
    EXPECT_LT(RelErr(n->params_n, closed.params_n), 1e-6);
    EXPECT_LT(RelErr(n->tokens_d, closed.tokens_d), 1e-6);
    EXPECT_LE(n->loss, closed.loss * (1 + 1e-12));
  }
}

TEST(ComputeOptimal, GeneralFlopsPerTokenKeepsBudget) {
  const ChinchillaParams law{1.69, 406.4, 410.7, 0.34, 0.28};
  auto o = ComputeOptimalClosedForm(law, 1e24, 8.0);
  ASSERT_TRUE(o.ok());
  EXPECT_NEAR(8.0 * o->params_n * o->tokens_d / 1e24, 1.0, 1e-12);
  EXPECT_FALSE(ComputeOptimalClosedForm(law, -1.0).ok());
}

// Sardana et al. 2023: with no inference demand the cheapest run reaching a
// loss is the Chinchilla optimum for the budget that reaches it; inference
// demand shifts to smaller models trained on more tokens.
TEST(InferenceAware, ReducesToChinchillaWithoutInference) {
  const ChinchillaParams law{1.69, 406.4, 410.7, 0.34, 0.28};
  const auto chin = ComputeOptimalClosedForm(law, 5.76e23).value();
  auto o = InferenceAwareOptimal(law, chin.loss, 0.0);
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_LT(RelErr(o->params_n, chin.params_n), 1e-5);
  EXPECT_LT(RelErr(o->tokens_train, chin.tokens_d), 1e-5);
  EXPECT_LT(RelErr(o->training_flops, 5.76e23), 1e-6);

  auto heavy = InferenceAwareOptimal(law, chin.loss, 2e13);  // 20T inference tokens
  ASSERT_TRUE(heavy.ok());
  EXPECT_LT(heavy->params_n, chin.params_n);
  EXPECT_GT(heavy->tokens_train, chin.tokens_d);
  EXPECT_NEAR(law.Loss(heavy->params_n, heavy->tokens_train), chin.loss, 1e-9);
  // It beats serving the Chinchilla-optimal model for the same demand.
  const double chin_total = 5.76e23 + 2.0 * chin.params_n * 2e13;
  EXPECT_LT(heavy->total_flops, chin_total);

  EXPECT_FALSE(InferenceAwareOptimal(law, 1.5, 0.0).ok());  // below E = 1.69
}

// Llama 3 Herd (arXiv:2407.21783) Sec. 3.2.1: D*(C) = 0.299 C^0.537; at
// 3.8e25 FLOP they chose 402B parameters on 16.55T tokens.
TEST(Allocation, Llama3FlagshipBudget) {
  auto p = Catalog().Find("llama3_2024_tokens");
  ASSERT_TRUE(p.ok());
  auto a = EvaluateAllocation(*p, 3.8e25);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_LT(RelErr(a->tokens_d, 16.55e12), 0.03) << a->tokens_d;
  EXPECT_LT(RelErr(a->params_n, 402e9), 0.05) << a->params_n;
}

}  // namespace
}  // namespace orrery::scaling_laws
