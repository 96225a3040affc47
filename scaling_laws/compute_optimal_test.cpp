// Compute-optimal allocation and the preset catalogue, checked against
// ../shared/scaling_data/reference/compute_optimal_reference_values.csv and
// published allocations.

#include "scaling_laws/compute_optimal.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/base/csv.h"
#include "scaling_laws/law_presets.h"
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

// Acceptance (issue 8): closed-form optima match the reference table to 0.1 %.
TEST(ComputeOptimal, ClosedFormMatchesReferenceTable) {
  ORRERY_SKIP_WITHOUT_DATA_FILE("reference/compute_optimal_reference_values.csv");
  const PresetCatalog cat = Catalog();
  auto table = base::ReadCsvFile(testing::DataFile("reference/compute_optimal_reference_values.csv"));
  ASSERT_TRUE(table.ok()) << table.error().message;
  const auto& t = table.value();
  ASSERT_EQ(t.rows.size(), 40u);
  auto col = [&](const char* name) { return t.ColumnIndex(name); };
  for (const auto& row : t.rows) {
    auto num = [&](const char* name) { return std::stod(row.cells[col(name)]); };
    const std::string set = row.cells[col("param_set")];
    auto preset = cat.Find(set);
    ASSERT_TRUE(preset.ok()) << preset.error().message;
    const ChinchillaParams law = preset->Chinchilla().value();
    const double c = num("C_flops");
    auto o = ComputeOptimalClosedForm(law, c);
    ASSERT_TRUE(o.ok());
    SCOPED_TRACE(set + " C=" + row.cells[col("C_flops")]);
    EXPECT_LT(RelErr(o->params_n, num("N_opt")), 1e-3);
    EXPECT_LT(RelErr(o->tokens_d, num("D_opt")), 1e-3);
    EXPECT_LT(RelErr(o->tokens_per_param, num("tokens_per_param")), 1e-3);
    EXPECT_LT(RelErr(o->loss, num("L_opt")), 1e-3);
    EXPECT_LT(RelErr(o->exponent_a, num("a_exp")), 1e-3);
    EXPECT_LT(RelErr(o->g, num("G")), 1e-3);
    // The numerical optimum agrees with the closed form.
    auto n = ComputeOptimalNumeric(law, c);
    ASSERT_TRUE(n.ok());
    EXPECT_LT(RelErr(n->params_n, o->params_n), 1e-6);
    EXPECT_LT(RelErr(n->tokens_d, o->tokens_d), 1e-6);
    EXPECT_LE(n->loss, o->loss * (1 + 1e-12));
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
