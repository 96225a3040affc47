#pragma once
// Test helpers: where the shared scaling-law data lives, and loaders for the
// files the tests use. Tests skip (GTEST_SKIP) with a clear message when the
// shared data folder is absent from this checkout.

#include <algorithm>
#include <filesystem>
#include <string>

#include "scaling_laws/run_table.h"

namespace orrery::scaling_laws::testing {

inline std::string SharedDataDir() {
#ifdef ORRERY_TEST_SHARED_DIR
  return std::string(ORRERY_TEST_SHARED_DIR) + "/scaling_data";
#else
  return "";
#endif
}

inline bool HaveSharedData() {
  const std::string dir = SharedDataDir();
  return !dir.empty() && std::filesystem::exists(dir + "/reference/epoch_refit_golden.json");
}

#define ORRERY_SKIP_WITHOUT_SHARED_DATA()                                                 \
  do {                                                                                    \
    if (!::orrery::scaling_laws::testing::HaveSharedData()) {                             \
      GTEST_SKIP() << "shared scaling data not found at '"                                \
                   << ::orrery::scaling_laws::testing::SharedDataDir()                    \
                   << "' (ORRERY_TEST_SHARED_DIR/scaling_data); this checkout lacks it";  \
    }                                                                                     \
  } while (0)

// Epoch's digitised Chinchilla Fig. 4 points with the 5 highest-loss points
// dropped, as Besiroglu et al. 2024 did (240 remain).
inline RunTable EpochChinchillaPoints240() {
  auto loaded = LoadRuns(SharedDataDir() + "/epoch_chinchilla/chinchilla_fig4_points_NDCL.csv", {});
  RunTable t = loaded.value();
  std::vector<RunPoint> pts = t.points;
  std::stable_sort(pts.begin(), pts.end(),
                   [](const RunPoint& a, const RunPoint& b) { return a.loss > b.loss; });
  // Copy the tail rather than erase the head: GCC 12 at -O3 warns
  // (-Wstringop-overflow) on the erase when it cannot prove size() >= 5.
  const size_t drop = std::min<size_t>(5, pts.size());
  t.points.assign(pts.begin() + static_cast<std::ptrdiff_t>(drop), pts.end());
  return t;
}

}  // namespace orrery::scaling_laws::testing
