// `orrery calibrate`: parses options, calls orrery::Calibrate* (core/api/
// calibrate.h: probe, fit and write a device profile; check a CPU layer;
// list and compare stored probe runs), presents the result.

#include <boost/program_options.hpp>

#include "cli/api_support.h"
#include "cli/calibrate_options.h"
#include "cli/cli_common.h"
#include "core/api/calibrate.h"
#include "core/api/text.h"

namespace orrery::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kOverview =
    "orrery calibrate run|import|check-layer|runs|compare ...\n\n"
    "Measures the kernels of this machine and turns the measurements into a device\n"
    "profile (efficiency curves, overhead, and on a CPU the peak rates) that the\n"
    "estimator uses exactly like a preset.\n\n"
    "  run          run a probe (cpu, or cuda:N when built and a GPU is present) and write a profile\n"
    "  import       turn probe records (JSON) into a profile\n"
    "  check-layer  time one GPT layer in Eigen on this CPU and compare with the engine's prediction\n"
    "  runs         list the probe runs stored in a calibration database\n"
    "  compare      compare two stored runs record by record\n\n"
    "Examples:\n"
    "  orrery calibrate run --device cpu --quick --out cpu.yaml --db calib.db\n"
    "  orrery calibrate import hardware/calibration/measurements/h200/cuda_full_run1.json \\\n"
    "      --base h200 --out h200-measured.yaml --db calib.db\n"
    "  orrery calibrate check-layer --profile cpu.yaml --threads 1\n"
    "  orrery calibrate runs --db calib.db\n"
    "  orrery calibrate compare --db calib.db 1 2\n\n"
    "Each subcommand has --help. Exit status: 0 success, 1 invalid input, a failed\n"
    "probe or a failed tolerance, 2 usage error.\n";

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

// Presents a written profile (nothing on stdout when the profile went there).
int Present(const CalibrateProfileResult& r, Format fmt, std::ostream& out, std::ostream& err) {
  for (const auto& n : r.notes) err << n << "\n";
  if (!r.ok()) return PrintFailure(r, err);
  if (r.profile_path != "-") text::PrintProfileSummary(r, fmt, out);
  return kExitOk;
}

// --- run ------------------------------------------------------------------------

int RunRun(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery calibrate run --device cpu|cuda:N [--quick|--full] --out PROFILE.yaml [options]\n\n"
      "Runs a calibration probe on this machine and writes a device profile from its\n"
      "records. The CPU probe runs in-process (Eigen GEMMs, STREAM copy/scale/triad,\n"
      "element-wise kernels); on a CPU the profile's peaks are measured: peak_fp32 is the\n"
      "best fp32 GEMM rate (peak_bf16 the same figure as a stand-in, said so in the file),\n"
      "memory_bandwidth the best STREAM rate beyond the last-level cache. The CUDA probe\n"
      "(orrery_cuda_probe) runs only when it was built and a GPU is visible; its\n"
      "efficiencies are relative to the peaks of --base.\n\noptions");
  std::string device, out_path, probe_out, probe_path, clock_text = "wall";
  bool quick = false, full = false;
  int threads = 0;
  FitFlags flags;
  opts.add_options()("help,h", "show this help")("device", po::value(&device), "cpu, or cuda:N (GPU ordinal N)")(
      "quick", po::bool_switch(&quick), "small grids (CPU: seconds; the default)")(
      "full", po::bool_switch(&full), "grids from cache to memory sizes (CPU: a minute or two)")(
      "out", po::value(&out_path), "profile to write ('-' = stdout)")(
      "threads", po::value(&threads)->default_value(0), "CPU threads to measure with (0 = all)")(
      "clock", po::value(&clock_text)->default_value("wall"),
      "CPU timings: wall, or thread_cpu (with --threads 1: leaves out waits for a core on a busy machine)")(
      "probe-out", po::value(&probe_out), "also keep the raw probe records (JSON)")(
      "probe", po::value(&probe_path), "path of orrery_cuda_probe (default: the one built with orrery)");
  AddFitOptions(opts, flags);
  po::variables_map vm;
  if (!Parse(args, opts, {}, {}, vm, "run", err)) return kExitUsage;
  if (vm.count("help")) {
    out << opts
        << "\nExamples:\n"
           "  orrery calibrate run --device cpu --quick --out cpu.yaml\n"
           "  orrery calibrate run --device cpu --full --threads 1 --out cpu-1t.yaml --db calib.db\n"
           "  orrery calibrate run --device cpu --quick --threads 1 --clock thread_cpu --statistic min --out cpu.yaml\n"
           "  orrery calibrate run --device cuda:0 --base h200 --out h200-here.yaml --probe-out h200.json\n"
           "Then use the profile like a preset: copy it to configs/devices/NAME.yaml (or a folder\n"
           "named by $ORRERY_CONFIG_DIR) and name it in a system's `device:`, or paste its\n"
           "`device:` map into a scenario.\n";
    return kExitOk;
  }
  if (device.empty() || out_path.empty()) {
    err << "error: --device and --out are required (see orrery calibrate run --help)\n";
    return kExitUsage;
  }
  if (quick && full) {
    err << "error: --quick and --full exclude each other\n";
    return kExitUsage;
  }
  Format fmt;
  if (!ParseFormat(flags.format, fmt, err)) return kExitUsage;
  CalibrateRunRequest req;
  if (!MakeProfileRequest(flags, out_path, req.profile, err)) return kExitUsage;
  req.probe.device = device;
  req.probe.full = full;
  req.probe.threads = threads;
  req.probe.clock = clock_text;
  req.probe.probe_out = probe_out;
  req.probe.probe_path = probe_path;
  req.probe.base = flags.base;
  req.probe.command_line = "orrery calibrate run";
  for (const auto& a : args) req.probe.command_line += " " + a;
  return Present(CalibrateRun(req, StatusLines(err)), fmt, out, err);
}

// --- import -------------------------------------------------------------------

int RunImport(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery calibrate import PROBE.json --out PROFILE.yaml [--base DEVICE] [options]\n\n"
      "Turns probe records (orrery_cpu_probe / orrery_cuda_probe output, schema\n"
      "orrery.calibration.v1) into a device profile: gemm_efficiency from the GEMMs of one\n"
      "datatype that are not memory-bound, memory_efficiency from copies beyond twice the\n"
      "last-level cache, kernel_overhead from the smallest copies (profile_fit.h has the\n"
      "formulas). GPU records need --base for the peaks; CPU records measure their own.\n"
      "The profile passes `orrery check`; its comments say where every number comes from.\n\noptions");
  std::string out_path;
  FitFlags flags;
  opts.add_options()("help,h", "show this help")("out", po::value(&out_path), "profile to write ('-' = stdout)");
  AddFitOptions(opts, flags);
  po::options_description hidden;
  hidden.add_options()("probe-file", po::value<std::string>(), "");
  po::positional_options_description pos;
  pos.add("probe-file", 1);
  po::variables_map vm;
  if (!Parse(args, opts, pos, hidden, vm, "import", err)) return kExitUsage;
  if (vm.count("help")) {
    out << opts
        << "\nExamples:\n"
           "  orrery calibrate import hardware/calibration/measurements/h200/cuda_full_run1.json --base h200 \\\n"
           "      --out configs/devices/h200-measured.yaml --db calib.db\n"
           "  orrery calibrate import cuda.json --base h100-sxm --gemm-dtype fp8_e4m3 --out h100-fp8.yaml\n"
           "  orrery calibrate import cpu.json --statistic min --out cpu.yaml\n"
           "  orrery calibrate import run1.json --base h200 --gemm-bins '4 GFLOP,10 GFLOP,25 GFLOP' --overhead '4 us' --out -\n";
    return kExitOk;
  }
  if (!vm.count("probe-file") || out_path.empty()) {
    err << "error: PROBE.json and --out are required (see orrery calibrate import --help)\n";
    return kExitUsage;
  }
  Format fmt;
  if (!ParseFormat(flags.format, fmt, err)) return kExitUsage;
  CalibrateImportRequest req;
  req.probe_file = vm["probe-file"].as<std::string>();
  if (!MakeProfileRequest(flags, out_path, req.profile, err)) return kExitUsage;
  return Present(CalibrateImport(req), fmt, out, err);
}

}  // namespace

int RunCalibrateCheckLayer(const Args& args, std::ostream& out, std::ostream& err);
int RunCalibrateRuns(const Args& args, std::ostream& out, std::ostream& err);
int RunCalibrateCompare(const Args& args, std::ostream& out, std::ostream& err);

int RunCalibrate(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? err : out) << kOverview;
    return args.empty() ? kExitUsage : kExitOk;
  }
  const std::string sub = args[0];
  const Args rest(args.begin() + 1, args.end());
  if (sub == "run") return RunRun(rest, out, err);
  if (sub == "import") return RunImport(rest, out, err);
  if (sub == "check-layer") return RunCalibrateCheckLayer(rest, out, err);
  if (sub == "runs") return RunCalibrateRuns(rest, out, err);
  if (sub == "compare") return RunCalibrateCompare(rest, out, err);
  err << "error: unknown calibrate subcommand '" << sub << "'";
  const std::string hint = base::DidYouMean(sub, {"run", "import", "check-layer", "runs", "compare"});
  if (!hint.empty()) err << "; " << hint;
  err << " (see orrery calibrate --help)\n";
  return kExitUsage;
}

}  // namespace orrery::cli
