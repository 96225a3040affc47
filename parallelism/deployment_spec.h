#pragma once
// How a model is served: the `inference:` section of a scenario. Plain data;
// every key is declared once in deployment_spec.cpp (unit, default, range,
// help), which drives YAML parsing, --set, `orrery explain` and the docs.
//
// One model replica spans tp x pp devices. MoE layers split their experts
// over ep groups inside the tensor-parallel group (ep divides tp; each
// expert's matrices are split over tp / ep devices), as TensorRT-LLM's
// moe_ep_size x moe_tp_size = tp_size layout does. Devices beyond tp x pp
// hold further replicas.

#include <cstdint>
#include <string>

#include "core/base/param.h"
#include "hardware/device_spec.h"
#include "models/model_spec.h"

namespace orrery::parallelism {

enum class OffloadTarget { kHost, kNvme };
enum class Scheduler { kStatic, kContinuous, kChunked };
enum class Arrivals { kPoisson, kTrace };
enum class LengthDistribution { kFixed, kUniform, kExponential };

struct InferenceDeployment {
  // --- parallelism -----------------------------------------------------------
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t ep = 1;
  // --- precision -------------------------------------------------------------
  hardware::DataType weights = hardware::DataType::kBf16;      // stored weights
  hardware::DataType activations = hardware::DataType::kBf16;  // GEMM inputs (the compute type)
  hardware::DataType kv_cache = hardware::DataType::kBf16;
  // Decode attention of a GQA/MQA model reads each KV head once for its
  // whole query group (true: FlashDecoding, XQA, PagedAttention v2), or once
  // per query head (false: a masked-MHA kernel with one thread block per
  // sequence and query head, TensorRT-LLM before its XQA kernel, v0.8).
  bool gqa_shared_kv = true;
  // --- offload (FlexGen-style, Sheng et al. 2023) ---------------------------
  double offload_weights = 0;  // fraction of the weights kept in the offload tier
  double offload_kv = 0;       // fraction of the KV cache kept there
  OffloadTarget offload_to = OffloadTarget::kHost;
  double nvme_bandwidth = 0;   // bytes/s per device when offloading to NVMe
  double memory_fraction = 0.9;  // device memory usable for weights, KV and activations
  // --- static workload -------------------------------------------------------
  int64_t batch = 1;
  int64_t input = 128;         // prompt tokens
  int64_t output = 128;        // generated tokens
  // --- serving ---------------------------------------------------------------
  Scheduler scheduler = Scheduler::kContinuous;
  int64_t max_batch = 256;          // running sequences at most
  int64_t max_batch_tokens = 8192;  // tokens one iteration may process (chunk budget)
  bool paged_kv = true;
  int64_t kv_block = 16;            // tokens per KV block when paged
  Arrivals arrivals = Arrivals::kPoisson;
  double rate = 1;                  // requests/s (Poisson)
  int64_t requests = 500;
  std::string trace;                // CSV of arrival_s,input,output
  LengthDistribution lengths = LengthDistribution::kFixed;
  int64_t seed = 1;
  int64_t rate_seeds = 5;            // --max-rate: arrival seeds seed, seed + 1, ... the rate must hold on
  double slo_ttft = 0;              // seconds; 0 = no bound
  double slo_tpot = 0;              // seconds; 0 = no bound
  double slo_attainment = 0.9;      // fraction of requests that must meet the SLO
  // --- speculative decoding (Leviathan et al. 2023) --------------------------
  int64_t speculate = 0;            // k draft tokens per target step; 0 = off
  double acceptance = 0.7;          // per-token acceptance rate a
  std::string draft_model;          // a model preset; empty = draft_cost
  double draft_cost = 0.05;         // draft step / target step when no draft model (Medusa-like heads)
  // --- disaggregated serving (DistServe, Zhong et al. 2024; Splitwise) ------
  bool disaggregate = false;        // --serve: prefill and decode on separate pools
  int64_t prefill_tp = 0;           // 0 = tp
  int64_t prefill_pp = 0;           // 0 = pp
  int64_t prefill_replicas = 1;
  int64_t decode_tp = 0;            // 0 = tp
  int64_t decode_pp = 0;            // 0 = pp
  int64_t decode_replicas = 1;
  int64_t kv_tier = -1;             // network tier index of the KV transfer; -1 = innermost that holds both pools
};

const base::Schema<InferenceDeployment>& InferenceDeploymentSchema();

// Checks of a deployment against the model and the device count: tp x pp
// devices available, tp divides heads and MLP, KV heads split or replicated,
// ep divides tp and the experts, pp <= layers, datatypes the device runs,
// offload settings complete. Adds diagnostics under `path`.
void CheckDeployment(const InferenceDeployment& d, const models::ModelSpec& m,
                     const hardware::DeviceSpec& device, int64_t devices, double host_bandwidth,
                     const std::string& path, const base::SourceLocation& where,
                     base::Diagnostics& diags);

// The datatype GEMMs run in: the activations' type, except that integer
// weight-only formats with 16-bit activations run at the 16-bit peak.
hardware::DataType ComputeType(const InferenceDeployment& d);

}  // namespace orrery::parallelism
