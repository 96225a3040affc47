// `orrery validate`: parses options, calls orrery::Validate (core/api/
// validate.h, over core/validation/), presents the rows and the summary.

#include <algorithm>
#include <cmath>
#include <boost/program_options.hpp>
#include <iomanip>
#include <sstream>
#include <string>
#include <utility>

#include "cli/api_support.h"
#include "cli/cli_common.h"
#include "core/api/estimate.h"
#include "core/base/quantity.h"
#include "core/api/json.h"
#include "core/validation/validation.h"
#include "core/api/text.h"
#include "core/api/validate.h"
#include "cli/verb_options.h"

namespace orrery::cli {

namespace po = boost::program_options;

namespace {

std::string Fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

// `orrery validate --row N`: the row, then its prediction as `orrery
// estimate` prints it (with --ops, where each operator's time goes), and
// with --set PATH=VALUE the prediction of the row's scenario so changed.
int PrintRow(const ValidateResult& res, const std::vector<std::string>& sets, bool ops, EstimateEngine engine,
             Format fmt, std::ostream& out, std::ostream& err) {
  const engine::ValidationRow& r = res.report.rows.front();
  const ValidationRowEstimate row_estimate = EstimateValidationRow(r, sets, ops, engine);
  const EstimateResult& e = row_estimate.estimate;
  if (!r.error_pct) return PrintFailure(row_estimate, err);
  if (!e.has_estimate) {
    err << "error: the row's scenario with --set does not run:\n";
    return PrintFailure(e, err);
  }
  if (fmt == Format::kJson) {
    auto j = ToJson(res);
    j["estimate"] = ToJson(e);
    if (!sets.empty() || engine == EstimateEngine::kEvent) {
      if (!sets.empty()) j["set"] = sets;
      j["engine_with_set"] = EstimateEngineName(engine);
      j["predicted_with_set"] = row_estimate.predicted;
      j["error_pct_with_set"] = row_estimate.error_pct;
    }
    out << j.dump(2) << "\n";
    return ExitCode(e.status);
  }
  text::PrintValidationRow(r, row_estimate, sets, out);
  return ExitCode(e.status);
}

// A percentage with its sign: "+8.12", "-0.40".
std::string Signed(double v) { return (v >= 0 ? "+" : "") + Fixed(v, 2); }

}  // namespace

int RunValidate(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery validate [CSV...] [--format table|json|csv] [--max-mape P] [--max-error P]\n"
      "                [--assumptions] [--by FACET] [--row N [--ops] [--set PATH=VALUE]...]\n"
      "orrery validate --scaling-laws DIR [--format table|json]\n\n"
      "Builds the scenario of every measured run in the CSV files (default:\n"
      "validation/training_runs.csv; files with inference columns, such as\n"
      "validation/inference_runs.csv, are read as inference runs), predicts it, and\n"
      "prints measured, predicted and the error per run (the metric's own: a time\n"
      "predicted short is negative, a rate predicted high positive) with its speed\n"
      "error (predicted over measured speed, less 1: + = predicted faster, whatever\n"
      "the metric), then the mean absolute % error (MAPE) and the largest error,\n"
      "overall and per source. Rows that cannot be modelled are listed as skipped\n"
      "with the reason. Exits 1 when a tolerance given with --max-mape/--max-error\n"
      "is exceeded.\n\n"
      "A training row's columns (source, model, gpus, gpu, tp, pp, dp, micro_batch,\n"
      "recompute, precision, zero, framework, flops_metric, ...) and their allowed\n"
      "words are documented in validation/README.md; a blank cell means the source\n"
      "did not state it. Plan fields a row leaves blank are filled with the fastest\n"
      "plan `orrery search` finds among those consistent with every stated field\n"
      "and the row's framework and date; what was chosen is the row's assumptions\n"
      "(--assumptions, or the JSON field `assumptions`).\n\n"
      "--row N shows one training row: measured, predicted, what was assumed, and\n"
      "its prediction as `orrery estimate` prints it (--ops: per operator); with\n"
      "--set PATH=VALUE, the row's scenario so changed and its error then; with\n"
      "--engine event, the row's plan replayed on the event engine too (a large gap\n"
      "between the two on a row says its plan leans on what the closed form\n"
      "assumes); without --row, --engine event predicts every training row's plan\n"
      "on the event engine and reports its errors, e.g.\n"
      "  orrery validate --row 162 --ops\n"
      "  orrery validate --row 36 --set training.interleave=1\n"
      "  orrery validate --row 36 --engine event\n\n"
      "Per source (and with --by, per device, framework, precision, recompute mode or\n"
      "metric) it prints the MAPE, the largest error and the bias: the mean of\n"
      "predicted over measured speed, less 1, > 0 when the predictions are faster\n"
      "than the runs.\n\noptions");
  std::string format = "table";
  double max_mape = -1, max_error = -1;
  std::string scaling_dir;
  bool show_assumptions = false;
  int row_line = 0;
  bool ops = false;
  std::vector<std::string> sets;
  std::string by;
  std::string engine_name = "closed";
  opts.add_options()("help,h", "show this help")("format", po::value(&format), "table | json | csv")(
      "max-mape", po::value(&max_mape), "fail (exit 1) when the MAPE exceeds P percent")(
      "max-error", po::value(&max_error), "fail (exit 1) when any row's |error| exceeds P percent")(
      "assumptions", po::bool_switch(&show_assumptions),
      "print under each row what it did not state and the harness assumed or searched")(
      "row", po::value(&row_line)->value_name("N"),
      "only the training row on line N of the CSV, with its prediction in full")(
      "ops", po::bool_switch(&ops), "with --row: add the per-operator breakdown (as orrery estimate --ops)")(
      "set", po::value(&sets)->composing()->value_name("PATH=VALUE"),
      "with --row: change the row's scenario (repeatable), e.g. training.micro_batch=1")(
      "engine", po::value(&engine_name)->value_name("closed|event"),
      "event: predict each row's plan (the one the closed form's search chose) on the event engine, "
      "the schedule's own bubble and overlap as orrery estimate --engine event; with --row, give "
      "that prediction and its error beside the closed form's")(
      "by", po::value(&by)->value_name("FACET"),
      "also group the rows by device, framework, precision, recompute or metric (what each was "
      "predicted with)")(
      "scaling-laws", po::value(&scaling_dir)->value_name("DIR"),
      "instead: reproduce published scaling-law fits from the data in DIR (Epoch's "
      "Chinchilla points, Llama 3 IsoFLOPs, reference optima); exits 1 when a check "
      "fails. The checks: scaling_laws/reproduction.h");
  po::options_description hidden;
  hidden.add_options()("csv", po::value<std::vector<std::string>>(), "");
  po::positional_options_description pos;
  pos.add("csv", -1);
  po::variables_map vm;
  try {
    po::options_description all;
    all.add(opts).add(hidden);
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see orrery validate --help)\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts;
    return kExitOk;
  }
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  if (vm.count("scaling-laws")) return RunScalingLawReproduction(scaling_dir, fmt, out, err);
  if (vm.count("by") && by.empty()) {
    std::string facets;
    for (const auto& f : ValidationFacets()) facets += (facets.empty() ? "" : ", ") + f;
    err << "error: --by needs a facet: one of " << facets << " (see orrery validate --help)\n";
    return kExitUsage;
  }
  for (const auto& [name, value] : {std::pair<const char*, double>{"max-mape", max_mape}, {"max-error", max_error}})
    if (vm.count(name) && !(value >= 0 && std::isfinite(value))) {
      err << "error: --" << name << " " << base::FormatNumber(value)
          << ": a tolerance is a percentage >= 0 (see orrery validate --help)\n";
      return kExitUsage;
    }
  if (vm.count("row") && row_line < 2) {
    err << "error: --row " << row_line << ": a row's line is 2 or more (line 1 is the header)\n";
    return kExitUsage;
  }
  if (row_line == 0 && (ops || !sets.empty())) {
    err << "error: --ops and --set apply to one row: give --row N (see orrery validate --help)\n";
    return kExitUsage;
  }
  EstimateEngine engine = EstimateEngine::kClosed;
  if (!ParseEstimateEngine(engine_name, engine)) {
    err << "error: --engine '" << engine_name << "': must be closed or event (see orrery validate --help)\n";
    return kExitUsage;
  }
  ValidateRequest req;
  if (vm.count("csv")) req.files = vm["csv"].as<std::vector<std::string>>();
  req.max_mape_pct = max_mape;
  req.max_error_pct = max_error;
  req.line = row_line;
  req.by = by;
  if (row_line == 0) req.engine = engine;
  const ValidateResult res = Validate(req);
  if (res.status == Status::kUsage) return PrintFailure(res, err, "orrery validate --help");
  if (!res.diagnostics.ok()) return PrintFailure(res, err);
  if (row_line > 0) {
    if (res.report.rows.empty()) return PrintFailure(res, err);
    if (fmt == Format::kCsv) {
      err << "error: --row prints a table or JSON (--format table|json)\n";
      return kExitUsage;
    }
    return PrintRow(res, sets, ops, engine, fmt, out, err);
  }
  const engine::ValidationReport& report = res.report;
  if (fmt == Format::kJson) {
    out << ToJson(res).dump(2) << "\n";
  } else if (fmt == Format::kCsv) {
    out << "line,model,metric,measured,predicted,error_pct,speed_error_pct,skipped,assumptions\n";
    for (const auto& r : report.rows)
      out << r.line << ",\"" << r.model << "\"," << r.metric << "," << r.measured << ","
          << (r.error_pct ? std::to_string(r.predicted) : "") << ","
          << (r.error_pct ? std::to_string(*r.error_pct) : "") << ","
          << (r.error_pct ? std::to_string(engine::SpeedBiasPct(r)) : "") << ",\"" << r.skipped << "\",\""
          << r.assumptions << "\"\n";
  } else {
    // Columns as wide as their longest entry (the model's capped at 36, cut
    // with "..."): a cut name must not turn mpt-30b into mpt-3.
    size_t model_w = 5, device_w = 6, metric_w = 6;
    for (const auto& r : report.rows) {
      model_w = std::max(model_w, std::min<size_t>(r.model.size(), 36));
      device_w = std::max(device_w, r.device.size());
      metric_w = std::max(metric_w, r.metric.size());
    }
    auto cut = [&](const std::string& s) {
      return s.size() <= model_w ? s : s.substr(0, model_w - 3) + "...";
    };
    const int mw = static_cast<int>(model_w + 2), dw = static_cast<int>(device_w + 2),
              tw = static_cast<int>(metric_w + 2);
    out << std::left << std::setw(6) << "line" << std::setw(mw) << "model" << std::setw(dw) << "device"
        << std::setw(tw) << "metric" << std::right << std::setw(10) << "measured" << std::setw(11)
        << "predicted" << std::setw(9) << "error" << std::setw(10) << "speed" << "\n";
    for (const auto& r : report.rows) {
      out << std::left << std::setw(6) << r.line << std::setw(mw) << cut(r.model) << std::setw(dw)
          << (r.device.empty() ? "-" : r.device) << std::setw(tw) << (r.metric.empty() ? "-" : r.metric)
          << std::right;
      if (r.error_pct) {
        const int digits = r.metric == "mfu" ? 3 : 2;
        // The error is the metric's own (a time's is negative when the
        // prediction is fast, a rate's positive); the speed column says the
        // same in one direction for every row: + = predicted faster.
        const double speed = engine::SpeedBiasPct(r);
        out << std::setw(10) << Fixed(r.measured, digits) << std::setw(11)
            << Fixed(r.predicted, digits) << std::setw(8) << Fixed(*r.error_pct, 1) << "%" << std::setw(9)
            << ((speed >= 0 ? "+" : "") + Fixed(speed, 1)) << "%"
            << (r.predicted_oom ? "  (memory model: does not fit)" : "") << "\n";
      } else {
        out << "   skipped: " << r.skipped << "\n";
      }
      if (show_assumptions && !r.assumptions.empty()) out << "      assumed: " << r.assumptions << "\n";
    }
    // A mean over no rows is not 0 %: a source or a file with nothing
    // evaluated says "no data" instead of a MAPE (issue 19's invariants).
    auto groups = [&](const std::string& title, const std::map<std::string, engine::ValidationReport>& grouped) {
      out << "\nby " << title << ":\n";
      size_t name_width = 0;
      for (const auto& entry : grouped) name_width = std::max(name_width, entry.first.size());
      for (const auto& [name, g] : grouped) {
        out << "  " << std::left << std::setw(static_cast<int>(name_width)) << name << std::right;
        if (g.evaluated > 0)
          out << "  MAPE " << std::setw(6) << Fixed(g.mape_pct, 2) << " %  max " << std::setw(6)
              << Fixed(g.max_abs_error_pct, 2) << " %  bias " << std::setw(6) << Signed(g.speed_bias_pct) << " %";
        else
          out << "  no data" << std::string(36, ' ');
        out << "  (" << g.evaluated << " evaluated, " << g.skipped << " skipped)\n";
      }
    };
    groups("source", res.by_source);
    if (!res.by_facet.empty()) groups(by, res.by_facet);
    if (report.evaluated > 0)
      out << "\nall: MAPE " << Fixed(report.mape_pct, 2) << " %, max |error| "
          << Fixed(report.max_abs_error_pct, 2) << " %, bias " << Signed(report.speed_bias_pct) << " %, ";
    else
      out << "\nall: no data, ";
    out << report.evaluated << " evaluated, " << report.skipped << " skipped"
        << (res.engine == EstimateEngine::kEvent ? " (training rows on the event engine)" : "") << "\n";
    if (report.evaluated > 0)
      out << "(error: predicted over measured metric, less 1; speed: predicted over measured speed, less 1,\n"
             " + = predicted faster than measured, a time's speed being its inverse; bias: the mean speed)\n";
  }
  for (const auto& f : res.failures) err << "validate: " << f << "\n";
  return static_cast<int>(res.status);
}

}  // namespace orrery::cli
