// `orrery network` (issue 4): the verb's output, its error text for bad
// topologies (file:line:col, key path, value, rule), and the rail-only study.

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_common.h"
#include "cli/network_command.h"

namespace orrery {
namespace {

const std::string kConfigs = ORRERY_TEST_CONFIG_DIR;
const std::string kData = std::string(ORRERY_TEST_SOURCE_DIR) + "/tests/data/";

struct Result {
  int code;
  std::string out, err;
};

Result Network(cli::Args args) {
  setenv("ORRERY_CONFIG_DIR", kConfigs.c_str(), 1);
  std::ostringstream out, err;
  const int code = cli::RunNetwork(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(NetworkVerb, HelpTeachesWithExamples) {
  const Result r = Network({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
  EXPECT_NE(r.out.find("orrery network study configs/studies/rail-only.yaml"), std::string::npos);
  EXPECT_EQ(Network({}).code, 2);
  EXPECT_EQ(Network({"dgx-h100-superpod", "--format", "xml"}).code, 2);
  EXPECT_EQ(Network({"dgx-h100-superpod", "--collective", "all-reduse", "--bytes", "1GiB", "--size", "8"}).code, 2);
}

TEST(NetworkVerb, PartsOfTheSuperPodFatTree) {
  const Result r = Network({"dgx-h100-superpod", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // 1024 GPUs, one 400 Gb/s port each, 64-port switches at 1:1: 32 ports down
  // per leaf -> 32 leaves, 32*32/64 = 16 spines; 1024 + 1024 links; 2 optics each.
  const auto& ib = j["tiers"][1];
  EXPECT_EQ(ib["topology"], "fat-tree");
  EXPECT_EQ(ib["switches"], 48);
  EXPECT_EQ(ib["links"], 2048);
  EXPECT_EQ(ib["transceivers"], 4096);
  EXPECT_EQ(ib["nic_ports"], 1024);
  // Bisection: 512 x 50 GB/s.
  EXPECT_DOUBLE_EQ(ib["bisection_bytes_per_s"].get<double>(), 512 * 50e9);
  // Priced from configs/prices/default.yaml: 48 x 36,000 + 4096 x 660 + 1024 x 1,500 USD.
  EXPECT_DOUBLE_EQ(j["cost"]["scale_out_usd"].get<double>(), 48 * 36000.0 + 4096 * 660.0 + 1024 * 1500.0);
  EXPECT_DOUBLE_EQ(j["cost"]["devices_usd"].get<double>(), 1024 * 38750.0);
}

TEST(NetworkVerb, CollectiveFromThePlanGroup) {
  // The EP group of tp=2, ep=16 on the rail-only DGX H100: stride 2, 4 members
  // per HB domain on 4 rails, over 4 nodes: cross-rail, forwarded.
  const Result r = Network({"dgx-h100-rail-only", "--collective", "all-to-all", "--bytes", "256MiB",
                            "--group", "ep", "--tp", "2", "--ep", "16", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto c = nlohmann::json::parse(r.out)["collective"];
  EXPECT_EQ(c["members"], 16);
  EXPECT_EQ(c["stride"], 2);
  EXPECT_EQ(c["forwarded"], true);
  EXPECT_EQ(c["rail_aligned"], false);
  const Result table = Network({"dgx-h100-rail-only", "--collective", "all-to-all", "--bytes",
                                "256MiB", "--group", "ep", "--tp", "2", "--ep", "16"});
  EXPECT_NE(table.out.find("cross-rail traffic forwarded through the HB domain"), std::string::npos)
      << table.out;
  const Result bad = Network({"dgx-h100-superpod", "--collective", "all-reduce", "--bytes", "1GiB",
                              "--group", "tp", "--tp", "3"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("tp*cp*pp*dp"), std::string::npos) << bad.err;
}

TEST(NetworkVerb, BadTopologiesNameFileLineColumn) {
  const std::string rails = kData + "network_bad_rails.yaml";
  Result r = Network({rails});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(rails + ":11:7: error: system.network[1].rails: a rail is the set of devices "
                               "with the same local rank in their HB domain, so rails must equal "
                               "the devices of one domain of nvlink (network[0]): 8"),
            std::string::npos)
      << r.err;

  const std::string radix = kData + "network_bad_radix.yaml";
  r = Network({radix});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(radix + ":11:7: error: system.network[1].radix: radix too small for the "
                               "size: a 2-level fat-tree of 32-port switches"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("connects at most 512 ports but this tier needs 1024"), std::string::npos);

  const std::string torus = kData + "network_bad_torus.yaml";
  r = Network({torus});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(torus + ":16:17: error: system.network[1].topology: one of: switch, "
                               "full-mesh, ring, fat-tree, rail-only, torus"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("did you mean 'fat-tree'?"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(torus + ":9:7: error: system.network[0].dims: torus dimensions multiply to "
                               "32 but the tier spans 64 devices"),
            std::string::npos)
      << r.err;
}

TEST(NetworkVerb, TorusDimsMustMultiplyToTheChipCount) {
  const Result r = Network({"tpu-v4-pod", "--set", "system.network[0].dims=16x16x8"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("system.network[0].dims: torus dimensions multiply to 2048 but the tier "
                       "spans 4096 devices"),
            std::string::npos)
      << r.err;
}

TEST(NetworkVerb, RailOnlyStudyRunsFromOneCommand) {
  const Result r = Network({"study", kConfigs + "/studies/rail-only.yaml", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out)["rows"];
  ASSERT_GE(rows.size(), 10u);
  for (const auto& row : rows) {
    EXPECT_TRUE(row["feasible"].get<bool>()) << row["case"] << " " << row["reason"];
    if (row["fabric"] != "rail-only") continue;
    // Rail-only never costs more, and dense plans (no all-to-all) keep their time.
    EXPECT_LE(row["fabric_cost_vs_baseline"].get<double>(), 1e-12) << row["case"];
    if (row["ep_comm_s"].get<double>() == 0)
      EXPECT_NEAR(row["iteration_vs_baseline"].get<double>(), 0, 1e-9) << row["case"];
    else
      EXPECT_GT(row["ep_comm_vs_baseline"].get<double>(), 0) << row["case"];
  }
}

}  // namespace
}  // namespace orrery
