#include "core/search/sweep.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "core/base/yaml_source.h"
#include "core/goodput/goodput.h"
#include "core/search/result_store.h"
#include "models/transformer.h"

namespace orrery::engine {

namespace fs = std::filesystem;
using base::Diagnostics;
using base::LocationOf;
using nlohmann::ordered_json;

uint64_t Fnv1a64(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string HashHex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {

const char* EachName(SweepEach e) { return e == SweepEach::kSearch ? "search" : "estimate"; }

// The registry declaration of a path ("system.network[1].bandwidth" finds
// system.network[i].bandwidth), or nullptr.
const base::ParamInfo* FindParam(const std::vector<RegistrySection>& registry, const std::string& path) {
  std::string norm = path;
  if (norm.rfind("system.network[", 0) == 0) {
    const size_t close = norm.find(']');
    if (close != std::string::npos) norm = "system.network[i]" + norm.substr(close + 1);
  }
  if (norm.rfind("system.pools[", 0) == 0) {
    const size_t close = norm.find(']');
    if (close != std::string::npos) norm = "system.pools[i]" + norm.substr(close + 1);
  }
  for (const auto& sec : registry)
    for (const auto& p : sec.params)
      if (norm == sec.prefix + "." + p.key) return &p;
  return nullptr;
}

// Text of an SI value for ApplyOverride: the readable form when it parses
// back to the same value, else 17 significant digits in the SI unit.
std::string ValueText(const base::ParamInfo& info, double v) {
  base::ParamValue pv{v, {}};
  std::string text = base::FormatParam(info, pv);
  base::ParamValue back;
  std::string hint;
  if (base::ParseParam(info, text, back, hint).empty() &&
      std::fabs(back.number - v) <= 1e-12 * std::fabs(v))
    return text;
  char buf[64];
  if (info.type == base::ParamType::kQuantity) {
    if (info.dim == base::Dimension::kMoneyRate)
      std::snprintf(buf, sizeof buf, "%.17g USD/h", v * 3600);
    else
      std::snprintf(buf, sizeof buf, "%.17g %s", v, std::string(base::SiUnit(info.dim)).c_str());
  } else {
    std::snprintf(buf, sizeof buf, "%.17g", v);
  }
  return buf;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

const std::vector<std::string>& SweepKeys() {
  static const std::vector<std::string> k = {"name", "scenario", "each", "search", "set", "axes"};
  return k;
}
const std::vector<std::string>& SearchKeys() {
  static const std::vector<std::string> k = {"top", "objective", "round_batch", "offload",
                                             "context_parallel", "all_group_orders", "max_micro_batch"};
  return k;
}
const std::vector<std::string>& AxisKeys() {
  static const std::vector<std::string> k = {"path", "values", "linear", "log", "group"};
  return k;
}
const std::vector<std::string>& RangeKeys() {
  static const std::vector<std::string> k = {"from", "to", "points", "step"};
  return k;
}

void UnknownKeys(const YAML::Node& map, const std::string& path, const std::string& file,
                 const std::vector<std::string>& known, const std::string& what, Diagnostics& d) {
  for (const auto& kv : map) {
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (std::find(known.begin(), known.end(), k) == known.end())
      d.Add(LocationOf(kv.first, file), path + "." + k, "", "unknown key in " + what,
            base::DidYouMean(k, known));
  }
}

bool ScalarOf(const YAML::Node& n, const std::string& path, const std::string& file, Diagnostics& d,
              std::string& out) {
  if (!n.IsScalar()) {
    d.Add(LocationOf(n, file), path, "",
          std::string("expected a single value, got a ") + base::NodeKindName(n));
    return false;
  }
  out = n.Scalar();
  return true;
}

bool IntOf(const YAML::Node& n, const std::string& path, const std::string& file, Diagnostics& d,
           int64_t lo, int64_t hi, int64_t& out) {
  std::string t;
  if (!ScalarOf(n, path, file, d, t)) return false;
  char* end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || end == nullptr || *end != 0 || v < lo || v > hi) {
    d.Add(LocationOf(n, file), path, t,
          "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return false;
  }
  out = v;
  return true;
}

bool BoolOf(const YAML::Node& n, const std::string& path, const std::string& file, Diagnostics& d,
            bool& out) {
  std::string t;
  if (!ScalarOf(n, path, file, d, t)) return false;
  if (t == "true") out = true;
  else if (t == "false") out = false;
  else {
    d.Add(LocationOf(n, file), path, t, "expected true or false",
          base::DidYouMean(t, {"true", "false"}));
    return false;
  }
  return true;
}

// Values of a linear or log range.
void RangeValues(const YAML::Node& r, bool log, const std::string& path, const std::string& axis_path,
                 const std::string& file, const base::ParamInfo* info, Diagnostics& d,
                 std::vector<std::string>& out) {
  if (!r.IsMap()) {
    d.Add(LocationOf(r, file), path, "", "expected a map {from: ..., to: ..., points: N} or {from, to, step}");
    return;
  }
  UnknownKeys(r, path, file, RangeKeys(), log ? "log range" : "linear range", d);
  if (info == nullptr) return;  // the path error is reported by the caller
  if (info->type != base::ParamType::kInt && info->type != base::ParamType::kReal &&
      info->type != base::ParamType::kQuantity) {
    d.Add(LocationOf(r, file), path, "",
          "a range needs a numeric key; " + axis_path + " is " + info->RuleText() + " (use values: [...])");
    return;
  }
  double ends[2] = {0, 0};
  const char* names[2] = {"from", "to"};
  for (int i = 0; i < 2; ++i) {
    const YAML::Node n = r[names[i]];
    if (!n) {
      d.Add(LocationOf(r, file), path + "." + names[i], "", "required key is missing");
      return;
    }
    std::string t;
    if (!ScalarOf(n, path + "." + names[i], file, d, t)) return;
    base::ParamValue v;
    std::string hint;
    const std::string err = base::ParseParam(*info, t, v, hint);
    if (!err.empty()) {
      d.Add(LocationOf(n, file), path + "." + names[i], t, err, hint);
      return;
    }
    ends[i] = v.number;
  }
  const YAML::Node pn = r["points"], sn = r["step"];
  if (static_cast<bool>(pn) == static_cast<bool>(sn)) {
    d.Add(LocationOf(r, file), path, "", "give exactly one of points: N or step: S");
    return;
  }
  std::vector<double> vals;
  if (pn) {
    int64_t points = 0;
    if (!IntOf(pn, path + ".points", file, d, 2, 100000, points)) return;
    for (int64_t i = 0; i < points; ++i) {
      const double f = static_cast<double>(i) / static_cast<double>(points - 1);
      if (log) {
        if (!(ends[0] > 0 && ends[1] > 0)) {
          d.Add(LocationOf(r, file), path, "", "a log range needs from > 0 and to > 0");
          return;
        }
        vals.push_back(i == points - 1 ? ends[1] : ends[0] * std::pow(ends[1] / ends[0], f));
      } else {
        vals.push_back(i == points - 1 ? ends[1] : ends[0] + f * (ends[1] - ends[0]));
      }
    }
  } else {
    std::string t;
    if (!ScalarOf(sn, path + ".step", file, d, t)) return;
    base::ParamValue step;
    std::string hint;
    // A log step is a factor (dimensionless); a linear step has the key's unit.
    if (log) {
      char* end = nullptr;
      step.number = std::strtod(t.c_str(), &end);
      if (end == nullptr || *end != 0 || !(step.number > 1)) {
        d.Add(LocationOf(sn, file), path + ".step", t, "a log step is a factor > 1, e.g. 2");
        return;
      }
    } else {
      base::ParamInfo unbounded = *info;
      unbounded.min = 0;
      unbounded.min_exclusive = true;
      unbounded.max = std::numeric_limits<double>::infinity();
      const std::string err = base::ParseParam(unbounded, t, step, hint);
      if (!err.empty()) {
        d.Add(LocationOf(sn, file), path + ".step", t, err, hint);
        return;
      }
    }
    if (!(ends[1] >= ends[0]) || (log && !(ends[0] > 0))) {
      d.Add(LocationOf(r, file), path, "", "a stepped range needs to >= from (and from > 0 for log)");
      return;
    }
    for (int i = 0; i < 100000; ++i) {
      const double v = log ? ends[0] * std::pow(step.number, i) : ends[0] + i * step.number;
      if (v > ends[1] * (1 + 1e-12)) break;
      vals.push_back(v);
    }
  }
  for (double v : vals) {
    if (info->type == base::ParamType::kInt) {
      const double r0 = std::round(v);
      if (std::fabs(r0 - v) > 1e-9 * std::max(1.0, std::fabs(v))) {
        d.Add(LocationOf(r, file), path, "",
              axis_path + " is an integer key but the range gives " + base::FormatNumber(v, 8) +
                  "; choose from, to and points so that every value is whole");
        return;
      }
      v = r0;
    }
    out.push_back(ValueText(*info, v));
  }
}

}  // namespace

std::optional<SweepSpec> LoadSweepFile(const std::string& file, const PresetStore& store,
                                       Scenario& base, Diagnostics& d) {
  const size_t before = d.size();
  auto root = base::LoadYamlFile(file, d);
  if (!root) return std::nullopt;
  if (!root->IsMap() || !(*root)["sweep"]) {
    d.Add(LocationOf(*root, file), "", "", "expected a document with the top-level key 'sweep'");
    return std::nullopt;
  }
  for (const auto& kv : *root) {
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (k != "sweep")
      d.Add(LocationOf(kv.first, file), k, "", "unexpected top-level key next to 'sweep'",
            base::DidYouMean(k, {"sweep"}));
  }
  const YAML::Node map = (*root)["sweep"];
  if (!map.IsMap()) {
    d.Add(LocationOf(map, file), "sweep", "", std::string("expected a map, got a ") + base::NodeKindName(map));
    return std::nullopt;
  }
  UnknownKeys(map, "sweep", file, SweepKeys(), "sweep", d);
  SweepSpec s;
  s.file = file;
  if (const YAML::Node n = map["name"]) ScalarOf(n, "sweep.name", file, d, s.name);
  if (s.name.empty()) s.name = fs::path(file).stem().string();

  // The scenario: a file relative to the sweep file, or as given, or a preset.
  const YAML::Node sc = map["scenario"];
  if (!sc) {
    d.Add(LocationOf(map, file), "sweep.scenario", "", "required key is missing (a scenario file or preset)");
    return std::nullopt;
  }
  if (!ScalarOf(sc, "sweep.scenario", file, d, s.scenario)) return std::nullopt;
  std::error_code ec;
  const fs::path beside = fs::path(file).parent_path() / s.scenario;
  if (fs::is_regular_file(beside, ec)) s.scenario_path = beside.string();
  else if (fs::is_regular_file(s.scenario, ec)) s.scenario_path = s.scenario;
  else s.scenario_path = store.PathOf(DocKind::kScenario, s.scenario);
  if (s.scenario_path.empty()) {
    std::string hint = base::DidYouMean(s.scenario, store.Names(DocKind::kScenario));
    d.Add(LocationOf(sc, file), "sweep.scenario", s.scenario,
          "no such scenario file (relative to the sweep file or the working directory) or preset", hint);
    return std::nullopt;
  }
  auto scenario = LoadScenarioFile(s.scenario_path, store, d);
  if (!scenario) return std::nullopt;
  base = *scenario;

  if (const YAML::Node n = map["each"]) {
    std::string t;
    if (ScalarOf(n, "sweep.each", file, d, t)) {
      if (t == "estimate") s.each = SweepEach::kEstimate;
      else if (t == "search") s.each = SweepEach::kSearch;
      else
        d.Add(LocationOf(n, file), "sweep.each", t,
              "expected estimate (the scenario's plan) or search (the best plan at each point)",
              base::DidYouMean(t, {"estimate", "search"}));
    }
  }
  if (const YAML::Node n = map["search"]) {
    if (!n.IsMap()) {
      d.Add(LocationOf(n, file), "sweep.search", "", "expected a map of search options");
    } else {
      UnknownKeys(n, "sweep.search", file, SearchKeys(), "search options", d);
      int64_t v = 0;
      if (n["top"] && IntOf(n["top"], "sweep.search.top", file, d, 1, 1000, v)) s.top = static_cast<int>(v);
      if (const YAML::Node o = n["objective"]) {
        std::string t;
        if (ScalarOf(o, "sweep.search.objective", file, d, t) && !ParseObjective(t, s.objective))
          d.Add(LocationOf(o, file), "sweep.search.objective", t,
                "expected time, cost, energy or tokens-per-dollar",
                base::DidYouMean(t, {"time", "cost", "energy", "tokens-per-dollar"}));
      }
      if (n["round_batch"]) BoolOf(n["round_batch"], "sweep.search.round_batch", file, d, s.space.round_batch);
      if (n["offload"]) BoolOf(n["offload"], "sweep.search.offload", file, d, s.space.offload);
      if (n["context_parallel"])
        BoolOf(n["context_parallel"], "sweep.search.context_parallel", file, d, s.space.context_parallel);
      if (n["all_group_orders"])
        BoolOf(n["all_group_orders"], "sweep.search.all_group_orders", file, d, s.space.all_group_orders);
      if (n["max_micro_batch"] &&
          IntOf(n["max_micro_batch"], "sweep.search.max_micro_batch", file, d, 0, 1000000, v))
        s.space.max_micro_batch = v;
    }
  }
  if (const YAML::Node n = map["set"]) {
    if (!n.IsMap()) {
      d.Add(LocationOf(n, file), "sweep.set", "", "expected a map of parameter paths to values");
    } else {
      for (const auto& kv : n) {
        std::string k, v;
        if (!ScalarOf(kv.first, "sweep.set", file, d, k) || !ScalarOf(kv.second, "sweep.set." + k, file, d, v))
          continue;
        const base::SourceLocation where = LocationOf(kv.second, file);
        if (ApplyOverride(base, k + "=" + v, d, &where)) s.set.emplace_back(k, v);
      }
    }
  }

  const std::vector<RegistrySection> registry = Registry();
  const YAML::Node axes = map["axes"];
  if (!axes || !axes.IsSequence() || axes.size() == 0) {
    d.Add(LocationOf(axes ? axes : map, file), "sweep.axes", "",
          "expected a non-empty sequence of axes, each {path: ..., values: [...]} or a linear/log range");
    return std::nullopt;
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    const YAML::Node a = axes[i];
    const std::string ap = "sweep.axes[" + std::to_string(i) + "]";
    if (!a.IsMap()) {
      d.Add(LocationOf(a, file), ap, "", "expected a map {path: ..., values: [...]}");
      continue;
    }
    UnknownKeys(a, ap, file, AxisKeys(), "axis", d);
    SweepAxis axis;
    axis.where = LocationOf(a, file);
    if (!a["path"]) {
      d.Add(LocationOf(a, file), ap + ".path", "", "required key is missing (a parameter path, e.g. system.nodes)");
      continue;
    }
    if (!ScalarOf(a["path"], ap + ".path", file, d, axis.path)) continue;
    const base::ParamInfo* info = FindParam(registry, axis.path);
    if (info == nullptr && IsPresetPath(axis.path) && !a["values"]) {
      d.Add(LocationOf(a["path"], file), ap, axis.path,
            "an axis over whole presets takes values: [names], not a range");
      continue;
    }
    if (info == nullptr && !IsPresetPath(axis.path)) {
      std::vector<std::string> known;
      for (const auto& sec : registry)
        for (const auto& p : sec.params) known.push_back(sec.prefix + "." + p.key);
      d.Add(LocationOf(a["path"], file), ap + ".path", axis.path, "unknown parameter path",
            base::DidYouMean(axis.path, known));
      continue;
    }
    if (a["group"]) ScalarOf(a["group"], ap + ".group", file, d, axis.group);
    const int kinds = (a["values"] ? 1 : 0) + (a["linear"] ? 1 : 0) + (a["log"] ? 1 : 0);
    if (kinds != 1) {
      d.Add(LocationOf(a, file), ap, "", "give exactly one of values: [...], linear: {...} or log: {...}");
      continue;
    }
    if (const YAML::Node v = a["values"]) {
      if (!v.IsSequence() || v.size() == 0) {
        d.Add(LocationOf(v, file), ap + ".values", "", "expected a non-empty sequence of values");
        continue;
      }
      for (size_t j = 0; j < v.size(); ++j) {
        std::string t;
        if (!ScalarOf(v[j], ap + ".values[" + std::to_string(j) + "]", file, d, t)) continue;
        // Checked by applying it, with the position of the value.
        Scenario probe = base;
        const base::SourceLocation where = LocationOf(v[j], file);
        if (ApplyOverride(probe, axis.path + "=" + t, d, &where)) axis.values.push_back(t);
      }
    } else {
      const bool log = static_cast<bool>(a["log"]);
      const size_t had = d.size();
      RangeValues(log ? a["log"] : a["linear"], log, ap + (log ? ".log" : ".linear"), axis.path, file,
                  info, d, axis.values);
      if (d.size() == had) {
        for (const std::string& t : axis.values) {
          Scenario probe = base;
          const base::SourceLocation where = LocationOf(log ? a["log"] : a["linear"], file);
          ApplyOverride(probe, axis.path + "=" + t, d, &where);
        }
      }
    }
    s.axes.push_back(std::move(axis));
  }
  // Zipped axes need as many values.
  for (size_t i = 0; i < s.axes.size(); ++i) {
    if (s.axes[i].group.empty()) continue;
    for (size_t j = 0; j < i; ++j) {
      if (s.axes[j].group == s.axes[i].group && s.axes[j].values.size() != s.axes[i].values.size()) {
        d.Add(s.axes[i].where, "sweep.axes[" + std::to_string(i) + "]", s.axes[i].group,
              "axes zipped in group '" + s.axes[i].group + "' need as many values (" + s.axes[j].path +
                  " has " + std::to_string(s.axes[j].values.size()) + ", " + s.axes[i].path + " has " +
                  std::to_string(s.axes[i].values.size()) + ")");
        break;
      }
    }
  }
  if (s.each == SweepEach::kSearch) {
    const std::string why = ObjectiveProblem(s.objective, base.system);
    if (!why.empty()) d.Add(LocationOf(map, file), "sweep.search.objective", ObjectiveName(s.objective), why);
  }
  if (d.size() != before) return std::nullopt;

  // What the sweep hash covers: every setting that changes a row.
  std::ostringstream c;
  c << "orrery-sweep 1\nname=" << s.name << "\nscenario_fnv=" << HashHex(Fnv1a64(ReadFile(s.scenario_path)))
    << "\neach=" << EachName(s.each);
  if (s.each == SweepEach::kSearch)
    c << "\ntop=" << s.top << "\nobjective=" << ObjectiveName(s.objective)
      << "\nround_batch=" << s.space.round_batch << "\noffload=" << s.space.offload
      << "\ncontext_parallel=" << s.space.context_parallel
      << "\nall_group_orders=" << s.space.all_group_orders
      << "\nmax_micro_batch=" << s.space.max_micro_batch;
  for (const auto& [k, v] : s.set) c << "\nset " << k << "=" << v;
  for (const SweepAxis& a : s.axes) {
    c << "\naxis " << a.path << " group=" << a.group << " values=";
    for (size_t i = 0; i < a.values.size(); ++i) c << (i ? "|" : "") << a.values[i];
  }
  c << "\n";
  s.canonical = c.str();
  s.hash = Fnv1a64(s.canonical);
  return s;
}

std::vector<SweepPoint> ExpandPoints(const SweepSpec& s) {
  // Groups in order of first appearance; each group is a list of axes.
  std::vector<std::vector<size_t>> groups;
  std::vector<std::string> names;
  for (size_t i = 0; i < s.axes.size(); ++i) {
    const std::string& g = s.axes[i].group;
    auto it = g.empty() ? names.end() : std::find(names.begin(), names.end(), g);
    if (it == names.end()) {
      groups.push_back({i});
      names.push_back(g.empty() ? "\x01" + std::to_string(i) : g);
    } else {
      groups[static_cast<size_t>(it - names.begin())].push_back(i);
    }
  }
  std::vector<size_t> len(groups.size());
  uint64_t total = groups.empty() ? 0 : 1;
  for (size_t g = 0; g < groups.size(); ++g) {
    len[g] = s.axes[groups[g][0]].values.size();
    total *= len[g];
  }
  std::vector<SweepPoint> out;
  out.reserve(total);
  std::vector<size_t> at(groups.size(), 0);
  for (uint64_t n = 0; n < total; ++n) {
    SweepPoint p;
    p.index = n;
    std::vector<std::pair<size_t, std::string>> by_axis;
    for (size_t g = 0; g < groups.size(); ++g)
      for (size_t ax : groups[g]) by_axis.emplace_back(ax, s.axes[ax].values[at[g]]);
    std::sort(by_axis.begin(), by_axis.end());
    std::string key;
    for (const auto& [ax, v] : by_axis) {
      p.params.emplace_back(s.axes[ax].path, v);
      key += s.axes[ax].path + "=" + v + "\n";
    }
    p.key = Fnv1a64(key);
    out.push_back(std::move(p));
    // Odometer: the last group turns fastest.
    for (size_t g = groups.size(); g-- > 0;) {
      if (++at[g] < len[g]) break;
      at[g] = 0;
    }
  }
  return out;
}

namespace {

ordered_json PlanJson(const parallelism::TrainingPlan& p, int64_t dp) {
  return ordered_json{{"tp", p.tp},
                      {"pp", p.pp},
                      {"cp", p.cp},
                      {"ep", p.ep},
                      {"dp", dp},
                      {"micro_batch", p.micro_batch},
                      {"interleave", p.interleave},
                      {"recompute", parallelism::RecomputeName(p.recompute)},
                      {"sequence_parallel", p.sequence_parallel},
                      {"zero", p.zero},
                      {"dp_overlap", p.dp_overlap},
                      {"tp_comm_overlap", p.tp_comm_overlap},
                      {"offload_optimizer", p.offload_optimizer},
                      {"group_order", p.group_order}};
}

void Fill(const Scenario& s, const TrainingEstimate& e, PointResult& r) {
  r.devices = hardware::DeviceCount(s.system);
  r.global_batch = s.workload.global_batch;
  r.plan = PlanJson(s.training, e.dp).dump();
  r.iteration_s = e.iteration_s;
  r.tokens_per_s = e.tokens_per_s;
  r.mfu = e.mfu;
  r.memory_bytes = e.memory.total();
  r.capacity_bytes = e.memory_capacity;
  r.cost_usd = e.cost_usd;
  r.energy_j = e.energy_j;
  r.train_time_s = e.train_time_s;
  r.train_cost_usd = e.train_cost_usd;
  const TimeBreakdown& t = e.time;
  const parallelism::MemoryBreakdown& m = e.memory;
  ordered_json breakdown{{"time",
                          {{"forward_s", t.forward},
                           {"backward_s", t.backward},
                           {"recompute_s", t.recompute},
                           {"tp_comm_s", t.tp_comm},
                           {"cp_comm_s", t.cp_comm},
                           {"ep_comm_s", t.ep_comm},
                           {"pp_bubble_s", t.pp_bubble},
                           {"pp_p2p_s", t.pp_p2p},
                           {"dp_comm_s", t.dp_comm},
                           {"optimizer_s", t.optimizer},
                           {"offload_s", t.offload}}},
                         {"memory",
                          {{"weights_bytes", m.weights},
                           {"gradients_bytes", m.gradients},
                           {"optimizer_bytes", m.optimizer},
                           {"activations_bytes", m.activations},
                           {"temporary_bytes", m.temporary}}}};
  if (e.feasible() && e.iteration_s > 0) {
    // Goodput over the cluster (core/goodput): it falls as devices, and so
    // failures, grow; a sweep over nodes shows it as breakdown.goodput.*.
    const goodput::Result g = goodput::Evaluate(goodput::MakeInputs(
        s.system, s.training, models::ParameterCount(s.model, s.workload.seq_len), e.iteration_s,
        e.train_time_s));
    breakdown["goodput"] = {{"goodput", g.goodput},
                            {"failure_goodput", g.failure_goodput},
                            {"straggler_factor", g.in.straggler_factor},
                            {"mtbf_s", std::isfinite(g.in.mtbf_s) ? ordered_json(g.in.mtbf_s)
                                                                  : ordered_json()},
                            {"checkpoint_interval_s", g.interval_s},
                            {"effective_time_s", e.train_time_s > 0 ? ordered_json(g.effective_s)
                                                                    : ordered_json()}};
  }
  r.breakdown = breakdown.dump();
  r.status = e.feasible() ? "ok" : "infeasible";
  r.reason = e.feasible() ? "" : ExplainInfeasible(e, s);
}

}  // namespace

PointResult EvaluatePoint(const Scenario& base, const SweepSpec& spec, const SweepPoint& p,
                          SearchMemo* memo) {
  PointResult r;
  r.index = p.index;
  r.key = p.key;
  ordered_json params = ordered_json::object();
  for (const auto& [k, v] : p.params) params[k] = v;
  r.params = params.dump();
  r.breakdown = "{}";
  r.plan = "{}";
  Scenario s = base;
  Diagnostics d;
  for (const auto& [k, v] : p.params) ApplyOverride(s, k + "=" + v, d);
  if (!d.ok()) {
    r.status = "invalid";
    r.reason = d.ToString();
    return r;
  }
  r.devices = hardware::DeviceCount(s.system);
  r.global_batch = s.workload.global_batch;
  if (spec.each == SweepEach::kEstimate) {
    CrossCheck(s, d);
    if (!d.ok()) {
      // The scenario's plan does not suit this point (e.g. tp x pp x dp no
      // longer matches the device count): an infeasible point.
      r.status = "infeasible";
      for (const auto& item : d.items()) {
        if (!r.reason.empty()) r.reason += "; ";
        r.reason += item.path + ": " + item.message;
      }
      return r;
    }
    const TrainingEstimator est(s.model, s.system);
    Fill(s, est.Run(s.training, s.workload), r);
    return r;
  }
  SearchOptions o;
  o.top = std::max(1, spec.top);
  o.objective = spec.objective;
  o.threads = 1;  // points run in parallel; one thread each keeps rows deterministic
  o.space = spec.space;
  o.memo = memo;
  const SearchResult res = Search(s, o);
  ordered_json sj{{"candidates", res.stats.candidates}};
  if (res.top.empty()) {
    r.status = "infeasible";
    r.reason = res.why_none;
    r.search = sj.dump();
    return r;
  }
  const Scenario best = ScenarioOf(s, res.top[0].knobs);
  Fill(best, res.top[0].estimate, r);
  if (res.top.size() > 1) {
    ordered_json others = ordered_json::array();
    for (size_t i = 1; i < res.top.size(); ++i)
      others.push_back({{"plan", DescribeKnobs(res.top[i].knobs)},
                        {"iteration_s", res.top[i].estimate.iteration_s}});
    sj["runners_up"] = others;
    sj["why_first"] = WhyBetter(res.top[0], res.top[1]);
  }
  r.search = sj.dump();
  return r;
}

std::string ResultsToText(const std::vector<PointResult>& rows) {
  std::string out;
  for (const PointResult& r : rows) {
    ordered_json j{{"index", r.index},         {"key", r.key},
                   {"params", r.params},       {"status", r.status},
                   {"reason", r.reason},       {"plan", r.plan},
                   {"devices", r.devices},     {"global_batch", r.global_batch},
                   {"iteration_s", r.iteration_s}, {"tokens_per_s", r.tokens_per_s},
                   {"mfu", r.mfu},             {"memory_bytes", r.memory_bytes},
                   {"capacity_bytes", r.capacity_bytes}, {"cost_usd", r.cost_usd},
                   {"energy_j", r.energy_j},   {"train_time_s", r.train_time_s},
                   {"train_cost_usd", r.train_cost_usd}, {"breakdown", r.breakdown},
                   {"search", r.search}};
    out += j.dump() + "\n";
  }
  return out;
}

bool ResultsFromText(const std::string& text, std::vector<PointResult>& out) {
  std::istringstream is(text);
  for (std::string line; std::getline(is, line);) {
    if (line.empty()) continue;
    const auto j = ordered_json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return false;
    PointResult r;
    r.index = j.value("index", uint64_t{0});
    r.key = j.value("key", uint64_t{0});
    r.params = j.value("params", "");
    r.status = j.value("status", "");
    r.reason = j.value("reason", "");
    r.plan = j.value("plan", "");
    r.devices = j.value("devices", int64_t{0});
    r.global_batch = j.value("global_batch", int64_t{0});
    r.iteration_s = j.value("iteration_s", 0.0);
    r.tokens_per_s = j.value("tokens_per_s", 0.0);
    r.mfu = j.value("mfu", 0.0);
    r.memory_bytes = j.value("memory_bytes", 0.0);
    r.capacity_bytes = j.value("capacity_bytes", 0.0);
    r.cost_usd = j.value("cost_usd", 0.0);
    r.energy_j = j.value("energy_j", 0.0);
    r.train_time_s = j.value("train_time_s", 0.0);
    r.train_cost_usd = j.value("train_cost_usd", 0.0);
    r.breakdown = j.value("breakdown", "");
    r.search = j.value("search", "");
    out.push_back(std::move(r));
  }
  return true;
}

std::vector<std::vector<uint64_t>> WorkUnits(const SweepSpec& s, const std::vector<SweepPoint>& points,
                                             const std::vector<uint64_t>& pending, bool share) {
  std::vector<std::vector<uint64_t>> units;
  // The capacity axis shares when it is its own group: zipped with another
  // axis, its points differ in more than the capacity.
  const std::string* capacity_group = nullptr;
  bool alone = false;
  for (const SweepAxis& a : s.axes) {
    if (a.path != kSharedCapacityPath) continue;
    capacity_group = &a.group;
    alone = true;
  }
  if (capacity_group != nullptr && !capacity_group->empty())
    for (const SweepAxis& a : s.axes)
      if (a.group == *capacity_group && a.path != kSharedCapacityPath) alone = false;
  if (!share || s.each != SweepEach::kSearch || !alone) {
    units.reserve(pending.size());
    for (uint64_t i : pending) units.push_back({i});
    return units;
  }
  // The other axes' values name a unit.
  std::unordered_map<std::string, size_t> unit_of;
  for (uint64_t i : pending) {
    std::string rest;
    for (const auto& [path, value] : points[i].params)
      if (path != kSharedCapacityPath) rest += path + "=" + value + "\n";
    const auto [it, added] = unit_of.emplace(rest, units.size());
    if (added) units.emplace_back();
    units[it->second].push_back(i);
  }
  return units;
}

bool RunSweep(const SweepSpec& spec, const Scenario& base, const SweepRunOptions& o,
              SweepRunStats& stats, std::string& error) {
  const auto start = std::chrono::steady_clock::now();
  LocalComm local;
  Comm& comm = o.comm != nullptr ? *o.comm : local;
  const std::vector<SweepPoint> points = ExpandPoints(spec);
  stats = SweepRunStats{};
  stats.points = points.size();

  // Rank 0 opens the store and decides which points remain; every rank
  // learns the outcome.
  std::unique_ptr<ResultStore> store;
  std::string plan_text;
  if (comm.rank() == 0) {
    std::string e;
    store = ResultStore::Open(o.db, e);
    std::vector<uint64_t> pending;
    if (store) {
      SweepRecord rec{spec.hash, spec.name, spec.file, spec.scenario_path, EachName(spec.each),
                      ObjectiveName(spec.objective), spec.canonical, static_cast<int64_t>(points.size())};
      rec.spec = spec.canonical;
      rec.points = static_cast<int64_t>(points.size());
      if (!store->RegisterSweep(rec, e)) {
        e = o.db + ": " + e;
      } else {
        const auto keys = store->StoredKeys(spec.hash, e);
        if (!e.empty()) {
          e = o.db + ": " + e;
        } else if (!keys.empty() && !o.resume) {
          e = o.db + " already holds " + std::to_string(keys.size()) + " of the " +
              std::to_string(points.size()) + " points of sweep '" + spec.name + "' (" +
              HashHex(spec.hash) + "); add --resume to finish it, or choose another --db";
        }
        for (const SweepPoint& p : points)
          if (keys.count(p.key) == 0) pending.push_back(p.index);
      }
    }
    if (!e.empty()) {
      plan_text = "error\n" + e;
    } else {
      plan_text = "ok\n";
      for (uint64_t i : pending) plan_text += std::to_string(i) + "\n";
    }
  }
  comm.Broadcast(plan_text);
  std::istringstream is(plan_text);
  std::string head;
  std::getline(is, head);
  if (head != "ok") {
    std::getline(is, error);
    return false;
  }
  std::vector<uint64_t> pending;
  for (std::string line; std::getline(is, line);)
    if (!line.empty()) pending.push_back(std::stoull(line));
  stats.skipped = points.size() - pending.size();

  int threads = o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, threads);
  const size_t batch = std::max<size_t>(1, o.batch);
  const size_t ranks = static_cast<size_t>(comm.size());
  const size_t me = static_cast<size_t>(comm.rank());
  // Every rank forms the same units from the same pending list.
  const std::vector<std::vector<uint64_t>> units = WorkUnits(spec, points, pending, o.share_across_capacity);
  const bool shared = units.size() < pending.size();
  if (o.progress && comm.rank() == 0) o.progress(stats.skipped, stats.points);
  for (size_t begin = 0, next_begin = 0; begin < units.size(); begin = next_begin) {
    std::string go = o.cancel != nullptr && o.cancel->load(std::memory_order_relaxed) ? "stop" : "go";
    comm.Broadcast(go);  // every rank stops at the same batch
    if (go == "stop") {
      stats.cancelled = true;
      break;
    }
    // A batch: whole units, at least `batch` points, and with shared units
    // at least one for each thread of each rank.
    size_t in_batch = 0;
    const size_t min_units = shared ? static_cast<size_t>(threads) * ranks : 1;
    next_begin = begin;
    while (next_begin < units.size() && (in_batch < batch || next_begin - begin < min_units))
      in_batch += units[next_begin++].size();
    // This rank's share of the batch: every ranks-th unit.
    std::vector<const std::vector<uint64_t>*> mine;
    std::vector<size_t> first;  // each unit's first row in `results`
    size_t my_rows = 0;
    for (size_t j = begin; j < next_begin; ++j)
      if ((j - begin) % ranks == me) {
        mine.push_back(&units[j]);
        first.push_back(my_rows);
        my_rows += units[j].size();
      }
    std::vector<PointResult> results(my_rows);
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < mine.size();) {
        const std::vector<uint64_t>& unit = *mine[i];
        std::optional<SearchMemo> memo;
        if (unit.size() > 1) memo.emplace();
        for (size_t k = 0; k < unit.size(); ++k)
          results[first[i] + k] = EvaluatePoint(base, spec, points[unit[k]], memo ? &*memo : nullptr);
      }
    };
    const int t_here = std::min<int>(threads, static_cast<int>(std::max<size_t>(1, mine.size())));
    std::vector<std::thread> pool;
    for (int t = 1; t < t_here; ++t) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();

    const std::vector<std::string> parts = comm.Gather(ResultsToText(results));
    std::string status = "ok";
    if (comm.rank() == 0) {
      std::vector<PointResult> rows;
      for (const std::string& part : parts)
        if (!ResultsFromText(part, rows)) status = "a rank sent results that do not parse";
      std::sort(rows.begin(), rows.end(),
                [](const PointResult& a, const PointResult& b) { return a.index < b.index; });
      std::string e;
      // A failed write (a full disk, an I/O error) rolls its batch back;
      // the batches committed before it stay, and --resume finishes.
      if (status == "ok" && !store->WriteBatch(spec.hash, rows, e))
        status = o.db + ": " + e +
                 (stats.skipped + stats.evaluated == 0
                      ? std::string("; no point was stored yet: fix the cause and run again")
                      : "; the " + std::to_string(stats.skipped + stats.evaluated) +
                            " points stored before are kept: fix the cause and run again with --resume");
      for (const PointResult& r : rows) {
        ++stats.evaluated;
        if (r.status == "ok") ++stats.ok;
        else if (r.status == "infeasible") ++stats.infeasible;
        else ++stats.invalid;
      }
      if (o.progress) o.progress(stats.skipped + stats.evaluated, stats.points);
    }
    comm.Broadcast(status);
    if (status != "ok") {
      error = status;
      return false;
    }
  }
  stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

}  // namespace orrery::engine
