// `orrery db`: read the SQLite result store of sweeps. Parses options, calls
// orrery::DbList / orrery::DbExport, presents the rows.

#include "cli/cli_common.h"
#include "core/api/json.h"
#include "core/api/sweep.h"

namespace orrery::cli {

namespace po = boost::program_options;

int RunDb(const Args& args, std::ostream& out, std::ostream& err) {
  VerbOptions v("db",
      "orrery db list RESULTS.sqlite [--format table|json|csv]\n"
      "orrery db export RESULTS.sqlite [--sweep NAME|HASH] [--format csv|json]\n\n"
      "Reads a result store written by `orrery sweep` (schema: docs/result-store.md).\n"
      "list prints the sweeps it holds with their point counts; export prints one row per\n"
      "stored point, ordered by sweep and point index. The CSV export is flat: each sweep\n"
      "axis is its own column with its value in SI units (the unit ends the column name),\n"
      "then status, reason, the plan's knobs (plan.*), the metrics and the time and memory\n"
      "breakdown (time.*, memory.*). The JSON export keeps the stored form (params as\n"
      "written, the inner search's runners-up).");
  DbRequest req;
  v.Positional("action").Positional("db").Formats("", "table | json | csv (export: csv | json)");
  v.add_options()("sweep", po::value(&req.sweep), "only this sweep (name, or hash or its prefix)");
  v.Examples(
      "\nExamples:\n  orrery db list results.sqlite\n"
      "  orrery db export results.sqlite --format csv > points.csv\n"
      "  orrery db export results.sqlite --sweep llama3-70b-what-if --format json\n"
      "  sqlite3 results.sqlite 'SELECT params, iteration_s FROM points ORDER BY iteration_s LIMIT 5'\n");
  // The default format depends on the action: parse it after the action is known.
  std::vector<std::string> a = args;
  const bool has_format = std::any_of(a.begin(), a.end(), [](const std::string& s) {
    return s == "--format" || s.rfind("--format=", 0) == 0;
  });
  const bool is_export = std::find(a.begin(), a.end(), "export") != a.end();
  if (!has_format) a.push_back(is_export ? "--format=csv" : "--format=table");
  if (const int code = v.Parse(a, out, err); code >= 0) return code;
  if (!v.Has("action") || !v.Has("db"))
    return v.Usage(err, "expected 'orrery db list|export RESULTS.sqlite'");
  const std::string action = v.Arg("action");
  req.db = v.Arg("db");
  if (action != "list" && action != "export") {
    const std::string hint = base::DidYouMean(action, {"list", "export"});
    return v.Usage(err, "unknown action '" + action + "'" + (hint.empty() ? "" : "; " + hint) +
                            " (list or export)");
  }
  if (action == "export") {
    if (v.format() == Format::kTable) return v.Usage(err, "export writes csv or json (--format csv|json)");
    const DbExportResult r = DbExport(req);
    if (!r.ok()) return v.Report(r, err);
    if (v.format() == Format::kJson) out << ToJson(r).dump(2) << "\n";
    else WriteCsv(FlatExportRows(r), out);
    return kExitOk;
  }
  const DbListResult r = DbList(req);
  if (!r.ok()) return v.Report(r, err);
  if (v.format() == Format::kJson) out << ToJson(r).dump(2) << "\n";
  else if (v.format() == Format::kCsv) {
    // The document is held: a range over ToJson(r)["sweeps"] would outlive it.
    const Json doc = ToJson(r);
    WriteCsv(std::vector<Json>(doc["sweeps"].begin(), doc["sweeps"].end()), out);
  } else {
    for (const engine::SweepRecord& s : r.sweeps)
      out << engine::HashHex(s.hash) << "  " << s.name << "  (" << s.points << " points, each "
          << s.each << ", " << s.spec_file << ")\n";
    if (r.sweeps.empty()) out << "(no sweeps stored)\n";
  }
  return kExitOk;
}

}  // namespace orrery::cli
