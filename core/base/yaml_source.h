#pragma once
// Loading YAML with positions. yaml-cpp throws on malformed input; this is
// the one place that catches, so that no input can escape as an exception.

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "core/base/diagnostics.h"

namespace orrery::base {

// Files larger than this are refused before parsing (a config is kilobytes).
inline constexpr size_t kMaxYamlBytes = 4u << 20;

// Reads and parses `path`. On failure adds a diagnostic naming the file (and
// line and column for syntax errors) and returns nullopt.
std::optional<YAML::Node> LoadYamlFile(const std::string& path, Diagnostics& diags);

// Parses YAML text; `file` is only used in messages.
std::optional<YAML::Node> ParseYamlText(const std::string& text, const std::string& file,
                                        Diagnostics& diags);

// 1-based position of a node in `file`.
SourceLocation LocationOf(const YAML::Node& node, const std::string& file);

// "map", "sequence", "scalar", "null".
const char* NodeKindName(const YAML::Node& node);

}  // namespace orrery::base
