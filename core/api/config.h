#pragma once
// orrery::ListPresets, ShowPreset, CheckFiles, ExplainKey: the configuration
// verbs as library calls (`orrery presets`, `orrery check`, `orrery explain`
// are their command-line faces; the GUI uses the same calls).
//
//   orrery::PresetShowResult r = orrery::ShowPreset("h100-sxm");
//   for (const auto& [key, value] : r.rows) ...   // "peak_bf16", "989.4 TFLOP/s"

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/common.h"

namespace orrery {

// Preset names per kind folder ("devices", "systems", "models", "scenarios").
struct PresetListResult : ResultBase {
  struct Kind {
    std::string folder;
    std::vector<std::string> names;
    std::vector<std::string> titles;  // each preset's own `name:` ("" when none), as names
  };
  std::vector<Kind> kinds;
};
// `kind`: empty for all, else a folder or kind name ("devices" or "device").
PresetListResult ListPresets(const std::string& kind = {}, const std::string& config_dir = {});

// One preset's values with units, as key/value rows in registry order.
// kInvalidInput when the name matches no preset (reason with did-you-mean)
// or the preset does not load (diagnostics).
struct PresetShowResult : ResultBase {
  std::string name;    // as asked
  std::string preset;  // the preset it resolved to (a file name of configs/<kind>s/)
  std::string kind;    // "device", "system", "model", "scenario"
  std::vector<std::pair<std::string, std::string>> rows;
};
PresetShowResult ShowPreset(const std::string& name, const std::string& config_dir = {});
nlohmann::ordered_json ToJson(const PresetShowResult& r);

// Validates configuration files; one entry per file. kInvalidInput when any
// file is invalid (its diagnostics say where).
struct CheckResult : ResultBase {
  struct File {
    std::string file;
    std::string kind;               // what it is when valid
    base::Diagnostics diagnostics;  // why not, when invalid
  };
  std::vector<File> files;
};
CheckResult CheckFiles(const std::vector<std::string>& files, const std::string& config_dir = {});

// The documentation of one registry key or section ("training.recompute",
// "system.device"); kInvalidInput with a did-you-mean reason when unknown.
struct ExplainResult : ResultBase {
  std::string text;
};
ExplainResult ExplainKey(const std::string& path);

// Every registry key, one section a line group: "training: help\n  training.tp\n".
std::string ListKeys();
// The whole reference as Markdown (docs/config-reference.md).
std::string ReferenceMarkdown();

}  // namespace orrery
