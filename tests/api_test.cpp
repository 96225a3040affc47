// The public API of network, plan, fit, validate and calibrate
// (core/api/): one request in, one result out, a status that means one
// thing, progress and cancel for long calls, JSON with its schema version.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/api/calibrate.h"
#include "core/api/estimate.h"
#include "core/api/fit.h"
#include "core/api/infer.h"
#include "core/api/json.h"
#include "core/api/network.h"
#include "core/api/plan.h"
#include "core/api/report.h"
#include "core/api/search.h"
#include "core/api/text.h"
#include "core/api/validate.h"
#include "core/base/format.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;
const std::string kSource = ORRERY_TEST_SOURCE_DIR;

class Api : public ::testing::Test {
 protected:
  void SetUp() override { setenv("ORRERY_CONFIG_DIR", ORRERY_TEST_CONFIG_DIR, 1); }
};

// An all-reduce of 64 MiB over the 8 GPUs of one DGX H100: NCCL's
// definitions (nccl-tests doc/PERFORMANCE.md) make algbw = S / t and
// busbw = algbw x 2(n-1)/n = algbw x 1.75 for n = 8.
TEST_F(Api, NetworkCollectiveFollowsNcclDefinitions) {
  NetworkRequest req;
  req.system = "dgx-h100-superpod";
  req.collective = "all-reduce";
  req.bytes = 64.0 * 1024 * 1024;
  req.size = 8;
  const NetworkResult r = Network(req);
  ASSERT_TRUE(r.ok()) << r.reason;
  const auto& c = r.report.collective;
  EXPECT_EQ(c.members, 8);
  EXPECT_NEAR(c.algbw, req.bytes / c.time_s, 1e-9 * c.algbw);
  EXPECT_NEAR(c.busbw, 1.75 * c.algbw, 1e-9 * c.busbw);
  EXPECT_EQ(r.report.devices, r.report.nodes * r.report.devices_per_node);
  EXPECT_EQ(ToJson(r)["schema_version"], kSchemaVersion);
}

TEST_F(Api, NetworkStatusesMeanOneThingEach) {
  NetworkRequest req;
  req.system = "dgx-h100-superpod";
  req.collective = "all-reduse";
  req.bytes = 1e9;
  req.size = 8;
  NetworkResult r = Network(req);
  EXPECT_EQ(r.status, Status::kUsage);
  EXPECT_NE(r.reason.find("did you mean 'all-reduce'?"), std::string::npos) << r.reason;
  req.collective = "all-reduce";
  req.size = 1 << 20;  // more members than devices
  r = Network(req);
  EXPECT_EQ(r.status, Status::kInvalidInput);
  EXPECT_NE(r.reason.find("the system has"), std::string::npos) << r.reason;
  req.system = "dgx-h100-superpot";
  r = Network(req);
  EXPECT_EQ(r.status, Status::kInvalidInput);
  EXPECT_FALSE(r.diagnostics.ok());
}

// configs/studies/rail-only.yaml: 8 cases on 2 fabrics each. Progress counts
// them; raising the cancel flag after the third stops with three rows.
TEST_F(Api, NetworkStudyReportsProgressAndCancels) {
  NetworkStudyRequest req;
  req.file = kSource + "/configs/studies/rail-only.yaml";
  std::vector<uint64_t> seen;
  Control control;
  control.progress = [&](uint64_t done, uint64_t total, std::string_view) {
    seen.push_back(done);
    EXPECT_EQ(total, 16u);
  };
  const NetworkStudyResult all = NetworkStudy(req, control);
  ASSERT_TRUE(all.ok()) << all.reason;
  EXPECT_EQ(all.study.rows.size(), 16u);
  EXPECT_EQ(seen.size(), 16u);
  std::atomic<bool> cancel{false};
  control.cancel = &cancel;
  control.progress = [&](uint64_t done, uint64_t, std::string_view) {
    if (done == 3) cancel = true;
  };
  const NetworkStudyResult part = NetworkStudy(req, control);
  EXPECT_EQ(part.status, Status::kCancelled);
  EXPECT_EQ(part.study.rows.size(), 3u);
}

// GPT-family shapes on Selene: no pipeline depth divides 66 layers over the
// GPU count, so the answer is infeasible (3) with its reason, and the chain
// up to the model is still there.
TEST_F(Api, PlanWithoutFeasiblePlanIsInfeasible) {
  PlanRequest req;
  req.law = "chinchilla";
  req.family = "gpt";
  req.system = "selene";
  req.chain.goal = engine::PlanGoal::kBudget;
  req.chain.budget_flops = 1e24;
  const PlanResult r = Plan(req);
  EXPECT_EQ(r.status, Status::kInfeasible);
  EXPECT_NE(r.reason.find("pp does not divide the layers"), std::string::npos) << r.reason;
  // C = 6 N D (Hoffmann et al. 2022): the allocation multiplies back to the budget.
  EXPECT_NEAR(6 * r.plan.point.params_n * r.plan.point.tokens_d, 1e24, 1e24 * 1e-9);
  EXPECT_EQ(ToJson(r)["feasible"], false);
}

// Chinchilla's own law (Hoffmann et al. 2022 Eq. 10 as printed) at 5.76e23
// FLOP: the closed form and the numeric optimum agree, and 6 N D = C.
TEST_F(Api, FitPresetAnswersTheComputeOptimalSplit) {
  FitRequest req;
  req.preset = "chinchilla";
  req.budget_flops = 5.76e23;
  const FitResult r = Fit(req);
  ASSERT_TRUE(r.ok()) << r.reason;
  ASSERT_TRUE(r.answer && r.answer->optimum);
  const auto& o = *r.answer->optimum;
  EXPECT_NEAR(6 * o.params_n * o.tokens_d, 5.76e23, 5.76e23 * 1e-9);
  EXPECT_NEAR(r.answer->numeric_params_n / o.params_n, 1, 1e-3);
  FitRequest bad;
  bad.points = "runs.csv";
  bad.law = "kaplam";
  const FitResult b = Fit(bad);
  EXPECT_EQ(b.status, Status::kUsage);
  EXPECT_NE(b.reason.find("did you mean 'kaplan'?"), std::string::npos);
}

// A tolerance of 0 % MAPE cannot hold over the measured runs: the report is
// there and the status says the tolerance failed (1).
TEST_F(Api, ValidateToleranceFailureKeepsTheReport) {
  ValidateRequest req;
  req.files = {kSource + "/validation/training_runs.csv"};
  req.max_mape_pct = 0;
  std::vector<uint64_t> seen;
  Control control;
  control.progress = [&](uint64_t done, uint64_t, std::string_view) { seen.push_back(done); };
  const ValidateResult r = Validate(req, control);
  EXPECT_EQ(r.status, Status::kInvalidInput);
  EXPECT_GT(r.report.evaluated, 0);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("exceeds --max-mape 0 %"), std::string::npos);
  EXPECT_EQ(seen.back(), 1u);
  int rows = 0;
  for (const auto& [name, g] : r.by_source) rows += static_cast<int>(g.rows.size());
  EXPECT_EQ(rows, static_cast<int>(r.report.rows.size()));
}

// One row by line (`orrery validate --row`): its kept scenario estimates to
// the row's own prediction, an override changes it, and a row that was not
// predicted (or not asked for by line) says so instead of estimating.
// Line 2: Korthikanti et al. 2022 Table 5, Megatron-22B, full recompute,
// 1.42 s measured.
TEST_F(Api, ValidationRowEstimatesItsOwnScenario) {
  ValidateRequest req;
  req.files = {kSource + "/validation/training_runs.csv"};
  req.line = 2;
  const ValidateResult r = Validate(req);
  ASSERT_TRUE(r.ok()) << r.reason;
  ASSERT_EQ(r.report.rows.size(), 1u);
  const engine::ValidationRow& row = r.report.rows.front();
  EXPECT_DOUBLE_EQ(row.measured, 1.42);
  const ValidationRowEstimate same = EstimateValidationRow(row);
  ASSERT_TRUE(same.ok()) << same.reason;
  EXPECT_EQ(same.predicted, row.predicted);
  EXPECT_EQ(same.error_pct, *row.error_pct);
  // Two microbatches of 2 instead of one of 4: another time.
  const ValidationRowEstimate halves = EstimateValidationRow(row, {"training.micro_batch=2"});
  ASSERT_TRUE(halves.ok()) << halves.reason;
  EXPECT_EQ(halves.estimate.scenario.training.micro_batch, 2);
  EXPECT_NE(halves.predicted, row.predicted);
  EXPECT_DOUBLE_EQ(halves.error_pct, (halves.predicted - 1.42) / 1.42 * 100);

  engine::ValidationRow whole = row;
  whole.scenario.reset();  // as every row of a whole-file run
  const ValidationRowEstimate none = EstimateValidationRow(whole);
  EXPECT_EQ(none.status, Status::kInvalidInput);
  EXPECT_NE(none.reason.find("ask for it by line"), std::string::npos) << none.reason;
}

// --engine event over a file: each row's plan again on the event engine.
// Narayanan et al. 2021 Table 2's ZeRO-3 row at dp 384 (line 20 of the
// file) is where the two engines part most (the event engine exposes more of
// ZeRO-3's data-parallel traffic: 137 against 151 TFLOP/s); Nemotron-4 340B
// at pp 8 (line 47) needs 91.9 GB of an 80 GB H100, which the closed form
// flags and the event engine does not run: skipped with the reason.
TEST_F(Api, ValidateOnTheEventEngineRepricesEachRowsPlan) {
  const std::string csv = (fs::path(testing::TempDir()) / "orrery_event_rows.csv").string();
  {
    std::ifstream in(kSource + "/validation/training_runs.csv");
    std::ofstream out(csv);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (n == 1 || n == 20 || n == 47) out << line << "\n";
  }
  ValidateRequest req;
  req.files = {csv};
  const ValidateResult closed = Validate(req);
  req.engine = EstimateEngine::kEvent;
  const ValidateResult event = Validate(req);
  ASSERT_TRUE(closed.ok() && event.ok()) << closed.reason << event.reason;
  EXPECT_EQ(ToJson(event)["engine"], "event");
  EXPECT_EQ(ToJson(closed)["engine"], "closed");
  ASSERT_EQ(event.report.rows.size(), 2u);
  const engine::ValidationRow& zero3 = event.report.rows[0];
  ASSERT_TRUE(zero3.error_pct.has_value()) << zero3.skipped;
  ValidateRequest one;
  one.files = {csv};
  one.line = 2;
  const ValidateResult row = Validate(one);
  ASSERT_TRUE(row.ok()) << row.reason;
  const ValidationRowEstimate replay = EstimateValidationRow(row.report.rows.front(), {}, false, EstimateEngine::kEvent);
  EXPECT_EQ(zero3.predicted, replay.predicted);
  EXPECT_EQ(closed.report.rows[0].predicted, row.report.rows.front().predicted);
  EXPECT_LT(zero3.predicted, 0.95 * closed.report.rows[0].predicted);  // 137.2 against 150.8 TFLOP/s
  const engine::ValidationRow& big = event.report.rows[1];
  EXPECT_FALSE(big.error_pct.has_value());
  EXPECT_NE(big.skipped.find("the event engine does not run this plan: needs 91.93 GB"), std::string::npos)
      << big.skipped;
  EXPECT_TRUE(closed.report.rows[1].error_pct.has_value());
  EXPECT_TRUE(closed.report.rows[1].predicted_oom);
  EXPECT_EQ(event.report.evaluated, 1);
  fs::remove(csv);
}

TEST_F(Api, CalibrateImportNeedsABaseForGpuRecords) {
  CalibrateImportRequest req;
  req.probe_file = kSource + "/hardware/calibration/measurements/h200/cuda_full_run1.json";
  const CalibrateProfileResult r = CalibrateImport(req);
  EXPECT_EQ(r.status, Status::kUsage);
  EXPECT_NE(r.reason.find("--base is required"), std::string::npos) << r.reason;
  CalibrationRunsRequest runs{"no-such-folder/calib.db"};
  EXPECT_EQ(CalibrationRuns(runs).status, Status::kInvalidInput);
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// Issue 16: --model-config replaces the scenario's model with a Hugging Face
// config.json before the overrides; a missing file is a located error.
// Only the closed-form estimate and the search model device pools; a face
// that does not refuses a pooled system at the file rather than costing the
// system's own devices only (issue 17, docs/heterogeneous.md).
TEST_F(Api, FacesWithoutPoolsRefuseAPooledSystem) {
  const std::string file = kSource + "/configs/scenarios/llama3-70b-a100-h100-hetero.yaml";
  ReportRequest rq;
  rq.scenario = file;
  const ReportResult report = Report(rq);
  EXPECT_EQ(report.status, Status::kInvalidInput);
  EXPECT_NE(report.diagnostics.ToString().find("orrery report does not model device pools"), std::string::npos)
      << report.diagnostics.ToString();
  InferRequest iq;
  iq.scenario = ScenarioInput::File(file, {"inference.tp=8"});
  const InferResult infer = Infer(iq);
  EXPECT_EQ(infer.status, Status::kInvalidInput);
  EXPECT_NE(infer.diagnostics.ToString().find("system.pools"), std::string::npos) << infer.diagnostics.ToString();
}

// Offloaded optimizer states leave the device's total but stay in the
// output: the JSON's host_optimizer_bytes holds exactly the optimizer bytes
// the same plan keeps on the device without offload, and the text lists
// them under "in host memory".
TEST_F(Api, OffloadedOptimizerStatesAreShownInHostMemory) {
  EstimateRequest kept;
  kept.scenario = ScenarioInput::File("llama3-70b-h100", {});
  EstimateRequest off;
  off.scenario = ScenarioInput::File("llama3-70b-h100", {"training.offload_optimizer=true"});
  const EstimateResult a = Estimate(kept);
  const EstimateResult b = Estimate(off);
  ASSERT_EQ(a.status, Status::kOk) << a.diagnostics.ToString();
  ASSERT_EQ(b.status, Status::kOk) << b.diagnostics.ToString();
  const Json ja = ToJson(a);
  const Json jb = ToJson(b);
  const double on_device = ja["memory_per_device"]["optimizer_bytes"].get<double>();
  ASSERT_GT(on_device, 0);
  EXPECT_EQ(ja["memory_per_device"]["host_optimizer_bytes"].get<double>(), 0.0);
  EXPECT_EQ(jb["memory_per_device"]["optimizer_bytes"].get<double>(), 0.0);
  EXPECT_EQ(jb["memory_per_device"]["host_optimizer_bytes"].get<double>(), on_device);
  std::ostringstream ta, tb;
  text::PrintEstimateTable(a, ta);
  text::PrintEstimateTable(b, tb);
  EXPECT_EQ(ta.str().find("in host memory"), std::string::npos) << ta.str();
  EXPECT_NE(tb.str().find("in host memory, per device (not in the total above)\n  optimizer states"),
            std::string::npos)
      << tb.str();
}

// The search's summary tells memory apart from the pipeline's rules, and a
// plan line says the schedule it runs. Llama 3 70B on 128 H100: under
// 1F1B the search also tries interleaved 1F1B, whose microbatches must be a
// multiple of pp. Those plans were once counted "out of memory", then
// evaluated and refused one by one; the rule reads only the microbatch
// count, pp and the interleave, so the search now sets their blocks aside
// whole before any estimate (pruned_schedule), and no evaluated plan here
// breaks a rule: every evaluated plan is exactly one of fit, out of memory
// or refused. Under ZB-H1 in 32 GB the best plan pipelines (pp 2), and its
// line says zb-h1 where it had read like a 1F1B plan.
TEST_F(Api, SearchSaysWhyPlansWereRefusedAndWhichScheduleRuns) {
  SearchRequest req;
  req.scenario = ScenarioInput::File("llama3-70b-h100", {"system.nodes=16"});
  req.top = 1;
  req.threads = 1;
  req.offload = false;
  req.all_group_orders = false;
  const SearchResult r = Search(req);
  ASSERT_TRUE(r.ok()) << r.reason;
  const engine::SearchStats& st = r.stats;
  EXPECT_GT(st.pruned_schedule, 0u);
  EXPECT_EQ(st.refused, 0u);
  EXPECT_EQ(st.evaluated, st.feasible + st.out_of_memory + st.refused);
  std::ostringstream table;
  text::PrintSearchTable(r, "", table);
  EXPECT_NE(table.str().find(", microbatches the schedule cannot run " + base::FormatGrouped(st.pruned_schedule) +
                             ", "),
            std::string::npos)
      << table.str();
  EXPECT_EQ(table.str().find("break a pipeline rule"), std::string::npos) << table.str();
  EXPECT_EQ(ToJson(r)["stats"]["pruned_schedule"].get<uint64_t>(), st.pruned_schedule);
  EXPECT_EQ(ToJson(r)["stats"]["refused"].get<uint64_t>(), 0u);

  req.scenario = ScenarioInput::File(
      "llama3-70b-h100", {"system.nodes=16", "training.schedule=zb-h1", "system.device.memory_capacity=32GB"});
  const SearchResult zb = Search(req);
  ASSERT_TRUE(zb.ok()) << zb.reason;
  ASSERT_EQ(zb.top.size(), 1u);
  ASSERT_GT(zb.top[0].candidate.knobs.pp, 1);
  std::ostringstream zt;
  text::PrintSearchTable(zb, "", zt);
  EXPECT_NE(zt.str().find(" schedule=zb-h1\n"), std::string::npos) << zt.str();
  EXPECT_EQ(ToJson(zb)["top"][0]["plan"]["schedule"], "zb-h1");
  // The 1F1B scenario's two best plans, 0.1 % apart: one without a pipeline
  // (tp 4, cp 2), whose line names no schedule, and one on interleaved 1F1B
  // (pp 2, interleave 4), which says so, in whichever order they rank; the
  // same plan without its pipeline would have no schedule to say.
  req.scenario = ScenarioInput::File("llama3-70b-h100", {"system.nodes=16"});
  req.top = 2;
  const SearchResult two = Search(req);
  std::ostringstream tt;
  text::PrintSearchTable(two, "", tt);
  const std::string both = tt.str();
  ASSERT_EQ(two.top.size(), 2u) << both;
  const size_t flat_i = two.top[0].candidate.knobs.pp == 1 ? 0 : 1, pipe_i = 1 - flat_i;
  ASSERT_EQ(two.top[flat_i].candidate.knobs.pp, 1) << both;
  ASSERT_GT(two.top[pipe_i].candidate.knobs.pp, 1) << both;
  ASSERT_GT(two.top[pipe_i].candidate.knobs.interleave, 1) << both;
  const size_t second = both.find("\n#2 ");
  ASSERT_NE(second, std::string::npos) << both;
  const std::string lines[2] = {both.substr(0, second), both.substr(second)};
  EXPECT_EQ(lines[flat_i].find(" schedule="), std::string::npos) << both;
  EXPECT_NE(lines[pipe_i].find(" schedule=interleaved\n"), std::string::npos) << both;
  SearchResult flat = two;
  flat.top.erase(flat.top.begin() + static_cast<std::ptrdiff_t>(flat_i));
  flat.top[0].candidate.knobs.pp = 1;
  std::ostringstream ft;
  text::PrintSearchTable(flat, "", ft);
  EXPECT_EQ(ft.str().find(" schedule="), std::string::npos) << ft.str();
}

TEST(ApiModelConfig, ReplacesTheScenariosModel) {
  setenv("ORRERY_CONFIG_DIR", ORRERY_TEST_CONFIG_DIR, 1);
  ScenarioInput in = ScenarioInput::File("llama3-70b-h100", {"model.top_k=4"});
  in.model_config = kSource + "/tests/data/hf/deepseek-v3.config.json";
  base::Diagnostics d;
  const auto s = ResolveScenario(in, d);
  ASSERT_TRUE(s.has_value()) << d.ToString();
  EXPECT_EQ(s->model.experts, 256);
  EXPECT_EQ(s->model.kv_lora_rank, 512);
  EXPECT_EQ(s->model.top_k, 4);  // the override applies after the config
  in.model_config = "nowhere/config.json";
  base::Diagnostics bad;
  EXPECT_FALSE(ResolveScenario(in, bad).has_value());
  EXPECT_EQ(bad.items().back().ToString(),
            "--model-config: error: model: model config file not found (got 'nowhere/config.json')");
}

}  // namespace
}  // namespace orrery
