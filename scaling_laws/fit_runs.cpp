#include "scaling_laws/fit_runs.h"

#include "scaling_laws/law_json.h"

namespace orrery::scaling_laws {

base::Result<FitRunsOutcome> FitRuns(const FitRunsRequest& request) {
  auto runs = LoadRuns(request.points, request.columns);
  if (!runs) return runs.error();
  FitRunsOutcome out;
  out.law = request.law;
  out.runs = *runs;
  const RunTable& table = out.runs;
  switch (request.law) {
    case FitLaw::kChinchilla: {
      base::Result<ChinchillaFit> fit = base::Error{""};
      if (request.varpro) {
        fit = FitChinchillaVarPro(table);
      } else {
        HuberFitOptions opts;
        opts.max_starts = request.starts;
        fit = FitChinchillaHuber(table, opts);
      }
      if (!fit) return fit.error();
      if (request.bootstrap > 0) {
        auto b = BootstrapChinchilla(table, fit->params, request.bootstrap, request.seed);
        if (!b) return b.error();
        out.bootstrap = *b;
      }
      out.warnings = fit->warnings;
      out.chinchilla = *fit;
      break;
    }
    case FitLaw::kKaplan: {
      auto n_fit = FitKaplanN(table);
      auto d_fit = FitKaplanD(table);
      auto nd_fit = FitKaplanND(table);
      if (!n_fit) return n_fit.error();
      if (!d_fit) return d_fit.error();
      if (!nd_fit) return nd_fit.error();
      for (const auto* w : {&nd_fit->warnings, &n_fit->warnings, &d_fit->warnings})
        out.warnings.insert(out.warnings.end(), w->begin(), w->end());
      out.kaplan_n = *n_fit;
      out.kaplan_d = *d_fit;
      out.kaplan_nd = *nd_fit;
      break;
    }
    case FitLaw::kIsoFlop: {
      IsoFlopOptions iso;
      iso.flops_per_param_token = request.columns.flops_per_param_token;
      auto fit = FitIsoFlop(table, iso);
      if (!fit) return fit.error();
      if (request.bootstrap > 0) {
        const Estimator est = [&](const RunTable& t) -> base::Result<std::vector<double>> {
          auto f = FitIsoFlop(t, iso);
          if (!f) return f.error();
          return std::vector<double>{f->params_fit.exponent, f->tokens_fit.exponent};
        };
        auto b = Bootstrap(table, request.bootstrap, request.seed, {"a", "b"}, est);
        if (!b) return b.error();
        out.bootstrap = *b;
      }
      out.warnings = fit->warnings;
      out.isoflop = *fit;
      break;
    }
  }
  return out;
}

nlohmann::json FitRunsOutcome::ToJson() const {
  const BootstrapResult* boot = bootstrap ? &*bootstrap : nullptr;
  switch (law) {
    case FitLaw::kChinchilla: return ChinchillaFitToJson(*chinchilla, runs, boot);
    case FitLaw::kKaplan: return KaplanFitsToJson(*kaplan_n, *kaplan_d, *kaplan_nd, runs);
    case FitLaw::kIsoFlop: return IsoFlopFitToJson(*isoflop, boot);
  }
  return {};
}

base::Result<PresetAnswer> AnswerPreset(const PresetCatalog& catalog, const std::string& name,
                                        const PresetQuestion& q) {
  auto preset = catalog.Find(name);
  if (!preset) return preset.error();
  PresetAnswer a;
  a.preset = *preset;
  a.question = q;
  if (preset->kind == LawKind::kAllocation) {
    if (!(q.budget_flops > 0))
      return base::Error{"preset '" + preset->name + "' is an allocation rule; give --budget"};
    auto alloc = EvaluateAllocation(*preset, q.budget_flops);
    if (!alloc) return alloc.error();
    a.allocation = *alloc;
    return a;
  }
  if (preset->kind != LawKind::kChinchilla)
    return base::Error{"preset '" + preset->name + "' is of kind '" + preset->kind_name +
                       "'; compute-optimal answers need a 'chinchilla' or 'allocation' preset" +
                       (preset->name.rfind("kaplan", 0) == 0 ? " (try kaplan2020_compute_optimal)" : "")};
  const ChinchillaParams law = preset->Chinchilla().value();
  double target = q.target_loss;
  if (q.budget_flops > 0) {
    auto closed = ComputeOptimalClosedForm(law, q.budget_flops, q.flops_per_param_token);
    auto numeric = ComputeOptimalNumeric(law, q.budget_flops, q.flops_per_param_token);
    if (!closed) return closed.error();
    if (!numeric) return numeric.error();
    a.optimum = *closed;
    a.numeric_params_n = numeric->params_n;
    if (target <= 0) target = closed->loss;
  }
  if (q.inference_given || (q.budget_flops <= 0 && target > 0)) {
    auto ia = InferenceAwareOptimal(law, target, q.inference_tokens, q.flops_per_param_token, 2.0);
    if (!ia) return ia.error();
    a.inference_aware = *ia;
    a.inference_target_loss = target;
  }
  return a;
}

nlohmann::json PresetAnswer::ToJson() const {
  nlohmann::json j = {{"preset", preset.name}, {"kind", preset.kind_name}, {"formula", preset.formula},
                      {"source", preset.source}};
  if (allocation) {
    j["C"] = question.budget_flops;
    j["N_opt"] = allocation->params_n;
    j["D_opt"] = allocation->tokens_d;
  }
  if (optimum) {
    j["compute_optimal"] = ComputeOptimumToJson(*optimum);
    j["compute_optimal"]["N_opt_numeric"] = numeric_params_n;
    j["compute_optimal"]["exponent_a"] = optimum->exponent_a;
  }
  if (inference_aware) {
    const InferenceAwareOptimum& ia = *inference_aware;
    j["inference_aware"] = {{"target_loss", ia.target_loss}, {"N", ia.params_n},
                            {"D_train", ia.tokens_train}, {"D_inference", ia.tokens_inference},
                            {"training_flops", ia.training_flops}, {"inference_flops", ia.inference_flops},
                            {"total_flops", ia.total_flops}};
  }
  return j;
}

}  // namespace orrery::scaling_laws
