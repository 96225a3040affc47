// Loading runs from CSV: column mapping, imputation and error text.

#include "scaling_laws/run_table.h"

#include <gtest/gtest.h>

#include "scaling_laws/test_support.h"

namespace orrery::scaling_laws {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(RunTable, AutoDetectsColumnsAndImputesTokens) {
  auto t = ParseRuns("params_N,flops_C,loss\n1e9,6e19,3.0\n2e9,1.2e20,2.9\n", "mem.csv", {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->points.size(), 2u);
  EXPECT_DOUBLE_EQ(t->points[0].tokens_d, 1e10);
  EXPECT_EQ(t->points[1].line, 3);
  ASSERT_EQ(t->notes.size(), 1u);
  EXPECT_TRUE(Contains(t->notes[0], "tokens D imputed"));
}

TEST(RunTable, MappedColumnsAndFilter) {
  RunColumns c;
  c.params = "n";
  c.tokens = "d";
  c.loss = "val";
  c.where = {{"set", "b"}};
  auto t = ParseRuns("set,n,d,val\na,1,2,3\nb,4,5,6\n", "mem.csv", c);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->points.size(), 1u);
  EXPECT_DOUBLE_EQ(t->points[0].loss, 6);
  EXPECT_DOUBLE_EQ(t->points[0].compute_c, 6 * 4 * 5);
}

TEST(RunTable, NonNumericCellNamesFileLineAndColumn) {
  auto t = ParseRuns("N,D,L\n1e9,2e10,3.1\n1e9,abc,3.0\n", "runs.csv", {});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "runs.csv:3: column 'D': expected a positive number, got 'abc'");
}

TEST(RunTable, MisspelledColumnSuggests) {
  RunColumns c;
  c.loss = "los";
  auto t = ParseRuns("N,D,loss\n1,2,3\n", "runs.csv", c);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.error().message, "runs.csv:1: no column named 'los'")) << t.error().message;
  EXPECT_TRUE(Contains(t.error().message, "did you mean 'loss'?")) << t.error().message;
}

TEST(RunTable, MissingFileAndRaggedRows) {
  auto missing = LoadRuns("/no/such/runs.csv", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.error().message, "/no/such/runs.csv: cannot open"));
  auto ragged = ParseRuns("N,D,L\n1,2\n", "r.csv", {});
  ASSERT_FALSE(ragged.ok());
  EXPECT_TRUE(Contains(ragged.error().message, "r.csv:2: row has 2 cells but the header"));
  auto no_loss = ParseRuns("N,D\n1,2\n", "r.csv", {});
  ASSERT_FALSE(no_loss.ok());
  EXPECT_TRUE(Contains(no_loss.error().message, "no loss column"));
}

TEST(RunTable, SpreadWarnings) {
  RunTable t;
  for (int i = 0; i < 12; ++i) t.points.push_back({1e9 * (1 + 0.1 * i), 2e10 * (1 + 0.1 * i), 1, 3});
  const auto w = SpreadWarnings(t);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_TRUE(Contains(w[0], "parameters N span only 0.32 decades"));
  EXPECT_TRUE(Contains(w[1], "tokens D span only 0.32 decades"));
  EXPECT_TRUE(Contains(w[2], "almost collinear"));
}

}  // namespace
}  // namespace orrery::scaling_laws
