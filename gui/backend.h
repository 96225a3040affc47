#pragma once
// The GUI's one door to the library. Every call the windows make goes
// through here, and from here only to the public API (core/api/: the same
// calls `orrery` and a user's own program make) and core/base. Plain C++ (no
// Qt): the windows hold these structs and draw them; nothing here touches a
// widget, and every function is safe to call from a worker thread on its own
// arguments.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/api/common.h"
#include "core/api/estimate.h"
#include "core/api/registry.h"
#include "core/base/diagnostics.h"
#include "core/base/param.h"

namespace orrery::gui {

// ---------------------------------------------------------------------------
// The scenario being edited: a file (or scenario preset) as loaded, the model
// and system presets picked instead of the file's, and the registry overrides
// typed into the form, in the order they were made. Saving writes the file's
// YAML with the picks and a `set:` map, so what is saved reloads to exactly
// what is shown.
struct FieldError {
  std::string path;
  std::string text;  // "path: rule (got 'value'); did you mean ...", as `orrery check` says it
};

struct BuiltScenario {
  std::optional<engine::Scenario> scenario;  // absent when it cannot be estimated
  std::map<std::string, std::string> field_errors;  // registry path -> error text
  std::vector<std::string> errors;                  // errors no field owns
  bool ok() const { return scenario.has_value() && field_errors.empty() && errors.empty(); }
};

class ScenarioDoc {
 public:
  // Loads a scenario file or scenario preset name; false with `diags` otherwise.
  bool Open(const std::string& file_or_preset, base::Diagnostics& diags);
  bool loaded() const { return loaded_; }
  const std::string& file() const { return file_; }
  const engine::Scenario& base() const { return base_; }

  void SetModelPreset(const std::string& name) { model_preset_ = name; }
  void SetSystemPreset(const std::string& name) { system_preset_ = name; }
  const std::string& model_preset() const { return model_preset_; }
  const std::string& system_preset() const { return system_preset_; }
  // Sets (or replaces) the override of `path`; an empty text removes it.
  void Set(const std::string& path, const std::string& text);
  const std::vector<std::pair<std::string, std::string>>& overrides() const { return sets_; }
  std::string OverrideOf(const std::string& path) const;
  void ClearOverrides() { sets_.clear(); }

  // The scenario with the picks and overrides applied and cross-checked.
  BuiltScenario Build() const;
  // Writes the YAML; false with `error` when the file cannot be written.
  bool Save(const std::string& file, std::string& error) const;
  std::string Yaml() const;

 private:
  bool loaded_ = false;
  std::string file_;
  std::string yaml_text_;  // the file as read
  engine::Scenario base_;
  std::string model_preset_, system_preset_;
  std::vector<std::pair<std::string, std::string>> sets_;
};

// ---------------------------------------------------------------------------
// The registry, as the form shows it: one field per knob, with network tiers
// expanded (system.network[0].bandwidth, ...).
using FormField = ParamField;  // section, path, declaration (core/api/registry.h)
std::vector<FormField> FormFields(const engine::Scenario& s);
// The printed value of a registry path in a scenario ("" when unknown).
std::string ValueText(const engine::Scenario& s, const std::string& path);
// Parses a field's text against its declaration: "" when fine, else the same
// text `orrery check` prints for it (without file and line).
std::string CheckFieldText(const FormField& f, const std::string& text);

struct Presets {
  std::vector<std::string> scenarios, models, systems, devices;
};
Presets ListPresets();
std::string PresetsDir();
// DescribeModel and DescribeSystem (the cited values shown beside the
// picks) are the library's, core/api/registry.h.

// ---------------------------------------------------------------------------
// Training, closed form.
struct TrainingResult {
  engine::TrainingEstimate estimate;
  std::string reason;        // why infeasible ("" when feasible)
  std::string invalid;       // why the scenario cannot be estimated at all ("" when it can)
  bool has_training = true;  // false for a serving-only scenario
  std::string label;         // scenario name and plan, for the compare pin
};
TrainingResult EstimateTraining(const engine::Scenario& s);

// The event engine's step of the scenario's plan.
struct TimelineTask {
  int stage = 0;
  int stream = 0;  // 0 compute, 1 TP, 2 PP (p2p), 3 DP
  double start_s = 0, finish_s = 0;
  std::string name;  // "F mb12 c1", "grad reduce #2", ...
  int kind = 0;      // parallelism::TaskKind
};
struct TimelineResult {
  bool ok = false;
  std::string error;
  std::vector<TimelineTask> tasks;
  int stages = 0;
  double makespan_s = 0;
  double closed_form_s = 0;
  double bubble_fraction = 0;  // of the critical stage
  std::string schedule;
};
TimelineResult SimulateStep(const engine::Scenario& s);
bool WriteTrace(const engine::Scenario& s, const std::string& file, std::string& error);
const char* StreamLabel(int stream);

// ---------------------------------------------------------------------------
// Plan search.
struct SearchRow {
  std::string plan;  // "tp=8 pp=4 ..."
  int64_t devices = 0, tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, micro_batch = 1, interleave = 1;
  int64_t zero = 0, global_batch = 0;
  std::string recompute;
  // iteration_s is the time the plan was ranked by: the event engine's for
  // the finalists it checked; closed_form_s is the closed form's (what the
  // Training tab shows once the plan is loaded).
  double iteration_s = 0, closed_form_s = 0, memory_bytes = 0, capacity_bytes = 0, mfu = 0, cost_usd = 0;
  double tokens_per_s = 0, score = 0;
  // The overrides that turn the searched scenario into this plan.
  std::vector<std::pair<std::string, std::string>> overrides;
};
struct SearchOutcome {
  bool ok = false;
  bool cancelled = false;
  std::string error;  // why nothing was found
  std::vector<SearchRow> rows;  // best first
  // Of the evaluated plans: fit, out of memory, refused by a pipeline rule
  // (engine::SearchStats).
  uint64_t candidates = 0, evaluated = 0, feasible = 0, out_of_memory = 0, refused = 0;
  double wall_s = 0;
};
// `objective`: time | cost | energy | tokens-per-dollar. `keep` plans are
// kept (the table shows them all; the scatter draws them). `cancel` is polled
// between progress reports; a cancelled search returns cancelled = true.
SearchOutcome RunSearch(const engine::Scenario& s, const std::string& objective, int keep,
                        const std::function<void(uint64_t, uint64_t)>& progress,
                        const std::atomic<bool>* cancel);
// Indices of `rows` on the Pareto front of (iteration_s, memory_bytes), both
// lower-better, sorted by time.
std::vector<size_t> ParetoFront(const std::vector<SearchRow>& rows);

// ---------------------------------------------------------------------------
// What-if sweeps into a SQLite store.
struct SweepAxisAsk {
  std::string path;
  std::string from, to;  // texts with units
  int points = 5;
  bool log = false;
};
struct SweepRow {
  uint64_t index = 0;
  std::vector<std::pair<std::string, std::string>> params;  // path, value text
  std::string status, reason;
  double iteration_s = 0, tokens_per_s = 0, mfu = 0, memory_bytes = 0, cost_usd = 0;
  double train_time_s = 0, train_cost_usd = 0;
};
struct SweepData {
  bool ok = false;
  std::string error;
  std::string name;
  std::vector<std::string> axes;  // paths, in order
  uint64_t points = 0;            // in the spec (0 when unknown)
  std::vector<SweepRow> rows;     // stored so far, in index order
};
// Writes `<db>.scenario.yaml` and `<db>.sweep.yaml` beside the store and runs
// the sweep into it (resuming what the store already holds). `progress(done,
// total)` follows each stored batch; a raised `cancel` stops the sweep after
// the batch being stored (a later run resumes it). Returns "" on success,
// else the error (with file:line:col when the axes are bad).
std::string RunSweepInto(const ScenarioDoc& doc, const std::vector<SweepAxisAsk>& axes,
                         bool search_each, const std::string& db,
                         const std::function<void(uint64_t, uint64_t)>& progress,
                         const std::atomic<bool>* cancel = nullptr);
// Reads every point of the newest sweep in a store.
SweepData ReadSweepStore(const std::string& db);
// The SI value of a parameter text ("400 Gb/s" -> 5e10); NaN when not numeric.
double NumericValue(const std::string& path, const std::string& text);
// A unit to draw values of `path` in, for values up to `max_si`: divide by
// `divide` and label with `unit` ("GB/s", "GB", "ms"; "" for plain numbers).
struct DisplayUnit {
  double divide = 1;
  std::string unit;
};
DisplayUnit UnitFor(const std::string& path, double max_si);

// ---------------------------------------------------------------------------
// Inference.
struct InferencePoint {
  double rate = 0;  // requests/s offered
  double ttft_p50 = 0, ttft_p99 = 0, tpot_p50 = 0, tpot_p99 = 0;
  double tokens_per_s = 0, slo_attainment = 0;
};
struct InferenceOutcome {
  bool ok = false;
  std::string error;
  double ttft_s = 0, tpot_s = 0, tokens_per_s = 0;
  double weights_bytes = 0, kv_bytes = 0, activation_bytes = 0, usable_bytes = 0;
  double capacity_bytes = 0, kv_capacity_tokens = 0;
  int64_t max_batch = 0;
  bool slo_set = false;
  bool max_rate_found = false;
  double max_rate = 0;
  std::string max_rate_reason;
  std::vector<InferencePoint> curve;
};
InferenceOutcome RunInference(const engine::Scenario& s, int rate_points,
                              const std::atomic<bool>* cancel);

// ---------------------------------------------------------------------------
// Network: tiers, parts, cost and power; and the same training plan on
// another fabric.
struct TierView {
  std::string name, topology;
  int64_t domain = 0;
  double bandwidth = 0, latency = 0;
  int64_t switches = 0, links = 0, transceivers = 0, nic_ports = 0, levels = 0;
  double cost_usd = 0, power_w = 0;
};
struct NetworkView {
  bool ok = false;
  std::string error;
  std::string system, device, prices;
  int64_t devices = 0, devices_per_node = 0;
  std::vector<TierView> tiers;
  double device_cost = 0, device_power = 0, network_cost = 0, network_power = 0;
  double iteration_s = 0;  // the scenario's plan on this system (0 when infeasible)
  std::string reason;
};
NetworkView DescribeNetwork(const engine::Scenario& s);
// The same scenario on another fabric: preset `system`'s network with the
// scenario's device, resized to the scenario's device count.
NetworkView DescribeNetworkWith(const engine::Scenario& s, const std::string& system);
// The same scenario with its outermost tier's topology replaced (e.g.
// "rail-only": the rail-only study's comparison, Wang et al. 2023).
NetworkView DescribeNetworkWithTopology(const engine::Scenario& s, const std::string& topology);

// ---------------------------------------------------------------------------
// Export: the capacity-planning report of the scenario as edited
// (orrery::Report, core/api/report.h). The scenario is saved beside the
// document as `<stem>.scenario.yaml`, which the report's command names, so
// the report can be made again with `orrery report`. `search` ranks plans
// instead of reporting the scenario's own. Returns "" on success, else why.
std::string WriteReport(const ScenarioDoc& doc, bool search, const std::string& html_file);

}  // namespace orrery::gui
