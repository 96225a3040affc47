// Goodput (core/goodput/goodput.h): each formula against numbers worked out
// by hand, a hand-built failure trace, the Monte-Carlo against the closed
// form, and the model against published runs (validation/goodput_runs.csv).

#include "core/goodput/goodput.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/base/csv.h"

namespace orrery::goodput {
namespace {

constexpr double kDay = 86400;

TEST(Goodput, HarmonicAndExpectedMaxOfExponentials) {
  // H_4 = 1 + 1/2 + 1/3 + 1/4 = 25/12; E[max of 4 draws of mean 2] = 2 x 25/12.
  EXPECT_NEAR(Harmonic(4), 25.0 / 12.0, 1e-15);
  EXPECT_NEAR(ExpectedMaxExponential(4, 2.0), 50.0 / 12.0, 1e-14);
  EXPECT_EQ(Harmonic(0), 0.0);
  // Large n by the asymptotic series H_n = ln n + gamma + 1/(2n) - 1/(12 n^2):
  //   n = 128:  4.852030 + 0.577216 + 0.003906 - 0.000005 = 5.433147
  //   n = 2048: 7.624619 + 0.577216 + 0.000244 - 0.00000002 = 8.202079
  EXPECT_NEAR(Harmonic(128), 5.433147, 1e-6);
  EXPECT_NEAR(Harmonic(2048), 8.202079, 1e-6);
}

TEST(Goodput, StragglersCostMoreAt16KThan1KGpus) {
  // 1 % mean jitter per node: 1 K GPUs = 128 nodes of 8 wait for the slowest
  // of 128 (1 + 0.01 x 5.433 = 1.0543), 16 K GPUs = 2048 nodes for the
  // slowest of 2048 (1 + 0.01 x 8.202 = 1.0820).
  hardware::SystemSpec s;
  s.devices_per_node = 8;
  s.reliability.node_jitter = 0.01;
  const parallelism::TrainingPlan plan;
  s.nodes = 128;
  const Inputs k1 = MakeInputs(s, plan, 1e9, 1.0, 0);
  s.nodes = 2048;
  const Inputs k16 = MakeInputs(s, plan, 1e9, 1.0, 0);
  EXPECT_NEAR(k1.straggler_factor, 1.05433147, 1e-8);
  EXPECT_NEAR(k16.straggler_factor, 1.08202079, 1e-8);
}

TEST(Goodput, YoungAndDalyIntervalsByHand) {
  // Young 1974: sqrt(2 x 60 s x 3 h) = sqrt(2 x 60 x 10800) = sqrt(1,296,000) = 1138.420 s.
  EXPECT_NEAR(YoungInterval(60, 10800), 1138.420, 1e-3);
  // Daly 2006 Eq. 37: x = 60 / 21600 = 0.0027778, sqrt(x) = 0.0527046;
  // 1138.420 x (1 + 0.0175682 + 0.0003086) - 60 = 1158.771 - 60 = 1098.771 s.
  EXPECT_NEAR(DalyInterval(60, 10800), 1098.771, 1e-3);
  // delta >= 2M: Daly's interval is M.
  EXPECT_EQ(DalyInterval(100, 40), 40.0);
}

TEST(Goodput, SegmentTimeByHand) {
  // Daly 2006 Eq. 13: M e^(R/M) (e^((tau + delta)/M) - 1) with M = 10800,
  // R = 300, tau = 1000, delta = 60:
  //   10800 x e^0.0277778 x (e^0.0981481 - 1) = 10800 x 1.0281672 x 0.1031260 = 1145.135 s.
  EXPECT_NEAR(SegmentTime(1000, 60, 300, 10800), 1145.135, 1e-3);
  // Nothing fails in the limit M -> infinity: the segment is tau + delta.
  EXPECT_NEAR(SegmentTime(1000, 60, 300, 1e15), 1060.0, 1e-6);
}

TEST(Goodput, NumericOptimumNearDalyInterval) {
  // The interval that maximises tau / T(tau) (independent of R, which only
  // scales T) against Daly's higher-order approximation of it.
  Inputs in;
  in.mtbf_s = 10800;
  in.write_s = in.stall_s = 60;
  in.restart_s = 300;
  in.step_s = 1;
  const Result r = Evaluate(in);
  EXPECT_NEAR(r.interval_s / r.daly_interval_s, 1.0, 0.005);
  EXPECT_NEAR(r.young_interval_s, 1138.420, 1e-3);
  // The optimum is a maximum: 20 % either side is worse.
  EXPECT_GT(r.failure_goodput, FailureGoodputAt(in, 0.8 * r.interval_s));
  EXPECT_GT(r.failure_goodput, FailureGoodputAt(in, 1.2 * r.interval_s));
}

TEST(Goodput, JobFailureRateSumsItsParts) {
  // Default device MTBF 1230.8 d (Kokolis et al. 2024: 6.50 failures per
  // 1000 node-days of 8 GPUs). 16,384 GPUs: 1230.8 x 86400 / 16384 =
  // 6490.55 s = 1.80 h, the paper's own projection for a 16 K-GPU job.
  hardware::SystemSpec s;
  s.devices_per_node = 8;
  s.nodes = 2048;
  EXPECT_NEAR(1 / JobFailureRate(s, 16384), 6490.547, 1e-3);
  // Adding a node MTBF of 2048 d and a job MTBF of 1 d:
  //   16384 / (1230.8 d) + 2048 / (2048 d) + 1 / (1 d) = (13.3117 + 1 + 1) per day.
  s.reliability.node_mtbf = 2048 * kDay;
  s.reliability.job_mtbf = kDay;
  EXPECT_NEAR(JobFailureRate(s, 16384) * kDay, 16384 / 1230.8 + 2, 1e-9);
}

TEST(Goodput, CheckpointBytesFollowTheMemoryModel) {
  // bf16 weights (2) + Adam moments (8) + fp32 master weights (4) = 14 bytes
  // per parameter: 405e9 x 14 = 5.67e12 bytes for Llama 3 405B.
  parallelism::TrainingPlan p;
  EXPECT_DOUBLE_EQ(CheckpointBytes(405e9, p), 5.67e12);
  p.fp32_master_weights = false;
  EXPECT_DOUBLE_EQ(CheckpointBytes(1e9, p), 10e9);
}

TEST(Goodput, StorageBandwidthAndAsyncStall) {
  // 1e9 parameters x 14 B = 14 GB over 16 nodes x 1 GB/s = 0.875 s write;
  // a 10 GB/s store caps it to 1.4 s. Async: each of 128 devices copies
  // 14e9 / 128 = 109.375 MB at 50 GB/s = 2.1875 ms.
  hardware::SystemSpec s;
  s.devices_per_node = 8;
  s.nodes = 16;
  s.host_bandwidth = 50e9;
  const parallelism::TrainingPlan plan;
  Inputs in = MakeInputs(s, plan, 1e9, 1.0, 0);
  EXPECT_NEAR(in.write_s, 0.875, 1e-12);
  EXPECT_NEAR(in.read_s, 0.875, 1e-12);
  EXPECT_EQ(in.stall_s, in.write_s);
  s.storage.write_bandwidth = 10e9;
  s.storage.async_checkpoint = true;
  in = MakeInputs(s, plan, 1e9, 1.0, 0);
  EXPECT_NEAR(in.write_s, 1.4, 1e-12);
  EXPECT_TRUE(in.async);
  EXPECT_NEAR(in.stall_s, 2.1875e-3, 1e-12);
  // No host path: the save stays synchronous.
  s.host_bandwidth = 0;
  in = MakeInputs(s, plan, 1e9, 1.0, 0);
  EXPECT_FALSE(in.async);
  EXPECT_EQ(in.stall_s, in.write_s);
}

// A board held to a power cap draws the cap while busy, in the goodput's
// energy as in the estimate's (hardware::BusyPower): 128 devices x 500 W x
// PUE 1.2 = 76.8 kW; uncapped, 128 x 700 W x 1.2 = 107.52 kW.
TEST(Goodput, BusyPowerIsTheCapWhenOneIsSet) {
  hardware::SystemSpec s;
  s.devices_per_node = 8;
  s.nodes = 16;
  s.pue = 1.2;
  s.device.tdp = 700;
  const parallelism::TrainingPlan plan;
  EXPECT_NEAR(MakeInputs(s, plan, 1e9, 1.0, 0).busy_power_w, 107520, 1e-6);
  s.device.power_cap = 500;
  EXPECT_NEAR(MakeInputs(s, plan, 1e9, 1.0, 0).busy_power_w, 76800, 1e-6);
}

TEST(Goodput, EffectiveEnergyAndCarbon) {
  // 1000 devices of 700 W TDP at PUE 1.2: 840 kW busy; idle 30 % of TDP
  // (no idle_power given): 252 kW. Grid 0.4 kg/kWh.
  hardware::SystemSpec s;
  s.devices_per_node = 8;
  s.nodes = 125;
  s.pue = 1.2;
  s.device.tdp = 700;
  s.grid_co2_kg_per_kwh = 0.4;
  s.reliability.device_mtbf = 0;  // nothing fails: wall time = work
  const parallelism::TrainingPlan plan;
  Inputs in = MakeInputs(s, plan, 1e9, 1.0, 3600);
  EXPECT_DOUBLE_EQ(in.busy_power_w, 840e3);
  EXPECT_DOUBLE_EQ(in.idle_power_w, 252e3);
  Result r = Evaluate(in);
  // One hour at 840 kW = 840 kWh = 3.024e9 J; x 0.4 kg/kWh = 336 kg.
  EXPECT_NEAR(r.effective_energy_j, 3.024e9, 1);
  EXPECT_NEAR(r.carbon_kg, 336, 1e-6);

  // With failures: F failures of restart R and W / tau checkpoints of stall
  // delta idle, the rest busy. Hand numbers from the closed form: M = 10800
  // s, delta = 60 s, R = 300 s, work 100,000 s.
  in.mtbf_s = 10800;
  in.write_s = in.stall_s = 60;
  in.restart_s = 300;
  in.read_s = 0;
  in.work_s = 100000;
  r = Evaluate(in);
  const double idle = r.expected_failures * 300 + 100000 / r.interval_s * 60;
  EXPECT_NEAR(r.effective_energy_j, 840e3 * (r.effective_s - idle) + 252e3 * idle,
              1e-9 * r.effective_energy_j);
  // Idle time is a sizeable share here (about 11 failures x 300 s + 91 x 60 s
  // of ~111,000 s), so the energy is below busy power x wall time.
  EXPECT_LT(r.effective_energy_j, 840e3 * r.effective_s);
  EXPECT_GT(r.effective_energy_j, 840e3 * 100000);
}

TEST(Goodput, HandBuiltTraceSync) {
  // 300 s of work, a checkpoint (10 s) every 100 s, restart 50 s.
  //   [0, 110)    segment 1 + checkpoint: durable at 100 s of work
  //   110 ..150   failure at 150 loses 40 s; restart 150 -> 200 ...
  //   170         ... fails again; restart 170 -> 220
  //   [220, 330)  segment 2: durable at 200
  //   330 ..420   failure at 420 loses segment 3's 90 s; restart -> 470
  //   [470, 580)  segment 3: done at 580 s
  // Goodput 300 / 580 = 0.51724, three failures.
  Inputs in;
  in.write_s = in.stall_s = 10;
  in.restart_s = 50;
  int64_t hit = 0;
  const double t = ReplayRun(in, 300, 100, {150, 170, 420}, &hit);
  EXPECT_DOUBLE_EQ(t, 580);
  EXPECT_EQ(hit, 3);
  EXPECT_NEAR(300 / t, 0.51724, 1e-5);
  // No failure: three segments and three checkpoints.
  EXPECT_DOUBLE_EQ(ReplayRun(in, 300, 100, {}), 330);
}

TEST(Goodput, HandBuiltTraceAsync) {
  // Async: 2 s snapshot stall, durable 30 s after it; restart 50 s.
  //   [0, 102)    segment 1, snapshot of 100 s of work durable at 132
  //   120         failure before 132: back to 0; restart -> 170
  //   [170, 272)  segment 1, durable at 302
  //   [272, 374)  segment 2 (durable 100 from 302), snapshot durable at 404
  //   390         failure before 404: back to 100; restart -> 440
  //   [440, 542)  segment 2 again; [542, 644) segment 3: done at 644 s
  Inputs in;
  in.async = true;
  in.stall_s = 2;
  in.write_s = 30;
  in.restart_s = 50;
  int64_t hit = 0;
  EXPECT_DOUBLE_EQ(ReplayRun(in, 300, 100, {120, 390}, &hit), 644);
  EXPECT_EQ(hit, 2);
  // Only the first failure: 120 -> 170 restart, then 3 segments of 102 s = 476.
  EXPECT_DOUBLE_EQ(ReplayRun(in, 300, 100, {120}), 476);
}

TEST(Goodput, MonteCarloMeanConvergesToClosedForm) {
  // Sync: 100 segments of 1000 s with the segment time of SegmentTimeByHand,
  // 1145.135 s each: the expected run is 114,513.5 s (exact for exponential
  // failures, Daly 2006 Eq. 13). The standard error of 4000 runs is about
  // 0.04 %; the test allows 0.5 %.
  Inputs in;
  in.mtbf_s = 10800;
  in.write_s = in.stall_s = 60;
  in.restart_s = 300;
  in.work_s = 100000;
  Result r;
  r.in = in;
  r.interval_s = 1000;
  const MonteCarlo mc = Simulate(r, 4000, 17);
  EXPECT_NEAR(mc.mean_s / 114513.45, 1.0, 0.005);
  EXPECT_LE(mc.p50_s, mc.p90_s);
  EXPECT_LE(mc.min_s, mc.p50_s);
  EXPECT_LE(mc.p90_s, mc.max_s);
  // Failures over the run: about mean / M = 10.6.
  EXPECT_NEAR(mc.mean_failures, mc.mean_s / 10800, 0.3);
  // Deterministic by seed.
  const MonteCarlo again = Simulate(r, 4000, 17);
  EXPECT_EQ(again.mean_s, mc.mean_s);
  EXPECT_EQ(again.p90_s, mc.p90_s);
  EXPECT_NE(Simulate(r, 4000, 18).mean_s, mc.mean_s);
}

TEST(Goodput, MonteCarloRefusesARunThatCannotProgress) {
  // Restart of 600 s against an MTBF of 10 s: a restart succeeds with
  // probability e^-60, so the closed form's goodput is ~0 and drawing the
  // run would take ~e^60 failures; the Monte-Carlo says so instead.
  Inputs in;
  in.mtbf_s = 10;
  in.write_s = in.stall_s = 1;
  in.restart_s = 600;
  in.step_s = 1;
  in.work_s = 1000;
  const Result r = Evaluate(in);
  EXPECT_LT(r.goodput, 1e-20);
  const MonteCarlo mc = Simulate(r, 100, 1);
  EXPECT_EQ(mc.runs, 0);
  EXPECT_NE(mc.skipped.find("longer than the MTBF"), std::string::npos) << mc.skipped;
}

TEST(Goodput, MonteCarloAsyncNearFirstOrderForm) {
  // Async with M much larger than a segment: the first-order waste
  // (s / a + (R + a/2 + delta) / M) leaves out failures during restarts and
  // second-order terms of size (a/M)^2 ~ 1e-4, so the replay's mean agrees
  // with the closed form to well under 1 %.
  Inputs in;
  in.async = true;
  in.mtbf_s = 108000;
  in.stall_s = 2;
  in.write_s = 30;
  in.restart_s = 300;
  in.step_s = 1;
  in.work_s = 2e6;
  const Result r = Evaluate(in);
  ASSERT_GE(r.interval_s, in.write_s);
  const MonteCarlo mc = Simulate(r, 2000, 5);
  EXPECT_NEAR(mc.mean_s / r.effective_s, 1.0, 0.01);
}

// ---------------------------------------------------------------------------
// validation/goodput_runs.csv: published figures, each with its source.

std::vector<std::map<std::string, std::string>> ReadRuns() {
  const auto t = base::ReadCsvFile(std::string(ORRERY_TEST_SOURCE_DIR) + "/validation/goodput_runs.csv");
  EXPECT_TRUE(t.ok());
  std::vector<std::map<std::string, std::string>> rows;
  if (!t.ok()) return rows;
  for (const base::CsvRow& r : t->rows) {
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < t->header.size(); ++i) row[t->header[i]] = r.cells[i];
    rows.push_back(row);
  }
  return rows;
}

TEST(GoodputValidation, PublishedRuns) {
  const auto rows = ReadRuns();
  ASSERT_GE(rows.size(), 2u);
  for (const auto& row : rows) {
    SCOPED_TRACE(row.at("run") + " " + row.at("metric"));
    hardware::SystemSpec s;
    s.devices_per_node = std::stoll(row.at("devices_per_node"));
    const int64_t devices = std::stoll(row.at("devices"));
    s.nodes = devices / s.devices_per_node;
    s.storage.write_bandwidth = std::stod(row.at("store_bytes_per_s"));
    const double days = std::stod(row.at("days"));
    const double measured = std::stod(row.at("measured"));
    const std::string& metric = row.at("metric");
    if (metric == "interruptions") {
      // The default failure rates (Meta RSC-1, A100) against the count
      // another cluster (Llama 3, H100) reported: within the row's factor.
      const double predicted = JobFailureRate(s, devices) * days * kDay;
      const double factor = std::stod(row.at("tolerance"));
      EXPECT_LE(predicted / measured, factor) << "predicted " << predicted;
      EXPECT_GE(predicted / measured, 1 / factor) << "predicted " << predicted;
    } else if (metric == "effective_training_time_min") {
      // The run's own interruption rate as the input; the model's goodput
      // must reach the reported lower bound.
      const double interruptions = std::stod(row.at("interruptions"));
      s.reliability.device_mtbf = days * kDay * static_cast<double>(devices) / interruptions;
      const parallelism::TrainingPlan plan;
      const Inputs in = MakeInputs(s, plan, std::stod(row.at("parameters")), 10.0, 0);
      const Result r = Evaluate(in);
      EXPECT_GE(r.goodput, measured) << "goodput " << r.goodput;
    } else {
      ADD_FAILURE() << "unknown metric " << metric;
    }
  }
}

}  // namespace
}  // namespace orrery::goodput
