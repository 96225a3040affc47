#pragma once
// The public call behind `orrery report` and the GUI's export: a scenario, a
// search or a `plan` question in, the report out (its model, the model as
// JSON, and the self-contained HTML). PDF printing is a separate call since
// it needs a browser (report::PrintPdf).
//
//   orrery::ReportRequest req;
//   req.scenario = "configs/scenarios/llama3-70b-h100.yaml";
//   req.search = true;
//   orrery::report::ParseGpuRange("512-16384", req.search_gpus, error);
//   orrery::ReportResult r = orrery::Report(req);
//   if (r.ok()) write r.html to report.html

#include <optional>
#include <string>

#include "core/api/common.h"
#include "core/report/report.h"

namespace orrery {

using ReportRequest = report::ReportRequest;

struct ReportResult : ResultBase {
  std::optional<report::ReportModel> model;
  std::string json;  // every number of the report (report::ReportJson)
  std::string html;  // the document; empty when the status is not kOk
};

// Builds the report. kInvalidInput with diagnostics for bad files, presets
// or overrides; kInfeasible (with the document, which says why) when no plan
// fits; kCancelled when control.cancel was raised before the work started.
ReportResult Report(const ReportRequest& request, const Control& control = {});

}  // namespace orrery
