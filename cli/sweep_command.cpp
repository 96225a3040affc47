// `orrery sweep`: what-if grids stored in SQLite, resumable, over threads
// and MPI ranks.

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/run_support.h"
#include "core/search/sweep.h"

namespace orrery::cli {

namespace po = boost::program_options;

int RunSweep(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery sweep SWEEP.yaml --db RESULTS.sqlite [--resume] [--threads N] [--quiet]\n\n"
      "Evaluates every point of a sweep file — axes over any parameter path (the paths of\n"
      "--set and `orrery explain`), as value lists or linear/log ranges, zipped within a\n"
      "group and crossed between groups — each point either with the scenario's plan\n"
      "(each: estimate) or with the best plan a search finds there (each: search). Rows go\n"
      "to a SQLite store (docs/result-store.md) in batched transactions; --resume skips the\n"
      "points already stored, so an interrupted sweep (Ctrl-C, kill -9) finishes with\n"
      "exactly the rows of an uninterrupted one. Read them with `orrery db export`.\n\noptions");
  std::string db;
  int threads = 0;
  size_t batch = 64;
  opts.add_options()("help,h", "show this help")("db", po::value(&db), "SQLite result store (created when absent)")(
      "resume", "skip the points of this sweep already in the store")(
      "threads", po::value(&threads), "worker threads (default: every core)")(
      "batch", po::value(&batch), "points per transaction (default 64)")("quiet,q", "no progress output")(
      "format", po::value<std::string>()->default_value("table"), "summary as table | json | csv");
  po::options_description hidden;
  hidden.add_options()("sweep", po::value<std::string>(), "");
  po::positional_options_description pos;
  pos.add("sweep", 1);
  po::variables_map vm;
  try {
    po::options_description all;
    all.add(opts).add(hidden);
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see orrery sweep --help)\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts
        << "\nA sweep file:\n"
           "  sweep:\n"
           "    name: llama3-70b-what-if\n"
           "    scenario: ../scenarios/llama3-70b-h100.yaml   # file (relative to this one) or preset\n"
           "    each: search                                  # or estimate\n"
           "    search: {top: 1, objective: time}\n"
           "    axes:\n"
           "      - {path: system.nodes, values: [32, 64, 128]}\n"
           "      - {path: system.network[1].bandwidth, log: {from: 200 Gb/s, to: 800 Gb/s, points: 3}}\n"
           "      - {path: system.device.memory_capacity, linear: {from: 80 GB, to: 160 GB, points: 3}}\n"
           "\nExamples:\n"
           "  orrery sweep configs/sweeps/llama3-70b-what-if.yaml --db results.sqlite\n"
           "  orrery sweep configs/sweeps/llama3-70b-what-if.yaml --db results.sqlite --resume\n"
           "  mpirun -np 4 orrery sweep configs/sweeps/llama3-70b-what-if.yaml --db results.sqlite\n"
           "  orrery db export results.sqlite --format csv > results.csv\n"
           "\nExit status: 0 done, 1 invalid sweep file or store, 2 usage error.\n";
    return kExitOk;
  }
  if (!vm.count("sweep")) {
    err << "error: missing SWEEP.yaml (see orrery sweep --help)\n";
    return kExitUsage;
  }
  if (db.empty()) {
    err << "error: --db RESULTS.sqlite is required (see orrery sweep --help)\n";
    return kExitUsage;
  }
  if (threads < 0 || threads > 1024 || batch < 1 || batch > 100000) {
    err << "error: --threads must be in [0, 1024] and --batch in [1, 100000]\n";
    return kExitUsage;
  }
  Format fmt;
  if (!ParseFormat(vm["format"].as<std::string>(), fmt, err)) return kExitUsage;
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  base::Diagnostics diags;
  engine::Scenario base;
  auto spec = engine::LoadSweepFile(vm["sweep"].as<std::string>(), store, base, diags);
  if (!spec) {
    PrintDiagnostics(diags, err);
    return kExitInvalid;
  }
  std::unique_ptr<engine::Comm> comm = MakeComm();
  Progress progress(err, "sweep", "points", vm.count("quiet") > 0 || comm->rank() != 0);
  engine::SweepRunOptions o;
  o.db = db;
  o.resume = vm.count("resume") > 0;
  o.threads = threads;
  o.batch = batch;
  o.comm = comm.get();
  o.progress = progress.Callback();
  engine::SweepRunStats st;
  std::string error;
  const bool ok = engine::RunSweep(*spec, base, o, st, error);
  progress.Finish();
  if (!ok) {
    if (comm->rank() == 0) err << "orrery sweep: error: " << error << "\n";
    return kExitInvalid;
  }
  if (comm->rank() != 0) return kExitOk;
  if (fmt == Format::kJson) {
    const nlohmann::ordered_json j{{"sweep", spec->name},     {"hash", engine::HashHex(spec->hash)},
                                   {"points", st.points},     {"skipped", st.skipped},
                                   {"evaluated", st.evaluated}, {"ok", st.ok},
                                   {"infeasible", st.infeasible}, {"invalid", st.invalid},
                                   {"wall_s", st.wall_s},     {"db", db}};
    out << j.dump(2) << "\n";
  } else if (fmt == Format::kCsv) {
    out << "sweep,hash,points,skipped,evaluated,ok,infeasible,invalid,wall_s,db\n"
        << spec->name << "," << engine::HashHex(spec->hash) << "," << st.points << "," << st.skipped
        << "," << st.evaluated << "," << st.ok << "," << st.infeasible << "," << st.invalid << ","
        << st.wall_s << "," << db << "\n";
  } else {
    out << "sweep      " << spec->name << " (" << engine::HashHex(spec->hash) << "), "
        << (spec->each == engine::SweepEach::kSearch ? "best plan searched" : "scenario plan estimated")
        << " at each point\n"
        << "points     " << st.points << ": " << st.skipped << " already stored, " << st.evaluated
        << " evaluated now (" << st.ok << " ok, " << st.infeasible << " infeasible, " << st.invalid
        << " invalid)\n"
        << "wall       " << base::FormatNumber(st.wall_s, 3) << " s"
        << (comm->size() > 1 ? " on " + std::to_string(comm->size()) + " ranks" : "") << "\n"
        << "stored in  " << db << "   (orrery db export " << db << " --format csv)\n";
  }
  return kExitOk;
}

}  // namespace orrery::cli
