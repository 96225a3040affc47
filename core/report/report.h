#pragma once
// Capacity-planning reports: a scenario, a search, or a `plan` question turned
// into one document a budget holder reads.
//
//   ReportRequest ──BuildReport──▶ ReportModel (plain data: every number the
//                                  report shows, nothing computed later)
//                 ──ReportJson───▶ JSON (the same numbers, for tests and tools)
//                 ──RenderHtml───▶ one self-contained HTML file: text and tables
//                                  rendered here, charts drawn in the page by an
//                                  inlined Chart.js from the model's JSON
//                 ──PrintPdf─────▶ headless Chromium printing that HTML
//
// Sections, in order: the question and the answer; the recommended plan and
// the runners-up (search top 5, why #1 wins); where the time goes (breakdown
// and the event engine's timeline of one step); scaling over a GPU range;
// sensitivity of the answer to +-20 % on key inputs; confidence from the
// nearest measured runs (core/validation); alternatives; assumptions and
// sources with the version and the command that regenerates the document.
//
// Nothing here prints or exits: invalid input comes back as diagnostics,
// an infeasible scenario as a report that says why.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/estimate/scenario.h"
#include "core/planning/planner.h"
#include "core/search/search.h"

namespace orrery::report {

inline constexpr const char* kOrreryVersion = "0.1.0";

// The `plan` question form: a scaling law and a goal instead of a scenario.
struct PlanQuestion {
  engine::PlanRequest request;      // goal, target, GPUs/deadline, price, PUE
  std::string law = "chinchilla";   // preset name or fit file (LoadLaw)
  std::string family = "llama";     // preset name or file (LoadFamily)
  std::string system;               // system preset name or YAML file
};

struct ReportRequest {
  // Either a scenario (file or preset name) ...
  std::string scenario;
  std::vector<std::string> sets;    // "path=value" overrides, as `estimate --set`
  // ... or a plan question.
  std::optional<PlanQuestion> plan;

  bool search = false;              // rank plans (top 5) instead of taking the scenario's
  engine::Objective objective = engine::Objective::kTime;
  std::vector<int64_t> search_gpus; // device counts the search may use (empty: the scenario's)
  std::vector<int64_t> scaling_gpus;// GPU counts of the scaling section (empty: around the answer)
  std::vector<std::string> compare; // alternative scenarios, side by side
  std::string sweep_store;          // an `orrery sweep` result store: its axes are drawn
                                    // (and its scenario is the report's when none is named)
  double price_per_gpu_hour = -1;   // USD; < 0: the system preset's (0 there = not priced)
  double pue = 0;                   // power usage effectiveness; 0: the system preset's
  std::string validation_csv;       // measured runs; empty: validation/training_runs.csv
  std::string config_dir;           // presets; empty: PresetStore::DefaultConfigDir()
  std::string command;              // the command line that regenerates the report
  int threads = 0;                  // search threads; 0 = every hardware thread
};

// ---------------------------------------------------------------------------
// The model: every number the report shows.

struct TimePart {
  std::string name;   // "forward", "TP communication", ...
  double seconds = 0;
};

struct PlanRow {
  std::string label;         // "#1", "#2", "scenario plan", an alternative's name
  std::string system;        // device x count
  std::string device;
  int64_t gpus = 0;
  std::string plan;          // "TP 8 · PP 4 (interleave 5) · DP 16 · micro-batch 1 · ..."
  int64_t tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, interleave = 1, micro_batch = 1;
  int64_t microbatches = 0;
  int64_t zero = 0;
  std::string recompute;
  bool sequence_parallel = false;
  int64_t global_batch = 0, seq_len = 0;
  bool feasible = false;
  std::string reason;        // when infeasible
  double iteration_s = 0;
  double mfu = 0;
  // MFU counting only the attention scores a causal kernel computes (the
  // masked half left out; engine::TrainingEstimate::mfu_causal).
  double mfu_causal = 0;
  double tokens_per_s = 0;
  double memory_bytes = 0;
  double capacity_bytes = 0;
  double host_bytes = 0;     // kept in host memory instead (offloaded optimizer states, activations)
  std::vector<TimePart> time;  // exposed seconds by cause; they add up to iteration_s
  double train_tokens = 0;
  double days = 0;
  double gpu_hours = 0;
  double energy_mwh = 0;
  double cost_usd = 0;       // 0 when not priced
  // After failures, checkpoints and stragglers (core/goodput, docs/goodput.md).
  double goodput = 0;        // useful / wall time, 0..1 (0 when infeasible)
  double effective_days = 0; // days / goodput (0 when not trained)
  double checkpoint_interval_s = 0;  // goodput-optimal (0 when nothing fails)
  std::string why;           // #1: why it beats #2; others: what #1 does better
};

// One step of the recommended plan as the event engine replays it.
struct TimelineBar {
  int32_t row = 0;
  double start_s = 0;
  double end_s = 0;
  std::string kind;          // forward, backward, recompute, tp, p2p, grad-reduce, ...
};
struct StepTimeline {
  bool simulated = false;
  std::string note;          // why not simulated, or what is shown
  std::string schedule;
  std::vector<std::string> rows;  // "stage 0 compute", "stage 0 DP", ...
  std::vector<TimelineBar> bars;  // merged where a row runs one kind back to back
  double makespan_s = 0;
  double closed_form_s = 0;
  double bubble_fraction = 0;
};

struct ScalingPoint {
  int64_t gpus = 0;
  bool feasible = false;
  std::string reason;
  std::string plan;
  double iteration_s = 0;
  double days = 0;
  double cost_usd = 0;
  double mfu = 0;
  double comm_fraction = 0;   // exposed communication + pipeline bubble, of the step
};
struct Scaling {
  std::vector<ScalingPoint> points;
  int64_t comm_takes_over_gpus = 0;  // first count where comm_fraction > 0.5; 0 = none
  std::string note;
};

struct SensitivityRow {
  std::string input;         // "GEMM efficiency"
  std::string base_value;    // "0.39-0.70 of peak by GEMM size"
  double low_pct = 0;        // change of the answer with the input at -20 %
  double high_pct = 0;       // ... at +20 %
};
struct Sensitivity {
  std::string metric;        // "cost" or "days to train"
  double base_value = 0;
  std::vector<SensitivityRow> rows;  // largest swing first
  std::vector<std::string> notes;
};

struct MeasuredRun {
  std::string model;
  std::string gpu;
  int64_t gpus = 0;
  std::string metric;
  double measured = 0;
  double predicted = 0;
  double error_pct = 0;
  // Predicted over measured speed, less 1, in percent: > 0 when the
  // prediction is the faster, whatever the metric (engine::SpeedBiasPct).
  double speed_error_pct = 0;
  std::string source;
};
struct Confidence {
  std::string basis;         // "H100 runs from 512 to 6,144 GPUs"
  std::vector<MeasuredRun> runs;
  double mean_abs_error_pct = 0;
  double max_abs_error_pct = 0;
  // Over every measured run on the scenario's device (not only the nearest
  // in scale): how many, and which way their predictions leaned, the mean
  // of predicted over measured speed less 1 in percent (> 0: faster than
  // measured; engine::ValidationReport::speed_bias_pct). 0 runs: none.
  int device_runs = 0;
  double device_speed_bias_pct = 0;
  std::string statement;     // "measured runs like this one were predicted within X % (N runs)"
};

// A sweep store's points, summarised per axis: at each value of an axis, the
// best, median and worst answer over the other axes' values.
struct SweepValue {
  std::string value;
  double best = 0, median = 0, worst = 0;
  int64_t ok = 0, total = 0;
};
struct SweepAxis {
  std::string path;
  std::vector<SweepValue> values;
};
struct SweepPoint {
  std::string params;        // "system.nodes=64, system.device.memory_capacity=141 GB"
  double answer = 0;
  double mfu = 0;
  std::string plan;
};
struct SweepSection {
  std::string name, store, each;
  std::string metric;        // "days to train" or "seconds per step"
  int64_t points = 0, ok = 0;
  std::vector<SweepAxis> axes;
  std::vector<SweepPoint> best;  // the five best points
};

struct Assumption {
  std::string group;         // "model", "device", "system", "plan", "workload", "law", "price"
  std::string item;
  std::string value;
  std::string source;
};

struct LawSummary {
  std::string name, source, formula;
  double params_n = 0, tokens_d = 0, compute_flops = 0, loss = 0;
  bool has_range = false;
  double level = 0;
  double days_lo = 0, days_hi = 0, cost_lo = 0, cost_hi = 0;
  std::string model;         // the built model
};

struct ReportModel {
  std::string kind;          // "scenario" or "plan"
  std::string title;
  std::string question;
  std::string answer;
  bool feasible = false;
  double price_per_gpu_hour = 0;  // 0 = not priced
  double pue = 1;
  std::optional<LawSummary> law;
  std::vector<PlanRow> plans;     // #1 first; the recommended plan
  std::string why_first;          // why #1 wins (the parts that differ)
  std::string search_summary;     // "best of 1.2 M plans (... evaluated) on 512-16,384 GPUs"
  StepTimeline timeline;
  Scaling scaling;
  Sensitivity sensitivity;
  Confidence confidence;
  std::optional<SweepSection> sweep;
  std::vector<PlanRow> alternatives;  // the recommended plan first, then each --compare
  std::vector<Assumption> assumptions;
  std::vector<std::string> notes;
  std::string version;
  std::string command;
  std::string generated;          // UTC date of generation
};

// Builds the model. Input errors (files, presets, overrides) go to `diags`
// and the result is empty.
std::optional<ReportModel> BuildReport(const ReportRequest& request, base::Diagnostics& diags);

// The model as JSON (every number the document shows).
std::string ReportJson(const ReportModel& model);

// The self-contained HTML. `chart_js` is the source of Chart.js, inlined.
std::string RenderHtml(const ReportModel& model, const std::string& chart_js);

// Chart.js from the Debian package libjs-chart.js ($ORRERY_CHARTJS overrides
// the path). False and `error` when it cannot be read.
bool LoadChartJs(std::string& out, std::string& error);

// The Chromium binary ($ORRERY_CHROMIUM, else chromium or chromium-browser on
// PATH), or "" when none is installed.
std::string FindChromium();

// Prints `html_file` to `pdf_file` with headless Chromium. False and `error`
// when Chromium is missing or fails.
bool PrintPdf(const std::string& html_file, const std::string& pdf_file, std::string& error);

// "A-B": powers of two times A from A up to B, and B; "N": just N.
// Error text when malformed.
bool ParseGpuRange(const std::string& text, std::vector<int64_t>& out, std::string& error);

}  // namespace orrery::report
