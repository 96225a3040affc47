// Bootstrap intervals of the Chinchilla fit against the Epoch replication.

#include "scaling_laws/bootstrap.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

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

// Golden: 400-resample 95 % intervals (epoch_refit_golden.json,
// "bootstrap_400_resamples_this_session"). With 400 resamples ours must
// overlap each golden interval and contain the point estimate.
TEST(Bootstrap, EpochIntervalsOverlapGolden) {
  ORRERY_SKIP_WITHOUT_DATA_FILE("epoch_chinchilla/chinchilla_fig4_points_NDCL.csv");
  ORRERY_SKIP_WITHOUT_DATA_FILE("reference/epoch_refit_golden.json");
  const RunTable t = testing::EpochChinchillaPoints240();
  std::ifstream in(testing::DataFile("reference/epoch_refit_golden.json"));
  const auto golden = nlohmann::json::parse(in);
  const auto& g = golden["sum_objective_fit"];
  const ChinchillaParams point{g["E"], g["A"], g["B"], g["alpha"], g["beta"]};
  auto b = BootstrapChinchilla(t, point, 400, 20240416);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->failures, 0u);
  const auto& gi = golden["bootstrap_400_resamples_this_session"];
  for (size_t k = 0; k < b->names.size(); ++k) {
    const std::string& name = b->names[k];
    const double lo = gi[name][0], hi = gi[name][1];
    std::printf("%-6s ours [%.4g, %.4g]  golden [%.4g, %.4g]\n", name.c_str(), b->intervals[k].lo,
                b->intervals[k].hi, lo, hi);
    EXPECT_LT(b->intervals[k].lo, hi) << name;
    EXPECT_GT(b->intervals[k].hi, lo) << name;
  }
  EXPECT_LT(b->intervals[3].lo, 0.3473);
  EXPECT_GT(b->intervals[3].hi, 0.3473);
}

}  // namespace
}  // namespace orrery::scaling_laws
