#pragma once
// The parameter registry for a face that edits a scenario (the GUI's form, a
// user's own editor): every key of a scenario as a field, its value as text,
// a typed value checked against its declaration with the text `orrery check`
// prints, and a scenario rebuilt from preset picks and typed values with the
// error of each field. The registry itself is core/estimate/scenario.h
// (Registry()); `orrery explain` documents every key.
//
//   orrery::ScenarioEdit e;
//   e.base = *orrery::ResolveScenario(orrery::ScenarioInput::File("gpt3-175b-a100"), diags);
//   e.sets = {{"training.tp", "4"}, {"system.device.memory_capacity", "80"}};
//   orrery::EditedScenario r = orrery::ApplyEdits(e);
//   // r.field_errors["system.device.memory_capacity"] says that the value
//   // needs a unit, in the words `orrery check` uses

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/api/common.h"
#include "core/base/param.h"

namespace orrery {

// One registry key of a scenario: network tiers are expanded per tier
// (section "system.network[1]", path "system.network[1].bandwidth").
struct ParamField {
  std::string section;  // "model", "system.device", "system.network[1]", ...
  std::string path;     // "model.hidden"
  base::ParamInfo info;
};
// Every key of `s` in registry order (the `prices` section, which belongs
// to `orrery network` and not to a scenario, is left out).
std::vector<ParamField> ParamFields(const engine::Scenario& s);
// The declaration of a path ("system.network[2].bandwidth" finds the tier
// key); nullptr when the registry has no such key.
const base::ParamInfo* FindParam(const std::string& path);
// The value of `path` in `s` as a preset writes it ("" when unknown). An
// absent inference section shows its defaults.
std::string ParamValueText(const engine::Scenario& s, const std::string& path);
// "" when `text` is a valid value of `path`; else the error as `orrery check`
// prints it, without the file and line a form field does not have:
// "path: rule (got 'text'); did you mean ...".
std::string CheckParamText(const std::string& path, const std::string& text);
// The SI value of a numeric key's text ("400 Gb/s" -> 5e10 bytes/s); NaN for
// a text that does not parse or a key that is not a number.
double ParamSiValue(const std::string& path, const std::string& text);

// A scenario with model and system presets picked in place of its own and
// values typed for registry paths, in the order they were typed.
struct ScenarioEdit {
  engine::Scenario base;                                  // as loaded
  std::string model_preset, system_preset;                // "" = keep the base's
  std::vector<std::pair<std::string, std::string>> sets;  // path, value text
  std::string config_dir;                                 // presets; empty = ConfigDir()
};

struct EditedScenario {
  std::optional<engine::Scenario> scenario;         // picks and edits applied (bad edits skipped)
  std::map<std::string, std::string> field_errors;  // registry path -> error text (as CheckParamText)
  std::vector<std::string> errors;                  // errors no field owns (a bad preset pick)
  bool ok() const { return scenario.has_value() && field_errors.empty() && errors.empty(); }
};
// Applies the picks and edits, then the cross-checks of `orrery check`
// (TP x PP x DP x CP against the devices, heads against TP, ...), each error
// at the field it names when the form has that field.
EditedScenario ApplyEdits(const ScenarioEdit& edit);

// The registry values that turn `from` into `to` (path, value text), in
// registry order: e.g. a searched plan as overrides of the scenario searched.
std::vector<std::pair<std::string, std::string>> OverridesBetween(const engine::Scenario& from,
                                                                  const engine::Scenario& to);

// One line and the source: "gpt3-175b: 96 layers, hidden 12288, 96 heads,
// vocab 50257, 175 B params\nsource: Brown et al. 2020 ...".
std::string DescribeModel(const engine::Scenario& s);
// "NAME: N x D DEVICE (devices), memory at bandwidth, bf16 peak", the tiers,
// and the system's and device's sources.
std::string DescribeSystem(const engine::Scenario& s);

}  // namespace orrery
