#pragma once
// Training runs as (N parameters, D tokens, C FLOPs, L loss) points, loaded
// from a CSV whose column names the caller may map.

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/base/result.h"

namespace orrery::scaling_laws {

struct RunPoint {
  double params_n = 0.0;   // model parameters (count)
  double tokens_d = 0.0;   // training tokens (count)
  double compute_c = std::numeric_limits<double>::quiet_NaN();  // training FLOP; NaN if unknown
  double loss = 0.0;       // loss in nats/token (any positive loss is accepted)
  int line = 0;            // source line, 0 when not from a file
};

struct RunTable {
  std::string source;
  std::vector<RunPoint> points;
  std::vector<std::string> notes;  // e.g. "tokens imputed as C/(6N)"
};

// Which CSV column holds what. An empty name means "auto-detect from the
// usual spellings" (see kParamsAliases etc. in run_table.cpp: N, params,
// params_N, ...; D, tokens, tokens_D, training_tokens; C, flops, flops_C,
// compute_budget; L, loss, validation_loss, final_loss). A name that is set
// must exist, or loading fails with "did you mean".
struct RunColumns {
  std::string params;
  std::string tokens;
  std::string compute;
  std::string loss;
  // Keep only rows whose raw cell equals the value, e.g. {"config_id", "4"}.
  std::vector<std::pair<std::string, std::string>> where;
  // FLOP per parameter per token used to impute a missing N or D from C
  // (C = k N D; k = 6 for dense training, Kaplan et al. 2020 Sec. 2.1).
  double flops_per_param_token = 6.0;
};

// Loads runs. Two of N, D, C must be present per row (the third is imputed
// with C = k N D and a note is added); L is required. Every value must be a
// finite positive number; errors name the file, line and column name.
base::Result<RunTable> LoadRuns(const std::string& path, const RunColumns& columns);
base::Result<RunTable> ParseRuns(const std::string& csv_text, const std::string& source_name,
                           const RunColumns& columns);

// Keeps the points for which keep(point) is true (a copy).
template <class Pred>
RunTable FilterRuns(const RunTable& table, Pred keep) {
  RunTable out{table.source, {}, table.notes};
  for (const auto& p : table.points) {
    if (keep(p)) out.points.push_back(p);
  }
  return out;
}

}  // namespace orrery::scaling_laws

namespace orrery::scaling_laws {

// Warnings about what the data cannot determine (empty when all is well):
//  - N or D spanning less than `min_decades` decades: the exponent on that
//    axis (alpha or beta) and its coefficient are poorly determined;
//  - |corr(log N, log D)| > 0.98: the N and D terms are confounded (e.g. a
//    fixed tokens-per-parameter ratio), so alpha and beta trade off;
//  - fewer than `min_points` points for a 5-parameter law.
std::vector<std::string> SpreadWarnings(const RunTable& table, double min_decades = 1.0,
                                        size_t min_points = 10);

}  // namespace orrery::scaling_laws
