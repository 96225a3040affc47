// Tests of the calibration library: statistics, the JSON record round trip,
// parse errors that name the field, and a smoke run of the CPU probe.

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cpu_probe.h"
#include "probe_record.h"
#include "probe_record_json.h"
#include "sample_stats.h"

namespace orrery::calibration {
namespace {

TEST(SampleStats, PercentilesOfKnownSamples) {
  // Sorted 1..11: position q*10, so p10 = 2, median = 6, p90 = 10.
  const std::vector<double> s = {7, 3, 11, 1, 5, 9, 2, 4, 6, 8, 10};
  const SampleSummary sum = Summarize(s);
  EXPECT_EQ(sum.count, 11u);
  EXPECT_DOUBLE_EQ(sum.min, 1.0);
  EXPECT_DOUBLE_EQ(sum.p10, 2.0);
  EXPECT_DOUBLE_EQ(sum.median, 6.0);
  EXPECT_DOUBLE_EQ(sum.p90, 10.0);
  EXPECT_DOUBLE_EQ(sum.max, 11.0);
  EXPECT_DOUBLE_EQ(sum.mean, 6.0);
}

TEST(SampleStats, InterpolatesBetweenRanks) {
  // Four samples: median at position 1.5 -> (2+3)/2; p10 at 0.3 -> 1.3; p90 at 2.7 -> 3.7.
  const std::vector<double> s = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(Percentile(s, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Percentile(s, 0.1), 1.3);
  EXPECT_DOUBLE_EQ(Percentile(s, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(Percentile(s, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(Percentile(s, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(Percentile(s, -3.0), 1.0);  // clamped
  EXPECT_DOUBLE_EQ(Percentile(s, 7.0), 4.0);   // clamped
}

TEST(SampleStats, SingleAndEmpty) {
  const SampleSummary one = Summarize({0.25});
  EXPECT_DOUBLE_EQ(one.p10, 0.25);
  EXPECT_DOUBLE_EQ(one.median, 0.25);
  EXPECT_DOUBLE_EQ(one.p90, 0.25);
  const SampleSummary none = Summarize({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_TRUE(std::isnan(none.median));
}

TEST(ProbeRecord, MakeRecordTakesRateAtMedian) {
  const ProbeRecord r = MakeRecord("gemm", "fp32", {{"m", 2}, {"n", 3}, {"k", 4}}, {4.0, 1.0, 2.0},
                                   10, 48.0, 100.0, RateUnit::kFlopPerS);
  EXPECT_EQ(r.reps, 3);
  EXPECT_EQ(r.inner, 10);
  EXPECT_DOUBLE_EQ(r.median_s, 2.0);
  EXPECT_DOUBLE_EQ(r.rate, 24.0);
  EXPECT_EQ(r.rate_unit, "flop/s");
  EXPECT_EQ(r.Extent("n"), 3);
  EXPECT_EQ(r.Extent("bytes"), -1);
  const ProbeRecord b = MakeRecord("copy", "fp64", {{"bytes", 8}}, {2.0}, 1, 0.0, 16.0,
                                   RateUnit::kBytesPerS);
  EXPECT_DOUBLE_EQ(b.rate, 8.0);
  EXPECT_EQ(b.rate_unit, "bytes/s");
}

ProbeRecord SampleRecord() {
  ProbeRecord r = MakeRecord("gemm", "bf16", {{"m", 16}, {"n", 4096}, {"k", 4096}},
                             {1.25e-5, 1.3e-5, 1.2e-5, 1.0 / 3.0e5}, 7, 2.0 * 16 * 4096 * 4096,
                             2.0 * (16 * 4096 + 4096 * 4096 + 16 * 4096), RateUnit::kFlopPerS);
  r.note = "heuristic algo 0, \"quoted\"\tand\\slashed";
  return r;
}

TEST(ProbeRecordJson, RoundTripIsExact) {
  ProbeHeader h;
  h.probe = "cuda";
  h.mode = "quick";
  h.host = "node-1";
  h.device = "NVIDIA H200";
  h.compiler = "nvcc 13.0";
  h.date_utc = "2026-11-20T10:00:00Z";
  h.command_line = "orrery_cuda_probe --quick";
  h.threads = 1;
  h.extra = {{"driver", "580.159.04"}, {"sm_count", "132"}};
  const ProbeRecord gemm = SampleRecord();
  const ProbeRecord copy = MakeRecord("d2d_copy", "u8", {{"bytes", 1 << 20}}, {1e-6, 2e-6}, 100,
                                      0.0, 2.0 * (1 << 20), RateUnit::kBytesPerS);
  const std::string text = ProbeToJson(h, {gemm, copy});
  const ProbeFileResult parsed = ParseProbeJson(text);
  ASSERT_TRUE(parsed.ok) << parsed.error;
  const ProbeHeader& h2 = parsed.file.header;
  EXPECT_EQ(h2.schema, kProbeSchema);
  EXPECT_EQ(h2.probe, h.probe);
  EXPECT_EQ(h2.mode, h.mode);
  EXPECT_EQ(h2.host, h.host);
  EXPECT_EQ(h2.device, h.device);
  EXPECT_EQ(h2.compiler, h.compiler);
  EXPECT_EQ(h2.date_utc, h.date_utc);
  EXPECT_EQ(h2.command_line, h.command_line);
  EXPECT_EQ(h2.threads, 1);
  EXPECT_EQ(h2.extra, h.extra);
  ASSERT_EQ(parsed.file.records.size(), 2u);
  const ProbeRecord& g = parsed.file.records[0];
  EXPECT_EQ(g.kind, gemm.kind);
  EXPECT_EQ(g.dtype, gemm.dtype);
  EXPECT_EQ(g.shape, gemm.shape);  // order kept: m, n, k
  EXPECT_EQ(g.reps, gemm.reps);
  EXPECT_EQ(g.inner, gemm.inner);
  // Bit-exact: the writer prints the shortest form that reads back the same.
  EXPECT_EQ(g.median_s, gemm.median_s);
  EXPECT_EQ(g.p10_s, gemm.p10_s);
  EXPECT_EQ(g.p90_s, gemm.p90_s);
  EXPECT_EQ(g.min_s, gemm.min_s);
  EXPECT_EQ(g.max_s, gemm.max_s);
  EXPECT_EQ(g.flop, gemm.flop);
  EXPECT_EQ(g.bytes, gemm.bytes);
  EXPECT_EQ(g.rate, gemm.rate);
  EXPECT_EQ(g.rate_unit, gemm.rate_unit);
  EXPECT_EQ(g.note, gemm.note);
  EXPECT_EQ(parsed.file.records[1].Extent("bytes"), 1 << 20);
  EXPECT_EQ(parsed.file.records[1].rate_unit, "bytes/s");
}

TEST(ProbeRecordJson, NonFiniteBecomesNullAndReadsAsNan) {
  ProbeRecord r = SampleRecord();
  r.p90_s = std::nan("");
  const std::string text = ProbeToJson(ProbeHeader{.probe = "cpu", .mode = "quick"}, {r});
  EXPECT_NE(text.find("\"p90_s\": null"), std::string::npos);
  // The output is plain JSON any reader accepts.
  EXPECT_TRUE(nlohmann::json::accept(text));
  const ProbeFileResult parsed = ParseProbeJson(text);
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_TRUE(std::isnan(parsed.file.records[0].p90_s));
}

TEST(ProbeRecordJson, ErrorsNameTheField) {
  // Syntax errors give the line and column where the parser stopped.
  EXPECT_EQ(ParseProbeJson("{not json").error.rfind("1:3: not valid JSON (syntax error", 0), 0u)
      << ParseProbeJson("{not json").error;
  EXPECT_EQ(ParseProbeJson("{\n  \"schema\": 1,\n  x}").error.rfind("3:3: not valid JSON (", 0), 0u)
      << ParseProbeJson("{\n  \"schema\": 1,\n  x}").error;
  EXPECT_EQ(ParseProbeJson(R"({"schema": "other.v9", "header": {}, "records": []})").error,
            "schema: expected \"orrery.calibration.v1\", got \"other.v9\"");
  EXPECT_EQ(ParseProbeJson(R"({"schema": "orrery.calibration.v1", "header": {"probe": "cpu"},
                                "records": []})")
                .error,
            "header.mode: missing");
  const std::string bad_median = R"({"schema": "orrery.calibration.v1",
      "header": {"probe": "cpu", "mode": "quick"},
      "records": [{"kind": "gemm", "dtype": "fp32", "shape": {"m": 1, "n": 2, "k": 3},
                   "reps": 3, "median_s": "fast", "p10_s": 1, "p90_s": 1, "min_s": 1,
                   "max_s": 1, "flop": 12, "bytes": 0, "rate": 12, "rate_unit": "flop/s"}]})";
  EXPECT_EQ(ParseProbeJson(bad_median).error, "records[0].median_s: expected a number, got \"fast\"");
  const std::string bad_unit = R"({"schema": "orrery.calibration.v1",
      "header": {"probe": "cpu", "mode": "quick"},
      "records": [{"kind": "gemm", "dtype": "fp32", "shape": {"m": 1.5},
                   "reps": 3}]})";
  EXPECT_EQ(ParseProbeJson(bad_unit).error, "records[0].shape.m: expected an integer, got 1.5");
  EXPECT_FALSE(ReadProbeJsonFile("/nonexistent/probe.json").ok);
}

CpuProbeOptions TinyOptions() {
  CpuProbeOptions o;
  o.mode = "custom";
  o.threads = 1;
  o.warmups = 1;
  o.reps = 3;
  o.min_sample_s = 1e-4;
  o.gemm_mnk = {{8, 16, 32}, {1, 64, 48}};
  o.stream_bytes = {4096};
  o.elementwise_bytes = {4096};
  o.softmax_rows_cols = {{4, 32}};
  return o;
}

TEST(CpuProbe, TinyRunHasSaneInvariants) {
  const CpuProbeOptions o = TinyOptions();
  ASSERT_EQ(ValidateCpuProbeOptions(o), "");
  int observed = 0;
  const auto records = RunCpuProbe(o, [&](const ProbeRecord&) { ++observed; });
  // 2 GEMMs x 2 dtypes + 3 STREAM kernels + GELU + softmax.
  ASSERT_EQ(records.size(), 9u);
  EXPECT_EQ(observed, 9);
  for (const ProbeRecord& r : records) {
    SCOPED_TRACE(r.kind + " " + r.dtype);
    EXPECT_EQ(r.reps, 3);
    EXPECT_GE(r.inner, 1);
    EXPECT_GT(r.median_s, 0.0);
    EXPECT_LE(r.min_s, r.p10_s);
    EXPECT_LE(r.p10_s, r.median_s);
    EXPECT_LE(r.median_s, r.p90_s);
    EXPECT_LE(r.p90_s, r.max_s);
    EXPECT_GT(r.rate, 0.0);
    EXPECT_GT(r.bytes, 0.0);
    if (r.kind == "gemm") {
      const double m = static_cast<double>(r.Extent("m"));
      const double n = static_cast<double>(r.Extent("n"));
      const double k = static_cast<double>(r.Extent("k"));
      EXPECT_EQ(r.flop, 2.0 * m * n * k);
      EXPECT_EQ(r.rate_unit, "flop/s");
      EXPECT_DOUBLE_EQ(r.rate, r.flop / r.median_s);
    } else {
      EXPECT_EQ(r.rate_unit, "bytes/s");
      EXPECT_DOUBLE_EQ(r.rate, r.bytes / r.median_s);
    }
  }
  EXPECT_EQ(records[0].dtype, "fp32");
  EXPECT_EQ(records[2].dtype, "fp64");
  EXPECT_EQ(records[4].kind, "copy");
  EXPECT_EQ(records[4].bytes, 2.0 * 4096);
  EXPECT_EQ(records[6].kind, "triad");
  EXPECT_EQ(records[6].bytes, 3.0 * 4096);
  // The whole output parses back with the same number of records.
  const ProbeFileResult parsed = ParseProbeJson(ProbeToJson(CpuProbeHeader(o, "test"), records));
  ASSERT_TRUE(parsed.ok) << parsed.error;
  EXPECT_EQ(parsed.file.records.size(), records.size());
  EXPECT_EQ(parsed.file.header.probe, "cpu");
  EXPECT_EQ(parsed.file.header.threads, 1);
}

TEST(CpuProbe, ValidationNamesTheField) {
  CpuProbeOptions o = TinyOptions();
  o.reps = 0;
  EXPECT_EQ(ValidateCpuProbeOptions(o), "reps: must be >= 1, got 0");
  o = TinyOptions();
  o.gemm_mnk = {{0, 4, 4}};
  EXPECT_EQ(ValidateCpuProbeOptions(o), "gemm_mnk: every extent must be in [1, 65536], got 0x4x4");
  o = TinyOptions();
  o.gemm_dtypes = {"bf16"};
  EXPECT_EQ(ValidateCpuProbeOptions(o), "gemm_dtypes: expected \"fp32\" or \"fp64\", got \"bf16\"");
  EXPECT_EQ(ValidateCpuProbeOptions(QuickCpuProbeOptions()), "");
  EXPECT_EQ(ValidateCpuProbeOptions(FullCpuProbeOptions()), "");
}

TEST(TimeRepeated, CountsInnerCallsAndSamples) {
  int calls = 0;
  std::int64_t inner = 0;
  const auto samples = TimeRepeated([&] { ++calls; }, 2, 4, 0.0, &inner);
  EXPECT_EQ(inner, 1);  // min_sample_s = 0: one call per sample
  EXPECT_EQ(samples.size(), 4u);
  EXPECT_EQ(calls, 2 + 1 + 4);  // warm-ups, the sizing call, the samples
}

// Every checked-in measurement file parses and keeps the invariants above.
TEST(Measurements, CheckedInFilesParse) {
  namespace fs = std::filesystem;
  const fs::path dir = ORRERY_CALIBRATION_MEASUREMENTS_DIR;
  if (!fs::exists(dir)) GTEST_SKIP() << "no measurements directory";
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    SCOPED_TRACE(entry.path().string());
    const ProbeFileResult parsed = ReadProbeJsonFile(entry.path().string());
    ASSERT_TRUE(parsed.ok) << parsed.error;
    EXPECT_FALSE(parsed.file.records.empty());
    for (const ProbeRecord& r : parsed.file.records) {
      EXPECT_GT(r.median_s, 0.0);
      EXPECT_GT(r.rate, 0.0);
      if (r.kind == "gemm") {
        EXPECT_EQ(r.flop, 2.0 * static_cast<double>(r.Extent("m")) *
                              static_cast<double>(r.Extent("n")) *
                              static_cast<double>(r.Extent("k")));
      }
    }
  }
  if (files == 0) GTEST_SKIP() << "no measurement files yet";
}

}  // namespace
}  // namespace orrery::calibration
