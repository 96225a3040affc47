#include "core/api/infer.h"

#include <utility>

#include "models/kv_cache.h"
#include "models/transformer.h"

namespace orrery {

const char* InferModeName(InferMode m) {
  switch (m) {
    case InferMode::kStatic: return "static";
    case InferMode::kServe: return "serve";
    case InferMode::kMaxRate: return "max_rate";
    case InferMode::kSplit: return "split";
  }
  return "?";
}

const char* SchedulerName(parallelism::Scheduler s) {
  switch (s) {
    case parallelism::Scheduler::kStatic: return "static";
    case parallelism::Scheduler::kContinuous: return "continuous";
    case parallelism::Scheduler::kChunked: return "chunked";
  }
  return "?";
}

InferResult Infer(const InferRequest& req, const Control& control) {
  InferResult r;
  r.mode = req.mode;
  auto scenario = ResolveScenario(req.scenario, r.diagnostics);
  if (scenario) {
    const engine::PresetStore store(req.scenario.config_dir.empty() ? ConfigDir()
                                                                    : req.scenario.config_dir);
    engine::LoadDraftModel(*scenario, store, r.diagnostics);
  }
  if (scenario && r.diagnostics.ok() && !scenario->inference)
    r.diagnostics.Add({scenario->file, 0, 0}, "scenario.inference", "",
                      "the scenario has no inference section (add `inference:` or --set inference.tp=1)");
  if (scenario && r.diagnostics.ok()) engine::CrossCheck(*scenario, r.diagnostics);
  if (scenario && r.diagnostics.ok())
    hardware::RefusePools(scenario->system, "orrery infer", {scenario->file, 0, 0}, r.diagnostics);
  if (!scenario || !r.diagnostics.ok()) {
    r.status = Status::kInvalidInput;
    return r;
  }
  r.scenario = std::move(*scenario);
  const engine::Scenario& s = r.scenario;
  const auto& d = *s.inference;
  r.parameters = models::ParameterCount(s.model, d.input + d.output);
  const engine::InferenceEstimator est(s.model, s.system, s.draft_model ? &*s.draft_model : nullptr);

  if (req.mode == InferMode::kStatic) {
    r.estimate = est.Run(d);
    r.kv_bytes_per_token = models::KvBytesPerToken(s.model, hardware::BytesPer(d.kv_cache));
    r.kv_bytes_per_token_per_device = est.KvBytesPerTokenPerDevice(d);
    r.kv_capacity_tokens = est.KvCapacityTokens(d, static_cast<double>(d.max_batch_tokens));
    r.has_result = true;
    if (!r.estimate.feasible()) {
      r.status = Status::kInfeasible;
      r.reason = engine::ExplainInfeasible(r.estimate, s);
    }
    return r;
  }
  if (const auto shape = engine::CheckShape(s.model, s.system, d);
      shape != engine::InferenceInfeasible::kNone) {
    engine::InferenceEstimate e;
    e.infeasible = shape;
    r.status = Status::kInfeasible;
    r.reason = "inference: " + engine::ExplainInfeasible(e, s);
    return r;
  }
  if (control.Cancelled()) {
    r.status = Status::kCancelled;
    r.reason = "cancelled before the simulation started";
    return r;
  }
  if ((req.mode == InferMode::kSplit || d.disaggregate) && d.speculate > 0) {
    r.status = Status::kInfeasible;
    r.reason = "disaggregated serving does not model speculative decoding (inference.speculate "
               "must be 0)";
    return r;
  }
  if (req.mode == InferMode::kMaxRate && d.disaggregate) {
    r.status = Status::kInfeasible;
    r.reason = "--max-rate searches colocated serving; for disaggregated layouts use "
               "--best-split (at a rate) or --serve with inference.disaggregate";
    return r;
  }
  if (req.mode == InferMode::kSplit) {
    r.split = engine::BestSplit(est, d, hardware::DeviceCount(s.system));
    r.has_result = true;
    if (!r.split.found) {
      r.status = Status::kInfeasible;
      r.reason = r.split.reason;
    }
    return r;
  }
  if (req.mode == InferMode::kServe) {
    std::vector<engine::Request> reqs;
    if (d.arrivals == parallelism::Arrivals::kTrace) {
      auto t = engine::LoadTrace(d.trace, r.diagnostics);
      if (!t) {
        r.status = Status::kInvalidInput;
        return r;
      }
      reqs = std::move(*t);
      r.arrivals = "trace " + d.trace;
    } else {
      reqs = engine::PoissonRequests(d, d.rate);
      r.arrivals = "poisson";
    }
    if (d.disaggregate) {
      r.disaggregated = true;
      r.disagg = engine::SimulateDisaggregated(est, d, reqs);
      r.serving = r.disagg.serving;
      r.serving.feasible = r.disagg.feasible;
      r.serving.reason = r.disagg.reason;
    } else {
      r.serving = engine::SimulateService(est, d, std::move(reqs));
    }
    r.has_result = true;
    if (!r.serving.feasible) {
      r.status = Status::kInfeasible;
      r.reason = r.serving.reason;
    }
    return r;
  }
  r.max_rate = engine::MaxRateMeetingSlo(est, d);
  r.has_result = true;
  if (!r.max_rate.found) {
    r.status = Status::kInfeasible;
    r.reason = r.max_rate.reason;
  }
  return r;
}

}  // namespace orrery
