#include "core/api/calibrate.h"

#include <algorithm>

namespace orrery {

namespace {

CalibrateProfileResult FromOutcome(bool ok, calibration::ProfileOutcome&& o, const std::string& out_path) {
  CalibrateProfileResult r;
  r.notes = std::move(o.notes);
  r.diagnostics = std::move(o.diagnostics);
  r.fit = std::move(o.fit);
  r.db_run_id = o.run_id;
  r.profile_path = out_path;
  if (!ok) {
    r.status = o.usage_error ? Status::kUsage : Status::kInvalidInput;
    r.reason = o.error;
  }
  return r;
}

std::function<void(const std::string&)> Teller(const Control& control) {
  return [&control](const std::string& s) { control.Report(0, 0, s); };
}

}  // namespace

CalibrateProfileResult CalibrateRun(const CalibrateRunRequest& request, const Control& control) {
  calibration::ProbeFile probe;
  std::string source, error;
  bool usage = false;
  if (!calibration::RunProbe(request.probe, probe, source, usage, error, Teller(control))) {
    CalibrateProfileResult r;
    r.status = usage ? Status::kUsage : Status::kInvalidInput;
    r.reason = error;
    return r;
  }
  if (control.Cancelled()) {
    CalibrateProfileResult r;
    r.status = Status::kCancelled;
    r.reason = "cancelled";
    return r;
  }
  calibration::ProfileOutcome o;
  const bool ok = calibration::FitAndWriteProfile(probe, source, request.profile, o);
  return FromOutcome(ok, std::move(o), request.profile.out_path);
}

CalibrateProfileResult CalibrateImport(const CalibrateImportRequest& request) {
  const calibration::ProbeFileResult read = calibration::ReadProbeJsonFile(request.probe_file);
  if (!read.ok) {
    CalibrateProfileResult r;
    r.status = Status::kInvalidInput;
    r.reason = read.error;
    return r;
  }
  calibration::ProfileOutcome o;
  const bool ok = calibration::FitAndWriteProfile(read.file, request.probe_file, request.profile, o);
  return FromOutcome(ok, std::move(o), request.profile.out_path);
}

CheckLayerResult CalibrateCheckLayer(const CheckLayerRequest& request, const Control& control) {
  CheckLayerResult r;
  r.request = request;
  std::string error;
  bool usage = false;
  if (!calibration::CheckLayer(request, r.check, usage, error, r.diagnostics, Teller(control))) {
    r.status = usage ? Status::kUsage : Status::kInvalidInput;
    r.reason = error;
    return r;
  }
  if (!r.check.passed) {
    r.status = Status::kInvalidInput;  // a failed tolerance
    r.reason = "worst |error| exceeds the tolerance of " + base::FormatNumber(request.max_error_pct, 3) + " %";
  }
  return r;
}

CalibrationRunsResult CalibrationRuns(const CalibrationRunsRequest& request) {
  CalibrationRunsResult r;
  std::string error;
  r.runs = calibration::ListProbeRuns(request.db, &error);
  if (!error.empty()) {
    r.status = Status::kInvalidInput;
    r.reason = "--db: " + error;
  }
  return r;
}

CalibrationCompareResult CalibrationCompare(const CalibrationCompareRequest& request) {
  CalibrationCompareResult r;
  std::string error;
  r.rows = calibration::CompareProbeRuns(request.db, request.run_a, request.run_b, &error);
  if (!error.empty()) {
    r.status = Status::kInvalidInput;
    r.reason = error;
    return r;
  }
  if (!request.kind.empty())
    std::erase_if(r.rows, [&](const calibration::RecordComparison& c) { return c.kind != request.kind; });
  return r;
}

namespace {

nlohmann::ordered_json CurveJson(const std::vector<calibration::CurvePoint>& c) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& p : c) a.push_back({p.size, p.efficiency, p.records});
  return a;
}

}  // namespace

nlohmann::ordered_json ToJson(const CalibrateProfileResult& r) {
  const calibration::FitResult& fit = r.fit;
  const hardware::DeviceSpec& d = fit.device;
  nlohmann::ordered_json j;
  j["schema_version"] = kSchemaVersion;
  j["profile"] = r.profile_path;
  j["device"] = d.name;
  j["kernel_overhead_s"] = fit.kernel_overhead_s;
  j["overhead_measured"] = fit.overhead_measured;
  j["peak_fp32"] = d.peak_fp32;
  j["peak_bf16"] = d.peak_bf16;
  j["memory_bandwidth"] = d.memory_bandwidth;
  j["gemm_dtype"] = fit.gemm_dtype;
  j["gemm_peak"] = fit.gemm_peak;
  j["ridge_flop_per_byte"] = fit.ridge;
  j["gemm_records"] = fit.gemm_records;
  j["gemm_used"] = fit.gemm_used;
  j["gemm_memory_bound"] = fit.gemm_memory_bound;
  j["gemm_efficiency"] = CurveJson(fit.gemm_curve);
  j["memory_records"] = fit.memory_records;
  j["memory_used"] = fit.memory_used;
  j["memory_efficiency"] = CurveJson(fit.memory_curve);
  if (r.db_run_id > 0) j["db_run_id"] = r.db_run_id;
  return j;
}

nlohmann::ordered_json ToJson(const CheckLayerResult& r) {
  const CheckLayerRequest& q = r.request;
  nlohmann::ordered_json j;
  j["schema_version"] = kSchemaVersion;
  j["profile"] = r.check.profile_name;
  if (q.measured.empty()) {
    j["threads"] = q.threads;
    j["clock"] = calibration::TimerClockName(r.check.clock);
  } else {
    j["measured"] = q.measured;
  }
  j["statistic"] = q.statistic;
  j["max_error_pct"] = q.max_error_pct;
  j["rows"] = nlohmann::ordered_json::array();
  for (const calibration::LayerRow& x : r.check.rows) {
    nlohmann::ordered_json o;
    o["shape"] = x.shape;
    o["pass"] = x.pass;
    o["measured_s"] = x.measured;
    o["predicted_s"] = x.predicted;
    o["error_pct"] = x.error_pct;
    if (x.gemm_measured >= 0) o["gemm_share_measured"] = x.gemm_measured;
    if (x.gemm_predicted >= 0) o["gemm_share_predicted"] = x.gemm_predicted;
    j["rows"].push_back(o);
  }
  j["worst_abs_error_pct"] = r.check.worst_abs_error_pct;
  j["passed"] = r.check.passed;
  return j;
}

nlohmann::ordered_json ToJson(const CalibrationRunsResult& r) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& x : r.runs)
    a.push_back({{"run_id", x.run_id}, {"probe", x.probe}, {"mode", x.mode}, {"host", x.host},
                 {"device", x.device}, {"threads", x.threads}, {"date_utc", x.date_utc},
                 {"records", x.records}, {"source", x.source}});
  return a;
}

nlohmann::ordered_json ToJson(const CalibrationCompareResult& r) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& x : r.rows)
    a.push_back({{"kind", x.kind}, {"dtype", x.dtype}, {"shape", x.shape}, {"rate_unit", x.rate_unit},
                 {"rate_a", x.rate_a}, {"rate_b", x.rate_b}, {"ratio", x.rate_a > 0 ? x.rate_b / x.rate_a : 0}});
  return a;
}

}  // namespace orrery
