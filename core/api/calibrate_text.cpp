// Tables and CSV of `orrery calibrate`; JSON is orrery::ToJson.

#include "core/api/text.h"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "core/api/json.h"
#include "core/base/quantity.h"

namespace orrery::text {

using base::Dimension;
using base::FormatQuantity;

void PrintProfileSummary(const CalibrateProfileResult& r, Format fmt, std::ostream& out) {
  const calibration::FitResult& fit = r.fit;
  const hardware::DeviceSpec& d = fit.device;
  if (fmt == Format::kJson) {
    out << ToJson(r).dump(2) << "\n";
    return;
  }
  if (fmt == Format::kCsv) {
    out << "curve,size,efficiency,records\n";
    for (const auto& p : fit.gemm_curve) out << "gemm," << p.size << "," << p.efficiency << "," << p.records << "\n";
    for (const auto& p : fit.memory_curve) out << "memory," << p.size << "," << p.efficiency << "," << p.records << "\n";
    return;
  }
  auto row = [&](const std::string& k, const std::string& v) {
    out << "  " << std::left << std::setw(20) << k << v << "\n";
  };
  out << "profile " << r.profile_path << ": " << d.name << "\n";
  row("kernel_overhead", FormatQuantity(fit.kernel_overhead_s, Dimension::kTime) +
                             (fit.overhead_measured ? " (measured)" : " (given)"));
  row("peak_fp32", FormatQuantity(d.peak_fp32, Dimension::kFlopRate));
  row("peak_bf16", FormatQuantity(d.peak_bf16, Dimension::kFlopRate));
  row("memory_bandwidth", FormatQuantity(d.memory_bandwidth, Dimension::kBandwidth));
  row("gemm_efficiency", fit.gemm_dtype + " vs " + FormatQuantity(fit.gemm_peak, Dimension::kFlopRate) + ", " +
                             std::to_string(fit.gemm_used) + " of " + std::to_string(fit.gemm_records) +
                             " records (" + std::to_string(fit.gemm_memory_bound) + " memory-bound)");
  for (const auto& p : fit.gemm_curve)
    row("", FormatQuantity(p.size, Dimension::kFlops) + "  " + base::FormatNumber(p.efficiency, 3) + "  (" +
                std::to_string(p.records) + ")");
  row("memory_efficiency", std::to_string(fit.memory_used) + " of " + std::to_string(fit.memory_records) +
                               " records beyond 2 x " + FormatQuantity(fit.cache_bytes, Dimension::kBytes) + " cache");
  for (const auto& p : fit.memory_curve)
    row("", FormatQuantity(p.size, Dimension::kBytes) + "  " + base::FormatNumber(p.efficiency, 3) + "  (" +
                std::to_string(p.records) + ")");
  if (r.db_run_id > 0) row("database run", std::to_string(r.db_run_id));
}

void PrintLayerCheck(const CheckLayerResult& r, Format fmt, std::ostream& out) {
  const CheckLayerRequest& q = r.request;
  const calibration::LayerCheck& c = r.check;
  if (fmt == Format::kJson) {
    out << ToJson(r).dump(2) << "\n";
    return;
  }
  if (fmt == Format::kCsv) {
    out << "shape,pass,measured_s,predicted_s,error_pct,gemm_share_measured,gemm_share_predicted\n";
    for (const calibration::LayerRow& x : c.rows)
      out << x.shape << "," << x.pass << "," << x.measured << "," << x.predicted << "," << x.error_pct << ","
          << x.gemm_measured << "," << x.gemm_predicted << "\n";
    return;
  }
  out << "profile: " << c.profile_name << "\n";
  if (q.measured.empty()) {
    out << "threads: " << q.threads << ", " << q.statistic << " of " << q.reps << " samples, clock "
        << calibration::TimerClockName(c.clock) << "\n\n";
  } else {
    out << "measured: " << q.measured << " (" << q.statistic << " of each row's samples; bf16)\n\n";
  }
  out << std::left << std::setw(34) << "shape" << std::setw(10) << "pass" << std::right << std::setw(12)
      << "measured" << std::setw(12) << "predicted" << std::setw(9) << "error" << "   GEMM share meas/pred\n";
  for (const calibration::LayerRow& x : c.rows) {
    std::ostringstream err_text;
    err_text << std::fixed << std::setprecision(1) << std::showpos << x.error_pct << " %";
    out << std::left << std::setw(34) << x.shape << std::setw(10) << x.pass << std::right << std::setw(12)
        << FormatQuantity(x.measured, Dimension::kTime) << std::setw(12)
        << FormatQuantity(x.predicted, Dimension::kTime) << std::setw(9) << err_text.str();
    if (x.gemm_predicted >= 0)
      out << "   " << (x.gemm_measured >= 0 ? std::to_string(std::lround(100 * x.gemm_measured)) + " %" : "-")
          << " / " << std::lround(100 * x.gemm_predicted) << " %";
    out << "\n";
  }
  out << "\nworst |error| " << base::FormatNumber(c.worst_abs_error_pct, 3) << " % (tolerance "
      << base::FormatNumber(q.max_error_pct, 3) << " %): " << (c.passed ? "PASS" : "FAIL") << "\n";
}

void PrintCalibrationRuns(const CalibrationRunsResult& r, Format fmt, std::ostream& out) {
  if (fmt == Format::kJson) {
    out << ToJson(r).dump(2) << "\n";
  } else if (fmt == Format::kCsv) {
    out << "run_id,probe,mode,host,device,threads,date_utc,records,source\n";
    for (const auto& x : r.runs)
      out << x.run_id << "," << x.probe << "," << x.mode << "," << x.host << ",\"" << x.device << "\","
          << x.threads << "," << x.date_utc << "," << x.records << ",\"" << x.source << "\"\n";
  } else {
    out << std::left << std::setw(5) << "run" << std::setw(6) << "probe" << std::setw(7) << "mode" << std::setw(22)
        << "date (UTC)" << std::setw(9) << "records" << "device (threads) on host, from\n";
    for (const auto& x : r.runs)
      out << std::left << std::setw(5) << x.run_id << std::setw(6) << x.probe << std::setw(7) << x.mode
          << std::setw(22) << x.date_utc << std::setw(9) << x.records << x.device << " (" << x.threads << ") on "
          << x.host << ", " << x.source << "\n";
  }
}

void PrintCalibrationCompare(const CalibrationCompareResult& r, const CalibrationCompareRequest& q, Format fmt,
                             std::ostream& out) {
  if (fmt == Format::kJson) {
    out << ToJson(r).dump(2) << "\n";
  } else if (fmt == Format::kCsv) {
    out << "kind,dtype,shape,rate_unit,rate_a,rate_b,ratio\n";
    for (const auto& x : r.rows)
      out << x.kind << "," << x.dtype << ",\"" << x.shape << "\"," << x.rate_unit << "," << x.rate_a << ","
          << x.rate_b << "," << (x.rate_a > 0 ? x.rate_b / x.rate_a : 0) << "\n";
  } else {
    out << std::left << std::setw(10) << "kind" << std::setw(10) << "dtype" << std::setw(26) << "shape" << std::right
        << std::setw(16) << "run " + std::to_string(q.run_a) << std::setw(16) << "run " + std::to_string(q.run_b)
        << std::setw(8) << "B/A" << "\n";
    for (const auto& x : r.rows) {
      const Dimension dim = x.rate_unit == "flop/s" ? Dimension::kFlopRate : Dimension::kBandwidth;
      std::ostringstream ratio;
      ratio << std::fixed << std::setprecision(3) << (x.rate_a > 0 ? x.rate_b / x.rate_a : 0);
      out << std::left << std::setw(10) << x.kind << std::setw(10) << x.dtype << std::setw(26) << x.shape
          << std::right << std::setw(16) << FormatQuantity(x.rate_a, dim) << std::setw(16)
          << FormatQuantity(x.rate_b, dim) << std::setw(8) << ratio.str() << "\n";
    }
    out << r.rows.size() << " records in both runs\n";
  }
}

}  // namespace orrery::text
