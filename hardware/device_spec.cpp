#include "hardware/device_spec.h"

#include <cmath>

#include "core/base/yaml_source.h"
#include "hardware/curve_yaml.h"

namespace orrery::hardware {

using base::Dimension;

const char* DataTypeName(DataType t) {
  switch (t) {
    case DataType::kFp32: return "fp32";
    case DataType::kTf32: return "tf32";
    case DataType::kBf16: return "bf16";
    case DataType::kFp16: return "fp16";
    case DataType::kFp8: return "fp8";
    case DataType::kInt8: return "int8";
    case DataType::kInt4: return "int4";
    case DataType::kFp4: return "fp4";
    case DataType::kMxfp4: return "mxfp4";
  }
  return "?";
}

std::vector<std::pair<std::string, DataType>> DataTypeNames() {
  return {{"fp32", DataType::kFp32}, {"tf32", DataType::kTf32}, {"bf16", DataType::kBf16},
          {"fp16", DataType::kFp16}, {"fp8", DataType::kFp8},   {"int8", DataType::kInt8},
          {"int4", DataType::kInt4}, {"fp4", DataType::kFp4},   {"mxfp4", DataType::kMxfp4}};
}

void Curve::Finish() {
  log_steps.clear();
  for (size_t i = 1; i < x.size(); ++i) log_steps.push_back(std::log(x[i] / x[i - 1]));
}

const base::Schema<DeviceSpec>& DeviceSchema() {
  static const base::Schema<DeviceSpec> schema = [] {
    base::Schema<DeviceSpec> s("device", "An accelerator: peak rates, memory, power, efficiency curves.");
    const double inf = std::numeric_limits<double>::infinity();
    s.String("name", &DeviceSpec::name, "", "Name shown in reports.")
        .String("citation", &DeviceSpec::citation, "", "Sources of the numbers.")
        .Quantity("peak_bf16", &DeviceSpec::peak_bf16, Dimension::kFlopRate, 0, 1e19, "",
                  "Dense BF16 tensor peak.", true)
        .Quantity("peak_fp16", &DeviceSpec::peak_fp16, Dimension::kFlopRate, 0, 1e19, "0 FLOP/s",
                  "Dense FP16 tensor peak; 0 = same as peak_bf16.")
        .Quantity("peak_fp8", &DeviceSpec::peak_fp8, Dimension::kFlopRate, 0, 1e19, "0 FLOP/s",
                  "Dense FP8 tensor peak; 0 = unsupported.")
        .Bool("fp8_any_layout", &DeviceSpec::fp8_any_layout, "false",
              "FP8 tensor-core GEMMs take their operands in any layout (Blackwell sm_100: true), so "
              "Transformer Engine writes per-tensor FP8 operands row-wise only (3 B per element cast); "
              "false = TN only (Hopper, Ada): a second, transposed copy for the weight gradient (4 B).")
        .Quantity("peak_int8", &DeviceSpec::peak_int8, Dimension::kFlopRate, 0, 1e19, "0 FLOP/s",
                  "Dense INT8 tensor peak (OP/s); 0 = unsupported.")
        .Quantity("peak_fp4", &DeviceSpec::peak_fp4, Dimension::kFlopRate, 0, 1e19, "0 FLOP/s",
                  "Dense FP4 tensor peak (NVFP4/MXFP4 block-scaled, Blackwell); 0 = none.")
        .Quantity("peak_tf32", &DeviceSpec::peak_tf32, Dimension::kFlopRate, 0, 1e19, "0 FLOP/s",
                  "Dense TF32 tensor peak; 0 = unsupported.")
        .Quantity("peak_fp32", &DeviceSpec::peak_fp32, Dimension::kFlopRate, 0, 1e19, "0 FLOP/s",
                  "Non-tensor FP32 peak: the compute peak of a plan in fp32 (training.precision=fp32).")
        .Quantity("memory_capacity", &DeviceSpec::memory_capacity, Dimension::kBytes, 0, 1e15, "",
                  "Device memory (HBM) capacity.", true)
        .Quantity("memory_bandwidth", &DeviceSpec::memory_bandwidth, Dimension::kBandwidth, 0,
                  1e15, "", "Device memory bandwidth (datasheet).", true)
        .Quantity("l2_cache", &DeviceSpec::l2_cache, Dimension::kBytes, 0, 1e12, "0 B",
                  "Last-level on-chip cache.")
        .Quantity("scaleup_bandwidth", &DeviceSpec::scaleup_bandwidth, Dimension::kBandwidth, 0,
                  1e15, "0 B/s", "Scale-up link bandwidth per direction per device (NVLink, ICI); caps the "
                  "innermost network tier's per-device bandwidth. 0 = no cap.")
        .Quantity("tdp", &DeviceSpec::tdp, Dimension::kPower, 0, 1e5, "0 W", "Board power (TDP).")
        .Quantity("idle_power", &DeviceSpec::idle_power, Dimension::kPower, 0, 1e5, "0 W",
                  "Power when idle; 0 = 30 % of TDP.")
        .Quantity("price", &DeviceSpec::price, Dimension::kMoney, 0, 1e9, "0 USD",
                  "Purchase price of one device (0 = unknown).")
        .Quantity("kernel_overhead", &DeviceSpec::kernel_overhead, Dimension::kTime, 0, 1, "0 s",
                  "Fixed time added to every kernel (launch and tail).")
        .Quantity("power_cap", &DeviceSpec::power_cap, Dimension::kPower, 0, 1e5, "0 W",
                  "Power limit the board is held to (nvidia-smi -pl); 0 = tdp. A cap below the TDP "
                  "lowers the compute clock by the cube root of the dynamic-power ratio (GEMM and "
                  "attention time grow; memory-bound kernels do not) and the energy is counted at the cap.")
        .Real("overlap_slowdown", &DeviceSpec::overlap_slowdown, 0, 1, "0",
              "Fractional slowdown of compute that runs beside a collective (the collective's kernels "
              "hold SMs and memory bandwidth): 0.19 = overlapped compute takes 1.19x as long. Charged on "
              "every overlapped TP, DP and ZeRO-3 collective. 0 = none.")
        .Real("unvectorized_element_rate", &DeviceSpec::unvectorized_element_rate, 0, 1e15, "0",
              "Elements per second PyTorch's non-vectorized element-wise kernels process (dtype-converting "
              "copies, broadcast or strided operands), which eager code's norms, rotary embedding and "
              "repeat_kv run (training.elementwise: eager); they are bound by elements, not bytes. 0 = "
              "priced by bytes at memory_efficiency.")
        .Enum<Roofline>("roofline", &DeviceSpec::roofline,
                        {{"max", Roofline::kMax}, {"sum", Roofline::kSum}}, "max",
                        "Combine compute and memory time of a kernel: max (overlapped) or sum.")
        .Real("flash_attention_efficiency", &DeviceSpec::flash_attention_efficiency, 0, 1, "0.5",
              "Fraction of peak reached by fused attention, forward; flash_attention_length_factor "
              "([sequence length, factor] pairs) scales it by the sequence length.", true)
        .Real("flash_attention_bwd_efficiency", &DeviceSpec::flash_attention_bwd_efficiency, 0, 1,
              "0.4", "Fraction of peak reached by fused attention, backward; "
              "flash_attention_bwd_length_factor scales it by the sequence length.", true)
        .Real("flash2_attention_efficiency", &DeviceSpec::flash2_attention_efficiency, 0, 1, "0",
              "Fraction of peak reached by the FlashAttention-2 kernels (training.attention: flash2), "
              "forward; 0 = flash_attention_efficiency. Below it on Hopper (Shah et al. 2024, Fig. 5).")
        .Real("flash2_attention_bwd_efficiency", &DeviceSpec::flash2_attention_bwd_efficiency, 0, 1, "0",
              "Fraction of peak reached by the FlashAttention-2 kernels, backward; 0 = "
              "flash_attention_bwd_efficiency.");
    (void)inf;
    return s;
  }();
  return schema;
}

const std::vector<std::string>& DeviceCurveKeys() {
  static const std::vector<std::string> keys = {
      "gemm_efficiency",       "gemm_efficiency_fp8",       "gemm_efficiency_mxfp8",       "gemm_efficiency_fp4",
      "memory_efficiency",     "flash_attention_length_factor",     "flash_attention_bwd_length_factor",
      "flash2_attention_length_factor", "flash2_attention_bwd_length_factor"};
  return keys;
}

void ParseDevice(const YAML::Node& map, const std::string& path, const std::string& file,
                 DeviceSpec& out, base::Diagnostics& diags,
                 const std::vector<std::string>& extra_keys, bool over_base) {
  std::vector<std::string> elsewhere = DeviceCurveKeys();
  elsewhere.insert(elsewhere.end(), extra_keys.begin(), extra_keys.end());
  DeviceSchema().Parse(map, path, file, out, diags, elsewhere, over_base);
  if (!map.IsMap()) return;
  // The device's curves: [FLOP, fraction] for the GEMMs, [bytes, fraction]
  // for memory, [tokens, factor] for the fused attention kernels (factors on
  // their flash*_attention_*efficiency, up to 2).
  struct CurveKey {
    const char* key;
    Dimension x_dim;
    const char* x_name;
    const char* example;
    Curve DeviceSpec::*curve;
    double max_y;
  };
  static constexpr CurveKey kCurves[] = {
      {"gemm_efficiency", Dimension::kFlops, "size", "[1 GFLOP, 0.5]", &DeviceSpec::gemm_efficiency, 1.0},
      {"gemm_efficiency_fp8", Dimension::kFlops, "size", "[1 GFLOP, 0.5]", &DeviceSpec::gemm_efficiency_fp8, 1.0},
      {"gemm_efficiency_mxfp8", Dimension::kFlops, "size", "[1 GFLOP, 0.5]", &DeviceSpec::gemm_efficiency_mxfp8, 1.0},
      {"gemm_efficiency_fp4", Dimension::kFlops, "size", "[1 GFLOP, 0.5]", &DeviceSpec::gemm_efficiency_fp4, 1.0},
      {"memory_efficiency", Dimension::kBytes, "size", "[1 GFLOP, 0.5]", &DeviceSpec::memory_efficiency, 1.0},
      {"flash_attention_length_factor", Dimension::kDimensionless, "sequence length", "[4096, 1]",
       &DeviceSpec::flash_attention_length_factor, 2.0},
      {"flash_attention_bwd_length_factor", Dimension::kDimensionless, "sequence length", "[4096, 1]",
       &DeviceSpec::flash_attention_bwd_length_factor, 2.0},
      {"flash2_attention_length_factor", Dimension::kDimensionless, "sequence length", "[4096, 1]",
       &DeviceSpec::flash2_attention_length_factor, 2.0},
      {"flash2_attention_bwd_length_factor", Dimension::kDimensionless, "sequence length", "[4096, 1]",
       &DeviceSpec::flash2_attention_bwd_length_factor, 2.0},
  };
  for (const CurveKey& c : kCurves)
    if (const YAML::Node node = map[c.key])
      ParseEfficiencyCurve(node, path + "." + c.key, file, c.x_dim, c.x_name, c.example, out.*c.curve,
                           diags, c.max_y);
}

namespace {

double LargestY(const Curve& c) {
  double m = 0;
  for (double y : c.y) m = y > m ? y : m;
  return m;
}

// A length factor scales the attention kernel's fraction of peak
// (FlashAttentionTime, device_model.cpp); the product must stay a fraction:
// no kernel runs above the device's peak.
void CheckAttentionFactor(const Curve& factor, double efficiency, const char* factor_key,
                          const char* efficiency_key, const std::string& path,
                          const base::SourceLocation& where, base::Diagnostics& diags) {
  const double top = LargestY(factor);
  if (factor.empty() || efficiency <= 0 || top * efficiency <= 1) return;
  diags.Add(where, path + "." + factor_key, base::FormatNumber(top),
            std::string("times ") + efficiency_key + " (" + base::FormatNumber(efficiency) + ") is " +
                base::FormatNumber(top * efficiency) +
                ": the kernel would run above the device's peak; the product must be at most 1");
}

}  // namespace

void CheckDevice(const DeviceSpec& d, const std::string& path, const base::SourceLocation& where,
                 base::Diagnostics& diags) {
  // The fused kernel's pairs, then the FlashAttention-2 kernels', which take
  // the fused kernel's efficiency or factor where they have none of their own
  // (FlashAttentionTime).
  CheckAttentionFactor(d.flash_attention_length_factor, d.flash_attention_efficiency,
                       "flash_attention_length_factor", "flash_attention_efficiency", path, where, diags);
  CheckAttentionFactor(d.flash_attention_bwd_length_factor, d.flash_attention_bwd_efficiency,
                       "flash_attention_bwd_length_factor", "flash_attention_bwd_efficiency", path, where,
                       diags);
  const bool own_fwd = d.flash2_attention_efficiency > 0;
  const bool own_bwd = d.flash2_attention_bwd_efficiency > 0;
  if (own_fwd || !d.flash2_attention_length_factor.empty())
    CheckAttentionFactor(
        d.flash2_attention_length_factor.empty() ? d.flash_attention_length_factor : d.flash2_attention_length_factor,
        own_fwd ? d.flash2_attention_efficiency : d.flash_attention_efficiency,
        d.flash2_attention_length_factor.empty() ? "flash_attention_length_factor" : "flash2_attention_length_factor",
        own_fwd ? "flash2_attention_efficiency" : "flash_attention_efficiency", path, where, diags);
  if (own_bwd || !d.flash2_attention_bwd_length_factor.empty())
    CheckAttentionFactor(d.flash2_attention_bwd_length_factor.empty() ? d.flash_attention_bwd_length_factor
                                                                      : d.flash2_attention_bwd_length_factor,
                         own_bwd ? d.flash2_attention_bwd_efficiency : d.flash_attention_bwd_efficiency,
                         d.flash2_attention_bwd_length_factor.empty() ? "flash_attention_bwd_length_factor"
                                                                      : "flash2_attention_bwd_length_factor",
                         own_bwd ? "flash2_attention_bwd_efficiency" : "flash_attention_bwd_efficiency", path,
                         where, diags);
  if (d.peak_fp32 > d.peak_bf16 && d.peak_bf16 > 0)
    diags.Add(where, path + ".peak_fp32", base::FormatQuantity(d.peak_fp32, Dimension::kFlopRate),
              "non-tensor FP32 peak above the BF16 tensor peak is implausible");
  // A cap must leave the compute clock running: above the idle power, and
  // it needs the TDP it is measured against.
  if (d.power_cap > 0) {
    const double idle = IdlePower(d);
    if (d.tdp <= 0)
      diags.Add(where, path + ".power_cap", base::FormatQuantity(d.power_cap, Dimension::kPower),
                "a power cap needs the device's tdp (the power its efficiency curves were measured at)");
    else if (d.power_cap <= idle)
      diags.Add(where, path + ".power_cap", base::FormatQuantity(d.power_cap, Dimension::kPower),
                "must be above the idle power (" + base::FormatQuantity(idle, Dimension::kPower) + ")");
  }
}

}  // namespace orrery::hardware
