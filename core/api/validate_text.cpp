// `orrery validate --row N` as text (core/api/text.h): the measured run, its
// prediction and what it assumed, then the estimate behind it.

#include <filesystem>

#include "core/api/text.h"
#include "core/base/format.h"
#include "core/validation/validation.h"

namespace orrery::text {

void PrintValidationRow(const engine::ValidationRow& r, const ValidationRowEstimate& e,
                        const std::vector<std::string>& overrides, std::ostream& out) {
  // The metric with its unit: a time, TFLOP/s per GPU, or MFU in percent.
  auto shown = [&](double v) {
    if (engine::MetricIsTime(r.metric)) return base::FormatTime(v);
    if (r.metric == "mfu") return base::FormatPercent(v);
    return base::FormatFlopRate(v * 1e12);
  };
  // The file as given, or relative to here when it lies below.
  std::string file = r.file;
  std::error_code ec;
  const std::filesystem::path here = std::filesystem::current_path(ec);
  const std::filesystem::path rel = ec ? std::filesystem::path() : std::filesystem::path(r.file).lexically_relative(here);
  if (!rel.empty() && rel.begin()->string() != "..") file = rel.string();
  out << file << ":" << r.line << "  " << r.model << "\n"
      << "source     " << r.source << "\n"
      << "measured   " << r.metric << " " << shown(r.measured) << "\n";
  if (!r.error_pct) {
    out << "skipped    " << r.skipped << "\n";
    return;
  }
  const double speed = engine::SpeedBiasPct(r);
  out << "predicted  " << shown(r.predicted) << ", error " << base::FormatPercent(*r.error_pct / 100)
      << " (predicted " << (speed >= 0 ? "faster" : "slower") << " than measured: speed "
      << (speed >= 0 ? "+" : "") << base::FormatPercent(speed / 100) << ")"
      << (r.predicted_oom ? "  (memory model: does not fit)" : "") << "\n";
  if (!r.assumptions.empty()) out << "assumed    " << r.assumptions << "\n";
  if (!e.estimate.has_estimate) return;
  const bool event = e.estimate.engine == EstimateEngine::kEvent;
  if (!overrides.empty() || event) {
    out << "with";
    for (const auto& s : overrides) out << " --set " << s;
    if (event) out << (overrides.empty() ? " the event engine" : ", on the event engine");
    out << ": predicted " << shown(e.predicted) << ", error " << base::FormatPercent(e.error_pct / 100)
        << (e.estimate.status == Status::kInfeasible ? " (infeasible: " + e.estimate.reason + ")" : "") << "\n";
  }
  out << "\n";
  PrintEstimateTable(e.estimate, out);
}

}  // namespace orrery::text
