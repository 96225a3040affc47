// `orrery db`: read the SQLite result store of sweeps.

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "core/search/result_store.h"

namespace orrery::cli {

namespace po = boost::program_options;

int RunDb(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery db list RESULTS.sqlite [--format table|json|csv]\n"
      "orrery db export RESULTS.sqlite [--sweep NAME|HASH] [--format csv|json]\n\n"
      "Reads a result store written by `orrery sweep` (schema: docs/result-store.md).\n"
      "list prints the sweeps it holds with their point counts; export prints one row per\n"
      "stored point (parameters, status, plan, key metrics, breakdown), ordered by sweep\n"
      "and point index.\n\noptions");
  std::string format, sweep;
  opts.add_options()("help,h", "show this help")("format", po::value(&format), "table | json | csv")(
      "sweep", po::value(&sweep), "only this sweep (name, or hash or its prefix)");
  po::options_description hidden;
  hidden.add_options()("action", po::value<std::string>(), "")("db", po::value<std::string>(), "");
  po::positional_options_description pos;
  pos.add("action", 1).add("db", 1);
  po::variables_map vm;
  try {
    po::options_description all;
    all.add(opts).add(hidden);
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see orrery db --help)\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts
        << "\nExamples:\n  orrery db list results.sqlite\n"
           "  orrery db export results.sqlite --format csv > points.csv\n"
           "  orrery db export results.sqlite --sweep llama3-70b-what-if --format json\n"
           "  sqlite3 results.sqlite 'SELECT params, iteration_s FROM points ORDER BY iteration_s LIMIT 5'\n";
    return kExitOk;
  }
  if (!vm.count("action") || !vm.count("db")) {
    err << "error: expected 'orrery db list|export RESULTS.sqlite' (see orrery db --help)\n";
    return kExitUsage;
  }
  const std::string action = vm["action"].as<std::string>();
  const std::string path = vm["db"].as<std::string>();
  if (action != "list" && action != "export") {
    const std::string hint = base::DidYouMean(action, {"list", "export"});
    err << "error: unknown action '" << action << "'" << (hint.empty() ? "" : "; " + hint)
        << " (list or export)\n";
    return kExitUsage;
  }
  if (format.empty()) format = action == "export" ? "csv" : "table";
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  if (action == "export" && fmt == Format::kTable) {
    err << "error: export writes csv or json (--format csv|json)\n";
    return kExitUsage;
  }
  std::string error;
  auto store = engine::ResultStore::Open(path, error, /*read_only=*/true);
  if (!store) {
    err << "orrery db: error: " << error << "\n";
    return kExitInvalid;
  }
  if (action == "export") {
    if (!store->Export(out, fmt == Format::kJson, sweep, error)) {
      err << "orrery db: error: " << path << ": " << error << "\n";
      return kExitInvalid;
    }
    return kExitOk;
  }
  const auto sweeps = store->Sweeps(error);
  if (!error.empty()) {
    err << "orrery db: error: " << path << ": " << error << "\n";
    return kExitInvalid;
  }
  if (fmt == Format::kCsv) out << "hash,name,each,objective,points,spec_file\n";
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (size_t i = 0; i < sweeps.size(); ++i) {
    const auto& s = sweeps[i];
    if (fmt == Format::kCsv)
      out << engine::HashHex(s.hash) << "," << s.name << "," << s.each << "," << s.objective << ","
          << s.points << "," << s.spec_file << "\n";
    else if (fmt == Format::kJson)
      list.push_back({{"hash", engine::HashHex(s.hash)}, {"name", s.name}, {"each", s.each},
                      {"objective", s.objective}, {"points", s.points}, {"spec_file", s.spec_file}});
    else
      out << engine::HashHex(s.hash) << "  " << s.name << "  (" << s.points << " points, each " << s.each
          << ", " << s.spec_file << ")\n";
  }
  if (fmt == Format::kJson) out << list.dump(2) << "\n";
  if (fmt == Format::kTable && sweeps.empty()) out << "(no sweeps stored)\n";
  return kExitOk;
}

}  // namespace orrery::cli
