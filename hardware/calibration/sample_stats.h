#pragma once
// Order statistics of repeated timings.
//
// Dependency-free C++17 so that the CUDA probe can include it when it is
// built alone with nvcc on a bare GPU node (README.md, "Standalone build").

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace orrery::calibration {

// Summary of a set of samples, in the samples' unit (seconds for timings).
struct SampleSummary {
  std::size_t count = 0;
  double min = 0.0;
  double p10 = 0.0;
  double median = 0.0;
  double p90 = 0.0;
  double max = 0.0;
  double mean = 0.0;
};

// Percentile of already sorted samples, q in [0, 1], by linear interpolation
// between closest ranks: position q*(n-1) in the sorted list ("type 7" of
// Hyndman & Fan 1996, the default of NumPy and R). Returns NaN for an empty
// list; q outside [0, 1] is clamped to the end samples.
inline double PercentileOfSorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::nan("");
  if (!(q > 0.0)) return sorted.front();
  if (q >= 1.0) return sorted.back();
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

// Percentile of unsorted samples (copies and sorts them).
inline double Percentile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return PercentileOfSorted(samples, q);
}

// Count, extremes, 10th/50th/90th percentiles and mean. An empty input gives
// count 0 and NaN everywhere else.
inline SampleSummary Summarize(std::vector<double> samples) {
  SampleSummary s;
  s.count = samples.size();
  if (samples.empty()) {
    const double nan = std::nan("");
    s.min = s.p10 = s.median = s.p90 = s.max = s.mean = nan;
    return s;
  }
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  s.p10 = PercentileOfSorted(samples, 0.10);
  s.median = PercentileOfSorted(samples, 0.50);
  s.p90 = PercentileOfSorted(samples, 0.90);
  double sum = 0.0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  return s;
}

}  // namespace orrery::calibration
