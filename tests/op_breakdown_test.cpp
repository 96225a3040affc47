// `orrery estimate --ops`: the per-operator breakdown comes from the
// functions the estimator prices with, so its lines add up to the
// estimator's own layer, head and embedding times, to the bit.

#include <gtest/gtest.h>

#include <string>

#include "core/api/estimate.h"
#include "core/api/json.h"
#include "core/estimate/training_estimator.h"
#include "tests/support/model_shapes.h"
#include "tests/support/presets.h"

namespace orrery::engine {
namespace {

const OperatorLine* Find(const OperatorGroup& g, const std::string& name) {
  for (const OperatorLine& l : g.ops)
    if (l.name == name) return &l;
  return nullptr;
}

// The lines of each group, summed in order, are the OpTimes Run() is built
// from (PreparedWorkload: priced through the kernel memo, the lines
// without it): equal doubles, not near ones.
void ExpectGroupsSumToThePreparedTimes(const Scenario& s) {
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate e = est.Run(s.training, s.workload);
  ASSERT_GT(e.iteration_s, 0);
  const PreparedWorkload prepared = est.Prepare(s.training, s.workload);
  const OperatorBreakdown b = est.Breakdown(s.training, s.workload, e);
  auto sum = [](const OperatorGroup& g, bool fwd) {
    double t = 0;
    for (const OperatorLine& l : g.ops) t += fwd ? l.fwd_s : l.bwd_s;
    return t;
  };
  ASSERT_FALSE(b.dense.ops.empty());
  EXPECT_EQ(sum(b.dense, true), prepared.dense.fwd);
  EXPECT_EQ(sum(b.dense, false), prepared.dense.bwd);
  EXPECT_EQ(b.dense.fwd_s, prepared.dense.fwd);
  EXPECT_EQ(b.dense.bwd_s, prepared.dense.bwd);
  EXPECT_EQ(b.head.fwd_s, prepared.head.fwd);
  EXPECT_EQ(b.head.bwd_s, prepared.head.bwd);
  EXPECT_EQ(sum(b.head, true), prepared.head.fwd);
  EXPECT_EQ(b.embed.fwd_s, prepared.embed.fwd);
  EXPECT_EQ(b.embed.bwd_s, prepared.embed.bwd);
  EXPECT_EQ(b.microbatches, e.microbatches);
  EXPECT_EQ(b.optimizer_s, e.time.optimizer);
}

TEST(OperatorBreakdown, LinesSumToTheEstimatorsLayerHeadAndEmbeddingBf16) {
  ExpectGroupsSumToThePreparedTimes(test::LoadScenario("llama3-70b-h100"));
}

// FP8: each linear layer's casts ride on its line (Times() adds them to the
// GEMM's pass), and the LM head stays in BF16.
TEST(OperatorBreakdown, LinesSumToTheEstimatorsLayerHeadAndEmbeddingFp8) {
  Scenario s = test::LoadScenario("llama3-70b-h100");
  s.training.precision = hardware::DataType::kFp8;
  ExpectGroupsSumToThePreparedTimes(s);
  const TrainingEstimator est(s.model, s.system);
  const OperatorBreakdown b = est.Breakdown(s.training, s.workload, est.Run(s.training, s.workload));
  const OperatorLine* qkv = Find(b.dense, "qkv_proj");
  ASSERT_NE(qkv, nullptr);
  EXPECT_GT(qkv->fp8_cast_fwd_s, 0);
  EXPECT_LT(qkv->fp8_cast_fwd_s, qkv->fwd_s);
  const OperatorLine* head = Find(b.head, "lm_head");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->fp8_cast_fwd_s, 0);
}

// A MoE layer: its operators, the dispatcher's permutes and the host-launch
// bound add up to the prepared MoE layer.
TEST(OperatorBreakdown, MoeLayerSumsToThePreparedMoeLayer) {
  const Scenario s = test::LoadScenario("deepseek-v3-dgx-h100");
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate e = est.Run(s.training, s.workload);
  ASSERT_GT(e.iteration_s, 0);
  const PreparedWorkload prepared = est.Prepare(s.training, s.workload);
  const OperatorBreakdown b = est.Breakdown(s.training, s.workload, e);
  ASSERT_NE(Find(b.moe, "expert_permute"), nullptr);
  EXPECT_EQ(b.moe.fwd_s, prepared.moe.fwd);
  EXPECT_EQ(b.moe.bwd_s, prepared.moe.bwd);
  EXPECT_EQ(b.head.fwd_s, prepared.head.fwd);  // with the MTP module
}

// One GPT layer, h = 2048, one 2048-token microbatch, on a device of
// 100 TFLOP/s at a flat 0.5 of peak for GEMMs, 1 TB/s of memory at a flat
// 0.8, 2 us per kernel:
//   qkv_proj 2048 x 6144 x 2048: 51.54 GFLOP, F = 51.54e9 / 50e12 = 1.030792 ms
//     at the curve; depth factor at K = 2048: a = (2048/2262) / (4096/4310)
//     = 0.952697 (hardware::GemmDepthFactor). Its operands, (2048 x 2048 +
//     2 x 2048 x 6144) x 2 B = 58.7 MB, take 73.4 us at 0.8 TB/s: compute-bound.
//     forward  (depth K = 2048):  F / a + 2 us = 1.081973 + 0.002 = 1.083973 ms
//     backward (input gradient at N = 6144: F; weight gradient at M = 2048:
//       F / a): F + F / a + 2 x 2 us = 2.116765 ms
//     fraction of peak forward: 51.54e9 / (1.083973e-3 x 100e12) = 0.475469
//   input_norm: 2048 x 2048 elements, read and written in bf16: 16,777,216 B
//     forward  16,777,216 / 0.8e12 + 2 us = 20.97152 + 2 = 22.97152 us
//     backward one pass reading dY and X and writing dX, 1.5 times the
//       bytes: 25,165,824 / 0.8e12 + 2 us = 31.45728 + 2 = 33.45728 us
//     fraction of the bandwidth: 16,777,216 / (22.97152e-6 x 1e12) = 0.730349
TEST(OperatorBreakdown, OneGemmAndOneNormByHand) {
  Scenario s;
  s.system = test::OneHandWorkedDevice();
  hardware::DeviceSpec& dev = s.system.device;
  dev.memory_bandwidth = 1e12;
  dev.memory_efficiency = hardware::Curve{{1e6}, {0.8}, {}};
  dev.kernel_overhead = 2e-6;
  const models::ModelSpec m = test::Gpt(1, 2048, 16);
  parallelism::TrainingPlan p;
  p.tp = p.pp = p.dp = p.cp = 1;
  p.micro_batch = 1;
  p.precision = hardware::DataType::kBf16;
  p.attention = parallelism::Attention::kFlash;
  const parallelism::Workload w{.global_batch = 1, .seq_len = 2048};
  const TrainingEstimator est(m, s.system);
  const OperatorBreakdown b = est.Breakdown(p, w, est.Run(p, w));
  const OperatorLine* qkv = Find(b.dense, "qkv_proj");
  ASSERT_NE(qkv, nullptr);
  EXPECT_STREQ(qkv->kind, "gemm");
  EXPECT_NEAR(qkv->fwd_s, 1.083973e-3, 1e-9);
  EXPECT_NEAR(qkv->bwd_s, 2.116765e-3, 1e-9);
  EXPECT_DOUBLE_EQ(qkv->fwd_flops, 2.0 * 2048 * 6144 * 2048);
  EXPECT_NEAR(qkv->fwd_fraction, 0.475469, 1e-6);
  EXPECT_EQ(qkv->fwd_bound, OpBound::kCompute);
  const OperatorLine* norm = Find(b.dense, "input_norm");
  ASSERT_NE(norm, nullptr);
  EXPECT_NEAR(norm->fwd_s, 22.97152e-6, 1e-12);
  EXPECT_NEAR(norm->bwd_s, 33.45728e-6, 1e-12);
  EXPECT_DOUBLE_EQ(norm->fwd_bytes, 16777216);
  EXPECT_NEAR(norm->fwd_fraction, 0.730349, 1e-6);
  EXPECT_EQ(norm->fwd_bound, OpBound::kMemory);
  // A single device has no communication to break down.
  EXPECT_TRUE(b.comm.empty());
  EXPECT_EQ(Find(b.dense, "qkv_split_grad"), nullptr);
  // Q, K and V split off the projection (training.qkv_split_cat): backward
  // only, the cat reads the three gradients and writes the projection's
  // output gradient, 2 x 2048 x 6144 x 2 = 50,331,648 B:
  // 50,331,648 / 0.8e12 + 2 us = 64.91456 us; no forward kernel.
  p.qkv_split_cat = true;
  const OperatorBreakdown split = est.Breakdown(p, w, est.Run(p, w));
  const OperatorLine* cat = Find(split.dense, "qkv_split_grad");
  ASSERT_NE(cat, nullptr);
  EXPECT_STREQ(cat->kind, "elementwise");
  EXPECT_DOUBLE_EQ(cat->fwd_s, 0.0);
  EXPECT_EQ(cat->fwd_bound, OpBound::kNone);
  EXPECT_DOUBLE_EQ(cat->bwd_bytes, 50331648.0);
  EXPECT_NEAR(cat->bwd_s, 64.91456e-6, 1e-12);
  EXPECT_EQ(cat->bwd_bound, OpBound::kMemory);
}

// The data-parallel line: traffic is the same plan's exposed DP time with
// overlap off, exposed is the estimate's; overlap hides some of it.
TEST(OperatorBreakdown, DataParallelTrafficIsTheNoOverlapExposure) {
  Scenario s = test::LoadScenario("llama3-70b-h100");
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate e = est.Run(s.training, s.workload);
  const OperatorBreakdown b = est.Breakdown(s.training, s.workload, e);
  parallelism::TrainingPlan bare = s.training;
  bare.dp_overlap = false;
  bare.tp_comm_overlap = false;
  bare.ep_comm_overlap = false;
  const TrainingEstimate alone = est.Run(bare, s.workload);
  const CommLine* dp = nullptr;
  for (const CommLine& c : b.comm)
    if (std::string(c.name) == "dp_gradients_and_parameters") dp = &c;
  ASSERT_NE(dp, nullptr);
  EXPECT_EQ(dp->traffic_s, alone.time.dp_comm);
  EXPECT_EQ(dp->exposed_s, e.time.dp_comm);
  EXPECT_GE(dp->traffic_s, dp->exposed_s);
}

// The library call and its JSON: `ops` only when asked.
TEST(OperatorBreakdown, EstimateCarriesItInJsonOnlyWhenAsked) {
  EstimateRequest req;
  req.scenario = ScenarioInput::File("llama3-70b-h100", {});
  const EstimateResult plain = Estimate(req);
  ASSERT_EQ(plain.status, Status::kOk);
  EXPECT_FALSE(plain.ops.has_value());
  EXPECT_FALSE(ToJson(plain).contains("ops"));
  req.operator_breakdown = true;
  const EstimateResult r = Estimate(req);
  ASSERT_TRUE(r.ops.has_value());
  const Json j = ToJson(r);
  ASSERT_TRUE(j.contains("ops"));
  EXPECT_EQ(j["ops"]["layer"]["fwd_s"].get<double>(), r.ops->dense.fwd_s);
  EXPECT_EQ(j["ops"]["layer"]["ops"][0]["name"].get<std::string>(), r.ops->dense.ops[0].name);
  EXPECT_TRUE(j["ops"]["layer"]["ops"][0].contains("fwd_bound"));
  EXPECT_TRUE(j["ops"]["comm"].is_array());
}

}  // namespace
// DualPipe hides the expert all-to-alls whatever ep_comm_overlap says; its
// all-to-all line still shows their traffic. DeepSeek-V3 on 576 H100 at
// pp 4 (ep 8 in a node): a layer's all-to-alls c are shorter than the
// compute beside them, so the estimate leaves their contention exposed,
// c s / (1 + s) with the H100's s = 0.189 (OverlapExposed), and the traffic
// is (1 + s) / s = 6.291 times the exposed part, as under 1F1B with the
// overlap asked for.
TEST(OperatorBreakdown, DualPipeShowsTheAllToAllTrafficItHides) {
  const Scenario s = test::LoadScenario("deepseek-v3-dgx-h100");
  const TrainingEstimator est(s.model, s.system);
  for (const auto schedule : {parallelism::Schedule::kDualPipe, parallelism::Schedule::kOneFOneB}) {
    parallelism::TrainingPlan p = s.training;
    p.pp = 4;
    p.dp = 0;
    p.schedule = schedule;
    p.ep_comm_overlap = schedule == parallelism::Schedule::kOneFOneB;
    const TrainingEstimate e = est.Run(p, s.workload);
    const OperatorBreakdown b = est.Breakdown(p, s.workload, e);
    const CommLine* ep = nullptr;
    for (const CommLine& c : b.comm)
      if (std::string(c.name) == "ep_all_to_all") ep = &c;
    ASSERT_NE(ep, nullptr) << parallelism::ScheduleName(schedule);
    EXPECT_GT(ep->exposed_s, 0);
    EXPECT_NEAR(ep->traffic_s / ep->exposed_s, 1.189 / 0.189, 1e-9) << parallelism::ScheduleName(schedule);
  }
}

// The pipeline sends' line shows their traffic beside what the schedule
// leaves exposed. Llama 3 70B on 512 H100 at tp 8, pp 4, dp 16 (1,024 x
// 8,192 tokens, micro batch 1: m = 64): interleaved 1F1B at v 4 with
// pp_comm_overlap hides the steady phase's sends, so its traffic is the same
// plan's with the sends blocking (every send exposed). DualPipe exposes
// 2 (pp - 1) = 6 of one chunk's 2 (m + pp - 1) = 518 sends a device.
TEST(OperatorBreakdown, PipelineSendsShowTheTrafficTheScheduleHides) {
  const Scenario s = test::LoadScenario("llama3-70b-h100");
  const TrainingEstimator est(s.model, s.system);
  parallelism::TrainingPlan p = s.training;
  p.tp = 8;
  p.pp = 4;
  p.dp = 16;
  p.cp = 1;
  p.micro_batch = 1;
  p.interleave = 4;
  p.pp_comm_overlap = true;
  const parallelism::Workload w = s.workload;
  ASSERT_EQ(w.global_batch, 1024);
  const auto line = [&](const parallelism::TrainingPlan& plan) {
    const TrainingEstimate e = est.Run(plan, w);
    EXPECT_TRUE(e.feasible()) << static_cast<int>(e.infeasible);
    const OperatorBreakdown b = est.Breakdown(plan, w, e);
    for (const CommLine& c : b.comm)
      if (std::string(c.name) == "pp_point_to_point") return c;
    ADD_FAILURE() << "no pp_point_to_point line";
    return CommLine{};
  };
  const CommLine hidden = line(p);
  parallelism::TrainingPlan blocking = p;
  blocking.pp_comm_overlap = false;
  const CommLine exposed = line(blocking);
  EXPECT_LT(hidden.exposed_s, 0.5 * hidden.traffic_s);
  EXPECT_DOUBLE_EQ(hidden.traffic_s, exposed.exposed_s);
  EXPECT_DOUBLE_EQ(exposed.traffic_s, exposed.exposed_s);

  parallelism::TrainingPlan dual = p;
  dual.schedule = parallelism::Schedule::kDualPipe;
  dual.interleave = 1;
  const CommLine d = line(dual);
  EXPECT_GT(d.exposed_s, 0);
  EXPECT_NEAR(d.traffic_s / d.exposed_s, 134.0 / 6.0, 1e-9);
}

}  // namespace orrery::engine
