// Tests of the importer (profile_fit.h), the profile writer (profile_yaml.h)
// and the calibration database (calibration_db.h). The fit is checked three
// ways: on records built from the device model itself (it must give back the
// efficiencies that made them), against hand-derived numbers, and against the
// GH100 presets' curves, which were derived by hand from the checked-in H200
// measurements (configs/devices/h200.yaml comments).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include "calibration_db.h"
#include "core/base/yaml_source.h"
#include "hardware/device_model.h"
#include "profile_fit.h"
#include "profile_yaml.h"

namespace orrery::calibration {
namespace {

namespace fs = std::filesystem;

const std::string kH200Dir = std::string(ORRERY_CALIBRATION_MEASUREMENTS_DIR) + "/h200/";

ProbeRecord Record(const std::string& kind, const std::string& dtype,
                   std::vector<std::pair<std::string, std::int64_t>> shape, double t, double flop,
                   double bytes) {
  ProbeRecord r;
  r.kind = kind;
  r.dtype = dtype;
  r.shape = std::move(shape);
  r.reps = 1;
  r.median_s = r.min_s = r.p10_s = r.p90_s = r.max_s = t;
  r.flop = flop;
  r.bytes = bytes;
  r.rate_unit = kind == "gemm" ? "flop/s" : "bytes/s";
  r.rate = (kind == "gemm" ? flop : bytes) / t;
  return r;
}

ProbeRecord Gemm(std::int64_t m, std::int64_t n, std::int64_t k, double t, const std::string& dtype = "bf16") {
  const double flop = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double bytes = 2.0 * static_cast<double>(m * k + k * n + m * n);
  return Record("gemm", dtype, {{"m", m}, {"n", n}, {"k", k}}, t, flop, bytes);
}

// Loads a device profile the way the scenario loader does (ParseDevice then
// CheckDevice) and fails the test on any diagnostic.
hardware::DeviceSpec LoadDevice(const std::string& file) {
  base::Diagnostics diags;
  hardware::DeviceSpec d;
  const auto root = base::LoadYamlFile(file, diags);
  if (root) {
    // Preset naming keys are the preset store's (core/estimate), not the device parser's.
    hardware::ParseDevice((*root)["device"], "device", file, d, diags, {"aliases", "reference_system"});
    hardware::CheckDevice(d, "device", base::LocationOf((*root)["device"], file), diags);
  }
  EXPECT_TRUE(diags.ok()) << diags.ToString();
  return d;
}

hardware::DeviceSpec ParseDeviceText(const std::string& text, base::Diagnostics& diags) {
  hardware::DeviceSpec d;
  const YAML::Node root = YAML::Load(text);
  hardware::ParseDevice(root["device"], "device", "profile.yaml", d, diags);
  hardware::CheckDevice(d, "device", base::LocationOf(root["device"], "profile.yaml"), diags);
  return d;
}

TEST(BinMedians, DecadeBinsTakeMedianAndGeometricMeanSize) {
  // One bin per decade: 1e9, 2e9, 4e9 share [1e9, 1e10); 1e10 starts the next.
  const auto c = BinMedians({{1e9, 0.2}, {4e9, 0.6}, {2e9, 0.4}, {1e10, 0.9}}, BinSpec{1, {}});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_NEAR(c[0].size, 2e9, 1);  // (1e9 * 2e9 * 4e9)^(1/3) = 2e9
  EXPECT_DOUBLE_EQ(c[0].efficiency, 0.4);
  EXPECT_EQ(c[0].records, 3);
  EXPECT_DOUBLE_EQ(c[1].size, 1e10);
  EXPECT_DOUBLE_EQ(c[1].efficiency, 0.9);
}

TEST(BinMedians, FixedCentresTakeTheNearestInLogSize) {
  // 3e9 is nearer 1e10 than 1e9 in log size (log 3.33 < log 3); empty bins vanish.
  BinSpec b;
  b.centres = {1e9, 1e10, 1e12};
  const auto c = BinMedians({{1.1e9, 0.3}, {3.2e9, 0.5}, {2e10, 0.7}}, b);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_DOUBLE_EQ(c[0].size, 1e9);
  EXPECT_DOUBLE_EQ(c[0].efficiency, 0.3);
  EXPECT_DOUBLE_EQ(c[1].size, 1e10);
  EXPECT_DOUBLE_EQ(c[1].efficiency, 0.6);  // median of 0.5 and 0.7
}

TEST(KernelOverhead, SubtractsTransferAtTheBestRate) {
  // copy: t = 5 us + bytes / 1 TB/s at 1 MB and 1 GB moved, no cache.
  // Best rate = 1e9 / 1.005e-3 s; overhead = 6 us - 1e6 / that = 6 - 1.005 = 4.995 us.
  const std::vector<ProbeRecord> r = {
      Record("copy", "fp32", {{"bytes", 500000}}, 6e-6, 0, 1e6),
      Record("copy", "fp32", {{"bytes", 500000000}}, 1.005e-3, 0, 1e9)};
  const auto o = MeasureKernelOverhead(r, {"copy"}, 0, TimeStatistic::kMedian);
  ASSERT_TRUE(o);
  EXPECT_NEAR(*o, 4.995e-6, 1e-12);
  EXPECT_FALSE(MeasureKernelOverhead(r, {"triad"}, 0, TimeStatistic::kMedian));
  // Only sizes whose transfer is under half their time count: the 1 GB copy
  // is left out, and a kind with no such size is ignored, not read as 0.
  std::vector<ProbeRecord> quick = r;
  quick.push_back(Record("triad", "fp32", {{"bytes", 200000000}}, 1.2e-3, 0, 6e8));
  const auto o2 = MeasureKernelOverhead(quick, {"copy", "triad"}, 0, TimeStatistic::kMedian);
  ASSERT_TRUE(o2);
  EXPECT_NEAR(*o2, 4.995e-6, 1e-12);
}

// The CUDA probe's quick grid has no small copy/scale/triad sizes; the
// overhead then comes from the small device-to-device copies alone.
TEST(H200Measurements, QuickRunOverheadFromSmallCopies) {
  const ProbeFileResult quick = ReadProbeJsonFile(kH200Dir + "cuda_quick.json");
  ASSERT_TRUE(quick.ok) << quick.error;
  const auto o = MeasureKernelOverhead(quick.file.records, FitOptions{}.memory_kinds, 62914560,
                                       TimeStatistic::kMedian);
  ASSERT_TRUE(o);
  // d2d copies of 1 KiB .. 4 MiB take 5.07-6.46 us, all but a few ns of it overhead.
  EXPECT_GT(*o, 5.0e-6);
  EXPECT_LT(*o, 5.6e-6);
}

// Records generated by the device model itself must give back the model.
TEST(FitDeviceProfile, RecoversTheModelThatMadeTheRecords) {
  hardware::DeviceSpec truth;
  truth.name = "synthetic";
  truth.peak_bf16 = 100e12;
  truth.memory_bandwidth = 1e12;
  truth.memory_capacity = 80e9;
  truth.kernel_overhead = 5e-6;
  truth.gemm_efficiency = {{1e9, 1e12}, {0.3, 0.8}};
  truth.memory_efficiency = {{1e9}, {0.9}};  // one point: flat 0.9
  // Ridge = 100 FLOP/byte. Compute-bound GEMMs at 1 GFLOP .. 1 TFLOP.
  std::vector<ProbeRecord> records;
  const std::int64_t cube[] = {1000, 2154, 4642, 10000};  // 2 s^3 ~ 2e9, 2e10, 2e11, 2e12
  for (const std::int64_t s : cube) {
    const double flop = 2.0 * static_cast<double>(s * s * s);
    records.push_back(Gemm(s, s, s, flop / (100e12 * truth.gemm_efficiency.At(flop)) + 5e-6));
  }
  // A memory-bound GEMM (m = 1: 1 FLOP per byte) that must be left out.
  records.push_back(Gemm(1, 8192, 8192, 1e-3));
  // Copies well beyond the 1 MB cache: t = bytes / (0.9 x 1 TB/s) + 5 us.
  for (const double bytes : {1e8, 1e9, 1e10}) {
    records.push_back(Record("copy", "u8", {{"bytes", static_cast<std::int64_t>(bytes / 2)}},
                             bytes / 0.9e12 + 5e-6, 0, bytes));
  }
  truth.l2_cache = 1e6;
  ProbeFile probe;
  probe.records = records;
  FitOptions o;
  o.kernel_overhead_s = 5e-6;
  o.gemm_bins.per_decade = 1;
  const FitResult fit = FitDeviceProfile(probe, truth, o);
  ASSERT_TRUE(fit.ok) << fit.error;
  EXPECT_EQ(fit.gemm_dtype, "bf16");
  EXPECT_DOUBLE_EQ(fit.ridge, 100.0);
  EXPECT_EQ(fit.gemm_records, 5);
  EXPECT_EQ(fit.gemm_memory_bound, 1);
  ASSERT_EQ(fit.gemm_curve.size(), 4u);
  for (const CurvePoint& p : fit.gemm_curve) {
    EXPECT_NEAR(p.efficiency, truth.gemm_efficiency.At(p.size), 1e-9) << p.size;
  }
  ASSERT_EQ(fit.memory_used, 3);
  for (const CurvePoint& p : fit.memory_curve) EXPECT_NEAR(p.efficiency, 0.9, 1e-9);
  // The fitted device predicts the records it came from.
  for (const ProbeRecord& r : records) {
    if (r.kind != "gemm" || r.Extent("m") == 1) continue;
    EXPECT_NEAR(hardware::GemmTime(fit.device, hardware::DataType::kBf16, r.flop, r.bytes), r.median_s,
                1e-9 * r.median_s);
  }
}

TEST(FitDeviceProfile, ErrorsNameTheProblem) {
  hardware::DeviceSpec base;
  base.peak_bf16 = 1e12;
  base.memory_bandwidth = 1e11;
  ProbeFile probe;
  probe.records = {Gemm(512, 512, 512, 1e-3)};
  FitOptions o;
  o.gemm_dtype = "fp64";
  EXPECT_EQ(FitDeviceProfile(probe, base, o).error,
            "gemm dtype 'fp64' has no peak in a device profile (expected bf16, fp16, tf32, fp8_e4m3 or fp32)");
  o = FitOptions{};
  o.gemm_dtype = "fp8_e4m3";
  EXPECT_EQ(FitDeviceProfile(probe, base, o).error,
            "the device has no peak for fp8_e4m3 (set it in the base profile, or choose another --gemm-dtype)");
  o = FitOptions{};
  o.gemm_bins.per_decade = 0;
  EXPECT_EQ(FitDeviceProfile(probe, base, o).error, "gemm bins: bins per decade must be in [1, 20], got 0");
  o = FitOptions{};
  o.memory_bins.centres = {2e9, 1e9};
  EXPECT_EQ(FitDeviceProfile(probe, base, o).error, "memory bins: bin centres must increase");
  o = FitOptions{};
  o.measure_peaks = true;
  EXPECT_EQ(FitDeviceProfile(probe, base, o).error,
            "the probe has no fp32 GEMM records to measure peak_fp32 from");
}

// The GH100 presets' curves were derived by hand from cuda_full_run1.json:
// median of FLOP / ((t - 4 us) x 989.4 TFLOP/s) over bf16 GEMMs that are not
// memory-bound, in bins around 4, 10, 25, 90, 200 and 1000 GFLOP. The
// importer, given the same bins and overhead, must reproduce them to the two
// digits they were written with.
TEST(H200Measurements, ReproduceTheHandDerivedGemmCurve) {
  const ProbeFileResult run1 = ReadProbeJsonFile(kH200Dir + "cuda_full_run1.json");
  ASSERT_TRUE(run1.ok) << run1.error;
  const hardware::DeviceSpec h200 = LoadDevice(std::string(ORRERY_TEST_CONFIG_DIR) + "/devices/h200.yaml");
  ASSERT_EQ(h200.gemm_efficiency.x.size(), 6u);
  FitOptions o;
  o.gemm_bins.centres = h200.gemm_efficiency.x;
  o.kernel_overhead_s = 4e-6;
  const FitResult fit = FitDeviceProfile(run1.file, h200, o);
  ASSERT_TRUE(fit.ok) << fit.error;
  EXPECT_EQ(fit.gemm_dtype, "bf16");
  EXPECT_NEAR(fit.ridge, 989.4 / 4.8, 1e-9);
  ASSERT_EQ(fit.gemm_curve.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    EXPECT_DOUBLE_EQ(fit.gemm_curve[i].size, h200.gemm_efficiency.x[i]);
    // Hand values were rounded to 2 digits (one, 4 GFLOP, from a single shape:
    // 1024^3 at 0.402 written as 0.39).
    EXPECT_NEAR(fit.gemm_curve[i].efficiency, h200.gemm_efficiency.y[i], 0.015);
  }
  // With the overhead measured rather than given: 4.13 us (copy 4.06, scale
  // 4.21, triad 3.91, d2d_copy 5.33 us beyond the transfer at 4.28 TB/s).
  FitOptions measured = o;
  measured.kernel_overhead_s.reset();
  const FitResult fit2 = FitDeviceProfile(run1.file, h200, measured);
  ASSERT_TRUE(fit2.ok) << fit2.error;
  EXPECT_TRUE(fit2.overhead_measured);
  EXPECT_NEAR(fit2.kernel_overhead_s, 4.13e-6, 0.01e-6);
  ASSERT_EQ(fit2.gemm_curve.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(fit2.gemm_curve[i].efficiency, h200.gemm_efficiency.y[i], 0.025);
}

// The FP8 curve (gemm_efficiency_fp8) was derived the same way over the
// fp8_e4m3 GEMMs of run 1 against 1978.9 TFLOP/s (ridge 412 FLOP/byte).
TEST(H200Measurements, ReproduceTheHandDerivedFp8Curve) {
  const ProbeFileResult run1 = ReadProbeJsonFile(kH200Dir + "cuda_full_run1.json");
  ASSERT_TRUE(run1.ok) << run1.error;
  const hardware::DeviceSpec h200 = LoadDevice(std::string(ORRERY_TEST_CONFIG_DIR) + "/devices/h200.yaml");
  ASSERT_EQ(h200.gemm_efficiency_fp8.x.size(), 6u);
  FitOptions o;
  o.gemm_bins.centres = h200.gemm_efficiency_fp8.x;
  o.kernel_overhead_s = 4e-6;
  const FitResult fit = FitDeviceProfile(run1.file, h200, o);
  ASSERT_TRUE(fit.ok) << fit.error;
  EXPECT_NEAR(fit.fp8_ridge, 1978.9 / 4.8, 1e-9);
  ASSERT_EQ(fit.gemm_fp8_curve.size(), 6u);
  for (size_t i = 0; i < 6; ++i)
    EXPECT_NEAR(fit.gemm_fp8_curve[i].efficiency, h200.gemm_efficiency_fp8.y[i], 0.006) << i;
}

// Memory: the preset says element-wise kernels and copies reach 81-89 % of
// 4.8 TB/s from 64 MiB up. The importer's curve (copies and STREAM kernels
// beyond twice the 60 MiB L2) must sit in that band.
TEST(H200Measurements, MemoryEfficiencyBeyondL2) {
  const ProbeFileResult run1 = ReadProbeJsonFile(kH200Dir + "cuda_full_run1.json");
  ASSERT_TRUE(run1.ok) << run1.error;
  const hardware::DeviceSpec h200 = LoadDevice(std::string(ORRERY_TEST_CONFIG_DIR) + "/devices/h200.yaml");
  const FitResult fit = FitDeviceProfile(run1.file, h200, FitOptions{});
  ASSERT_TRUE(fit.ok) << fit.error;
  EXPECT_DOUBLE_EQ(fit.cache_bytes, 62914560.0);
  EXPECT_NEAR(fit.best_memory_rate, 4.278e12, 0.001e12);  // d2d 4 GiB: 8 GiB / 2.008 ms
  ASSERT_FALSE(fit.memory_curve.empty());
  for (const CurvePoint& p : fit.memory_curve) {
    EXPECT_GE(p.size, 2 * 62914560.0);
    EXPECT_GE(p.efficiency, 0.81);
    EXPECT_LE(p.efficiency, 0.93);
  }
}

TEST(H200Measurements, HostCpuProfileMeasuresPeaks) {
  const ProbeFileResult cpu = ReadProbeJsonFile(kH200Dir + "cpu_quick_host.json");
  ASSERT_TRUE(cpu.ok) << cpu.error;
  FitOptions o;
  o.measure_peaks = true;
  const FitResult fit = FitDeviceProfile(cpu.file, CpuBaseDevice(cpu.file.header), o);
  ASSERT_TRUE(fit.ok) << fit.error;
  // Best fp32 GEMM: 128 x 1024 x 1024 in 395.8 us = 678 GFLOP/s (README: 0.56-0.68 TFLOP/s).
  EXPECT_NEAR(fit.device.peak_fp32, 6.784e11, 0.001e11);
  EXPECT_DOUBLE_EQ(fit.device.peak_bf16, fit.device.peak_fp32);
  // No cache size recorded in this older file: only the 64 MiB arrays count;
  // the best is copy at 210 GB/s (README: "STREAM copy 210 GB/s at 64 MiB").
  EXPECT_NEAR(fit.device.memory_bandwidth, 2.102e11, 0.001e11);
  EXPECT_EQ(fit.gemm_dtype, "fp32");
  // Overhead: median of copy 6.03, scale 4.83, triad 4.58 us beyond transfer.
  EXPECT_NEAR(fit.kernel_overhead_s, 4.83e-6, 0.01e-6);
  EXPECT_EQ(fit.device.name, "Intel(R) Xeon(R) Processor (16 threads)");
}

TEST(ProfileYaml, RoundTripsThroughTheDeviceParser) {
  const ProbeFileResult run1 = ReadProbeJsonFile(kH200Dir + "cuda_full_run1.json");
  ASSERT_TRUE(run1.ok) << run1.error;
  const hardware::DeviceSpec h200 = LoadDevice(std::string(ORRERY_TEST_CONFIG_DIR) + "/devices/h200.yaml");
  const FitOptions o;
  const FitResult fit = FitDeviceProfile(run1.file, h200, o);
  ASSERT_TRUE(fit.ok) << fit.error;
  const std::string text =
      DeviceProfileYaml(fit.device, DescribeFit(fit, run1.file, "cuda_full_run1.json", "h200 preset", o));
  base::Diagnostics diags;
  const hardware::DeviceSpec back = ParseDeviceText(text, diags);
  ASSERT_TRUE(diags.ok()) << diags.ToString() << "\n" << text;
  EXPECT_EQ(back.name, h200.name);
  EXPECT_NEAR(back.peak_bf16, h200.peak_bf16, 1e-3 * h200.peak_bf16);
  EXPECT_NEAR(back.kernel_overhead, fit.kernel_overhead_s, 1e-3 * fit.kernel_overhead_s);
  ASSERT_EQ(back.gemm_efficiency.x.size(), fit.gemm_curve.size());
  for (size_t i = 0; i < fit.gemm_curve.size(); ++i) {
    EXPECT_NEAR(back.gemm_efficiency.x[i], fit.gemm_curve[i].size, 1e-3 * fit.gemm_curve[i].size);
    EXPECT_NEAR(back.gemm_efficiency.y[i], fit.gemm_curve[i].efficiency, 0.005);
  }
  EXPECT_EQ(back.memory_efficiency.x.size(), fit.memory_curve.size());
  EXPECT_EQ(back.gemm_efficiency_fp8.x.size(), fit.gemm_fp8_curve.size());
  EXPECT_FALSE(fit.gemm_fp8_curve.empty());
  // Every comment line is a YAML comment, and quotes in names survive.
  hardware::DeviceSpec odd = fit.device;
  odd.name = "CPU \"x\": #1 \\ test";
  base::Diagnostics d2;
  EXPECT_EQ(ParseDeviceText(DeviceProfileYaml(odd, {"a: b", "two\nlines"}), d2).name, odd.name);
  EXPECT_TRUE(d2.ok()) << d2.ToString();
}

TEST(CalibrationDb, StoresListsAndComparesRuns) {
  const fs::path db = fs::temp_directory_path() / ("orrery_calib_test_" + std::to_string(::getpid()) + ".db");
  fs::remove(db);
  const ProbeFileResult run1 = ReadProbeJsonFile(kH200Dir + "cuda_full_run1.json");
  const ProbeFileResult run2 = ReadProbeJsonFile(kH200Dir + "cuda_full_run2.json");
  ASSERT_TRUE(run1.ok && run2.ok);
  const StoreResult a = StoreProbeRun(db.string(), run1.file, "cuda_full_run1.json");
  ASSERT_TRUE(a.ok) << a.error;
  EXPECT_FALSE(a.already_stored);
  const StoreResult b = StoreProbeRun(db.string(), run2.file, "cuda_full_run2.json");
  ASSERT_TRUE(b.ok) << b.error;
  const StoreResult again = StoreProbeRun(db.string(), run1.file, "copy.json");
  ASSERT_TRUE(again.ok) << again.error;
  EXPECT_TRUE(again.already_stored);
  EXPECT_EQ(again.run_id, a.run_id);

  std::string error;
  const auto runs = ListProbeRuns(db.string(), &error);
  ASSERT_EQ(runs.size(), 2u) << error;
  EXPECT_EQ(runs[0].records, static_cast<std::int64_t>(run1.file.records.size()));
  EXPECT_EQ(runs[1].records, static_cast<std::int64_t>(run2.file.records.size()));
  EXPECT_EQ(runs[0].device, "NVIDIA H200");
  EXPECT_EQ(runs[0].source, "cuda_full_run1.json");

  // Every distinct (kind, dtype, shape) of run 1 that run 2 also has, once.
  std::set<std::tuple<std::string, std::string, std::string>> keys1, keys2;
  for (const auto& r : run1.file.records) keys1.insert({r.kind, r.dtype, ShapeText(r)});
  for (const auto& r : run2.file.records) keys2.insert({r.kind, r.dtype, ShapeText(r)});
  size_t common = 0;
  for (const auto& k : keys1) common += keys2.count(k);
  const auto cmp = CompareProbeRuns(db.string(), a.run_id, b.run_id, &error);
  ASSERT_EQ(cmp.size(), common) << error;
  // First bf16 GEMM of the grid, m=1 n=4096 k=4096: the rates of each file.
  const auto first_gemm = std::find_if(cmp.begin(), cmp.end(), [](const RecordComparison& c) {
    return c.kind == "gemm" && c.dtype == "bf16" && c.shape == "m=1,n=4096,k=4096";
  });
  ASSERT_NE(first_gemm, cmp.end());
  for (const auto& r : run1.file.records) {
    if (r.kind == "gemm" && r.dtype == "bf16" && ShapeText(r) == "m=1,n=4096,k=4096") {
      EXPECT_DOUBLE_EQ(first_gemm->rate_a, r.rate);
      break;
    }
  }
  EXPECT_TRUE(CompareProbeRuns(db.string(), a.run_id, 99, &error).empty());
  EXPECT_EQ(error, "no run 99 in '" + db.string() + "' (see orrery calibrate runs)");
  error.clear();
  EXPECT_TRUE(ListProbeRuns((db.string() + ".missing"), &error).empty());
  EXPECT_NE(error.find("cannot open database"), std::string::npos) << error;
  fs::remove(db);
}

}  // namespace
}  // namespace orrery::calibration

namespace orrery::calibration {
namespace {

// Issues 15 and 16: the attention length factors parse as [tokens, factor]
// pairs up to 2 (a factor above 1 is a length past the one the constant was
// read at); a factor out of range is an error naming the file, line and
// column, the key path, the rule and the value. Line 6, column 45 is the
// 2.5: two spaces, the 33-character key, ": [[512, " (columns 36-44).
TEST(ProfileYaml, AttentionLengthFactorsParseWithLocatedErrors) {
  base::Diagnostics diags;
  const hardware::DeviceSpec d = ParseDeviceText(
      "device:\n  peak_bf16: 100 TFLOP/s\n  memory_capacity: 80 GB\n  memory_bandwidth: 1 TB/s\n"
      "  flash2_attention_length_factor: [[512, 0.6], [4096, 1.05]]\n"
      "  flash_attention_bwd_length_factor: [[512, 2.5]]\n",
      diags);
  EXPECT_NE(diags.ToString().find("profile.yaml:6:45: error: device.flash_attention_bwd_length_factor[0][1]: "
                                  "factor must be a number in (0, 2] (got '2.5')"),
            std::string::npos)
      << diags.ToString();
  ASSERT_EQ(d.flash2_attention_length_factor.x.size(), 2u);
  EXPECT_DOUBLE_EQ(d.flash2_attention_length_factor.At(4096), 1.05);
  EXPECT_DOUBLE_EQ(d.flash2_attention_length_factor.At(100), 0.6);  // clamped below 512
  EXPECT_TRUE(d.flash_attention_bwd_length_factor.empty());
}

// The MXFP8 GEMM curve parses as the other GEMM curves do ([FLOP,
// efficiency] pairs, efficiency in (0, 1]); an efficiency out of range is an
// error naming the file, line and column, the key path, the rule and the
// value. Line 5, column 53 is the 1.2: two spaces, the 21-character key,
// ": [[1 GFLOP, 0.3], [1 TFLOP, " (columns 24-52). A valid curve survives a
// write and re-read of the profile (a calibrated profile carries its base's
// MXFP8 curve: the probes time no MXFP8 GEMM).
TEST(ProfileYaml, Mxfp8GemmCurveParsesWithLocatedErrors) {
  base::Diagnostics bad;
  const hardware::DeviceSpec d = ParseDeviceText(
      "device:\n  peak_bf16: 100 TFLOP/s\n  memory_capacity: 80 GB\n  memory_bandwidth: 1 TB/s\n"
      "  gemm_efficiency_mxfp8: [[1 GFLOP, 0.3], [1 TFLOP, 1.2]]\n",
      bad);
  EXPECT_NE(bad.ToString().find("profile.yaml:5:53: error: device.gemm_efficiency_mxfp8[1][1]: "
                                "efficiency must be a number in (0, 1] (got '1.2')"),
            std::string::npos)
      << bad.ToString();
  base::Diagnostics good;
  const hardware::DeviceSpec ok = ParseDeviceText(
      "device:\n  peak_bf16: 100 TFLOP/s\n  memory_capacity: 80 GB\n  memory_bandwidth: 1 TB/s\n"
      "  gemm_efficiency_mxfp8: [[1 GFLOP, 0.3], [1 TFLOP, 0.6]]\n",
      good);
  ASSERT_TRUE(good.ok()) << good.ToString();
  ASSERT_EQ(ok.gemm_efficiency_mxfp8.x.size(), 2u);
  EXPECT_DOUBLE_EQ(ok.gemm_efficiency_mxfp8.At(1e12), 0.6);
  EXPECT_TRUE(ok.gemm_efficiency_fp8.empty());
  const std::string text = DeviceProfileYaml(ok, {});
  EXPECT_NE(text.find("gemm_efficiency_mxfp8: "), std::string::npos) << text;
  base::Diagnostics again;
  const hardware::DeviceSpec back = ParseDeviceText(text, again);
  ASSERT_TRUE(again.ok()) << again.ToString() << "\n" << text;
  EXPECT_NEAR(back.gemm_efficiency_mxfp8.At(1e12), 0.6, 1e-9);
  EXPECT_NEAR(back.gemm_efficiency_mxfp8.At(1e9), 0.3, 1e-9);
}

}  // namespace
}  // namespace orrery::calibration
