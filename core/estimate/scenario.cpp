#include "core/estimate/scenario.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "core/base/text_check.h"
#include "core/base/yaml_source.h"
#include "core/estimate/parallel_comm.h"
#include "parallelism/schedule.h"
#include "hardware/cost_model.h"
#include "hardware/topology.h"
#include "models/hf_config.h"

#ifndef ORRERY_CONFIG_DIR_DEFAULT
#define ORRERY_CONFIG_DIR_DEFAULT "configs"
#endif

namespace orrery::engine {

namespace fs = std::filesystem;
using base::Diagnostics;
using base::SourceLocation;

const char* DocKindName(DocKind k) {
  switch (k) {
    case DocKind::kDevice: return "device";
    case DocKind::kSystem: return "system";
    case DocKind::kModel: return "model";
    case DocKind::kScenario: return "scenario";
  }
  return "?";
}

const char* DocKindFolder(DocKind k) {
  switch (k) {
    case DocKind::kDevice: return "devices";
    case DocKind::kSystem: return "systems";
    case DocKind::kModel: return "models";
    case DocKind::kScenario: return "scenarios";
  }
  return "?";
}

std::string PresetStore::DefaultConfigDir() {
  if (const char* env = std::getenv("ORRERY_CONFIG_DIR"); env != nullptr && *env != 0) return env;
  // An installed binary: <prefix>/bin/orrery finds <prefix>/share/orrery/configs.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "orrery" / "configs";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return ORRERY_CONFIG_DIR_DEFAULT;
}

std::vector<std::string> PresetStore::Names(DocKind kind) const {
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path folder = fs::path(dir_) / DocKindFolder(kind);
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".yaml") out.push_back(it->path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string PresetStore::PathOf(DocKind kind, const std::string& name) const {
  if (name.empty() || name.find('/') != std::string::npos || name.find("..") != std::string::npos)
    return {};
  const fs::path p = fs::path(dir_) / DocKindFolder(kind) / (name + ".yaml");
  std::error_code ec;
  return fs::is_regular_file(p, ec) ? p.string() : std::string();
}

namespace {

// Reads a file whose single top-level key must be `kind`; returns the map.
std::optional<YAML::Node> DocOf(const std::optional<YAML::Node>& root, const std::string& file,
                                DocKind kind, Diagnostics& diags) {
  if (!root) return std::nullopt;
  const char* key = DocKindName(kind);
  if (!root->IsMap() || !(*root)[key]) {
    diags.Add(base::LocationOf(*root, file), "", "",
              std::string("expected a document with the top-level key '") + key + "'");
    return std::nullopt;
  }
  for (const auto& kv : *root) {
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (k != key)
      diags.Add(base::LocationOf(kv.first, file), k, "",
                std::string("unexpected top-level key next to '") + key + "'",
                base::DidYouMean(k, {key}));
  }
  return (*root)[key];
}

std::optional<YAML::Node> LoadDoc(const std::string& file, DocKind kind, Diagnostics& diags) {
  return DocOf(base::LoadYamlFile(file, diags), file, kind, diags);
}

template <class Spec, class LoadFn>
bool LoadPreset(DocKind kind, const std::string& name, const PresetStore& store,
                const SourceLocation& where, const std::string& path, Spec& out,
                Diagnostics& diags, LoadFn load) {
  const std::optional<PresetName> resolved = store.Resolve(kind, name);
  if (!resolved) {
    std::string hint = store.CloseTo(kind, name);
    if (hint.empty()) hint = "see 'orrery presets list'";
    diags.Add(where, path, name, std::string("unknown ") + DocKindName(kind) + " preset", hint);
    return false;
  }
  const std::string file = store.PathOf(kind, resolved->preset);
  const size_t before = diags.size();
  auto map = LoadDoc(file, kind, diags);
  if (!map) return false;
  load(*map, std::string(DocKindName(kind)), file, out);
  return diags.size() == before;
}

}  // namespace

namespace {

// A chain of `like:` presets longer than this is refused (it is a cycle, or
// a chain no reader could follow).
constexpr int kMaxLikeDepth = 4;

void LoadDeviceMapAt(const YAML::Node& map, const std::string& path, const std::string& file,
                     hardware::DeviceSpec& out, Diagnostics& diags, const PresetStore* store,
                     int depth);

bool LoadDevicePresetAt(const std::string& name, const PresetStore& store, const SourceLocation& where,
                        const std::string& path, hardware::DeviceSpec& out, Diagnostics& diags,
                        int depth) {
  return LoadPreset(DocKind::kDevice, name, store, where, path, out, diags,
                    [&](const YAML::Node& m, const std::string& p, const std::string& f,
                        hardware::DeviceSpec& o) { LoadDeviceMapAt(m, p, f, o, diags, &store, depth); });
}

// `like: PRESET` (a device that differs from a preset in a few figures: the
// H800 is the H100 with fewer NVLink links): the preset's values first, then
// the keys this map states. The naming keys (name, aliases,
// reference_system) are never taken over: a derived device states its own
// `name:`.
void LoadDeviceMapAt(const YAML::Node& map, const std::string& path, const std::string& file,
                     hardware::DeviceSpec& out, Diagnostics& diags, const PresetStore* store,
                     int depth) {
  bool over_base = false;
  const YAML::Node like = map.IsMap() ? map["like"] : YAML::Node();
  if (like) {
    const SourceLocation at = base::LocationOf(like, file);
    if (!like.IsScalar()) {
      diags.Add(at, path + ".like", "", std::string("expected a device preset name, got a ") +
                                            base::NodeKindName(like));
    } else if (depth >= kMaxLikeDepth) {
      diags.Add(at, path + ".like", like.Scalar(),
                "more than " + std::to_string(kMaxLikeDepth) +
                    " presets deep in `like:` (does a preset name itself through the chain?)");
    } else {
      const PresetStore fallback(store ? std::string() : PresetStore::DefaultConfigDir());
      const size_t before = diags.size();
      LoadDevicePresetAt(like.Scalar(), store ? *store : fallback, at, path + ".like", out, diags,
                         depth + 1);
      over_base = diags.size() == before;
      if (over_base && !map["name"])
        diags.Add(base::LocationOf(map, file), path + ".name", "",
                  "a device written `like: " + like.Scalar() +
                      "` states its own name (the preset's would be shown for it)");
    }
    if (!over_base) return;
  }
  std::vector<std::string> extra = PresetNamingKeys(DocKind::kDevice);
  extra.emplace_back("like");
  hardware::ParseDevice(map, path, file, out, diags, extra, over_base);
  CheckPresetNaming(map, DocKind::kDevice, path, file, diags);
  hardware::CheckDevice(out, path, base::LocationOf(map, file), diags);
}

}  // namespace

void LoadDeviceMap(const YAML::Node& map, const std::string& path, const std::string& file,
                   hardware::DeviceSpec& out, Diagnostics& diags, const PresetStore* store) {
  LoadDeviceMapAt(map, path, file, out, diags, store, 0);
}

void LoadModelMap(const YAML::Node& map, const std::string& path, const std::string& file,
                  models::ModelSpec& out, Diagnostics& diags) {
  models::ModelSchema().Parse(map, path, file, out, diags, PresetNamingKeys(DocKind::kModel));
  CheckPresetNaming(map, DocKind::kModel, path, file, diags);
  models::CheckModel(out, path, base::LocationOf(map, file), diags);
}

namespace {

void LoadSystemMapAt(const YAML::Node& map, const std::string& path, const std::string& file,
                     const PresetStore& store, hardware::SystemSpec& out, Diagnostics& diags,
                     int depth);

// `like: PRESET` for a system (a cluster that is a preset with more nodes or
// other NICs): that preset first, then the keys the map states; the naming
// keys are never taken over, the map states its own `name:`.
bool LikeBase(const YAML::Node& map, const std::string& path, const std::string& file,
              const PresetStore& store, hardware::SystemSpec& out, Diagnostics& diags, int depth) {
  const YAML::Node like = map.IsMap() ? map["like"] : YAML::Node();
  const SourceLocation at = base::LocationOf(like, file);
  if (!like.IsScalar()) {
    diags.Add(at, path + ".like", "", std::string("expected a system preset name, got a ") +
                                          base::NodeKindName(like));
    return false;
  }
  if (depth >= kMaxLikeDepth) {
    diags.Add(at, path + ".like", like.Scalar(),
              "more than " + std::to_string(kMaxLikeDepth) +
                  " presets deep in `like:` (does a preset name itself through the chain?)");
    return false;
  }
  const size_t before = diags.size();
  LoadPreset(DocKind::kSystem, like.Scalar(), store, at, path + ".like", out, diags,
             [&](const YAML::Node& m, const std::string& p, const std::string& f, hardware::SystemSpec& o) {
               LoadSystemMapAt(m, p, f, store, o, diags, depth + 1);
             });
  if (diags.size() != before) return false;
  if (!map["name"]) {
    diags.Add(base::LocationOf(map, file), path + ".name", "",
              "a system written `like: " + like.Scalar() +
                  "` states its own name (the preset's would be shown for it)");
    return false;
  }
  return true;
}

void LoadSystemMapAt(const YAML::Node& map, const std::string& path, const std::string& file,
                     const PresetStore& store, hardware::SystemSpec& out, Diagnostics& diags,
                     int depth) {
  const bool like = map.IsMap() && map["like"];
  if (like && !LikeBase(map, path, file, store, out, diags, depth)) return;
  std::vector<std::string> extra = PresetNamingKeys(DocKind::kSystem);
  extra.emplace_back("like");
  hardware::ParseSystem(map, path, file, out, diags, extra, like);
  CheckPresetNaming(map, DocKind::kSystem, path, file, diags);
  if (!map.IsMap()) return;
  const YAML::Node dev = map["device"];
  if (!dev && like) {
    // The base's device.
  } else if (!dev) {
    diags.Add(base::LocationOf(map, file), path + ".device", "",
              "required key is missing (a device preset name or a device map)");
  } else if (dev.IsScalar()) {
    const auto resolved = store.Resolve(DocKind::kDevice, dev.Scalar());
    out.device_preset = resolved ? resolved->preset : dev.Scalar();
    LoadDevicePreset(dev.Scalar(), store, base::LocationOf(dev, file), path + ".device",
                     out.device, diags);
  } else {
    out.device_preset.clear();  // an inline device, not the base's preset
    LoadDeviceMap(dev, path + ".device", file, out.device, diags, &store);
  }
  // The devices of further pools (heterogeneous systems), as the system's own.
  if (const YAML::Node pools = map["pools"]; pools && pools.IsSequence()) {
    for (size_t i = 0; i < pools.size() && i < out.pools.size(); ++i) {
      const std::string at = path + ".pools[" + std::to_string(i) + "]";
      hardware::DevicePool& pool = out.pools[i];
      const YAML::Node pd = pools[i].IsMap() ? pools[i]["device"] : YAML::Node();
      if (!pd) {
        diags.Add(base::LocationOf(pools[i], file), at + ".device", "",
                  "required key is missing (a device preset name or a device map)");
      } else if (pd.IsScalar()) {
        const auto resolved = store.Resolve(DocKind::kDevice, pd.Scalar());
        pool.device_preset = resolved ? resolved->preset : pd.Scalar();
        LoadDevicePreset(pd.Scalar(), store, base::LocationOf(pd, file), at + ".device",
                         pool.device, diags);
      } else {
        LoadDeviceMap(pd, at + ".device", file, pool.device, diags, &store);
      }
    }
  }
  hardware::CheckSystem(out, path, base::LocationOf(map, file), diags);
}

}  // namespace

void LoadSystemMap(const YAML::Node& map, const std::string& path, const std::string& file,
                   const PresetStore& store, hardware::SystemSpec& out, Diagnostics& diags) {
  LoadSystemMapAt(map, path, file, store, out, diags, 0);
}

bool LoadDevicePreset(const std::string& name, const PresetStore& store, const SourceLocation& where,
                      const std::string& path, hardware::DeviceSpec& out, Diagnostics& diags) {
  return LoadDevicePresetAt(name, store, where, path, out, diags, 0);
}

bool LoadSystemPreset(const std::string& name, const PresetStore& store, const SourceLocation& where,
                      const std::string& path, hardware::SystemSpec& out, Diagnostics& diags) {
  return LoadPreset(DocKind::kSystem, name, store, where, path, out, diags,
                    [&](const YAML::Node& m, const std::string& p, const std::string& f,
                        hardware::SystemSpec& o) { LoadSystemMap(m, p, f, store, o, diags); });
}

bool LoadModelPreset(const std::string& name, const PresetStore& store, const SourceLocation& where,
                     const std::string& path, models::ModelSpec& out, Diagnostics& diags) {
  if (models::IsHfConfigPath(name)) {
    // A Hugging Face config.json: as written, else beside the file naming it.
    std::error_code ec;
    std::string file = models::HfConfigFile(name);
    if (!fs::exists(file, ec) && !where.file.empty()) {
      const fs::path beside = fs::path(where.file).parent_path() / models::HfConfigFile(name);
      if (fs::exists(beside, ec)) file = beside.string();
    }
    if (!fs::exists(file, ec)) {
      diags.Add(where, path, name, "model config file not found");
      return false;
    }
    return models::ReadHfConfig(file, out, diags);
  }
  return LoadPreset(DocKind::kModel, name, store, where, path, out, diags,
                    [&](const YAML::Node& m, const std::string& p, const std::string& f,
                        models::ModelSpec& o) { LoadModelMap(m, p, f, o, diags); });
}

namespace {

const std::vector<std::string>& ScenarioKeys() {
  static const std::vector<std::string> keys = {"name", "model", "system", "training", "workload",
                                                "set", "inference", "hetero"};
  return keys;
}

// Where `key` lives when it is not in `section` but in another section of
// the registry ("workload.global_batch" for training.global_batch), or
// empty. A key one section off is a common slip that edit distance over
// the section's own keys cannot catch.
std::string OtherSectionPath(const std::string& section, const std::string& key) {
  for (const auto& sec : Registry()) {
    if (sec.prefix == section) continue;
    for (const auto& p : sec.params)
      if (p.key == key) {
        std::string prefix = sec.prefix;
        if (const size_t i = prefix.find("[i]"); i != std::string::npos) prefix.replace(i, 3, "[0]");
        return prefix + "." + key;
      }
  }
  return "";
}

// The same for a diagnostic "unknown key in SECTION" at PATH (YAML path
// "scenario.training.global_batch" or --set path "training.global_batch")
// that has no hint: the key's home, when another section has it.
void HintOtherSection(base::Diagnostic& d) {
  const std::string lead = "unknown key in ";
  if (!d.hint.empty() || d.message.rfind(lead, 0) != 0) return;
  std::string path = d.path;
  if (path.rfind("scenario.", 0) == 0) path = path.substr(9);
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos) return;
  const std::string other = OtherSectionPath(path.substr(0, dot), path.substr(dot + 1));
  if (!other.empty()) d.hint = "did you mean '" + other + "'?";
}

void LoadScenarioMap(const YAML::Node& map, const std::string& file, const PresetStore& store,
                     Scenario& s, Diagnostics& diags) {
  s.file = file;
  if (!map.IsMap()) {
    diags.Add(base::LocationOf(map, file), "scenario", "",
              std::string("expected a map, got a ") + base::NodeKindName(map));
    return;
  }
  for (const auto& kv : map) {
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (std::find(ScenarioKeys().begin(), ScenarioKeys().end(), k) == ScenarioKeys().end())
      diags.Add(base::LocationOf(kv.first, file), "scenario." + k, "", "unknown key in scenario",
                base::DidYouMean(k, ScenarioKeys()));
  }
  if (const YAML::Node n = map["name"]; n && n.IsScalar()) s.name = n.Scalar();
  auto section = [&](const char* key) -> YAML::Node {
    const YAML::Node n = map[key];
    if (!n)
      diags.Add(base::LocationOf(map, file), std::string("scenario.") + key, "",
                "required key is missing");
    return n;
  };
  if (const YAML::Node m = section("model")) {
    if (m.IsScalar())
      LoadModelPreset(m.Scalar(), store, base::LocationOf(m, file), "scenario.model", s.model, diags);
    else
      LoadModelMap(m, "scenario.model", file, s.model, diags);
  }
  if (const YAML::Node m = section("system")) {
    if (m.IsScalar())
      LoadSystemPreset(m.Scalar(), store, base::LocationOf(m, file), "scenario.system", s.system,
                       diags);
    else
      LoadSystemMap(m, "scenario.system", file, store, s.system, diags);
  }
  // `training` and `workload` may be left out of a serving scenario (`inference:`).
  s.has_training = !(map["inference"] && !map["training"]);
  const size_t plan_diags = diags.size();
  if (s.has_training) {
    if (const YAML::Node m = section("training"))
      parallelism::TrainingPlanSchema().Parse(m, "scenario.training", file, s.training, diags);
    if (const YAML::Node m = section("workload"))
      parallelism::WorkloadSchema().Parse(m, "scenario.workload", file, s.workload, diags);
  }
  if (const YAML::Node m = map["hetero"])
    parallelism::ParseHeteroPlan(m, "scenario.hetero", file, s.hetero, diags);
  if (const YAML::Node m = map["inference"]) {
    s.inference.emplace();
    parallelism::InferenceDeploymentSchema().Parse(m, "scenario.inference", file, *s.inference,
                                                   diags);
  }
  for (size_t i = plan_diags; i < diags.size(); ++i) HintOtherSection(diags.items()[i]);
  // `set:` adjusts presets in place, with the same paths as --set, e.g.
  //   set: {system.nodes: 128, system.device.memory_capacity: 141 GB}
  if (const YAML::Node set = map["set"]) {
    if (!set.IsMap()) {
      diags.Add(base::LocationOf(set, file), "scenario.set", "",
                "expected a map of parameter paths to values, e.g. {system.nodes: 128}");
    } else {
      for (const auto& kv : set) {
        const SourceLocation where = base::LocationOf(kv.second, file);
        if (!kv.first.IsScalar() || !kv.second.IsScalar()) {
          diags.Add(where, "scenario.set", "", "expected 'path: value' with a single value");
          continue;
        }
        ApplyOverride(s, kv.first.Scalar() + "=" + kv.second.Scalar(), diags, &where);
      }
    }
  }
  LoadDraftModel(s, store, diags);
}

}  // namespace

std::optional<Scenario> LoadScenarioFile(const std::string& file, const PresetStore& store,
                                         Diagnostics& diags) {
  std::string path = file;
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    const std::string preset = store.PathOf(DocKind::kScenario, file);
    if (!preset.empty()) path = preset;
  }
  const size_t before = diags.size();
  auto map = LoadDoc(path, DocKind::kScenario, diags);
  if (!map) return std::nullopt;
  Scenario s;
  LoadScenarioMap(*map, path, store, s, diags);
  if (diags.size() != before) return std::nullopt;
  return s;
}

std::optional<Scenario> LoadScenarioText(const std::string& text, const std::string& label,
                                         const PresetStore& store, Diagnostics& diags) {
  const size_t before = diags.size();
  auto map = DocOf(base::ParseYamlText(text, label, diags), label, DocKind::kScenario, diags);
  if (!map) return std::nullopt;
  Scenario s;
  LoadScenarioMap(*map, label, store, s, diags);
  if (diags.size() != before) return std::nullopt;
  return s;
}

bool LoadDraftModel(Scenario& s, const PresetStore& store, Diagnostics& diags) {
  s.draft_model.reset();
  if (!s.inference || s.inference->draft_model.empty()) return true;
  models::ModelSpec draft;
  if (!LoadModelPreset(s.inference->draft_model, store, {s.file, 0, 0}, "inference.draft_model",
                       draft, diags))
    return false;
  s.draft_model = draft;
  return true;
}

namespace {

// The preset folder's store, one per folder for the process: its name index
// parses every preset file once, and a sweep applies overrides per point.
const PresetStore& StoreFor(const std::string& dir) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<PresetStore>> stores;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = stores[dir];
  if (!slot) slot = std::make_unique<PresetStore>(dir);
  return *slot;
}

bool SwapPreset(Scenario& s, const std::string& path, const std::string& value,
                const SourceLocation& where, Diagnostics& diags) {
  const PresetStore& store = StoreFor(PresetStore::DefaultConfigDir());
  if (path == "model") {
    models::ModelSpec m;
    if (!LoadModelPreset(value, store, where, path, m, diags)) return false;
    s.model = std::move(m);
    return true;
  }
  if (path == "system") {
    hardware::SystemSpec sys;
    if (!LoadSystemPreset(value, store, where, path, sys, diags)) return false;
    s.system = std::move(sys);
    return true;
  }
  hardware::DeviceSpec d;
  if (!LoadDevicePreset(value, store, where, path, d, diags)) return false;
  s.system.device = std::move(d);
  const auto resolved = store.Resolve(DocKind::kDevice, value);
  s.system.device_preset = resolved ? resolved->preset : value;
  return true;
}

}  // namespace

bool IsPresetPath(const std::string& path) {
  return path == "model" || path == "system" || path == "system.device";
}

namespace {
// One PATH=VALUE into its section's schema (ApplyOverride, after the checks
// of the whole assignment).
bool ApplySectionOverride(Scenario& s, const std::string& path, const std::string& value,
                          const SourceLocation& where, Diagnostics& diags);
}  // namespace

bool ApplyOverride(Scenario& s, const std::string& assignment, Diagnostics& diags,
                   const SourceLocation* at) {
  if (const size_t bad = base::FindInvalidUtf8(assignment); bad != std::string_view::npos) {
    // Names reach JSON output, which holds only UTF-8; do not echo the bytes.
    diags.Add(at != nullptr ? *at : SourceLocation{"--set", 0, 0}, "", "",
              "not UTF-8 text (invalid byte at offset " + std::to_string(bad) + ")");
    return false;
  }
  const SourceLocation where = at != nullptr ? *at : SourceLocation{"--set " + assignment, 0, 0};
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    diags.Add(where, "", assignment, "expected PATH=VALUE, e.g. training.tp=8");
    return false;
  }
  const std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  // A whole preset by name: `model=llama3-8b`, `system=dgx-b200`,
  // `system.device=H200` (any name or alias the presets declare; a sweep can
  // run over them). Later overrides adjust the new preset.
  if (IsPresetPath(path)) return SwapPreset(s, path, value, where, diags);
  const size_t before = diags.size();
  const bool ok = ApplySectionOverride(s, path, value, where, diags);
  for (size_t i = before; i < diags.size(); ++i) HintOtherSection(diags.items()[i]);
  return ok;
}

namespace {

bool ApplySectionOverride(Scenario& s, const std::string& path, const std::string& value,
                          const SourceLocation& where, Diagnostics& diags) {
  const size_t dot = path.rfind('.');
  const std::string section = dot == std::string::npos ? "" : path.substr(0, dot);
  const std::string key = dot == std::string::npos ? path : path.substr(dot + 1);
  if (section == "model") return models::ModelSchema().SetText(s.model, key, value, where, path, diags);
  if (section == "system")
    return hardware::SystemSchema().SetText(s.system, key, value, where, path, diags);
  if (section == "system.device")
    return hardware::DeviceSchema().SetText(s.system.device, key, value, where, path, diags);
  if (section == "system.reliability")
    return hardware::ReliabilitySchema().SetText(s.system.reliability, key, value, where, path,
                                                 diags);
  if (section == "system.storage")
    return hardware::StorageSchema().SetText(s.system.storage, key, value, where, path, diags);
  if (section == "system.host")
    return hardware::HostSchema().SetText(s.system.host, key, value, where, path, diags);
  if (section == "training")
    return parallelism::TrainingPlanSchema().SetText(s.training, key, value, where, path, diags);
  if (section == "workload")
    return parallelism::WorkloadSchema().SetText(s.workload, key, value, where, path, diags);
  if (section == "inference") {
    if (!s.inference) {
      s.inference.emplace();
      parallelism::InferenceDeploymentSchema().ApplyDefaults(*s.inference);
    }
    return parallelism::InferenceDeploymentSchema().SetText(*s.inference, key, value, where, path,
                                                            diags);
  }
  if (section == "hetero") {
    if (key == "layers" || key == "batch") {
      std::vector<int64_t> v;
      std::string why;
      if (!parallelism::ParseCountList(value, v, why)) {
        diags.Add(where, path, value, why);
        return false;
      }
    }
    s.hetero.given = true;
    return parallelism::HeteroPlanSchema().SetText(s.hetero, key, value, where, path, diags);
  }
  if (section.rfind("system.pools[", 0) == 0 && section.back() == ']') {
    const std::string idx = section.substr(13, section.size() - 14);
    size_t i = 0;
    bool ok = !idx.empty() && idx.size() < 6 &&
              std::all_of(idx.begin(), idx.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (ok) i = std::stoul(idx);
    if (!ok || i >= s.system.pools.size()) {
      diags.Add(where, path, idx,
                "no such device pool (the system has " + std::to_string(s.system.pools.size()) +
                    ", numbered from 0)");
      return false;
    }
    return hardware::DevicePoolSchema().SetText(s.system.pools[i], key, value, where, path, diags);
  }
  if (section.rfind("system.network[", 0) == 0 && section.back() == ']') {
    const std::string idx = section.substr(15, section.size() - 16);
    size_t i = 0;
    bool ok = !idx.empty() && idx.size() < 6 &&
              std::all_of(idx.begin(), idx.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (ok) i = std::stoul(idx);
    if (!ok || i >= s.system.network.size()) {
      diags.Add(where, path, idx,
                "no such network tier (the system has " + std::to_string(s.system.network.size()) +
                    ", numbered from 0)");
      return false;
    }
    return hardware::NetworkTierSchema().SetText(s.system.network[i], key, value, where, path,
                                                 diags);
  }
  std::vector<std::string> known;
  for (const auto& sec : Registry())
    for (const auto& p : sec.params) known.push_back(sec.prefix + "." + p.key);
  diags.Add(where, path, "", "unknown parameter path", base::DidYouMean(path, known));
  return false;
}

}  // namespace

namespace {

// The hetero lists against the pools and the model: one entry per pool
// (the system's own devices and each of system.pools), summing to the
// model's layers (pipeline) or the global batch (data).
void CheckHeteroPlan(const Scenario& s, const SourceLocation& where, Diagnostics& diags) {
  const size_t pools = s.system.pools.size() + 1;
  const bool pipe = s.hetero.split == parallelism::HeteroSplit::kPipeline;
  const std::string key = pipe ? "layers" : "batch";
  const std::string& text = pipe ? s.hetero.layers : s.hetero.batch;
  std::vector<int64_t> v;
  std::string why;
  if (!parallelism::ParseCountList(text, v, why)) {
    diags.Add(where, "hetero." + key, text, why);
    return;
  }
  if (v.empty()) return;
  const int64_t want = pipe ? s.model.layers : s.workload.global_batch;
  int64_t sum = 0;
  for (int64_t x : v) sum += x;
  if (v.size() != pools)
    diags.Add(where, "hetero." + key, text,
              "needs one entry per pool: " + std::to_string(pools) +
                  " (the system's own devices and " + std::to_string(pools - 1) + " in system.pools)");
  else if (sum != want)
    diags.Add(where, "hetero." + key, text,
              std::string("the entries must add up to the ") +
                  (pipe ? "model's layers (" : "global batch (") + std::to_string(want) +
                  "), they add up to " + std::to_string(sum));
}

}  // namespace

int64_t DataParallel(const Scenario& s) {
  if (s.training.dp > 0) return s.training.dp;
  const int64_t inner = s.training.tp * s.training.pp * s.training.cp;
  return inner > 0 ? hardware::DeviceCount(s.system) / inner : 0;
}

void CrossCheck(const Scenario& s, Diagnostics& diags) {
  const SourceLocation where{s.file, 0, 0};
  // The device's own rules, again after --set and sweep overrides (loading
  // checked the preset as written); a rule the load already reported is not
  // repeated.
  const auto check_device = [&](const hardware::DeviceSpec& d, const std::string& path) {
    Diagnostics dev;
    hardware::CheckDevice(d, path, where, dev);
    for (const auto& item : dev.items()) {
      bool seen = false;
      for (const auto& old : diags.items()) seen = seen || old.message == item.message;
      if (!seen) diags.Add(item);
    }
  };
  check_device(s.system.device, "system.device");
  for (size_t i = 0; i < s.system.pools.size(); ++i)
    check_device(s.system.pools[i].device, "system.pools[" + std::to_string(i) + "].device");
  if (s.inference)
    parallelism::CheckDeployment(*s.inference, s.model, s.system.device,
                                 hardware::DeviceCount(s.system), s.system.host_bandwidth,
                                 "inference", where, diags);
  if (s.inference && s.draft_model)
    parallelism::CheckDeployment(*s.inference, *s.draft_model, s.system.device,
                                 hardware::DeviceCount(s.system), s.system.host_bandwidth,
                                 "inference.draft_model", where, diags);
  if (!s.has_training) return;
  // The fabric must hold the devices, also after --set system.nodes=...: the
  // same limits `orrery network` checks (hardware/topology.h).
  hardware::CheckTopology(s.system, "system", where, diags);
  const auto& t = s.training;
  const auto& m = s.model;
  const int64_t devices = hardware::DeviceCount(s.system);
  const int64_t dp = DataParallel(s);
  const std::string tp = std::to_string(t.tp);
  int64_t product = 0;  // tp x pp x cp x dp; a dp given by hand can overflow it
  const bool overflow = __builtin_mul_overflow(t.tp * t.pp * t.cp, dp, &product);
  // A heterogeneous system's pools are checked by core/hetero, pool by pool.
  const bool pooled = !s.system.pools.empty();
  if (pooled) CheckHeteroPlan(s, where, diags);
  if (s.hetero.given && !pooled)
    diags.Add(where, "hetero", parallelism::HeteroSplitName(s.hetero.split),
              "a hetero plan needs a system with device pools (system.pools)");
  if (!pooled && (overflow || product != devices || dp == 0))
    diags.Add(where, "training", "tp=" + tp + " pp=" + std::to_string(t.pp) + " cp=" +
                                     std::to_string(t.cp) + " dp=" + std::to_string(dp),
              "tp x pp x cp x dp must equal the device count (" + std::to_string(devices) + " = " +
                  std::to_string(s.system.nodes) + " nodes x " +
                  std::to_string(s.system.devices_per_node) + ")");
  if (m.heads % t.tp != 0)
    diags.Add(where, "training.tp", tp,
              "tp must divide the attention heads (" + std::to_string(m.heads) + ")");
  const int64_t kv = models::KvHeads(m);
  if (kv % t.tp != 0 && t.tp % kv != 0)
    diags.Add(where, "training.tp", tp,
              "KV heads (" + std::to_string(kv) +
                  ") must be divisible by tp, or tp by them (then they are replicated)");
  if (models::FfnSize(m) % t.tp != 0)
    diags.Add(where, "training.tp", tp,
              "tp must divide the MLP size (" + std::to_string(models::FfnSize(m)) + ")");
  if (m.experts % t.ep != 0)
    diags.Add(where, "training.ep", std::to_string(t.ep),
              "ep must divide the experts (" + std::to_string(m.experts) + ")");
  // The MoE layers fold ep x etp over the stage's tp x cp x dp devices
  // (parallelism::ExpertTensorParallel, arXiv 2504.14960).
  const int64_t etp = parallelism::ExpertTensorParallel(t);
  if (t.etp > 0 && m.experts > 1 && models::ExpertFfn(m) % t.etp != 0)
    diags.Add(where, "training.etp", std::to_string(t.etp),
              "etp must divide the expert MLP size (" + std::to_string(models::ExpertFfn(m)) + ")");
  if (dp > 0 && parallelism::ExpertDataParallelSize(t, dp) == 0) {
    if (t.etp <= 0 || t.etp == t.tp)
      diags.Add(where, "training.ep", std::to_string(t.ep),
                "ep must divide dp x cp (" + std::to_string(dp * t.cp) + ") while etp = tp",
                "set training.etp (e.g. 1) to fold ep over the tp devices too: ep x etp must divide "
                "tp x cp x dp = " + std::to_string(t.tp * t.cp * dp));
    else
      diags.Add(where, "training.etp", std::to_string(etp),
                "ep x etp (" + std::to_string(t.ep * etp) + ") must divide tp x cp x dp (" +
                    std::to_string(t.tp * t.cp * dp) + ")");
  }
  if (t.ep > 1 && m.experts == 1)
    diags.Add(where, "training.ep", std::to_string(t.ep), "ep > 1 needs a model with experts");
  // MXFP8 GEMMs run on block-scaled tensor cores (Blackwell's tcgen05
  // block-scaled MMA, the same units as NVFP4/MXFP4): a device without an FP4
  // block-scaled peak has none (hardware::PeakFlops, as the deployment check
  // of the activations' datatype).
  const bool block_scaled = t.fp8_recipe == parallelism::Fp8Recipe::kMxfp8 ||
                            t.fp8_recipe == parallelism::Fp8Recipe::kNvfp4;
  if (t.precision == hardware::DataType::kFp8 && block_scaled &&
      hardware::PeakFlops(s.system.device, hardware::DataType::kMxfp4) <= 0) {
    const char* recipe = t.fp8_recipe == parallelism::Fp8Recipe::kMxfp8 ? "mxfp8" : "nvfp4";
    diags.Add(where, "training.fp8_recipe", recipe,
              "the device '" + s.system.device.name + "' has no block-scaled (MX) tensor cores: " + recipe +
                  " runs on Blackwell (b200, gb200)",
              "use fp8_recipe delayed, current or blockwise");
  }
  if (t.cp > 1 && m.heads % t.tp == 0 && !engine::CpSchemeFits(m, t.cp_scheme, t.tp, t.cp))
    diags.Add(where, "training.cp_scheme", parallelism::CpSchemeName(t.cp_scheme),
              "ulysses scatters heads over cp: the " + std::to_string(m.heads / t.tp) +
                  " heads per tp rank must be a multiple of cp = " + std::to_string(t.cp),
              "use cp_scheme ring, allgather or auto");
  if (t.cp > 1 && !engine::CpSchemeRunsAttention(t.cp_scheme, t.attention))
    diags.Add(where, "training.cp_scheme", parallelism::CpSchemeName(t.cp_scheme),
              "ring and all-gather context parallelism run a fused attention kernel over K/V blocks; "
              "materialized attention takes cp > 1 only by ulysses (Megatron-Core's unfused attention "
              "asserts context_parallel_size == 1)",
              "use cp_scheme ulysses or auto, or attention flash");
  if (!pooled && dp > 0 && s.workload.global_batch % (dp * t.micro_batch) != 0)
    diags.Add(where, "workload.global_batch", std::to_string(s.workload.global_batch),
              "global batch must be a multiple of dp x micro_batch (" +
                  std::to_string(dp * t.micro_batch) + ")");
  if (parallelism::PipelineSplitUnits(t, m.layers) < t.pp * t.interleave)
    diags.Add(where, "training.pp", std::to_string(t.pp),
              "pp x interleave (" + std::to_string(t.pp * t.interleave) +
                  ") cannot exceed the layers (" + std::to_string(m.layers) + ")" +
                  (t.pipeline_split_embedding_loss || t.pp <= 1
                       ? std::string(t.pp > 1 ? " plus the embedding and the loss" : "")
                       : std::string("; training.pipeline_split_embedding_loss=true counts the embedding "
                                     "and the loss as a layer each, as Megatron-Core can")));
  if (parallelism::FirstStageLayers(t, m.layers) > 0 || parallelism::LastStageLayers(t, m.layers) > 0) {
    const int64_t f = parallelism::FirstStageLayers(t, m.layers), l = parallelism::LastStageLayers(t, m.layers);
    const int64_t even = (m.layers + t.pp - 1) / t.pp;
    const int64_t rest = m.layers - (f > 0 ? f : even) - (l > 0 ? l : even);
    if (t.pp == 1)
      diags.Add(where, "training.first_stage_layers", std::to_string(f),
                "stage layer counts need pp > 1");
    else if (parallelism::StageLayoutInvalid(t, m.layers))
      diags.Add(where, "training.first_stage_layers", std::to_string(f),
                "first and last stage layers leave " + std::to_string(rest) + " of the " +
                    std::to_string(m.layers) + " layers for " + std::to_string(t.pp - 2) +
                    " middle stages (each needs at least one; with pp = 2 none may be left)");
  }
  // Activation offload (training.offload_activation_layers): Transformer
  // Engine's get_cpu_offload_context asserts that fewer layers than the
  // model's are offloaded (the last layer's backward starts at once, with no
  // time to bring anything back), and the copies need a host link.
  if (t.offload_activation_layers > 0) {
    const int64_t per_stage = m.layers / (t.pp > 0 ? t.pp : 1);
    if (parallelism::OffloadLayersInvalid(t, m.layers))
      diags.Add(where, "training.offload_activation_layers", std::to_string(t.offload_activation_layers),
                "must be below the layers of a pipeline stage (" + std::to_string(per_stage) +
                    "): the last layer keeps its activations");
    if (s.system.host_bandwidth <= 0)
      diags.Add(where, "training.offload_activation_layers", std::to_string(t.offload_activation_layers),
                "offloading activations needs system.host_bandwidth > 0 (the device's link to host memory)");
  }
  if (t.interleave > 1 && t.schedule == parallelism::Schedule::kGpipe)
    diags.Add(where, "training.interleave", std::to_string(t.interleave),
              "interleave > 1 needs the 1f1b or interleaved schedule");
  if (t.sequence_parallel && t.tp == 1)
    diags.Add(where, "training.sequence_parallel", "true", "sequence parallelism needs tp > 1");
  if (s.workload.seq_len % t.cp != 0)
    diags.Add(where, "training.cp", std::to_string(t.cp),
              "cp must divide the sequence length (" + std::to_string(s.workload.seq_len) + ")");
  if (m.position == models::Position::kLearned && m.max_seq > 0 && s.workload.seq_len > m.max_seq)
    diags.Add(where, "workload.seq_len", std::to_string(s.workload.seq_len),
              "longer than the model's learned position table (" + std::to_string(m.max_seq) + ")");
  if (hardware::PeakFlops(s.system.device, t.precision) <= 0)
    diags.Add(where, "training.precision", hardware::DataTypeName(t.precision),
              "the device '" + s.system.device.name + "' has no peak rate for this datatype");
  // group_order: a permutation of the five group names.
  if (!parallelism::IsGroupOrder(t.group_order))
    diags.Add(where, "training.group_order", t.group_order, parallelism::kGroupOrderRule);
}

std::optional<DocKind> CheckFile(const std::string& file, const PresetStore& store,
                                 Diagnostics& diags) {
  const size_t before = diags.size();
  auto root = base::LoadYamlFile(file, diags);
  if (!root) return std::nullopt;
  if (!root->IsMap() || root->size() != 1 || !root->begin()->first.IsScalar()) {
    diags.Add(base::LocationOf(*root, file), "", "",
              "expected one top-level key: device, system, model or scenario");
    return std::nullopt;
  }
  const std::string key = root->begin()->first.Scalar();
  const YAML::Node map = root->begin()->second;
  std::optional<DocKind> kind;
  if (key == "device") {
    hardware::DeviceSpec d;
    LoadDeviceMap(map, "device", file, d, diags, &store);
    kind = DocKind::kDevice;
  } else if (key == "system") {
    hardware::SystemSpec s;
    LoadSystemMap(map, "system", file, store, s, diags);
    kind = DocKind::kSystem;
  } else if (key == "model") {
    models::ModelSpec m;
    LoadModelMap(map, "model", file, m, diags);
    kind = DocKind::kModel;
  } else if (key == "scenario") {
    Scenario s;
    LoadScenarioMap(map, file, store, s, diags);
    if (diags.size() == before) CrossCheck(s, diags);
    kind = DocKind::kScenario;
  } else {
    diags.Add(base::LocationOf(root->begin()->first, file), key, "",
              "unknown document kind (expected device, system, model or scenario)",
              base::DidYouMean(key, {"device", "system", "model", "scenario"}));
  }
  if (diags.size() != before) return std::nullopt;
  return kind;
}

std::vector<RegistrySection> Registry() {
  return {
      {"model", models::ModelSchema().help(), models::ModelSchema().Infos()},
      {"system", hardware::SystemSchema().help(), hardware::SystemSchema().Infos()},
      {"system.device", hardware::DeviceSchema().help(), hardware::DeviceSchema().Infos()},
      {"system.network[i]", hardware::NetworkTierSchema().help(),
       hardware::NetworkTierSchema().Infos()},
      {"system.reliability", hardware::ReliabilitySchema().help(),
       hardware::ReliabilitySchema().Infos()},
      {"system.storage", hardware::StorageSchema().help(), hardware::StorageSchema().Infos()},
      {"system.host", hardware::HostSchema().help(), hardware::HostSchema().Infos()},
      {"system.pools[i]", hardware::DevicePoolSchema().help(), hardware::DevicePoolSchema().Infos()},
      {"hetero", parallelism::HeteroPlanSchema().help(), parallelism::HeteroPlanSchema().Infos()},
      {"training", parallelism::TrainingPlanSchema().help(),
       parallelism::TrainingPlanSchema().Infos()},
      {"workload", parallelism::WorkloadSchema().help(), parallelism::WorkloadSchema().Infos()},
      {"prices", hardware::PriceSchema().help(), hardware::PriceSchema().Infos()},
      {"inference", parallelism::InferenceDeploymentSchema().help(),
       parallelism::InferenceDeploymentSchema().Infos()},
  };
}

namespace {

std::string ExplainParam(const std::string& prefix, const base::ParamInfo& p) {
  std::ostringstream os;
  os << prefix << "." << p.key << "\n"
     << "  " << p.help << "\n"
     << "  type:    " << p.RuleText() << "\n";
  if (p.type == base::ParamType::kQuantity)
    os << "  units:   stored in " << base::SiUnit(p.dim) << "; write e.g. '"
       << base::FormatQuantity(p.dim == base::Dimension::kBytes ? 0x1p36 : 1e12, p.dim) << "'\n";
  os << "  default: " << (p.required ? std::string("(required)") : p.default_text) << "\n";
  return os.str();
}

}  // namespace

std::string Explain(const std::string& path, std::string& hint) {
  std::vector<std::string> known;
  std::string norm = path;
  // Accept system.network[3].bandwidth for system.network[i].bandwidth.
  if (norm.rfind("system.network[", 0) == 0) {
    const size_t close = norm.find(']');
    if (close != std::string::npos) norm = "system.network[i]" + norm.substr(close + 1);
  }
  for (const auto& sec : Registry()) {
    if (norm == sec.prefix) {
      std::string out = sec.prefix + ": " + sec.help + "\n\n";
      for (const auto& p : sec.params) out += ExplainParam(sec.prefix, p) + "\n";
      return out;
    }
    known.push_back(sec.prefix);
    for (const auto& p : sec.params) {
      if (norm == sec.prefix + "." + p.key) return ExplainParam(sec.prefix, p);
      known.push_back(sec.prefix + "." + p.key);
    }
  }
  hint = base::DidYouMean(path, known);
  return {};
}

std::string ReferenceMarkdown() {
  std::ostringstream os;
  os << "# Configuration reference\n\n"
     << "Generated by `orrery explain --markdown` from the parameter registry; do not edit by "
        "hand.\n"
     << "Quantities need a unit (`80 GiB`, `3.35 TB/s`, `989.4 TFLOP/s`, `1.5 us`); GB is 10^9 "
        "bytes, GiB is 2^30.\n"
     << "Curves (`system.device.gemm_efficiency`, `system.device.gemm_efficiency_fp8`, "
        "`system.device.gemm_efficiency_mxfp8` (MXFP8 GEMMs; absent: the FP8 curve), "
        "`system.device.gemm_efficiency_fp4`, `system.device.memory_efficiency`, "
        "`system.network[i].efficiency`, `system.network[i].in_network_efficiency`) are "
        "sequences of `[size, efficiency]` pairs, "
        "interpolated in log(size). The fused attention length factors (`system.device.flash_attention_length_factor`, "
        "`system.device.flash_attention_bwd_length_factor`, `system.device.flash2_attention_length_factor`, "
        "`system.device.flash2_attention_bwd_length_factor`) are `[sequence length, factor]` pairs, the "
        "length in tokens one kernel call attends over (the sequence over context parallelism), the "
        "factor (up to 2) multiplying the matching `flash*_attention_*efficiency`, interpolated in "
        "log(length) and clamped at the ends.\n"
     << "A preset file (`configs/devices/`, `configs/systems/`, `configs/models/`) may also carry "
        "`aliases: [...]` (the other names it answers to) and, for a device, `reference_system:` "
        "(the system a measured run naming only this device is placed in). A device or system map "
        "may be written `like: PRESET`: that preset's values, then the keys the map states (its "
        "own `name:` required; a stated curve, `network` or `pools` replaces the preset's whole; "
        "`host`, `reliability` and `storage` change key by key); the naming keys are never taken "
        "over.\n";
  for (const auto& sec : Registry()) {
    os << "\n## `" << sec.prefix << "`\n\n" << sec.help << "\n\n"
       << "| key | type and rule | default | meaning |\n|---|---|---|---|\n";
    for (const auto& p : sec.params) {
      std::string rule = p.RuleText();
      std::replace(rule.begin(), rule.end(), '|', '/');
      os << "| `" << p.key << "` | " << rule << " | "
         << (p.required ? std::string("required") : "`" + p.default_text + "`") << " | " << p.help
         << " |\n";
    }
  }
  return os.str();
}

}  // namespace orrery::engine
