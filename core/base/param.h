#pragma once
// The parameter registry. Every user-settable knob is declared once — path,
// type, unit, default, allowed range, help — and that one declaration drives
// YAML parsing, validation, `--set path=value`, `orrery explain` and the
// generated reference docs (DESIGN.md "One parameter registry").
//
// A Schema<Spec> binds declarations to the members of a plain Spec struct.

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/quantity.h"

namespace orrery::base {

enum class ParamType { kInt, kReal, kBool, kString, kEnum, kQuantity };

// The declaration of one knob: everything a user needs to know about it.
struct ParamInfo {
  std::string key;  // key inside its section, e.g. "hbm_bandwidth"
  ParamType type = ParamType::kReal;
  Dimension dim = Dimension::kDimensionless;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;          // value must be > min rather than >= min
  std::string default_text;            // printed form of the default; empty when required
  bool required = false;
  std::vector<std::string> choices;    // for kEnum
  std::string help;

  // "integer in [1, 1024]", "bandwidth (e.g. 3.35 TB/s) > 0", "one of: a, b"
  std::string RuleText() const;
  std::string TypeName() const;
};

// A parsed scalar before it is stored.
struct ParamValue {
  double number = 0;     // kInt, kReal, kBool (0/1), kQuantity (SI), kEnum (index)
  std::string text;      // kString
};

// Parses and checks `text` against `info`. Returns an empty string on
// success, else the rule broken; `hint` gets a "did you mean" when it applies.
std::string ParseParam(const ParamInfo& info, const std::string& text, ParamValue& out,
                       std::string& hint);

// The printed form of a value, with units (the inverse of ParseParam).
std::string FormatParam(const ParamInfo& info, const ParamValue& v);

template <class Spec>
struct Field {
  ParamInfo info;
  std::function<void(Spec&, const ParamValue&)> store;
  std::function<ParamValue(const Spec&)> load;
};

// Declarations for one plain Spec struct, in the order they are documented.
template <class Spec>
class Schema {
 public:
  Schema(std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {}

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<Field<Spec>>& fields() const { return fields_; }
  std::vector<ParamInfo> Infos() const {
    std::vector<ParamInfo> out;
    for (const auto& f : fields_) out.push_back(f.info);
    return out;
  }
  std::vector<std::string> Keys() const {
    std::vector<std::string> out;
    for (const auto& f : fields_) out.push_back(f.info.key);
    return out;
  }
  const Field<Spec>* Find(const std::string& key) const {
    for (const auto& f : fields_)
      if (f.info.key == key) return &f;
    return nullptr;
  }

  // --- declarations -------------------------------------------------------
  // `default_text` empty means the key is required.
  template <class T>
  Schema& Int(std::string key, T Spec::*member, double min, double max, std::string default_text,
              std::string help) {
    ParamInfo i = Base(std::move(key), ParamType::kInt, std::move(default_text), std::move(help));
    i.min = min;
    i.max = max;
    return Add(std::move(i), [member](Spec& s, const ParamValue& v) { s.*member = static_cast<T>(v.number); },
               [member](const Spec& s) { return ParamValue{static_cast<double>(s.*member), {}}; });
  }
  Schema& Real(std::string key, double Spec::*member, double min, double max,
               std::string default_text, std::string help, bool min_exclusive = false) {
    ParamInfo i = Base(std::move(key), ParamType::kReal, std::move(default_text), std::move(help));
    i.min = min;
    i.max = max;
    i.min_exclusive = min_exclusive;
    return AddDouble(std::move(i), member);
  }
  Schema& Quantity(std::string key, double Spec::*member, Dimension dim, double min, double max,
                   std::string default_text, std::string help, bool min_exclusive = false) {
    ParamInfo i =
        Base(std::move(key), ParamType::kQuantity, std::move(default_text), std::move(help));
    i.dim = dim;
    i.min = min;
    i.max = max;
    i.min_exclusive = min_exclusive;
    return AddDouble(std::move(i), member);
  }
  Schema& Bool(std::string key, bool Spec::*member, std::string default_text, std::string help) {
    ParamInfo i = Base(std::move(key), ParamType::kBool, std::move(default_text), std::move(help));
    return Add(std::move(i), [member](Spec& s, const ParamValue& v) { s.*member = v.number != 0; },
               [member](const Spec& s) { return ParamValue{s.*member ? 1.0 : 0.0, {}}; });
  }
  Schema& String(std::string key, std::string Spec::*member, std::string default_text,
                 std::string help) {
    ParamInfo i = Base(std::move(key), ParamType::kString, std::move(default_text), std::move(help));
    return Add(std::move(i), [member](Spec& s, const ParamValue& v) { s.*member = v.text; },
               [member](const Spec& s) { return ParamValue{0, s.*member}; });
  }
  // `names[i]` is the spelling of enum value `values[i]`.
  template <class E>
  Schema& Enum(std::string key, E Spec::*member, std::vector<std::pair<std::string, E>> names,
               std::string default_text, std::string help) {
    ParamInfo i = Base(std::move(key), ParamType::kEnum, std::move(default_text), std::move(help));
    for (const auto& [n, e] : names) i.choices.push_back(n);
    return Add(
        std::move(i),
        [member, names](Spec& s, const ParamValue& v) {
          s.*member = names[static_cast<size_t>(v.number)].second;
        },
        [member, names](const Spec& s) {
          for (size_t k = 0; k < names.size(); ++k)
            if (names[k].second == s.*member) return ParamValue{static_cast<double>(k), {}};
          return ParamValue{0, {}};
        });
  }

  // --- use ------------------------------------------------------------------
  // Sets every field with a default to that default.
  void ApplyDefaults(Spec& spec) const {
    for (const auto& f : fields_) {
      if (f.info.required) continue;
      ParamValue v;
      std::string hint;
      if (ParseParam(f.info, f.info.default_text, v, hint).empty()) f.store(spec, v);
    }
  }

  // Reads a YAML map at `path` into `spec` (defaults first). Unknown keys,
  // wrong types, bad values and missing required keys become diagnostics.
  // Keys listed in `handled_elsewhere` are skipped: the caller parses them.
  // `over_base`: `spec` already holds a base document's values (a preset's
  // `like:`); only the keys the map states change, none is required.
  void Parse(const YAML::Node& map, const std::string& path, const std::string& file, Spec& spec,
             Diagnostics& diags, const std::vector<std::string>& handled_elsewhere = {},
             bool over_base = false) const {
    if (!over_base) ApplyDefaults(spec);
    if (!map.IsMap()) {
      diags.Add(LocationOfNode(map, file), path, "",
                std::string("expected a map of ") + name_ + " keys, got a " + KindName(map));
      return;
    }
    std::vector<std::string> seen;
    for (const auto& kv : map) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
      const std::string sub = path.empty() ? key : path + "." + key;
      if (std::find(handled_elsewhere.begin(), handled_elsewhere.end(), key) !=
          handled_elsewhere.end())
        continue;
      const Field<Spec>* f = Find(key);
      if (f == nullptr) {
        std::vector<std::string> all = Keys();
        all.insert(all.end(), handled_elsewhere.begin(), handled_elsewhere.end());
        diags.Add(LocationOfNode(kv.first, file), sub, "",
                  "unknown key in " + name_, DidYouMean(key, all));
        continue;
      }
      seen.push_back(key);
      SetFromNode(*f, kv.second, sub, file, spec, diags);
    }
    for (const auto& f : fields_) {
      if (over_base) break;
      if (f.info.required && std::find(seen.begin(), seen.end(), f.info.key) == seen.end())
        diags.Add(LocationOfNode(map, file), path.empty() ? f.info.key : path + "." + f.info.key,
                  "", "required key is missing (" + f.info.RuleText() + ")");
    }
  }

  // Sets one field from text (used by --set). Returns false and adds a
  // diagnostic on failure.
  bool SetText(Spec& spec, const std::string& key, const std::string& text,
               const SourceLocation& where, const std::string& path, Diagnostics& diags) const {
    const Field<Spec>* f = Find(key);
    if (f == nullptr) {
      diags.Add(where, path, "", "unknown key in " + name_, DidYouMean(key, Keys()));
      return false;
    }
    ParamValue v;
    std::string hint;
    const std::string err = ParseParam(f->info, text, v, hint);
    if (!err.empty()) {
      diags.Add(where, path, text, err, hint);
      return false;
    }
    f->store(spec, v);
    return true;
  }

  std::string GetText(const Spec& spec, const std::string& key) const {
    const Field<Spec>* f = Find(key);
    return f == nullptr ? std::string() : FormatParam(f->info, f->load(spec));
  }

 private:
  static ParamInfo Base(std::string key, ParamType type, std::string default_text,
                        std::string help) {
    ParamInfo i;
    i.key = std::move(key);
    i.type = type;
    i.required = default_text.empty() && type != ParamType::kString;
    i.default_text = std::move(default_text);
    i.help = std::move(help);
    return i;
  }
  Schema& AddDouble(ParamInfo i, double Spec::*member) {
    return Add(std::move(i), [member](Spec& s, const ParamValue& v) { s.*member = v.number; },
               [member](const Spec& s) { return ParamValue{s.*member, {}}; });
  }
  Schema& Add(ParamInfo i, std::function<void(Spec&, const ParamValue&)> store,
              std::function<ParamValue(const Spec&)> load) {
    fields_.push_back(Field<Spec>{std::move(i), std::move(store), std::move(load)});
    return *this;
  }
  static SourceLocation LocationOfNode(const YAML::Node& n, const std::string& file) {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return {file, 0, 0};
    return {file, m.line + 1, m.column + 1};
  }
  static const char* KindName(const YAML::Node& n) {
    if (n.IsMap()) return "map";
    if (n.IsSequence()) return "sequence";
    if (n.IsScalar()) return "scalar";
    return "null";
  }
  static void SetFromNode(const Field<Spec>& f, const YAML::Node& node, const std::string& path,
                          const std::string& file, Spec& spec, Diagnostics& diags) {
    if (!node.IsScalar()) {
      diags.Add(LocationOfNode(node, file), path, "",
                std::string("expected a single value (") + f.info.RuleText() + "), got a " +
                    KindName(node));
      return;
    }
    ParamValue v;
    std::string hint;
    const std::string err = ParseParam(f.info, node.Scalar(), v, hint);
    if (!err.empty()) {
      diags.Add(LocationOfNode(node, file), path, node.Scalar(), err, hint);
      return;
    }
    f.store(spec, v);
  }

  std::string name_;
  std::string help_;
  std::vector<Field<Spec>> fields_;
};

}  // namespace orrery::base
