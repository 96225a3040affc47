#include "profile_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "sample_stats.h"

namespace orrery::calibration {
namespace {

using hardware::DataType;

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The device model's datatype for a probe dtype, or nullopt (fp64, u8).
std::optional<DataType> ModelDataType(const std::string& dtype) {
  if (dtype == "bf16") return DataType::kBf16;
  if (dtype == "fp16") return DataType::kFp16;
  if (dtype == "tf32") return DataType::kTf32;
  if (dtype == "fp8_e4m3") return DataType::kFp8;
  if (dtype == "fp32") return DataType::kFp32;
  return std::nullopt;
}

std::string CheckBins(const BinSpec& b, const char* name) {
  if (b.centres.empty()) {
    if (b.per_decade < 1 || b.per_decade > 20)
      return std::string(name) + ": bins per decade must be in [1, 20], got " +
             std::to_string(b.per_decade);
    return {};
  }
  for (size_t i = 0; i < b.centres.size(); ++i) {
    if (!(b.centres[i] > 0) || !std::isfinite(b.centres[i]))
      return std::string(name) + ": bin centres must be finite and > 0";
    if (i > 0 && b.centres[i] <= b.centres[i - 1])
      return std::string(name) + ": bin centres must increase";
  }
  return {};
}

// GEMM efficiencies of one datatype (see the header for the formula).
struct GemmFit {
  int records = 0, used = 0, memory_bound = 0;
  std::vector<CurvePoint> curve;
};

GemmFit FitGemm(const std::vector<ProbeRecord>& records, const std::string& dtype, double peak, double ridge,
                double overhead, const BinSpec& bins, TimeStatistic stat) {
  GemmFit fit;
  std::vector<std::pair<double, double>> points;
  for (const ProbeRecord& r : records) {
    if (r.kind != "gemm" || r.dtype != dtype) continue;
    ++fit.records;
    const double t = RecordTime(r, stat);
    if (!(r.flop > 0) || !(r.bytes > 0) || !(t > overhead)) continue;
    if (r.flop / r.bytes < ridge) {
      ++fit.memory_bound;
      continue;
    }
    points.emplace_back(r.flop, std::min(1.0, r.flop / ((t - overhead) * peak)));
  }
  fit.used = static_cast<int>(points.size());
  fit.curve = BinMedians(points, bins);
  return fit;
}

hardware::Curve ToCurve(const std::vector<CurvePoint>& points) {
  hardware::Curve c;
  for (const CurvePoint& p : points) {
    c.x.push_back(p.size);
    c.y.push_back(p.efficiency);
  }
  c.Finish();
  return c;
}

}  // namespace

std::string HeaderExtra(const ProbeHeader& header, const std::string& key) {
  for (const auto& [k, v] : header.extra)
    if (k == key) return v;
  return {};
}

double RecordTime(const ProbeRecord& r, TimeStatistic statistic) {
  return statistic == TimeStatistic::kMin ? r.min_s : r.median_s;
}

std::vector<CurvePoint> BinMedians(const std::vector<std::pair<double, double>>& points,
                                   const BinSpec& bins) {
  // Bin index -> members. With centres the index is the nearest centre; else
  // floor(per_decade * log10(size)) (a tiny epsilon keeps exact powers of ten
  // such as 1e9 in the bin they start, despite rounding in log10).
  std::map<long, std::vector<std::pair<double, double>>> groups;
  for (const auto& [size, eff] : points) {
    if (!(size > 0) || !std::isfinite(eff)) continue;
    long index = 0;
    if (!bins.centres.empty()) {
      double best = INFINITY;
      for (size_t i = 0; i < bins.centres.size(); ++i) {
        const double d = std::fabs(std::log(size / bins.centres[i]));
        if (d < best) {
          best = d;
          index = static_cast<long>(i);
        }
      }
    } else {
      index = static_cast<long>(std::floor(bins.per_decade * std::log10(size) + 1e-9));
    }
    groups[index].emplace_back(size, eff);
  }
  std::vector<CurvePoint> out;
  for (const auto& [index, members] : groups) {
    CurvePoint p;
    p.records = static_cast<int>(members.size());
    std::vector<double> effs;
    double log_sum = 0;
    for (const auto& [size, eff] : members) {
      effs.push_back(eff);
      log_sum += std::log(size);
    }
    p.size = bins.centres.empty() ? std::exp(log_sum / static_cast<double>(members.size()))
                                  : bins.centres[static_cast<size_t>(index)];
    p.efficiency = Percentile(effs, 0.5);
    out.push_back(p);
  }
  return out;
}

std::optional<double> MeasureKernelOverhead(const std::vector<ProbeRecord>& records,
                                            const std::vector<std::string>& kinds,
                                            double cache_bytes, TimeStatistic statistic) {
  // Best rate among memory-sized data-movement records (all of them when
  // none is larger than the cache).
  double best = 0, best_any = 0;
  for (const ProbeRecord& r : records) {
    if (!Contains(kinds, r.kind)) continue;
    const double t = RecordTime(r, statistic);
    if (!(t > 0) || !(r.bytes > 0)) continue;
    const double rate = r.bytes / t;
    best_any = std::max(best_any, rate);
    if (r.bytes >= 2 * cache_bytes) best = std::max(best, rate);
  }
  if (best <= 0) best = best_any;
  if (best <= 0) return std::nullopt;
  // Per kind, the records that are overhead-dominated (moving the bytes at
  // the best rate takes under half their time): the median of their time
  // beyond the transfer. A probe whose smallest sizes are large (the CUDA
  // probe's quick grid) has none for some kinds; those kinds are left out.
  std::map<std::string, std::vector<double>> beyond_by_kind;
  for (const ProbeRecord& r : records) {
    if (!Contains(kinds, r.kind)) continue;
    const double t = RecordTime(r, statistic);
    if (!(t > 0) || !(r.bytes > 0) || r.bytes / best >= 0.5 * t) continue;
    beyond_by_kind[r.kind].push_back(t - r.bytes / best);
  }
  if (beyond_by_kind.empty()) return std::nullopt;
  std::vector<double> per_kind;
  per_kind.reserve(beyond_by_kind.size());
  for (const auto& [kind, beyond] : beyond_by_kind) per_kind.push_back(Percentile(beyond, 0.5));
  return std::max(0.0, Percentile(per_kind, 0.5));
}

hardware::DeviceSpec CpuBaseDevice(const ProbeHeader& header) {
  hardware::DeviceSpec d;
  hardware::DeviceSchema().ApplyDefaults(d);
  d.name = header.device.empty() ? "CPU" : header.device;
  d.name += " (" + std::to_string(header.threads) + " threads)";
  d.memory_capacity = std::strtod(HeaderExtra(header, "memory_total_bytes").c_str(), nullptr);
  d.l2_cache = std::strtod(HeaderExtra(header, "llc_bytes").c_str(), nullptr);
  d.roofline = hardware::Roofline::kMax;
  return d;
}

FitResult FitDeviceProfile(const ProbeFile& probe, const hardware::DeviceSpec& base,
                           const FitOptions& options) {
  FitResult res;
  res.device = base;
  if (std::string e = CheckBins(options.gemm_bins, "gemm bins"); !e.empty()) {
    res.error = e;
    return res;
  }
  if (std::string e = CheckBins(options.memory_bins, "memory bins"); !e.empty()) {
    res.error = e;
    return res;
  }
  if (options.kernel_overhead_s && !(*options.kernel_overhead_s >= 0 && *options.kernel_overhead_s < 1)) {
    res.error = "kernel overhead must be in [0, 1) s";
    return res;
  }
  const std::vector<ProbeRecord>& records = probe.records;
  const TimeStatistic stat = options.statistic;

  // --- memory: best rate beyond the cache, and the per-kernel overhead ------
  // The cache: the base's last-level cache, else what the probe recorded
  // (CUDA: l2_bytes, CPU: llc_bytes), else unknown: then only the largest
  // data-movement size counts as coming from memory.
  res.cache_bytes = base.l2_cache;
  for (const char* key : {"l2_bytes", "llc_bytes"}) {
    if (res.cache_bytes <= 0) res.cache_bytes = std::strtod(HeaderExtra(probe.header, key).c_str(), nullptr);
  }
  if (!(res.cache_bytes > 0)) {
    double largest = 0;
    for (const ProbeRecord& r : records)
      if (Contains(options.memory_kinds, r.kind)) largest = std::max(largest, r.bytes);
    res.cache_bytes = largest / 4;  // traffic within 2x of the largest counts
  }
  double best_any = 0;
  for (const ProbeRecord& r : records) {
    if (!Contains(options.memory_kinds, r.kind)) continue;
    const double t = RecordTime(r, stat);
    if (!(t > 0) || !(r.bytes > 0)) continue;
    ++res.memory_records;
    best_any = std::max(best_any, r.bytes / t);
    if (r.bytes >= 2 * res.cache_bytes) res.best_memory_rate = std::max(res.best_memory_rate, r.bytes / t);
  }
  if (res.best_memory_rate <= 0) res.best_memory_rate = best_any;
  if (options.kernel_overhead_s) {
    res.kernel_overhead_s = *options.kernel_overhead_s;
  } else if (auto o = MeasureKernelOverhead(records, options.memory_kinds, res.cache_bytes, stat)) {
    res.kernel_overhead_s = *o;
    res.overhead_measured = true;
  } else {
    res.kernel_overhead_s = base.kernel_overhead;
  }
  const double overhead = res.kernel_overhead_s;
  res.device.kernel_overhead = overhead;

  // --- peaks -----------------------------------------------------------------
  double best_fp32 = 0;
  bool any_bf16 = false;
  for (const ProbeRecord& r : records) {
    if (r.kind != "gemm") continue;
    any_bf16 = any_bf16 || r.dtype == "bf16";
    const double t = RecordTime(r, stat);
    if (r.dtype == "fp32" && t > 0) best_fp32 = std::max(best_fp32, r.flop / t);
  }
  if (options.measure_peaks) {
    if (best_fp32 <= 0) {
      res.error = "the probe has no fp32 GEMM records to measure peak_fp32 from";
      return res;
    }
    if (res.best_memory_rate <= 0) {
      res.error = "the probe has no copy/scale/triad records to measure memory_bandwidth from";
      return res;
    }
    res.device.peak_fp32 = best_fp32;
    // Stand-in: the probe times no bf16 GEMM (Eigen has no bf16 kernel), and
    // the profile must name a bf16 peak.
    res.device.peak_bf16 = best_fp32;
    res.device.memory_bandwidth = res.best_memory_rate;
  }
  const double bw = res.device.memory_bandwidth;
  if (!(bw > 0)) {
    res.error = "the base device has no memory_bandwidth to relate the measurements to";
    return res;
  }

  // --- GEMM efficiency ---------------------------------------------------------
  res.gemm_dtype = options.gemm_dtype.empty() ? (any_bf16 ? "bf16" : "fp32") : options.gemm_dtype;
  const std::optional<DataType> dt = ModelDataType(res.gemm_dtype);
  if (!dt) {
    res.error = "gemm dtype '" + res.gemm_dtype +
                "' has no peak in a device profile (expected bf16, fp16, tf32, fp8_e4m3 or fp32)";
    return res;
  }
  res.gemm_peak = hardware::PeakFlops(res.device, *dt);
  if (!(res.gemm_peak > 0)) {
    res.error = "the device has no peak for " + res.gemm_dtype +
                " (set it in the base profile, or choose another --gemm-dtype)";
    return res;
  }
  res.ridge = res.gemm_peak / bw;
  const GemmFit main = FitGemm(records, res.gemm_dtype, res.gemm_peak, res.ridge, overhead, options.gemm_bins, stat);
  res.gemm_records = main.records;
  res.gemm_used = main.used;
  res.gemm_memory_bound = main.memory_bound;
  res.gemm_curve = main.curve;
  if (!res.gemm_curve.empty()) res.device.gemm_efficiency = ToCurve(res.gemm_curve);
  // FP8 has its own curve: it reaches a smaller fraction of its doubled peak.
  res.fp8_peak = res.device.peak_fp8;
  if (res.fp8_peak > 0) {
    res.fp8_ridge = res.fp8_peak / bw;
    const GemmFit fp8 = FitGemm(records, "fp8_e4m3", res.fp8_peak, res.fp8_ridge, overhead, options.gemm_bins, stat);
    res.fp8_records = fp8.records;
    res.fp8_used = fp8.used;
    res.fp8_memory_bound = fp8.memory_bound;
    res.gemm_fp8_curve = fp8.curve;
    if (!res.gemm_fp8_curve.empty()) res.device.gemm_efficiency_fp8 = ToCurve(res.gemm_fp8_curve);
  }

  // --- memory efficiency -------------------------------------------------------
  std::vector<std::pair<double, double>> memory_points;
  for (const ProbeRecord& r : records) {
    if (!Contains(options.memory_kinds, r.kind)) continue;
    const double t = RecordTime(r, stat);
    if (!(r.bytes > 0) || !(t > 0)) continue;
    if (r.bytes < 2 * res.cache_bytes) {
      ++res.memory_cache_resident;
      continue;
    }
    // Overhead-dominated records say little about bandwidth.
    if (t < 2 * overhead) continue;
    memory_points.emplace_back(r.bytes, std::min(1.0, r.bytes / ((t - overhead) * bw)));
  }
  res.memory_used = static_cast<int>(memory_points.size());
  res.memory_curve = BinMedians(memory_points, options.memory_bins);
  if (!res.memory_curve.empty()) res.device.memory_efficiency = ToCurve(res.memory_curve);

  res.ok = true;
  return res;
}

}  // namespace orrery::calibration
