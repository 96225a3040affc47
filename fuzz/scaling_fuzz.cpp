// Scaling-law point files (`orrery fit POINTS.csv`) and the fits on them.
// Properties: no crash or hang; a fit either fails with a message or returns
// finite parameters and objective. The Chinchilla fit runs from a few grid
// starts with a small evaluation budget so each input stays fast.

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "scaling_laws/chinchilla_law.h"
#include "scaling_laws/kaplan_law.h"
#include "scaling_laws/run_table.h"

using namespace orrery;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = fuzz::AsFile(data, size, ".csv");
  const auto runs = scaling_laws::LoadRuns(file, {});
  if (!runs) {
    fuzz::Require(!runs.error().message.empty(), "a rejection without a message");
    return 0;
  }
  for (const auto& p : runs->points)
    fuzz::Require(std::isfinite(p.params_n) && p.params_n > 0 && std::isfinite(p.tokens_d) &&
                      p.tokens_d > 0 && std::isfinite(p.loss) && p.loss > 0,
                  "an accepted point that is not finite and positive");
  if (runs->points.size() > 64) return 0;
  if (auto k = scaling_laws::FitKaplanN(*runs))
    fuzz::Require(std::isfinite(k->law.exponent) && std::isfinite(k->law.scale),
                  "a Kaplan fit that is not finite");
  scaling_laws::HuberFitOptions o;
  o.max_starts = 3;
  o.max_iterations = 200;
  o.max_evaluations = 3000;
  if (auto c = scaling_laws::FitChinchillaHuber(*runs, o)) {
    const auto& p = c->params;
    fuzz::Require(std::isfinite(p.E) && std::isfinite(p.A) && std::isfinite(p.B) &&
                      std::isfinite(p.alpha) && std::isfinite(p.beta) && std::isfinite(c->objective),
                  "a Chinchilla fit that is not finite");
  }
  return 0;
}
