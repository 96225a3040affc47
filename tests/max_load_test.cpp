// Issue 18: max-load runs with the limits trtllm-bench picks itself.

#include <gtest/gtest.h>

#include "core/estimate/max_load.h"
#include "core/estimate/scenario.h"
#include "hardware/device_model.h"
#include "tests/support/presets.h"

namespace orrery::engine {
namespace {

const std::string kConfigs = ORRERY_TEST_CONFIG_DIR;

using test::Model;
using test::Device;

parallelism::InferenceDeployment Fp8(int64_t tp) {
  parallelism::InferenceDeployment dep;
  dep.tp = tp;
  dep.weights = dep.activations = dep.kv_cache = hardware::DataType::kFp8;
  return dep;
}

// Worked by hand from tensorrt_llm/bench/build/tuning.py's rule.
// Llama 3.1 8B FP8 on one H200 (141 GB), ISL 128, OSL 128:
//   KV per token 2 x 32 layers x 8 heads x 128 x 1 B = 65,536 B = 6.1035e-5 GiB
//   engine 8,030,261,248 params x 1 B = 7.4788 GiB; device 141e9 B = 131.3158 GiB
//   KV memory (131.3158 - 7.4788) x 0.95 = 117.645 GiB
//   requests that fit 117.645 / (256 x 6.1035e-5) = 7529.3
//   raw_bs = min(7529.3, 4096) = 4096 -> 256 x ceil(4096 / 256) = 4096
//   raw_tok = 4096 x (1 + 128/128) = 8192 -> 1024 x ceil(8192 / 1024) = 8192
TEST(MaxLoad, TrtllmBenchLimitsForASmallModel) {
  const EngineLimits lim = BenchmarkLimits(LimitRule::kTrtllmBench, Model("llama3.1-8b"),
                                           Device("h200"), Fp8(1), 128, 128);
  EXPECT_NEAR(lim.requests_fit, 7529.3, 0.5);
  EXPECT_EQ(lim.max_batch, 4096);
  EXPECT_EQ(lim.max_num_tokens, 8192);
}

// Llama 3.1 70B FP8 on two H100 (80 GB), ISL 1000, OSL 2000:
//   KV per token 2 x 80 x max(tp 2, 8 heads) x 128 x 1 B = 1.52588e-4 GiB
//   engine 70,553,706,496 params = 65.7081 GiB; devices 2 x 80e9 B = 149.0116 GiB
//   KV memory (149.0116 - 65.7081) x 0.95 = 79.138 GiB
//   requests 79.138 / (3000 x 1.52588e-4) = 172.88
//   raw_bs 172.88 < 256 -> max(64, 32 x ceil(172.88 / 32)) = 192
//   raw_tok 172.88 x 1.5 = 259.3 < 4096 -> max(2048, 256 x 2) = 2048
TEST(MaxLoad, TrtllmBenchLimitsForALargeModel) {
  const EngineLimits lim = BenchmarkLimits(LimitRule::kTrtllmBench, Model("llama3.1-70b"),
                                           Device("h100-sxm"), Fp8(2), 1000, 2000);
  EXPECT_NEAR(lim.requests_fit, 172.88, 0.05);
  EXPECT_EQ(lim.max_batch, 192);
  EXPECT_EQ(lim.max_num_tokens, 2048);
}

TEST(MaxLoad, NoRoomForOneRequestIsAReason) {
  // 70.55 GB of FP8 weights on one 80 GB H100 leave 8.3 GiB x 0.95 for KV:
  // 7.9 GiB / (22000 x 1.52588e-4 GiB) = 2.35 requests fit; in 16-bit the
  // weights alone exceed the device.
  parallelism::InferenceDeployment dep;
  const EngineLimits lim = BenchmarkLimits(LimitRule::kTrtllmBench, Model("llama3.1-70b"),
                                           Device("h100-sxm"), dep, 20000, 2000);
  EXPECT_EQ(lim.max_batch, 0);
  EXPECT_EQ(lim.reason, "the weights leave no KV memory for one request of 22000 tokens");
}

// A saturated server keeps its batch full: with every request queued at
// once, sequences in flight average close to max batch.
TEST(MaxLoad, SaturatedServerFillsItsBatch) {
  const models::ModelSpec m = Model("llama3.1-8b");
  hardware::SystemSpec sys;
  base::Diagnostics d;
  ASSERT_TRUE(LoadSystemPreset("dgx-h100-superpod", PresetStore(kConfigs), {}, "system", sys, d));
  auto dep = Fp8(1);
  dep.input = 128;
  dep.output = 128;
  EngineLimits lim;
  lim.max_batch = 256;
  lim.max_num_tokens = 8192;
  const InferenceEstimator est(m, sys);
  const MaxLoadResult r = RunMaxLoad(est, dep, lim, 2048);
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_LE(r.sim.peak_running, 256);
  EXPECT_GT(r.mean_running, 0.8 * 256);
}

// trtllm-bench runs TensorRT-LLM's default capacity policy,
// GUARANTEED_NO_EVICT: a request starts only when the KV of all its
// 20000 + 2000 tokens fits, and none is ever paused. On one H100 with Llama
// 3.1 8B FP8 the pool holds kv_capacity_tokens tokens, so at most
// floor(capacity / 22000) requests run at once and nothing is preempted.
// With paged admission instead (vLLM's rule) requests are admitted on their
// prompt alone and the longest-running ones are preempted and recomputed as
// their outputs grow.
TEST(MaxLoad, TrtllmBenchReservesWholeRequestsAndNeverPreempts) {
  const models::ModelSpec m = Model("llama3.1-8b");
  hardware::SystemSpec sys;
  base::Diagnostics d;
  ASSERT_TRUE(LoadSystemPreset("dgx-h100-superpod", PresetStore(kConfigs), {}, "system", sys, d));
  auto dep = Fp8(1);
  dep.input = 20000;
  dep.output = 2000;
  const EngineLimits lim =
      BenchmarkLimits(LimitRule::kTrtllmBench, m, sys.device, dep, 20000, 2000);
  ASSERT_TRUE(lim.reserve_whole_request);
  const InferenceEstimator est(m, sys);
  const MaxLoadResult r = RunMaxLoad(est, dep, lim, 200);
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_EQ(r.sim.preemptions, 0);
  const int64_t fit = static_cast<int64_t>(r.sim.kv_capacity_tokens) / 22000;
  ASSERT_LT(fit, lim.max_batch);  // memory, not max batch, is the limit here
  EXPECT_EQ(r.sim.peak_running, fit);
  EngineLimits paged = lim;
  paged.reserve_whole_request = false;
  const MaxLoadResult p = RunMaxLoad(est, dep, paged, 200);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_GT(p.sim.preemptions, 0);
}

// Issue 18: NVFP4 GEMMs on B200 take the device's FP4 curve, which
// reproduces the measurement it was read from (vLLM PR #20646, NVFP4 CUTLASS
// GEMM without the activation quantize, N = 6144, K = 4096, on a B200):
//   M = 4096: 2 x 4096 x 6144 x 4096 = 206.16 GFLOP at 3645.6 TFLOP/s = 56.55 us
//   M = 1024: 51.54 GFLOP at 2895.0 TFLOP/s = 17.80 us
// Before the curve, FP4 took the BF16 curve (0.69 at 206 GFLOP): 206.16 GFLOP
// / (9000 TFLOP/s x 0.69) + 4 us = 37.2 us, 1.5x too fast. The memory term
// (weights 6144 x 4096 x 0.5 B + activations) is far below either.
TEST(MaxLoad, Nvfp4GemmsOnB200ReproduceTheirMeasurement) {
  const hardware::DeviceSpec b200 = Device("b200");
  const double bytes = 6144.0 * 4096 * 0.5 + 4096.0 * 4096 * 0.5 + 4096.0 * 6144 * 2;
  const double t4096 = hardware::GemmTime(b200, hardware::DataType::kFp4,
                                          2.0 * 4096 * 6144 * 4096, bytes);
  EXPECT_NEAR(t4096, 56.55e-6, 0.3e-6);
  const double t1024 = hardware::GemmTime(b200, hardware::DataType::kFp4,
                                          2.0 * 1024 * 6144 * 4096, bytes / 2);
  EXPECT_NEAR(t1024, 17.80e-6, 0.2e-6);
}

}  // namespace
}  // namespace orrery::engine
