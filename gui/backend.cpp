#include "gui/backend.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/base/quantity.h"
#include "core/estimate/chrome_trace.h"
#include "core/estimate/event_estimator.h"
#include "core/estimate/inference_estimator.h"
#include "core/estimate/serving_sim.h"
#include "core/search/result_store.h"
#include "core/search/search.h"
#include "core/search/sweep.h"
#include "hardware/cost_model.h"
#include "hardware/network.h"
#include "parallelism/plan_spec.h"

namespace orrery::gui {

namespace fs = std::filesystem;

namespace {

engine::PresetStore Store() { return engine::PresetStore(engine::PresetStore::DefaultConfigDir()); }

std::string ReadText(const std::string& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "path: rule (got 'value'); hint": a diagnostic as `orrery check` prints it,
// without the file and line a form field does not have.
std::string FieldText(const base::Diagnostic& d) {
  const std::string full = d.ToString();
  const size_t at = full.find(": error: ");
  return at == std::string::npos ? full : full.substr(at + 9);
}

// Registry path of a diagnostic ("scenario.training.tp" -> "training.tp").
std::string RegistryPath(const std::string& path) {
  const std::string prefix = "scenario.";
  return path.rfind(prefix, 0) == 0 ? path.substr(prefix.size()) : path;
}

}  // namespace

// ---------------------------------------------------------------------------
bool ScenarioDoc::Open(const std::string& file_or_preset, base::Diagnostics& diags) {
  const engine::PresetStore store = Store();
  auto s = engine::LoadScenarioFile(file_or_preset, store, diags);
  if (!s) return false;
  base_ = std::move(*s);
  file_ = base_.file;
  yaml_text_ = ReadText(file_);
  model_preset_.clear();
  system_preset_.clear();
  sets_.clear();
  loaded_ = true;
  return true;
}

void ScenarioDoc::Set(const std::string& path, const std::string& text) {
  auto it = std::find_if(sets_.begin(), sets_.end(), [&](const auto& p) { return p.first == path; });
  if (text.empty()) {
    if (it != sets_.end()) sets_.erase(it);
    return;
  }
  if (it != sets_.end()) it->second = text;
  else sets_.emplace_back(path, text);
}

std::string ScenarioDoc::OverrideOf(const std::string& path) const {
  for (const auto& [p, v] : sets_)
    if (p == path) return v;
  return {};
}

BuiltScenario ScenarioDoc::Build() const {
  BuiltScenario out;
  if (!loaded_) {
    out.errors.push_back("no scenario is open");
    return out;
  }
  const engine::PresetStore store = Store();
  engine::Scenario s = base_;
  base::Diagnostics d;
  const base::SourceLocation here{file_, 0, 0};
  if (!model_preset_.empty())
    engine::LoadModelPreset(model_preset_, store, here, "scenario.model", s.model, d);
  if (!system_preset_.empty())
    engine::LoadSystemPreset(system_preset_, store, here, "scenario.system", s.system, d);
  for (const auto& item : d.items()) out.errors.push_back(FieldText(item));
  for (const auto& [path, text] : sets_) {
    base::Diagnostics one;
    const base::SourceLocation where{"", 0, 0};
    if (!engine::ApplyOverride(s, path + "=" + text, one, &where) && one.size() > 0)
      out.field_errors[path] = FieldText(one.items().front());
  }
  if (s.inference) engine::LoadDraftModel(s, store, d);
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

std::string ScenarioDoc::Yaml() const {
  YAML::Node root = YAML::Load(yaml_text_);
  YAML::Node sc = root["scenario"];
  if (!model_preset_.empty()) sc["model"] = model_preset_;
  if (!system_preset_.empty()) sc["system"] = system_preset_;
  if (!sets_.empty()) {
    YAML::Node set = sc["set"];
    if (!set || !set.IsMap()) set = YAML::Node(YAML::NodeType::Map);
    for (const auto& [path, text] : sets_) set[path] = text;
    sc["set"] = set;
  }
  YAML::Emitter e;
  e << root;
  return std::string(e.c_str()) + "\n";
}

bool ScenarioDoc::Save(const std::string& file, std::string& error) const {
  std::ofstream out(file);
  if (out) out << Yaml();
  if (!out) {
    error = file + ": cannot write the file";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
std::vector<FormField> FormFields(const engine::Scenario& s) {
  std::vector<FormField> out;
  for (const auto& sec : engine::Registry()) {
    if (sec.prefix == "prices") continue;  // the network verb's, not a scenario's
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

std::string ValueText(const engine::Scenario& s, const std::string& path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos) return {};
  const std::string section = path.substr(0, dot), key = path.substr(dot + 1);
  if (section == "model") return models::ModelSchema().GetText(s.model, key);
  if (section == "system") return hardware::SystemSchema().GetText(s.system, key);
  if (section == "system.device") return hardware::DeviceSchema().GetText(s.system.device, key);
  if (section == "system.reliability")
    return hardware::ReliabilitySchema().GetText(s.system.reliability, key);
  if (section == "system.storage") return hardware::StorageSchema().GetText(s.system.storage, key);
  if (section == "training") return parallelism::TrainingPlanSchema().GetText(s.training, key);
  if (section == "workload") return parallelism::WorkloadSchema().GetText(s.workload, key);
  if (section == "inference") {
    if (s.inference) return parallelism::InferenceDeploymentSchema().GetText(*s.inference, key);
    parallelism::InferenceDeployment d;
    parallelism::InferenceDeploymentSchema().ApplyDefaults(d);
    return parallelism::InferenceDeploymentSchema().GetText(d, key);
  }
  if (section.rfind("system.network[", 0) == 0) {
    const size_t i = std::strtoul(section.c_str() + 15, nullptr, 10);
    if (i < s.system.network.size())
      return hardware::NetworkTierSchema().GetText(s.system.network[i], key);
  }
  return {};
}

std::string CheckFieldText(const FormField& f, const std::string& text) {
  base::ParamValue v;
  std::string hint;
  const std::string err = base::ParseParam(f.info, text, v, hint);
  if (err.empty()) return {};
  base::Diagnostic d;
  d.path = f.path;
  d.value = text;
  d.message = err;
  d.hint = hint;
  return FieldText(d);
}

Presets ListPresets() {
  const engine::PresetStore store = Store();
  Presets p;
  p.scenarios = store.Names(engine::DocKind::kScenario);
  p.models = store.Names(engine::DocKind::kModel);
  p.systems = store.Names(engine::DocKind::kSystem);
  p.devices = store.Names(engine::DocKind::kDevice);
  return p;
}

std::string PresetsDir() { return engine::PresetStore::DefaultConfigDir(); }

std::string DescribeModel(const engine::Scenario& s) {
  const auto& m = s.model;
  std::ostringstream os;
  os << m.name << ": " << m.layers << " layers, hidden " << m.hidden << ", " << m.heads
     << " heads";
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

// ---------------------------------------------------------------------------
TrainingResult EstimateTraining(const engine::Scenario& s) {
  TrainingResult r;
  r.has_training = s.has_training;
  r.label = s.name + " (" + s.model.name + " on " + std::to_string(hardware::DeviceCount(s.system)) +
            " " + s.system.device.name + ", tp " + std::to_string(s.training.tp) + " pp " +
            std::to_string(s.training.pp) + ")";
  if (!s.has_training) return r;
  const engine::TrainingEstimator estimator(s.model, s.system);
  r.estimate = estimator.Run(s.training, s.workload);
  if (!r.estimate.feasible()) r.reason = engine::ExplainInfeasible(r.estimate, s);
  return r;
}

const char* StreamLabel(int stream) {
  return parallelism::StreamName(static_cast<parallelism::StreamKind>(stream));
}

TimelineResult SimulateStep(const engine::Scenario& s) {
  TimelineResult r;
  if (!s.has_training) {
    r.error = "the scenario has no training section";
    return r;
  }
  const engine::EventEstimator estimator(s.model, s.system);
  engine::EventOptions options;
  options.keep_timeline = true;
  const engine::EventEstimate e = estimator.Run(s.training, s.workload, options);
  r.schedule = parallelism::PipelineScheduleName(e.schedule);
  r.closed_form_s = e.closed_form.iteration_s;
  if (e.error != engine::EventError::kNone) {
    r.error = engine::ExplainEventError(e, s);
    return r;
  }
  if (!e.estimate.feasible()) {
    r.error = engine::ExplainInfeasible(e.estimate, s);
    return r;
  }
  if (!e.simulated()) {
    r.error = "the step was not simulated";
    return r;
  }
  r.ok = true;
  r.stages = static_cast<int>(e.graph.stages);
  r.makespan_s = e.timeline.makespan;
  r.bubble_fraction = e.step.bubble_fraction;
  const size_t n = e.graph.info.size();
  r.tasks.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const double a = e.timeline.start[i], b = e.timeline.finish[i];
    if (!(b > a)) continue;  // joins and empty tasks
    const auto& info = e.graph.info[i];
    r.tasks.push_back({info.stage, static_cast<int>(info.stream), a, b,
                       engine::TraceName(e.graph, static_cast<int32_t>(i)),
                       static_cast<int>(info.kind)});
  }
  return r;
}

bool WriteTrace(const engine::Scenario& s, const std::string& file, std::string& error) {
  const engine::EventEstimator estimator(s.model, s.system);
  engine::EventOptions options;
  options.keep_timeline = true;
  const engine::EventEstimate e = estimator.Run(s.training, s.workload, options);
  if (!e.simulated()) {
    error = engine::ExplainEventError(e, s);
    if (error.empty()) error = "the step was not simulated";
    return false;
  }
  std::ofstream out(file);
  if (out) engine::WriteChromeTrace(e.graph, e.timeline, s.name, out);
  if (!out) {
    error = file + ": cannot write the file";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
namespace {

SearchRow RowOf(const engine::Scenario& s, const engine::SearchCandidate& c) {
  SearchRow r;
  const auto& k = c.knobs;
  r.plan = engine::DescribeKnobs(k);
  r.devices = k.devices;
  r.tp = k.tp;
  r.pp = k.pp;
  r.dp = k.dp;
  r.cp = k.cp;
  r.ep = k.ep;
  r.micro_batch = k.micro_batch;
  r.interleave = k.interleave;
  r.zero = k.zero;
  r.global_batch = k.global_batch;
  r.recompute = parallelism::TrainingPlanSchema().GetText(engine::PlanOf(s, k), "recompute");
  const auto& e = c.estimate;
  r.iteration_s = e.iteration_s;
  r.memory_bytes = e.memory.total();
  r.capacity_bytes = e.memory_capacity;
  r.mfu = e.mfu;
  r.cost_usd = e.cost_usd;
  r.tokens_per_s = e.tokens_per_s;
  r.score = c.score;
  // The overrides that make the scenario this plan.
  const engine::Scenario t = engine::ScenarioOf(s, k);
  const auto& plan_schema = parallelism::TrainingPlanSchema();
  for (const auto& key : plan_schema.Keys()) {
    const std::string now = plan_schema.GetText(t.training, key);
    if (now != plan_schema.GetText(s.training, key)) r.overrides.emplace_back("training." + key, now);
  }
  for (const char* key : {"nodes", "devices_per_node"}) {
    const std::string now = hardware::SystemSchema().GetText(t.system, key);
    if (now != hardware::SystemSchema().GetText(s.system, key))
      r.overrides.emplace_back(std::string("system.") + key, now);
  }
  const std::string gb = parallelism::WorkloadSchema().GetText(t.workload, "global_batch");
  if (gb != parallelism::WorkloadSchema().GetText(s.workload, "global_batch"))
    r.overrides.emplace_back("workload.global_batch", gb);
  return r;
}

}  // namespace

SearchOutcome RunSearch(const engine::Scenario& s, const std::string& objective, int keep,
                        const std::function<void(uint64_t, uint64_t)>& progress,
                        const std::atomic<bool>* cancel) {
  SearchOutcome out;
  if (!s.has_training) {
    out.error = "the scenario has no training section to search";
    return out;
  }
  engine::SearchOptions o;
  o.top = std::max(1, keep);
  if (!engine::ParseObjective(objective, o.objective)) {
    out.error = "unknown objective '" + objective + "'";
    return out;
  }
  if (const std::string why = engine::ObjectiveProblem(o.objective, s.system); !why.empty()) {
    out.error = why;
    return out;
  }
  // The library's search has no cancel flag yet: it is run as shards (the
  // same split MPI ranks use), the flag polled between them, and merged.
  constexpr int kShards = 8;
  constexpr uint64_t kScale = 1000;
  o.shards = kShards;
  std::vector<engine::SearchResult> parts;
  for (int shard = 0; shard < kShards; ++shard) {
    if (cancel != nullptr && cancel->load()) {
      out.cancelled = true;
      return out;
    }
    o.shard = shard;
    o.progress = [&](uint64_t done, uint64_t total) {
      if (progress && total > 0)
        progress(static_cast<uint64_t>(shard) * kScale + done * kScale / total, kShards * kScale);
    };
    parts.push_back(engine::Search(s, o));
  }
  if (progress) progress(kShards * kScale, kShards * kScale);
  const engine::SearchResult r = engine::MergeSearchResults(parts, o.top);
  out.candidates = r.stats.candidates;
  out.evaluated = r.stats.evaluated;
  out.feasible = r.stats.feasible;
  out.wall_s = r.stats.wall_s;
  if (r.top.empty()) {
    out.error = r.why_none.empty() ? "no feasible plan" : r.why_none;
    for (const auto& p : parts)
      if (!p.why_none.empty()) out.error = p.why_none;
    return out;
  }
  for (const auto& c : r.top) out.rows.push_back(RowOf(s, c));
  out.ok = true;
  return out;
}

std::vector<size_t> ParetoFront(const std::vector<SearchRow>& rows) {
  std::vector<size_t> idx(rows.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    if (rows[a].iteration_s != rows[b].iteration_s) return rows[a].iteration_s < rows[b].iteration_s;
    return rows[a].memory_bytes < rows[b].memory_bytes;
  });
  std::vector<size_t> front;
  double best_memory = std::numeric_limits<double>::infinity();
  for (size_t i : idx) {
    if (rows[i].memory_bytes < best_memory) {
      front.push_back(i);
      best_memory = rows[i].memory_bytes;
    }
  }
  return front;
}

// ---------------------------------------------------------------------------
std::string RunSweepInto(const ScenarioDoc& doc, const std::vector<SweepAxisAsk>& axes,
                         bool search_each, const std::string& db,
                         const std::function<void(uint64_t, uint64_t)>& progress) {
  if (axes.empty()) return "choose at least one axis";
  const fs::path dbp(db);
  const std::string stem = dbp.filename().string();
  const fs::path scenario_file = dbp.parent_path() / (stem + ".scenario.yaml");
  const fs::path sweep_file = dbp.parent_path() / (stem + ".sweep.yaml");
  std::string error;
  if (!doc.Save(scenario_file.string(), error)) return error;
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "sweep" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << (doc.base().name + "-what-if");
  e << YAML::Key << "scenario" << YAML::Value << scenario_file.filename().string();
  e << YAML::Key << "each" << YAML::Value << (search_each ? "search" : "estimate");
  e << YAML::Key << "axes" << YAML::Value << YAML::BeginSeq;
  for (const auto& a : axes) {
    e << YAML::BeginMap << YAML::Key << "path" << YAML::Value << a.path;
    e << YAML::Key << (a.log ? "log" : "linear") << YAML::Value << YAML::Flow << YAML::BeginMap
      << YAML::Key << "from" << YAML::Value << a.from << YAML::Key << "to" << YAML::Value << a.to
      << YAML::Key << "points" << YAML::Value << a.points << YAML::EndMap;
    e << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  {
    std::ofstream out(sweep_file);
    if (out) out << e.c_str() << "\n";
    if (!out) return sweep_file.string() + ": cannot write the file";
  }
  engine::Scenario base;
  base::Diagnostics d;
  auto spec = engine::LoadSweepFile(sweep_file.string(), Store(), base, d);
  if (!spec) return d.ToString();
  engine::SweepRunOptions o;
  o.db = db;
  o.resume = true;  // a sweep already in the store is finished, not refused
  o.batch = 4;      // small batches: the chart fills as they commit
  o.progress = progress;
  engine::SweepRunStats stats;
  if (!engine::RunSweep(*spec, base, o, stats, error)) return error;
  return {};
}

SweepData ReadSweepStore(const std::string& db) {
  SweepData out;
  std::error_code ec;
  if (!fs::exists(db, ec)) {
    out.error = db + ": no such file";
    return out;
  }
  auto store = engine::ResultStore::Open(db, out.error, /*read_only=*/true);
  if (!store) return out;
  const auto sweeps = store->Sweeps(out.error);
  if (sweeps.empty()) {
    if (out.error.empty()) out.error = db + ": the store holds no sweep";
    return out;
  }
  const engine::SweepRecord& last = sweeps.back();
  out.name = last.name;
  out.points = static_cast<uint64_t>(last.points);
  std::ostringstream json;
  if (!store->Export(json, true, engine::HashHex(last.hash), out.error)) return out;
  const auto rows = nlohmann::ordered_json::parse(json.str(), nullptr, false);
  if (rows.is_discarded() || !rows.is_array()) {
    out.error = db + ": the store's rows are not readable";
    return out;
  }
  auto num = [](const nlohmann::ordered_json& r, const char* k) {
    return r.contains(k) && r[k].is_number() ? r[k].get<double>() : 0.0;
  };
  for (const auto& r : rows) {
    SweepRow row;
    row.index = r.value("point_index", uint64_t{0});
    if (r.contains("params") && r["params"].is_object())
      for (const auto& [k, v] : r["params"].items())
        row.params.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
    row.status = r.value("status", std::string());
    row.reason = r["reason"].is_string() ? r["reason"].get<std::string>() : "";
    row.iteration_s = num(r, "iteration_s");
    row.tokens_per_s = num(r, "tokens_per_s");
    row.mfu = num(r, "mfu");
    row.memory_bytes = num(r, "memory_bytes");
    row.cost_usd = num(r, "cost_usd");
    row.train_time_s = num(r, "train_time_s");
    row.train_cost_usd = num(r, "train_cost_usd");
    if (out.axes.empty())
      for (const auto& [k, v] : row.params) out.axes.push_back(k);
    out.rows.push_back(std::move(row));
  }
  std::sort(out.rows.begin(), out.rows.end(),
            [](const SweepRow& a, const SweepRow& b) { return a.index < b.index; });
  out.ok = true;
  return out;
}

double NumericValue(const std::string& path, const std::string& text) {
  const size_t dot = path.rfind('.');
  const std::string key = dot == std::string::npos ? path : path.substr(dot + 1);
  std::string section = dot == std::string::npos ? "" : path.substr(0, dot);
  if (section.rfind("system.network[", 0) == 0) section = "system.network[i]";
  for (const auto& sec : engine::Registry()) {
    if (sec.prefix != section) continue;
    for (const auto& p : sec.params) {
      if (p.key != key) continue;
      base::ParamValue v;
      std::string hint;
      if (base::ParseParam(p, text, v, hint).empty() && p.type != base::ParamType::kString)
        return v.number;
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

namespace {

const base::ParamInfo* InfoOf(const std::string& path) {
  static const std::vector<engine::RegistrySection> registry = engine::Registry();
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos) return nullptr;
  std::string section = path.substr(0, dot);
  const std::string key = path.substr(dot + 1);
  if (section.rfind("system.network[", 0) == 0) section = "system.network[i]";
  for (const auto& sec : registry)
    if (sec.prefix == section)
      for (const auto& p : sec.params)
        if (p.key == key) return &p;
  return nullptr;
}

}  // namespace

DisplayUnit UnitFor(const std::string& path, double max_si) {
  DisplayUnit u;
  const base::ParamInfo* info = InfoOf(path);
  if (info == nullptr || info->type != base::ParamType::kQuantity) return u;
  const std::string si(base::SiUnit(info->dim));
  if (info->dim == base::Dimension::kTime) {
    // Times read in s, ms, us, ns.
    const std::pair<double, const char*> steps[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
    for (const auto& [f, name] : steps)
      if (max_si >= f || f == 1e-9) {
        u.divide = f;
        u.unit = name;
        return u;
      }
  }
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int k = 0;
  while (k < 6 && max_si >= std::pow(1e3, k + 1)) ++k;
  u.divide = std::pow(1e3, k);
  u.unit = std::string(prefixes[k]) + si;
  return u;
}

// ---------------------------------------------------------------------------
InferenceOutcome RunInference(const engine::Scenario& s, int rate_points,
                              const std::atomic<bool>* cancel) {
  InferenceOutcome out;
  if (!s.inference) {
    out.error =
        "the scenario has no inference section: set any inference.* field (for example "
        "inference.tp) to deploy the model";
    return out;
  }
  const auto& d = *s.inference;
  const engine::InferenceEstimator est(s.model, s.system, s.draft_model ? &*s.draft_model : nullptr);
  const engine::InferenceEstimate e = est.Run(d);
  if (!e.feasible()) {
    out.error = engine::ExplainInfeasible(e, s);
    return out;
  }
  out.ttft_s = e.ttft_s;
  out.tpot_s = e.tpot_s;
  out.tokens_per_s = e.output_tokens_per_s;
  out.weights_bytes = e.memory.weights;
  out.kv_bytes = e.memory.kv_cache;
  out.activation_bytes = e.memory.activations;
  out.usable_bytes = e.memory_usable;
  out.capacity_bytes = e.memory_capacity;
  out.max_batch = e.max_batch;
  out.kv_capacity_tokens = est.KvCapacityTokens(d, static_cast<double>(d.max_batch_tokens));
  out.slo_set = d.slo_ttft > 0 || d.slo_tpot > 0;
  double top_rate = 0;
  if (out.slo_set) {
    const engine::RateSearch rs = engine::MaxRateMeetingSlo(est, d);
    out.max_rate_found = rs.found;
    out.max_rate = rs.max_rate;
    out.max_rate_reason = rs.reason;
    if (rs.found) top_rate = 2 * rs.max_rate;
  }
  if (!(top_rate > 0)) {
    // No SLO rate to centre on: up to twice the rate a full static batch sustains.
    const double per_request = e.e2e_s > 0 ? e.e2e_s / static_cast<double>(std::max<int64_t>(1, d.batch)) : 1;
    top_rate = 2 / std::max(per_request, 1e-6);
  }
  rate_points = std::max(2, rate_points);
  for (int i = 1; i <= rate_points; ++i) {
    if (cancel != nullptr && cancel->load()) break;
    const double rate = top_rate * i / rate_points;
    const engine::ServingResult r =
        engine::SimulateServing(est, d, engine::PoissonRequests(d, rate));
    if (!r.feasible) {
      out.error = r.reason;
      break;
    }
    out.curve.push_back({rate, r.ttft_s.p50, r.ttft_s.p99, r.tpot_s.p50, r.tpot_s.p99,
                         r.output_tokens_per_s, r.slo_attainment});
  }
  out.ok = true;
  return out;
}

// ---------------------------------------------------------------------------
NetworkView DescribeNetwork(const engine::Scenario& s) {
  NetworkView v;
  const engine::PresetStore store = Store();
  hardware::PriceSpec prices;
  base::Diagnostics d;
  const std::string price_file = store.dir() + "/prices/default.yaml";
  if (!hardware::LoadPricesFile(price_file, prices, d)) {
    v.error = d.ToString();
    return v;
  }
  const auto& sys = s.system;
  const hardware::SystemCost cost = hardware::CountParts(sys, prices);
  v.system = sys.name;
  v.device = sys.device.name;
  v.prices = prices.name;
  v.devices = hardware::DeviceCount(sys);
  v.devices_per_node = sys.devices_per_node;
  for (size_t i = 0; i < sys.network.size(); ++i) {
    const auto& t = sys.network[i];
    TierView tv;
    tv.name = t.name;
    tv.topology = hardware::TopologyName(t.topology);
    tv.domain = t.domain > 0 ? t.domain : v.devices;
    tv.bandwidth = t.bandwidth;
    tv.latency = t.latency;
    if (i < cost.tiers.size()) {
      const auto& p = cost.tiers[i];
      tv.switches = p.switches;
      tv.links = p.links;
      tv.transceivers = p.transceivers;
      tv.nic_ports = p.nic_ports;
      tv.levels = p.switch_levels;
      tv.cost_usd = p.cost();
      tv.power_w = p.power();
    }
    v.tiers.push_back(tv);
  }
  v.device_cost = cost.device_cost;
  v.device_power = cost.device_power;
  v.network_cost = cost.network_cost;
  v.network_power = cost.network_power;
  if (s.has_training) {
    const TrainingResult r = EstimateTraining(s);
    if (r.estimate.feasible()) v.iteration_s = r.estimate.iteration_s;
    else v.reason = r.reason;
  }
  v.ok = true;
  return v;
}

NetworkView DescribeNetworkWith(const engine::Scenario& s, const std::string& system) {
  engine::Scenario t = s;
  base::Diagnostics d;
  if (!engine::LoadSystemPreset(system, Store(), {"", 0, 0}, "system", t.system, d)) {
    NetworkView v;
    v.error = d.ToString();
    return v;
  }
  t.system.device = s.system.device;  // the fabric is what is compared
  t.system.device_preset = s.system.device_preset;
  const std::string why = engine::ResizeSystem(t.system, hardware::DeviceCount(s.system));
  if (!why.empty()) {
    NetworkView v;
    v.error = why;
    return v;
  }
  return DescribeNetwork(t);
}

NetworkView DescribeNetworkWithTopology(const engine::Scenario& s, const std::string& topology) {
  NetworkView v;
  if (s.system.network.empty()) {
    v.error = "the system has no network tier";
    return v;
  }
  engine::Scenario t = s;
  base::Diagnostics d;
  const std::string tier = "system.network[" + std::to_string(s.system.network.size() - 1) + "]";
  engine::ApplyOverride(t, tier + ".topology=" + topology, d);
  if (d.ok()) hardware::CheckSystem(t.system, "system", {"", 0, 0}, d);
  if (!d.ok()) {
    v.error = FieldText(d.items().front());
    return v;
  }
  t.system.name = s.system.name + ", " + s.system.network.back().name + " " + topology;
  return DescribeNetwork(t);
}

}  // namespace orrery::gui
