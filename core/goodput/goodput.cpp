#include "core/goodput/goodput.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hardware/device_model.h"
#include "core/base/quantity.h"
#include "hardware/device_spec.h"

namespace orrery::goodput {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double PerSecond(double mtbf_s, double count) { return mtbf_s > 0 ? count / mtbf_s : 0.0; }

// min over the limits that are set (> 0); +inf when none is.
double Narrowest(double a, double b) {
  double r = kInf;
  if (a > 0) r = std::min(r, a);
  if (b > 0) r = std::min(r, b);
  return r;
}

// Golden-section search for the maximum of a unimodal f on [lo, hi] in
// log(x) (the optimum interval spans decades).
template <class F>
double ArgMaxLog(F f, double lo, double hi) {
  if (!(hi > lo)) return lo;
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = std::log(lo), b = std::log(hi);
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(std::exp(c)), fd = f(std::exp(d));
  // Width 1e-7 in log(x): x to a relative 1e-7 (goodput, flat at its
  // maximum, to ~1e-14), about 40 steps from 20 e-folds.
  for (int i = 0; i < 200 && b - a > 1e-7; ++i) {
    if (fc >= fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(std::exp(c));
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(std::exp(d));
    }
  }
  return std::exp((a + b) / 2);
}

// First-order async goodput (see the header): the segment a = tau + s, a
// failure loses a/2 + delta on average and costs R.
double AsyncGoodput(const Inputs& in, double tau) {
  const double a = tau + in.stall_s;
  const double lost = in.restart_s + in.read_s + a / 2 + in.write_s;
  return tau / a * std::max(0.0, 1 - lost / in.mtbf_s);
}

// The replay of ReplayRun with failures from `next` (ascending wall times).
template <class Next>
double Replay(const Inputs& in, double work_s, double interval_s, Next next, int64_t* hit) {
  const double restart = in.restart_s + in.read_s;
  // No interval: nothing fails, so nothing is checkpointed.
  const double stall = interval_s > 0 ? (in.async ? in.stall_s : in.write_s) : 0;
  const double tau = interval_s > 0 ? interval_s : work_s;
  double t = 0;        // wall clock
  double cur = 0;      // work done in the current attempt
  double durable = 0;  // work covered by the last durable checkpoint
  // Async: snapshots not yet durable (work covered, wall time durable), at
  // most two at once since the store writes them one after the other.
  double pend_work[2] = {0, 0}, pend_time[2] = {0, 0};
  int pending = 0;
  double f = next();
  int64_t failures = 0;
  auto settle = [&](double now) {
    while (pending > 0 && pend_time[0] <= now) {
      durable = pend_work[0];
      pend_work[0] = pend_work[1];
      pend_time[0] = pend_time[1];
      --pending;
    }
  };
  while (cur < work_s) {
    const double len = std::min(tau, work_s - cur);
    const double seg_end = t + len + stall;
    if (f >= seg_end) {
      t = seg_end;
      cur += len;
      if (!in.async) {
        durable = cur;
      } else {
        settle(t);
        const double start = pending > 0 ? std::max(t, pend_time[pending - 1]) : t;
        if (pending == 2) {  // cannot happen with tau >= delta; keep the newest
          pend_work[0] = pend_work[1];
          pend_time[0] = pend_time[1];
          pending = 1;
        }
        pend_work[pending] = cur;
        pend_time[pending] = start + in.write_s;
        ++pending;
      }
      continue;
    }
    // A failure at f: back to the last durable checkpoint, then restart.
    t = f;
    ++failures;
    settle(t);
    pending = 0;
    cur = durable;
    f = next();
    while (f < t + restart) {
      t = f;
      ++failures;
      f = next();
    }
    t += restart;
  }
  if (hit) *hit = failures;
  return t;
}

// SplitMix64 (Steele, Lea & Flood 2014, "Fast splittable pseudorandom
// number generators", OOPSLA): a fixed algorithm, so runs repeat exactly.
struct SplitMix64 {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1]: never 0, so -log() is finite.
  double Uniform() { return static_cast<double>((Next() >> 11) + 1) * 0x1p-53; }
};

}  // namespace

double Harmonic(int64_t n) {
  double h = 0;
  for (int64_t k = n; k >= 1; --k) h += 1.0 / static_cast<double>(k);  // small terms first
  return h;
}

double ExpectedMaxExponential(int64_t n, double mean) { return mean == 0 ? 0 : mean * Harmonic(n); }

double YoungInterval(double delta_s, double mtbf_s) { return std::sqrt(2 * delta_s * mtbf_s); }

double DalyInterval(double delta_s, double mtbf_s) {
  if (delta_s >= 2 * mtbf_s) return mtbf_s;
  const double x = delta_s / (2 * mtbf_s);
  return std::sqrt(2 * delta_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - delta_s;
}

double SegmentTime(double tau_s, double delta_s, double restart_s, double mtbf_s) {
  return mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((tau_s + delta_s) / mtbf_s);
}

double JobFailureRate(const hardware::SystemSpec& system, int64_t devices) {
  const hardware::ReliabilitySpec& r = system.reliability;
  const double n = static_cast<double>(devices);
  const double nodes = static_cast<double>(
      std::max<int64_t>(1, (devices + system.devices_per_node - 1) / system.devices_per_node));
  return PerSecond(r.device_mtbf, n) + PerSecond(r.node_mtbf, nodes) + PerSecond(r.link_mtbf, n) +
         PerSecond(r.job_mtbf, 1);
}

double CheckpointBytes(double parameters, const parallelism::TrainingPlan& p) {
  // As parallelism/memory_model.cpp: fp8 training keeps bf16 weights; Adam
  // keeps two moments (8 bytes), SGD with momentum one (4), plus fp32 master
  // weights when the weights are narrower.
  const double w = hardware::BytesPer(p.precision == hardware::DataType::kFp8
                                          ? hardware::DataType::kBf16
                                          : p.precision);
  const double opt = parallelism::OptimizerStateBytesPerParam(p, w);
  return parameters * (w + opt);
}

Inputs MakeInputs(const hardware::SystemSpec& system, const parallelism::TrainingPlan& plan,
                  double parameters, double step_s, double work_s) {
  Inputs in;
  in.devices = hardware::DeviceCount(system);
  in.nodes = system.nodes;
  in.step_s = step_s;
  in.work_s = work_s;
  const double rate = JobFailureRate(system, in.devices);
  in.mtbf_s = rate > 0 ? 1 / rate : kInf;
  in.checkpoint_bytes = CheckpointBytes(parameters, plan);
  const hardware::StorageSpec& st = system.storage;
  const double nodes_bw = st.node_bandwidth * static_cast<double>(system.nodes);
  const double write_bw = Narrowest(st.write_bandwidth, nodes_bw);
  const double read_bw =
      Narrowest(st.read_bandwidth > 0 ? st.read_bandwidth : st.write_bandwidth, nodes_bw);
  in.write_s = std::isfinite(write_bw) ? in.checkpoint_bytes / write_bw : 0;
  in.read_s = std::isfinite(read_bw) ? in.checkpoint_bytes / read_bw : 0;
  in.restart_s = system.reliability.restart_time;
  // Async needs a path to host memory; without one the save stays synchronous.
  in.async = st.async_checkpoint && system.host_bandwidth > 0;
  in.stall_s = in.async ? in.checkpoint_bytes / static_cast<double>(std::max<int64_t>(1, in.devices)) /
                              system.host_bandwidth
                        : in.write_s;
  in.straggler_factor =
      1 + ExpectedMaxExponential(std::max<int64_t>(1, system.nodes), system.reliability.node_jitter);
  // Power as the estimator counts energy (TDP x time x PUE); idle power is
  // the device's, or 30 % of TDP when not given (hardware/device_spec.h).
  const double n = static_cast<double>(in.devices);
  const hardware::DeviceSpec& dev = system.device;
  in.busy_power_w = n * hardware::BusyPower(dev) * system.pue;
  in.idle_power_w = n * hardware::IdlePower(dev) * system.pue;
  in.carbon_kg_per_j = system.grid_co2_kg_per_kwh / 3.6e6;
  return in;
}

double FailureGoodputAt(const Inputs& in, double tau) {
  if (!std::isfinite(in.mtbf_s)) return tau / (tau + in.stall_s);
  if (in.async) return AsyncGoodput(in, tau);
  return tau / SegmentTime(tau, in.write_s, in.restart_s + in.read_s, in.mtbf_s);
}

Result Evaluate(const Inputs& in) {
  Result r;
  r.in = in;
  if (!std::isfinite(in.mtbf_s)) {
    // Nothing fails: no checkpoint is needed, only the stragglers cost.
    r.failure_goodput = 1;
  } else {
    const double lo = std::max({in.step_s, in.async ? in.write_s : 0.0, 1e-3});
    const double hi = std::max(lo, 50 * in.mtbf_s);
    r.interval_s = ArgMaxLog([&](double tau) { return FailureGoodputAt(in, tau); }, lo, hi);
    r.failure_goodput = FailureGoodputAt(in, r.interval_s);
    r.young_interval_s = YoungInterval(in.stall_s, in.mtbf_s);
    if (!in.async) r.daly_interval_s = DalyInterval(in.write_s, in.mtbf_s);
  }
  r.goodput = r.failure_goodput / in.straggler_factor;
  if (in.work_s > 0) {
    r.effective_s = r.goodput > 0 ? in.work_s / r.goodput : kInf;
    r.expected_failures = std::isfinite(in.mtbf_s) ? r.effective_s / in.mtbf_s : 0;
    const double checkpoints =
        r.interval_s > 0 ? in.work_s * in.straggler_factor / r.interval_s : 0;
    const double idle_s = std::min(
        r.effective_s, r.expected_failures * (in.restart_s + in.read_s) + checkpoints * in.stall_s);
    r.idle_s = idle_s;
    r.effective_energy_j = in.busy_power_w * (r.effective_s - idle_s) + in.idle_power_w * idle_s;
    r.carbon_kg = r.effective_energy_j * in.carbon_kg_per_j;
  }
  return r;
}

double ReplayRun(const Inputs& in, double work_s, double interval_s,
                 const std::vector<double>& failure_times, int64_t* failures_hit) {
  size_t k = 0;
  auto next = [&]() { return k < failure_times.size() ? failure_times[k++] : kInf; };
  return Replay(in, work_s, interval_s, next, failures_hit);
}

MonteCarlo Simulate(const Result& r, int64_t runs, uint64_t seed) {
  MonteCarlo mc;
  mc.seed = seed;
  const double work = r.in.work_s * r.in.straggler_factor;
  if (runs <= 0) return mc;
  if (!(work > 0)) {
    mc.skipped = "no training length (workload.train_tokens) to run";
    return mc;
  }
  if (!(r.goodput > 0) || !std::isfinite(r.effective_s) ||
      static_cast<double>(runs) * r.expected_failures > kMaxMonteCarloFailures) {
    const double draws = static_cast<double>(runs) * r.expected_failures;
    mc.skipped = (std::isfinite(draws) ? "the runs would draw about " + base::FormatNumber(draws, 3)
                                       : std::string("the runs would never end and draw endless")) +
                 " failures (at most 2e8): restarts or checkpoints take longer than the MTBF";
    return mc;
  }
  mc.runs = runs;
  std::vector<double> times(static_cast<size_t>(runs));
  SplitMix64 rng{seed};
  double failures = 0;
  for (int64_t i = 0; i < runs; ++i) {
    double clock = 0;
    auto next = [&]() {
      if (!std::isfinite(r.in.mtbf_s)) return kInf;
      clock += -r.in.mtbf_s * std::log(rng.Uniform());
      return clock;
    };
    int64_t hit = 0;
    times[static_cast<size_t>(i)] = Replay(r.in, work, r.interval_s, next, &hit);
    failures += static_cast<double>(hit);
  }
  std::sort(times.begin(), times.end());
  double sum = 0;
  for (double t : times) sum += t;
  const auto rank = [&](double q) {  // nearest rank
    const auto idx = static_cast<size_t>(std::ceil(q * static_cast<double>(runs))) - 1;
    return times[std::min(idx, times.size() - 1)];
  };
  mc.mean_s = sum / static_cast<double>(runs);
  mc.p50_s = rank(0.5);
  mc.p90_s = rank(0.9);
  mc.min_s = times.front();
  mc.max_s = times.back();
  mc.mean_failures = failures / static_cast<double>(runs);
  return mc;
}

}  // namespace orrery::goodput
