#include "core/api/fit.h"

#include <exception>

namespace orrery {

namespace sl = scaling_laws;

namespace {

FitResult Fail(Status s, std::string reason) {
  FitResult r;
  r.status = s;
  r.reason = std::move(reason);
  return r;
}

}  // namespace

FitResult Fit(const FitRequest& q, const Control& control) {
  if (q.law != "chinchilla" && q.law != "kaplan" && q.law != "isoflop") {
    const std::string guess = base::ClosestMatch(q.law, {"chinchilla", "kaplan", "isoflop"});
    return Fail(Status::kUsage, "--law: expected chinchilla, kaplan or isoflop, got '" + q.law + "'" +
                                    (guess.empty() ? "" : "; did you mean '" + guess + "'?"));
  }
  if (q.method != "lbfgs" && q.method != "varpro")
    return Fail(Status::kUsage, "--method: expected lbfgs or varpro, got '" + q.method + "'");
  if (!(q.flops_per_param_token >= 0))
    return Fail(Status::kUsage, "--flops-per-param-token: expected a non-negative number");
  try {
    if (q.list_presets || !q.preset.empty()) {
      if (!q.points.empty())
        return Fail(Status::kUsage, "give either POINTS.csv or --preset/--list-presets, not both");
      auto cat = sl::LoadPresetCatalog(q.presets_file.empty() ? sl::DefaultPresetCatalogPath() : q.presets_file);
      if (!cat) return Fail(Status::kInvalidInput, cat.error().message);
      FitResult r;
      if (q.list_presets) {
        r.catalog = std::move(cat.value());
        return r;
      }
      if (q.budget_flops <= 0 && q.target_loss <= 0)
        return Fail(Status::kUsage, "--preset needs --budget FLOP (> 0) or --target-loss L");
      auto preset = cat->Find(q.preset);
      if (!preset) return Fail(Status::kInvalidInput, preset.error().message);
      if (preset->kind == sl::LawKind::kAllocation && q.budget_flops <= 0)
        return Fail(Status::kUsage, "preset '" + preset->name + "' is an allocation rule; give --budget");
      sl::PresetQuestion question;
      question.budget_flops = q.budget_flops;
      question.target_loss = q.target_loss;
      question.inference_given = q.inference_tokens.has_value();
      question.inference_tokens = q.inference_tokens.value_or(0);
      question.flops_per_param_token = q.flops_per_param_token;
      auto answer = sl::AnswerPreset(*cat, q.preset, question);
      if (!answer) return Fail(Status::kInvalidInput, answer.error().message);
      r.answer = std::move(answer.value());
      return r;
    }
    if (q.points.empty()) return Fail(Status::kUsage, "missing POINTS.csv (or --preset NAME)");
    sl::FitRunsRequest fr;
    fr.points = q.points;
    fr.columns.params = q.n_col;
    fr.columns.tokens = q.d_col;
    fr.columns.compute = q.c_col;
    fr.columns.loss = q.loss_col;
    fr.columns.where = q.where;
    fr.columns.flops_per_param_token = q.flops_per_param_token;
    fr.law = q.law == "kaplan" ? sl::FitLaw::kKaplan : q.law == "isoflop" ? sl::FitLaw::kIsoFlop
                                                                         : sl::FitLaw::kChinchilla;
    fr.varpro = q.method == "varpro";
    fr.starts = q.starts;
    fr.bootstrap = q.bootstrap;
    fr.seed = q.seed;
    control.Report(0, 1, "fit");
    auto fit = sl::FitRuns(fr);
    if (!fit) return Fail(Status::kInvalidInput, fit.error().message);
    control.Report(1, 1, "fit");
    FitResult r;
    r.notes = fit->runs.notes;
    r.warnings = fit->warnings;
    r.fit = std::move(fit.value());
    return r;
  } catch (const std::exception& e) {
    // The library reports errors as values; this guards against the
    // unexpected (e.g. allocation failure) so that no caller crashes.
    return Fail(Status::kInvalidInput, std::string("internal error: ") + e.what());
  }
}

nlohmann::json ToJson(const FitResult& r) {
  if (r.fit || r.answer) {
    nlohmann::json j = r.fit ? r.fit->ToJson() : r.answer->ToJson();
    j["schema_version"] = kSchemaVersion;
    return j;
  }
  nlohmann::json j = nlohmann::json::array();
  if (r.catalog)
    for (const auto& p : r.catalog->presets)
      j.push_back({{"name", p.name}, {"aliases", p.aliases}, {"kind", p.kind_name},
                   {"parameters", p.parameters}, {"formula", p.formula}, {"source", p.source},
                   {"notes", p.notes}});
  return j;
}

}  // namespace orrery
