#include "core/api/report.h"

namespace orrery {

ReportResult Report(const ReportRequest& request, const Control& control) {
  ReportResult r;
  if (control.Cancelled()) {
    r.status = Status::kCancelled;
    r.reason = "cancelled before the report was built";
    return r;
  }
  std::string chart_js, error;
  if (!report::LoadChartJs(chart_js, error)) {
    r.status = Status::kInvalidInput;
    r.reason = error;
    return r;
  }
  control.Report(0, 1, "report");
  r.model = report::BuildReport(request, r.diagnostics);
  if (!r.model) {
    r.status = Status::kInvalidInput;
    return r;
  }
  r.json = report::ReportJson(*r.model);
  r.html = report::RenderHtml(*r.model, chart_js);
  if (!r.model->feasible) {
    r.status = Status::kInfeasible;
    r.reason = r.model->answer;
  }
  control.Report(1, 1, "report");
  return r;
}

}  // namespace orrery
