#pragma once
// The CPU calibration probe: times Eigen GEMMs, STREAM-style memory kernels
// and element-wise / softmax-like kernels on this machine and returns one
// ProbeRecord per (kernel, shape, dtype).

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "probe_record.h"

namespace orrery::calibration {

// What a timing reads: wall time (steady_clock), or the CPU time of the
// calling thread (CLOCK_THREAD_CPUTIME_ID), which leaves out the time the
// thread waits for a core on a busy, shared machine. Thread CPU time is only
// meaningful single-threaded (threads = 1): other threads' work is not in it.
enum class TimerClock { kWall, kThreadCpu };
const char* TimerClockName(TimerClock c);  // "wall" or "thread_cpu"

// Seconds on `clock` since an arbitrary origin.
double NowSeconds(TimerClock clock);

struct CpuProbeOptions {
  std::string mode = "quick";  // recorded in the header: "quick", "full" or "custom"
  int threads = 0;             // worker threads; 0 = all hardware threads
  TimerClock clock = TimerClock::kWall;  // kThreadCpu needs threads = 1
  int warmups = 2;             // untimed calls before timing each kernel
  int reps = 5;                // timed samples per kernel
  double min_sample_s = 2e-3;  // each sample repeats the call until it lasts this long
  // GEMM C(m x n) = A(m x k) * B(k x n), in fp32 and fp64.
  std::vector<std::array<std::int64_t, 3>> gemm_mnk;
  std::vector<std::string> gemm_dtypes = {"fp32", "fp64"};
  // STREAM copy / scale / triad over fp64 arrays of these sizes (bytes per array).
  std::vector<std::int64_t> stream_bytes;
  // GELU (tanh form) over fp32 arrays of these sizes (bytes per array).
  std::vector<std::int64_t> elementwise_bytes;
  // Row-wise softmax over fp32 matrices {rows, cols}.
  std::vector<std::array<std::int64_t, 2>> softmax_rows_cols;
};

// A few seconds on a laptop: small grids, few repetitions.
CpuProbeOptions QuickCpuProbeOptions();
// About a minute or two: grids from cache-resident to DRAM-sized.
CpuProbeOptions FullCpuProbeOptions();

// Calls `fn` `warmups` times, then picks an inner repeat count so one sample
// lasts at least `min_sample_s`, then takes `reps` samples. Returns per-call
// seconds (sample time / inner) and sets *inner.
std::vector<double> TimeRepeated(const std::function<void()>& fn, int warmups, int reps,
                                 double min_sample_s, std::int64_t* inner,
                                 TimerClock clock = TimerClock::kWall);

// Observer told of each record as it is produced (may be empty).
using RecordObserver = std::function<void(const ProbeRecord&)>;

// Runs every kernel the options name. Options are assumed valid
// (ValidateCpuProbeOptions returns an empty string).
std::vector<ProbeRecord> RunCpuProbe(const CpuProbeOptions& options,
                                     const RecordObserver& observer = {});

// Empty when the options can run; otherwise a message naming the field and value.
std::string ValidateCpuProbeOptions(const CpuProbeOptions& options);

// Host name, CPU model, compiler, UTC date, threads; `command_line` as given.
ProbeHeader CpuProbeHeader(const CpuProbeOptions& options, const std::string& command_line);

}  // namespace orrery::calibration
