#pragma once
// The text face of the results: the tables `orrery` prints, as library
// calls, so that every face (the CLI, the GUI's "copy as text", a user's own
// program) prints a result the same way. JSON is core/api/json.h; these are
// the human-readable forms beside it. Each writes to `out` and nothing else.
//
//   orrery::EstimateResult r = orrery::Estimate(req);
//   orrery::text::PrintEstimateTable(r, std::cout);

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/api/calibrate.h"
#include "core/api/estimate.h"
#include "core/api/fit.h"
#include "core/api/infer.h"
#include "core/api/network.h"
#include "core/api/plan.h"
#include "core/api/search.h"
#include "core/api/validate.h"

namespace orrery::text {

// The forms a result is written in: an aligned table for a person, JSON
// (docs/output-schema.md), or flat CSV.
enum class Format { kTable, kJson, kCsv };

// The line under a table's "model" line naming what a Hugging Face config
// set that the reader did not read (models::ModelSpec::unread_keys), or ""
// for a model that has none.
std::string UnreadKeysLine(const models::ModelSpec& m);

// `orrery estimate`: scenario, plan, time breakdown, memory per device, MFU
// and rates; with the event engine also the per-stage table.
void PrintEstimateTable(const EstimateResult& r, std::ostream& out);
// The pools of a heterogeneous estimate or split search (core/api/hetero_text.cpp);
// PrintEstimateTable and PrintSearchTable call them for systems with pools.
void PrintHeteroEstimate(const EstimateResult& r, std::ostream& out);
void PrintHeteroSearch(const SearchResult& r, std::ostream& out);

// `orrery infer`: the deployment, then the static batch, the served stream
// or the highest rate meeting the SLO, by the request's mode.
void PrintInferTable(const InferResult& r, std::ostream& out);

// `orrery search`: the space, pruning and wall time, then the top plans with
// their breakdowns and why #1 beats #2. `gpus` is the range as typed
// ("512-4096"), shown when more than one device count was searched.
void PrintSearchTable(const SearchResult& r, const std::string& gpus, std::ostream& out);

// `orrery plan`: the chain step by step, or key,value rows of the JSON.
void PrintPlanTable(const PlanResult& r, std::ostream& out);
void PrintPlanCsv(const PlanResult& r, std::ostream& out);

// `orrery network`: tiers, parts, cost and power, and the collective; the
// fabric study's comparison.
void PrintNetwork(const NetworkResult& r, Format fmt, std::ostream& out);
void PrintNetworkStudy(const NetworkStudyResult& r, Format fmt, std::ostream& out);

// `orrery validate --row N`: the measured run (file:line, source, the
// measured figure in its unit), its prediction and error, what it assumed,
// and with `overrides` the prediction of the row's scenario so changed; then
// the estimate behind it (PrintEstimateTable). A skipped row: why.
void PrintValidationRow(const engine::ValidationRow& row, const ValidationRowEstimate& estimate,
                        const std::vector<std::string>& overrides, std::ostream& out);

// `orrery fit`: the law, the preset's answer, or the preset list.
void PrintFitTable(const FitResult& r, std::ostream& out);
// Writes `j` as JSON or YAML (`format` "json" or "yaml"; both are readable by
// `orrery plan --law FILE`).
void PrintStructured(const nlohmann::json& j, const std::string& format, std::ostream& out);

// `orrery calibrate`: the profile written, a layer checked against its
// measurement, the stored runs, and two runs compared.
void PrintProfileSummary(const CalibrateProfileResult& r, Format fmt, std::ostream& out);
void PrintLayerCheck(const CheckLayerResult& r, Format fmt, std::ostream& out);
void PrintCalibrationRuns(const CalibrationRunsResult& r, Format fmt, std::ostream& out);
void PrintCalibrationCompare(const CalibrationCompareResult& r, const CalibrationCompareRequest& q, Format fmt,
                             std::ostream& out);

}  // namespace orrery::text
