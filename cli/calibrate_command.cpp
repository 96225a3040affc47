// `orrery calibrate`: measure this machine's kernels and turn the records
// into a device profile (hardware/calibration/profile_fit.h), keep raw records
// in a SQLite database, and check the CPU profile against a measured
// transformer layer (validation/cpu_layer/).

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibration_db.h"
#include "cli/cli_common.h"
#include "core/base/quantity.h"
#include "core/base/yaml_source.h"
#include "core/estimate/scenario.h"
#include "cpu_layer.h"
#include "cpu_layer_predict.h"
#include "cpu_probe.h"
#include "profile_fit.h"
#include "profile_yaml.h"

extern char** environ;

namespace orrery::cli {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;
using base::Dimension;
using base::FormatQuantity;
using calibration::FitOptions;
using calibration::FitResult;
using calibration::ProbeFile;

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

// --- options shared by run and import -----------------------------------------

struct FitFlags {
  std::string base;
  std::string gemm_dtype;
  std::string overhead = "auto";
  int bins_per_decade = 2;
  std::string gemm_bins;
  std::string statistic = "median";
  std::string db;
  std::string name;
  std::string memory_capacity;
  std::string format = "table";
};

void AddFitOptions(po::options_description& o, FitFlags& f) {
  o.add_options()("base", po::value(&f.base),
                  "device preset name (configs/devices/) or device YAML file supplying what the probe "
                  "does not measure; required for GPU records, optional for CPU records")(
      "gemm-dtype", po::value(&f.gemm_dtype),
      "GEMM datatype that sets gemm_efficiency: bf16, fp16, tf32, fp8_e4m3, fp32 (default: bf16 when "
      "measured, else fp32)")(
      "overhead", po::value(&f.overhead)->default_value("auto"),
      "per-kernel overhead to subtract: 'auto' (measured from the smallest copies) or a time, e.g. '4 us'")(
      "bins-per-decade", po::value(&f.bins_per_decade)->default_value(2),
      "curve points per factor of 10 in size (1..20)")(
      "gemm-bins", po::value(&f.gemm_bins),
      "fixed GEMM bin centres instead, e.g. '4 GFLOP,10 GFLOP,25 GFLOP'")(
      "statistic", po::value(&f.statistic)->default_value("median"),
      "time of a record: median, or min (better on a busy shared machine)")(
      "db", po::value(&f.db), "also store the raw records in this SQLite calibration database")(
      "name", po::value(&f.name), "device name in the profile (default: the base's, or the CPU model)")(
      "memory-capacity", po::value(&f.memory_capacity),
      "device memory for the profile, e.g. '64 GiB' (default: the base's, or the RAM the CPU probe recorded)")(
      "format", po::value(&f.format)->default_value("table"), "summary format: table | json | csv");
}

// Loads --base: a preset name, or a YAML file with a `device:` document.
bool LoadBase(const std::string& base, hardware::DeviceSpec& out, std::string& description,
              std::ostream& err) {
  base::Diagnostics diags;
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  std::error_code ec;
  if (fs::is_regular_file(base, ec)) {
    auto root = base::LoadYamlFile(base, diags);
    if (root && (!root->IsMap() || !(*root)["device"])) {
      diags.Add(base::LocationOf(*root, base), "", "", "expected a document with the top-level key 'device'");
    } else if (root) {
      engine::LoadDeviceMap((*root)["device"], "device", base, out, diags);
    }
    description = "device file " + base;
  } else {
    engine::LoadDevicePreset(base, store, base::SourceLocation{"--base", 0, 0}, "--base", out, diags);
    description = "preset " + base + " (configs/devices/ or $ORRERY_CONFIG_DIR)";
  }
  if (!diags.ok()) {
    PrintDiagnostics(diags, err);
    return false;
  }
  return true;
}

// Turns the flags into FitOptions; prints the error and returns false.
bool MakeFitOptions(const FitFlags& f, FitOptions& o, std::ostream& err) {
  o.gemm_dtype = f.gemm_dtype;
  if (f.overhead != "auto") {
    const base::QuantityParse q = base::ParseQuantity(f.overhead, Dimension::kTime);
    if (!q.value) {
      err << "error: --overhead: '" << f.overhead << "': " << q.error << " (expected 'auto' or a time such as '4 us')\n";
      return false;
    }
    o.kernel_overhead_s = *q.value;
  }
  o.gemm_bins.per_decade = f.bins_per_decade;
  o.memory_bins.per_decade = f.bins_per_decade;
  if (!f.gemm_bins.empty()) {
    std::stringstream ss(f.gemm_bins);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const base::QuantityParse q = base::ParseQuantity(item, Dimension::kFlops);
      if (!q.value) {
        err << "error: --gemm-bins: '" << item << "': " << q.error << " (expected sizes such as '4 GFLOP')\n";
        return false;
      }
      o.gemm_bins.centres.push_back(*q.value);
    }
  }
  if (f.statistic == "median") {
    o.statistic = calibration::TimeStatistic::kMedian;
  } else if (f.statistic == "min") {
    o.statistic = calibration::TimeStatistic::kMin;
  } else {
    err << "error: --statistic: unknown statistic '" << f.statistic << "' (one of: median, min)\n";
    return false;
  }
  return true;
}

nlohmann::ordered_json CurveJson(const std::vector<calibration::CurvePoint>& c) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& p : c) a.push_back({p.size, p.efficiency, p.records});
  return a;
}

void PrintFitSummary(const FitResult& fit, const std::string& profile, std::int64_t run_id,
                     Format fmt, std::ostream& out) {
  const hardware::DeviceSpec& d = fit.device;
  if (fmt == Format::kJson) {
    nlohmann::ordered_json j;
    j["profile"] = profile;
    j["device"] = d.name;
    j["kernel_overhead_s"] = fit.kernel_overhead_s;
    j["overhead_measured"] = fit.overhead_measured;
    j["peak_fp32"] = d.peak_fp32;
    j["peak_bf16"] = d.peak_bf16;
    j["memory_bandwidth"] = d.memory_bandwidth;
    j["gemm_dtype"] = fit.gemm_dtype;
    j["gemm_peak"] = fit.gemm_peak;
    j["ridge_flop_per_byte"] = fit.ridge;
    j["gemm_records"] = fit.gemm_records;
    j["gemm_used"] = fit.gemm_used;
    j["gemm_memory_bound"] = fit.gemm_memory_bound;
    j["gemm_efficiency"] = CurveJson(fit.gemm_curve);
    j["memory_records"] = fit.memory_records;
    j["memory_used"] = fit.memory_used;
    j["memory_efficiency"] = CurveJson(fit.memory_curve);
    if (run_id > 0) j["db_run_id"] = run_id;
    out << j.dump(2) << "\n";
    return;
  }
  if (fmt == Format::kCsv) {
    out << "curve,size,efficiency,records\n";
    for (const auto& p : fit.gemm_curve) out << "gemm," << p.size << "," << p.efficiency << "," << p.records << "\n";
    for (const auto& p : fit.memory_curve) out << "memory," << p.size << "," << p.efficiency << "," << p.records << "\n";
    return;
  }
  auto row = [&](const std::string& k, const std::string& v) {
    out << "  " << std::left << std::setw(20) << k << v << "\n";
  };
  out << "profile " << profile << ": " << d.name << "\n";
  row("kernel_overhead", FormatQuantity(fit.kernel_overhead_s, Dimension::kTime) +
                             (fit.overhead_measured ? " (measured)" : " (given)"));
  row("peak_fp32", FormatQuantity(d.peak_fp32, Dimension::kFlopRate));
  row("peak_bf16", FormatQuantity(d.peak_bf16, Dimension::kFlopRate));
  row("memory_bandwidth", FormatQuantity(d.memory_bandwidth, Dimension::kBandwidth));
  row("gemm_efficiency", fit.gemm_dtype + " vs " + FormatQuantity(fit.gemm_peak, Dimension::kFlopRate) + ", " +
                             std::to_string(fit.gemm_used) + " of " + std::to_string(fit.gemm_records) +
                             " records (" + std::to_string(fit.gemm_memory_bound) + " memory-bound)");
  for (const auto& p : fit.gemm_curve)
    row("", FormatQuantity(p.size, Dimension::kFlops) + "  " + base::FormatNumber(p.efficiency, 3) + "  (" +
                std::to_string(p.records) + ")");
  row("memory_efficiency", std::to_string(fit.memory_used) + " of " + std::to_string(fit.memory_records) +
                               " records beyond 2 x " + FormatQuantity(fit.cache_bytes, Dimension::kBytes) + " cache");
  for (const auto& p : fit.memory_curve)
    row("", FormatQuantity(p.size, Dimension::kBytes) + "  " + base::FormatNumber(p.efficiency, 3) + "  (" +
                std::to_string(p.records) + ")");
  if (run_id > 0) row("database run", std::to_string(run_id));
}

// Fits, writes the profile (and the database rows). Shared by run and import.
int FitAndWrite(const ProbeFile& probe, const std::string& source, const FitFlags& flags,
                const std::string& out_path, std::ostream& out, std::ostream& err) {
  Format fmt;
  if (!ParseFormat(flags.format, fmt, err)) return kExitUsage;
  FitOptions options;
  if (!MakeFitOptions(flags, options, err)) return kExitUsage;
  hardware::DeviceSpec base;
  std::string base_description;
  const bool cpu = probe.header.probe == "cpu";
  if (!flags.base.empty()) {
    if (!LoadBase(flags.base, base, base_description, err)) return kExitInvalid;
  } else if (cpu) {
    base = calibration::CpuBaseDevice(probe.header);
    base_description = "none: the CPU described by the probe header (memory size, last-level cache)";
  } else {
    err << "error: --base is required for " << probe.header.probe
        << " records: a GPU probe measures efficiencies, not datasheet peaks (e.g. --base h200)\n";
    return kExitUsage;
  }
  if (!flags.memory_capacity.empty()) {
    const base::QuantityParse q = base::ParseQuantity(flags.memory_capacity, Dimension::kBytes);
    if (!q.value || !(*q.value > 0)) {
      err << "error: --memory-capacity: '" << flags.memory_capacity << "': "
          << (q.value ? std::string("must be > 0") : q.error) << " (e.g. '64 GiB')\n";
      return kExitUsage;
    }
    base.memory_capacity = *q.value;
  }
  if (!(base.memory_capacity > 0)) {
    err << "error: " << source << ": the probe header does not record the memory size (header.extra."
        << "memory_total_bytes; output of an older probe): give --memory-capacity, or --base with a device file\n";
    return kExitInvalid;
  }
  options.measure_peaks = cpu;
  FitResult fit = calibration::FitDeviceProfile(probe, base, options);
  if (!fit.ok) {
    err << "error: " << source << ": " << fit.error << "\n";
    return kExitInvalid;
  }
  if (!flags.name.empty()) fit.device.name = flags.name;
  if (cpu && fit.kernel_overhead_s > 1e-3)
    err << "warning: the smallest kernels take " << FormatQuantity(fit.kernel_overhead_s, Dimension::kTime)
        << " beyond moving their bytes: threads are waiting for cores (a busy or oversubscribed machine).\n"
           "  The profile describes the machine as it is now. For stable figures measure on an idle machine,\n"
           "  or with --threads 1 --clock thread_cpu --statistic min.\n";
  if (cpu) {
    fit.device.citation = "Measured on this machine by orrery calibrate (" + probe.header.date_utc + ")";
  } else {
    fit.device.citation = "Efficiencies measured by orrery calibrate on " + probe.header.device + " (" +
                          probe.header.date_utc + "); peaks and the rest from " + base_description;
  }
  std::int64_t run_id = 0;
  if (!flags.db.empty()) {
    const calibration::StoreResult stored = calibration::StoreProbeRun(flags.db, probe, source);
    if (!stored.ok) {
      err << "error: --db " << flags.db << ": " << stored.error << "\n";
      return kExitInvalid;
    }
    run_id = stored.run_id;
    if (stored.already_stored)
      err << "note: this probe run was already in " << flags.db << " (run " << run_id << ")\n";
  }
  const std::string text =
      calibration::DeviceProfileYaml(fit.device, calibration::DescribeFit(fit, probe, source, base_description, options));
  // Check what we wrote the way `orrery check` will read it.
  {
    base::Diagnostics diags;
    hardware::DeviceSpec back;
    const YAML::Node root = YAML::Load(text);
    engine::LoadDeviceMap(root["device"], "device", out_path, back, diags);
    if (!diags.ok()) {
      err << "error: the fitted profile does not pass the device checks:\n";
      PrintDiagnostics(diags, err);
      return kExitInvalid;
    }
  }
  std::string error;
  if (!calibration::WriteTextFile(out_path, text, &error)) {
    err << "error: --out: " << error << "\n";
    return kExitInvalid;
  }
  if (out_path != "-") PrintFitSummary(fit, out_path, run_id, fmt, out);
  return kExitOk;
}

// --- run ------------------------------------------------------------------------

// "auto" resolves to thread CPU time for one thread, wall time otherwise.
bool ParseClock(const std::string& text, int threads, calibration::TimerClock& out, std::ostream& err) {
  if (text == "wall" || (text == "auto" && threads != 1)) {
    out = calibration::TimerClock::kWall;
  } else if (text == "thread_cpu" || text == "auto") {
    if (threads != 1) {
      err << "error: --clock thread_cpu needs --threads 1 (the CPU time of one thread), got --threads " << threads
          << "\n";
      return false;
    }
    out = calibration::TimerClock::kThreadCpu;
  } else {
    err << "error: --clock: unknown clock '" << text << "' (one of: wall, thread_cpu)\n";
    return false;
  }
  return true;
}

// Whether the Linux NVIDIA driver lists a GPU.
bool NvidiaGpuVisible() {
  std::error_code ec;
  for (fs::directory_iterator it("/proc/driver/nvidia/gpus", ec), end; !ec && it != end; it.increment(ec))
    return true;
  return fs::exists("/dev/nvidia0", ec);
}

// Runs `argv` and waits; returns its exit status, or -1 when it cannot start.
int Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> cargs;
  for (const auto& a : argv) cargs.push_back(const_cast<char*>(a.c_str()));
  cargs.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, cargs[0], nullptr, nullptr, cargs.data(), environ) != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string CudaProbePath(const std::string& given) {
  if (!given.empty()) return given;
#ifdef ORRERY_CUDA_PROBE_PATH
  return ORRERY_CUDA_PROBE_PATH;
#else
  return {};
#endif
}

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
  if (threads < 0 || threads > 4096) {
    err << "error: --threads: must be in [0, 4096], got " << threads << "\n";
    return kExitUsage;
  }
  calibration::TimerClock clock = calibration::TimerClock::kWall;
  if (!ParseClock(clock_text, threads, clock, err)) return kExitUsage;
  std::string command_line = "orrery calibrate run";
  for (const auto& a : args) command_line += " " + a;

  ProbeFile probe;
  std::string source;
  if (device == "cpu") {
    calibration::CpuProbeOptions o = full ? calibration::FullCpuProbeOptions() : calibration::QuickCpuProbeOptions();
    o.threads = threads;
    o.clock = clock;
    err << "probing the CPU (" << o.mode << ", " << (threads == 0 ? std::string("all") : std::to_string(threads))
        << " threads)...\n";
    probe.records = calibration::RunCpuProbe(o);
    probe.header = calibration::CpuProbeHeader(o, command_line);
    source = probe_out.empty() ? "in-process CPU probe" : probe_out;
    if (!probe_out.empty()) {
      std::string error;
      if (!calibration::WriteProbeJson(probe_out, probe.header, probe.records, &error)) {
        err << "error: --probe-out: " << error << "\n";
        return kExitInvalid;
      }
    }
  } else if (device.rfind("cuda:", 0) == 0) {
    const std::string ordinal = device.substr(5);
    if (ordinal.empty() || ordinal.find_first_not_of("0123456789") != std::string::npos || ordinal.size() > 3) {
      err << "error: --device: '" << device << "': expected cpu or cuda:N with N a GPU ordinal, e.g. cuda:0\n";
      return kExitUsage;
    }
    const std::string exe = CudaProbePath(probe_path);
    std::error_code ec;
    if (exe.empty() || !fs::is_regular_file(exe, ec)) {
      err << "error: the CUDA probe was not built (no nvcc when orrery was configured, or "
             "ORRERY_BUILD_CUDA_PROBE=OFF)"
          << (exe.empty() ? "" : "; not found: " + exe)
          << ". Build it (hardware/calibration/README.md, 'Standalone build') and pass --probe PATH.\n";
      return kExitInvalid;
    }
    if (!NvidiaGpuVisible()) {
      err << "error: no NVIDIA GPU is visible on this machine (/proc/driver/nvidia/gpus and /dev/nvidia0 are "
             "missing); orrery calibrate run --device " << device << " needs one\n";
      return kExitInvalid;
    }
    if (flags.base.empty()) {
      err << "error: --base is required with --device " << device << " (e.g. --base h200)\n";
      return kExitUsage;
    }
    const std::string json_path =
        probe_out.empty() ? (fs::temp_directory_path() / ("orrery_cuda_probe_" + std::to_string(getpid()) + ".json")).string()
                          : probe_out;
    err << "running " << exe << " on GPU " << ordinal << "...\n";
    const int status = Spawn({exe, "--device", ordinal, full ? "--full" : "--quick", "--out", json_path});
    if (status != 0) {
      err << "error: the CUDA probe " << (status < 0 ? "could not be started" : "failed with exit status " + std::to_string(status))
          << " (its messages are above)\n";
      return kExitInvalid;
    }
    const calibration::ProbeFileResult read = calibration::ReadProbeJsonFile(json_path);
    if (probe_out.empty()) fs::remove(json_path, ec);
    if (!read.ok) {
      err << "error: " << read.error << "\n";
      return kExitInvalid;
    }
    probe = read.file;
    source = probe_out.empty() ? "CUDA probe run" : probe_out;
  } else {
    err << "error: --device: unknown device '" << device << "' (expected cpu or cuda:N)";
    const std::string hint = base::DidYouMean(device, {"cpu", "cuda:0"});
    if (!hint.empty()) err << "; " << hint;
    err << "\n";
    return kExitUsage;
  }
  return FitAndWrite(probe, source, flags, out_path, out, err);
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
  const std::string file = vm["probe-file"].as<std::string>();
  const calibration::ProbeFileResult read = calibration::ReadProbeJsonFile(file);
  if (!read.ok) {
    err << "error: " << read.error << "\n";
    return kExitInvalid;
  }
  return FitAndWrite(read.file, file, flags, out_path, out, err);
}

// --- check-layer --------------------------------------------------------------

bool ParseShape(const std::string& text, validation::CpuLayerShape& s, std::ostream& err) {
  std::stringstream ss(text);
  std::string item;
  std::vector<long> v;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != 0 || errno != 0) {
      v.clear();
      break;
    }
    v.push_back(x);
  }
  if (v.size() != 4) {
    err << "error: --shape: '" << text << "': expected BATCH,SEQ,HIDDEN,HEADS, e.g. 1,256,512,8\n";
    return false;
  }
  s.batch = v[0];
  s.seq = v[1];
  s.hidden = v[2];
  s.heads = v[3];
  if (const std::string e = validation::ValidateCpuLayerShape(s); !e.empty()) {
    err << "error: --shape: '" << text << "': " << e << "\n";
    return false;
  }
  return true;
}

// One pass of one layer: measured and predicted seconds. GEMM shares are
// fractions of the pass; negative when not known.
struct LayerRow {
  std::string shape, pass;
  double measured, predicted, error_pct, gemm_measured, gemm_predicted;
};

void AddPasses(const std::string& name, double fwd, double bwd, const validation::LayerPrediction& p,
               double fwd_gemm_share, double bwd_gemm_share, std::vector<LayerRow>& rows) {
  rows.push_back({name, "forward", fwd, p.forward_s, 100 * (p.forward_s - fwd) / fwd, fwd_gemm_share,
                  p.forward_gemm_s / p.forward_s});
  rows.push_back({name, "backward", bwd, p.backward_s, 100 * (p.backward_s - bwd) / bwd, bwd_gemm_share,
                  p.backward_gemm_s / p.backward_s});
  const double step = p.forward_s + p.backward_s;
  rows.push_back({name, "step", fwd + bwd, step, 100 * (step - fwd - bwd) / (fwd + bwd), -1, -1});
}

// Layers measured elsewhere (validation/gpu_layer/time_gpt_layer.py output,
// schema orrery.gpu_layer.v1), predicted in bf16 on `device`.
bool AddMeasuredRows(const std::string& file, const hardware::DeviceSpec& device, bool use_min,
                     std::vector<LayerRow>& rows, std::string& error) {
  std::ifstream in(file);
  if (!in) {
    error = "--measured: cannot open '" + file + "'";
    return false;
  }
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("schema", "") != "orrery.gpu_layer.v1" ||
      !doc.contains("rows") || !doc["rows"].is_array()) {
    error = file + ": expected a JSON document with schema \"orrery.gpu_layer.v1\" and rows";
    return false;
  }
  const char* stat = use_min ? "min_s" : "median_s";
  for (size_t i = 0; i < doc["rows"].size(); ++i) {
    const nlohmann::json& r = doc["rows"][i];
    if (!r.is_object() || r.contains("error")) continue;  // a shape the run could not measure
    const std::string where = file + ": rows[" + std::to_string(i) + "]";
    validation::CpuLayerShape s;
    const char* keys[] = {"batch", "seq", "hidden", "heads"};
    std::int64_t* fields[] = {&s.batch, &s.seq, &s.hidden, &s.heads};
    for (int k = 0; k < 4; ++k) {
      if (!r.contains(keys[k]) || !r[keys[k]].is_number_integer()) {
        error = where + "." + keys[k] + ": expected an integer";
        return false;
      }
      *fields[k] = r[keys[k]].get<std::int64_t>();
    }
    s.ffn = r.value("ffn", std::int64_t{0});
    if (const std::string e = validation::ValidateCpuLayerShape(s); !e.empty() && e.find("too large") == std::string::npos) {
      error = where + ": " + e;
      return false;
    }
    const std::string attention = r.value("attention", "");
    if (attention != "flash" && attention != "materialized") {
      error = where + ".attention: expected \"flash\" or \"materialized\", got \"" + attention + "\"";
      return false;
    }
    double t[2] = {0, 0};
    const char* passes[] = {"forward", "backward"};
    for (int k = 0; k < 2; ++k) {
      const auto it = r.find(passes[k]);
      if (it == r.end() || !it->is_object() || !it->contains(stat) || !(*it)[stat].is_number() ||
          !((*it)[stat].get<double>() > 0)) {
        error = where + "." + passes[k] + "." + stat + ": expected a positive number of seconds";
        return false;
      }
      t[k] = (*it)[stat].get<double>();
    }
    const validation::LayerPrediction p =
        validation::PredictLayer(s, device, hardware::DataType::kBf16, attention == "flash");
    AddPasses(s.Name() + " " + attention, t[0], t[1], p, -1, -1, rows);
  }
  if (rows.empty()) {
    error = file + ": no measured rows";
    return false;
  }
  return true;
}

int RunCheckLayer(const Args& args, std::ostream& out, std::ostream& err) {
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
  if (statistic != "median" && statistic != "min") {
    err << "error: --statistic: unknown statistic '" << statistic << "' (one of: median, min)\n";
    return kExitUsage;
  }
  if (threads < 0 || threads > 4096 || reps < 1 || reps > 1000 || !(max_error > 0)) {
    err << "error: --threads must be in [0, 4096], --reps in [1, 1000], --max-error > 0\n";
    return kExitUsage;
  }
  calibration::TimerClock clock = calibration::TimerClock::kWall;
  if (!ParseClock(clock_text, threads, clock, err)) return kExitUsage;
  std::vector<validation::CpuLayerShape> shapes;
  for (const auto& t : shapes_text) {
    validation::CpuLayerShape s;
    if (!ParseShape(t, s, err)) return kExitUsage;
    shapes.push_back(s);
  }
  if (shapes.empty()) {
    for (const auto& t : {"1,256,512,8", "1,512,768,12", "4,128,1024,16"}) {
      validation::CpuLayerShape s;
      ParseShape(t, s, err);
      shapes.push_back(s);
    }
  }
  const bool use_min = statistic == "min";
  if (!measured.empty() && profile.empty()) {
    err << "error: --measured needs --profile (the device the layers were measured on, e.g. h200)\n";
    return kExitUsage;
  }
  hardware::DeviceSpec device;
  std::string profile_name = profile;
  if (!profile.empty()) {
    std::string description;
    if (!LoadBase(profile, device, description, err)) return kExitInvalid;
  } else {
    calibration::CpuProbeOptions o = calibration::QuickCpuProbeOptions();
    o.threads = threads;
    o.clock = clock;
    err << "calibrating this CPU (quick probe, " << validation::SetCpuThreads(threads) << " threads)...\n";
    ProbeFile probe;
    probe.records = calibration::RunCpuProbe(o);
    probe.header = calibration::CpuProbeHeader(o, "orrery calibrate check-layer");
    if (!probe_out.empty()) {
      std::string error;
      if (!calibration::WriteProbeJson(probe_out, probe.header, probe.records, &error)) {
        err << "error: --probe-out: " << error << "\n";
        return kExitInvalid;
      }
    }
    FitOptions fo;
    fo.measure_peaks = true;
    fo.statistic = use_min ? calibration::TimeStatistic::kMin : calibration::TimeStatistic::kMedian;
    const FitResult fit = calibration::FitDeviceProfile(probe, calibration::CpuBaseDevice(probe.header), fo);
    if (!fit.ok) {
      err << "error: calibration: " << fit.error << "\n";
      return kExitInvalid;
    }
    device = fit.device;
    profile_name = "(calibrated now: peak_fp32 " + FormatQuantity(device.peak_fp32, Dimension::kFlopRate) +
                   ", memory " + FormatQuantity(device.memory_bandwidth, Dimension::kBandwidth) + ", overhead " +
                   FormatQuantity(device.kernel_overhead, Dimension::kTime) + ")";
  }
  if (measured.empty() && !(hardware::PeakFlops(device, hardware::DataType::kFp32) > 0)) {
    err << "error: --profile " << profile << ": device.peak_fp32: the layer runs in fp32 and the profile has no "
        << "fp32 peak (got 0)\n";
    return kExitInvalid;
  }
  std::vector<LayerRow> rows;
  double worst = 0;
  validation::CpuLayerTimingOptions to;
  to.threads = threads;
  to.reps = reps;
  to.clock = clock;
  if (!measured.empty()) {
    std::string error;
    if (!AddMeasuredRows(measured, device, use_min, rows, error)) {
      err << "error: " << error << "\n";
      return kExitInvalid;
    }
    shapes.clear();
  }
  for (const auto& s : shapes) {
    err << "timing layer " << s.Name() << "...\n";
    const validation::CpuLayerTiming t = validation::TimeCpuLayer(s, to);
    const validation::LayerPrediction p = validation::PredictCpuLayer(s, device);
    const double fm = use_min ? t.forward_min_s : t.forward_median_s;
    const double bm = use_min ? t.backward_min_s : t.backward_median_s;
    AddPasses(s.Name(), fm, bm, p, t.forward_gemm_share, t.backward_gemm_share, rows);
  }
  for (const LayerRow& r : rows) worst = std::max(worst, std::fabs(r.error_pct));
  const bool passed = worst <= max_error;
  if (fmt == Format::kJson) {
    nlohmann::ordered_json j;
    j["profile"] = profile_name;
    if (measured.empty()) {
      j["threads"] = threads;
      j["clock"] = calibration::TimerClockName(clock);
    } else {
      j["measured"] = measured;
    }
    j["statistic"] = statistic;
    j["max_error_pct"] = max_error;
    j["rows"] = nlohmann::ordered_json::array();
    for (const LayerRow& r : rows) {
      nlohmann::ordered_json o;
      o["shape"] = r.shape;
      o["pass"] = r.pass;
      o["measured_s"] = r.measured;
      o["predicted_s"] = r.predicted;
      o["error_pct"] = r.error_pct;
      if (r.gemm_measured >= 0) o["gemm_share_measured"] = r.gemm_measured;
      if (r.gemm_predicted >= 0) o["gemm_share_predicted"] = r.gemm_predicted;
      j["rows"].push_back(o);
    }
    j["worst_abs_error_pct"] = worst;
    j["passed"] = passed;
    out << j.dump(2) << "\n";
  } else if (fmt == Format::kCsv) {
    out << "shape,pass,measured_s,predicted_s,error_pct,gemm_share_measured,gemm_share_predicted\n";
    for (const LayerRow& r : rows)
      out << r.shape << "," << r.pass << "," << r.measured << "," << r.predicted << "," << r.error_pct << ","
          << r.gemm_measured << "," << r.gemm_predicted << "\n";
  } else {
    out << "profile: " << profile_name << "\n";
    if (measured.empty()) {
      out << "threads: " << threads << ", " << statistic << " of " << reps << " samples, clock "
          << calibration::TimerClockName(clock) << "\n\n";
    } else {
      out << "measured: " << measured << " (" << statistic << " of each row's samples; bf16)\n\n";
    }
    out << std::left << std::setw(34) << "shape" << std::setw(10) << "pass" << std::right << std::setw(12)
        << "measured" << std::setw(12) << "predicted" << std::setw(9) << "error" << "   GEMM share meas/pred\n";
    for (const LayerRow& r : rows) {
      std::ostringstream err_text;
      err_text << std::fixed << std::setprecision(1) << std::showpos << r.error_pct << " %";
      out << std::left << std::setw(34) << r.shape << std::setw(10) << r.pass << std::right << std::setw(12)
          << FormatQuantity(r.measured, Dimension::kTime) << std::setw(12)
          << FormatQuantity(r.predicted, Dimension::kTime) << std::setw(9) << err_text.str();
      if (r.gemm_predicted >= 0)
        out << "   " << (r.gemm_measured >= 0 ? std::to_string(std::lround(100 * r.gemm_measured)) + " %" : "-")
            << " / " << std::lround(100 * r.gemm_predicted) << " %";
      out << "\n";
    }
    out << "\nworst |error| " << base::FormatNumber(worst, 3) << " % (tolerance " << base::FormatNumber(max_error, 3)
        << " %): " << (passed ? "PASS" : "FAIL") << "\n";
  }
  return passed ? kExitOk : kExitInvalid;
}

// --- runs, compare ------------------------------------------------------------

int RunRuns(const Args& args, std::ostream& out, std::ostream& err) {
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
  std::string error;
  const auto runs = calibration::ListProbeRuns(db, &error);
  if (!error.empty()) {
    err << "error: --db: " << error << "\n";
    return kExitInvalid;
  }
  if (fmt == Format::kJson) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& r : runs)
      a.push_back({{"run_id", r.run_id}, {"probe", r.probe}, {"mode", r.mode}, {"host", r.host},
                   {"device", r.device}, {"threads", r.threads}, {"date_utc", r.date_utc},
                   {"records", r.records}, {"source", r.source}});
    out << a.dump(2) << "\n";
  } else if (fmt == Format::kCsv) {
    out << "run_id,probe,mode,host,device,threads,date_utc,records,source\n";
    for (const auto& r : runs)
      out << r.run_id << "," << r.probe << "," << r.mode << "," << r.host << ",\"" << r.device << "\","
          << r.threads << "," << r.date_utc << "," << r.records << ",\"" << r.source << "\"\n";
  } else {
    out << std::left << std::setw(5) << "run" << std::setw(6) << "probe" << std::setw(7) << "mode" << std::setw(22)
        << "date (UTC)" << std::setw(9) << "records" << "device (threads) on host, from\n";
    for (const auto& r : runs)
      out << std::left << std::setw(5) << r.run_id << std::setw(6) << r.probe << std::setw(7) << r.mode
          << std::setw(22) << r.date_utc << std::setw(9) << r.records << r.device << " (" << r.threads << ") on "
          << r.host << ", " << r.source << "\n";
  }
  return kExitOk;
}

int RunCompare(const Args& args, std::ostream& out, std::ostream& err) {
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
  std::string error;
  auto rows = calibration::CompareProbeRuns(db, ids[0], ids[1], &error);
  if (!error.empty()) {
    err << "error: " << error << "\n";
    return kExitInvalid;
  }
  if (!kind.empty()) std::erase_if(rows, [&](const calibration::RecordComparison& r) { return r.kind != kind; });
  if (fmt == Format::kJson) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& r : rows)
      a.push_back({{"kind", r.kind}, {"dtype", r.dtype}, {"shape", r.shape}, {"rate_unit", r.rate_unit},
                   {"rate_a", r.rate_a}, {"rate_b", r.rate_b}, {"ratio", r.rate_a > 0 ? r.rate_b / r.rate_a : 0}});
    out << a.dump(2) << "\n";
  } else if (fmt == Format::kCsv) {
    out << "kind,dtype,shape,rate_unit,rate_a,rate_b,ratio\n";
    for (const auto& r : rows)
      out << r.kind << "," << r.dtype << ",\"" << r.shape << "\"," << r.rate_unit << "," << r.rate_a << ","
          << r.rate_b << "," << (r.rate_a > 0 ? r.rate_b / r.rate_a : 0) << "\n";
  } else {
    out << std::left << std::setw(10) << "kind" << std::setw(10) << "dtype" << std::setw(26) << "shape" << std::right
        << std::setw(16) << "run " + std::to_string(ids[0]) << std::setw(16) << "run " + std::to_string(ids[1])
        << std::setw(8) << "B/A" << "\n";
    for (const auto& r : rows) {
      const Dimension dim = r.rate_unit == "flop/s" ? Dimension::kFlopRate : Dimension::kBandwidth;
      std::ostringstream ratio;
      ratio << std::fixed << std::setprecision(3) << (r.rate_a > 0 ? r.rate_b / r.rate_a : 0);
      out << std::left << std::setw(10) << r.kind << std::setw(10) << r.dtype << std::setw(26) << r.shape
          << std::right << std::setw(16) << FormatQuantity(r.rate_a, dim) << std::setw(16)
          << FormatQuantity(r.rate_b, dim) << std::setw(8) << ratio.str() << "\n";
    }
    out << rows.size() << " records in both runs\n";
  }
  return kExitOk;
}

}  // namespace

int RunCalibrate(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? err : out) << kOverview;
    return args.empty() ? kExitUsage : kExitOk;
  }
  const std::string sub = args[0];
  const Args rest(args.begin() + 1, args.end());
  if (sub == "run") return RunRun(rest, out, err);
  if (sub == "import") return RunImport(rest, out, err);
  if (sub == "check-layer") return RunCheckLayer(rest, out, err);
  if (sub == "runs") return RunRuns(rest, out, err);
  if (sub == "compare") return RunCompare(rest, out, err);
  err << "error: unknown calibrate subcommand '" << sub << "'";
  const std::string hint = base::DidYouMean(sub, {"run", "import", "check-layer", "runs", "compare"});
  if (!hint.empty()) err << "; " << hint;
  err << " (see orrery calibrate --help)\n";
  return kExitUsage;
}

}  // namespace orrery::cli
