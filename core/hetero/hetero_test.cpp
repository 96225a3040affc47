// Heterogeneous clusters (core/hetero/hetero.h): the pipeline composition
// by hand, the slowest pool pacing a data split, the split search, and the
// energy with idle power by hand.

#include "core/hetero/hetero.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"

namespace orrery::hetero {
namespace {

using parallelism::HeteroSplit;

engine::Scenario Load(const std::vector<std::string>& sets = {}) {
  const engine::PresetStore store(ORRERY_TEST_CONFIG_DIR);
  base::Diagnostics d;
  auto s = engine::LoadScenarioFile("llama3-70b-a100-h100-hetero", store, d);
  EXPECT_TRUE(s.has_value()) << d.ToString();
  for (const std::string& set : sets) EXPECT_TRUE(engine::ApplyOverride(*s, set, d)) << d.ToString();
  engine::CrossCheck(*s, d);
  EXPECT_TRUE(d.ok()) << d.ToString();
  return *s;
}

// Two pools of one stage each, 12 layers, 8 microbatches. A layer takes
// a = 2 ms on the slow pool and b = 1 ms on the fast one. With l layers on
// the slow pool the stages take 2l and 12 - l ms, and Alpa's Eq. 2 gives
// T(l) = 2l + (12 - l) + 7 max(2l, 12 - l):
//   l = 3: 6 + 9 + 7 x 9  = 78 ms
//   l = 4: 8 + 8 + 7 x 8  = 72 ms   (balanced: 2l = 12 - l)
//   l = 5: 10 + 7 + 7 x 10 = 87 ms
//   l = 6 (the even split): 12 + 6 + 7 x 12 = 102 ms
TEST(Hetero, HandWorkedPipelineSplit) {
  std::vector<StageCosts> pools(2);
  pools[0].layer_s = 2e-3;
  pools[1].layer_s = 1e-3;
  double best = 1e9;
  int64_t best_l = 0;
  for (int64_t l = 1; l <= 11; ++l) {
    const double t = PipelineTime(StageTimes(pools, {l, 12 - l}), 8);
    if (t < best) {
      best = t;
      best_l = l;
    }
  }
  EXPECT_EQ(best_l, 4);
  EXPECT_NEAR(best, 72e-3, 1e-12);
  EXPECT_NEAR(PipelineTime(StageTimes(pools, {3, 9}), 8), 78e-3, 1e-12);
  EXPECT_NEAR(PipelineTime(StageTimes(pools, {5, 7}), 8), 87e-3, 1e-12);
  EXPECT_NEAR(PipelineTime(StageTimes(pools, {6, 6}), 8), 102e-3, 1e-12);
}

// Stages inside a pool, the ends of the pipeline and the sends. Pool 0:
// 2 stages, 2 ms a layer, embedding 1 ms, a send inside the pool 0.5 ms and
// to the next pool 1 ms; pool 1: 1 stage, 1 ms a layer, head 3 ms. Layers
// (5, 4): pool 0's stages take 3 and 2 layers.
//   stage 0: 3 x 2 + 1 (embedding) + 2 x 0.5 (send inside) = 8 ms
//   stage 1: 2 x 2 + 2 x 1 (send to pool 1)                = 6 ms
//   stage 2: 4 x 1 + 3 (head)                               = 7 ms
// 4 microbatches: 8 + 6 + 7 + 3 x 8 = 45 ms.
TEST(Hetero, StageTimesCountEndsAndSends) {
  std::vector<StageCosts> pools(2);
  pools[0] = {2, 2e-3, 1e-3, 0, 0.5e-3, 1e-3};
  pools[1] = {1, 1e-3, 0, 3e-3, 0, 0};
  std::vector<size_t> owner;
  const std::vector<double> t = StageTimes(pools, {5, 4}, &owner);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_NEAR(t[0], 8e-3, 1e-12);
  EXPECT_NEAR(t[1], 6e-3, 1e-12);
  EXPECT_NEAR(t[2], 7e-3, 1e-12);
  EXPECT_EQ(owner, (std::vector<size_t>{0, 0, 1}));
  EXPECT_NEAR(PipelineTime(t, 4), 45e-3, 1e-12);
}

// 32 A100 (TDP 400 W, idle 30 % of it = 120 W by the device default), PUE
// 1.2, busy 8 s of a 10 s iteration:
//   1.2 x 32 x (400 x 8 + 120 x 2) = 38.4 x 3440 = 132,096 J
// against 38.4 x 400 x 10 = 153,600 J with every device at TDP throughout.
TEST(Hetero, IdlePowerEnergyByHand) {
  hardware::DeviceSpec a100;
  a100.tdp = 400;
  EXPECT_DOUBLE_EQ(IdlePower(a100), 120);
  EXPECT_NEAR(FacilityEnergy(32, 400, IdlePower(a100), 1.2, 8, 10), 132096, 1e-6);
  EXPECT_NEAR(FacilityEnergy(32, 400, 400, 1.2, 8, 10), 153600, 1e-6);
  a100.idle_power = 60;
  EXPECT_NEAR(FacilityEnergy(32, 400, IdlePower(a100), 1.2, 8, 10), 1.2 * 32 * (3200 + 120), 1e-6);
}

TEST(Hetero, PoolSystemTakesThePoolsDeviceAndScaleUp) {
  const engine::Scenario s = Load();
  ASSERT_EQ(PoolCount(s.system), 2u);
  const hardware::SystemSpec a = PoolSystem(s.system, 0), h = PoolSystem(s.system, 1);
  EXPECT_EQ(a.device.tdp, 400);
  EXPECT_EQ(h.device.tdp, 700);
  EXPECT_EQ(hardware::DeviceCount(h), 32);
  // NVLink of each generation (devices.csv): 300 GB/s on A100, 450 GB/s on H100.
  EXPECT_DOUBLE_EQ(a.network[0].bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(h.network[0].bandwidth, 450e9);
  // The scale-out tier is shared.
  EXPECT_DOUBLE_EQ(h.network[1].bandwidth, a.network[1].bandwidth);
  EXPECT_EQ(PoolName(s.system, 1), "h100");
}

// The shipped two-generation scenario: 4 A100 stages then 4 H100 stages.
// Every pool's per-layer time comes from the estimator; the even split
// (40/40) is paced by the A100 stages, and the search moves layers to the
// H100s until the two pools' slowest stages are within a layer of each other.
TEST(Hetero, SearchFindsTheUnevenLayerSplit) {
  const engine::Scenario s = Load();
  const Result even = Evaluate(s);
  ASSERT_TRUE(even.feasible) << even.reason;
  ASSERT_EQ(even.pools.size(), 2u);
  EXPECT_EQ(even.layers, (std::vector<int64_t>{40, 40}));
  EXPECT_EQ(even.microbatches, 128);  // 128 sequences / (dp 1 x micro_batch 1)
  // At 40/40 the A100 stage is slower: it paces, the H100 pool idles more.
  EXPECT_GT(even.pools[0].stage_s, even.pools[1].stage_s);
  EXPECT_GT(even.pools[1].idle_fraction, even.pools[0].idle_fraction);

  const SplitSearch found = SearchSplits(s, SplitObjective::kTime, 3);
  ASSERT_FALSE(found.top.empty()) << found.why_none;
  const Result& best = found.top[0];
  // Every split with at least one layer per stage: 4 .. 76 layers on the A100s.
  EXPECT_EQ(found.splits, 73);
  EXPECT_LT(best.layers[0], 40);
  EXPECT_LT(best.iteration_s, even.iteration_s);
  // Exhaustive: no split is faster than the one found.
  for (int64_t l = 4; l <= 76; ++l) {
    const Result r = EvaluateSplit(s, HeteroSplit::kPipeline, {l, 80 - l});
    if (r.feasible) {
      EXPECT_GE(r.iteration_s, best.iteration_s) << "layers " << l;
    }
  }
  // Balanced within one layer: moving one layer either way cannot shrink the
  // slowest stage below the other pool's.
  const double a_layer = best.pools[0].stage_s / std::ceil(best.layers[0] / 4.0);
  EXPECT_LT(std::abs(best.pools[0].stage_s - best.pools[1].stage_s), 2 * a_layer);
  // The pipeline formula with the pools' slowest stages: each pool's 4
  // stages, the slowest paces all 128 microbatches.
  EXPECT_GE(best.pipeline_s, 127 * std::max(best.pools[0].stage_s, best.pools[1].stage_s));
  EXPECT_NEAR(best.iteration_s, best.pipeline_s + best.sync_s, 1e-12);
}

// A data split: each pool runs the whole model (tp 8, pp 4, dp 1) on its
// batch share; the pools then all-reduce their gradients. The iteration is
// the slower pool's plus the cross-pool ring all-reduce, 2 (P - 1)/P x G /
// pool bandwidth with P = 2: G / 25 GB/s (200 Gb/s).
TEST(Hetero, SlowestPoolPacesADataSplit) {
  const engine::Scenario s =
      Load({"hetero.split=data", "hetero.batch=64,64", "training.pp=4", "training.dp=0"});
  const Result r = Evaluate(s);
  ASSERT_TRUE(r.feasible) << r.reason;
  ASSERT_EQ(r.pools.size(), 2u);
  // Each pool alone, by the estimator on its own system.
  double own[2];
  for (size_t g = 0; g < 2; ++g) {
    engine::Scenario one = s;
    one.system = PoolSystem(s.system, g);
    one.workload.global_batch = 64;
    const engine::TrainingEstimator est(one.model, one.system);
    const engine::TrainingEstimate e = est.Run(one.training, one.workload);
    ASSERT_TRUE(e.feasible());
    own[g] = e.iteration_s;
    EXPECT_DOUBLE_EQ(r.pools[g].own_s, e.iteration_s);
  }
  EXPECT_GT(own[0], own[1]);  // the A100s are slower
  // Gradient bytes per device: Llama 3 70B's parameters over tp 8 x pp 4,
  // in fp32 (4 B) as the estimator reduces them.
  const hardware::SystemSpec pool0 = PoolSystem(s.system, 0);
  const engine::TrainingEstimator est0(s.model, pool0);
  parallelism::TrainingPlan p = s.training;
  p.dp = 1;
  const engine::OperatorCosts c = est0.Costs(p, s.workload);
  const double grad = (80 * c.layer_params + c.embed_params + c.head_params) / 4 * 4;
  EXPECT_NEAR(r.cross_pool_s, grad / 25e9, 1e-9);
  EXPECT_NEAR(r.iteration_s, own[0] + r.cross_pool_s, 1e-12);
  // The H100 pool waits for the A100 pool: that wait and its pipeline bubble are idle.
  EXPECT_NEAR(r.pools[1].idle_s, own[0] - own[1] + r.pools[1].estimate.time.pp_bubble, 1e-9);

  // Searching the shares moves sequences to the H100s.
  const SplitSearch found = SearchSplits(s, SplitObjective::kTime, 1);
  ASSERT_FALSE(found.top.empty()) << found.why_none;
  EXPECT_GT(found.top[0].batch[1], 64);
  EXPECT_LT(found.top[0].iteration_s, r.iteration_s);
}

TEST(Hetero, InfeasibleSplitsAreResultsWithReasons) {
  const engine::Scenario s = Load();
  // 2 layers cannot fill the A100 pool's 4 stages.
  const Result r = EvaluateSplit(s, HeteroSplit::kPipeline, {2, 78});
  EXPECT_FALSE(r.feasible);
  EXPECT_EQ(r.reason, "pool 0 (a100-80gb): 2 layers for 4 stages");
  const Result w = EvaluateSplit(s, HeteroSplit::kPipeline, {40, 30});
  EXPECT_FALSE(w.feasible);
  EXPECT_EQ(w.reason, "layers 40,30 does not add up to 80");
  // A data split fills each pool; a dp fixed by hand is refused, not ignored.
  const Result d = Evaluate(Load({"hetero.split=data", "training.pp=4"}));
  EXPECT_FALSE(d.feasible);
  EXPECT_NE(d.reason.find("set training.dp=0"), std::string::npos) << d.reason;
}

TEST(Hetero, ListsAreCheckedAtTheirKey) {
  const engine::PresetStore store(ORRERY_TEST_CONFIG_DIR);
  base::Diagnostics d;
  auto s = engine::LoadScenarioFile("llama3-70b-a100-h100-hetero", store, d);
  ASSERT_TRUE(s.has_value());
  ASSERT_TRUE(engine::ApplyOverride(*s, "hetero.layers=30,30,20", d));
  engine::CrossCheck(*s, d);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.ToString().find("hetero.layers"), std::string::npos) << d.ToString();
  EXPECT_NE(d.ToString().find("needs one entry per pool: 2"), std::string::npos) << d.ToString();
  base::Diagnostics bad;
  EXPECT_FALSE(engine::ApplyOverride(*s, "hetero.layers=30,x", bad));
  EXPECT_NE(bad.ToString().find("expected whole numbers >= 1"), std::string::npos) << bad.ToString();
}

}  // namespace
}  // namespace orrery::hetero
