// Measured training runs (validation/training_runs.csv columns) through the
// harness of `orrery validate`. Properties: no crash or hang; every row is
// either skipped with a reason or predicted with a finite error; the
// aggregates are finite.

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/validation/validation.h"
#include "fuzz/fuzz_support.h"

using namespace orrery;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const engine::PresetStore store(fuzz::ConfigDir());
  const std::string file = fuzz::AsFile(data, size, ".csv");
  base::Diagnostics d;
  const engine::ValidationReport r = engine::ValidateTrainingCsv(file, store, d);
  for (const auto& row : r.rows) {
    fuzz::Require(row.skipped.empty() == row.error_pct.has_value(),
                  "a row neither skipped nor predicted (line " + std::to_string(row.line) + ")");
    if (row.error_pct) {
      fuzz::Require(std::isfinite(*row.error_pct) && std::isfinite(row.predicted) &&
                        row.predicted > 0,
                    "a prediction that is not a positive finite number (line " +
                        std::to_string(row.line) + ")");
    }
  }
  fuzz::Require(std::isfinite(r.mape_pct) && std::isfinite(r.max_abs_error_pct),
                "an aggregate that is not finite");
  return 0;
}
