#pragma once
// A scenario: model + system + plan + workload, each given inline or by
// preset name, loaded from YAML, overridden with --set, and cross-checked in
// one pass before any estimate is made (STYLE.md rule 5).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/param.h"
#include "hardware/system_spec.h"
#include "models/model_spec.h"
#include "parallelism/deployment_spec.h"
#include "parallelism/hetero_plan.h"
#include "parallelism/plan_spec.h"

namespace orrery::engine {

struct Scenario {
  std::string name;
  std::string file;
  models::ModelSpec model;
  hardware::SystemSpec system;
  parallelism::TrainingPlan training;
  parallelism::Workload workload;
  bool has_training = true;  // false for a serving-only file (inference: without training:)
  std::optional<parallelism::InferenceDeployment> inference;  // the `inference:` section
  std::optional<models::ModelSpec> draft_model;  // inference.draft_model, loaded
  // `hetero:`: how the plan uses system.pools (heterogeneous systems; core/hetero).
  parallelism::HeteroPlan hetero;
};

// The kinds of document a YAML file may hold (its one top-level key).
enum class DocKind { kDevice, kSystem, kModel, kScenario };
const char* DocKindName(DocKind k);
// Folder of configs/ that holds presets of a kind ("devices", ...).
const char* DocKindFolder(DocKind k);

// A name a user wrote, resolved to a preset (PresetStore::Resolve).
struct PresetName {
  std::string preset;   // the preset's file name, e.g. "h100-sxm"
  std::string matched;  // the spelling that matched: the file name, `name:` or an alias
  std::string dropped;  // words left out to match ("Instruct FP8", "NVIDIA"); empty when none
};

// A name compared without case, spaces or punctuation: "H100-SXM5 80GB" ->
// "h100sxm580gb".
std::string NameKey(const std::string& name);

// Finds presets under a config folder: <dir>/devices/<name>.yaml, ...
//
// Presets are found by the names users write, declared in the files
// themselves, never by a table in code: a device, system or model preset
// answers to its file name, its `name:` and every entry of its `aliases:`
// list, compared by NameKey. A name that matches nothing and begins with the
// first word of a preset's own `name:` (its maker: "NVIDIA", "AMD") is tried
// without that word against the presets whose names begin with it, so that
// "NVIDIA H100 80GB HBM3", as nvidia-smi prints it, is the H100 SXM preset's
// alias "H100 80GB HBM3". A model name that matches nothing is tried once
// more without a Hugging Face organisation ("meta-llama/") and without
// trailing variant words that leave the shape unchanged (Instruct, Chat, hf,
// and quantisation tags such as FP8, AWQ); the words dropped are reported.
class PresetStore {
 public:
  explicit PresetStore(std::string config_dir);
  // $ORRERY_CONFIG_DIR if set, else <dir of the running binary>/../share/
  // orrery/configs when it exists (an installed orrery), else the configs/
  // of the source tree this binary was built from.
  static std::string DefaultConfigDir();

  const std::string& dir() const { return dir_; }
  // Sorted preset names of a kind.
  std::vector<std::string> Names(DocKind kind) const;
  // Path of a preset, or empty when there is none of that name.
  std::string PathOf(DocKind kind, const std::string& name) const;

  // The preset a written name means (see the class comment), or nullopt.
  std::optional<PresetName> Resolve(DocKind kind, const std::string& written) const;
  // "did you mean 'llama3.1-70b'?": the preset whose file name, name or
  // alias is nearest to `written` (NameKey edit distance within a quarter of
  // its letters; ties listed, the matching spelling in parentheses when it
  // is not the file name); "" when none is near.
  std::string CloseTo(DocKind kind, const std::string& written) const;
  // A device preset's `reference_system:` (the system preset a measured run
  // that names only the GPU is placed in); "" when it declares none.
  std::string ReferenceSystem(const std::string& device_preset) const;
  // A preset's own `name:` ("NVIDIA H100 SXM5 80GB" for h100-sxm); "" when
  // it declares none or the file does not parse.
  std::string Title(DocKind kind, const std::string& preset) const;

 private:
  struct Entry {
    std::string preset;
    std::vector<std::string> spellings;  // file name, name:, aliases (as written)
    std::string title;                   // `name:` as written
    std::string name_first_word;         // NameKey of the first word of `name:`
    std::string reference_system;
  };
  struct Index;
  const std::vector<Entry>& Entries(DocKind kind) const;

  std::string dir_;
  std::shared_ptr<Index> index_;  // read lazily, shared by copies (same folder)
};

// Keys a preset file may carry besides its spec: `aliases` (every kind) and
// `reference_system` (devices). Checked by CheckPresetNaming.
const std::vector<std::string>& PresetNamingKeys(DocKind kind);
void CheckPresetNaming(const YAML::Node& map, DocKind kind, const std::string& path,
                       const std::string& file, base::Diagnostics& diags);

// Loads a device/system/model document map (the value under its top-level
// key). Presets named inside are resolved with `store`.
// A device map may be written `like: PRESET` (that preset's values, then
// the map's own keys); `store` resolves it (nullptr: the default folder).
void LoadDeviceMap(const YAML::Node& map, const std::string& path, const std::string& file,
                   hardware::DeviceSpec& out, base::Diagnostics& diags,
                   const PresetStore* store = nullptr);
void LoadSystemMap(const YAML::Node& map, const std::string& path, const std::string& file,
                   const PresetStore& store, hardware::SystemSpec& out, base::Diagnostics& diags);
void LoadModelMap(const YAML::Node& map, const std::string& path, const std::string& file,
                  models::ModelSpec& out, base::Diagnostics& diags);

// Loads preset `name` of `kind`. Unknown names get "did you mean".
bool LoadDevicePreset(const std::string& name, const PresetStore& store,
                      const base::SourceLocation& where, const std::string& path,
                      hardware::DeviceSpec& out, base::Diagnostics& diags);
bool LoadSystemPreset(const std::string& name, const PresetStore& store,
                      const base::SourceLocation& where, const std::string& path,
                      hardware::SystemSpec& out, base::Diagnostics& diags);
bool LoadModelPreset(const std::string& name, const PresetStore& store,
                     const base::SourceLocation& where, const std::string& path,
                     models::ModelSpec& out, base::Diagnostics& diags);

// Loads a scenario file (top-level key `scenario:`), or a scenario preset.
std::optional<Scenario> LoadScenarioFile(const std::string& file, const PresetStore& store,
                                         base::Diagnostics& diags);

// Loads a scenario from YAML text (top-level key `scenario:`); `label` names
// it in messages. Relative paths inside resolve against the working folder.
std::optional<Scenario> LoadScenarioText(const std::string& text, const std::string& label,
                                         const PresetStore& store, base::Diagnostics& diags);

// Loads the preset named by inference.draft_model into s.draft_model (clears
// it when no draft is named). Call again after overrides change the name.
bool LoadDraftModel(Scenario& s, const PresetStore& store, base::Diagnostics& diags);

// Applies one "path=value" override, e.g. "training.tp=4",
// "system.device.memory_capacity=141 GB", "system.network[1].bandwidth=50 GB/s";
// "model=NAME", "system=NAME" and "system.device=NAME" load a whole preset by
// any name it answers to (PresetStore::Resolve in the default config folder).
// `where` names the origin in messages (default: the command line).
bool ApplyOverride(Scenario& s, const std::string& assignment, base::Diagnostics& diags,
                   const base::SourceLocation* where = nullptr);

// Whether `path` names a whole preset that ApplyOverride swaps by name:
// "model", "system" or "system.device".
bool IsPresetPath(const std::string& path);

// Cross-spec checks after loading and overrides: tp*pp*dp*cp = devices,
// heads divisible by tp, KV heads divisible by tp (or replicated), experts
// divisible by ep, batch divisible by dp*micro_batch, layers >= pp*v.
void CrossCheck(const Scenario& s, base::Diagnostics& diags);

// Effective data-parallel degree (resolves dp = 0).
int64_t DataParallel(const Scenario& s);

// Validates any Orrery YAML file (device, system, model or scenario) fully,
// including cross-checks for scenarios. Returns the kind on success.
std::optional<DocKind> CheckFile(const std::string& file, const PresetStore& store,
                                 base::Diagnostics& diags);

// One section of the registry: every knob under `prefix`.
struct RegistrySection {
  std::string prefix;  // "model", "system.device", "system.network[i]", ...
  std::string help;
  std::vector<base::ParamInfo> params;
};
std::vector<RegistrySection> Registry();

// Text for `orrery explain PATH` ("" when unknown; `hint` gets did-you-mean).
std::string Explain(const std::string& path, std::string& hint);
// The whole reference in Markdown (docs/config-reference.md is generated from it).
std::string ReferenceMarkdown();

}  // namespace orrery::engine
