#include "core/api/json.h"

#include <cmath>
#include <map>
#include <string>

#include "core/api/bench.h"
#include "core/api/config.h"
#include "core/api/estimate.h"
#include "core/api/infer.h"
#include "core/api/search.h"
#include "core/api/sweep.h"
#include "core/base/quantity.h"
#include "core/goodput/goodput.h"
#include "hardware/system_spec.h"

namespace orrery {

namespace {

struct Part {
  const char* key;
  double engine::TimeBreakdown::*field;
};

constexpr Part kParts[] = {
    {"forward_s", &engine::TimeBreakdown::forward},
    {"backward_s", &engine::TimeBreakdown::backward},
    {"recompute_s", &engine::TimeBreakdown::recompute},
    {"tp_comm_s", &engine::TimeBreakdown::tp_comm},
    {"cp_comm_s", &engine::TimeBreakdown::cp_comm},
    {"ep_comm_s", &engine::TimeBreakdown::ep_comm},
    {"pp_bubble_s", &engine::TimeBreakdown::pp_bubble},
    {"pp_p2p_s", &engine::TimeBreakdown::pp_p2p},
    {"dp_comm_s", &engine::TimeBreakdown::dp_comm},
    {"optimizer_s", &engine::TimeBreakdown::optimizer},
    {"offload_s", &engine::TimeBreakdown::offload},
};

struct MemPart {
  const char* key;
  double parallelism::MemoryBreakdown::*field;
};

constexpr MemPart kMemParts[] = {
    {"weights_bytes", &parallelism::MemoryBreakdown::weights},
    {"gradients_bytes", &parallelism::MemoryBreakdown::gradients},
    {"optimizer_bytes", &parallelism::MemoryBreakdown::optimizer},
    {"activations_bytes", &parallelism::MemoryBreakdown::activations},
    {"temporary_bytes", &parallelism::MemoryBreakdown::temporary},
};

std::string CsvCell(const Json& v) {
  if (v.is_null()) return "";
  // A whole number stored as a double (a sweep axis of node counts, a
  // capacity in bytes) reads as one: 64, not 64.0.
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15)
      return std::to_string(static_cast<long long>(d));
  }
  std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    quoted.push_back(c);
    if (c == '"') quoted.push_back('"');
  }
  quoted.push_back('"');
  return quoted;
}

Json EventJson(const engine::EventEstimate& e) {
  const auto& r = e.step;
  Json ev;
  ev["schedule"] = parallelism::PipelineScheduleName(e.schedule);
  ev["closed_form_iteration_s"] = e.closed_form.iteration_s;
  ev["bubble_fraction"] = r.bubble_fraction;
  ev["critical_stage"] = r.critical_stage;
  ev["tasks"] = r.tasks;
  ev["events"] = r.events;
  ev["simulate_s"] = e.simulate_s;
  Json stages = Json::array();
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const auto& st = r.stages[i];
    stages.push_back({{"stage", i},
                      {"layers", i < e.stage_layers.size() ? e.stage_layers[i] : 0.0},
                      {"busy_s", st.busy},
                      {"idle_s", st.idle},
                      {"bubble_fraction", r.iteration > 0 ? st.wait_bubble / r.iteration : 0.0},
                      {"wait_tp_s", st.wait_tp},
                      {"wait_p2p_s", st.wait_p2p},
                      {"wait_dp_s", st.wait_dp},
                      {"peak_in_flight", st.peak_in_flight},
                      {"peak_activation_bytes", st.peak_activation_bytes}});
  }
  ev["stages"] = stages;
  return ev;
}

}  // namespace

Json DocumentHead(std::string_view kind, const ResultBase& r) {
  Json j;
  j["schema_version"] = kSchemaVersion;
  j["kind"] = std::string(kind);
  j["status"] = StatusName(r.status);
  return j;
}

Json DiagnosticsJson(const base::Diagnostics& d) {
  Json a = Json::array();
  for (const base::Diagnostic& x : d.items())
    a.push_back({{"file", x.where.file},
                 {"line", x.where.line},
                 {"column", x.where.column},
                 {"path", x.path},
                 {"value", x.value},
                 {"message", x.message},
                 {"hint", x.hint}});
  return a;
}

Json TrainingEstimateJson(const engine::Scenario& s, const engine::TrainingEstimate& e) {
  Json j;
  j["iteration_s"] = e.iteration_s;
  Json parts;
  for (const Part& p : kParts) parts[p.key] = e.time.*(p.field);
  j["time"] = parts;
  Json mem;
  for (const MemPart& p : kMemParts) mem[p.key] = e.memory.*(p.field);
  mem["total_bytes"] = e.memory.total();
  mem["capacity_bytes"] = e.memory_capacity;
  // Optimizer states (training.offload_optimizer) and activations
  // (training.offload_activation_layers) kept in host memory: not on the
  // device, so not in total_bytes.
  mem["host_optimizer_bytes"] = e.memory.host_optimizer;
  mem["host_activations_bytes"] = e.memory.host_activations;
  j["memory_per_device"] = mem;
  j["model_flops_per_iteration"] = e.model_flops;
  j["hardware_flops_per_iteration"] = e.hardware_flops;
  j["mfu"] = e.mfu;
  j["hfu"] = e.hfu;
  j["mfu_causal"] = e.mfu_causal;
  j["model_flops_per_s_per_device"] = e.tflops_per_device;
  j["tokens_per_s"] = e.tokens_per_s;
  j["energy_per_iteration_j"] = e.energy_j;
  const double tokens = static_cast<double>(s.workload.global_batch * s.workload.seq_len);
  j["energy_per_token_j"] = tokens > 0 ? Json(e.energy_j / tokens) : Json();
  j["cost_per_iteration_usd"] = e.cost_usd;
  if (s.workload.train_tokens > 0) {
    j["train"] = {{"tokens", s.workload.train_tokens},
                  {"time_s", e.train_time_s},
                  {"device_hours", e.train_device_hours},
                  {"energy_j", e.train_energy_j},
                  {"cost_usd", e.train_cost_usd}};
  }
  return j;
}

namespace {
// Infinite (nothing fails) or unknown (0 where 0 cannot hold) figures are null.
Json FiniteOrNull(double v) { return std::isfinite(v) ? Json(v) : Json(); }
}  // namespace

Json GoodputJson(const goodput::Result& g, const goodput::MonteCarlo* mc) {
  const goodput::Inputs& in = g.in;
  Json j;
  j["goodput"] = g.goodput;
  j["failure_goodput"] = g.failure_goodput;
  j["straggler_factor"] = in.straggler_factor;
  j["mtbf_s"] = FiniteOrNull(in.mtbf_s);
  j["checkpoint_bytes"] = in.checkpoint_bytes;
  j["async_checkpoint"] = in.async;
  j["checkpoint_write_s"] = in.write_s;
  j["checkpoint_stall_s"] = in.stall_s;
  j["checkpoint_read_s"] = in.read_s;
  j["restart_s"] = in.restart_s;
  j["checkpoint_interval_s"] = g.interval_s > 0 ? Json(g.interval_s) : Json();
  j["checkpoint_interval_steps"] =
      g.interval_s > 0 && in.step_s > 0 ? Json(g.interval_s / in.step_s) : Json();
  j["young_interval_s"] = g.young_interval_s > 0 ? Json(g.young_interval_s) : Json();
  j["daly_interval_s"] = g.daly_interval_s > 0 ? Json(g.daly_interval_s) : Json();
  j["ideal_time_s"] = in.work_s > 0 ? Json(in.work_s) : Json();
  j["effective_time_s"] = in.work_s > 0 ? FiniteOrNull(g.effective_s) : Json();
  j["expected_failures"] = in.work_s > 0 ? FiniteOrNull(g.expected_failures) : Json();
  j["effective_energy_j"] =
      in.work_s > 0 && in.busy_power_w > 0 ? FiniteOrNull(g.effective_energy_j) : Json();
  j["carbon_kg"] = in.work_s > 0 && in.carbon_kg_per_j > 0 ? FiniteOrNull(g.carbon_kg) : Json();
  if (mc != nullptr && !mc->skipped.empty())
    j["monte_carlo"] = {{"runs", 0}, {"skipped", mc->skipped}};
  if (mc != nullptr && mc->runs > 0)
    j["monte_carlo"] = {{"runs", mc->runs},       {"seed", mc->seed},
                        {"mean_s", mc->mean_s},   {"p50_s", mc->p50_s},
                        {"p90_s", mc->p90_s},     {"min_s", mc->min_s},
                        {"max_s", mc->max_s},     {"mean_failures", mc->mean_failures}};
  return j;
}

namespace {

Json OperatorGroupJson(const engine::OperatorGroup& g) {
  Json ops = Json::array();
  for (const engine::OperatorLine& l : g.ops)
    ops.push_back({{"name", l.name},
                   {"kind", l.kind},
                   {"fwd_s", l.fwd_s},
                   {"bwd_s", l.bwd_s},
                   {"fwd_flops", l.fwd_flops},
                   {"bwd_flops", l.bwd_flops},
                   {"fwd_bytes", l.fwd_bytes},
                   {"bwd_bytes", l.bwd_bytes},
                   {"fwd_peak_fraction", l.fwd_fraction},
                   {"bwd_peak_fraction", l.bwd_fraction},
                   {"fwd_bound", engine::OpBoundName(l.fwd_bound)},
                   {"bwd_bound", engine::OpBoundName(l.bwd_bound)},
                   {"fp8_cast_fwd_s", l.fp8_cast_fwd_s},
                   {"fp8_cast_bwd_s", l.fp8_cast_bwd_s},
                   {"bias_grad_bwd_s", l.bias_grad_bwd_s}});
  return {{"fwd_s", g.fwd_s}, {"bwd_s", g.bwd_s}, {"ops", ops}};
}

Json OperatorBreakdownJson(const engine::OperatorBreakdown& b) {
  Json j;
  j["peak_flops_per_s"] = b.peak_flops;
  j["memory_bandwidth_bytes_per_s"] = b.memory_bandwidth;
  j["microbatches"] = b.microbatches;
  j["stage_layers"] = b.layers;
  j["stage_moe_layers"] = b.moe_layers;
  j["layer"] = OperatorGroupJson(b.dense);
  j["moe_layer"] = b.moe.ops.empty() ? Json() : OperatorGroupJson(b.moe);
  j["head"] = OperatorGroupJson(b.head);
  j["embedding"] = OperatorGroupJson(b.embed);
  j["optimizer_s"] = b.optimizer_s;
  Json comm = Json::array();
  for (const engine::CommLine& c : b.comm)
    comm.push_back({{"name", c.name},
                    {"traffic_s", c.traffic_s >= 0 ? Json(c.traffic_s) : Json()},
                    {"exposed_s", c.exposed_s},
                    {"hidden_s", c.traffic_s >= 0 ? Json(c.traffic_s - c.exposed_s) : Json()}});
  j["comm"] = comm;
  return j;
}

}  // namespace

Json ToJson(const EstimateResult& r) {
  Json j = DocumentHead("estimate", r);
  if (!r.has_estimate) {
    j["diagnostics"] = DiagnosticsJson(r.diagnostics);
    return j;
  }
  if (r.hetero) {
    j["scenario"] = r.scenario.name;
    j["model"] = r.scenario.model.name;
    j["hetero"] = HeteroJson(*r.hetero);
    return j;
  }
  const engine::Scenario& s = r.scenario;
  const engine::TrainingEstimate& e = r.estimate;
  j["engine"] = EstimateEngineName(r.engine);
  j["scenario"] = s.name;
  j["model"] = s.model.name;
  if (!s.model.unread_keys.empty()) j["model_unread_keys"] = s.model.unread_keys;
  j["system"] = s.system.name;
  j["devices"] = hardware::DeviceCount(s.system);
  j["feasible"] = e.feasible();
  j["reason"] = e.feasible() ? Json() : Json(engine::ExplainInfeasible(e, s));
  j["plan"] = {{"tp", s.training.tp}, {"pp", s.training.pp}, {"dp", e.dp}, {"cp", s.training.cp},
               {"ep", s.training.ep}, {"etp", parallelism::ExpertTensorParallel(s.training)},
               {"micro_batch", s.training.micro_batch},
               {"microbatches", e.microbatches}, {"interleave", s.training.interleave},
               {"recompute", parallelism::RecomputeName(s.training.recompute)},
               {"recompute_interval", s.training.recompute_interval}};
  if (e.infeasible != engine::Infeasible::kNone && e.iteration_s == 0) return j;
  j.update(TrainingEstimateJson(s, e));
  if (r.goodput) j["goodput"] = GoodputJson(*r.goodput, r.goodput_mc ? &*r.goodput_mc : nullptr);
  if (r.event && r.event->simulated()) j["event"] = EventJson(*r.event);
  if (!r.notes.empty()) j["notes"] = r.notes;
  if (r.ops) j["ops"] = OperatorBreakdownJson(*r.ops);
  return j;
}

namespace {

Json PassJson(const engine::PassTime& p) {
  return {{"total_s", p.total},         {"gemm_s", p.gemm},
          {"attention_s", p.attention}, {"elementwise_s", p.elementwise},
          {"tp_comm_s", p.tp_comm},     {"pp_comm_s", p.pp_comm},
          {"offload_s", p.offload},     {"flops", p.flops},
          {"weight_bytes", p.weight_bytes}, {"kv_bytes", p.kv_bytes}};
}

Json PercentilesJson(const engine::Percentiles& p) {
  return {{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"max", p.max}};
}

Json ServingJson(const engine::ServingResult& r) {
  Json j;
  j["feasible"] = r.feasible;
  j["reason"] = r.feasible ? Json() : Json(r.reason);
  j["requests"] = r.requests.size();
  j["ttft_s"] = PercentilesJson(r.ttft_s);
  j["tpot_s"] = PercentilesJson(r.tpot_s);
  j["e2e_s"] = PercentilesJson(r.e2e_s);
  j["duration_s"] = r.duration_s;
  j["output_tokens_per_s"] = r.output_tokens_per_s;
  j["requests_per_s"] = r.requests_per_s;
  j["goodput_requests_per_s"] = r.goodput_requests_per_s;
  j["slo_attainment"] = r.slo_attainment;
  j["preemptions"] = r.preemptions;
  j["iterations"] = r.iterations;
  j["peak_running"] = r.peak_running;
  j["kv_capacity_tokens"] = r.kv_capacity_tokens;
  return j;
}

}  // namespace

Json ToJson(const InferResult& r) {
  Json j = DocumentHead("infer", r);
  j["mode"] = InferModeName(r.mode);
  if (!r.scenario.inference) {
    j["diagnostics"] = DiagnosticsJson(r.diagnostics);
    return j;
  }
  const engine::Scenario& s = r.scenario;
  const auto& d = *s.inference;
  j["scenario"] = s.name;
  j["model"] = s.model.name;
  if (!s.model.unread_keys.empty()) j["model_unread_keys"] = s.model.unread_keys;
  j["system"] = s.system.name;
  j["device"] = s.system.device.name;
  j["replica_devices"] = d.tp * d.pp;
  j["replicas"] = hardware::DeviceCount(s.system) / std::max<int64_t>(1, d.tp * d.pp);
  j["deployment"] = {{"tp", d.tp},
                     {"pp", d.pp},
                     {"ep", d.ep},
                     {"weights", hardware::DataTypeName(d.weights)},
                     {"activations", hardware::DataTypeName(d.activations)},
                     {"kv_cache", hardware::DataTypeName(d.kv_cache)},
                     {"offload_weights", d.offload_weights},
                     {"offload_kv", d.offload_kv}};
  if (r.mode == InferMode::kStatic) {
    const engine::InferenceEstimate& e = r.estimate;
    j["workload"] = {{"batch", d.batch}, {"input", d.input}, {"output", d.output}};
    j["feasible"] = e.feasible();
    j["reason"] = e.feasible() ? Json() : Json(r.reason);
    if (e.e2e_s <= 0) return j;
    j["ttft_s"] = e.ttft_s;
    j["tpot_s"] = e.tpot_s;
    j["e2e_s"] = e.e2e_s;
    j["output_tokens_per_s"] = e.output_tokens_per_s;
    j["output_tokens_per_s_per_device"] = e.output_tokens_per_s_per_device;
    j["total_tokens_per_s"] = e.total_tokens_per_s;
    j["energy_per_output_token_j"] = e.energy_per_token_j;
    if (d.speculate > 0)
      j["speculative"] = {{"k", d.speculate},
                          {"acceptance", d.acceptance},
                          {"draft_model", d.draft_model},
                          {"tokens_per_step", e.tokens_per_step}};
    j["prefill"] = PassJson(e.prefill);
    j["decode_step"] = PassJson(e.decode);
    j["memory_per_device"] = {{"weights_bytes", e.memory.weights},
                              {"kv_cache_bytes", e.memory.kv_cache},
                              {"activations_bytes", e.memory.activations},
                              {"draft_bytes", e.memory.draft},
                              {"total_bytes", e.memory.total()},
                              {"usable_bytes", e.memory_usable},
                              {"capacity_bytes", e.memory_capacity}};
    j["kv_bytes_per_token"] = r.kv_bytes_per_token;
    j["kv_bytes_per_token_per_device"] = r.kv_bytes_per_token_per_device;
    j["max_batch"] = e.max_batch;
    j["max_context"] = e.max_context;
    return j;
  }
  j["scheduler"] = SchedulerName(d.scheduler);
  j["slo"] = {{"ttft_s", d.slo_ttft}, {"tpot_s", d.slo_tpot}, {"attainment", d.slo_attainment}};
  if (!r.has_result) {
    j["reason"] = r.reason;
    return j;
  }
  if (r.mode == InferMode::kServe) {
    j["arrivals"] = r.arrivals;
    if (d.arrivals != parallelism::Arrivals::kTrace) j["rate_requests_per_s"] = d.rate;
    j["result"] = ServingJson(r.serving);
    if (r.disaggregated) {
      const engine::DisaggResult& g = r.disagg;
      j["disaggregated"] = {
          {"prefill", {{"tp", g.prefill.tp}, {"pp", g.prefill.pp}, {"replicas", g.prefill.replicas}}},
          {"decode", {{"tp", g.decode.tp}, {"pp", g.decode.pp}, {"replicas", g.decode.replicas}}},
          {"devices", g.devices},
          {"kv_tier", g.link.name},
          {"kv_bytes_per_request", g.kv_bytes_mean},
          {"kv_transfer_s", g.transfer_s_mean},
          {"kv_link_wait_s", g.transfer_wait_s_mean},
          {"decode_wait_s", g.decode_wait_s_mean}};
    }
    return j;
  }
  if (r.mode == InferMode::kSplit) {
    j["rate_requests_per_s"] = d.rate;
    j["gpus"] = r.split.gpus;
    j["prefers_disaggregation"] = r.split.prefers_disaggregation;
    Json rows = Json::array();
    for (const engine::SplitCandidate& c : r.split.candidates)
      rows.push_back({{"disaggregated", c.disaggregated},
                      {"prefill", {{"tp", c.prefill.tp}, {"pp", c.prefill.pp}, {"replicas", c.prefill.replicas}}},
                      {"decode", {{"tp", c.decode.tp}, {"pp", c.decode.pp}, {"replicas", c.decode.replicas}}},
                      {"devices", c.devices},
                      {"feasible", c.feasible},
                      {"reason", c.feasible ? Json() : Json(c.reason)},
                      {"slo_attainment", c.slo_attainment},
                      {"goodput_requests_per_s", c.goodput_requests_per_s},
                      {"ttft_p90_s", c.ttft_p90_s},
                      {"tpot_p90_s", c.tpot_p90_s}});
    j["candidates"] = rows;
    return j;
  }
  const engine::RateSearch& m = r.max_rate;
  j["found"] = m.found;
  j["reason"] = m.found ? Json() : Json(m.reason);
  j["max_rate_requests_per_s"] = m.max_rate;
  j["seeds"] = {{"first", d.seed}, {"count", d.rate_seeds}};
  j["seed_rates_requests_per_s"] = m.seed_rates;
  j["mean_rate_requests_per_s"] = m.mean_rate;
  j["ci95_requests_per_s"] = {m.ci_low, m.ci_high};
  j["simulations"] = m.simulations;
  if (m.found) j["at_max_rate"] = ServingJson(m.at_max);
  return j;
}

Json ToJson(const SearchResult& r) {
  Json doc = DocumentHead("search", r);
  if (r.status == Status::kInvalidInput || r.status == Status::kUsage) {
    doc["reason"] = r.reason;
    doc["diagnostics"] = DiagnosticsJson(r.diagnostics);
    return doc;
  }
  if (r.hetero) {
    doc["scenario"] = r.scenario.name;
    doc["objective"] = engine::ObjectiveName(r.objective);
    doc["hetero"] = HeteroSearchJson(*r.hetero);
    return doc;
  }
  const engine::Scenario& s = r.scenario;
  const engine::SearchStats& st = r.stats;
  doc["scenario"] = s.name;
  doc["model"] = s.model.name;
  doc["device"] = s.system.device.name;
  doc["objective"] = engine::ObjectiveName(r.objective);
  doc["stats"] = {{"candidates", st.candidates},
                  {"pruned", st.pruned_divisibility + st.pruned_schedule + st.pruned_memory + st.pruned_time},
                  {"pruned_divisibility", st.pruned_divisibility},
                  {"pruned_schedule", st.pruned_schedule},
                  {"pruned_memory", st.pruned_memory},
                  {"pruned_time_bound", st.pruned_time},
                  {"evaluated", st.evaluated},
                  {"probes", st.probes},
                  {"out_of_memory", st.out_of_memory},
                  {"refused", st.refused},
                  {"feasible", st.feasible},
                  {"shapes", st.shapes},
                  {"threads", st.threads},
                  {"ranks", r.ranks},
                  {"wall_s", st.wall_s}};
  if (r.status != Status::kOk) doc["reason"] = r.reason;
  Json plans = Json::array();
  for (size_t i = 0; i < r.top.size(); ++i) {
    const engine::SearchCandidate& c = r.top[i].candidate;
    const engine::Scenario& one = r.top[i].scenario;
    const engine::PlanKnobs& k = c.knobs;
    Json j;
    j["rank"] = i + 1;
    j["score"] = ShownScore(r.objective, c.score);
    j["score_unit"] = ScoreUnit(r.objective);
    j["global_batch"] = k.global_batch;
    j["plan"] = {{"tp", k.tp}, {"pp", k.pp}, {"cp", k.cp}, {"ep", k.ep},
                 {"etp", k.etp > 0 ? k.etp : k.tp}, {"dp", k.dp},
                 {"micro_batch", k.micro_batch}, {"interleave", k.interleave},
                 {"recompute", parallelism::RecomputeName(k.recompute)},
                 {"sequence_parallel", k.sequence_parallel}, {"zero", k.zero},
                 {"dp_overlap", k.dp_overlap}, {"tp_comm_overlap", k.tp_comm_overlap},
                 {"offload_optimizer", k.offload}, {"group_order", k.group_order.data()},
                 {"schedule", parallelism::ScheduleName(one.training.schedule)}};
    Json est;
    est["system"] = one.system.name;
    est["devices"] = hardware::DeviceCount(one.system);
    est["feasible"] = c.estimate.feasible();
    est["reason"] = c.estimate.feasible() ? Json() : Json(engine::ExplainInfeasible(c.estimate, one));
    est.update(TrainingEstimateJson(one, c.estimate));
    j["closed_form_iteration_s"] = c.closed_form_s;
    j["event_checked"] = c.event_checked;
    j["estimate"] = est;
    j["goodput"] = GoodputJson(r.top[i].goodput);
    plans.push_back(j);
  }
  doc["top"] = plans;
  Json dis = Json::array();
  for (const auto& d : r.disagreements)
    dis.push_back({{"plan", engine::DescribeKnobs(d.knobs)}, {"closed_form_iteration_s", d.closed_form_s},
                   {"event_iteration_s", d.event_s}, {"event_rejected", !d.why.empty()}, {"why", d.why}});
  doc["event_disagreements"] = dis;
  doc["event_rejected"] = r.event_rejected;
  if (!r.why_first.empty()) doc["why_first"] = r.why_first;
  if (!r.notes_first.empty()) doc["notes_first"] = r.notes_first;
  return doc;
}

Json ToJson(const SweepResult& r) {
  Json j = DocumentHead("sweep", r);
  if (r.spec.name.empty()) {
    j["reason"] = r.reason;
    j["diagnostics"] = DiagnosticsJson(r.diagnostics);
    return j;
  }
  const engine::SweepRunStats& st = r.stats;
  j["sweep"] = r.spec.name;
  j["hash"] = engine::HashHex(r.spec.hash);
  j["each"] = r.spec.each == engine::SweepEach::kSearch ? "search" : "estimate";
  j["points"] = st.points;
  j["skipped"] = st.skipped;
  j["evaluated"] = st.evaluated;
  j["ok"] = st.ok;
  j["infeasible"] = st.infeasible;
  j["invalid"] = st.invalid;
  j["wall_s"] = st.wall_s;
  j["ranks"] = r.ranks;
  j["db"] = r.db;
  if (r.status != Status::kOk) j["reason"] = r.reason;
  return j;
}

Json ToJson(const DbListResult& r) {
  Json j = DocumentHead("db_list", r);
  j["db"] = r.db;
  if (r.status != Status::kOk) j["reason"] = r.reason;
  Json list = Json::array();
  for (const engine::SweepRecord& s : r.sweeps)
    list.push_back({{"hash", engine::HashHex(s.hash)}, {"name", s.name}, {"each", s.each},
                    {"objective", s.objective}, {"points", s.points}, {"spec_file", s.spec_file}});
  j["sweeps"] = list;
  return j;
}

Json ToJson(const PresetListResult& r) {
  Json j = DocumentHead("presets", r);
  if (r.status != Status::kOk) j["reason"] = r.reason;
  Json kinds = Json::array();
  for (const PresetListResult::Kind& k : r.kinds)
    kinds.push_back({{"folder", k.folder}, {"names", k.names}, {"titles", k.titles}});
  j["kinds"] = kinds;
  return j;
}

Json ToJson(const DbExportResult& r) {
  Json j = DocumentHead("db_export", r);
  j["db"] = r.db;
  if (r.status != Status::kOk) j["reason"] = r.reason;
  Json rows = Json::array();
  for (const Json& row : r.rows) rows.push_back(row);
  j["rows"] = rows;
  return j;
}

Json ToJson(const BenchResult& r) {
  Json j = DocumentHead("bench", r);
  j["engine"] = "closed";
  j["scenario"] = r.scenario;
  j["model"] = r.model;
  j["device"] = r.device;
  j["devices"] = r.devices;
  j["estimates"] = r.estimates;
  j["elapsed_s"] = r.elapsed_s;
  j["estimates_per_s"] = r.elapsed_s > 0 ? static_cast<double>(r.estimates) / r.elapsed_s : 0.0;
  j["mean_iteration_s"] = r.mean_iteration_s;
  j["prepared_estimates"] = r.prepared_estimates;
  j["prepared_elapsed_s"] = r.prepared_elapsed_s;
  j["prepared_estimates_per_s"] =
      r.prepared_elapsed_s > 0 ? static_cast<double>(r.prepared_estimates) / r.prepared_elapsed_s : 0.0;
  j["cpu_s"] = r.cpu_s;
  j["prepared_cpu_s"] = r.prepared_cpu_s;
  j["estimates_per_cpu_s"] = r.cpu_s > 0 ? static_cast<double>(r.estimates) / r.cpu_s : 0.0;
  j["prepared_estimates_per_cpu_s"] =
      r.prepared_cpu_s > 0 ? static_cast<double>(r.prepared_estimates) / r.prepared_cpu_s : 0.0;
  return j;
}

Json ToJson(const EventBenchResult& r) {
  Json j = DocumentHead("bench", r);
  j["engine"] = "event";
  j["schedule"] = r.schedule;
  j["stages"] = r.stages;
  j["microbatches"] = r.microbatches;
  j["chunks"] = r.chunks;
  j["tasks"] = r.tasks;
  j["dependencies"] = r.dependencies;
  j["events"] = r.events;
  j["build_s"] = r.build_s;
  j["simulate_s"] = r.simulate_s;
  j["analyze_s"] = r.analyze_s;
  j["wall_s"] = r.wall_s;
  j["cpu_s"] = r.cpu_s;
  j["events_per_s"] = r.simulate_s > 0 ? static_cast<double>(r.events) / r.simulate_s : 0.0;
  j["events_per_s_end_to_end"] = r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s : 0.0;
  j["simulated_iteration_s"] = r.simulated_iteration_s;
  j["bubble_fraction"] = r.bubble_fraction;
  return j;
}

namespace {

// An axis value as stored ("25 GB/s", "32", "fp8") -> SI number and unit,
// or the text when it is no quantity.
struct AxisValue {
  Json value;
  std::string unit;  // key suffix: "bytes", "bytes_per_s", "s", ...; "" for plain numbers and text
};

const char* KeySuffix(base::Dimension d) {
  switch (d) {
    case base::Dimension::kBytes: return "bytes";
    case base::Dimension::kBandwidth: return "bytes_per_s";
    case base::Dimension::kFlops: return "flop";
    case base::Dimension::kFlopRate: return "flop_per_s";
    case base::Dimension::kTime: return "s";
    case base::Dimension::kPower: return "w";
    case base::Dimension::kEnergy: return "j";
    case base::Dimension::kMoney: return "usd";
    case base::Dimension::kMoneyRate: return "usd_per_s";
    case base::Dimension::kDimensionless: return "";
  }
  return "";
}

AxisValue ReadAxisValue(const std::string& text) {
  using base::Dimension;
  for (Dimension d : {Dimension::kBytes, Dimension::kBandwidth, Dimension::kFlops,
                      Dimension::kFlopRate, Dimension::kTime, Dimension::kPower, Dimension::kEnergy,
                      Dimension::kMoney, Dimension::kMoneyRate}) {
    const base::QuantityParse q = base::ParseQuantity(text, d);
    if (q.value) return {*q.value, KeySuffix(d)};
  }
  const base::QuantityParse plain = base::ParseQuantity(text, Dimension::kDimensionless);
  if (plain.value) return {*plain.value, ""};
  return {text, ""};
}

}  // namespace

std::vector<Json> FlatExportRows(const DbExportResult& r) {
  std::vector<Json> out;
  out.reserve(r.rows.size());
  for (const Json& row : r.rows) {
    Json flat;
    flat["sweep"] = row.value("sweep", "");
    flat["point_index"] = row.value("point_index", 0);
    if (row.contains("params") && row["params"].is_object())
      for (const auto& [path, v] : row["params"].items()) {
        const AxisValue a = ReadAxisValue(v.is_string() ? v.get<std::string>() : v.dump());
        flat[a.unit.empty() ? path : path + "_" + a.unit] = a.value;
      }
    for (const char* key : {"status", "reason"}) flat[key] = row.value(key, "");
    if (row.contains("plan") && row["plan"].is_object())
      for (const auto& [k, v] : row["plan"].items()) flat["plan." + k] = v;
    for (const char* key : {"devices", "global_batch", "iteration_s", "tokens_per_s", "mfu",
                            "memory_bytes", "capacity_bytes", "cost_usd", "energy_j",
                            "train_time_s", "train_cost_usd"})
      if (row.contains(key)) flat[key] = row[key];
    if (row.contains("breakdown") && row["breakdown"].is_object())
      for (const auto& [part, values] : row["breakdown"].items())
        if (values.is_object())
          for (const auto& [k, v] : values.items()) {
            std::string name = part;
            name += '.';
            name += k;
            flat[name] = v;
          }
    out.push_back(std::move(flat));
  }
  return out;
}

void WriteCsv(const std::vector<Json>& rows, std::ostream& out) {
  std::vector<std::string> header;
  std::map<std::string, size_t> column;
  std::vector<std::vector<std::pair<size_t, std::string>>> cells(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Json flat = rows[i].flatten();
    for (auto it = flat.begin(); it != flat.end(); ++it) {
      std::string key = it.key().substr(1);  // JSON pointer "/time/forward_s"
      for (char& c : key)
        if (c == '/') c = '.';
      auto [pos, added] = column.emplace(key, header.size());
      if (added) header.push_back(key);
      cells[i].emplace_back(pos->second, CsvCell(*it));
    }
  }
  for (size_t c = 0; c < header.size(); ++c) out << (c ? "," : "") << CsvCell(Json(header[c]));
  out << "\n";
  for (const auto& row : cells) {
    std::vector<std::string> line(header.size());
    for (const auto& [c, v] : row) line[c] = v;
    for (size_t c = 0; c < line.size(); ++c) out << (c ? "," : "") << line[c];
    out << "\n";
  }
}

void WriteCsv(const Json& doc, std::ostream& out) { WriteCsv(std::vector<Json>{doc}, out); }

}  // namespace orrery
