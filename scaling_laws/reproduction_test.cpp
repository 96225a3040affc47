// The reproduction command's plumbing on data written here: the published
// data themselves may not be redistributed (reproduction.h).

#include "scaling_laws/reproduction.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace orrery::scaling_laws {
namespace {

namespace fs = std::filesystem;

std::string Catalog() {
  return std::string(ORRERY_TEST_CONFIG_DIR) + "/scaling_laws/published_laws.csv";
}

TEST(Reproduction, MissingDirectoryIsAnError) {
  auto r = ReproducePublishedFits((fs::temp_directory_path() / "orrery-no-such-dir").string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("orrery-no-such-dir' not found"), std::string::npos)
      << r.error().message;
}

// A reference table with the Hoffmann Eq. 4 optima worked out in
// compute_optimal_test.cpp passes; a wrong N_opt fails; the files that are
// absent are listed as missing, so the report does not pass as a whole.
TEST(Reproduction, ComputeOptimalCheckAndMissingFiles) {
  const fs::path dir = fs::temp_directory_path() / "orrery-reproduction-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "reference");
  const auto write = [&](const std::string& n_opt) {
    std::ofstream(dir / "reference/compute_optimal_reference_values.csv")
        << "param_set,C_flops,N_opt,D_opt,L_opt\n"
        << "hoffmann2022_approach3_rounded,1e21," << n_opt << ",9.136336e10,2.328883\n"
        << "hoffmann2022_approach3_rounded,5.76e23,3.218986e10,2.982306e12,1.930748\n";
  };
  ReproductionOptions o;
  o.catalog_path = Catalog();
  write("1.824218e9");
  auto good = ReproducePublishedFits(dir.string(), o);
  ASSERT_TRUE(good.ok()) << good.error().message;
  ASSERT_EQ(good->checks.size(), 3u);
  EXPECT_EQ(good->checks[0].name, "compute-optimal.N_opt");
  EXPECT_EQ(good->Failed(), 0u);
  EXPECT_EQ(good->missing.size(), 3u);  // Epoch points, golden fit, Llama 3 points
  EXPECT_FALSE(good->Passed());

  write("1.9e9");  // 4 % off
  auto bad = ReproducePublishedFits(dir.string(), o);
  ASSERT_TRUE(bad.ok()) << bad.error().message;
  EXPECT_FALSE(bad->checks[0].pass);
  EXPECT_NEAR(bad->checks[0].ours, 1 - 1.824218e9 / 1.9e9, 1e-6);
  EXPECT_TRUE(bad->checks[1].pass);
  EXPECT_EQ(bad->Failed(), 1u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orrery::scaling_laws
