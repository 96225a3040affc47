#pragma once
// Catalogue of published scaling laws, loaded from
// configs/scaling_laws/published_laws.csv (every row cites its source).
// The file's header comment documents the kinds and their parameter names.

#include <map>
#include <string>
#include <vector>

#include "scaling_laws/chinchilla_law.h"
#include "scaling_laws/kaplan_law.h"
#include "core/base/result.h"

namespace orrery::scaling_laws {

enum class LawKind { kChinchilla, kKaplanN, kKaplanD, kKaplanND, kKaplanC, kAllocation, kRecord };

struct LawPreset {
  std::string name;
  std::vector<std::string> aliases;
  LawKind kind = LawKind::kRecord;
  std::string kind_name;                   // as written in the file
  std::map<std::string, double> parameters;
  std::string formula;
  std::string source;                      // citation
  std::string notes;
  int line = 0;                            // line in the catalogue file

  // Typed views; an error when the kind differs.
  base::Result<ChinchillaParams> Chinchilla() const;
  base::Result<KaplanNDParams> KaplanND() const;
};

// Allocation N* = k_n C^a_n, D* = k_d C^a_d (C in units of
// compute_unit_flops); a missing side follows from C = 6 N D.
struct Allocation {
  double compute_flops = 0.0;
  double params_n = 0.0;   // for deepseek2024_allocation: non-embedding FLOP/token M
  double tokens_d = 0.0;
};
base::Result<Allocation> EvaluateAllocation(const LawPreset& preset, double compute_flops);

struct PresetCatalog {
  std::string source;
  std::vector<LawPreset> presets;

  // Exact name or alias; otherwise an error with "did you mean".
  base::Result<LawPreset> Find(const std::string& name) const;
  std::vector<std::string> Names() const;
};

// The runs a law was fitted on, where its source states them (0: not
// stated): a chinchilla preset's n_min, n_max (parameters), d_min, d_max
// (tokens).
struct FittedRange {
  double n_min = 0, n_max = 0;
  double d_min = 0, d_max = 0;
};
FittedRange FittedRangeOf(const LawPreset& preset);

// "N = 4.13e+10 parameters is 2.58x above the largest of the runs the law
// was fitted on (7e+07 to 1.6e+10 parameters): an extrapolation of the law",
// or empty when `value` lies within [lo, hi] up to a factor 1.5 (the spread
// of the runs' own sizes); lo or hi 0 means that side is not stated.
std::string ExtrapolationNote(const char* what, double value, double lo, double hi, const char* unit);

// Parses the catalogue. Errors name the file, line and the bad field
// (unknown kind, "key=value" not parseable, missing parameter for the kind).
base::Result<PresetCatalog> LoadPresetCatalog(const std::string& path);

// $ORRERY_CONFIG_DIR/scaling_laws/published_laws.csv when that variable is
// set, else the path compiled in from the source tree's configs/.
std::string DefaultPresetCatalogPath();

}  // namespace orrery::scaling_laws
