#include "core/api/registry.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "core/base/quantity.h"
#include "models/transformer.h"

namespace orrery {

namespace {

// "path: rule (got 'value'); hint": a diagnostic as `orrery check` prints it,
// without the file and line a form field does not have.
std::string FieldText(const base::Diagnostic& d) {
  const std::string full = d.ToString();
  const size_t at = full.find(": error: ");
  return at == std::string::npos ? full : full.substr(at + 9);
}

// An error no field owns: with its file, line and column when it points
// into another file (a preset, a config.json), since that is where to look.
std::string ElsewhereText(const base::Diagnostic& d, const std::string& scenario_file) {
  const bool elsewhere = d.where.line > 0 || (!d.where.file.empty() && d.where.file != scenario_file);
  return elsewhere ? d.ToString() : FieldText(d);
}

// Registry path of a diagnostic ("scenario.training.tp" -> "training.tp").
std::string RegistryPath(const std::string& path) {
  const std::string prefix = "scenario.";
  return path.rfind(prefix, 0) == 0 ? path.substr(prefix.size()) : path;
}

const std::vector<engine::RegistrySection>& Sections() {
  static const std::vector<engine::RegistrySection> registry = engine::Registry();
  return registry;
}

}  // namespace

std::vector<ParamField> ParamFields(const engine::Scenario& s) {
  std::vector<ParamField> out;
  for (const auto& sec : Sections()) {
    if (sec.prefix == "prices") continue;  // the network verb's, not a scenario's
    // Heterogeneous-system keys only where the system has pools, once per pool.
    if (sec.prefix == "hetero" && s.system.pools.empty()) continue;
    if (sec.prefix == "system.pools[i]") {
      for (size_t i = 0; i < s.system.pools.size(); ++i) {
        const std::string prefix = "system.pools[" + std::to_string(i) + "]";
        for (const auto& p : sec.params) out.push_back({prefix, prefix + "." + p.key, p});
      }
      continue;
    }
    if (sec.prefix == "system.network[i]") {
      for (size_t i = 0; i < s.system.network.size(); ++i) {
        const std::string prefix = "system.network[" + std::to_string(i) + "]";
        for (const auto& p : sec.params) out.push_back({prefix, prefix + "." + p.key, p});
      }
      continue;
    }
    for (const auto& p : sec.params) out.push_back({sec.prefix, sec.prefix + "." + p.key, p});
  }
  return out;
}

const base::ParamInfo* FindParam(const std::string& path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos) return nullptr;
  std::string section = path.substr(0, dot);
  const std::string key = path.substr(dot + 1);
  if (section.rfind("system.network[", 0) == 0) section = "system.network[i]";
  if (section.rfind("system.pools[", 0) == 0) section = "system.pools[i]";
  for (const auto& sec : Sections())
    if (sec.prefix == section)
      for (const auto& p : sec.params)
        if (p.key == key) return &p;
  return nullptr;
}

std::string ParamValueText(const engine::Scenario& s, const std::string& path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos) return {};
  const std::string section = path.substr(0, dot), key = path.substr(dot + 1);
  if (section == "model") return models::ModelSchema().GetText(s.model, key);
  if (section == "system") return hardware::SystemSchema().GetText(s.system, key);
  if (section == "system.device") return hardware::DeviceSchema().GetText(s.system.device, key);
  if (section == "system.reliability")
    return hardware::ReliabilitySchema().GetText(s.system.reliability, key);
  if (section == "system.storage") return hardware::StorageSchema().GetText(s.system.storage, key);
  if (section == "system.host") return hardware::HostSchema().GetText(s.system.host, key);
  if (section == "training") return parallelism::TrainingPlanSchema().GetText(s.training, key);
  if (section == "workload") return parallelism::WorkloadSchema().GetText(s.workload, key);
  if (section == "inference") {
    if (s.inference) return parallelism::InferenceDeploymentSchema().GetText(*s.inference, key);
    parallelism::InferenceDeployment d;
    parallelism::InferenceDeploymentSchema().ApplyDefaults(d);
    return parallelism::InferenceDeploymentSchema().GetText(d, key);
  }
  if (section == "hetero") return parallelism::HeteroPlanSchema().GetText(s.hetero, key);
  if (section.rfind("system.pools[", 0) == 0) {
    const size_t i = std::strtoul(section.c_str() + 13, nullptr, 10);
    if (i < s.system.pools.size())
      return hardware::DevicePoolSchema().GetText(s.system.pools[i], key);
  }
  if (section.rfind("system.network[", 0) == 0) {
    const size_t i = std::strtoul(section.c_str() + 15, nullptr, 10);
    if (i < s.system.network.size())
      return hardware::NetworkTierSchema().GetText(s.system.network[i], key);
  }
  return {};
}

std::string CheckParamText(const std::string& path, const std::string& text) {
  base::Diagnostic d;
  d.path = path;
  d.value = text;
  const base::ParamInfo* info = FindParam(path);
  if (info == nullptr) {
    d.message = "unknown key (orrery explain lists the keys)";
    return FieldText(d);
  }
  base::ParamValue v;
  d.message = base::ParseParam(*info, text, v, d.hint);
  return d.message.empty() ? std::string() : FieldText(d);
}

double ParamSiValue(const std::string& path, const std::string& text) {
  const base::ParamInfo* info = FindParam(path);
  base::ParamValue v;
  std::string hint;
  if (info != nullptr && info->type != base::ParamType::kString &&
      base::ParseParam(*info, text, v, hint).empty())
    return v.number;
  return std::numeric_limits<double>::quiet_NaN();
}

EditedScenario ApplyEdits(const ScenarioEdit& edit) {
  EditedScenario out;
  const engine::PresetStore store(edit.config_dir.empty() ? ConfigDir() : edit.config_dir);
  engine::Scenario s = edit.base;
  base::Diagnostics d;
  const base::SourceLocation here{s.file, 0, 0};
  if (!edit.model_preset.empty())
    engine::LoadModelPreset(edit.model_preset, store, here, "scenario.model", s.model, d);
  if (!edit.system_preset.empty())
    engine::LoadSystemPreset(edit.system_preset, store, here, "scenario.system", s.system, d);
  for (const auto& item : d.items()) out.errors.push_back(ElsewhereText(item, s.file));
  for (const auto& [path, text] : edit.sets) {
    base::Diagnostics one;
    const base::SourceLocation where{"", 0, 0};
    if (!engine::ApplyOverride(s, path + "=" + text, one, &where) && one.size() > 0)
      out.field_errors[path] = FieldText(one.items().front());
  }
  base::Diagnostics draft;
  if (s.inference) engine::LoadDraftModel(s, store, draft);
  for (const auto& item : draft.items()) out.errors.push_back(ElsewhereText(item, s.file));
  if (out.field_errors.empty()) {
    base::Diagnostics cross;
    engine::CrossCheck(s, cross);
    for (const auto& item : cross.items()) {
      const std::string path = RegistryPath(item.path);
      if (!path.empty() && !out.field_errors.count(path)) out.field_errors[path] = FieldText(item);
      else out.errors.push_back(FieldText(item));
    }
  }
  out.scenario = std::move(s);
  return out;
}

std::vector<std::pair<std::string, std::string>> OverridesBetween(const engine::Scenario& from,
                                                                  const engine::Scenario& to) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ParamField& f : ParamFields(to)) {
    const std::string now = ParamValueText(to, f.path);
    if (now != ParamValueText(from, f.path)) out.emplace_back(f.path, now);
  }
  return out;
}

std::string DescribeModel(const engine::Scenario& s) {
  const auto& m = s.model;
  std::ostringstream os;
  os << m.name << ": " << m.layers << " layers, hidden " << m.hidden << ", " << m.heads << " heads";
  if (models::KvHeads(m) != m.heads) os << " (" << models::KvHeads(m) << " KV)";
  if (m.experts > 1) os << ", " << m.experts << " experts top-" << m.top_k;
  os << ", vocab " << m.vocab;
  if (m.published_params > 0) os << ", " << base::FormatNumber(m.published_params / 1e9, 4) << " B params";
  if (!m.citation.empty()) os << "\nsource: " << m.citation;
  return os.str();
}

std::string DescribeSystem(const engine::Scenario& s) {
  const auto& sys = s.system;
  const auto& d = sys.device;
  std::ostringstream os;
  os << sys.name << ": " << sys.nodes << " x " << sys.devices_per_node << " " << d.name << " ("
     << hardware::DeviceCount(sys) << " devices), "
     << base::FormatQuantity(d.memory_capacity, base::Dimension::kBytes) << " at "
     << base::FormatQuantity(d.memory_bandwidth, base::Dimension::kBandwidth) << ", bf16 "
     << base::FormatQuantity(d.peak_bf16, base::Dimension::kFlopRate);
  for (const auto& t : sys.network)
    os << "\n  tier " << t.name << ": " << hardware::TopologyName(t.topology) << ", "
       << base::FormatQuantity(t.bandwidth, base::Dimension::kBandwidth);
  if (!sys.citation.empty()) os << "\nsystem source: " << sys.citation;
  if (!d.citation.empty()) os << "\ndevice source: " << d.citation;
  return os.str();
}

}  // namespace orrery
