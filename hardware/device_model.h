#pragma once
// Time of one kernel on a device: a roofline with shape-dependent
// efficiencies (Williams et al. 2009, "Roofline", CACM 52(4)):
//
//   t = combine(flops / (peak * eff_gemm(flops)), bytes / (bw * eff_mem(bytes)))
//       + kernel_overhead
//
// where combine is max (compute and memory overlap) or sum, as the device
// profile says. All functions are pure and allocation-free.

#include "hardware/device_spec.h"

namespace orrery::hardware {

// Fraction of the clock (and so of the compute peak) a device holds under
// its power cap. Board power of a compute-bound kernel is idle + dynamic
// power, and dynamic CMOS power goes as C V^2 f with the voltage scaled
// along with the frequency in the DVFS range, i.e. as f^3 (Weste & Harris,
// "CMOS VLSI Design", 4th ed., Sec. 5.1; the cube law DVFS studies use):
//
//   clock fraction = cbrt((power_cap - idle) / (tdp - idle)),  capped at 1
//
// with idle = idle_power (30 % of TDP when unset). 1 when no cap is set or
// the cap is at or above the TDP: the efficiency curves are sustained
// figures at the TDP (the H200 probe in configs/devices/h200-measured.yaml
// measured 0.70 of peak sustained at 700 W vs 0.81 in short bursts).
// Inline so that the uncapped case, every GEMM of every estimate in a
// search, costs one comparison.
double CappedClockFraction(const DeviceSpec& d);
inline double ClockFraction(const DeviceSpec& d) { return d.power_cap > 0 ? CappedClockFraction(d) : 1.0; }
// Watts of a busy board: its TDP, or the cap it is held to below that.
// Every energy figure (estimates, goodput, search objectives, pools) uses it.
inline double BusyPower(const DeviceSpec& d) {
  return d.power_cap > 0 && d.power_cap < d.tdp ? d.power_cap : d.tdp;
}

// A GEMM of 2*m*n*k*batch FLOP moving `bytes` (FP8 GEMMs use
// gemm_efficiency_fp8 when the profile has it; FP4 GEMMs gemm_efficiency_fp4,
// else gemm_efficiency_fp8).
double GemmTime(const DeviceSpec& d, DataType t, double flops, double bytes);
// The same with `extra_compute_s` seconds of work on the SMs added to the
// tensor-core time before the roofline combine (the dequantization of a
// weight-only quantized GEMM's main loop). `mxfp8`: an FP8 GEMM with MXFP8
// block scales, at gemm_efficiency_mxfp8 where the profile has it.
double GemmTime(const DeviceSpec& d, DataType t, double flops, double bytes,
                double extra_compute_s, bool mxfp8 = false);

// How a GEMM's efficiency depends on its reduction depth K at a fixed
// output size. Each output tile of a tiled GEMM kernel runs a main loop over
// K plus a fixed cost (filling the operand pipeline, writing the C tile),
// so a tile's time goes as K + K0 and the efficiency as K / (K + K0).
// K0 from cuBLAS on sm_90 as OpenXLA tabulates it (openxla/xla,
// xla/service/gpu/model/matmul_interpolator_data.h, kDefaultMatmulPTable,
// key "sm_90", bf16xbf16->bf16): least squares over the eight shapes with
// b x m x n >= 2^24 (b 1-4, m and n 2048-4096), one plateau per shape and
// one K0 for all, at K = 1024, 2048 and 4096, gives K0 = 214 (rms error
// 1 %). E.g. b 4, m = n = 4096: 726 / 765 / 793 TFLOP/s at K = 1024 / 2048 /
// 4096, ratios 0.915 / 0.964 measured against 0.870 / 0.953 modelled; the
// eight shapes' ratios at K = 2048 are 0.931-0.964.
// Checked on an H200 in the three layouts of a linear layer's GEMMs,
// sustained at the 700 W cap (validation/gpu_step/h200/gemm_depth/): per
// clock cycle the ratios fit K0 = 184-196 (rms 1.1-1.4 %);
// the raw throughput fits 121.5, because the governor raises the clock for
// shallow GEMMs run alone, which a step's shared clock does not do.
inline constexpr double kGemmTileDepthOverhead = 214;
// The gemm_efficiency curves are fractions of peak measured on GEMMs with
// K >= 4096 (every shape of 4 GFLOP or more in hardware/calibration/
// measurements/h200/cuda_full_run1.json but 2048^3), so the depth factor is
// taken relative to K = 4096 and is 1 at and above it.
inline constexpr double kGemmCurveDepth = 4096;
// (k / (k + K0)) / (4096 / (4096 + K0)) for 0 < k < 4096, else 1. Only for
// the 16-bit datatypes the table measured (bf16, fp16): other datatypes
// (FP8 runs its main loop twice as fast per K against the same epilogue, so
// its K0 differs) get 1 until measured. Inline: fifteen calls a plan.
inline double GemmDepthFactor(DataType t, double k) {
  if (t != DataType::kBf16 && t != DataType::kFp16) return 1.0;
  if (k <= 0 || k >= kGemmCurveDepth) return 1.0;
  return (k / (k + kGemmTileDepthOverhead)) /
         (kGemmCurveDepth / (kGemmCurveDepth + kGemmTileDepthOverhead));
}

// GemmTime for a GEMM of reduction depth `k` (the inner dimension of the
// product): the curve's efficiency times GemmDepthFactor(t, k). k <= 0: as
// GemmTime.
double GemmTimeAtDepth(const DeviceSpec& d, DataType t, double flops, double bytes, double k);

// A GEMM's two roofline parts at the curve's depth, seconds: tensor-core
// time at the efficiency curve for `t`, and memory time for `bytes`. A
// linear layer's forward, input-gradient and weight-gradient GEMMs share
// flops and bytes and differ only in depth, so the estimator looks the
// curves up once per operator and prices each depth with GemmTimeFromParts.
// Under the max roofline, memory_s of a GEMM that is compute-bound at any
// memory efficiency the profile holds is an upper bound below compute_s, not
// the curve's value: the combined time is the same (device_model.cpp,
// MemorySide).
struct GemmParts {
  double compute_s = 0;
  double memory_s = 0;
};
// `mxfp8`: an FP8 GEMM with MXFP8 block scales (GemmTime).
GemmParts GemmPartsOf(const DeviceSpec& d, DataType t, double flops, double bytes, bool mxfp8 = false);

// A memory-bound kernel moving `bytes`. Inline: about ten calls a plan.
inline double MemoryTime(const DeviceSpec& d, double bytes) {
  if (bytes <= 0) return 0;
  return bytes / (d.memory_bandwidth * d.memory_efficiency.At(bytes)) + d.kernel_overhead;
}

// Memory-bound kernels moving `bytes`, of which `unvec_bytes` in
// non-vectorized kernels that process `unvec_elements` (models::Op::
// unvec_bytes): the vectorized part at memory_efficiency, the rest at that
// or at unvectorized_element_rate, whichever is slower; one kernel_overhead.
// Equal to MemoryTime(d, bytes) when unvec_bytes is 0 or the device has no
// element rate.
double ElementwiseTime(const DeviceSpec& d, double bytes, double unvec_bytes, double unvec_elements);

// Which fused attention kernel runs. kFused: the profile's flash_attention_*
// (cuDNN / FlashAttention-3 class); kFlash2: the FlashAttention-2 kernels'
// flash2_attention_* where the profile sets them; kTriton: the Triton port of
// FlashAttention (flash-attn's flash_attn_triton.py, which llm-foundry runs
// as attn_impl: triton), slower than FlashAttention-2 by the ratios Dao 2023
// measured (kTritonForwardSlowdown, kTritonBackwardSlowdown).
enum class AttentionKernel { kFused, kFlash2, kTriton };

// FlashAttention-2 "is around 1.3-1.5x faster than FlashAttention in Triton
// in the forward pass and around 2x faster in the backward pass" (Dao 2023,
// FlashAttention-2, arXiv 2307.08691, Sec. 4.1, A100 80GB, sequence 512-16k,
// head dim 64 and 128, with and without causal mask): the forward at the
// middle of that range, the backward at 2.
inline constexpr double kTritonForwardSlowdown = 1.4;
inline constexpr double kTritonBackwardSlowdown = 2.0;

// Fused attention kernels reach a smaller fraction of peak at head
// dimension 64 than at the 128 the profiles' flash_attention_* and
// flash2_attention_* figures are read at: with half the matmul work per
// score, the softmax's exponentials weigh twice as much. Shah et al. 2024
// (FlashAttention-3, arXiv 2407.08608), H100 SXM5, BF16, 4k tokens, 16k
// tokens a batch: Fig. 5 with causal mask, cuDNN forward 363 TFLOP/s at head
// dimension 64 against 518 at 128 (0.701), FlashAttention-2 284 against 319
// (0.890); Fig. 6 (published without a causal mask), cuDNN backward 417
// against 499 (0.836), FlashAttention-2 279 against 310 (0.900). Each ratio
// holds within 0.04 from 512 to 16k tokens. Taken for every device (a
// property of the kernels' work split, measured on Hopper only).
inline constexpr double kFusedHead64Forward = 0.701;
inline constexpr double kFusedHead64Backward = 0.836;
inline constexpr double kFlash2Head64Forward = 0.890;
inline constexpr double kFlash2Head64Backward = 0.900;

// The factor on a fused attention kernel's efficiency at `head_dim`: the
// ratio above at 64 and below, 1 at 128 and above (no figure beyond 128 is
// applied: the profiles' figures stand there), linear in the head dimension
// between (an interpolation, not a reading: head dimension 96 takes the
// mean). The Triton kernel, priced from FlashAttention-2's efficiency, takes
// FlashAttention-2's ratio. 0 (unknown) gives 1.
double AttentionHeadDimFactor(AttentionKernel kernel, bool backward, double head_dim);

// A fused attention kernel (forward or backward) for `kernel`
// (AttentionKernel) at the profile's fraction of peak, flash_attention_* or
// flash2_attention_*, times the matching length factor at `seq_len` where
// the profile has one and `seq_len` > 0 (the tokens one kernel call attends
// over; the factor clamped at its curve's ends). `flops` are the useful FLOP
// the estimator counts (half the score blocks under a causal mask, the
// backward 2.5x the forward), the convention of the benchmarks the factors
// come from (flash-attn, benchmarks/benchmark_flash_attention.py, flops():
// 4 b s^2 h d, halved when causal, x 2.5 for the backward; Shah et al. 2024,
// arXiv 2407.08608, Sec. 4.1), so the diagonal blocks a causal kernel
// computes whole are in the factor, not in `flops`. `head_dim` > 0 applies
// AttentionHeadDimFactor.
double FlashAttentionTime(const DeviceSpec& d, DataType t, double flops, double bytes,
                          bool backward, AttentionKernel kernel = AttentionKernel::kFused,
                          double seq_len = 0, double head_dim = 0);

// Combine compute and memory time according to the profile.
inline double Combine(const DeviceSpec& d, double compute_s, double memory_s) {
  return d.roofline == Roofline::kMax ? (compute_s > memory_s ? compute_s : memory_s)
                                      : compute_s + memory_s;
}

// GemmTimeAtDepth from GemmPartsOf's parts and GemmDepthFactor's factor
// (the same arithmetic: compute / factor, combined with memory, plus the
// kernel overhead).
inline double GemmTimeFromParts(const DeviceSpec& d, const GemmParts& parts, double depth_factor) {
  return Combine(d, parts.compute_s / depth_factor, parts.memory_s) + d.kernel_overhead;
}

}  // namespace orrery::hardware
