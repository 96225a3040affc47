#include "core/api/plan.h"

#include "core/api/json.h"
#include "core/base/yaml_source.h"
#include "core/estimate/scenario.h"
#include "models/transformer.h"
#include "scaling_laws/law_presets.h"

namespace orrery {

namespace {

nlohmann::ordered_json RangeJson(const engine::Range& r) { return nlohmann::ordered_json::array({r.lo, r.hi}); }

}  // namespace

PlanResult Plan(const PlanRequest& request, const Control& control) {
  PlanResult r;
  r.chain = request.chain;
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  base::Diagnostics& diags = r.diagnostics;
  const auto law = engine::LoadLaw(request.law, scaling_laws::DefaultPresetCatalogPath(), diags);
  const auto family = engine::LoadFamily(request.family, store.dir(), diags);
  hardware::SystemSpec system;
  const std::string& name = request.system;
  const bool system_file = name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml");
  if (system_file) {
    if (auto doc = base::LoadYamlFile(name, diags)) {
      if (!doc->IsMap() || !(*doc)["system"])
        diags.Add(base::LocationOf(*doc, name), "", "", "expected a top-level key 'system'");
      else
        engine::LoadSystemMap((*doc)["system"], "system", name, store, system, diags);
    }
  } else {
    engine::LoadSystemPreset(name, store, base::SourceLocation{"--system", 0, 0}, "system", system, diags);
  }
  hardware::RefusePools(system, "orrery plan", {name, 0, 0}, diags);
  if (!diags.ok() || !law || !family) {
    r.status = Status::kInvalidInput;
    return r;
  }
  r.law = *law;
  r.family = *family;
  control.Report(0, 1, "plan");
  r.plan = engine::Plan(*law, *family, system, request.chain);
  control.Report(1, 1, "plan");
  if (r.plan.point.model.heads > 0) {  // a model was built (not when the law cannot answer)
    r.kv_heads = models::KvHeads(r.plan.point.model);
    r.head_dim = models::HeadDim(r.plan.point.model);
    r.ffn = models::FfnSize(r.plan.point.model);
  }
  if (request.goodput_runs > 0 && r.plan.point.best.found)
    r.goodput_mc = goodput::Simulate(r.plan.point.goodput, request.goodput_runs, request.goodput_seed);
  if (!r.plan.error.empty()) {
    r.status = Status::kInvalidInput;
    r.reason = r.plan.error;
  } else if (!r.plan.point.infeasible.empty()) {
    r.status = Status::kInfeasible;
    r.reason = r.plan.point.infeasible;
  }
  return r;
}

std::vector<base::ParamInfo> PlanFamilyKeys() { return engine::FamilySchema().Infos(); }

std::vector<std::string> PlanFamilyNames() {
  return engine::FamilyNames(engine::PresetStore::DefaultConfigDir());
}

nlohmann::ordered_json ToJson(const PlanResult& res) {
  const engine::LawWithUncertainty& law = res.law;
  const engine::PlanRequest& req = res.chain;
  const engine::PlanResult& r = res.plan;
  const engine::ChainPoint& p = r.point;
  const auto& L = law.point;
  nlohmann::ordered_json j;
  j["schema_version"] = kSchemaVersion;
  j["law"] = {{"name", law.name}, {"source", law.source}, {"E", L.E}, {"A", L.A}, {"B", L.B},
              {"alpha", L.alpha}, {"beta", L.beta}, {"bootstrap_replicates", law.samples.size()}};
  // The runs the law was fitted on, where known: [smallest, largest] N and D
  // (null for a side the source does not state).
  const auto side = [](double v) { return v > 0 ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
  const scaling_laws::FittedRange& f = law.fitted;
  if (f.n_max > 0 || f.d_max > 0 || f.n_min > 0 || f.d_min > 0)
    j["law"]["fitted_runs"] = {{"N", {side(f.n_min), side(f.n_max)}}, {"D", {side(f.d_min), side(f.d_max)}}};
  nlohmann::ordered_json target;
  switch (req.goal) {
    case engine::PlanGoal::kLoss:
      target = {{"goal", "loss"}, {"loss", req.target_loss}, {"inference_tokens", req.inference_tokens}};
      break;
    case engine::PlanGoal::kBudget:
      target = {{"goal", "budget"}, {"budget_flops", req.budget_flops}};
      break;
    case engine::PlanGoal::kGpuDays:
      target = {{"goal", "gpus_days"}, {"gpus", req.gpus}, {"days", req.days}};
      break;
  }
  if (req.deadline_days > 0) target["deadline_days"] = req.deadline_days;
  j["target"] = target;
  j["allocation"] = {{"N", p.params_n},
                     {"D", p.tokens_d},
                     {"C", p.compute_flops},
                     {"flops_per_param_token", req.flops_per_param_token},
                     {"tokens_per_param", p.tokens_d / p.params_n},
                     {"loss", p.loss},
                     {"inference_flops", p.inference_flops}};
  const auto& m = p.model;
  j["model"] = {{"family", res.family.name},
                {"name", m.name},
                {"layers", m.layers},
                {"hidden", m.hidden},
                {"heads", m.heads},
                {"kv_heads", res.kv_heads},
                {"head_dim", res.head_dim},
                {"ffn", res.ffn},
                {"vocab", m.vocab},
                {"activation", m.activation == models::Activation::kSwiglu ? "swiglu" : "gelu"},
                {"tied_embeddings", m.tied_embeddings},
                {"params", p.model_params},
                {"params_vs_N", p.model_params / p.params_n - 1},
                {"aspect_ratio", static_cast<double>(m.hidden) / static_cast<double>(m.layers)},
                {"engine_model_flops_per_token", p.model_flops_per_token},
                {"engine_flops_per_param_token", p.model_flops_per_token / p.model_params}};
  j["system"] = {{"name", r.system.name},
                 {"device", r.system.device.name},
                 {"gpus", p.gpus},
                 {"devices_per_node", r.system.devices_per_node},
                 {"pue", r.system.pue},
                 {"tdp_w", r.system.device.tdp},
                 {"price_per_gpu_hour_usd", r.system.price_per_device_hour * 3600}};
  const auto& b = p.best;
  if (b.found) {
    const auto& pl = b.plan;
    const auto& e = b.estimate;
    j["plan"] = {{"tp", pl.tp},
                 {"pp", pl.pp},
                 {"interleave", pl.interleave},
                 {"tp_comm_overlap", pl.tp_comm_overlap},
                 {"dp_overlap", pl.dp_overlap},
                 {"dp", e.dp},
                 {"micro_batch", pl.micro_batch},
                 {"microbatches", e.microbatches},
                 {"recompute", parallelism::RecomputeName(pl.recompute)},
                 {"zero", pl.zero},
                 {"sequence_parallel", pl.sequence_parallel},
                 {"plans_in_space", b.candidates},
                 {"plans_evaluated", b.evaluated},
                 {"plans_feasible", b.feasible}};
    j["iteration"] = {{"global_batch", p.global_batch},
                      {"seq_len", p.seq_len},
                      {"tokens", p.global_batch * p.seq_len},
                      {"iteration_s", e.iteration_s},
                      {"mfu", e.mfu},
                      {"model_flops", e.model_flops},
                      {"memory_per_device_bytes", e.memory.total()},
                      {"memory_capacity_bytes", e.memory_capacity}};
    j["training"] = {{"steps", p.steps},
                     {"tokens", p.tokens_trained},
                     {"model_flops", p.train_model_flops},
                     {"days", p.days},
                     {"gpu_hours", p.gpu_hours},
                     {"energy_mwh", p.energy_j / 3.6e9},
                     {"cost_usd", p.cost_usd},
                     {"effective_days", p.effective_days},
                     {"effective_gpu_hours", p.effective_gpu_hours},
                     {"effective_cost_usd", p.effective_cost_usd},
                     {"effective_energy_mwh", p.goodput.effective_energy_j / 3.6e9},
                     {"carbon_kg", r.system.grid_co2_kg_per_kwh > 0
                                       ? nlohmann::ordered_json(p.goodput.carbon_kg)
                                       : nlohmann::ordered_json()}};
    j["goodput"] = GoodputJson(p.goodput, res.goodput_mc ? &*res.goodput_mc : nullptr);
  }
  j["feasible"] = p.infeasible.empty();
  j["reason"] = p.infeasible;
  if (r.has_range) {
    j["range"] = {{"level", r.level},
                  {"replicates", r.range_samples},
                  {"replicates_infeasible", r.range_infeasible},
                  {"N", RangeJson(r.params_n)},
                  {"D", RangeJson(r.tokens_d)},
                  {"C", RangeJson(r.compute_flops)},
                  {"loss", RangeJson(r.loss)},
                  {"gpus", RangeJson(r.gpus)},
                  {"days", RangeJson(r.days)},
                  {"gpu_hours", RangeJson(r.gpu_hours)},
                  {"energy_mwh", RangeJson({r.energy_j.lo / 3.6e9, r.energy_j.hi / 3.6e9})},
                  {"cost_usd", RangeJson(r.cost_usd)},
                  {"effective_days", RangeJson(r.effective_days)}};
  }
  j["notes"] = r.notes;
  return j;
}

}  // namespace orrery
