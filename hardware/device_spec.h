#pragma once
// What a device is: peak rates per datatype, memory, power, and the
// efficiency curves that turn peaks into achievable rates. Curves are data
// (defaults in configs/devices/ cite their measurements; `orrery calibrate`
// will replace them with this machine's).

#include <cmath>
#include <string>
#include <vector>

#include "core/base/param.h"

namespace orrery::hardware {

// kFp4 is NVFP4 and kMxfp4 the OCP MX FP4 format: E2M1 elements with a
// shared scale per block (see BytesPer).
enum class DataType { kFp32, kTf32, kBf16, kFp16, kFp8, kInt8, kInt4, kFp4, kMxfp4 };
inline constexpr int kDataTypeCount = 9;

// Bytes per element of a datatype (int4 is half a byte). Block-scaled FP4
// carries its scales: NVFP4 one FP8 E4M3 scale per 16 elements, 4.5 bits
// (NVIDIA, "Introducing NVFP4", 2025; Blackwell block scaling), MXFP4 one
// E8M0 scale per 32 elements, 4.25 bits (OCP Microscaling Formats v1.0,
// Sec. 5). The per-tensor FP32 scale of NVFP4 is negligible. Inline, as the
// other small lookups the closed-form estimate calls a dozen times a plan
// (PeakFlops, Curve::At, models::FfnSize): a call across files costs more
// than the switch.
inline double BytesPer(DataType t) {
  switch (t) {
    case DataType::kFp32:
    case DataType::kTf32: return 4;
    case DataType::kBf16:
    case DataType::kFp16: return 2;
    case DataType::kFp8:
    case DataType::kInt8: return 1;
    case DataType::kInt4: return 0.5;
    case DataType::kFp4: return 4.5 / 8;
    case DataType::kMxfp4: return 4.25 / 8;
  }
  return 2;
}

const char* DataTypeName(DataType t);
std::vector<std::pair<std::string, DataType>> DataTypeNames();

enum class Roofline { kMax, kSum };

// A curve y(x) given at points, interpolated linearly in log(x) and clamped
// at the ends. x is a size (FLOP for GEMMs, bytes for memory traffic), y an
// efficiency in (0, 1].
struct Curve {
  std::vector<double> x;
  std::vector<double> y;
  // log(x[i+1] / x[i]) for each segment, filled by Finish() once the points
  // are in (the parsers do it): At() then takes one logarithm instead of
  // two, with the same result. Ignored when its size does not fit x.
  std::vector<double> log_steps;
  double At(double size) const;
  bool empty() const { return x.empty(); }
  void Finish();
};

// Inline: the closed-form estimate reads about twenty curves a plan.
inline double Curve::At(double size) const {
  if (x.empty()) return 1.0;
  if (size <= x.front()) return y.front();
  if (size >= x.back()) return y.back();
  size_t hi = 1;
  while (x[hi] < size) ++hi;
  const double step = log_steps.size() + 1 == x.size() ? log_steps[hi - 1] : std::log(x[hi] / x[hi - 1]);
  const double t = std::log(size / x[hi - 1]) / step;
  return y[hi - 1] + t * (y[hi] - y[hi - 1]);
}

struct DeviceSpec {
  std::string name;
  std::string citation;
  // Dense peak rates (FLOP/s). 0 = the datatype is not supported.
  double peak_fp32 = 0;   // non-tensor FP32
  double peak_tf32 = 0;
  double peak_bf16 = 0;
  double peak_fp16 = 0;   // 0 = same as bf16
  double peak_fp8 = 0;
  double peak_int8 = 0;   // OP/s
  double peak_fp4 = 0;    // NVFP4 / MXFP4 tensor peak (Blackwell); 0 = none
  // FP8 tensor-core GEMMs take operands in any layout (NN, NT, TN): true on
  // datacenter Blackwell (sm_100), false on Hopper and Ada, whose FP8 GEMMs
  // take only TN (Transformer Engine, transformer_engine/common/
  // transformer_engine.cpp, nvte_is_non_tn_fp8_gemm_supported: compute
  // capability 10.x-11.x and from 13.0). Decides whether per-tensor FP8
  // operands need a transposed copy (engine::Fp8QuantizeBytesPerElement).
  bool fp8_any_layout = false;
  double memory_capacity = 0;   // bytes of device memory (HBM)
  double memory_bandwidth = 0;  // bytes/s, datasheet
  double l2_cache = 0;          // bytes
  double scaleup_bandwidth = 0; // bytes/s per direction, per device (NVLink, ICI, Infinity Fabric)
  double tdp = 0;               // watts
  double idle_power = 0;        // watts (0 = 30 % of TDP)
  double price = 0;             // USD to buy one (capex), 0 = unknown
  double kernel_overhead = 0;   // seconds added to every kernel (launch + tail)
  // Watts the board is held to (nvidia-smi -pl); 0 = tdp. Below the TDP the
  // compute clock drops (ClockFraction in device_model.h); the efficiency
  // curves are taken to be measured at the TDP.
  double power_cap = 0;
  // Fractional slowdown of compute kernels while a collective runs beside
  // them on the same device (the collective's kernels hold SMs and HBM
  // bandwidth): 0.2 = the overlapped compute takes 1.2x as long. 0 = none
  // (collectives driven by DMA engines).
  double overlap_slowdown = 0;
  // Elements per second that PyTorch's non-vectorized element-wise kernels
  // process (dtype-converting copies, broadcast or strided operands:
  // models::Op::unvec_elements): they load one element per thread and
  // instruction and run below the memory bandwidth, at a rate of elements
  // rather than bytes. 0 = priced by bytes at memory_efficiency like the
  // vectorized ones.
  double unvectorized_element_rate = 0;
  Roofline roofline = Roofline::kMax;
  // Achieved fraction of peak as a function of GEMM size 2*M*N*K (FLOP).
  Curve gemm_efficiency;
  // Achieved fraction of the FP8 peak by GEMM size; empty = gemm_efficiency.
  // FP8 GEMMs reach a smaller fraction of their (doubled) peak than BF16 ones.
  Curve gemm_efficiency_fp8;
  // Achieved fraction of the FP8 peak by GEMM size for MXFP8 GEMMs (FP8
  // operands with one E8M0 scale per 32 elements along K, OCP Microscaling
  // Formats v1.0; a training plan's fp8_recipe mxfp8); empty =
  // gemm_efficiency_fp8. Block-scaled kernels load and apply the scales in
  // their main loop and run slower than per-tensor FP8 ones at the same
  // shapes (Transformer Engine's GEMM benchmark on Blackwell: 0.951 of the
  // per-tensor rate, configs/devices/b200.yaml).
  Curve gemm_efficiency_mxfp8;
  // Achieved fraction of the FP4 (NVFP4/MXFP4) peak by GEMM size; empty =
  // gemm_efficiency_fp8, then gemm_efficiency. Block-scaled FP4 GEMMs reach a
  // smaller fraction of their peak than FP8 ones (B200: about 0.44 of the
  // dense FP4 peak against 0.6 for BF16, vLLM PR #20646).
  Curve gemm_efficiency_fp4;
  // Achieved fraction of memory_bandwidth as a function of bytes moved.
  Curve memory_efficiency;
  // Achieved fraction of peak of fused (FlashAttention) attention kernels,
  // forward and backward.
  double flash_attention_efficiency = 0.5;
  double flash_attention_bwd_efficiency = 0.4;
  // The same for the FlashAttention-2 kernels (Dao 2023, the flash-attn
  // package; a plan's attention: flash2), which do not use Hopper's
  // asynchronous tensor-core instructions and so reach a smaller fraction of
  // a Hopper's peak than cuDNN / FlashAttention-3 (Shah et al. 2024,
  // arXiv 2407.08608, Sec. 1 and Fig. 5). 0 = the flash_attention_* values
  // (on A100 FlashAttention-2 is the fused kernel those describe).
  double flash2_attention_efficiency = 0;
  double flash2_attention_bwd_efficiency = 0;
  // Factors on those fractions by the sequence length one kernel call
  // attends over (tokens; FlashAttentionTime's seq_len), 1 at the length the
  // constant was read at: short sequences give each query block few
  // key/value blocks, so its prologue (loading Q) and epilogue (rescaling and
  // writing O) and, under a causal mask, the diagonal block it computes whole
  // but uses half of weigh more (Dao 2023, arXiv 2307.08691, Sec. 3.1-3.2;
  // measured: Shah et al. 2024, arXiv 2407.08608, Figs. 5-6). Empty = the
  // constant at every length. A flash2 factor belongs to the FlashAttention-2
  // kernels as flash2_attention_* does.
  Curve flash_attention_length_factor;
  Curve flash_attention_bwd_length_factor;
  Curve flash2_attention_length_factor;
  Curve flash2_attention_bwd_length_factor;
};

// Watts of a device that waits (pipeline bubbles, the slowest stage or pool,
// restarts): `idle_power`, else 30 % of the TDP. The 30 % is an assumption,
// not a measurement: this repository's H200 drew 79 W of 700 W (11 %) with
// no process and 149 W (21 %) at full clocks under light load
// (hardware/calibration/measurements/h200/); a device waiting in a bubble
// keeps its clocks up and spins in a communication kernel, so it is put
// above both. Set idle_power to a measurement of your own.
inline double IdlePower(const DeviceSpec& d) { return d.idle_power > 0 ? d.idle_power : 0.3 * d.tdp; }

// Peak FLOP/s for a datatype (falls back: fp16 -> bf16). 0 when unsupported.
inline double PeakFlops(const DeviceSpec& d, DataType t) {
  switch (t) {
    case DataType::kFp32: return d.peak_fp32;
    case DataType::kTf32: return d.peak_tf32;
    case DataType::kBf16: return d.peak_bf16;
    case DataType::kFp16: return d.peak_fp16 > 0 ? d.peak_fp16 : d.peak_bf16;
    case DataType::kFp8: return d.peak_fp8;
    case DataType::kInt8:
    case DataType::kInt4: return d.peak_int8;
    case DataType::kFp4:
    case DataType::kMxfp4: return d.peak_fp4;
  }
  return 0;
}

const base::Schema<DeviceSpec>& DeviceSchema();

// Keys parsed by ParseDevice itself, not by the schema (the curves).
const std::vector<std::string>& DeviceCurveKeys();

// Parses a `device:` map: schema keys plus the efficiency curves, written as
// a sequence of [size, efficiency] pairs, e.g.
//   gemm_efficiency: [[1 GFLOP, 0.30], [1 TFLOP, 0.80]]
// `extra_keys` are keys the caller parses (a preset file's naming keys).
// `over_base`: `out` holds the device the map is written `like:`; the map
// changes only the keys it states.
void ParseDevice(const YAML::Node& map, const std::string& path, const std::string& file,
                 DeviceSpec& out, base::Diagnostics& diags,
                 const std::vector<std::string>& extra_keys = {}, bool over_base = false);

// Cross-key checks (curves sorted, efficiencies in (0, 1], bf16 peak set).
void CheckDevice(const DeviceSpec& d, const std::string& path, const base::SourceLocation& where,
                 base::Diagnostics& diags);

}  // namespace orrery::hardware
