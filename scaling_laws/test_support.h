#pragma once
// Test helpers: where the scaling-law data lives, and loaders for the files
// the tests use. MIT-licensed data is shipped in scaling_laws/data/ (its
// README names origins and licences); everything else is read from the shared
// research snapshot ../shared/scaling_data/, and tests that need it skip
// (GTEST_SKIP) with a clear message when this checkout lacks it.

#include <algorithm>
#include <filesystem>
#include <string>

#include "scaling_laws/run_table.h"

namespace orrery::scaling_laws::testing {

// scaling_laws/data/ of the source tree (MIT-licensed copies).
inline std::string InRepoDataDir() {
#ifdef ORRERY_SCALING_DATA_DIR
  return ORRERY_SCALING_DATA_DIR;
#else
  return "";
#endif
}

inline std::string SharedDataDir() {
#ifdef ORRERY_TEST_SHARED_DIR
  return std::string(ORRERY_TEST_SHARED_DIR) + "/scaling_data";
#else
  return "";
#endif
}

// Path of data file `rel` ("porian2024/porian2024_fit_results.json"): the
// in-repo copy when there is one, else the shared snapshot's.
inline std::string DataFile(const std::string& rel) {
  const std::string in_repo = InRepoDataDir() + "/" + rel;
  if (!InRepoDataDir().empty() && std::filesystem::exists(in_repo)) return in_repo;
  return SharedDataDir() + "/" + rel;
}

inline bool HaveDataFile(const std::string& rel) { return std::filesystem::exists(DataFile(rel)); }

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

// Skips unless data file `rel` is in scaling_laws/data/ or the shared snapshot.
#define ORRERY_SKIP_WITHOUT_DATA_FILE(rel)                                                \
  do {                                                                                    \
    if (!::orrery::scaling_laws::testing::HaveDataFile(rel)) {                            \
      GTEST_SKIP() << "scaling data file '" << (rel) << "' found neither in '"            \
                   << ::orrery::scaling_laws::testing::InRepoDataDir() << "' nor in '"    \
                   << ::orrery::scaling_laws::testing::SharedDataDir() << "'";            \
    }                                                                                     \
  } while (0)

// Epoch's digitised Chinchilla Fig. 4 points with the 5 highest-loss points
// dropped, as Besiroglu et al. 2024 did (240 remain).
inline RunTable EpochChinchillaPoints240() {
  auto loaded = LoadRuns(DataFile("epoch_chinchilla/chinchilla_fig4_points_NDCL.csv"), {});
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
