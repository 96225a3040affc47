#include "core/estimate/max_load.h"

#include <algorithm>
#include <cmath>

#include "models/transformer.h"

namespace orrery::engine {

using parallelism::InferenceDeployment;

const char* LimitRuleName(LimitRule r) {
  return r == LimitRule::kTrtllmBench ? "trtllm-bench" : "vllm";
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

int64_t RoundUp(double x, int64_t step) {
  return static_cast<int64_t>(std::ceil(x / static_cast<double>(step))) * step;
}

}  // namespace

EngineLimits BenchmarkLimits(LimitRule rule, const models::ModelSpec& m,
                             const hardware::DeviceSpec& device, const InferenceDeployment& d,
                             int64_t input, int64_t output) {
  EngineLimits lim;
  if (rule == LimitRule::kVllm) {
    lim.max_batch = 256;
    lim.max_num_tokens = 8192;
    lim.kv_fraction = 0.9;
    lim.rule = "vLLM defaults: max_num_seqs 256, max_num_batched_tokens 8192 (chunked "
               "prefill), gpu_memory_utilization 0.9";
    return lim;
  }
  // trtllm-bench build heuristic (tensorrt_llm/bench/build/tuning.py).
  const double gpus = static_cast<double>(d.tp * d.pp);
  const double kv_heads = static_cast<double>(std::max<int64_t>(d.tp, models::KvHeads(m)));
  const double gib_per_token = 2.0 * static_cast<double>(m.layers) * kv_heads *
                               static_cast<double>(models::HeadDim(m)) *
                               hardware::BytesPer(d.kv_cache) / kGiB;
  const double engine_gib =
      models::ParameterCount(m, std::max<int64_t>(1, m.max_seq)) * hardware::BytesPer(d.weights) / kGiB;
  const double total_gib = device.memory_capacity / kGiB * gpus;
  const double cache_gib = (total_gib - engine_gib) * lim.kv_fraction;
  const double seq = static_cast<double>(input + output);
  lim.requests_fit = cache_gib > 0 ? cache_gib / (gib_per_token * seq) : 0;
  if (lim.requests_fit < 1) {
    lim.reason = "the weights leave no KV memory for one request of " +
                 std::to_string(input + output) + " tokens";
    return lim;
  }
  const double raw_bs = std::min(lim.requests_fit, 4096.0) / static_cast<double>(d.pp);
  if (raw_bs < 256) lim.max_batch = std::max<int64_t>(64, RoundUp(raw_bs, 32));
  else if (raw_bs < 1024) lim.max_batch = RoundUp(raw_bs, 128);
  else lim.max_batch = RoundUp(raw_bs, 256);
  const double raw_tok =
      std::min(raw_bs * (1 + static_cast<double>(input) / static_cast<double>(output)), 32768.0);
  if (raw_tok < 4096) lim.max_num_tokens = std::max<int64_t>(2048, RoundUp(raw_tok, 256));
  else if (raw_tok < 8192) lim.max_num_tokens = RoundUp(raw_tok, 512);
  else lim.max_num_tokens = RoundUp(raw_tok, 1024);
  lim.reserve_whole_request = true;  // GUARANTEED_NO_EVICT, the default capacity policy
  lim.rule = "trtllm-bench build heuristic: max batch " + std::to_string(lim.max_batch) +
             ", max num tokens " + std::to_string(lim.max_num_tokens) + " from " +
             std::to_string(static_cast<int64_t>(lim.requests_fit)) +
             " requests' KV; GUARANTEED_NO_EVICT admission";
  return lim;
}

MaxLoadResult RunMaxLoad(const InferenceEstimator& est, InferenceDeployment d,
                         const EngineLimits& limits, int64_t requests) {
  MaxLoadResult out;
  out.limits = limits;
  if (!limits.reason.empty()) {
    out.reason = limits.reason;
    return out;
  }
  d.scheduler = parallelism::Scheduler::kChunked;
  d.paged_kv = !limits.reserve_whole_request;
  d.max_batch = limits.max_batch;
  d.max_batch_tokens = limits.max_num_tokens;
  d.speculate = 0;
  // The KV pool is kv_fraction of the memory left after weights and the
  // activations of a full iteration: choose memory_fraction so that the
  // estimator's capacity (capacity * memory_fraction - fixed) equals
  // kv_fraction * (capacity - fixed).
  const double pass = static_cast<double>(d.max_batch_tokens);
  const double fixed =
      est.Memory(d, 0, 0, pass, std::min(pass, static_cast<double>(d.max_batch))).total();
  const double cap = est.system().device.memory_capacity;
  if (fixed >= cap) {
    out.reason = "weights and activations exceed the device memory";
    return out;
  }
  d.memory_fraction = (limits.kv_fraction * cap + (1 - limits.kv_fraction) * fixed) / cap;
  std::vector<Request> queue(static_cast<size_t>(std::max<int64_t>(1, requests)));
  for (Request& r : queue) {
    r.arrival_s = 0;
    r.input = d.input;
    r.output = d.output;
  }
  out.sim = SimulateServing(est, d, std::move(queue));
  if (!out.sim.feasible) {
    out.reason = out.sim.reason;
    return out;
  }
  out.feasible = true;
  out.output_tokens_per_s = out.sim.output_tokens_per_s;
  out.requests_per_s = out.sim.requests_per_s;
  out.ttft_s = out.sim.ttft_s.mean;
  out.tpot_s = out.sim.tpot_s.mean;
  // Little's law over the run: sequences in flight = sum of residence / makespan.
  double residence = 0;
  for (const auto& r : out.sim.requests) residence += r.finish_s - r.first_token_s;
  out.mean_running = out.sim.duration_s > 0 ? residence / out.sim.duration_s : 0;
  return out;
}

}  // namespace orrery::engine
