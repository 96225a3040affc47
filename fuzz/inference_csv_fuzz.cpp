// Measured inference runs (validation/inference_runs.csv columns) through the
// harness of `orrery validate`. Properties: no crash or hang; predicted rows
// carry finite errors; the aggregates are finite.

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/validation/inference_validation.h"
#include "fuzz/fuzz_support.h"

using namespace orrery;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const engine::PresetStore store(fuzz::ConfigDir());
  const std::string file = fuzz::AsFile(data, size, ".csv");
  base::Diagnostics d;
  const engine::ValidationReport r = engine::ValidateInferenceCsv(file, store, d);
  for (const auto& row : r.rows)
    if (row.error_pct)
      fuzz::Require(std::isfinite(*row.error_pct),
                    "a non-finite error (line " + std::to_string(row.line) + ")");
  fuzz::Require(std::isfinite(r.mape_pct) && std::isfinite(r.max_abs_error_pct),
                "an aggregate that is not finite");
  return 0;
}
