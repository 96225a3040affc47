#include "gui/backend.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/api/config.h"
#include "core/api/infer.h"
#include "core/api/network.h"
#include "core/api/report.h"
#include "core/api/search.h"
#include "core/api/sweep.h"
#include "core/api/timeline.h"
#include "core/base/format.h"
#include "core/base/quantity.h"

namespace orrery::gui {

namespace fs = std::filesystem;

namespace {

std::string ReadText(const std::string& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The first error of a failed call, in one line (a form or status line shows
// it; the full list is in the diagnostics).
std::string FirstError(const ResultBase& r) {
  if (!r.diagnostics.ok()) {
    const std::string full = r.diagnostics.items().front().ToString();
    const size_t at = full.find(": error: ");
    return at == std::string::npos ? full : full.substr(at + 9);
  }
  return r.reason;
}

}  // namespace

// ---------------------------------------------------------------------------
bool ScenarioDoc::Open(const std::string& file_or_preset, base::Diagnostics& diags) {
  auto s = ResolveScenario(ScenarioInput::File(file_or_preset), diags);
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
  ScenarioEdit edit;
  edit.base = base_;
  edit.model_preset = model_preset_;
  edit.system_preset = system_preset_;
  edit.sets = sets_;
  EditedScenario e = ApplyEdits(edit);
  out.scenario = std::move(e.scenario);
  out.field_errors = std::move(e.field_errors);
  out.errors = std::move(e.errors);
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
std::vector<FormField> FormFields(const engine::Scenario& s) { return ParamFields(s); }

std::string ValueText(const engine::Scenario& s, const std::string& path) { return ParamValueText(s, path); }

std::string CheckFieldText(const FormField& f, const std::string& text) { return CheckParamText(f.path, text); }

Presets ListPresets() {
  Presets p;
  for (const auto& kind : orrery::ListPresets().kinds) {
    if (kind.folder == "scenarios") p.scenarios = kind.names;
    else if (kind.folder == "models") p.models = kind.names;
    else if (kind.folder == "systems") p.systems = kind.names;
    else if (kind.folder == "devices") p.devices = kind.names;
  }
  return p;
}

std::string PresetsDir() { return ConfigDir(); }

// ---------------------------------------------------------------------------
TrainingResult EstimateTraining(const engine::Scenario& s) {
  TrainingResult r;
  r.has_training = s.has_training;
  r.label = s.name + " (" + s.model.name + " on " + std::to_string(hardware::DeviceCount(s.system)) +
            " " + s.system.device.name + ", tp " + std::to_string(s.training.tp) + " pp " +
            std::to_string(s.training.pp) + ")";
  if (!s.has_training) return r;
  EstimateRequest req;
  req.scenario = ScenarioInput::Loaded(s);
  const EstimateResult e = Estimate(req);
  r.estimate = e.estimate;
  if (e.status == Status::kInvalidInput) r.invalid = FirstError(e);
  else r.reason = e.reason;
  return r;
}

const char* StreamLabel(int stream) { return orrery::StreamLabel(static_cast<StreamKind>(stream)); }

namespace {

EstimateResult EventStep(const engine::Scenario& s) {
  EstimateRequest req;
  req.scenario = ScenarioInput::Loaded(s);
  req.engine = EstimateEngine::kEvent;
  req.keep_timeline = true;
  return Estimate(req);
}

}  // namespace

TimelineResult SimulateStep(const engine::Scenario& s) {
  TimelineResult r;
  if (!s.has_training) {
    r.error = "the scenario has no training section";
    return r;
  }
  const StepTimeline t = Timeline(EventStep(s));
  r.ok = t.ok;
  r.error = t.error;
  r.stages = t.stages;
  r.makespan_s = t.makespan_s;
  r.closed_form_s = t.closed_form_s;
  r.bubble_fraction = t.bubble_fraction;
  r.schedule = t.schedule;
  r.tasks.reserve(t.tasks.size());
  for (const orrery::TimelineTask& k : t.tasks)
    r.tasks.push_back({k.stage, static_cast<int>(k.stream), k.start_s, k.finish_s, k.name, static_cast<int>(k.kind)});
  return r;
}

bool WriteTrace(const engine::Scenario& s, const std::string& file, std::string& error) {
  const EstimateResult e = EventStep(s);
  std::ofstream out(file);
  if (!out) {
    error = file + ": cannot write the file";
    return false;
  }
  if (!WriteChromeTrace(e, out)) {
    error = e.ok() ? file + ": cannot write the file" : FirstError(e);
    if (error.empty()) error = "the step was not simulated";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
namespace {

SearchRow RowOf(const engine::Scenario& s, const SearchPlan& p) {
  SearchRow r;
  const auto& k = p.candidate.knobs;
  r.plan = PlanText(k);
  // As the CLI's plan line: a pipelined plan says its schedule.
  if (k.pp > 1) r.plan += std::string(" schedule=") + parallelism::ScheduleName(p.scenario.training.schedule);
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
  r.recompute = ParamValueText(p.scenario, "training.recompute");
  const auto& e = p.candidate.estimate;
  r.iteration_s = e.iteration_s;
  r.closed_form_s = p.candidate.event_checked ? p.candidate.closed_form_s : e.iteration_s;
  r.memory_bytes = e.memory.total();
  r.capacity_bytes = e.memory_capacity;
  r.mfu = e.mfu;
  r.cost_usd = e.cost_usd;
  r.tokens_per_s = e.tokens_per_s;
  r.score = p.candidate.score;
  r.overrides = OverridesBetween(s, p.scenario);  // what makes the scenario this plan
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
  SearchRequest req;
  req.scenario = ScenarioInput::Loaded(s);
  req.top = std::max(1, keep);
  if (!ParseObjectiveName(objective, req.objective)) {
    out.error = "unknown objective '" + objective + "'";
    return out;
  }
  Control control;
  control.cancel = cancel;
  if (progress) control.progress = [&progress](uint64_t done, uint64_t total, std::string_view) { progress(done, total); };
  const SearchResult r = Search(req, control);
  out.candidates = r.stats.candidates;
  out.evaluated = r.stats.evaluated;
  out.feasible = r.stats.feasible;
  out.out_of_memory = r.stats.out_of_memory;
  out.refused = r.stats.refused;
  out.wall_s = r.stats.wall_s;
  if (r.status == Status::kCancelled) {
    out.cancelled = true;
    return out;
  }
  if (!r.ok() || r.top.empty()) {
    out.error = FirstError(r);
    if (out.error.empty()) out.error = "no feasible plan";
    return out;
  }
  for (const SearchPlan& p : r.top) out.rows.push_back(RowOf(s, p));
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
                         const std::function<void(uint64_t, uint64_t)>& progress,
                         const std::atomic<bool>* cancel) {
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
  SweepRequest req;
  req.sweep_file = sweep_file.string();
  req.db = db;
  req.resume = true;  // a sweep already in the store is finished, not refused
  req.batch = 4;      // small batches: the chart fills as they commit
  Control control;
  control.cancel = cancel;
  if (progress) control.progress = [&progress](uint64_t done, uint64_t total, std::string_view) { progress(done, total); };
  const SweepResult r = Sweep(req, control);
  if (r.status == Status::kCancelled) return {};  // what was stored is shown; a later run resumes
  if (!r.ok()) return r.diagnostics.ok() ? r.reason : r.diagnostics.ToString();
  return {};
}

SweepData ReadSweepStore(const std::string& db) {
  SweepData out;
  std::error_code ec;
  if (!fs::exists(db, ec)) {
    out.error = db + ": no such file";
    return out;
  }
  const DbListResult list = DbList({db, {}});
  if (!list.ok()) {
    out.error = FirstError(list);
    return out;
  }
  if (list.sweeps.empty()) {
    out.error = db + ": the store holds no sweep";
    return out;
  }
  const engine::SweepRecord& last = list.sweeps.back();
  out.name = last.name;
  out.points = static_cast<uint64_t>(last.points);
  const DbExportResult rows = DbExport({db, engine::HashHex(last.hash)});
  if (!rows.ok()) {
    out.error = FirstError(rows);
    return out;
  }
  auto num = [](const nlohmann::ordered_json& r, const char* k) {
    return r.contains(k) && r[k].is_number() ? r[k].get<double>() : 0.0;
  };
  for (const auto& r : rows.rows) {
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

double NumericValue(const std::string& path, const std::string& text) { return ParamSiValue(path, text); }

DisplayUnit UnitFor(const std::string& path, double max_si) {
  DisplayUnit u;
  const base::ParamInfo* info = FindParam(path);
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
  InferRequest req;
  req.scenario = ScenarioInput::Loaded(s);
  const InferResult e = Infer(req);
  if (!e.ok()) {
    out.error = FirstError(e);
    return out;
  }
  const engine::InferenceEstimate& st = e.estimate;
  out.ttft_s = st.ttft_s;
  out.tpot_s = st.tpot_s;
  out.tokens_per_s = st.output_tokens_per_s;
  out.weights_bytes = st.memory.weights;
  out.kv_bytes = st.memory.kv_cache;
  out.activation_bytes = st.memory.activations;
  out.usable_bytes = st.memory_usable;
  out.capacity_bytes = st.memory_capacity;
  out.max_batch = st.max_batch;
  out.kv_capacity_tokens = e.kv_capacity_tokens;
  out.slo_set = d.slo_ttft > 0 || d.slo_tpot > 0;
  Control control;
  control.cancel = cancel;
  double top_rate = 0;
  if (out.slo_set) {
    req.mode = InferMode::kMaxRate;
    const InferResult m = Infer(req, control);
    out.max_rate_found = m.max_rate.found;
    out.max_rate = m.max_rate.max_rate;
    out.max_rate_reason = m.max_rate.found ? "" : FirstError(m);
    if (m.max_rate.found) top_rate = 2 * m.max_rate.max_rate;
  }
  if (!(top_rate > 0)) {
    // No SLO rate to centre on: up to twice the rate a full static batch sustains.
    const double per_request = st.e2e_s > 0 ? st.e2e_s / static_cast<double>(std::max<int64_t>(1, d.batch)) : 1;
    top_rate = 2 / std::max(per_request, 1e-6);
  }
  rate_points = std::max(2, rate_points);
  req.mode = InferMode::kServe;
  for (int i = 1; i <= rate_points; ++i) {
    if (cancel != nullptr && cancel->load()) break;
    const double rate = top_rate * i / rate_points;
    req.scenario = ScenarioInput::Loaded(
        s, {"inference.arrivals=poisson", "inference.rate=" + base::FormatPlain(rate, 12)});
    const InferResult r = Infer(req, control);
    if (r.status == Status::kCancelled) break;
    if (!r.ok()) {
      out.error = FirstError(r);
      break;
    }
    const engine::ServingResult& v = r.serving;
    out.curve.push_back({rate, v.ttft_s.p50, v.ttft_s.p99, v.tpot_s.p50, v.tpot_s.p99,
                         v.output_tokens_per_s, v.slo_attainment});
  }
  out.ok = true;
  return out;
}

// ---------------------------------------------------------------------------
namespace {

NetworkView ViewOf(const ScenarioNetworkResult& r) {
  NetworkView v;
  if (!r.ok()) {
    v.error = FirstError(r);
    return v;
  }
  const studies::NetworkReport& n = r.report;
  v.system = n.system;
  v.device = n.device;
  v.prices = n.prices;
  v.devices = n.devices;
  v.devices_per_node = n.devices_per_node;
  for (const auto& t : n.tiers) {
    TierView tv;
    tv.name = t.name;
    tv.topology = t.topology;
    tv.domain = t.domain > 0 ? t.domain : v.devices;
    tv.bandwidth = t.bandwidth;
    tv.latency = t.latency;
    tv.switches = t.parts.switches;
    tv.links = t.parts.links;
    tv.transceivers = t.parts.transceivers;
    tv.nic_ports = t.parts.nic_ports;
    tv.levels = t.parts.switch_levels;
    tv.cost_usd = t.parts.cost();
    tv.power_w = t.parts.power();
    v.tiers.push_back(tv);
  }
  v.device_cost = n.cost.device_cost;
  v.device_power = n.cost.device_power;
  v.network_cost = n.cost.network_cost;
  v.network_power = n.cost.network_power;
  if (r.has_estimate && r.estimate_reason.empty()) v.iteration_s = r.estimate.iteration_s;
  else v.reason = r.estimate_reason;
  v.ok = true;
  return v;
}

}  // namespace

NetworkView DescribeNetwork(const engine::Scenario& s) {
  ScenarioNetworkRequest req;
  req.scenario = s;
  return ViewOf(ScenarioNetwork(req));
}

NetworkView DescribeNetworkWith(const engine::Scenario& s, const std::string& system) {
  ScenarioNetworkRequest req;
  req.scenario = s;
  req.fabric_system = system;
  return ViewOf(ScenarioNetwork(req));
}

NetworkView DescribeNetworkWithTopology(const engine::Scenario& s, const std::string& topology) {
  ScenarioNetworkRequest req;
  req.scenario = s;
  req.outer_topology = topology;
  return ViewOf(ScenarioNetwork(req));
}

// ---------------------------------------------------------------------------
std::string WriteReport(const ScenarioDoc& doc, bool search, const std::string& html_file) {
  if (!doc.loaded()) return "no scenario is open";
  const fs::path html(html_file);
  const fs::path scenario_file = html.parent_path() / (html.stem().string() + ".scenario.yaml");
  std::string error;
  if (!doc.Save(scenario_file.string(), error)) return error;
  ReportRequest req;
  req.scenario = scenario_file.string();
  req.search = search;
  req.command = "orrery report " + base::ShellQuote(scenario_file.filename().string()) +
                (search ? " --search" : "") + " --out " + base::ShellQuote(html.filename().string());
  const ReportResult r = Report(req);
  if (r.html.empty()) return FirstError(r).empty() ? "the report could not be made" : FirstError(r);
  std::ofstream out(html_file, std::ios::binary);
  out << r.html;
  out.close();
  if (!out) return html_file + ": cannot write the file";
  return {};  // an infeasible plan is reported in the document itself
}

}  // namespace orrery::gui
