#pragma once
// The public API's shared vocabulary: what every verb's call takes besides
// its request (progress, cancel) and what every result carries (status,
// diagnostics). One request struct in, one result struct out, per verb; the
// faces (cli/, gui/, reports, a user's program) call these and nothing below.
//
//   orrery::EstimateRequest req;  req.scenario_file = "configs/scenarios/gpt3-175b-a100.yaml";
//   orrery::EstimateResult r = orrery::Estimate(req);
//   if (r.status == orrery::Status::kOk) ... orrery::ToJson(r) ...

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/estimate/scenario.h"

namespace orrery {

// Version of the JSON output schema (docs/output-schema.md). Bumped when a
// field is renamed, removed or changes meaning; adding a field does not bump.
inline constexpr int kSchemaVersion = 1;

// What a call came to. The CLI's exit status is the numeric value.
enum class Status {
  kOk = 0,            // a result
  kInvalidInput = 1,  // the input is invalid (diagnostics say where), or a tolerance failed
  kUsage = 2,         // the request itself is malformed (faces map their own usage errors here)
  kInfeasible = 3,    // valid input, but no feasible plan / an infeasible result (reason given)
  kCancelled = 4,     // the cancel flag was raised; partial results may be present
};
const char* StatusName(Status s);

// Progress of a long call: `done` of `total` units of `stage` ("shapes",
// "points", "requests"). Called from the calling thread or a worker thread;
// must be cheap and thread-safe. `total` may be 0 when unknown.
using ProgressFn = std::function<void(uint64_t done, uint64_t total, std::string_view stage)>;

// Passed to every long call. Both members are optional.
struct Control {
  ProgressFn progress;
  const std::atomic<bool>* cancel = nullptr;  // borrowed; polled between units of work

  bool Cancelled() const { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }
  void Report(uint64_t done, uint64_t total, std::string_view stage) const {
    if (progress) progress(done, total, stage);
  }
};

// Every result starts with this: status, the located errors when the input
// was invalid, and the reason when the result is infeasible.
struct ResultBase {
  Status status = Status::kOk;
  base::Diagnostics diagnostics;  // non-empty iff status == kInvalidInput from input errors
  std::string reason;             // why infeasible / why a tolerance failed / why cancelled
  bool ok() const { return status == Status::kOk; }
};

// Where a request's scenario comes from: a file path (or a scenario preset
// name), YAML text of a scenario document, or a scenario already loaded (the
// GUI edits one in memory). Exactly one of the three is given; `overrides`
// ("path=value", the paths of `orrery explain`) are applied after loading,
// in order, with the same rules and messages as --set.
struct ScenarioInput {
  std::string file;                        // path, or a preset name from configs/scenarios
  std::string yaml;                        // or: YAML text, top-level key `scenario:`
  std::optional<engine::Scenario> loaded;  // or: a loaded scenario
  std::vector<std::string> overrides;      // "training.tp=4", "system.device.memory_capacity=141 GB"
  // A Hugging Face config.json that replaces the scenario's model (before
  // the overrides); empty = the scenario's own.
  std::string model_config;
  std::string config_dir;                  // presets; empty = ConfigDir()

  static ScenarioInput File(std::string path, std::vector<std::string> overrides = {});
  static ScenarioInput Yaml(std::string text, std::vector<std::string> overrides = {});
  static ScenarioInput Loaded(engine::Scenario s, std::vector<std::string> overrides = {});
};

// The presets folder: $ORRERY_CONFIG_DIR when set, else share/orrery/configs
// beside an installed binary (<prefix>/bin/../share/orrery/configs), else the
// configs/ of the source tree the library was built from.
std::string ConfigDir();

// Loads the scenario and applies its overrides (no cross-check: verbs check
// what they need). nullopt with located diagnostics on error.
std::optional<engine::Scenario> ResolveScenario(const ScenarioInput& in, base::Diagnostics& diags);

}  // namespace orrery
