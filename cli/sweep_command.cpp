// `orrery sweep`: what-if grids stored in SQLite, resumable, over threads
// and MPI ranks. Parses options, calls orrery::Sweep, presents the summary.

#include "cli/cli_common.h"
#include "cli/run_support.h"
#include "core/api/json.h"
#include "core/api/sweep.h"
#include "core/base/format.h"

namespace orrery::cli {

namespace po = boost::program_options;

int RunSweep(const Args& args, std::ostream& out, std::ostream& err) {
  VerbOptions v("sweep",
      "orrery sweep SWEEP.yaml --db RESULTS.sqlite [--resume] [--threads N] [--quiet]\n\n"
      "Evaluates every point of a sweep file — axes over any parameter path (the paths of\n"
      "--set and `orrery explain`), as value lists or linear/log ranges, zipped within a\n"
      "group and crossed between groups — each point either with the scenario's plan\n"
      "(each: estimate) or with the best plan a search finds there (each: search). Rows go\n"
      "to a SQLite store (docs/result-store.md) in batched transactions; --resume skips the\n"
      "points already stored, so an interrupted sweep (Ctrl-C, kill -9) finishes with\n"
      "exactly the rows of an uninterrupted one. Read them with `orrery db export`.");
  SweepRequest req;
  v.Positional("sweep").Threads().Quiet().Formats("table", "summary as table | json | csv");
  v.add_options()("db", po::value(&req.db), "SQLite result store (created when absent)")(
      "resume", "skip the points of this sweep already in the store")(
      "batch", po::value(&req.batch), "points per transaction (default 64)");
  v.Examples(
      "\nA sweep file:\n"
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
      "  orrery db export results.sqlite --format csv > results.csv\n");
  if (const int code = v.Parse(args, out, err); code >= 0) return code;
  if (!v.Has("sweep")) return v.Usage(err, "missing SWEEP.yaml");
  if (req.db.empty()) return v.Usage(err, "--db RESULTS.sqlite is required");
  req.sweep_file = v.Arg("sweep");
  req.resume = v.Has("resume");
  req.threads = v.threads();
  std::unique_ptr<engine::Comm> comm = MakeComm();
  req.comm = comm.get();
  Progress progress(err, "sweep", "points", v.quiet() || comm->rank() != 0);
  Control control;
  control.progress = progress.Callback();
  const SweepResult r = Sweep(req, control);
  progress.Finish();
  if (r.status == Status::kUsage) return v.Usage(err, "--" + r.reason);
  if (!r.primary) return ExitCode(r.status);
  if (r.spec.name.empty() || r.status == Status::kInvalidInput) return v.Report(r, err);
  const engine::SweepRunStats& st = r.stats;
  if (v.format() == Format::kJson) out << ToJson(r).dump(2) << "\n";
  else if (v.format() == Format::kCsv) WriteCsv(ToJson(r), out);
  else
    out << "sweep      " << r.spec.name << " (" << engine::HashHex(r.spec.hash) << "), "
        << (r.spec.each == engine::SweepEach::kSearch ? "best plan searched" : "scenario plan estimated")
        << " at each point\n"
        << "points     " << st.points << ": " << st.skipped << " already stored, " << st.evaluated
        << " evaluated now (" << st.ok << " ok, " << st.infeasible << " infeasible, " << st.invalid
        << " invalid)\n"
        << "wall       " << base::FormatTime(st.wall_s)
        << (r.ranks > 1 ? " on " + std::to_string(r.ranks) + " ranks" : "") << "\n"
        << "stored in  " << r.db << "   (orrery db export " << r.db << " --format csv)\n";
  return v.Report(r, err);
}

}  // namespace orrery::cli
