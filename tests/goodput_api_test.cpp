// Goodput through the public API (issue 17): estimate and plan report it, a
// sweep over cluster size shows it falling, and the system's reliability:
// and storage: sections are checked like every other section.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/api/estimate.h"
#include "core/api/json.h"
#include "core/api/plan.h"
#include "core/api/search.h"
#include "core/api/sweep.h"
#include "models/transformer.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;
const std::string kSource = ORRERY_TEST_SOURCE_DIR;

class GoodputApi : public ::testing::Test {
 protected:
  void SetUp() override { setenv("ORRERY_CONFIG_DIR", ORRERY_TEST_CONFIG_DIR, 1); }
};

TEST_F(GoodputApi, EstimateReportsGoodputAndEffectiveTime) {
  EstimateRequest req;
  req.scenario = ScenarioInput::File("llama3-70b-h100");
  req.goodput_runs = 400;
  req.goodput_seed = 7;
  const EstimateResult r = Estimate(req);
  ASSERT_TRUE(r.ok()) << r.reason;
  ASSERT_TRUE(r.goodput.has_value());
  const goodput::Result& g = *r.goodput;
  // 512 H100s at the default 1230.8 device-days: M = 1230.8 x 86400 / 512 = 207,697.5 s.
  EXPECT_NEAR(g.in.mtbf_s, 207697.5, 1e-6);
  // 14 bytes per parameter (bf16 weights, fp32 master, Adam), written by 64
  // nodes at 1 GB/s each: C / 64e9 seconds.
  EXPECT_NEAR(g.in.checkpoint_bytes, 14 * r.parameters, 1);
  EXPECT_NEAR(g.in.write_s, g.in.checkpoint_bytes / 64e9, 1e-9);
  // Effective time = failure-free time / goodput; the scenario trains 15 T tokens.
  ASSERT_GT(r.estimate.train_time_s, 0);
  EXPECT_NEAR(g.effective_s, r.estimate.train_time_s / g.goodput, 1e-6 * g.effective_s);
  EXPECT_LT(g.goodput, 1.0);
  EXPECT_GT(g.goodput, 0.9);
  // The Monte-Carlo over the whole run agrees with the closed form (a run
  // of ~113 failures: the spread of the mean of 400 runs is ~0.02 %).
  ASSERT_TRUE(r.goodput_mc.has_value());
  EXPECT_NEAR(r.goodput_mc->mean_s / g.effective_s, 1.0, 0.005);
  EXPECT_LE(r.goodput_mc->p50_s, r.goodput_mc->p90_s);
  // JSON: the interval and the effective time, in seconds.
  const Json j = ToJson(r);
  ASSERT_TRUE(j.contains("goodput"));
  EXPECT_NEAR(j["goodput"]["checkpoint_interval_s"].get<double>(), g.interval_s, 1e-9);
  EXPECT_NEAR(j["goodput"]["effective_time_s"].get<double>(), g.effective_s, 1e-6);
  EXPECT_EQ(j["goodput"]["monte_carlo"]["runs"].get<int64_t>(), 400);
}

TEST_F(GoodputApi, NothingFailsWhenEveryMtbfIsZero) {
  EstimateRequest req;
  req.scenario = ScenarioInput::File("llama3-70b-h100", {"system.reliability.device_mtbf=0 s"});
  const EstimateResult r = Estimate(req);
  ASSERT_TRUE(r.ok()) << r.reason;
  ASSERT_TRUE(r.goodput.has_value());
  EXPECT_EQ(r.goodput->goodput, 1.0);
  EXPECT_EQ(r.goodput->interval_s, 0.0);
  const Json j = ToJson(r);
  EXPECT_TRUE(j["goodput"]["mtbf_s"].is_null());
  EXPECT_TRUE(j["goodput"]["checkpoint_interval_s"].is_null());
}

TEST_F(GoodputApi, ReliabilityKeysAreCheckedWithTheirPath) {
  EstimateRequest req;
  req.scenario = ScenarioInput::File("llama3-70b-h100", {"system.reliability.device_mtbf=5"});
  const EstimateResult r = Estimate(req);
  EXPECT_EQ(r.status, Status::kInvalidInput);
  ASSERT_FALSE(r.diagnostics.items().empty());
  EXPECT_EQ(r.diagnostics.items()[0].path, "system.reliability.device_mtbf");
  EXPECT_NE(r.diagnostics.items()[0].message.find("unit"), std::string::npos)
      << r.diagnostics.items()[0].message;

  // A misspelt key inside the section of a system file.
  const std::string yaml =
      "scenario:\n"
      "  model: llama3-70b\n"
      "  system:\n"
      "    device: h100-sxm\n"
      "    nodes: 1\n"
      "    network: [{name: nvlink, domain: 0, bandwidth: 450 GB/s}]\n"
      "    reliability: {device_mtfb: 100 d}\n"
      "  training: {tp: 8}\n"
      "  workload: {global_batch: 8, seq_len: 4096}\n";
  EstimateRequest bad;
  bad.scenario = ScenarioInput::Yaml(yaml);
  const EstimateResult b = Estimate(bad);
  EXPECT_EQ(b.status, Status::kInvalidInput);
  ASSERT_FALSE(b.diagnostics.items().empty());
  const base::Diagnostic& d = b.diagnostics.items()[0];
  EXPECT_EQ(d.path, "scenario.system.reliability.device_mtfb");
  EXPECT_EQ(d.where.line, 7);
  EXPECT_NE(d.hint.find("device_mtbf"), std::string::npos) << d.hint;
}

TEST_F(GoodputApi, SweepOverClusterSizeShowsGoodputFalling) {
  const fs::path db = fs::temp_directory_path() / "orrery_goodput_sweep_test.sqlite";
  fs::remove(db);
  SweepRequest req;
  req.sweep_file = kSource + "/configs/sweeps/goodput-cluster-size.yaml";
  req.db = db.string();
  req.threads = 1;
  const SweepResult s = Sweep(req);
  ASSERT_TRUE(s.ok()) << s.reason;
  DbRequest dreq;
  dreq.db = db.string();
  const DbExportResult ex = DbExport(dreq);
  ASSERT_TRUE(ex.ok()) << ex.reason;
  const std::vector<Json> rows = FlatExportRows(ex);
  ASSERT_EQ(rows.size(), 4u);
  double last = 1.0;
  for (const Json& row : rows) {
    SCOPED_TRACE(row.dump());
    ASSERT_EQ(row["status"], "ok");
    const double g = row["goodput.goodput"].get<double>();
    EXPECT_LT(g, last);  // 512, 2048, 8192, 16384 GPUs: goodput falls
    last = g;
  }
  // 16,384 GPUs: M = 1230.8 x 86400 / 16384 = 6490.55 s; the straggler
  // factor is 1 + 0.01 x H_2048 = 1.082021.
  EXPECT_NEAR(rows.back()["goodput.mtbf_s"].get<double>(), 6490.547, 1e-3);
  EXPECT_NEAR(rows.back()["goodput.straggler_factor"].get<double>(), 1.082021, 1e-6);
  fs::remove(db);
}

TEST_F(GoodputApi, SearchReportsGoodputOfEachPlan) {
  SearchRequest req;
  req.scenario = ScenarioInput::File("llama3-70b-h100");
  req.top = 2;
  req.threads = 1;
  req.offload = false;
  req.context_parallel = false;
  req.all_group_orders = false;
  const SearchResult r = Search(req);
  ASSERT_TRUE(r.ok()) << r.reason;
  ASSERT_FALSE(r.top.empty());
  for (const SearchPlan& p : r.top) {
    // The same system and model as the estimate test: the same MTBF; the
    // effective time is this plan's failure-free time over its goodput.
    EXPECT_NEAR(p.goodput.in.mtbf_s, 207697.5, 1e-6);
    EXPECT_NEAR(p.goodput.effective_s, p.candidate.estimate.train_time_s / p.goodput.goodput,
                1e-6 * p.goodput.effective_s);
  }
  const Json j = ToJson(r);
  EXPECT_NEAR(j["top"][0]["goodput"]["goodput"].get<double>(), r.top[0].goodput.goodput, 1e-15);
}

TEST_F(GoodputApi, PlanReportsEffectiveDays) {
  PlanRequest req;
  req.law = "epoch";
  req.system = "dgx-h100-superpod";
  req.chain.goal = engine::PlanGoal::kLoss;
  req.chain.target_loss = 2.0;
  const PlanResult r = Plan(req);
  ASSERT_TRUE(r.ok()) << r.reason;
  const engine::ChainPoint& p = r.plan.point;
  ASSERT_TRUE(p.best.found);
  EXPECT_GT(p.effective_days, p.days);
  EXPECT_NEAR(p.effective_days, p.days / p.goodput.goodput, 1e-9 * p.effective_days);
  const nlohmann::ordered_json j = ToJson(r);
  EXPECT_NEAR(j["training"]["effective_days"].get<double>(), p.effective_days, 1e-12);
  EXPECT_GT(j["goodput"]["checkpoint_interval_s"].get<double>(), 0);

  // The Monte-Carlo over the planned run: its mean is the effective time
  // (about 4 failures per run: the spread of a 2000-run mean is ~0.01 %).
  PlanRequest mc = req;
  mc.goodput_runs = 2000;
  mc.goodput_seed = 3;
  const PlanResult m = Plan(mc);
  ASSERT_TRUE(m.ok()) << m.reason;
  ASSERT_TRUE(m.goodput_mc.has_value());
  EXPECT_NEAR(m.goodput_mc->mean_s / 86400 / m.plan.point.effective_days, 1.0, 0.005);
  EXPECT_LE(m.goodput_mc->p50_s, m.goodput_mc->p90_s);
  EXPECT_EQ(ToJson(m)["goodput"]["monte_carlo"]["runs"].get<int64_t>(), 2000);
}

}  // namespace
}  // namespace orrery
