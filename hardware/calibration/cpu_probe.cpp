#include "cpu_probe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#include <time.h>
#include <unistd.h>

#include <Eigen/Dense>

#ifdef _OPENMP
#include <omp.h>
#define ORRERY_OMP_PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#else
#define ORRERY_OMP_PARALLEL_FOR
#endif

namespace orrery::calibration {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;

int EffectiveThreads(int requested) {
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

// Keeps results observable so the optimiser cannot drop the timed work.
void Consume(double value) {
  volatile double sink = value;
  (void)sink;
}

template <typename Scalar>
ProbeRecord TimeGemm(const CpuProbeOptions& o, const std::string& dtype, std::int64_t m,
                     std::int64_t n, std::int64_t k) {
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  const Matrix a = Matrix::Random(m, k);
  const Matrix b = Matrix::Random(k, n);
  Matrix c = Matrix::Zero(m, n);
  std::int64_t inner = 1;
  const auto samples = TimeRepeated([&] { c.noalias() = a * b; }, o.warmups, o.reps,
                                    o.min_sample_s, &inner, o.clock);
  Consume(static_cast<double>(c.sum()));
  const double flop = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double bytes = static_cast<double>(sizeof(Scalar)) *
                       static_cast<double>(m * k + k * n + m * n);
  return MakeRecord("gemm", dtype, {{"m", m}, {"n", n}, {"k", k}}, samples, inner, flop, bytes,
                    RateUnit::kFlopPerS);
}

// STREAM kernels (McCalpin): copy c=a, scale b=s*c, triad a=b+s*c, counting
// 2, 2 and 3 arrays of traffic per call (write-allocate traffic not counted).
void TimeStream(const CpuProbeOptions& o, std::int64_t bytes_per_array,
                std::vector<ProbeRecord>* out, const RecordObserver& observer) {
  const std::int64_t n = std::max<std::int64_t>(1, bytes_per_array / 8);
  std::vector<double> a(n, 1.0), b(n, 2.0), c(n, 0.0);
  double* pa = a.data();
  double* pb = b.data();
  double* pc = c.data();
  const double s = 3.0;
  const std::int64_t array_bytes = n * 8;
  struct Kernel {
    const char* name;
    int arrays;
    std::function<void()> fn;
  };
  const Kernel kernels[] = {
      {"copy", 2, [&] { ORRERY_OMP_PARALLEL_FOR for (std::int64_t i = 0; i < n; ++i) pc[i] = pa[i]; }},
      {"scale", 2, [&] { ORRERY_OMP_PARALLEL_FOR for (std::int64_t i = 0; i < n; ++i) pb[i] = s * pc[i]; }},
      {"triad", 3, [&] { ORRERY_OMP_PARALLEL_FOR for (std::int64_t i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i]; }},
  };
  for (const Kernel& kernel : kernels) {
    std::int64_t inner = 1;
    const auto samples = TimeRepeated(kernel.fn, o.warmups, o.reps, o.min_sample_s, &inner, o.clock);
    ProbeRecord r = MakeRecord(kernel.name, "fp64", {{"bytes", array_bytes}}, samples, inner,
                               kernel.arrays == 3 ? 2.0 * static_cast<double>(n) : 0.0,
                               static_cast<double>(kernel.arrays * array_bytes),
                               RateUnit::kBytesPerS);
    if (observer) observer(r);
    out->push_back(std::move(r));
  }
  Consume(pa[n / 2] + pb[n / 3] + pc[n - 1]);
}

// GELU, tanh approximation (Hendrycks & Gimpel 2016, eq. in section 2):
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Reads and writes one fp32 each.
ProbeRecord TimeGelu(const CpuProbeOptions& o, std::int64_t bytes_per_array) {
  const std::int64_t n = std::max<std::int64_t>(1, bytes_per_array / 4);
  std::vector<float> x(n), y(n, 0.0f);
  for (std::int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i % 97) - 48) / 16.0f;
  const float* px = x.data();
  float* py = y.data();
  std::int64_t inner = 1;
  const auto samples = TimeRepeated(
      [&] {
        ORRERY_OMP_PARALLEL_FOR for (std::int64_t i = 0; i < n; ++i) {
          const float v = px[i];
          py[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        }
      },
      o.warmups, o.reps, o.min_sample_s, &inner, o.clock);
  Consume(py[n / 2]);
  return MakeRecord("gelu", "fp32", {{"bytes", n * 4}}, samples, inner, 0.0,
                    static_cast<double>(2 * n * 4), RateUnit::kBytesPerS);
}

// Numerically stable row softmax: max, exp and sum, scale. Compulsory traffic
// is one read and one write of the matrix (the row is reused from cache).
ProbeRecord TimeSoftmax(const CpuProbeOptions& o, std::int64_t rows, std::int64_t cols) {
  std::vector<float> x(rows * cols), y(rows * cols, 0.0f);
  for (std::int64_t i = 0; i < rows * cols; ++i) x[i] = static_cast<float>((i % 89) - 44) / 8.0f;
  const float* px = x.data();
  float* py = y.data();
  std::int64_t inner = 1;
  const auto samples = TimeRepeated(
      [&] {
        ORRERY_OMP_PARALLEL_FOR for (std::int64_t r = 0; r < rows; ++r) {
          const float* in = px + r * cols;
          float* out = py + r * cols;
          float mx = in[0];
          for (std::int64_t c = 1; c < cols; ++c) mx = std::max(mx, in[c]);
          float sum = 0.0f;
          for (std::int64_t c = 0; c < cols; ++c) {
            out[c] = std::exp(in[c] - mx);
            sum += out[c];
          }
          const float inv = 1.0f / sum;
          for (std::int64_t c = 0; c < cols; ++c) out[c] *= inv;
        }
      },
      o.warmups, o.reps, o.min_sample_s, &inner, o.clock);
  Consume(py[(rows * cols) / 2]);
  return MakeRecord("softmax", "fp32", {{"rows", rows}, {"cols", cols}}, samples, inner, 0.0,
                    static_cast<double>(2 * rows * cols * 4), RateUnit::kBytesPerS);
}

std::string UtcNowIso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        const auto start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? std::string() : line.substr(start);
      }
    }
  }
  return "unknown";
}

// Size of the largest CPU cache (the last level) from sysfs, in bytes; 0 when
// unknown. Sizes read like "32768K" or "32M".
std::int64_t LastLevelCacheBytes() {
  std::int64_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(in >> text) || text.empty()) continue;
    char* end = nullptr;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    std::int64_t scale = 1;
    if (*end == 'K') scale = kKiB;
    if (*end == 'M') scale = kMiB;
    if (*end == 'G') scale = 1024 * kMiB;
    best = std::max<std::int64_t>(best, static_cast<std::int64_t>(value) * scale);
  }
  return best;
}

// MemTotal from /proc/meminfo, in bytes; 0 when unknown.
std::int64_t MemoryTotalBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  long long kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemTotal:") return static_cast<std::int64_t>(kib) * kKiB;
  }
  return 0;
}

// The CPU's bf16 arithmetic extensions named in /proc/cpuinfo, or "none".
std::string Bf16Extensions() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::string found;
    for (const char* flag : {"avx512_bf16", "amx_bf16"}) {
      if ((line + " ").find(std::string(" ") + flag + " ") != std::string::npos) {
        found += found.empty() ? flag : std::string(",") + flag;
      }
    }
    return found.empty() ? "none" : found;
  }
  return "unknown";
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string CompilerDescription() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("gcc ") + __VERSION__;
#else
  return "unknown";
#endif
}

}  // namespace

const char* TimerClockName(TimerClock c) { return c == TimerClock::kThreadCpu ? "thread_cpu" : "wall"; }

double NowSeconds(TimerClock clock) {
  if (clock == TimerClock::kThreadCpu) {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

std::vector<double> TimeRepeated(const std::function<void()>& fn, int warmups, int reps,
                                 double min_sample_s, std::int64_t* inner, TimerClock clock) {
  for (int i = 0; i < warmups; ++i) fn();
  // One timed call sizes the inner loop; cap it so a pathological clock
  // cannot make a sample run forever.
  const double t0 = NowSeconds(clock);
  fn();
  const double one = NowSeconds(clock) - t0;
  std::int64_t count = 1;
  if (one < min_sample_s) {
    count = static_cast<std::int64_t>(std::ceil(min_sample_s / std::max(one, 1e-9)));
    count = std::clamp<std::int64_t>(count, 1, 1'000'000);
  }
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(std::max(reps, 0)));
  for (int r = 0; r < reps; ++r) {
    const double start = NowSeconds(clock);
    for (std::int64_t i = 0; i < count; ++i) fn();
    const double elapsed = NowSeconds(clock) - start;
    samples.push_back(elapsed / static_cast<double>(count));
  }
  if (inner) *inner = count;
  return samples;
}

CpuProbeOptions QuickCpuProbeOptions() {
  CpuProbeOptions o;
  o.mode = "quick";
  o.warmups = 1;
  o.reps = 5;
  o.min_sample_s = 2e-3;
  o.gemm_mnk = {{64, 64, 64},    {128, 128, 128},  {256, 256, 256}, {512, 512, 512},
                {1, 1024, 1024}, {16, 1024, 1024}, {128, 1024, 1024}};
  o.stream_bytes = {32 * kKiB, 1 * kMiB, 64 * kMiB};
  o.elementwise_bytes = {1 * kMiB, 64 * kMiB};
  o.softmax_rows_cols = {{256, 1024}, {1024, 4096}};
  return o;
}

CpuProbeOptions FullCpuProbeOptions() {
  CpuProbeOptions o;
  o.mode = "full";
  o.warmups = 2;
  o.reps = 11;
  o.min_sample_s = 10e-3;
  for (std::int64_t s = 64; s <= 2048; s *= 2) o.gemm_mnk.push_back({s, s, s});
  const std::array<std::int64_t, 2> nk[] = {{1024, 1024}, {4096, 1024}, {1024, 4096}};
  for (const std::int64_t m : {1, 16, 64, 256, 1024}) {
    for (const auto& [n, k] : nk) o.gemm_mnk.push_back({m, n, k});
  }
  for (std::int64_t b = 16 * kKiB; b <= 256 * kMiB; b *= 4) o.stream_bytes.push_back(b);
  for (std::int64_t b = 64 * kKiB; b <= 256 * kMiB; b *= 16) o.elementwise_bytes.push_back(b);
  o.softmax_rows_cols = {{128, 512}, {1024, 1024}, {1024, 4096}, {4096, 4096}, {1024, 32768}};
  return o;
}

std::string ValidateCpuProbeOptions(const CpuProbeOptions& o) {
  if (o.threads < 0) return "threads: must be >= 0 (0 = all hardware threads), got " + std::to_string(o.threads);
  if (o.clock == TimerClock::kThreadCpu && o.threads != 1)
    return "clock: thread CPU time needs threads = 1, got " + std::to_string(o.threads);
  if (o.warmups < 0) return "warmups: must be >= 0, got " + std::to_string(o.warmups);
  if (o.reps < 1) return "reps: must be >= 1, got " + std::to_string(o.reps);
  if (!(o.min_sample_s >= 0.0) || o.min_sample_s > 10.0) {
    return "min_sample_s: must be in [0, 10] seconds, got " + std::to_string(o.min_sample_s);
  }
  for (const auto& [m, n, k] : o.gemm_mnk) {
    if (m < 1 || n < 1 || k < 1 || m > 65536 || n > 65536 || k > 65536) {
      return "gemm_mnk: every extent must be in [1, 65536], got " + std::to_string(m) + "x" +
             std::to_string(n) + "x" + std::to_string(k);
    }
  }
  for (const std::string& d : o.gemm_dtypes) {
    if (d != "fp32" && d != "fp64") return "gemm_dtypes: expected \"fp32\" or \"fp64\", got \"" + d + "\"";
  }
  for (const std::int64_t b : o.stream_bytes) {
    if (b < 8 || b > 16 * 1024 * kMiB) return "stream_bytes: must be in [8 B, 16 GiB], got " + std::to_string(b);
  }
  for (const std::int64_t b : o.elementwise_bytes) {
    if (b < 4 || b > 16 * 1024 * kMiB) return "elementwise_bytes: must be in [4 B, 16 GiB], got " + std::to_string(b);
  }
  for (const auto& [rows, cols] : o.softmax_rows_cols) {
    if (rows < 1 || cols < 1 || rows * cols > 1024 * kMiB) {
      return "softmax_rows_cols: rows, cols >= 1 and rows*cols <= 2^30, got " + std::to_string(rows) +
             "x" + std::to_string(cols);
    }
  }
  return {};
}

std::vector<ProbeRecord> RunCpuProbe(const CpuProbeOptions& o, const RecordObserver& observer) {
  const int threads = EffectiveThreads(o.threads);
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  Eigen::setNbThreads(threads);
  std::vector<ProbeRecord> out;
  auto emit = [&](ProbeRecord r) {
    if (observer) observer(r);
    out.push_back(std::move(r));
  };
  for (const std::string& dtype : o.gemm_dtypes) {
    for (const auto& [m, n, k] : o.gemm_mnk) {
      emit(dtype == "fp64" ? TimeGemm<double>(o, dtype, m, n, k) : TimeGemm<float>(o, dtype, m, n, k));
    }
  }
  for (const std::int64_t b : o.stream_bytes) TimeStream(o, b, &out, observer);
  for (const std::int64_t b : o.elementwise_bytes) emit(TimeGelu(o, b));
  for (const auto& [rows, cols] : o.softmax_rows_cols) emit(TimeSoftmax(o, rows, cols));
  return out;
}

ProbeHeader CpuProbeHeader(const CpuProbeOptions& o, const std::string& command_line) {
  ProbeHeader h;
  h.probe = "cpu";
  h.mode = o.mode;
  h.host = HostName();
  h.device = CpuModel();
  h.compiler = CompilerDescription();
  h.date_utc = UtcNowIso8601();
  h.command_line = command_line;
  h.threads = EffectiveThreads(o.threads);
  h.extra.emplace_back("eigen_version", std::to_string(EIGEN_WORLD_VERSION) + "." +
                                            std::to_string(EIGEN_MAJOR_VERSION) + "." +
                                            std::to_string(EIGEN_MINOR_VERSION));
#ifdef _OPENMP
  h.extra.emplace_back("openmp", std::to_string(_OPENMP));
#else
  h.extra.emplace_back("openmp", "off (single-threaded kernels)");
#endif
  h.extra.emplace_back("hardware_threads", std::to_string(std::thread::hardware_concurrency()));
  h.extra.emplace_back("clock", o.clock == TimerClock::kThreadCpu
                                    ? "thread_cpu (CLOCK_THREAD_CPUTIME_ID: waits for a core left out)"
                                    : "wall (steady_clock)");
  // What a device profile needs beyond the timings (the importer reads them).
  h.extra.emplace_back("llc_bytes", std::to_string(LastLevelCacheBytes()));
  h.extra.emplace_back("memory_total_bytes", std::to_string(MemoryTotalBytes()));
  h.extra.emplace_back("bf16_extensions", Bf16Extensions());
  return h;
}

}  // namespace orrery::calibration
