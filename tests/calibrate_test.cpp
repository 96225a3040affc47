// `orrery calibrate` end to end on in-memory streams: importing the checked-in
// H200 and host-CPU records into profiles that `orrery check` accepts, the
// calibration database, using a calibrated profile in a scenario exactly like
// a preset, the CPU layer check's plumbing, and the error text of bad input.
// Nothing here asserts a speed (timings on a shared machine are not
// reproducible); `orrery calibrate check-layer` reports those figures.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "cli/cli_common.h"
#include "core/estimate/scenario.h"

namespace orrery::cli {
namespace {

namespace fs = std::filesystem;

const std::string kSource = ORRERY_TEST_SOURCE_DIR;
const std::string kH200 = kSource + "/hardware/calibration/measurements/h200/";

struct Result {
  int code = 0;
  std::string out, err;
};

Result Calibrate(const Args& args) {
  std::ostringstream out, err;
  Result r;
  r.code = RunCalibrate(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

Result RunVerb(int (*verb)(const Args&, std::ostream&, std::ostream&), const Args& args) {
  std::ostringstream out, err;
  Result r;
  r.code = verb(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

class CalibrateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("orrery_calibrate_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(CalibrateTest, ImportH200WritesACheckedProfileAndStoresRecords) {
  const Result r = Calibrate({"import", kH200 + "cuda_full_run1.json", "--base", "h200", "--out",
                              Path("h200-measured.yaml"), "--db", Path("calib.db"), "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["device"], "NVIDIA H200 SXM 141GB");
  EXPECT_EQ(j["gemm_dtype"], "bf16");
  EXPECT_EQ(j["db_run_id"], 1);
  // 73 bf16 GEMMs in run 1 (calibration_import_test.cpp checks the curve itself).
  EXPECT_EQ(j["gemm_records"], 73);
  // `orrery check` accepts it.
  const Result check = RunVerb(RunCheck, {Path("h200-measured.yaml")});
  EXPECT_EQ(check.code, 0) << check.err;
  EXPECT_NE(check.out.find("ok (device)"), std::string::npos);
  // The comments say where the numbers come from.
  const std::string text = ReadFile(Path("h200-measured.yaml"));
  EXPECT_NE(text.find("# Device profile calibrated by `orrery calibrate`"), std::string::npos);
  EXPECT_NE(text.find("cuda_full_run1.json"), std::string::npos);
  // Importing the same run again keeps one copy and says so.
  const Result again = Calibrate({"import", kH200 + "cuda_full_run1.json", "--base", "h200", "--out",
                                  Path("again.yaml"), "--db", Path("calib.db")});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.err.find("already in"), std::string::npos);
  ASSERT_EQ(Calibrate({"import", kH200 + "cuda_full_run2.json", "--base", "h200", "--out",
                       Path("run2.yaml"), "--db", Path("calib.db")})
                .code,
            0);
  const Result runs = Calibrate({"runs", "--db", Path("calib.db"), "--format", "json"});
  ASSERT_EQ(runs.code, 0) << runs.err;
  const auto rj = nlohmann::json::parse(runs.out);
  ASSERT_EQ(rj.size(), 2u);
  EXPECT_EQ(rj[0]["records"], 334);  // every record of run 1, not only the GEMMs
  const Result cmp = Calibrate({"compare", "--db", Path("calib.db"), "1", "2", "--kind", "d2d_copy", "--format", "csv"});
  ASSERT_EQ(cmp.code, 0) << cmp.err;
  // Header + 23 copy sizes (1 KiB .. 4 GiB).
  EXPECT_EQ(std::count(cmp.out.begin(), cmp.out.end(), '\n'), 24);
}

TEST_F(CalibrateTest, ImportCpuRecordsNeedsNoBase) {
  // This file predates the probe's memory_total_bytes: the size must be given.
  const Result missing = Calibrate({"import", kH200 + "cpu_quick_host.json", "--out", Path("cpu.yaml")});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("the probe header does not record the memory size"), std::string::npos) << missing.err;
  const Result r = Calibrate(
      {"import", kH200 + "cpu_quick_host.json", "--memory-capacity", "64 GiB", "--out", Path("cpu.yaml")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(RunVerb(RunCheck, {Path("cpu.yaml")}).code, 0);
  const std::string text = ReadFile(Path("cpu.yaml"));
  EXPECT_NE(text.find("peak_bf16: the same figure as a STAND-IN"), std::string::npos);
  EXPECT_NE(text.find("peak_fp32: 678.4 GFLOP/s"), std::string::npos) << text;
}

// A calibrated profile is used exactly like a preset: the same scenario with
// the h200 preset and with the profile imported from the H200 records.
TEST_F(CalibrateTest, EstimatesChangeWithTheCalibratedProfile) {
  ASSERT_EQ(Calibrate({"import", kH200 + "cuda_full_run1.json", "--base", "h200", "--out", Path("measured.yaml")}).code, 0);
  // The profile's `device:` body, indented under the scenario's system.
  std::string body;
  {
    std::istringstream in(ReadFile(Path("measured.yaml")));
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
      if (line == "device:") {
        inside = true;
        continue;
      }
      if (inside) body += "    " + line + "\n";
    }
  }
  auto scenario = [&](const std::string& device_yaml) {
    return "scenario:\n  name: gpt-1.7b-one-h200\n  model: gpt-1.7b\n  system:\n    name: one device\n"
           "    devices_per_node: 1\n    nodes: 1\n    network:\n      - {name: local, bandwidth: 100 GB/s}\n" +
           device_yaml +
           "  training: {tp: 1, pp: 1, micro_batch: 1, recompute: none, attention: flash}\n"
           "  workload: {global_batch: 8, seq_len: 2048}\n";
  };
  std::ofstream(Path("preset.yaml")) << scenario("    device: h200\n");
  std::ofstream(Path("calibrated.yaml")) << scenario("    device:\n" + body);
  const Result a = RunVerb(RunEstimate, {Path("preset.yaml"), "--format", "json"});
  const Result b = RunVerb(RunEstimate, {Path("calibrated.yaml"), "--format", "json"});
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  const double ta = nlohmann::json::parse(a.out)["iteration_s"].get<double>();
  const double tb = nlohmann::json::parse(b.out)["iteration_s"].get<double>();
  EXPECT_GT(ta, 0);
  EXPECT_GT(tb, 0);
  EXPECT_NE(ta, tb);
}

// Plumbing only: a tiny layer, one sample, a tolerance nothing can fail.
TEST_F(CalibrateTest, CheckLayerReportsEveryPass) {
  ASSERT_EQ(Calibrate({"import", kH200 + "cpu_quick_host.json", "--memory-capacity", "64 GiB", "--out",
                       Path("cpu.yaml")})
                .code,
            0);
  const Result r = Calibrate({"check-layer", "--profile", Path("cpu.yaml"), "--shape", "1,16,32,2", "--reps", "1",
                              "--max-error", "1e12", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["rows"][0]["shape"], "b1 s16 h32 a2");
  EXPECT_EQ(j["rows"][0]["pass"], "forward");
  EXPECT_EQ(j["rows"][1]["pass"], "backward");
  EXPECT_EQ(j["rows"][2]["pass"], "step");
  EXPECT_GT(j["rows"][0]["predicted_s"].get<double>(), 0);
  EXPECT_GT(j["rows"][0]["measured_s"].get<double>(), 0);
  EXPECT_EQ(j["passed"], true);
}

TEST_F(CalibrateTest, CudaWithoutProbeOrGpuIsAClearError) {
  const Result r = Calibrate({"run", "--device", "cuda:0", "--base", "h200", "--out", Path("x.yaml"), "--probe",
                              Path("no-such-probe")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("error: the CUDA probe was not built"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("x.yaml")));
}

TEST_F(CalibrateTest, UsageAndInputErrors) {
  Result r = Calibrate({"imprt"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "error: unknown calibrate subcommand 'imprt'; did you mean 'import'? (see orrery calibrate --help)\n");
  r = Calibrate({"run", "--device", "gpu", "--out", Path("x.yaml")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "error: --device: unknown device 'gpu' (expected cpu or cuda:N); did you mean 'cpu'?\n");
  r = Calibrate({"import", kH200 + "cuda_quick.json", "--out", Path("x.yaml")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: --base is required for cuda records: a GPU probe measures efficiencies, not datasheet peaks "
            "(e.g. --base h200)\n");
  r = Calibrate({"import", kH200 + "cuda_quick.json", "--base", "h2000", "--out", Path("x.yaml")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--base: unknown device preset (got 'h2000'); did you mean 'h200'?"), std::string::npos) << r.err;
  r = Calibrate({"import", kH200 + "cuda_quick.json", "--base", "h200", "--statistic", "mean", "--out", Path("x.yaml")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "error: --statistic: unknown statistic 'mean' (one of: median, min)\n");
  // A bad record names the file and the field.
  std::ofstream(Path("bad.json")) << R"({"schema": "orrery.calibration.v1", "header": {"probe": "cpu", "mode": "quick"},
    "records": [{"kind": "copy", "dtype": "fp64", "shape": {"bytes": 8}, "reps": 1, "median_s": "fast",
    "p10_s": 1, "p90_s": 1, "min_s": 1, "max_s": 1, "flop": 0, "bytes": 16, "rate": 16, "rate_unit": "bytes/s"}]})";
  r = Calibrate({"import", Path("bad.json"), "--out", Path("x.yaml")});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: " + Path("bad.json") + ": records[0].median_s: expected a number, got \"fast\"\n");
  // Malformed JSON: file, line and column.
  std::ofstream(Path("broken.json")) << "{\n  \"schema\": \"orrery.calibration.v1\",\n  \"header\": {,}\n}\n";
  r = Calibrate({"import", Path("broken.json"), "--out", Path("x.yaml")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(Path("broken.json") + ":3:14: not valid JSON"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("x.yaml")));
  r = Calibrate({"check-layer", "--shape", "1,16,30,4"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "error: --shape: '1,16,30,4': heads: must be >= 1 and divide hidden (30), got 4\n");
  EXPECT_EQ(Calibrate({"run", "--help"}).code, 0);
  EXPECT_EQ(Calibrate({}).code, 2);
}

}  // namespace
}  // namespace orrery::cli
