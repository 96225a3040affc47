// Estimates GPT-3 175B on 64 A100 through the installed library and checks
// the model FLOPs of one iteration against Narayanan et al. 2021, Eq. 3:
//   F = 72 B s L h^2 (1 + s / (6 h) + V / (12 L h))
// with B = 64, s = 2048, L = 96, h = 12288, V = 51200 (the preset's shape):
// 72 * 64 * 2048 * 96 * 12288^2 = 1.36796e17, times 1.031395 = 1.41091e17.
// Exit 0 when the library agrees, 1 otherwise.

#include <cmath>
#include <iostream>

#include "core/api/estimate.h"
#include "core/api/json.h"

int main() {
  orrery::EstimateRequest req;
  req.scenario = orrery::ScenarioInput::File("gpt3-175b-a100");
  req.scenario.config_dir = CONSUMER_CONFIG_DIR;  // the installed presets
  const orrery::EstimateResult r = orrery::Estimate(req);
  if (r.status != orrery::Status::kOk) {
    std::cerr << "estimate failed: " << orrery::StatusName(r.status) << " " << r.reason
              << r.diagnostics.ToString() << "\n";
    return 1;
  }
  const double B = 64, s = 2048, L = 96, h = 12288, V = 51200;
  const double eq3 = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  const orrery::Json doc = orrery::ToJson(r);
  const double flops = doc["model_flops_per_iteration"].get<double>();
  std::cout << "model FLOPs per iteration " << flops << " (Eq. 3: " << eq3 << "), iteration "
            << doc["iteration_s"].get<double>() << " s, schema " << doc["schema_version"] << "\n";
  if (std::fabs(flops / eq3 - 1) > 1e-9 || doc["schema_version"] != orrery::kSchemaVersion ||
      !(r.estimate.iteration_s > 0))
    return 1;
  return 0;
}
