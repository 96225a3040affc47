#include "core/base/yaml_source.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "core/base/text_check.h"

namespace orrery::base {

SourceLocation LocationOf(const YAML::Node& node, const std::string& file) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

const char* NodeKindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "map";
    case YAML::NodeType::Sequence: return "sequence";
    case YAML::NodeType::Scalar: return "scalar";
    case YAML::NodeType::Null: return "null";
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

namespace {

// Walks the parsed tree once and reports keys repeated in one map, which
// yaml-cpp accepts silently (the YAML 1.2 spec, Sec. 3.2.1.1, requires keys
// to be unique). Aliases let a small file name a node many times; the walk
// stops after kMaxYamlNodes visits instead of expanding an alias bomb.
constexpr size_t kMaxYamlNodes = 200'000;

struct Walk {
  const std::string& file;
  Diagnostics& diags;
  size_t visits = 0;
  bool too_many = false;
  std::map<std::pair<int, int>, bool> reported;  // duplicate keys already named

  void Visit(const YAML::Node& node, const std::string& path) {
    if (too_many) return;
    if (++visits > kMaxYamlNodes) {
      too_many = true;
      diags.Add({file, 0, 0}, "", "",
                "more than " + std::to_string(kMaxYamlNodes) +
                    " YAML nodes once aliases are expanded (an alias bomb?); a configuration "
                    "has a few hundred");
      return;
    }
    if (node.IsSequence()) {
      for (size_t i = 0; i < node.size(); ++i)
        Visit(node[i], path + "[" + std::to_string(i) + "]");
    } else if (node.IsMap()) {
      std::map<std::string, YAML::Mark> seen;
      for (const auto& kv : node) {
        std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
        const std::string child = path.empty() ? key : path + "." + key;
        if (kv.first.IsScalar()) {
          const YAML::Mark m = kv.first.Mark();
          auto [it, fresh] = seen.emplace(key, m);
          if (!fresh && !reported[{m.line, m.column}]) {
            reported[{m.line, m.column}] = true;
            diags.Add(LocationOf(kv.first, file), child, key,
                      "duplicate key (first at line " + std::to_string(it->second.line + 1) +
                          "); keys of one map must be unique");
          }
        }
        Visit(kv.second, child);
      }
    }
  }
};

}  // namespace

std::optional<YAML::Node> ParseYamlText(const std::string& text, const std::string& file,
                                        Diagnostics& diags) {
  if (text.size() > kMaxYamlBytes) {
    diags.Add({file, 0, 0}, "", "", "file is larger than the 4 MiB a configuration may have");
    return std::nullopt;
  }
  if (const size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos) {
    const TextPosition p = PositionOf(text, bad);
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[bad]));
    diags.Add({file, p.line, p.column}, "", hex,
              "not UTF-8 text (invalid byte); save the file as UTF-8");
    return std::nullopt;
  }
  try {
    YAML::Node root = YAML::Load(HasUtf8Bom(text) ? text.substr(3) : text);
    const size_t before = diags.size();
    Walk walk{file, diags};
    walk.Visit(root, "");
    if (diags.size() != before) return std::nullopt;
    return root;
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    const int col = e.mark.is_null() ? 0 : e.mark.column + 1;
    diags.Add({file, line, col}, "", "", "YAML syntax error: " + e.msg);
  } catch (const std::exception& e) {
    diags.Add({file, 0, 0}, "", "", std::string("cannot parse YAML: ") + e.what());
  }
  return std::nullopt;
}

std::optional<YAML::Node> LoadYamlFile(const std::string& path, Diagnostics& diags) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    diags.Add({path, 0, 0}, "", "", "is a directory, not a YAML file");
    return std::nullopt;
  }
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    diags.Add({path, 0, 0}, "", "", "not a regular file (a device or socket); give a YAML file");
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diags.Add({path, 0, 0}, "", "", "cannot open file");
    return std::nullopt;
  }
  std::ostringstream ss;
  char buf[8192];
  size_t total = 0;
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    total += static_cast<size_t>(in.gcount());
    if (total > kMaxYamlBytes) {
      diags.Add({path, 0, 0}, "", "", "file is larger than the 4 MiB a configuration may have");
      return std::nullopt;
    }
    ss.write(buf, in.gcount());
  }
  return ParseYamlText(ss.str(), path, diags);
}

}  // namespace orrery::base
