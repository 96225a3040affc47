#include "hardware/device_model.h"

#include <algorithm>
#include <cmath>

namespace orrery::hardware {

double ElementwiseTime(const DeviceSpec& d, double bytes, double unvec_bytes, double unvec_elements) {
  if (unvec_bytes <= 0 || d.unvectorized_element_rate <= 0 || bytes <= 0) return MemoryTime(d, bytes);
  const double rate = d.memory_bandwidth * d.memory_efficiency.At(bytes);
  const double unvec = std::min(unvec_bytes, bytes);
  return (bytes - unvec) / rate + std::max(unvec / rate, unvec_elements / d.unvectorized_element_rate) +
         d.kernel_overhead;
}

double CappedClockFraction(const DeviceSpec& d) {
  if (d.tdp <= 0 || d.power_cap >= d.tdp) return 1.0;
  const double idle = IdlePower(d);
  if (d.power_cap <= idle) return 1.0;  // refused by CheckDevice
  return std::cbrt((d.power_cap - idle) / (d.tdp - idle));
}

double GemmTime(const DeviceSpec& d, DataType t, double flops, double bytes) {
  return GemmTime(d, t, flops, bytes, 0.0);
}

namespace {

// The memory side of a kernel whose compute takes `compute_s`: its traffic's
// seconds at the memory-efficiency curve, or, under the max roofline, when
// even the curve's lowest point moves `bytes` in less than `compute_s`, that
// upper bound: max(compute, memory) is then the compute whatever the curve
// says, and so is max(compute / f, memory) for GemmTimeFromParts' depth
// factors f <= 1 (GemmDepthFactor), so the result is the same double while the
// curve's logarithm is skipped (most GEMMs of an estimate are compute-bound;
// the lookups were a fifth of its instructions). The margin covers the
// rounding of an interpolated point below its knots. BoundOf (the operator
// breakdown) reads the bound as the memory time: compute-bound either way.
double MemorySide(const DeviceSpec& d, double bytes, double compute_s) {
  const Curve& eff = d.memory_efficiency;
  if (d.roofline == Roofline::kMax) {
    double lowest = eff.y.empty() ? 1.0 : eff.y.front();
    for (double y : eff.y) lowest = y < lowest ? y : lowest;
    const double slowest = bytes / (d.memory_bandwidth * lowest);
    if (slowest < compute_s * (1 - 1e-12)) return slowest;
  }
  return bytes / (d.memory_bandwidth * eff.At(bytes));
}

// Tensor-core seconds of `flops` at the profile's GEMM efficiency curve for
// datatype `t`: FP4 uses its own curve where the device has one, else the
// FP8 curve; FP8 with MXFP8 block scales (`mxfp8`) the MXFP8 curve where the
// device has one, else the FP8 curve; FP8 uses the FP8 curve; each falls
// back to gemm_efficiency.
double CurveComputeTime(const DeviceSpec& d, DataType t, double flops, bool mxfp8) {
  const bool fp4 = t == DataType::kFp4 || t == DataType::kMxfp4;
  const bool narrow = fp4 || t == DataType::kFp8;
  const bool mx = mxfp8 && t == DataType::kFp8 && !d.gemm_efficiency_mxfp8.empty();
  const Curve& eff = fp4 && !d.gemm_efficiency_fp4.empty()      ? d.gemm_efficiency_fp4
                     : mx                                       ? d.gemm_efficiency_mxfp8
                     : narrow && !d.gemm_efficiency_fp8.empty() ? d.gemm_efficiency_fp8
                                                                : d.gemm_efficiency;
  return flops / (PeakFlops(d, t) * eff.At(flops) * ClockFraction(d));
}

}  // namespace

GemmParts GemmPartsOf(const DeviceSpec& d, DataType t, double flops, double bytes, bool mxfp8) {
  const double compute = CurveComputeTime(d, t, flops, mxfp8);
  return {compute, MemorySide(d, bytes, compute)};
}

double GemmTimeAtDepth(const DeviceSpec& d, DataType t, double flops, double bytes, double k) {
  // flops at efficiency e x f take the curve's time / f.
  return GemmTimeFromParts(d, GemmPartsOf(d, t, flops, bytes), GemmDepthFactor(t, k));
}

double GemmTime(const DeviceSpec& d, DataType t, double flops, double bytes,
                double extra_compute_s, bool mxfp8) {
  const double compute = CurveComputeTime(d, t, flops, mxfp8) + extra_compute_s;
  const double memory = bytes / (d.memory_bandwidth * d.memory_efficiency.At(bytes));
  return Combine(d, compute, memory) + d.kernel_overhead;
}

double AttentionHeadDimFactor(AttentionKernel kernel, bool backward, double head_dim) {
  if (head_dim <= 0 || head_dim >= 128) return 1.0;
  const double at64 = kernel == AttentionKernel::kFused ? (backward ? kFusedHead64Backward : kFusedHead64Forward)
                                                         : (backward ? kFlash2Head64Backward : kFlash2Head64Forward);
  if (head_dim <= 64) return at64;
  return at64 + (1.0 - at64) * (head_dim - 64) / 64;
}

double FlashAttentionTime(const DeviceSpec& d, DataType t, double flops, double bytes,
                          bool backward, AttentionKernel kernel, double seq_len, double head_dim) {
  const double eff1 = backward ? d.flash_attention_bwd_efficiency : d.flash_attention_efficiency;
  const double eff2 = backward ? d.flash2_attention_bwd_efficiency : d.flash2_attention_efficiency;
  const Curve& curve1 = backward ? d.flash_attention_bwd_length_factor : d.flash_attention_length_factor;
  const Curve& curve2 = backward ? d.flash2_attention_bwd_length_factor : d.flash2_attention_length_factor;
  // The FlashAttention-2 kernels take their own figures where the profile
  // has any (constant or length factor), else the fused kernel's.
  const bool flash2 = kernel != AttentionKernel::kFused && (eff2 > 0 || !curve2.empty());
  const Curve& factor = flash2 && !curve2.empty() ? curve2 : curve1;
  double eff = flash2 && eff2 > 0 ? eff2 : eff1;
  if (seq_len > 0 && !factor.empty()) eff *= factor.At(seq_len);
  eff *= AttentionHeadDimFactor(kernel, backward, head_dim);
  // The Triton kernel: FlashAttention-2's efficiency over the slowdown Dao
  // 2023 (Sec. 4.1) measured against it on the A100; taken for other devices
  // as well (no published Triton FlashAttention figure on Hopper).
  if (kernel == AttentionKernel::kTriton)
    eff /= backward ? kTritonBackwardSlowdown : kTritonForwardSlowdown;
  const double compute = flops / (PeakFlops(d, t) * eff * ClockFraction(d));
  return Combine(d, compute, MemorySide(d, bytes, compute)) + d.kernel_overhead;
}

}  // namespace orrery::hardware
