#include "core/api/common.h"

#include <utility>

#include "models/hf_config.h"

namespace orrery {

const char* StatusName(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kInvalidInput: return "invalid_input";
    case Status::kUsage: return "usage";
    case Status::kInfeasible: return "infeasible";
    case Status::kCancelled: return "cancelled";
  }
  return "unknown";
}

ScenarioInput ScenarioInput::File(std::string path, std::vector<std::string> overrides) {
  ScenarioInput in;
  in.file = std::move(path);
  in.overrides = std::move(overrides);
  return in;
}

ScenarioInput ScenarioInput::Yaml(std::string text, std::vector<std::string> overrides) {
  ScenarioInput in;
  in.yaml = std::move(text);
  in.overrides = std::move(overrides);
  return in;
}

ScenarioInput ScenarioInput::Loaded(engine::Scenario s, std::vector<std::string> overrides) {
  ScenarioInput in;
  in.loaded = std::move(s);
  in.overrides = std::move(overrides);
  return in;
}

std::string ConfigDir() { return engine::PresetStore::DefaultConfigDir(); }

std::optional<engine::Scenario> ResolveScenario(const ScenarioInput& in, base::Diagnostics& diags) {
  const engine::PresetStore store(in.config_dir.empty() ? ConfigDir() : in.config_dir);
  const int given = !in.file.empty() + !in.yaml.empty() + in.loaded.has_value();
  if (given != 1) {
    diags.Add({"", 0, 0}, "scenario", "",
              given == 0 ? "no scenario given (a file, YAML text or a loaded scenario)"
                         : "give one scenario: a file, YAML text or a loaded scenario, not several");
    return std::nullopt;
  }
  std::optional<engine::Scenario> s;
  if (in.loaded) s = *in.loaded;
  else if (!in.yaml.empty()) s = engine::LoadScenarioText(in.yaml, "<scenario text>", store, diags);
  else s = engine::LoadScenarioFile(in.file, store, diags);
  if (!s) return std::nullopt;
  if (!in.model_config.empty()) {
    const std::string name = models::IsHfConfigPath(in.model_config) ? in.model_config : "hf:" + in.model_config;
    if (!engine::LoadModelPreset(name, store, {"--model-config", 0, 0}, "model", s->model, diags))
      return std::nullopt;
  }
  for (const std::string& o : in.overrides) engine::ApplyOverride(*s, o, diags);
  if (!diags.ok()) return std::nullopt;
  return s;
}

}  // namespace orrery
