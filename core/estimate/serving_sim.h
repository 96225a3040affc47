#pragma once
// Event-driven serving simulation: a stream of requests through one model
// replica, iteration by iteration, with the time of every iteration from the
// inference estimator's Pass() (the same operator costs as the closed form).
//
// Schedulers (parallelism::Scheduler):
//   static      a batch is formed from the waiting requests when the replica
//               is idle (at most max_batch, KV for input + output reserved),
//               prefilled together and decoded until its longest request
//               ends; finished requests keep their slot (padding).
//   continuous  iteration-level scheduling (Yu et al. 2022, Orca, Sec. 3):
//               every iteration admits waiting requests while max_batch,
//               max_batch_tokens and the KV cache allow; a prefill iteration
//               runs the new prompts alone, else all running requests decode
//               one token (vLLM's default policy, Kwon et al. 2023).
//   chunked     Sarathi-Serve (Agrawal et al. 2024, Sec. 4): each iteration
//               decodes every running request and fills the rest of the
//               max_batch_tokens budget with prompt chunks, oldest first.
// KV cache: with paged_kv, blocks of kv_block tokens are taken as sequences
// grow; when none is free the most recently admitted request is preempted,
// its blocks freed and its prompt plus generated tokens recomputed later
// (vLLM recompute preemption, Kwon et al. 2023, Sec. 4.5). Without paging a
// request reserves input + output tokens when admitted.
//
// Speculative decoding (inference.speculate = k): a decode step runs the
// target over k + 1 tokens per sequence after k draft steps and emits
// (1 - a^(k+1)) / (1 - a) tokens per sequence on average (carried as a
// fractional credit), as in the static estimate.
//
// Metrics: TTFT = first token - arrival; TPOT = (finish - first token) /
// (output - 1); percentiles by linear interpolation between order
// statistics; goodput = requests meeting the SLO per second (Zhong et al.
// 2024, DistServe, Sec. 2).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/estimate/inference_estimator.h"

namespace orrery::engine {

struct Request {
  double arrival_s = 0;
  int64_t input = 1;
  int64_t output = 1;
};

struct RequestOutcome {
  double arrival_s = 0;
  double first_token_s = 0;
  double finish_s = 0;
  int64_t input = 0;
  int64_t output = 0;
  int preemptions = 0;
  bool done = true;  // finished within the simulation (only finished ones enter the metrics)
  double ttft() const { return first_token_s - arrival_s; }
  double tpot() const {
    return output > 1 ? (finish_s - first_token_s) / static_cast<double>(output - 1) : 0;
  }
};

struct Percentiles {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
Percentiles ComputePercentiles(std::vector<double> values);

struct ServingResult {
  bool feasible = true;
  std::string reason;            // why not, when infeasible
  std::vector<RequestOutcome> requests;
  Percentiles ttft_s, tpot_s, e2e_s;
  double duration_s = 0;         // first arrival to last finish
  double output_tokens_per_s = 0;
  double requests_per_s = 0;     // completed requests / duration
  double goodput_requests_per_s = 0;
  double slo_attainment = 0;     // fraction of requests meeting the SLO (1 when none is set)
  int64_t preemptions = 0;
  int64_t iterations = 0;
  int64_t peak_running = 0;
  double kv_capacity_tokens = 0;
};

// `d.requests` requests with Poisson arrivals at `rate` (exponential gaps)
// and lengths drawn per `d.lengths` around d.input / d.output, from d.seed.
std::vector<Request> PoissonRequests(const parallelism::InferenceDeployment& d, double rate);

// A CSV trace with the columns arrival_s, input, output (one request a
// row, any order). Errors name the file and line.
std::optional<std::vector<Request>> LoadTrace(const std::string& file, base::Diagnostics& diags);

ServingResult SimulateServing(const InferenceEstimator& est,
                              const parallelism::InferenceDeployment& d,
                              std::vector<Request> requests);

// Latency percentiles, throughput and goodput of the finished outcomes of
// res.requests, and SLO attainment over all of them (SimulateServing's
// metrics; SimulateReplicas summarizes its replicas' outcomes together).
void SummarizeOutcomes(const parallelism::InferenceDeployment& d, ServingResult& res);

// Colocated serving on `replicas` independent replicas of d's tp x pp:
// requests dealt round robin in arrival order (a router's default), each
// replica simulated by SimulateServing; the outcomes summarized together.
ServingResult SimulateReplicas(const InferenceEstimator& est,
                               const parallelism::InferenceDeployment& d,
                               const std::vector<Request>& requests, int64_t replicas);

// Replicas the system's devices hold: devices / (tp x pp), at least 1
// (data-parallel serving: throughput scales with them, latency does not).
int64_t ServingReplicas(const hardware::SystemSpec& system,
                        const parallelism::InferenceDeployment& d);

// A request stream served by the whole deployment: SimulateReplicas over
// ServingReplicas(system, d) replicas (SimulateServing when there is one).
ServingResult SimulateService(const InferenceEstimator& est,
                              const parallelism::InferenceDeployment& d,
                              std::vector<Request> requests);

// The highest Poisson rate at which at least d.slo_attainment of d.requests
// requests meet the SLO, with a confidence over d.rate_seeds arrival seeds
// (d.seed, d.seed + 1, ...):
//   1. per seed, doubling from a light load, then bisection to 0.5 %: that
//      seed's capacity r_i;
//   2. the mean of the r_i and its 95 % confidence interval, mean +- t *
//      sd / sqrt(n), t the 0.975 quantile of Student's t with n - 1 degrees
//      of freedom (Student 1908; two-sided 95 %);
//   3. the answer: min(lower end of the interval, min r_i), rounded down to
//      three significant digits (what is printed is what was checked), then
//      checked on every seed and lowered by 0.5 % steps until every seed
//      meets the SLO at it. `--serve --rate R` with any of those seeds meets
//      the SLO at the printed R. For exchangeable seeds, another seed's
//      capacity falls below the smallest of n with probability 1 / (n + 1)
//      (order statistics): 1/6 for the default 5 seeds.
struct RateSearch {
  bool found = false;
  std::string reason;      // when not found
  double max_rate = 0;     // requests/s: meets the SLO on every seed
  ServingResult at_max;    // at max_rate, seed d.seed
  int simulations = 0;
  std::vector<double> seed_rates;  // r_i, seed d.seed + i
  double mean_rate = 0;            // mean of r_i
  double ci_low = 0, ci_high = 0;  // 95 % confidence interval of the mean (= mean with one seed)
};
RateSearch MaxRateMeetingSlo(const InferenceEstimator& est,
                             const parallelism::InferenceDeployment& d);

// The 0.975 quantile of Student's t with `df` degrees of freedom (two-sided
// 95 %): the tabulated values for df 1..30, the normal 1.960 beyond
// (Fisher and Yates, Statistical Tables, Table III). 0 for df < 1.
double StudentT975(int df);

// `x` rounded down to three significant digits: 15.3912 -> 15.3,
// 1234.5 -> 1230, 0.0123456 -> 0.0123 (the nearest doubles to those
// decimals, as a parser reads them back).
double FloorToThreeDigits(double x);

}  // namespace orrery::engine
