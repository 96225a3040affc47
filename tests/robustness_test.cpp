// Issue 20, "Reliability you can prove": one regression test per defect an
// outside fuzzer found, named after what it guards. Store defects (kill,
// corruption, two writers) are in sweep_test.cpp; parser-level ones in
// core/base/robustness_test.cpp.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/estimate/result_invariants.h"
#include "core/estimate/training_estimator.h"
#include "core/validation/validation.h"
#include "scaling_laws/bootstrap.h"
#include "scaling_laws/chinchilla_law.h"
#include "scaling_laws/run_table.h"
#include "tests/support/presets.h"

namespace orrery::engine {
namespace {

const std::string kConfigs = ORRERY_TEST_CONFIG_DIR;

std::string TempFile(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::path(testing::TempDir()) /
                            ("orrery_robust_" + std::to_string(getpid()) + "_" + name))
                               .string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Korthikanti et al. 2022 Table 5, Megatron-22B on 8 A100 (the first row of
// validation/training_runs.csv), with one cell replaced per row below.
const char* kHeader =
    "source,model,layers,hidden,heads,ffn,vocab,seq,gpus,gpu,tp,pp,dp,global_batch,micro_batch,"
    "recompute,seq_parallel,measured_iter_s\n";
std::string Row(const std::string& column, const std::string& value) {
  std::vector<std::pair<std::string, std::string>> cells = {
      {"source", "Korthikanti et al. 2022 Table 5"}, {"model", "Megatron-22B"},
      {"layers", "48"}, {"hidden", "6144"}, {"heads", "64"}, {"ffn", "24576"},
      {"vocab", "51200"}, {"seq", "2048"}, {"gpus", "8"}, {"gpu", "A100-SXM4-80GB"},
      {"tp", "8"}, {"pp", "1"}, {"dp", "1"}, {"global_batch", "4"}, {"micro_batch", "4"},
      {"recompute", "full"}, {"seq_parallel", "no"}, {"measured_iter_s", "1.42"}};
  std::string line;
  for (auto& [c, v] : cells) line += (line.empty() ? "" : ",") + (c == column ? value : v);
  return line + "\n";
}

// `orrery validate` died of SIGFPE on tp=0 and heads=0.5 (a cast to 0, then a
// division), and predicted rows with global_batch=abc or seq=-8.
TEST(ValidateRobustness, BadMeasuredRunCellsAreLocatedErrorsNotCrashes) {
  const std::string csv = std::string(kHeader) + Row("", "") + Row("tp", "0") +
                          Row("heads", "0.5") + Row("micro_batch", "0.5") +
                          Row("global_batch", "abc") + Row("seq", "-8") +
                          Row("measured_iter_s", "1e-320") + Row("layers", "1e300");
  const std::string file = TempFile("cells.csv", csv);
  base::Diagnostics d;
  const ValidationReport r = ValidateTrainingCsv(file, PresetStore(kConfigs), d);
  ASSERT_EQ(r.rows.size(), 8u);
  ASSERT_TRUE(r.rows[0].error_pct) << r.rows[0].skipped;
  EXPECT_EQ(r.evaluated, 1);
  EXPECT_EQ(r.skipped, 7);
  const char* expected[] = {
      "column 'tp': got '0': must be an integer in [1, 1000000]",
      "column 'heads': got '0.5': must be an integer in [1, 100000]",
      "column 'micro_batch': got '0.5': must be an integer in [1, 1000000]",
      "column 'global_batch': got 'abc': must be an integer in [1, 1000000000]",
      "column 'seq': got '-8': must be an integer in [1, 1000000000]",
      "column 'measured_iter_s': got '1e-320': must be a number in [1e-06, 1e+07]",
      "column 'layers': got '1e300': must be an integer in [1, 100000]"};
  ASSERT_EQ(d.size(), 7u) << d.ToString();
  for (size_t i = 0; i < 7; ++i) {
    const ValidationRow& row = r.rows[i + 1];
    EXPECT_FALSE(row.error_pct);
    const std::string where = file + ":" + std::to_string(i + 3) + ": ";
    EXPECT_EQ(row.skipped, "invalid cell: " + where + expected[i]);
    EXPECT_EQ(d.items()[i].message, where + expected[i]);
    EXPECT_EQ(d.items()[i].where.line, static_cast<int>(i + 3));
  }
  EXPECT_TRUE(std::isfinite(r.mape_pct));
}

// Every row is either skipped with a reason or predicted with a finite error,
// and an aggregate over no predicted rows is 0 with evaluated = 0, not NaN.
TEST(ValidateRobustness, EveryRowIsSkippedOrPredictedAndEmptyAggregatesAreFinite) {
  base::Diagnostics d;
  const ValidationReport all = ValidateTrainingCsv(
      std::string(ORRERY_TEST_VALIDATION_DIR) + "/training_runs.csv", PresetStore(kConfigs), d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  for (const auto& row : all.rows) {
    EXPECT_NE(row.skipped.empty(), !row.error_pct.has_value()) << row.line;
    if (row.error_pct) {
      EXPECT_TRUE(std::isfinite(*row.error_pct) && row.predicted > 0) << row.line;
    }
  }
  base::Diagnostics e;
  const ValidationReport none =
      ValidateTrainingCsv(TempFile("none.csv", std::string(kHeader) + Row("gpu", "Z80")),
                          PresetStore(kConfigs), e);
  EXPECT_EQ(none.evaluated, 0);
  EXPECT_EQ(none.skipped, 1);
  EXPECT_EQ(none.mape_pct, 0);
  EXPECT_EQ(none.max_abs_error_pct, 0);
}

using test::LoadScenario;

// A network bandwidth inside the documented range gave a feasible plan with
// an infinite step ("inf s", "-nan %"). The range now starts at 1 MB/s ...
TEST(EstimateRobustness, TinyNetworkBandwidthIsRefusedAtTheParser) {
  Scenario s = LoadScenario("gpt3-175b-a100");
  base::Diagnostics d;
  EXPECT_FALSE(ApplyOverride(s, "system.network[1].bandwidth=1e-300 B/s", d));
  EXPECT_NE(d.ToString().find("system.network[1].bandwidth"), std::string::npos) << d.ToString();
  EXPECT_NE(d.ToString().find("1 MB/s"), std::string::npos) << d.ToString();
}

// ... and whatever slips past a parser meets the result invariants: numbers
// that are not finite never reach a face.
TEST(EstimateRobustness, NonFiniteTimeBecomesAnInternalErrorWithItsInputs) {
  Scenario s = LoadScenario("gpt3-175b-a100");
  s.system.network[1].bandwidth = 1e-300;  // set directly, past the parser
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate e = est.Run(s.training, s.workload);
  EXPECT_EQ(e.infeasible, Infeasible::kInvalidResult);
  EXPECT_EQ(e.iteration_s, 0);
  const std::string why = ExplainInfeasible(e, s);
  EXPECT_EQ(why.rfind("internal error: the estimate breaks an invariant (", 0), 0u) << why;
  EXPECT_NE(why.find("model 'GPT-3 175B' on 64 x NVIDIA A100 SXM4 80GB, tp 8 pp 8 cp 1 ep 1 dp 1"), std::string::npos) << why;
}

TEST(EstimateRobustness, InvariantsNameTheRuleBroken) {
  Scenario s = LoadScenario("gpt3-175b-a100");
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate good = est.Run(s.training, s.workload);
  ASSERT_TRUE(good.feasible());
  EXPECT_EQ(TrainingInvariantViolation(good), nullptr);
  TrainingEstimate e = good;
  e.mfu = 1.5;  // beyond twice the causal MFU (GPT-3 at 2,048 tokens: 0.97x the MFU)
  EXPECT_STREQ(TrainingInvariantViolation(e), "MFU or HFU is outside what the causal MFU allows");
  e = good;
  e.mfu_causal = 1.2;
  EXPECT_STREQ(TrainingInvariantViolation(e), "the causal MFU is outside [0, 1]");
  e = good;
  e.memory.activations = std::numeric_limits<double>::quiet_NaN();
  EXPECT_STREQ(TrainingInvariantViolation(e), "a memory figure is negative or not finite");
  e = good;
  e.time.dp_comm += 1;  // the parts no longer add up to the total
  EXPECT_STREQ(TrainingInvariantViolation(e), "the time breakdown does not add up to its total");
  e = good;
  e.energy_j = -1;
  EXPECT_STREQ(TrainingInvariantViolation(e),
               "a FLOP, throughput, energy or cost figure is negative or not finite");
}

TEST(EstimateRobustness, NonUtf8OverrideIsALocatedError) {
  Scenario s = LoadScenario("gpt3-175b-a100");
  base::Diagnostics d;
  EXPECT_FALSE(ApplyOverride(s, "model.name=ab\x8D", d));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].ToString(), "--set: error: not UTF-8 text (invalid byte at offset 13)");
}

namespace sl = scaling_laws;

sl::RunTable Points(const std::string& csv) {
  auto runs = sl::ParseRuns(csv, "points.csv", {});
  EXPECT_TRUE(runs) << (runs ? "" : runs.error().message);
  return runs ? *runs : sl::RunTable{};
}

// Hoffmann et al. 2022 Eq. 2 with their fitted values (E 1.69, A 406.4,
// B 410.7, alpha 0.34, beta 0.28) at 3 x 3 points: data the fit recovers.
std::string ChinchillaPoints() {
  std::string csv = "N,D,loss\n";
  for (double n : {1e8, 1e9, 1e10})
    for (double dd : {1e9, 1e10, 1e11}) {
      const double l = 1.69 + 406.4 / std::pow(n, 0.34) + 410.7 / std::pow(dd, 0.28);
      csv += std::to_string(n) + "," + std::to_string(dd) + "," + std::to_string(l) + "\n";
    }
  return csv;
}

// `orrery fit --law chinchilla` ran for minutes on point sets that do not
// determine the law: the fit now has an evaluation budget.
TEST(FitRobustness, ChinchillaFitStopsAtItsEvaluationBudget) {
  const sl::RunTable t = Points(ChinchillaPoints());
  sl::HuberFitOptions o;
  o.max_evaluations = 500;
  const auto t0 = std::chrono::steady_clock::now();
  auto fit = sl::FitChinchillaHuber(t, o);
  ASSERT_FALSE(fit);
  EXPECT_EQ(fit.error().message.rfind("Chinchilla fit did not converge within 500 objective "
                                      "evaluations over 4500 starts",
                                      0),
            0u)
      << fit.error().message;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  // With the default budget the same points give back the law they came from.
  sl::HuberFitOptions quick;
  quick.max_starts = 20;
  auto ok = sl::FitChinchillaHuber(t, quick);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_NEAR(ok->params.alpha, 0.34, 0.01);
  EXPECT_NEAR(ok->params.beta, 0.28, 0.01);
}

// `fit` on ten Porian et al. 2024 rows printed "B inf", objective "nan",
// exit 0: a fit is either finite or an error.
TEST(FitRobustness, ChinchillaFitIsFiniteOrAnError) {
  const std::string file =
      std::string(ORRERY_TEST_CONFIG_DIR) + "/../scaling_laws/data/porian2024/porian2024_isoflop_points.csv";
  ASSERT_TRUE(std::filesystem::exists(file)) << file;
  std::ifstream in(file);
  std::string csv, line;
  for (int i = 0; i < 11 && std::getline(in, line); ++i) csv += line + "\n";
  sl::HuberFitOptions o;
  o.max_starts = 50;
  auto fit = sl::FitChinchillaHuber(Points(csv), o);
  if (fit) {
    for (double v : {fit->params.E, fit->params.A, fit->params.B, fit->params.alpha,
                     fit->params.beta, fit->objective})
      EXPECT_TRUE(std::isfinite(v)) << v;
  } else {
    EXPECT_NE(fit.error().message.find("Chinchilla fit"), std::string::npos) << fit.error().message;
  }
}

// `fit --bootstrap -1` wrapped to 2^64 - 1 replicates and never ended.
TEST(FitRobustness, BootstrapCountIsBounded) {
  const sl::RunTable t = Points(ChinchillaPoints());
  const size_t wrapped = static_cast<size_t>(-1);
  auto b = sl::BootstrapChinchilla(t, sl::ChinchillaParams{1.69, 406.4, 410.7, 0.34, 0.28}, wrapped, 1);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().message,
            "bootstrap resamples must be in [2, 100000], got 18446744073709551615 (a negative number?)");
}

}  // namespace
}  // namespace orrery::engine
