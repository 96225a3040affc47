#pragma once
// Fitting a law to training runs, and answering compute-optimal questions
// from a published law, as one call each: what `orrery fit` does (the api's
// core/api/fit.h is the door). Formulas and sources: chinchilla_law.h
// (Hoffmann et al. 2022 Eq. 2), kaplan_law.h (Kaplan et al. 2020 Eqs. 1.1,
// 1.2, 1.5), isoflop.h (Hoffmann et al. 2022 Approach 2), compute_optimal.h
// (Hoffmann et al. 2022 Eq. 4; Sardana et al. 2023).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.h"
#include "scaling_laws/bootstrap.h"
#include "scaling_laws/chinchilla_law.h"
#include "scaling_laws/compute_optimal.h"
#include "scaling_laws/isoflop.h"
#include "scaling_laws/kaplan_law.h"
#include "scaling_laws/law_presets.h"
#include "scaling_laws/run_table.h"

namespace orrery::scaling_laws {

enum class FitLaw { kChinchilla, kKaplan, kIsoFlop };

struct FitRunsRequest {
  std::string points;                 // runs CSV
  RunColumns columns;                 // column names, row filters, k in C = k N D
  FitLaw law = FitLaw::kChinchilla;
  bool varpro = false;                // chinchilla: variable projection instead of Huber/L-BFGS
  size_t starts = 0;                  // chinchilla L-BFGS starts: 0 = the whole grid
  size_t bootstrap = 0;               // K > 0: K-resample percentile intervals
  uint64_t seed = 20240416;
};

struct FitRunsOutcome {
  FitLaw law = FitLaw::kChinchilla;
  RunTable runs;
  std::optional<ChinchillaFit> chinchilla;
  std::optional<KaplanFit1D> kaplan_n, kaplan_d;
  std::optional<KaplanFitND> kaplan_nd;
  std::optional<IsoFlopFit> isoflop;
  std::optional<BootstrapResult> bootstrap;
  std::vector<std::string> warnings;  // data-spread warnings of the fit(s)

  // The fit document (law_json.h): what `orrery plan --law FILE` reads.
  nlohmann::json ToJson() const;
};

base::Result<FitRunsOutcome> FitRuns(const FitRunsRequest& request);

// A published law asked how to spend a budget or reach a loss.
struct PresetQuestion {
  double budget_flops = 0;           // > 0: compute-optimal split
  double target_loss = 0;            // > 0: cheapest model reaching it
  double inference_tokens = 0;
  bool inference_given = false;      // inference-aware answer asked for
  double flops_per_param_token = 6;  // k in C = k N D
};

struct PresetAnswer {
  LawPreset preset;
  PresetQuestion question;
  std::optional<Allocation> allocation;         // allocation presets
  std::optional<ComputeOptimum> optimum;        // chinchilla presets with a budget
  double numeric_params_n = 0;                  // the same optimum found numerically
  std::optional<InferenceAwareOptimum> inference_aware;
  double inference_target_loss = 0;             // the loss the inference-aware answer reaches

  nlohmann::json ToJson() const;
};

// Errors: an unknown preset (with did-you-mean), a preset of a kind that
// cannot answer, a question it cannot answer (a loss below E).
base::Result<PresetAnswer> AnswerPreset(const PresetCatalog& catalog, const std::string& name,
                                        const PresetQuestion& question);

}  // namespace orrery::scaling_laws
