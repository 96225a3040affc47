#include "core/base/yaml_source.h"

#include <fstream>
#include <sstream>

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

std::optional<YAML::Node> ParseYamlText(const std::string& text, const std::string& file,
                                        Diagnostics& diags) {
  if (text.size() > kMaxYamlBytes) {
    diags.Add({file, 0, 0}, "", "", "file is larger than the 4 MiB a configuration may have");
    return std::nullopt;
  }
  try {
    return YAML::Load(text);
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
