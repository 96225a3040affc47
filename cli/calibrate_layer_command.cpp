// `orrery calibrate check-layer | runs | compare`: parses options, calls
// orrery::CalibrateCheckLayer, CalibrationRuns, CalibrationCompare
// (core/api/calibrate.h), presents the result.

#include <boost/program_options.hpp>

#include "cli/api_support.h"
#include "cli/cli_common.h"
#include "core/api/calibrate.h"
#include "core/api/text.h"

namespace orrery::cli {

namespace po = boost::program_options;

namespace {

bool Parse(const Args& args, const po::options_description& visible,
           const po::positional_options_description& pos, const po::options_description& hidden,
           po::variables_map& vm, const char* sub, std::ostream& err) {
  po::options_description all;
  all.add(visible).add(hidden);
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see orrery calibrate " << sub << " --help)\n";
    return false;
  }
  return true;
}

}  // namespace

// --- check-layer --------------------------------------------------------------

int RunCalibrateCheckLayer(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery calibrate check-layer [--profile PROFILE.yaml] [--shape B,S,H,A]... [options]\n\n"
      "Closes the loop on this CPU: times one GPT layer (LayerNorm, QKV, causal softmax\n"
      "attention with dropout, out-projection, GELU MLP, residuals; forward and backward,\n"
      "fp32, Eigen) and compares it with the engine's prediction of the same layer\n"
      "(models::LayerOps + hardware::GemmTime/MemoryTime) on a CPU profile. Without\n"
      "--profile it first calibrates this CPU (quick probe, same threads). The error is\n"
      "(predicted - measured) / measured; exit 1 when any exceeds --max-error.\n"
      "On a busy shared machine the defaults (one thread, its CPU time, the minimum\n"
      "sample) keep other processes out of the figures as far as a timer can.\n\noptions");
  std::string profile, probe_out, measured, format = "table", statistic = "min", clock_text = "auto";
  std::vector<std::string> shapes_text;
  int threads = 1, reps = 7;
  double max_error = 25;
  opts.add_options()("help,h", "show this help")(
      "profile", po::value(&profile), "CPU device profile (from orrery calibrate run); default: calibrate now")(
      "shape", po::value(&shapes_text)->composing(),
      "layer BATCH,SEQ,HIDDEN,HEADS (repeatable; default 1,256,512,8  1,512,768,12  4,128,1024,16)")(
      "threads", po::value(&threads)->default_value(1), "CPU threads for the probe and the layer (0 = all)")(
      "clock", po::value(&clock_text)->default_value("auto"),
      "wall, or thread_cpu (one thread's CPU time: waits for a core on a busy machine left out); "
      "auto = thread_cpu with --threads 1, else wall")(
      "reps", po::value(&reps)->default_value(7), "timed samples per pass")(
      "statistic", po::value(&statistic)->default_value("min"),
      "min (default: the least disturbed sample on a shared machine) or median, for the layer and the "
      "probe records alike")(
      "max-error", po::value(&max_error)->default_value(25), "tolerance in percent")(
      "probe-out", po::value(&probe_out), "keep the calibration records (JSON) when calibrating now")(
      "measured", po::value(&measured),
      "instead of timing here, compare with layers measured elsewhere (orrery.gpu_layer.v1 JSON, e.g. "
      "validation/gpu_layer/h200/h200_gpt_layer_run1.json); needs --profile")(
      "format", po::value(&format)->default_value("table"), "table | json | csv");
  po::variables_map vm;
  if (!Parse(args, opts, {}, {}, vm, "check-layer", err)) return kExitUsage;
  if (vm.count("help")) {
    out << opts
        << "\nExamples:\n"
           "  orrery calibrate check-layer\n"
           "  orrery calibrate check-layer --profile cpu.yaml --threads 1 --clock wall --statistic median\n"
           "  orrery calibrate check-layer --shape 2,256,768,12 --shape 1,1024,512,8 --format json\n"
           "  orrery calibrate check-layer --measured validation/gpu_layer/h200/h200_gpt_layer_run1.json \\\n"
           "      --profile h200 --max-error 1000\n";
    return kExitOk;
  }
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  CheckLayerRequest req;
  req.profile = profile;
  req.shapes = shapes_text;
  req.threads = threads;
  req.clock = clock_text;
  req.reps = reps;
  req.statistic = statistic;
  req.max_error_pct = max_error;
  req.probe_out = probe_out;
  req.measured = measured;
  const CheckLayerResult r = CalibrateCheckLayer(req, StatusLines(err));
  if (!r.ok() && r.check.rows.empty()) return PrintFailure(r, err);
  text::PrintLayerCheck(r, fmt, out);
  return r.check.passed ? kExitOk : kExitInvalid;
}

// --- runs, compare ------------------------------------------------------------

int RunCalibrateRuns(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery calibrate runs --db FILE [--format table|json|csv]\n\n"
      "Lists the probe runs stored in a calibration database (written by run and import\n"
      "with --db).\n\noptions");
  std::string db, format = "table";
  opts.add_options()("help,h", "show this help")("db", po::value(&db), "calibration database (SQLite)")(
      "format", po::value(&format)->default_value("table"), "table | json | csv");
  po::variables_map vm;
  if (!Parse(args, opts, {}, {}, vm, "runs", err)) return kExitUsage;
  if (vm.count("help")) {
    out << opts << "\nExample:\n  orrery calibrate runs --db calib.db\n";
    return kExitOk;
  }
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  if (db.empty()) {
    err << "error: --db is required (see orrery calibrate runs --help)\n";
    return kExitUsage;
  }
  const CalibrationRunsResult r = CalibrationRuns({db});
  if (!r.ok()) return PrintFailure(r, err);
  text::PrintCalibrationRuns(r, fmt, out);
  return kExitOk;
}

int RunCalibrateCompare(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery calibrate compare --db FILE RUN_A RUN_B [--kind K] [--format table|json|csv]\n\n"
      "Compares two stored probe runs record by record (same kind, datatype and shape):\n"
      "rate in each and the ratio B/A. Run ids come from `orrery calibrate runs`.\n\noptions");
  std::string db, format = "table", kind;
  opts.add_options()("help,h", "show this help")("db", po::value(&db), "calibration database (SQLite)")(
      "kind", po::value(&kind), "only records of this kind (gemm, copy, d2d_copy, ...)")(
      "format", po::value(&format)->default_value("table"), "table | json | csv");
  po::options_description hidden;
  hidden.add_options()("runs", po::value<std::vector<std::int64_t>>(), "");
  po::positional_options_description pos;
  pos.add("runs", 2);
  po::variables_map vm;
  if (!Parse(args, opts, pos, hidden, vm, "compare", err)) return kExitUsage;
  if (vm.count("help")) {
    out << opts << "\nExample:\n  orrery calibrate compare --db calib.db 1 2 --kind gemm\n";
    return kExitOk;
  }
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  if (db.empty() || !vm.count("runs") || vm["runs"].as<std::vector<std::int64_t>>().size() != 2) {
    err << "error: --db and two run ids are required (see orrery calibrate compare --help)\n";
    return kExitUsage;
  }
  const auto ids = vm["runs"].as<std::vector<std::int64_t>>();
  const CalibrationCompareRequest req{db, ids[0], ids[1], kind};
  const CalibrationCompareResult r = CalibrationCompare(req);
  if (!r.ok()) return PrintFailure(r, err);
  text::PrintCalibrationCompare(r, req, fmt, out);
  return kExitOk;
}

}  // namespace orrery::cli
