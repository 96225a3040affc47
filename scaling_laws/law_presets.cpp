#include "core/base/diagnostics.h"
#include "scaling_laws/law_presets.h"

#include "core/base/quantity.h"

#include <cmath>
#include <cstdlib>

#include "core/base/csv.h"

namespace orrery::scaling_laws {
namespace {

struct KindInfo {
  const char* name;
  LawKind kind;
  std::vector<std::string> required;
};
const std::vector<KindInfo>& Kinds() {
  static const std::vector<KindInfo> kinds = {
      {"chinchilla", LawKind::kChinchilla, {"E", "A", "B", "alpha", "beta"}},
      {"kaplan_n", LawKind::kKaplanN, {"n_c", "alpha_n"}},
      {"kaplan_d", LawKind::kKaplanD, {"d_c", "alpha_d"}},
      {"kaplan_nd", LawKind::kKaplanND, {"n_c", "d_c", "alpha_n", "alpha_d"}},
      {"kaplan_c", LawKind::kKaplanC, {"c_c", "alpha_c"}},
      {"allocation", LawKind::kAllocation, {}},
      {"record", LawKind::kRecord, {}},
  };
  return kinds;
}

std::string Trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<std::string> SplitSemicolons(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(';', pos);
    if (end == std::string::npos) end = s.size();
    std::string item = Trimmed(s.substr(pos, end - pos));
    if (!item.empty()) out.push_back(item);
    pos = end + 1;
  }
  return out;
}

}  // namespace

base::Result<ChinchillaParams> LawPreset::Chinchilla() const {
  if (kind != LawKind::kChinchilla) {
    return base::Error{"preset '" + name + "' is of kind '" + kind_name + "', not a Chinchilla law"};
  }
  return ChinchillaParams{parameters.at("E"), parameters.at("A"), parameters.at("B"),
                          parameters.at("alpha"), parameters.at("beta")};
}

base::Result<KaplanNDParams> LawPreset::KaplanND() const {
  if (kind != LawKind::kKaplanND) {
    return base::Error{"preset '" + name + "' is of kind '" + kind_name + "', not a Kaplan L(N, D) law"};
  }
  return KaplanNDParams{parameters.at("n_c"), parameters.at("d_c"), parameters.at("alpha_n"),
                        parameters.at("alpha_d")};
}

base::Result<Allocation> EvaluateAllocation(const LawPreset& p, double compute_flops) {
  if (p.kind != LawKind::kAllocation) {
    return base::Error{"preset '" + p.name + "' is of kind '" + p.kind_name + "', not an allocation rule"};
  }
  if (!(compute_flops > 0)) return base::Error{"allocation: budget must be positive"};
  auto get = [&](const char* key, double fallback) {
    auto it = p.parameters.find(key);
    return it == p.parameters.end() ? fallback : it->second;
  };
  const double unit = get("compute_unit_flops", 1.0);
  const double c = compute_flops / unit;
  const bool has_n = p.parameters.count("k_n") && p.parameters.count("a_n");
  const bool has_d = p.parameters.count("k_d") && p.parameters.count("a_d");
  Allocation a;
  a.compute_flops = compute_flops;
  if (has_n) a.params_n = p.parameters.at("k_n") * std::pow(c, p.parameters.at("a_n"));
  if (has_d) a.tokens_d = p.parameters.at("k_d") * std::pow(c, p.parameters.at("a_d"));
  if (has_n && !has_d) a.tokens_d = compute_flops / (6.0 * a.params_n);
  if (has_d && !has_n) a.params_n = compute_flops / (6.0 * a.tokens_d);
  return a;
}

base::Result<LawPreset> PresetCatalog::Find(const std::string& name) const {
  for (const auto& p : presets) {
    if (p.name == name) return p;
    for (const auto& a : p.aliases)
      if (a == name) return p;
  }
  std::vector<std::string> names = Names();
  for (const auto& p : presets) names.insert(names.end(), p.aliases.begin(), p.aliases.end());
  std::string msg = "unknown scaling-law preset '" + name + "' in " + source;
  const std::string guess = base::DidYouMean(name, names);
  if (!guess.empty()) msg += "; " + guess;
  return base::Error{msg};
}

std::vector<std::string> PresetCatalog::Names() const {
  std::vector<std::string> names;
  for (const auto& p : presets) names.push_back(p.name);
  return names;
}

base::Result<PresetCatalog> LoadPresetCatalog(const std::string& path) {
  auto csv = base::ReadCsvFile(path);
  if (!csv) return csv.error();
  const base::CsvTable& t = csv.value();
  const std::vector<std::string> columns = {"name", "aliases", "kind", "parameters",
                                            "formula", "source", "notes"};
  std::vector<int> idx;
  for (const auto& c : columns) {
    const int i = t.ColumnIndex(c);
    if (i < 0) {
      return base::Error{path + ":" + std::to_string(t.header_line) + ": missing column '" + c + "'"};
    }
    idx.push_back(i);
  }
  PresetCatalog cat;
  cat.source = path;
  for (const auto& row : t.rows) {
    const std::string where = path + ":" + std::to_string(row.line);
    LawPreset p;
    p.line = row.line;
    p.name = row.cells[idx[0]];
    p.aliases = SplitSemicolons(row.cells[idx[1]]);
    p.kind_name = row.cells[idx[2]];
    p.formula = row.cells[idx[4]];
    p.source = row.cells[idx[5]];
    p.notes = row.cells[idx[6]];
    if (p.name.empty()) return base::Error{where + ": empty preset name"};
    if (p.source.empty()) return base::Error{where + ": preset '" + p.name + "' has no source"};
    const KindInfo* kind = nullptr;
    std::vector<std::string> kind_names;
    for (const auto& k : Kinds()) {
      kind_names.push_back(k.name);
      if (p.kind_name == k.name) kind = &k;
    }
    if (kind == nullptr) {
      std::string msg = where + ": preset '" + p.name + "': unknown kind '" + p.kind_name + "'";
      const std::string guess = base::DidYouMean(p.kind_name, kind_names);
      if (!guess.empty()) msg += "; " + guess;
      return base::Error{msg};
    }
    p.kind = kind->kind;
    for (const auto& item : SplitSemicolons(row.cells[idx[3]])) {
      const size_t eq = item.find('=');
      double v = 0;
      if (eq == std::string::npos || !base::ParseDouble(item.substr(eq + 1), &v)) {
        return base::Error{where + ": preset '" + p.name + "': parameter '" + item +
                     "' is not key=number"};
      }
      p.parameters[Trimmed(item.substr(0, eq))] = v;
    }
    for (const auto& r : kind->required) {
      if (!p.parameters.count(r)) {
        return base::Error{where + ": preset '" + p.name + "' of kind '" + p.kind_name +
                     "' lacks parameter '" + r + "'"};
      }
    }
    for (const auto& other : cat.presets) {
      if (other.name == p.name) return base::Error{where + ": duplicate preset name '" + p.name + "'"};
    }
    cat.presets.push_back(std::move(p));
  }
  return cat;
}

std::string DefaultPresetCatalogPath() {
  if (const char* dir = std::getenv("ORRERY_CONFIG_DIR"); dir != nullptr && *dir != '\0') {
    return std::string(dir) + "/scaling_laws/published_laws.csv";
  }
  return ORRERY_SCALING_LAWS_DEFAULT_CATALOG;
}

FittedRange FittedRangeOf(const LawPreset& preset) {
  const auto param = [&](const char* key) {
    const auto it = preset.parameters.find(key);
    return it == preset.parameters.end() ? 0.0 : it->second;
  };
  return {param("n_min"), param("n_max"), param("d_min"), param("d_max")};
}

std::string ExtrapolationNote(const char* what, double value, double lo, double hi, const char* unit) {
  std::string side;
  double factor = 1;
  if (hi > 0 && value > hi) {
    side = "above the largest";
    factor = value / hi;
  } else if (lo > 0 && value < lo) {
    side = "below the smallest";
    factor = lo / value;
  }
  if (!(factor >= 1.5)) return {};
  // A range stated on one side only reads as such, not as "0 to ...".
  const std::string range = lo > 0 && hi > 0 ? base::FormatNumber(lo, 3) + " to " + base::FormatNumber(hi, 3)
                            : hi > 0         ? "up to " + base::FormatNumber(hi, 3)
                                             : "from " + base::FormatNumber(lo, 3);
  return std::string(what) + " = " + base::FormatNumber(value, 4) + " " + unit + " is " +
         base::FormatNumber(factor, 3) + "x " + side + " of the runs the law was fitted on (" + range + " " +
         unit + "): an extrapolation of the law";
}

}  // namespace orrery::scaling_laws
