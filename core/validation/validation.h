#pragma once
// The validation harness: predicts each measured run of a CSV (columns of
// validation/training_runs.csv) and reports the error per run and in
// aggregate. Rows it cannot model are kept, as skipped, with the reason.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/estimate/scenario.h"

namespace orrery::engine {

struct TrainingEstimate;

struct ValidationRow {
  std::string file;
  int line = 0;
  std::string model;
  std::string source;      // the row's source column
  std::string device;      // the device preset the row's GPU resolved to ("" when none)
  std::string metric;      // "iteration_s", "hardware_tflops_per_gpu", "model_tflops_per_gpu", "mfu"
  double measured = 0;
  double predicted = 0;
  std::optional<double> error_pct;  // (predicted - measured) / measured * 100
  std::string skipped;     // reason, empty when evaluated
  std::string assumptions; // what the row did not state and the harness assumed or searched
  bool predicted_oom = false;
  // What the prediction ran with, stated or assumed (empty when skipped):
  // the framework column, the GEMM precision in the CSV's words (bf16,
  // fp8, fp8-cs, ...) and the recompute mode (none, selective, full, op);
  // `orrery validate --by` groups the rows by these and by device.
  std::string framework;
  std::string precision;
  std::string recompute;
  // The scenario the row was predicted with (model, system, the plan with
  // every assumed and searched field, workload): kept only for the row a
  // caller asked for by line (ValidateTrainingCsv's `only_line`).
  std::shared_ptr<const Scenario> scenario;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  int evaluated = 0;
  int skipped = 0;
  double mape_pct = 0;
  double max_abs_error_pct = 0;
  // Mean of (predicted speed / measured speed - 1) x 100 over the evaluated
  // rows, speed being 1 / iteration time or the TFLOP/s or MFU figure: > 0
  // when the predictions are faster than the runs measured (optimistic),
  // whatever each row's metric. A MAPE with a bias near it is one error
  // everywhere; a bias near 0 is scatter.
  double speed_bias_pct = 0;
};

// Validates every row of `csv_file`. File-level problems (unreadable file,
// missing columns) go to `diags`; row-level ones become skipped rows.
// `only_line` > 0: only the row on that line of the file, with its scenario
// kept (ValidationRow::scenario); no row when the line holds none.
// `keep_scenarios`: every predicted row keeps its scenario (for a caller
// that predicts them again, e.g. on the event engine).
ValidationReport ValidateTrainingCsv(const std::string& csv_file, const PresetStore& store,
                                     base::Diagnostics& diags, int only_line = 0, bool keep_scenarios = false);

// An estimate in a row's metric ("iteration_s", "hardware_tflops_per_gpu",
// "model_tflops_per_gpu", else MFU): what the harness compares with the
// measured figure. `devices`: the row's GPU count.
double PredictedMetric(const TrainingEstimate& e, const std::string& metric, double devices);

// A measured run's GPU as its CSV names it -> the device preset and the
// system preset it is placed in, through the presets' own names and aliases
// (PresetStore::Resolve). "A100-SXM4-80GB (Selene)": the words in
// parentheses name the system when a system preset answers to them;
// otherwise the device's `reference_system:` is used.
struct GpuPlacement {
  std::string device;      // device preset
  std::string system;      // system preset
  std::string assumption;  // what the placement assumes ("" when the row names it)
  std::string error;       // why nothing matched, with what the name is close to
};
GpuPlacement PlaceGpu(const std::string& gpu_name, const PresetStore& store);

// A CSV cell without surrounding whitespace.
std::string TrimCell(const std::string& s);

// Recomputes the aggregate figures from the rows.
void Summarise(ValidationReport& r);

// The group a source belongs to, for per-source aggregates: the text of the
// source column up to its first parenthesis or comma.
std::string SourceGroup(const std::string& source);

// Whether a row's metric is a time (iteration_s, ttft_ms, tpot_ms: less is
// faster) rather than a rate (TFLOP/s, MFU, tokens/s).
bool MetricIsTime(const std::string& metric);

// A predicted row's predicted over measured speed, less 1, in percent (a
// time's speed is its inverse): > 0 when the prediction is the faster.
// ValidationReport::speed_bias_pct is its mean.
double SpeedBiasPct(const ValidationRow& row);

// The value of a row `orrery validate --by FACET` groups it under: "device",
// "framework", "precision", "recompute" or "metric"; "" for another facet.
std::string FacetOf(const ValidationRow& row, const std::string& facet);

}  // namespace orrery::engine
