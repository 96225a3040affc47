#include "core/api/validate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <sstream>

#include "core/estimate/training_estimator.h"
#include "core/validation/inference_validation.h"
#include "hardware/system_spec.h"

#ifndef ORRERY_VALIDATION_DIR_DEFAULT
#define ORRERY_VALIDATION_DIR_DEFAULT "validation"
#endif

namespace orrery {

namespace {

std::string Fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

std::string Number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

ValidationRowEstimate EstimateValidationRow(const engine::ValidationRow& row,
                                            const std::vector<std::string>& overrides, bool operator_breakdown,
                                            EstimateEngine engine) {
  ValidationRowEstimate r;
  if (!row.error_pct || !row.scenario) {
    r.status = Status::kInvalidInput;
    r.reason = row.file + ":" + std::to_string(row.line) + " (" + row.model + ") is not predicted" +
               (row.skipped.empty() ? std::string(": ask for it by line") : ": " + row.skipped);
    return r;
  }
  EstimateRequest req;
  req.scenario = ScenarioInput::Loaded(*row.scenario, overrides);
  req.operator_breakdown = operator_breakdown;
  req.engine = engine;
  r.estimate = Estimate(req);
  r.status = r.estimate.status;
  r.reason = r.estimate.reason;
  r.diagnostics = r.estimate.diagnostics;
  if (!r.estimate.has_estimate) return r;
  r.predicted = engine::PredictedMetric(r.estimate.estimate, row.metric,
                                        static_cast<double>(hardware::DeviceCount(r.estimate.scenario.system)));
  r.error_pct = (r.predicted - row.measured) / row.measured * 100;
  return r;
}

namespace {

// Each predicted row of `report` again, its plan replayed on the event
// engine: predicted and error become that engine's, the scenario is
// dropped; a row the event engine does not run is skipped with its reason.
void PredictOnTheEventEngine(engine::ValidationReport& report, const Control& control) {
  uint64_t done = 0;
  for (auto& row : report.rows) {
    if (control.Cancelled()) return;
    control.Report(done++, report.rows.size(), "rows on the event engine");
    if (!row.error_pct || !row.scenario) continue;
    const ValidationRowEstimate e = EstimateValidationRow(row, {}, false, EstimateEngine::kEvent);
    row.scenario.reset();
    if (e.status != Status::kOk || !e.estimate.has_estimate || !(e.predicted > 0) || !std::isfinite(e.error_pct)) {
      row.error_pct.reset();
      row.skipped = "the event engine does not run this plan: " +
                    (e.reason.empty() ? std::string("no estimate") : e.reason);
      continue;
    }
    row.predicted = e.predicted;
    row.error_pct = e.error_pct;
  }
}

}  // namespace

std::string DefaultValidationCsv() {
  const char* env = std::getenv("ORRERY_VALIDATION_DIR");
  return std::string(env != nullptr && *env ? env : ORRERY_VALIDATION_DIR_DEFAULT) + "/training_runs.csv";
}

std::string ValidationGroupOf(const engine::ValidationRow& row, const std::string& by) {
  if (by == "source") return engine::SourceGroup(row.source);
  const std::string value = engine::FacetOf(row, by);
  return value.empty() ? "(none)" : value;
}

std::map<std::string, engine::ValidationReport> GroupValidationRows(const std::vector<engine::ValidationRow>& rows,
                                                                    const std::string& by) {
  std::map<std::string, engine::ValidationReport> groups;
  // By source every row counts (a skipped one as skipped); a facet is what a
  // predicted row ran with, which a skipped row has not.
  for (const auto& row : rows)
    if (by == "source" || row.error_pct) groups[ValidationGroupOf(row, by)].rows.push_back(row);
  for (auto& [name, g] : groups) engine::Summarise(g);
  return groups;
}

const std::vector<std::string>& ValidationFacets() {
  static const std::vector<std::string> facets = {"device", "framework", "precision", "recompute", "metric"};
  return facets;
}

ValidateResult Validate(const ValidateRequest& request, const Control& control) {
  ValidateResult r;
  if (!request.by.empty() &&
      std::find(ValidationFacets().begin(), ValidationFacets().end(), request.by) == ValidationFacets().end()) {
    r.status = Status::kUsage;
    std::string words;
    for (const auto& f : ValidationFacets()) words += (words.empty() ? "" : ", ") + f;
    r.reason = "--by '" + request.by + "': must be one of " + words;
    return r;
  }
  const std::vector<std::string> files =
      request.files.empty() ? std::vector<std::string>{DefaultValidationCsv()} : request.files;
  if (request.line > 0 && files.size() > 1) {
    r.status = Status::kUsage;
    r.reason = "a row by line reads one CSV; " + std::to_string(files.size()) + " were given";
    return r;
  }
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  uint64_t done = 0;
  for (const auto& f : files) {
    if (control.Cancelled()) {
      r.status = Status::kCancelled;
      r.reason = "cancelled";
      return r;
    }
    control.Report(done, files.size(), "files");
    const bool inference = engine::IsInferenceCsv(f);
    if (inference && request.line > 0) {
      r.diagnostics.Add({f, 0, 0}, "", "", "a row by line is for training-run CSVs; this one holds inference runs");
      continue;
    }
    const bool event = request.engine == EstimateEngine::kEvent && request.line == 0;
    auto part = inference ? engine::ValidateInferenceCsv(f, store, r.diagnostics)
                          : engine::ValidateTrainingCsv(f, store, r.diagnostics, request.line, event);
    if (event && !inference) PredictOnTheEventEngine(part, control);
    r.report.rows.insert(r.report.rows.end(), part.rows.begin(), part.rows.end());
    control.Report(++done, files.size(), "files");
  }
  if (!r.diagnostics.ok()) {
    r.status = Status::kInvalidInput;
    return r;
  }
  if (request.line > 0 && r.report.rows.empty()) {
    r.status = Status::kInvalidInput;
    r.reason = "no measured run on line " + std::to_string(request.line) + " of " +
               (files.size() == 1 ? files.front() : std::string("the files")) +
               " (line 1 is the header; `orrery validate` lists every row's line)";
    return r;
  }
  if (control.Cancelled()) {
    r.status = Status::kCancelled;
    r.reason = "cancelled";
    return r;
  }
  if (request.line == 0) r.engine = request.engine;
  engine::Summarise(r.report);
  r.by_source = GroupValidationRows(r.report.rows, "source");
  if (!request.by.empty()) r.by_facet = GroupValidationRows(r.report.rows, request.by);
  if (request.max_mape_pct >= 0 && r.report.mape_pct > request.max_mape_pct)
    r.failures.push_back("MAPE " + Fixed(r.report.mape_pct, 2) + " % exceeds --max-mape " +
                         Number(request.max_mape_pct) + " %");
  if (request.max_error_pct >= 0 && r.report.max_abs_error_pct > request.max_error_pct)
    r.failures.push_back("max |error| " + Fixed(r.report.max_abs_error_pct, 2) + " % exceeds --max-error " +
                         Number(request.max_error_pct) + " %");
  if (!r.failures.empty()) {
    r.status = Status::kInvalidInput;
    r.reason = r.failures.front();
  }
  return r;
}

nlohmann::ordered_json ToJson(const ValidateResult& res) {
  using J = nlohmann::ordered_json;
  const engine::ValidationReport& report = res.report;
  J j;
  j["schema_version"] = kSchemaVersion;
  j["engine"] = EstimateEngineName(res.engine);
  j["rows"] = J::array();
  for (const auto& r : report.rows) {
    J row;
    row["model"] = r.model;
    row["source"] = r.source;
    row["device"] = r.device;
    row["line"] = r.line;
    row["metric"] = r.metric;
    row["measured"] = r.measured;
    row["predicted"] = r.error_pct ? J(r.predicted) : J();
    row["error_pct"] = r.error_pct ? J(*r.error_pct) : J();
    row["speed_error_pct"] = r.error_pct ? J(engine::SpeedBiasPct(r)) : J();
    row["skipped"] = r.skipped.empty() ? J() : J(r.skipped);
    row["assumptions"] = r.assumptions;
    row["predicted_out_of_memory"] = r.predicted_oom;
    if (r.error_pct && !r.recompute.empty()) {  // a training row's plan
      row["framework"] = r.framework;
      row["precision"] = r.precision;
      row["recompute"] = r.recompute;
    }
    j["rows"].push_back(row);
  }
  // An error over no evaluated rows is not 0 %: MAPE and max |error| are
  // null then, with a reason (issue 19's invariants).
  auto summary = [](J& into, const engine::ValidationReport& g) {
    const bool any = g.evaluated > 0;
    into["mape_pct"] = any ? J(g.mape_pct) : J();
    into["max_abs_error_pct"] = any ? J(g.max_abs_error_pct) : J();
    into["speed_bias_pct"] = any ? J(g.speed_bias_pct) : J();
    if (!any) into["no_data"] = "no row evaluated (" + std::to_string(g.skipped) + " skipped)";
    into["evaluated"] = g.evaluated;
    into["skipped"] = g.skipped;
  };
  summary(j, report);
  J by = J::object();
  for (const auto& [name, g] : res.by_source) summary(by[name], g);
  j["by_source"] = by;
  if (!res.by_facet.empty()) {
    J facet = J::object();
    for (const auto& [name, g] : res.by_facet) summary(facet[name], g);
    j["by_facet"] = facet;
  }
  return j;
}

ReproduceScalingLawsResult ReproduceScalingLaws(const std::string& data_dir) {
  ReproduceScalingLawsResult r;
  auto report = scaling_laws::ReproducePublishedFits(data_dir);
  if (!report.ok()) {
    r.status = Status::kInvalidInput;
    r.reason = report.error().message;
    return r;
  }
  r.report = std::move(report.value());
  if (!r.report.Passed()) {
    r.status = Status::kInvalidInput;
    r.reason = std::to_string(r.report.Failed()) + " of " + std::to_string(r.report.checks.size()) +
               " checks failed" + (r.report.missing.empty() ? "" : "; some data were missing");
  }
  return r;
}

nlohmann::ordered_json ToJson(const ReproduceScalingLawsResult& r) {
  using J = nlohmann::ordered_json;
  J j;
  j["schema_version"] = kSchemaVersion;
  j["kind"] = "scaling_law_reproduction";
  j["status"] = StatusName(r.status);
  if (!r.reason.empty()) j["reason"] = r.reason;
  j["data_dir"] = r.report.data_dir;
  j["checks"] = J::array();
  for (const auto& c : r.report.checks)
    j["checks"].push_back({{"name", c.name}, {"reference", c.reference}, {"published", c.published},
                           {"ours", c.ours}, {"rule", c.rule}, {"pass", c.pass}});
  j["missing"] = r.report.missing;
  j["failed"] = r.report.Failed();
  j["passed"] = r.report.Passed();
  return j;
}

}  // namespace orrery
