#pragma once
// Disaggregated serving: prompts (prefill) and token generation (decode) on
// separate pools of replicas, the KV cache of each prompt sent from the
// prefill replica that computed it to a decode replica (DistServe, Zhong et
// al. OSDI 2024, Sec. 3-4; Splitwise, Patel et al. ISCA 2024, Sec. 4).
//
//   requests ─round robin─▶ prefill replica i ── KV over the tier ──▶ decode replica j
//   (Poisson)               (tp_p x pp_p devices,  (bytes / bandwidth    (tp_d x pp_d devices,
//                            queue, batches of       + latency, one        queue, continuous
//                            prompts; the first      transfer at a time    decode batches)
//                            token comes from here)  per prefill replica)
//
// Each pool is simulated with the request stream it sees:
//   prefill  SimulateServing (serving_sim.h) on the prefill deployment with
//            every request's output set to 1: the pass over the prompt yields
//            the first token (DistServe Sec. 2: TTFT ends with the prefill);
//   transfer the KV of the whole prompt, KvTransferBytes, sent after the
//            prefill ends (no layer-by-layer overlap, which Splitwise Sec. 4.3
//            uses to hide most of it: an upper bound on its cost), over the
//            innermost network tier whose domain holds both pools' devices
//            (DistServe Sec. 4.3 places the pools on NVLink within a node
//            when they fit, on the cluster network otherwise);
//   decode   a continuous-batching decode loop (one token per running request
//            per iteration, Orca's iteration-level scheduling, Yu et al.
//            2022), admitting arrived requests FIFO while max_batch and the
//            KV cache (input + output tokens reserved at admission) allow.
// Requests go round robin to the prefill replicas in arrival order and to the
// decode replicas in the order their KV arrives (DistServe's controller
// dispatches to the shortest queue; round robin is the same on a steady,
// uniform stream and simpler to state).
//
// Metrics are DistServe's (Sec. 2): TTFT = prefill finish - arrival; TPOT =
// (last token - first token) / (output - 1), so the transfer and the wait
// for a decode slot count in TPOT; goodput = requests meeting both SLOs per
// second.

#include <cstdint>
#include <string>
#include <vector>

#include "core/estimate/serving_sim.h"

namespace orrery::engine {

// KV-cache bytes of `tokens` prompt tokens, whole model: layers x 2 (K and
// V) x kv_heads x head_dim x tokens x bytes per element (models::
// KvBytesPerToken; MLA models cache their latent instead); a local layer's
// only its window or chunk (models::KvHeldTokens).
double KvTransferBytes(const models::ModelSpec& m, hardware::DataType kv, int64_t tokens);

// The network link a KV transfer crosses.
struct KvLink {
  int tier = -1;                 // index into system.network; -1 = none (one device)
  std::string name;              // the tier's name
  double bandwidth = 0;          // bytes/s per device per direction (the tier's)
  double latency = 0;            // seconds, once per transfer
  hardware::Curve efficiency;    // achieved fraction of `bandwidth` by bytes per device
};

// The innermost tier whose domain (0 = every device) holds `devices` devices,
// or tier `forced` when >= 0. kv_link.tier = -1 when the system has no tiers.
KvLink ChooseKvLink(const hardware::SystemSpec& system, int64_t devices, int64_t forced);

// Seconds to send `bytes` over `link` split over `streams` device pairs (each
// prefill device sends its shard to its decode peer at the tier's per-device
// bandwidth): latency + b / (bandwidth x efficiency(b)), b = bytes / streams.
// Alpha-beta model (Hockney 1994) with the tier's measured efficiency at the
// message size, as the collectives in hardware/network.h.
double KvTransferSeconds(double bytes, const KvLink& link, int64_t streams);

// One pool's replica shape.
struct PoolShape {
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t replicas = 1;
  int64_t devices() const { return tp * pp * replicas; }
};

// The pools of a disaggregated deployment, from d.prefill_* and d.decode_*
// (0 = the deployment's own tp / pp).
PoolShape PrefillPool(const parallelism::InferenceDeployment& d);
PoolShape DecodePool(const parallelism::InferenceDeployment& d);

struct DisaggResult {
  bool feasible = true;
  std::string reason;
  ServingResult serving;          // end-to-end outcomes and metrics, as SimulateServing's
  PoolShape prefill, decode;
  KvLink link;
  double kv_bytes_mean = 0;       // per request
  double transfer_s_mean = 0;     // on the link, excluding the wait for it
  double transfer_wait_s_mean = 0;// waiting for the prefill replica's link
  double decode_wait_s_mean = 0;  // KV arrived, waiting for a decode slot
  int64_t devices = 0;            // both pools
};

// The requests through prefill pool, KV transfer and decode pool (above).
DisaggResult SimulateDisaggregated(const InferenceEstimator& est,
                                   const parallelism::InferenceDeployment& d,
                                   const std::vector<Request>& requests);

// One candidate of the split search.
struct SplitCandidate {
  bool disaggregated = false;
  PoolShape prefill;              // colocated: the replicas
  PoolShape decode;               // colocated: unused
  bool feasible = false;
  std::string reason;
  double slo_attainment = 0;
  double goodput_requests_per_s = 0;
  double ttft_p90_s = 0, tpot_p90_s = 0;
  int64_t devices = 0;
};

// The best way to serve `d` at Poisson rate d.rate on `gpus` devices:
// every disaggregated split (prefill tp and replicas, decode tp and
// replicas; pp = d.pp in both; tp over the divisors the model allows,
// powers of two up to a node) and every colocated tp with as many replicas
// as fit, each simulated on the same requests. Ranking (DistServe Sec. 3's
// objective, the most goodput per GPU, at a given rate: the fewest GPUs that
// meet the SLO): layouts meeting it (attainment >= d.slo_attainment) first,
// fewest devices first among them; then the rest by attainment; ties go to
// higher attainment, then the lower p90 TTFT. Colocated layouts are
// tried with 1 .. gpus / (tp x pp) replicas, disaggregated ones with every
// prefill and decode replica count that fits. Colocated wins ties with
// disaggregation (one pool is simpler to run).
struct SplitSearch {
  bool found = false;
  std::string reason;
  std::vector<SplitCandidate> candidates;  // ranked best first
  int best_disaggregated = -1;             // index into candidates, -1 = none feasible
  int best_colocated = -1;
  bool prefers_disaggregation = false;
  int64_t gpus = 0;
};
SplitSearch BestSplit(const InferenceEstimator& est, const parallelism::InferenceDeployment& d,
                      int64_t gpus);

}  // namespace orrery::engine
