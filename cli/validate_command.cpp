// `orrery validate`: predictions against measured runs.

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "core/validation/inference_validation.h"
#include "core/validation/validation.h"

#ifndef ORRERY_VALIDATION_DIR_DEFAULT
#define ORRERY_VALIDATION_DIR_DEFAULT "validation"
#endif

namespace orrery::cli {

namespace po = boost::program_options;

namespace {

std::string DefaultCsv() {
  const char* env = std::getenv("ORRERY_VALIDATION_DIR");
  return std::string(env != nullptr && *env ? env : ORRERY_VALIDATION_DIR_DEFAULT) +
         "/training_runs.csv";
}

std::string Fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

}  // namespace

int RunValidate(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery validate [CSV...] [--format table|json] [--max-mape P] [--max-error P]\n"
      "orrery validate --scaling-laws DIR [--format table|json]\n\n"
      "Builds the scenario of every measured run in the CSV files (default:\n"
      "validation/training_runs.csv; files with inference columns, such as\n"
      "validation/inference_runs.csv, are read as inference runs), predicts it, and prints\n"
      "measured, predicted and\n"
      "the error per run, then the mean absolute % error (MAPE) and the largest error,\n"
      "overall and per source. Rows that cannot be modelled are listed as skipped with\n"
      "the reason. Exits 1 when a tolerance given with --max-mape/--max-error is\n"
      "exceeded.\n\noptions");
  std::string format = "table";
  double max_mape = -1, max_error = -1;
  std::string scaling_dir;
  opts.add_options()("help,h", "show this help")("format", po::value(&format), "table | json | csv")(
      "max-mape", po::value(&max_mape), "fail (exit 1) when the MAPE exceeds P percent")(
      "max-error", po::value(&max_error), "fail (exit 1) when any row's |error| exceeds P percent")(
      "scaling-laws", po::value(&scaling_dir)->value_name("DIR"),
      "instead: reproduce published scaling-law fits from the data in DIR (Epoch's Chinchilla points,\n"
      "Llama 3 IsoFLOPs, reference optima; scaling_laws/reproduction.h); exits 1 when a check fails");
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
  const std::vector<std::string> files =
      vm.count("csv") ? vm["csv"].as<std::vector<std::string>>() : std::vector<std::string>{DefaultCsv()};
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  base::Diagnostics diags;
  engine::ValidationReport report;
  for (const auto& f : files) {
    auto r = engine::IsInferenceCsv(f) ? engine::ValidateInferenceCsv(f, store, diags)
                                       : engine::ValidateTrainingCsv(f, store, diags);
    report.rows.insert(report.rows.end(), r.rows.begin(), r.rows.end());
  }
  if (!diags.ok()) {
    PrintDiagnostics(diags, err);
    return kExitInvalid;
  }
  engine::Summarise(report);
  // Per source group.
  std::map<std::string, engine::ValidationReport> groups;
  for (const auto& row : report.rows) groups[engine::SourceGroup(row.source)].rows.push_back(row);
  for (auto& [name, g] : groups) engine::Summarise(g);

  if (fmt == Format::kJson) {
    nlohmann::ordered_json j;
    j["rows"] = nlohmann::ordered_json::array();
    for (const auto& r : report.rows) {
      nlohmann::ordered_json row;
      row["model"] = r.model;
      row["source"] = r.source;
      row["line"] = r.line;
      row["metric"] = r.metric;
      row["measured"] = r.measured;
      row["predicted"] = r.error_pct ? nlohmann::ordered_json(r.predicted) : nlohmann::ordered_json();
      row["error_pct"] = r.error_pct ? nlohmann::ordered_json(*r.error_pct) : nlohmann::ordered_json();
      row["skipped"] = r.skipped.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.skipped);
      row["assumptions"] = r.assumptions;
      row["predicted_out_of_memory"] = r.predicted_oom;
      j["rows"].push_back(row);
    }
    j["mape_pct"] = report.mape_pct;
    j["max_abs_error_pct"] = report.max_abs_error_pct;
    j["evaluated"] = report.evaluated;
    j["skipped"] = report.skipped;
    nlohmann::ordered_json by;
    for (const auto& [name, g] : groups)
      by[name] = {{"mape_pct", g.mape_pct}, {"max_abs_error_pct", g.max_abs_error_pct},
                  {"evaluated", g.evaluated}, {"skipped", g.skipped}};
    j["by_source"] = by;
    out << j.dump(2) << "\n";
  } else if (fmt == Format::kCsv) {
    out << "line,model,metric,measured,predicted,error_pct,skipped\n";
    for (const auto& r : report.rows)
      out << r.line << ",\"" << r.model << "\"," << r.metric << "," << r.measured << ","
          << (r.error_pct ? std::to_string(r.predicted) : "") << ","
          << (r.error_pct ? std::to_string(*r.error_pct) : "") << ",\"" << r.skipped << "\"\n";
  } else {
    out << std::left << std::setw(6) << "line" << std::setw(18) << "model" << std::setw(26)
        << "metric" << std::right << std::setw(10) << "measured" << std::setw(11) << "predicted"
        << std::setw(9) << "error" << "\n";
    for (const auto& r : report.rows) {
      out << std::left << std::setw(6) << r.line << std::setw(18) << r.model.substr(0, 17)
          << std::setw(26) << (r.metric.empty() ? "-" : r.metric) << std::right;
      if (r.error_pct) {
        const int digits = r.metric == "mfu" ? 3 : 2;
        out << std::setw(10) << Fixed(r.measured, digits) << std::setw(11)
            << Fixed(r.predicted, digits) << std::setw(8) << Fixed(*r.error_pct, 1) << "%"
            << (r.predicted_oom ? "  (memory model: does not fit)" : "") << "\n";
      } else {
        out << "   skipped: " << r.skipped << "\n";
      }
    }
    out << "\nby source:\n";
    for (const auto& [name, g] : groups)
      out << "  " << std::left << std::setw(40) << name.substr(0, 39) << std::right << " MAPE "
          << std::setw(6) << Fixed(g.mape_pct, 2) << " %  max " << std::setw(6)
          << Fixed(g.max_abs_error_pct, 2) << " %  (" << g.evaluated << " evaluated, "
          << g.skipped << " skipped)\n";
    out << "\nall: MAPE " << Fixed(report.mape_pct, 2) << " %, max |error| "
        << Fixed(report.max_abs_error_pct, 2) << " %, " << report.evaluated << " evaluated, "
        << report.skipped << " skipped\n";
  }
  bool fail = false;
  if (max_mape >= 0 && report.mape_pct > max_mape) {
    err << "validate: MAPE " << Fixed(report.mape_pct, 2) << " % exceeds --max-mape " << max_mape << " %\n";
    fail = true;
  }
  if (max_error >= 0 && report.max_abs_error_pct > max_error) {
    err << "validate: max |error| " << Fixed(report.max_abs_error_pct, 2) << " % exceeds --max-error "
        << max_error << " %\n";
    fail = true;
  }
  return fail ? kExitInvalid : kExitOk;
}

}  // namespace orrery::cli
