#pragma once
// Max-load (saturated server) runs: every request of a benchmark queued at
// once, served by continuous (in-flight) batching within the engine's limits,
// as `trtllm-bench throughput` and vLLM's offline throughput benchmark run
// them ("all requests are queued in rapid succession", TensorRT-LLM
// docs/source/performance/perf-overview.md).
//
// The engine's limits are those the benchmark derives itself unless given:
//   trtllm-bench  max batch size and max num tokens from the build heuristic
//                 of tensorrt_llm/bench/build/tuning.py (calc_engine_setting,
//                 finetune_setting): the KV memory left after the weights on
//                 the tp x pp devices, times the KV fraction 0.95, divided by
//                 the KV bytes of one request of ISL + OSL tokens gives the
//                 requests that fit, R;
//                   raw_bs    = min(R, 4096) / pp
//                   max_bs    = max(64, 32*ceil(raw_bs/32))   raw_bs < 256
//                               128*ceil(raw_bs/128)          raw_bs < 1024
//                               256*ceil(raw_bs/256)          otherwise
//                   raw_tok   = min(raw_bs * (1 + ISL/OSL), 32768)
//                   max_tok   = max(2048, 256*ceil(raw_tok/256))  raw_tok < 4096
//                               512*ceil(raw_tok/512)             raw_tok < 8192
//                               1024*ceil(raw_tok/1024)           otherwise
//                 The KV bytes per token use max(tp, kv_heads) heads (each
//                 device holds at least one); memory is counted in GiB of the
//                 device's capacity. The runtime KV pool is 0.95 of the memory
//                 left after weights and activations
//                 (kv_cache_free_gpu_mem_fraction, the perf-overview runs).
//                 Iterations mix decodes with context tokens up to max num
//                 tokens (in-flight batching), the `chunked` scheduler here.
//                 A request is admitted only when the KV of its whole prompt
//                 and output fits, and is never paused: the default capacity
//                 scheduler policy GUARANTEED_NO_EVICT ("guarantee that a
//                 started request is never paused", TensorRT-LLM docs,
//                 performance-tuning-guide/useful-runtime-flags.md, Capacity
//                 Scheduler Policy), the simulator's paged_kv: false.
//   vllm          vLLM's EngineArgs defaults: max_num_seqs 256,
//                 gpu_memory_utilization 0.9 (the KV pool is what is left of
//                 0.9 of the device after weights and activations), chunked
//                 prefill with max_num_batched_tokens 8192 (the V1 engine's
//                 OpenAI-server default on 80 GB-class GPUs); KV blocks taken
//                 as sequences grow, the newest request preempted and
//                 recomputed when they run out (Kwon et al. 2023, Sec. 4.5).

#include <cstdint>
#include <string>

#include "core/estimate/serving_sim.h"

namespace orrery::engine {

enum class LimitRule { kTrtllmBench, kVllm };
const char* LimitRuleName(LimitRule r);

struct EngineLimits {
  int64_t max_batch = 0;        // sequences in flight at most
  int64_t max_num_tokens = 0;   // tokens one iteration may process
  double kv_fraction = 0.95;    // of the memory left after weights and activations
  double requests_fit = 0;      // the rule's estimate of requests whose KV fits (R above)
  bool reserve_whole_request = false;  // admit only when input + output KV fits; never preempt
  std::string rule;             // which rule chose the numbers, in words
  std::string reason;           // non-empty when the model does not fit at all
};

// The limits `rule` picks for `d` (tp, pp, datatypes) at ISL/OSL `input`/`output`.
EngineLimits BenchmarkLimits(LimitRule rule, const models::ModelSpec& m,
                             const hardware::DeviceSpec& device,
                             const parallelism::InferenceDeployment& d, int64_t input,
                             int64_t output);

struct MaxLoadResult {
  bool feasible = false;
  std::string reason;
  EngineLimits limits;
  ServingResult sim;                 // the requests, iteration by iteration
  double output_tokens_per_s = 0;    // one replica: output tokens / makespan
  double requests_per_s = 0;
  double mean_running = 0;           // sequences in flight per iteration, averaged over time
  double ttft_s = 0;                 // mean, including the wait in the queue
  double tpot_s = 0;                 // mean over requests
};

// `requests` requests of d.input / d.output tokens, all queued at t = 0, on
// one replica with `limits`.
MaxLoadResult RunMaxLoad(const InferenceEstimator& est, parallelism::InferenceDeployment d,
                         const EngineLimits& limits, int64_t requests);

}  // namespace orrery::engine
