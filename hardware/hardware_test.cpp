#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "hardware/device_model.h"
#include "hardware/network.h"

namespace orrery::hardware {
namespace {

TEST(Curve, InterpolatesInLogSizeAndClamps) {
  Curve c{{1e6, 1e8}, {0.2, 0.6}};
  EXPECT_DOUBLE_EQ(c.At(1e7), 0.4);   // halfway in log10: 6 -> 7 -> 8
  EXPECT_DOUBLE_EQ(c.At(1e3), 0.2);
  EXPECT_DOUBLE_EQ(c.At(1e12), 0.6);
  EXPECT_DOUBLE_EQ(Curve{}.At(5), 1.0);  // no curve: datasheet rate
}

DeviceSpec ToyDevice() {
  DeviceSpec d;
  d.peak_bf16 = 100e12;
  d.memory_bandwidth = 1e12;
  d.gemm_efficiency = {{1}, {0.5}};
  d.memory_efficiency = {{1}, {0.8}};
  d.kernel_overhead = 1e-6;
  return d;
}

TEST(DeviceModel, RooflineMaxOrSum) {
  DeviceSpec d = ToyDevice();
  // compute 1e12 / (100e12 * 0.5) = 20 ms; memory 1e9 / (1e12 * 0.8) = 1.25 ms.
  EXPECT_DOUBLE_EQ(GemmTime(d, DataType::kBf16, 1e12, 1e9), 0.02 + 1e-6);
  d.roofline = Roofline::kSum;
  EXPECT_DOUBLE_EQ(GemmTime(d, DataType::kBf16, 1e12, 1e9), 0.02125 + 1e-6);
  EXPECT_DOUBLE_EQ(MemoryTime(d, 8e8), 1e-3 + 1e-6);
  EXPECT_DOUBLE_EQ(MemoryTime(d, 0), 0);
  // fp16 falls back to the bf16 peak when not given.
  EXPECT_DOUBLE_EQ(PeakFlops(d, DataType::kFp16), 100e12);
}

// Non-vectorized element-wise kernels: 8e8 B of which 4e8 B in kernels
// processing 1e8 elements, at 0.8 of 1 TB/s. Without an element rate all of
// it by bytes: 1 ms + 1 us. At 50 G elements/s the 1e8 elements take 2 ms,
// longer than their 4e8 B (0.5 ms): 0.5 + 2 ms + 1 us. At 500 G/s (0.2 ms)
// the bytes bind again: 1 ms + 1 us.
// GemmPartsOf may stand an upper bound in for the memory curve's value when
// the GEMM is compute-bound at the curve's lowest point (MemorySide): the time
// at every depth factor must be the very double the curve would give, and a
// memory-bound GEMM, or any under the sum roofline, keeps the curve's value.
TEST(DeviceModel, ComputeBoundGemmsPriceTheSameWithoutTheMemoryCurve) {
  DeviceSpec d = ToyDevice();
  d.memory_efficiency = {{1e6, 1e9}, {0.5, 0.9}};  // 1e8 bytes: 0.5 + 0.4 * 2/3 = 0.7667
  d.memory_efficiency.Finish();
  const auto with_curve = [&](double flops, double bytes, double f) {
    const double compute = flops / (d.peak_bf16 * 0.5) / f;
    const double memory = bytes / (d.memory_bandwidth * d.memory_efficiency.At(bytes));
    return Combine(d, compute, memory) + d.kernel_overhead;
  };
  // Compute-bound: 1e12 FLOP take 20 ms; 1e8 bytes at most 0.2 ms (at 0.5).
  const GemmParts big = GemmPartsOf(d, DataType::kBf16, 1e12, 1e8);
  EXPECT_DOUBLE_EQ(big.compute_s, 0.02);
  EXPECT_LT(big.memory_s, big.compute_s);
  for (double f : {1.0, GemmDepthFactor(DataType::kBf16, 512), GemmDepthFactor(DataType::kBf16, 64)})
    EXPECT_EQ(GemmTimeFromParts(d, big, f), with_curve(1e12, 1e8, f)) << f;
  // Memory-bound: 1e9 FLOP take 20 us, 1e8 bytes 1e8 / (1e12 * 0.7667) = 130 us.
  const GemmParts thin = GemmPartsOf(d, DataType::kBf16, 1e9, 1e8);
  EXPECT_EQ(thin.memory_s, 1e8 / (d.memory_bandwidth * d.memory_efficiency.At(1e8)));
  EXPECT_NEAR(thin.memory_s, 1.3043e-4, 1e-8);
  EXPECT_EQ(GemmTimeFromParts(d, thin, 1.0), with_curve(1e9, 1e8, 1.0));
  // The sum roofline adds the memory time: always the curve's value.
  d.roofline = Roofline::kSum;
  EXPECT_EQ(GemmPartsOf(d, DataType::kBf16, 1e12, 1e8).memory_s,
            1e8 / (d.memory_bandwidth * d.memory_efficiency.At(1e8)));
}

TEST(DeviceModel, UnvectorizedKernelsAreBoundByTheirElements) {
  DeviceSpec d = ToyDevice();
  EXPECT_DOUBLE_EQ(ElementwiseTime(d, 8e8, 4e8, 1e8), MemoryTime(d, 8e8));
  d.unvectorized_element_rate = 50e9;
  EXPECT_DOUBLE_EQ(ElementwiseTime(d, 8e8, 4e8, 1e8), 2.5e-3 + 1e-6);
  EXPECT_DOUBLE_EQ(ElementwiseTime(d, 8e8, 0, 0), MemoryTime(d, 8e8));
  d.unvectorized_element_rate = 500e9;
  EXPECT_DOUBLE_EQ(ElementwiseTime(d, 8e8, 4e8, 1e8), 1e-3 + 1e-6);
}

// Issue 15: a GEMM's efficiency falls with its reduction depth K as
// K / (K + 214) (OpenXLA's sm_90 cuBLAS table, device_model.h), relative to
// the curves' K = 4096:
//   K = 2048: (2048 / 2262) / (4096 / 4310) = 0.905393 / 0.950348 = 0.952697
//   K = 1024: (1024 / 1238) / 0.950348       = 0.827141 / 0.950348 = 0.870356
// and 1 from K = 4096 up, for a depth of 0 (unknown), and for FP8 (not
// measured). The ToyDevice GEMM of RooflineMaxOrSum (20 ms compute-bound at
// the curve) takes 20 ms / 0.952697 = 20.993 ms at K = 2048; memory-bound
// (1e8 FLOP: 2 us of compute, 1e9 bytes: 1.25 ms) the depth changes nothing.
TEST(DeviceModel, ShallowGemmsRunBelowTheCurve) {
  const double f2048 = (2048.0 / 2262.0) / (4096.0 / 4310.0);
  EXPECT_NEAR(GemmDepthFactor(DataType::kBf16, 2048), 0.952697, 1e-6);
  EXPECT_NEAR(GemmDepthFactor(DataType::kFp16, 1024), 0.870356, 1e-6);
  EXPECT_DOUBLE_EQ(GemmDepthFactor(DataType::kBf16, 4096), 1.0);
  EXPECT_DOUBLE_EQ(GemmDepthFactor(DataType::kBf16, 28672), 1.0);
  EXPECT_DOUBLE_EQ(GemmDepthFactor(DataType::kBf16, 0), 1.0);
  EXPECT_DOUBLE_EQ(GemmDepthFactor(DataType::kFp8, 1024), 1.0);
  const DeviceSpec d = ToyDevice();
  EXPECT_NEAR(GemmTimeAtDepth(d, DataType::kBf16, 1e12, 1e9, 2048), 0.02 / f2048 + 1e-6, 1e-15);
  EXPECT_NEAR(GemmTimeAtDepth(d, DataType::kBf16, 1e12, 1e9, 2048), 0.0209930 + 1e-6, 1e-7);
  EXPECT_DOUBLE_EQ(GemmTimeAtDepth(d, DataType::kBf16, 1e12, 1e9, 8192), GemmTime(d, DataType::kBf16, 1e12, 1e9));
  EXPECT_DOUBLE_EQ(GemmTimeAtDepth(d, DataType::kBf16, 1e8, 1e9, 1024), 1.25e-3 + 1e-6);
}

// Issue 18: FP4 GEMMs take the device's FP4 curve, else the FP8 curve, else
// gemm_efficiency. Peak FP4 400 TFLOP/s; a 1e12 FLOP GEMM (compute-bound:
// 1e9 bytes take 1.25 ms) at 0.5 (gemm_efficiency) takes 1e12 / (400e12 *
// 0.5) = 5 ms; at 0.4 (FP8 curve) 6.25 ms; at 0.25 (FP4 curve) 10 ms. FP8
// keeps the FP8 curve: 1e12 / (200e12 * 0.4) = 12.5 ms.
TEST(DeviceModel, Fp4GemmsUseTheirOwnCurve) {
  DeviceSpec d = ToyDevice();
  d.peak_fp8 = 200e12;
  d.peak_fp4 = 400e12;
  EXPECT_DOUBLE_EQ(GemmTime(d, DataType::kFp4, 1e12, 1e9), 5e-3 + 1e-6);
  d.gemm_efficiency_fp8 = {{1}, {0.4}};
  EXPECT_DOUBLE_EQ(GemmTime(d, DataType::kFp4, 1e12, 1e9), 6.25e-3 + 1e-6);
  d.gemm_efficiency_fp4 = {{1}, {0.25}};
  EXPECT_DOUBLE_EQ(GemmTime(d, DataType::kFp4, 1e12, 1e9), 10e-3 + 1e-6);
  EXPECT_DOUBLE_EQ(GemmTime(d, DataType::kMxfp4, 1e12, 1e9), 10e-3 + 1e-6);
  EXPECT_DOUBLE_EQ(GemmTime(d, DataType::kFp8, 1e12, 1e9), 12.5e-3 + 1e-6);
}

// FP8 GEMMs with MXFP8 block scales take gemm_efficiency_mxfp8 where the
// device has one, else the FP8 curve; other datatypes never read it. Peak
// FP8 200 TFLOP/s, a compute-bound 1e12 FLOP GEMM (1e9 bytes take 1.25 ms):
//   no MXFP8 curve, FP8 curve 0.4:  1e12 / (200e12 x 0.4) = 12.5 ms,
//   MXFP8 curve 0.38:               1e12 / (200e12 x 0.38) = 13.157895 ms,
//   per-tensor FP8 (mxfp8 false):   12.5 ms still,
//   BF16 at 100 TFLOP/s x 0.5 with mxfp8 set: 20 ms (gemm_efficiency),
// each + the 1 us kernel overhead; GemmPartsOf gives the same compute time.
TEST(DeviceModel, Mxfp8GemmsUseTheirOwnCurve) {
  DeviceSpec d = ToyDevice();
  d.peak_fp8 = 200e12;
  d.gemm_efficiency_fp8 = {{1}, {0.4}};
  EXPECT_DOUBLE_EQ(GemmTime(d, DataType::kFp8, 1e12, 1e9, 0.0, true), 12.5e-3 + 1e-6);
  d.gemm_efficiency_mxfp8 = {{1}, {0.38}};
  EXPECT_NEAR(GemmTime(d, DataType::kFp8, 1e12, 1e9, 0.0, true), 13.157895e-3 + 1e-6, 1e-9);
  EXPECT_DOUBLE_EQ(GemmTime(d, DataType::kFp8, 1e12, 1e9), 12.5e-3 + 1e-6);
  EXPECT_DOUBLE_EQ(GemmTime(d, DataType::kBf16, 1e12, 1e9, 0.0, true), 20e-3 + 1e-6);
  EXPECT_NEAR(GemmPartsOf(d, DataType::kFp8, 1e12, 1e9, true).compute_s, 13.157895e-3, 1e-9);
  EXPECT_DOUBLE_EQ(GemmPartsOf(d, DataType::kFp8, 1e12, 1e9).compute_s, 12.5e-3);
}

// The Triton FlashAttention kernel runs at FlashAttention-2's efficiency
// over the slowdown Dao 2023 (Sec. 4.1) measured: / 1.4 forward, / 2
// backward. ToyDevice: 100 TFLOP/s, flash_attention 0.5 / 0.4 (the defaults),
// no flash2 figures, so FlashAttention-2 is the fused kernel:
//   forward  1e12 FLOP / (100e12 x 0.5 / 1.4) = 28 ms,
//   backward 1e12 FLOP / (100e12 x 0.4 / 2)   = 50 ms,
// with flash2 figures 0.3 / 0.2: 1e12 / (100e12 x 0.3 / 1.4) = 46.667 ms and
// 1e12 / (100e12 x 0.2 / 2) = 100 ms; each + the 1 us kernel overhead (the
// 1 MB of traffic takes 1.25 us, under the compute).
TEST(DeviceModel, TritonAttentionRunsBelowFlashAttention2) {
  DeviceSpec d = ToyDevice();
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false, AttentionKernel::kTriton),
              0.028 + 1e-6, 1e-12);
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, true, AttentionKernel::kTriton),
              0.050 + 1e-6, 1e-12);
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false, AttentionKernel::kFlash2),
              0.020 + 1e-6, 1e-12);
  d.flash2_attention_efficiency = 0.3;
  d.flash2_attention_bwd_efficiency = 0.2;
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false, AttentionKernel::kTriton),
              0.046666666666666667 + 1e-6, 1e-12);
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, true, AttentionKernel::kTriton),
              0.100 + 1e-6, 1e-12);
  // The fused (cuDNN class) kernel keeps flash_attention_*: 1e12 / (100e12 x 0.5) = 20 ms.
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false, AttentionKernel::kFused),
              0.020 + 1e-6, 1e-12);
}

// Issues 15 and 16: a profile's attention length factor scales its
// efficiency by the sequence length one kernel call attends over,
// interpolated in log(length) and clamped at the ends; without a length (or
// a factor) the constant holds. ToyDevice: 100 TFLOP/s, 1 us kernel
// overhead, flash_attention 0.5 / 0.4, no flash2 constants (so
// FlashAttention-2 starts from 0.5); the 1 MB of traffic takes 1.25 us,
// under the compute. FlashAttention-2 factor [[512, 0.4], [4096, 0.8]]:
//   512 tokens:  0.5 x 0.4 = 0.2, 1e12 / (100e12 x 0.2) = 50 ms
//   2048 tokens: log(2048/512) / log(4096/512) = 2/3, 0.4 + 2/3 x 0.4 = 0.66667,
//                x 0.5 = 0.33333, 1e12 / (100e12 x 0.33333) = 30 ms
//   16384 tokens (past the end): 0.5 x 0.8 = 0.4, 25 ms
// The Triton kernel divides by 1.4: at 2048, 30 ms x 1.4 = 42 ms.
// The fused kernel keeps 0.5 (20 ms) while it has no factor, as does a call
// without a length. A fused backward factor [[1024, 0.625], [8192, 1.25]] at
// 1024 gives 0.4 x 0.625 = 0.25: 1e12 / (100e12 x 0.25) = 40 ms.
TEST(DeviceModel, AttentionEfficiencyFollowsTheSequenceLength) {
  DeviceSpec d = ToyDevice();
  d.flash2_attention_length_factor = {{512, 4096}, {0.4, 0.8}};
  d.flash2_attention_length_factor.Finish();
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false, AttentionKernel::kFlash2, 512),
              0.050 + 1e-6, 1e-12);
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false, AttentionKernel::kFlash2, 2048),
              0.030 + 1e-6, 1e-12);
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false, AttentionKernel::kFlash2, 16384),
              0.025 + 1e-6, 1e-12);
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false, AttentionKernel::kTriton, 2048),
              0.042 + 1e-6, 1e-12);
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false, AttentionKernel::kFused, 2048),
              0.020 + 1e-6, 1e-12);
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false, AttentionKernel::kFlash2, 0),
              0.020 + 1e-6, 1e-12);
  // The backward takes the backward factor only: the flash2 forward factor
  // leaves it at the fused backward constant 0.4 (25 ms).
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, true, AttentionKernel::kFused, 1024),
              0.025 + 1e-6, 1e-12);
  d.flash_attention_bwd_length_factor = {{1024, 8192}, {0.625, 1.25}};
  d.flash_attention_bwd_length_factor.Finish();
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, true, AttentionKernel::kFused, 1024),
              0.040 + 1e-6, 1e-12);
}

// Head dimension 64 runs the fused kernels at a smaller fraction of peak
// (Shah et al. 2024 Figs. 5-6, H100, 4k tokens; hardware/device_model.h):
// cuDNN forward 363 / 518 = 0.701, backward 417 / 499 = 0.836;
// FlashAttention-2 forward 284 / 319 = 0.890, backward 279 / 310 = 0.900.
// The toy device's fused forward, 1e12 FLOP at 100 TFLOP/s x 0.5 = 20 ms,
// takes 20 / 0.701 = 28.531 ms at head dimension 64 (and at 32: the ratio
// is held below 64), 20 ms at 128 and above, and at 96 the mean factor
// (0.701 + 1) / 2 = 0.8505: 23.516 ms. The Triton kernel takes
// FlashAttention-2's ratio: 20 x 1.4 / 0.890 = 31.461 ms.
TEST(DeviceModel, AttentionEfficiencyFollowsTheHeadDimension) {
  EXPECT_DOUBLE_EQ(AttentionHeadDimFactor(AttentionKernel::kFused, false, 64), 0.701);
  EXPECT_DOUBLE_EQ(AttentionHeadDimFactor(AttentionKernel::kFused, true, 64), 0.836);
  EXPECT_DOUBLE_EQ(AttentionHeadDimFactor(AttentionKernel::kFlash2, false, 64), 0.890);
  EXPECT_DOUBLE_EQ(AttentionHeadDimFactor(AttentionKernel::kTriton, true, 64), 0.900);
  EXPECT_DOUBLE_EQ(AttentionHeadDimFactor(AttentionKernel::kFused, false, 128), 1.0);
  EXPECT_DOUBLE_EQ(AttentionHeadDimFactor(AttentionKernel::kFused, false, 192), 1.0);
  EXPECT_DOUBLE_EQ(AttentionHeadDimFactor(AttentionKernel::kFused, false, 0), 1.0);
  EXPECT_NEAR(AttentionHeadDimFactor(AttentionKernel::kFused, false, 96), 0.8505, 1e-12);
  DeviceSpec d = ToyDevice();
  auto fwd = [&](AttentionKernel k, double head_dim) {
    return FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false, k, 0, head_dim);
  };
  EXPECT_NEAR(fwd(AttentionKernel::kFused, 128), 0.020 + 1e-6, 1e-12);
  EXPECT_NEAR(fwd(AttentionKernel::kFused, 64), 0.020 / 0.701 + 1e-6, 1e-12);
  EXPECT_NEAR(fwd(AttentionKernel::kFused, 32), 0.020 / 0.701 + 1e-6, 1e-12);
  EXPECT_NEAR(fwd(AttentionKernel::kFused, 96), 0.020 / 0.8505 + 1e-6, 1e-12);
  EXPECT_NEAR(fwd(AttentionKernel::kTriton, 64), 0.020 * 1.4 / 0.890 + 1e-6, 1e-12);
}

// Issue 15/17: a power cap lowers the compute clock by the cube root of the
// dynamic-power ratio. TDP 700 W, idle unset (30 % = 210 W), cap 455 W:
// (455 - 210) / (700 - 210) = 245 / 490 = 0.5, cbrt(0.5) = 0.7937005259840998.
// A compute-bound GEMM (20 ms at the full clock, ToyDevice) then takes
// 20 ms / 0.7937005 = 25.198421 ms; a memory-bound kernel does not change.
TEST(DeviceModel, PowerCapLowersTheComputeClock) {
  DeviceSpec d = ToyDevice();
  d.tdp = 700;
  EXPECT_DOUBLE_EQ(ClockFraction(d), 1.0);  // no cap
  d.power_cap = 700;
  EXPECT_DOUBLE_EQ(ClockFraction(d), 1.0);  // at the TDP the curves hold as measured
  d.power_cap = 455;
  EXPECT_NEAR(ClockFraction(d), 0.7937005259840998, 1e-15);
  EXPECT_NEAR(GemmTime(d, DataType::kBf16, 1e12, 1e9), 0.02 / 0.7937005259840998 + 1e-6, 1e-15);
  EXPECT_NEAR(FlashAttentionTime(d, DataType::kBf16, 1e12, 1e6, false),
              1e12 / (100e12 * 0.5 * 0.7937005259840998) + 1e-6, 1e-15);
  EXPECT_DOUBLE_EQ(MemoryTime(d, 8e8), 1e-3 + 1e-6);
  // An explicit idle power: (455 - 100) / (700 - 100) = 355 / 600 = 0.591667, cbrt = 0.83951
  d.idle_power = 100;
  EXPECT_NEAR(ClockFraction(d), std::cbrt(355.0 / 600.0), 1e-15);
  EXPECT_NEAR(ClockFraction(d), 0.83951, 1e-5);
}

TEST(DeviceModel, PowerCapAtOrBelowIdleIsALocatedError) {
  DeviceSpec d = ToyDevice();
  d.tdp = 700;
  d.power_cap = 200;  // below the 210 W idle
  base::Diagnostics diags;
  CheckDevice(d, "system.device", base::SourceLocation{}, diags);
  ASSERT_FALSE(diags.ok());
  EXPECT_NE(diags.ToString().find("system.device.power_cap"), std::string::npos) << diags.ToString();
  EXPECT_NE(diags.ToString().find("above the idle power"), std::string::npos) << diags.ToString();
}

// A length factor times the attention efficiency is the kernel's fraction of
// peak (FlashAttentionTime): 0.8 x 1.3 = 1.04 would run above the peak and is
// refused; 0.75 x 1.3 = 0.975 is accepted.
TEST(DeviceModel, AttentionFactorTimesEfficiencyAboveOneIsALocatedError) {
  DeviceSpec d = ToyDevice();
  d.flash_attention_efficiency = 0.8;
  d.flash_attention_length_factor = {{4096, 16384}, {1.0, 1.3}};
  d.flash_attention_length_factor.Finish();
  base::Diagnostics diags;
  CheckDevice(d, "system.device", base::SourceLocation{}, diags);
  ASSERT_FALSE(diags.ok());
  EXPECT_NE(diags.ToString().find("system.device.flash_attention_length_factor"), std::string::npos)
      << diags.ToString();
  EXPECT_NE(diags.ToString().find("1.04"), std::string::npos) << diags.ToString();
  EXPECT_NE(diags.ToString().find("above the device's peak"), std::string::npos) << diags.ToString();

  d.flash_attention_efficiency = 0.75;
  base::Diagnostics fine;
  CheckDevice(d, "system.device", base::SourceLocation{}, fine);
  EXPECT_TRUE(fine.ok()) << fine.ToString();
}

// The FlashAttention-2 kernels take the fused kernel's efficiency when they
// have none: 0.55 x a flash2 factor of 2 = 1.1, named with the key it came
// from.
TEST(DeviceModel, Flash2FactorIsCheckedAgainstTheEfficiencyItFallsBackOn) {
  DeviceSpec d = ToyDevice();
  d.flash_attention_efficiency = 0.55;
  d.flash2_attention_efficiency = 0;
  d.flash2_attention_length_factor = {{512, 4096}, {0.5, 2.0}};
  d.flash2_attention_length_factor.Finish();
  base::Diagnostics diags;
  CheckDevice(d, "system.device", base::SourceLocation{}, diags);
  ASSERT_FALSE(diags.ok());
  EXPECT_NE(diags.ToString().find("system.device.flash2_attention_length_factor"), std::string::npos)
      << diags.ToString();
  EXPECT_NE(diags.ToString().find("flash_attention_efficiency (0.55) is 1.1"), std::string::npos)
      << diags.ToString();
}

// Two nodes of 8 devices: NVLink-like tier (300 GB/s, 2 us) and a scale-out
// tier (25 GB/s, 5 us), both at efficiency 1 for hand-checkable numbers.
SystemSpec TwoNodes() {
  SystemSpec s;
  s.devices_per_node = 8;
  s.nodes = 2;
  s.network = {NetworkTier{"nvlink", 8, 300e9, 2e-6, {}}, NetworkTier{"ib", 0, 25e9, 5e-6, {}}};
  return s;
}

TEST(Network, PlacementFollowsStride) {
  const SystemSpec s = TwoNodes();
  const AlphaBetaNetwork net(s);
  const GroupPlacement tp = net.Place(8, 1);
  EXPECT_EQ(tp.per_domain[0], 8);
  const GroupPlacement dp = net.Place(2, 8);
  EXPECT_EQ(dp.per_domain[0], 1);
  EXPECT_EQ(dp.per_domain[1], 2);
  const GroupPlacement mixed = net.Place(8, 2);  // 4 per node, 2 nodes
  EXPECT_EQ(mixed.per_domain[0], 4);
  EXPECT_EQ(mixed.per_domain[1], 8);
}

TEST(Network, RingAllReduceInsideOneTier) {
  const SystemSpec s = TwoNodes();
  const AlphaBetaNetwork net(s);
  // 2 (n-1)/n S / B + 2 (n-1) alpha = 2*7/8*1e8/3e11 + 14*2e-6.
  EXPECT_NEAR(net.Time(Collective::kAllReduce, 1e8, net.Place(8, 1)), 2 * 7.0 / 8 * 1e8 / 3e11 + 2.8e-5, 1e-12);
  // Across nodes, 2 members: 2*1/2*1e8/25e9 + 2*5e-6.
  EXPECT_NEAR(net.Time(Collective::kAllReduce, 1e8, net.Place(2, 8)), 4.01e-3, 1e-12);
  // Reduce-scatter and all-gather are half an all-reduce's volume.
  EXPECT_NEAR(net.Time(Collective::kAllGather, 1e8, net.Place(8, 1)), 7.0 / 8 * 1e8 / 3e11 + 7 * 2e-6, 1e-12);
  // Point-to-point across nodes: S / B + alpha.
  EXPECT_NEAR(net.Time(Collective::kSendRecv, 1e8, net.Place(2, 8)), 4.005e-3, 1e-12);
  EXPECT_EQ(net.Time(Collective::kAllReduce, 1e8, net.Place(1, 1)), 0);
}

TEST(Network, HierarchicalAllReduceAcrossTiers) {
  const SystemSpec s = TwoNodes();
  const AlphaBetaNetwork net(s);
  // 16 members: reduce-scatter in the node (7/8 S / 300 GB/s + 7 alpha0),
  // all-reduce of S/8 across the 2 nodes (S/8 / 25 GB/s + 2 alpha1), all-gather
  // back, pipelined as NCCL runs them: every latency once (2 x 7 x 2 us in the
  // node, 2 x 5 us across) plus the slower tier's bandwidth time, the node's
  // 2 x 7/8 x 1e8 / 300e9 = 583.3 us against the nodes' 1e8 / 8 / 25e9 = 500 us:
  // 621.3 us, where the phases one after the other took 1,121.3 us.
  const double in_node = 2 * 7.0 / 8 * 1e8 / 300e9;
  const double across = 1e8 / 8 / 25e9;
  EXPECT_NEAR(net.Time(Collective::kAllReduce, 1e8, net.Place(16, 1)), 28e-6 + 10e-6 + std::max(in_node, across),
              1e-10);
  EXPECT_NEAR(net.Time(Collective::kAllReduce, 1e8, net.Place(16, 1)), 621.333e-6, 1e-9);
  // A flat ring over the same 16 pays the scale-out link for the whole volume.
  GroupPlacement flat = net.Place(16, 1);
  flat.flat = true;
  EXPECT_NEAR(net.Time(Collective::kAllReduce, 1e8, flat), 2 * 15.0 / 16 * 1e8 / 25e9 + 30 * 5e-6, 1e-12);
}

TEST(Network, EfficiencyCurveScalesBusBandwidth) {
  SystemSpec s = TwoNodes();
  // DGX A100 NCCL all-reduce of 64 MiB over 8 GPUs: 0.675 ms measured
  // (Vidur profiling, validation/README.md): bus bandwidth 174 GB/s of 300.
  s.network[0].efficiency = {{64.0 * 1048576}, {0.58}};
  s.network[0].latency = 0;
  const AlphaBetaNetwork net(s);
  const double t = net.Time(Collective::kAllReduce, 64.0 * 1048576, net.Place(8, 1));
  EXPECT_NEAR(t * 1e3, 0.675, 0.01);
}

}  // namespace
}  // namespace orrery::hardware
