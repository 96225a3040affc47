#pragma once
// orrery::Infer: serving a scenario's model as its `inference:` section
// deploys it — a static batch (TTFT, TPOT, throughput, memory), a simulated
// request stream through the scheduler, or the highest request rate that
// meets the SLO (core/estimate/inference_estimator.h, serving_sim.h).
//
//   orrery::InferRequest req;
//   req.scenario = orrery::ScenarioInput::File("llama2-70b-h100-infer", {"inference.batch=8"});
//   orrery::InferResult r = orrery::Infer(req);
//   double ttft_s = r.estimate.ttft_s;

#include <string>

#include "core/api/common.h"
#include "core/estimate/disagg_serving.h"
#include "core/estimate/inference_estimator.h"
#include "core/estimate/serving_sim.h"

namespace orrery {

enum class InferMode {
  kStatic,   // one static batch
  kServe,    // a request stream (Poisson at inference.rate, or a CSV trace)
  kMaxRate,  // the highest Poisson rate meeting the SLO on every seed (serving_sim.h)
  kSplit,    // the best disaggregated or colocated use of the system's devices at `rate`
             // (disagg_serving.h, BestSplit)
};
const char* InferModeName(InferMode m);

struct InferRequest {
  ScenarioInput scenario;
  InferMode mode = InferMode::kStatic;
};

struct InferResult : ResultBase {
  engine::Scenario scenario;               // as loaded and overridden (inference is set)
  InferMode mode = InferMode::kStatic;
  bool has_result = false;                 // false when the input was invalid
  double parameters = 0;                   // the model's parameter count
  // kStatic:
  engine::InferenceEstimate estimate;
  double kv_bytes_per_token = 0;           // whole model, at the KV datatype
  double kv_bytes_per_token_per_device = 0;
  // KV-cache tokens one replica holds beside the weights and the activations
  // of a pass of max_batch_tokens tokens (the serving simulator's block pool).
  double kv_capacity_tokens = 0;
  // kServe:
  std::string arrivals;                    // "poisson" or "trace FILE"
  engine::ServingResult serving;
  // kServe with inference.disaggregate: the pools and the KV transfer
  // (`serving` above holds the end-to-end outcomes as well).
  bool disaggregated = false;
  engine::DisaggResult disagg;
  // kSplit:
  engine::SplitSearch split;
  // kMaxRate:
  engine::RateSearch max_rate;
};

// Status: kOk; kInfeasible with the reason when the deployment does not fit
// or cannot split the model, the stream cannot be served, or no rate meets
// the SLO; kInvalidInput with located diagnostics. The serving modes poll
// `control.cancel` only before they start.
InferResult Infer(const InferRequest& req, const Control& control = {});

const char* SchedulerName(parallelism::Scheduler s);

}  // namespace orrery
