#include "scaling_laws/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace orrery::scaling_laws {

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - lo) * (values[hi] - values[lo]);
}

base::Result<BootstrapResult> Bootstrap(const RunTable& table, size_t resamples, uint64_t seed,
                                  const std::vector<std::string>& names, const Estimator& estimator,
                                  double level) {
  // The upper bound keeps a wrapped negative count (size_t(-1)) from running
  // for ever; published bootstrap intervals use 100 to 4000 resamples.
  if (resamples < 2 || resamples > kMaxBootstrapResamples)
    return base::Error{"bootstrap resamples must be in [2, " +
                       std::to_string(kMaxBootstrapResamples) + "], got " +
                       std::to_string(resamples) +
                       (resamples > (size_t{1} << 63) ? " (a negative number?)" : "")};
  if (!(level > 0 && level < 1)) return base::Error{"bootstrap level must be in (0, 1)"};
  if (table.points.empty()) return base::Error{"bootstrap: no data"};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, table.points.size() - 1);
  BootstrapResult out;
  out.names = names;
  out.level = level;
  out.samples.assign(names.size(), {});
  RunTable replicate{table.source, {}, table.notes};
  for (size_t r = 0; r < resamples; ++r) {
    replicate.points.clear();
    for (size_t i = 0; i < table.points.size(); ++i) replicate.points.push_back(table.points[pick(rng)]);
    auto est = estimator(replicate);
    if (!est.ok() || est->size() != names.size()) {
      ++out.failures;
      continue;
    }
    for (size_t k = 0; k < names.size(); ++k) out.samples[k].push_back((*est)[k]);
    ++out.resamples;
  }
  if (out.resamples * 2 < resamples) {
    return base::Error{"bootstrap: only " + std::to_string(out.resamples) + " of " +
                 std::to_string(resamples) + " refits succeeded"};
  }
  for (const auto& s : out.samples) {
    out.intervals.push_back({Percentile(s, (1 - level) / 2), Percentile(s, (1 + level) / 2)});
  }
  return out;
}

base::Result<BootstrapResult> BootstrapChinchilla(const RunTable& table, const ChinchillaParams& point,
                                            size_t resamples, uint64_t seed,
                                            const HuberFitOptions& options, double level) {
  const Estimator estimator = [&](const RunTable& t) -> base::Result<std::vector<double>> {
    auto fit = FitChinchillaHuberFrom(t, point, options);
    if (!fit) return fit.error();
    const auto& p = fit->params;
    return std::vector<double>{p.E, p.A, p.B, p.alpha, p.beta, p.beta / (p.alpha + p.beta)};
  };
  return Bootstrap(table, resamples, seed, {"E", "A", "B", "alpha", "beta", "a_opt"}, estimator,
                   level);
}

}  // namespace orrery::scaling_laws
