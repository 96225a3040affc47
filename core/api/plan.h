#pragma once
// orrery::Plan: a loss target, a compute budget, or GPUs x days -> N and D
// from a scaling law -> a model shape -> the best training plan -> days,
// GPU-hours, energy and cost, with ranges from the law's bootstrap
// replicates. The work is core/planning/planner.h; `orrery plan` is the
// command-line face.
//
//   orrery::PlanRequest req;
//   req.law = "epoch";  req.system = "dgx-h100-superpod";
//   req.chain.goal = orrery::engine::PlanGoal::kLoss;  req.chain.target_loss = 2.0;
//   orrery::PlanResult r = orrery::Plan(req);
//   if (r.ok()) std::cout << r.plan.point.days;

#include <cstdint>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/api/common.h"
#include "core/planning/planner.h"

namespace orrery {

struct PlanRequest {
  std::string law = "chinchilla";  // a chinchilla-kind preset, or a fit file (json/yaml)
  std::string family = "llama";    // configs/families/ name or a YAML file
  std::string system;              // a system preset name or a YAML file
  engine::PlanRequest chain;       // the goal and its figures (core/planning/planner.h)
  // Goodput's Monte-Carlo over the planned run (core/goodput/goodput.h):
  // whole runs drawn with failures; 0 = the closed form only.
  int64_t goodput_runs = 0;
  uint64_t goodput_seed = 1;
};

struct PlanResult : ResultBase {
  engine::LawWithUncertainty law;
  engine::FamilySpec family;
  engine::PlanRequest chain;       // as asked
  engine::PlanResult plan;         // the chain's answer (plan.point.infeasible: why none)
  // The built model's derived shape (models/transformer.h).
  int64_t kv_heads = 0, head_dim = 0, ffn = 0;
  // With goodput_runs > 0 and a plan found: the distribution of the run's
  // completion time (p50, p90) in seconds.
  std::optional<goodput::MonteCarlo> goodput_mc;
};

// kInvalidInput: diagnostics (law, family, system) or a question the law
// cannot answer (reason); kInfeasible: no feasible plan (reason, and the
// chain up to the model is filled in).
PlanResult Plan(const PlanRequest& request, const Control& control = {});

nlohmann::ordered_json ToJson(const PlanResult& r);

// The keys of a family file (configs/families/*.yaml) with their rules and
// help, and the families found in the preset folder: for help and forms.
std::vector<base::ParamInfo> PlanFamilyKeys();
std::vector<std::string> PlanFamilyNames();

}  // namespace orrery
