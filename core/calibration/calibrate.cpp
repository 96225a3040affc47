#include "core/calibration/calibrate.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibration_db.h"
#include "core/base/quantity.h"
#include "core/base/yaml_source.h"
#include "core/estimate/scenario.h"
#include "cpu_layer.h"
#include "cpu_layer_predict.h"
#include "profile_yaml.h"

extern char** environ;

namespace orrery::calibration {

namespace fs = std::filesystem;
using base::Dimension;
using base::FormatQuantity;

bool LoadBaseDevice(const std::string& base, hardware::DeviceSpec& out, std::string& description,
                    base::Diagnostics& d) {
  const size_t before = d.size();
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  std::error_code ec;
  if (fs::is_regular_file(base, ec)) {
    auto root = base::LoadYamlFile(base, d);
    if (root && (!root->IsMap() || !(*root)["device"])) {
      d.Add(base::LocationOf(*root, base), "", "", "expected a document with the top-level key 'device'");
    } else if (root) {
      engine::LoadDeviceMap((*root)["device"], "device", base, out, d, &store);
    }
    description = "device file " + base;
  } else {
    engine::LoadDevicePreset(base, store, base::SourceLocation{"--base", 0, 0}, "--base", out, d);
    description = "preset " + base + " (configs/devices/ or $ORRERY_CONFIG_DIR)";
  }
  return d.size() == before;
}

bool FitAndWriteProfile(const ProbeFile& probe, const std::string& source, const ProfileRequest& req,
                        ProfileOutcome& out) {
  FitOptions options;
  options.gemm_dtype = req.gemm_dtype;
  options.kernel_overhead_s = req.overhead_s;
  options.gemm_bins.per_decade = req.bins_per_decade;
  options.memory_bins.per_decade = req.bins_per_decade;
  options.gemm_bins.centres = req.gemm_bins;
  options.statistic = req.statistic;
  hardware::DeviceSpec base;
  std::string base_description;
  const bool cpu = probe.header.probe == "cpu";
  if (!req.base.empty()) {
    if (!LoadBaseDevice(req.base, base, base_description, out.diagnostics)) return false;
  } else if (cpu) {
    base = CpuBaseDevice(probe.header);
    base_description = "none: the CPU described by the probe header (memory size, last-level cache)";
  } else {
    out.usage_error = true;
    out.error = "--base is required for " + probe.header.probe +
                " records: a GPU probe measures efficiencies, not datasheet peaks (e.g. --base h200)";
    return false;
  }
  if (req.memory_capacity > 0) base.memory_capacity = req.memory_capacity;
  if (!(base.memory_capacity > 0)) {
    out.error = source + ": the probe header does not record the memory size (header.extra."
                "memory_total_bytes; output of an older probe): give --memory-capacity, or --base with a device file";
    return false;
  }
  options.measure_peaks = cpu;
  out.fit = FitDeviceProfile(probe, base, options);
  FitResult& fit = out.fit;
  if (!fit.ok) {
    out.error = source + ": " + fit.error;
    return false;
  }
  if (!req.name.empty()) fit.device.name = req.name;
  if (cpu && fit.kernel_overhead_s > 1e-3)
    out.notes.push_back(
        "warning: the smallest kernels take " + FormatQuantity(fit.kernel_overhead_s, Dimension::kTime) +
        " beyond moving their bytes: threads are waiting for cores (a busy or oversubscribed machine).\n"
        "  The profile describes the machine as it is now. For stable figures measure on an idle machine,\n"
        "  or with --threads 1 --clock thread_cpu --statistic min.");
  if (cpu) {
    fit.device.citation = "Measured on this machine by orrery calibrate (" + probe.header.date_utc + ")";
  } else {
    fit.device.citation = "Efficiencies measured by orrery calibrate on " + probe.header.device + " (" +
                          probe.header.date_utc + "); peaks and the rest from " + base_description;
  }
  if (!req.db.empty()) {
    const StoreResult stored = StoreProbeRun(req.db, probe, source);
    if (!stored.ok) {
      out.error = "--db " + req.db + ": " + stored.error;
      return false;
    }
    out.run_id = stored.run_id;
    if (stored.already_stored)
      out.notes.push_back("note: this probe run was already in " + req.db + " (run " +
                          std::to_string(out.run_id) + ")");
  }
  out.profile_yaml = DeviceProfileYaml(fit.device, DescribeFit(fit, probe, source, base_description, options));
  // Check what we wrote the way `orrery check` will read it.
  {
    hardware::DeviceSpec back;
    const YAML::Node root = YAML::Load(out.profile_yaml);
    engine::LoadDeviceMap(root["device"], "device", req.out_path, back, out.diagnostics);
    if (!out.diagnostics.ok()) {
      out.error = "the fitted profile does not pass the device checks";
      return false;
    }
  }
  if (!req.out_path.empty()) {
    std::string error;
    if (!WriteTextFile(req.out_path, out.profile_yaml, &error)) {
      out.error = "--out: " + error;
      return false;
    }
  }
  return true;
}

bool ParseClock(const std::string& text, int threads, TimerClock& out, std::string& error) {
  if (text == "wall" || (text == "auto" && threads != 1)) {
    out = TimerClock::kWall;
  } else if (text == "thread_cpu" || text == "auto") {
    if (threads != 1) {
      error = "--clock thread_cpu needs --threads 1 (the CPU time of one thread), got --threads " +
              std::to_string(threads);
      return false;
    }
    out = TimerClock::kThreadCpu;
  } else {
    error = "--clock: unknown clock '" + text + "' (one of: wall, thread_cpu)";
    return false;
  }
  return true;
}

namespace {

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
  cargs.reserve(argv.size() + 1);
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

}  // namespace

bool RunProbe(const ProbeRequest& req, ProbeFile& probe, std::string& source, bool& usage_error,
              std::string& error, const std::function<void(const std::string&)>& say) {
  usage_error = false;
  auto tell = [&](const std::string& s) {
    if (say) say(s);
  };
  if (req.threads < 0 || req.threads > 4096) {
    usage_error = true;
    error = "--threads: must be in [0, 4096], got " + std::to_string(req.threads);
    return false;
  }
  TimerClock clock = TimerClock::kWall;
  if (!ParseClock(req.clock, req.threads, clock, error)) {
    usage_error = true;
    return false;
  }
  if (req.device == "cpu") {
    CpuProbeOptions o = req.full ? FullCpuProbeOptions() : QuickCpuProbeOptions();
    o.threads = req.threads;
    o.clock = clock;
    tell("probing the CPU (" + o.mode + ", " +
         (req.threads == 0 ? std::string("all") : std::to_string(req.threads)) + " threads)...");
    probe.records = RunCpuProbe(o);
    probe.header = CpuProbeHeader(o, req.command_line);
    source = req.probe_out.empty() ? "in-process CPU probe" : req.probe_out;
    if (!req.probe_out.empty() && !WriteProbeJson(req.probe_out, probe.header, probe.records, &error)) {
      error = "--probe-out: " + error;
      return false;
    }
    return true;
  }
  if (req.device.rfind("cuda:", 0) == 0) {
    const std::string ordinal = req.device.substr(5);
    if (ordinal.empty() || ordinal.find_first_not_of("0123456789") != std::string::npos || ordinal.size() > 3) {
      usage_error = true;
      error = "--device: '" + req.device + "': expected cpu or cuda:N with N a GPU ordinal, e.g. cuda:0";
      return false;
    }
    const std::string exe = CudaProbePath(req.probe_path);
    std::error_code ec;
    if (exe.empty() || !fs::is_regular_file(exe, ec)) {
      error = std::string("the CUDA probe was not built (no nvcc when orrery was configured, or "
                          "ORRERY_BUILD_CUDA_PROBE=OFF)") +
              (exe.empty() ? "" : "; not found: " + exe) +
              ". Build it (hardware/calibration/README.md, 'Standalone build') and pass --probe PATH.";
      return false;
    }
    if (!NvidiaGpuVisible()) {
      error = "no NVIDIA GPU is visible on this machine (/proc/driver/nvidia/gpus and /dev/nvidia0 are "
              "missing); orrery calibrate run --device " + req.device + " needs one";
      return false;
    }
    if (req.base.empty()) {
      usage_error = true;
      error = "--base is required with --device " + req.device + " (e.g. --base h200)";
      return false;
    }
    const std::string json_path =
        req.probe_out.empty()
            ? (fs::temp_directory_path() / ("orrery_cuda_probe_" + std::to_string(getpid()) + ".json")).string()
            : req.probe_out;
    tell("running " + exe + " on GPU " + ordinal + "...");
    const int status = Spawn({exe, "--device", ordinal, req.full ? "--full" : "--quick", "--out", json_path});
    if (status != 0) {
      error = "the CUDA probe " +
              (status < 0 ? std::string("could not be started") : "failed with exit status " + std::to_string(status)) +
              " (its messages are above)";
      return false;
    }
    const ProbeFileResult read = ReadProbeJsonFile(json_path);
    if (req.probe_out.empty()) fs::remove(json_path, ec);
    if (!read.ok) {
      error = read.error;
      return false;
    }
    probe = read.file;
    source = req.probe_out.empty() ? "CUDA probe run" : req.probe_out;
    return true;
  }
  usage_error = true;
  error = "--device: unknown device '" + req.device + "' (expected cpu or cuda:N)";
  const std::string hint = base::DidYouMean(req.device, {"cpu", "cuda:0"});
  if (!hint.empty()) error += "; " + hint;
  return false;
}

// --- check-layer --------------------------------------------------------------

namespace {

bool ParseShape(const std::string& text, validation::CpuLayerShape& s, std::string& error) {
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
    error = "--shape: '" + text + "': expected BATCH,SEQ,HIDDEN,HEADS, e.g. 1,256,512,8";
    return false;
  }
  s.batch = v[0];
  s.seq = v[1];
  s.hidden = v[2];
  s.heads = v[3];
  if (const std::string e = validation::ValidateCpuLayerShape(s); !e.empty()) {
    error = "--shape: '" + text + "': " + e;
    return false;
  }
  return true;
}

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

}  // namespace

bool CheckLayer(const LayerCheckRequest& req, LayerCheck& out, bool& usage_error, std::string& error,
                base::Diagnostics& d, const std::function<void(const std::string&)>& say) {
  usage_error = true;
  auto tell = [&](const std::string& s) {
    if (say) say(s);
  };
  if (req.statistic != "median" && req.statistic != "min") {
    error = "--statistic: unknown statistic '" + req.statistic + "' (one of: median, min)";
    return false;
  }
  if (req.threads < 0 || req.threads > 4096 || req.reps < 1 || req.reps > 1000 || !(req.max_error_pct > 0)) {
    error = "--threads must be in [0, 4096], --reps in [1, 1000], --max-error > 0";
    return false;
  }
  if (!ParseClock(req.clock, req.threads, out.clock, error)) return false;
  std::vector<validation::CpuLayerShape> shapes;
  for (const auto& t : req.shapes) {
    validation::CpuLayerShape s;
    if (!ParseShape(t, s, error)) return false;
    shapes.push_back(s);
  }
  if (shapes.empty()) {
    for (const auto& t : {"1,256,512,8", "1,512,768,12", "4,128,1024,16"}) {
      validation::CpuLayerShape s;
      ParseShape(t, s, error);
      shapes.push_back(s);
    }
  }
  if (!req.measured.empty() && req.profile.empty()) {
    error = "--measured needs --profile (the device the layers were measured on, e.g. h200)";
    return false;
  }
  usage_error = false;
  const bool use_min = req.statistic == "min";
  hardware::DeviceSpec device;
  out.profile_name = req.profile;
  if (!req.profile.empty()) {
    std::string description;
    if (!LoadBaseDevice(req.profile, device, description, d)) return false;
  } else {
    CpuProbeOptions o = QuickCpuProbeOptions();
    o.threads = req.threads;
    o.clock = out.clock;
    tell("calibrating this CPU (quick probe, " + std::to_string(validation::SetCpuThreads(req.threads)) +
         " threads)...");
    ProbeFile probe;
    probe.records = RunCpuProbe(o);
    probe.header = CpuProbeHeader(o, "orrery calibrate check-layer");
    if (!req.probe_out.empty() && !WriteProbeJson(req.probe_out, probe.header, probe.records, &error)) {
      error = "--probe-out: " + error;
      return false;
    }
    FitOptions fo;
    fo.measure_peaks = true;
    fo.statistic = use_min ? TimeStatistic::kMin : TimeStatistic::kMedian;
    const FitResult fit = FitDeviceProfile(probe, CpuBaseDevice(probe.header), fo);
    if (!fit.ok) {
      error = "calibration: " + fit.error;
      return false;
    }
    device = fit.device;
    out.profile_name = "(calibrated now: peak_fp32 " + FormatQuantity(device.peak_fp32, Dimension::kFlopRate) +
                       ", memory " + FormatQuantity(device.memory_bandwidth, Dimension::kBandwidth) +
                       ", overhead " + FormatQuantity(device.kernel_overhead, Dimension::kTime) + ")";
  }
  if (req.measured.empty() && !(hardware::PeakFlops(device, hardware::DataType::kFp32) > 0)) {
    error = "--profile " + req.profile +
            ": device.peak_fp32: the layer runs in fp32 and the profile has no fp32 peak (got 0)";
    return false;
  }
  out.rows.clear();
  if (!req.measured.empty()) {
    if (!AddMeasuredRows(req.measured, device, use_min, out.rows, error)) return false;
    shapes.clear();
  }
  validation::CpuLayerTimingOptions to;
  to.threads = req.threads;
  to.reps = req.reps;
  to.clock = out.clock;
  for (const auto& s : shapes) {
    tell("timing layer " + s.Name() + "...");
    const validation::CpuLayerTiming t = validation::TimeCpuLayer(s, to);
    const validation::LayerPrediction p = validation::PredictCpuLayer(s, device);
    const double fm = use_min ? t.forward_min_s : t.forward_median_s;
    const double bm = use_min ? t.backward_min_s : t.backward_median_s;
    AddPasses(s.Name(), fm, bm, p, t.forward_gemm_share, t.backward_gemm_share, out.rows);
  }
  out.worst_abs_error_pct = 0;
  for (const LayerRow& r : out.rows) out.worst_abs_error_pct = std::max(out.worst_abs_error_pct, std::fabs(r.error_pct));
  out.passed = out.worst_abs_error_pct <= req.max_error_pct;
  return true;
}

}  // namespace orrery::calibration
