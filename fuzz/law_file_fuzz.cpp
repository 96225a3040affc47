// Law files (`orrery plan --law FILE`, the JSON or YAML `orrery fit` writes).
// Properties: no crash or hang; a rejection is a located message; an accepted
// law has finite parameters.

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/planning/planner.h"
#include "fuzz/fuzz_support.h"
#include "scaling_laws/law_presets.h"

using namespace orrery;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = fuzz::AsFile(data, size, ".json");
  base::Diagnostics d;
  const auto law = engine::LoadLaw(file, scaling_laws::DefaultPresetCatalogPath(), d);
  if (!law) {
    fuzz::RequireLocated(d, file);
    return 0;
  }
  const auto& p = law->point;
  fuzz::Require(std::isfinite(p.E) && std::isfinite(p.A) && std::isfinite(p.B) &&
                    std::isfinite(p.alpha) && std::isfinite(p.beta),
                "an accepted law with a non-finite parameter");
  return 0;
}
