// orrery_cpu_probe: times GEMMs, memory and element-wise kernels on this CPU
// and writes JSON records (README.md, "JSON record schema").
//
// Exit status: 0 on success, 2 on a bad argument, 1 when the output cannot
// be written.

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cpu_probe.h"

namespace {

using orrery::calibration::CpuProbeOptions;

constexpr const char* kUsage =
    "usage: orrery_cpu_probe [--quick | --full] [--out FILE] [--threads N]\n"
    "                        [--reps N] [--warmups N] [--min-sample-ms X] [--clock wall|thread_cpu]\n"
    "  --quick            small grids, a few seconds\n"
    "  --full             grids from cache to DRAM sizes, a minute or two (default)\n"
    "  --out FILE         where the JSON goes; '-' is stdout (default)\n"
    "  --threads N        worker threads, 0 = all hardware threads (default 0)\n"
    "  --reps N           timed samples per kernel (default: 5 quick, 11 full)\n"
    "  --warmups N        untimed calls before timing (default: 1 quick, 2 full)\n"
    "  --min-sample-ms X  repeat calls until one sample lasts X ms (default: 2 quick, 10 full)\n"
    "  --clock C          wall (default) or thread_cpu: the thread's CPU time, which leaves out\n"
    "                     waits for a core on a busy machine; needs --threads 1\n";

int BadArgument(const std::string& message) {
  std::fprintf(stderr, "orrery_cpu_probe: %s\n%s", message.c_str(), kUsage);
  return 2;
}

bool ParseInt(const std::string& text, long lo, long hi, long* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseDouble(const std::string& text, double lo, double hi, double* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string out_path = "-";
  long threads = 0, reps = -1, warmups = -1;
  double min_sample_ms = -1.0;
  orrery::calibration::TimerClock clock = orrery::calibration::TimerClock::kWall;
  std::string command_line = argv[0];
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];

  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* v) {
      if (i + 1 >= argc) return false;
      *v = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--full") {
      quick = false;
    } else if (arg == "--out") {
      if (!value(&v) || v.empty()) return BadArgument("--out needs a file name");
      out_path = v;
    } else if (arg == "--threads") {
      if (!value(&v) || !ParseInt(v, 0, 4096, &threads)) {
        return BadArgument("--threads needs an integer in [0, 4096], got '" + v + "'");
      }
    } else if (arg == "--reps") {
      if (!value(&v) || !ParseInt(v, 1, 100000, &reps)) {
        return BadArgument("--reps needs an integer in [1, 100000], got '" + v + "'");
      }
    } else if (arg == "--warmups") {
      if (!value(&v) || !ParseInt(v, 0, 100000, &warmups)) {
        return BadArgument("--warmups needs an integer in [0, 100000], got '" + v + "'");
      }
    } else if (arg == "--clock") {
      if (!value(&v) || (v != "wall" && v != "thread_cpu")) {
        return BadArgument("--clock needs wall or thread_cpu, got '" + v + "'");
      }
      clock = v == "wall" ? orrery::calibration::TimerClock::kWall : orrery::calibration::TimerClock::kThreadCpu;
    } else if (arg == "--min-sample-ms") {
      if (!value(&v) || !ParseDouble(v, 0.0, 10000.0, &min_sample_ms)) {
        return BadArgument("--min-sample-ms needs a number in [0, 10000], got '" + v + "'");
      }
    } else {
      return BadArgument("unknown argument '" + arg + "'");
    }
  }

  CpuProbeOptions options = quick ? orrery::calibration::QuickCpuProbeOptions()
                                  : orrery::calibration::FullCpuProbeOptions();
  options.threads = static_cast<int>(threads);
  options.clock = clock;
  if (reps > 0) options.reps = static_cast<int>(reps);
  if (warmups >= 0) options.warmups = static_cast<int>(warmups);
  if (min_sample_ms >= 0.0) options.min_sample_s = min_sample_ms * 1e-3;
  if (const std::string error = orrery::calibration::ValidateCpuProbeOptions(options); !error.empty()) {
    return BadArgument(error);
  }

  const auto header = orrery::calibration::CpuProbeHeader(options, command_line);
  std::fprintf(stderr, "orrery_cpu_probe: %s mode, %lld threads, %s\n", options.mode.c_str(),
               static_cast<long long>(header.threads), header.device.c_str());
  const auto records = orrery::calibration::RunCpuProbe(
      options, [](const orrery::calibration::ProbeRecord& r) {
        std::string shape;
        for (const auto& [key, value] : r.shape) {
          shape += (shape.empty() ? "" : " ") + key + "=" + std::to_string(value);
        }
        std::fprintf(stderr, "  %-8s %-5s %-28s median %10.3e s  %10.3e %s\n", r.kind.c_str(),
                     r.dtype.c_str(), shape.c_str(), r.median_s, r.rate, r.rate_unit.c_str());
      });
  std::string error;
  if (!orrery::calibration::WriteProbeJson(out_path, header, records, &error)) {
    std::fprintf(stderr, "orrery_cpu_probe: %s\n", error.c_str());
    return 1;
  }
  return 0;
}
