#pragma once
// The importer: turns probe records (probe_record.h) into the efficiency
// tables and rates of a device profile (hardware/device_spec.h), so that the
// estimator uses a measured machine exactly like a preset.
//
// The device model it feeds (hardware/device_model.h, a roofline after
// Williams et al. 2009) charges a kernel
//
//   t = max(flop / (peak x eff_gemm(flop)), bytes / (bw x eff_mem(bytes))) + overhead
//
// so the fit inverts exactly that, record by record:
//
//   overhead    = median over the pure data-movement kernels (copy, scale,
//                 triad, d2d_copy) of the kernel's median [t - bytes / best_bw]
//                 over its overhead-dominated sizes (bytes / best_bw < t / 2),
//                 floored at 0: the time a small kernel takes beyond moving
//                 its bytes (launch, fork/join, tail).
//   eff_gemm(x) = median, over the GEMMs of one datatype in a log-spaced bin
//                 of size x = 2 m n k that are not memory-bound (flop/bytes >=
//                 ridge = peak / bw), of flop / ((t - overhead) x peak).
//                 The same over fp8_e4m3 GEMMs against peak_fp8 gives
//                 gemm_efficiency_fp8, when the probe has them.
//   eff_mem(x)  = median, over data-movement kernels in a bin of bytes moved
//                 x whose traffic is at least twice the last-level cache (so
//                 it comes from memory, not cache; the cache is the base's
//                 l2_cache, else the probe header's l2_bytes or llc_bytes,
//                 else unknown and only traffic within a factor of two of
//                 the largest counts), of
//                 bytes / ((t - overhead) x bw).
//
// Efficiencies are clamped to (0, 1]. This is the derivation by which the
// GH100 presets' curves were first made by hand from the H200 measurements
// (configs/devices/h100-sxm.yaml comments); calibration_import_test.cpp
// reproduces those curves from hardware/calibration/measurements/h200/.
//
// On a CPU there is no datasheet to start from, so with `measure_peaks` the
// fit also sets the peaks: peak_fp32 = the best fp32 GEMM rate measured, and
// memory_bandwidth = the best STREAM rate at sizes beyond the last-level
// cache (McCalpin's STREAM convention: bytes counted, write-allocate not).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hardware/device_spec.h"
#include "probe_record.h"
#include "probe_record_json.h"

namespace orrery::calibration {

// How points are grouped along a curve's size axis.
struct BinSpec {
  // Bins of equal width in log10(size): index floor(per_decade * log10(size)).
  // Each bin's point sits at the geometric mean of its members' sizes.
  int per_decade = 2;
  // When not empty: each point joins the nearest centre in log(size), and the
  // curve's sizes are these centres (empty bins are left out). Must be > 0
  // and strictly increasing.
  std::vector<double> centres;
};

// Which order statistic of a record's samples stands for its time.
enum class TimeStatistic { kMedian, kMin };

struct FitOptions {
  // GEMM datatype whose records set gemm_efficiency ("bf16", "fp16", "tf32",
  // "fp8_e4m3", "fp32"). Empty: bf16 when the probe has bf16 GEMMs, else fp32.
  std::string gemm_dtype;
  // Seconds to subtract from every time; unset: measured (see above).
  std::optional<double> kernel_overhead_s;
  BinSpec gemm_bins;
  BinSpec memory_bins;
  // Record kinds that measure memory bandwidth.
  std::vector<std::string> memory_kinds = {"copy", "scale", "triad", "d2d_copy"};
  // CPU: set peak_fp32 (and peak_bf16 as its stand-in) and memory_bandwidth
  // from the probe instead of taking them from the base device.
  bool measure_peaks = false;
  // Median (default) or minimum of each record's samples. The minimum is the
  // better estimate of an unloaded machine's time on a shared, busy host.
  TimeStatistic statistic = TimeStatistic::kMedian;
};

// One point of a fitted curve and how many records it summarises.
struct CurvePoint {
  double size = 0;        // FLOP (GEMM) or bytes moved (memory)
  double efficiency = 0;  // in (0, 1]
  int records = 0;
};

struct FitResult {
  bool ok = false;
  std::string error;  // names the option or record at fault when !ok
  hardware::DeviceSpec device;  // the base with measured values replaced

  // Provenance, for the profile's comments and the command's report.
  double kernel_overhead_s = 0;
  bool overhead_measured = false;
  double best_memory_rate = 0;  // bytes/s, best data-movement rate beyond cache
  std::string gemm_dtype;
  double gemm_peak = 0;         // FLOP/s the GEMM efficiencies are relative to
  double ridge = 0;             // FLOP/byte: GEMMs below it count as memory-bound
  int gemm_records = 0;         // GEMMs of gemm_dtype in the probe
  int gemm_used = 0;            // ... that entered the curve
  int gemm_memory_bound = 0;    // ... left out as memory-bound
  std::vector<CurvePoint> gemm_curve;
  // The FP8 curve (gemm_efficiency_fp8), from fp8_e4m3 GEMMs against peak_fp8.
  int fp8_records = 0, fp8_used = 0, fp8_memory_bound = 0;
  double fp8_peak = 0, fp8_ridge = 0;
  std::vector<CurvePoint> gemm_fp8_curve;
  int memory_records = 0;       // data-movement records in the probe
  int memory_used = 0;
  int memory_cache_resident = 0;  // left out: traffic under twice the cache
  double cache_bytes = 0;         // the cache size used for that rule
  std::vector<CurvePoint> memory_curve;
};

// Groups (size, efficiency) pairs into bins and takes each bin's median
// efficiency. Pairs with size <= 0 are ignored. Sorted by size.
std::vector<CurvePoint> BinMedians(const std::vector<std::pair<double, double>>& points,
                                   const BinSpec& bins);

// The time a record stands for under `statistic`.
double RecordTime(const ProbeRecord& r, TimeStatistic statistic);

// Measured per-kernel overhead in seconds (see the top of this file), or
// nullopt when the records hold no data-movement kernels. `cache_bytes`
// decides which records count as memory-sized when finding the best rate.
std::optional<double> MeasureKernelOverhead(const std::vector<ProbeRecord>& records,
                                            const std::vector<std::string>& kinds,
                                            double cache_bytes, TimeStatistic statistic);

// Fits the profile. `base` supplies everything the probe does not measure
// (capacity, power, prices, attention efficiencies, and — unless
// `measure_peaks` — the peaks and memory bandwidth the efficiencies are
// relative to). Never throws; !ok with a message when nothing can be fitted.
FitResult FitDeviceProfile(const ProbeFile& probe, const hardware::DeviceSpec& base,
                           const FitOptions& options);

// A CPU device built from a CPU probe's header alone: name, the memory size
// and the last-level cache the probe recorded. Peaks come from the fit
// (measure_peaks). Attention efficiencies keep the schema defaults.
hardware::DeviceSpec CpuBaseDevice(const ProbeHeader& header);

// The header's `extra` value for `key`, or empty.
std::string HeaderExtra(const ProbeHeader& header, const std::string& key);

}  // namespace orrery::calibration
