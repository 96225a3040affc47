#pragma once
// orrery::Fit: fit a scaling law to training runs (chinchilla, kaplan,
// isoflop; bootstrap intervals), or ask a published law how to spend a
// compute budget or reach a loss, or list the published laws. The work is
// scaling_laws/ (fit_runs.h); `orrery fit` is the command-line face.
//
//   orrery::FitRequest req;
//   req.points = "runs.csv";  req.bootstrap = 100;
//   orrery::FitResult r = orrery::Fit(req);
//   if (r.ok()) ... r.fit->chinchilla->params.alpha ... orrery::ToJson(r) ...

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/api/common.h"
#include "scaling_laws/fit_runs.h"

namespace orrery {

struct FitRequest {
  // What to do: fit `points`, answer from `preset`, or list the presets.
  std::string points;                 // runs CSV
  std::string preset;                 // a published law (name or alias)
  bool list_presets = false;
  std::string presets_file;           // preset catalogue CSV; empty: the shipped one

  // Fitting.
  std::string law = "chinchilla";     // chinchilla | kaplan | isoflop
  std::string method = "lbfgs";       // chinchilla: lbfgs | varpro
  std::string n_col, d_col, c_col, loss_col;  // empty: found by their usual names
  std::vector<std::pair<std::string, std::string>> where;  // keep rows with COLUMN = VALUE
  double flops_per_param_token = 6;   // k in C = k N D
  size_t bootstrap = 0;
  uint64_t seed = 20240416;
  size_t starts = 0;

  // Preset questions.
  double budget_flops = 0;
  double target_loss = 0;
  std::optional<double> inference_tokens;
};

struct FitResult : ResultBase {
  std::optional<scaling_laws::FitRunsOutcome> fit;         // points given
  std::optional<scaling_laws::PresetAnswer> answer;        // preset given
  std::optional<scaling_laws::PresetCatalog> catalog;      // list_presets
  std::vector<std::string> notes;                          // from loading the runs
  std::vector<std::string> warnings;                       // from the fit
};

FitResult Fit(const FitRequest& request, const Control& control = {});

// The fit document (the form `orrery plan --law FILE` reads), the preset
// answer, or the preset list.
nlohmann::json ToJson(const FitResult& r);

}  // namespace orrery
