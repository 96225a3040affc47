#pragma once
// Goodput: how much of a training run's wall time is useful step time once
// failures, checkpoints, restarts and stragglers are paid for, and how long
// the run then takes.
//
//   failures   a synchronous job stops on any failure of its parts; parts
//              fail independently and memorylessly (exponential), so the
//              job's rate is the sum: lambda = N_dev/device_mtbf +
//              N_node/node_mtbf + N_dev/link_mtbf + 1/job_mtbf, M = 1/lambda.
//   checkpoint C bytes = parameters x (weight + optimizer bytes per
//              parameter), written in parallel by every device (a fully
//              sharded save: PyTorch DCP, Megatron distributed checkpoints);
//              write time delta = C / min(store bandwidth, nodes x node
//              bandwidth); sync: the step stalls for delta; async: it stalls
//              for the host copy (C / devices / host bandwidth) and delta runs
//              behind training.
//   run        segments of tau seconds of work, each followed by a
//              checkpoint; a failure loses the work since the last durable
//              checkpoint and costs a restart R (restart_time + C / read
//              bandwidth), itself subject to failure.
//
//   time per segment (sync; Daly 2006, "A higher order estimate of the
//   optimum checkpoint interval for restart dumps", FGCS 22, Eq. 13 with
//   exponential failures):  T(tau) = M e^(R/M) (e^((tau + delta)/M) - 1)
//   goodput = tau / T(tau), minimised over tau numerically; Young's
//   interval sqrt(2 delta M) (Young 1974, CACM 17(9)) and Daly's
//   higher-order one (Daly 2006 Eq. 37) are reported beside it.
//
//   async (first order, as Young's derivation but with the durable point
//   delta after the snapshot, so a failure loses (tau + s)/2 + delta on
//   average): goodput(tau) = tau / (tau + s) x (1 - (R + (tau + s)/2 +
//   delta) / M), tau >= delta, maximised numerically.
//
//   stragglers a synchronous step waits for the slowest of n nodes; with
//              each node's extra time exponential of mean j x step, the
//              expected maximum is j x step x H_n (H_n the n-th harmonic
//              number: by Renyi's representation of exponential order
//              statistics, Renyi 1953, "On the theory of order statistics",
//              Acta Math. Acad. Sci. Hungar. 4, the k-th gap of n draws is
//              exponential of mean mean/(n-k+1)), so steps
//              take (1 + j H_n) times the ideal.
//
// Nothing here allocates except the Monte-Carlo (its samples, a skip reason).

#include <cstdint>
#include <string>
#include <vector>

#include "hardware/system_spec.h"
#include "models/model_spec.h"
#include "parallelism/plan_spec.h"

namespace orrery::goodput {

// H_n = 1 + 1/2 + ... + 1/n (0 for n <= 0).
double Harmonic(int64_t n);
// E[max of n independent exponential draws of mean `mean`] = mean x H_n.
double ExpectedMaxExponential(int64_t n, double mean);

// Young 1974: the checkpoint interval (work between checkpoints) that
// minimises the first-order waste, sqrt(2 delta M).
double YoungInterval(double delta_s, double mtbf_s);
// Daly 2006 Eq. 37: sqrt(2 delta M)[1 + sqrt(delta/(2M))/3 + delta/(18M)] - delta
// for delta < 2M, else M.
double DalyInterval(double delta_s, double mtbf_s);
// Daly 2006 Eq. 13: expected wall time of one segment of tau seconds of work
// followed by a delta-second checkpoint, with restart R, failures at rate 1/M.
double SegmentTime(double tau_s, double delta_s, double restart_s, double mtbf_s);

// The job's failure rate (per second) on a system of `devices` devices.
double JobFailureRate(const hardware::SystemSpec& system, int64_t devices);

// Bytes of one checkpoint: weights in the training precision (fp8 keeps
// bf16 weights) plus the optimizer state, as parallelism/memory_model.cpp
// counts them (Rajbhandari et al. 2020, ZeRO, Sec. 3.1).
double CheckpointBytes(double parameters, const parallelism::TrainingPlan& plan);

struct Inputs {
  double step_s = 0;           // ideal iteration time
  double work_s = 0;           // ideal training time (0 = unknown: fraction only)
  double mtbf_s = 0;           // job MTBF (infinite when no part fails)
  double checkpoint_bytes = 0;
  double write_s = 0;          // checkpoint write to the store (delta)
  double stall_s = 0;          // step stall per checkpoint (= write_s when sync)
  double read_s = 0;           // checkpoint read at a restart
  double restart_s = 0;        // restart_time (read excluded)
  bool async = false;
  double straggler_factor = 1; // step time / ideal step time from node jitter
  int64_t devices = 0;
  int64_t nodes = 0;
  // Facility power of the whole system (watts, PUE included) while it
  // trains (devices at TDP, as the estimator's energy counts it) and while
  // it waits on a restart or a checkpoint stall (devices at idle power).
  double busy_power_w = 0;
  double idle_power_w = 0;
  double carbon_kg_per_j = 0;  // grid intensity (0 = not given)
};

struct Result {
  Inputs in;
  double interval_s = 0;        // work between checkpoints, the optimum
  double young_interval_s = 0;  // Young 1974, for comparison
  double daly_interval_s = 0;   // Daly 2006 Eq. 37 (sync only; 0 with async)
  double failure_goodput = 1;   // useful / wall time from failures and checkpoints
  double goodput = 1;           // failure_goodput / straggler_factor
  double expected_failures = 0; // over work_s (0 when unknown)
  double effective_s = 0;       // expected wall time of work_s (0 when unknown)
  // Energy of the effective run: busy power over the work, the redone work
  // and the straggler wait; idle power over restarts (F x R) and checkpoint
  // stalls (work / interval x stall). 0 when work_s is unknown.
  double effective_energy_j = 0;
  double idle_s = 0;            // of effective_s: restarts and checkpoint stalls (0 when work_s is unknown)
  double carbon_kg = 0;         // effective_energy_j x grid intensity (0 when not given)
};

// Inputs from a system, a plan and an estimate's step time. `parameters`
// is the model's count; `work_s` the ideal training time (0 when unknown).
Inputs MakeInputs(const hardware::SystemSpec& system, const parallelism::TrainingPlan& plan,
                  double parameters, double step_s, double work_s);

// The closed form with the optimum interval.
Result Evaluate(const Inputs& in);
// The closed form at a given interval (for sweeps of tau and for tests).
double FailureGoodputAt(const Inputs& in, double interval_s);

// ---------------------------------------------------------------------------
// Replaying failures.

// Wall time to finish `work_s` of work with checkpoints every `interval_s`,
// given the failure times in wall-clock seconds from the start, ascending
// (a hand-built trace, or the draws of the Monte-Carlo). Rules: each segment
// of interval_s work (the last one shorter) is followed by a checkpoint
// stall; sync: the checkpoint is durable when the stall ends; async: it is
// durable write_s after the snapshot. A failure loses the work since the
// last durable checkpoint, then the restart (restart_s + read_s) runs; a
// failure during a restart starts it again. Step-time jitter is not replayed
// (it multiplies the work: pass work_s x straggler_factor).
double ReplayRun(const Inputs& in, double work_s, double interval_s,
                 const std::vector<double>& failure_times, int64_t* failures_hit = nullptr);

struct MonteCarlo {
  int64_t runs = 0;             // 0 when not drawn (see `skipped`)
  uint64_t seed = 0;
  double mean_s = 0, p50_s = 0, p90_s = 0, min_s = 0, max_s = 0;
  double mean_failures = 0;
  std::string skipped;          // why no run was drawn ("" when drawn)
};

// The most failures the Monte-Carlo draws over all its runs (expected, from
// the closed form): a run that barely progresses (restart or checkpoint
// longer than the MTBF) would otherwise take exponentially many draws.
inline constexpr double kMaxMonteCarloFailures = 2e8;

// Skipped (runs = 0, `skipped` says why) when the work is unknown, goodput
// is 0, or runs x expected failures exceeds kMaxMonteCarloFailures.
// `runs` whole runs of `r.in.work_s x straggler_factor` at the interval
// `r.interval_s`, failures drawn as a Poisson process of rate 1/M from a
// 64-bit generator seeded with `seed` (same seed, same answer on every
// platform: the draws use SplitMix64 and -M ln(U), not <random>'s
// distributions, whose algorithms the standard leaves open).
MonteCarlo Simulate(const Result& r, int64_t runs, uint64_t seed);

}  // namespace orrery::goodput
