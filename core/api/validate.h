#pragma once
// orrery::Validate: predict every measured run in the validation CSVs
// (training runs, or inference runs when the file has inference columns)
// and compare: per row measured, predicted and the error; MAPE and the
// largest error overall and per source. A thin door over core/validation/;
// `orrery validate` is the command-line face.
//
//   orrery::ValidateRequest req;              // default: validation/training_runs.csv
//   req.max_mape_pct = 10;
//   orrery::ValidateResult r = orrery::Validate(req);
//   // r.status == kInvalidInput with a reason when the MAPE exceeds 10 %

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/api/common.h"
#include "core/api/estimate.h"
#include "core/validation/validation.h"
#include "scaling_laws/reproduction.h"

namespace orrery {

struct ValidateRequest {
  std::vector<std::string> files;  // CSVs; empty: DefaultValidationCsv()
  double max_mape_pct = -1;        // >= 0: fail when the MAPE exceeds it
  double max_error_pct = -1;       // >= 0: fail when any row's |error| exceeds it
  // > 0: only the training row on this line of each file, with the scenario
  // it was predicted with kept (ValidationRow::scenario), so that a caller
  // can show where its time goes or try a what-if on it. kInvalidInput when
  // no file has a row there, or a file is an inference CSV.
  int line = 0;
  // Also group the rows by a facet of what they were predicted with:
  // "device", "framework", "precision", "recompute" or "metric" (empty:
  // by source only). kUsage for another word.
  std::string by;
  // kEvent: each predicted training row's plan (the one the closed form's
  // search chose) is predicted again on the event engine, and its error is
  // that prediction's; a row the event engine refuses is skipped with the
  // reason. The line mode (`line` > 0) keeps the closed form; its caller
  // asks EstimateValidationRow for the event engine's figure.
  EstimateEngine engine = EstimateEngine::kClosed;
};

struct ValidateResult : ResultBase {
  engine::ValidationReport report;                          // every row, summarised
  std::map<std::string, engine::ValidationReport> by_source;  // per source group, summarised
  std::map<std::string, engine::ValidationReport> by_facet;   // per value of request.by, summarised
  std::vector<std::string> failures;                        // the tolerances exceeded
  EstimateEngine engine = EstimateEngine::kClosed;          // what predicted the training rows
};

// Rows that cannot be modelled are skipped rows with the reason; file-level
// problems are diagnostics (kInvalidInput). A tolerance exceeded: kInvalidInput
// with the report filled in and `failures` saying which.
ValidateResult Validate(const ValidateRequest& request, const Control& control = {});

// One validated row's prediction in full (`orrery validate --row N`): the
// estimate of the scenario the row was predicted with (a row from a
// ValidateRequest with `line` set), changed by `overrides` ("training.tp=4")
// when given, and that estimate in the row's metric with its error against
// the measured figure. kInvalidInput with the reason when the row was
// skipped; the estimate's own status otherwise (kInfeasible when the
// changed plan does not fit, its figures still filled).
struct ValidationRowEstimate : ResultBase {
  EstimateResult estimate;
  double predicted = 0;  // the estimate in the row's metric
  double error_pct = 0;  // (predicted - measured) / measured x 100
};
// `engine`: kEvent replays the row's step on the event engine (the
// schedule's real bubble and overlap) instead of the closed form it was
// validated with, to see whether the two agree on it.
ValidationRowEstimate EstimateValidationRow(const engine::ValidationRow& row,
                                            const std::vector<std::string>& overrides = {},
                                            bool operator_breakdown = false,
                                            EstimateEngine engine = EstimateEngine::kClosed);

// The rows grouped and each group summarised: by "source" (SourceGroup;
// every row, skipped ones counted as such) or by a facet of what the
// predicted rows ran with (engine::FacetOf; "(none)" where it is blank).
// What Validate fills by_source and by_facet with.
// The group a row falls in for `by` ("source" or a facet), as
// GroupValidationRows files it.
std::string ValidationGroupOf(const engine::ValidationRow& row, const std::string& by);
std::map<std::string, engine::ValidationReport> GroupValidationRows(const std::vector<engine::ValidationRow>& rows,
                                                                    const std::string& by);

// The facets ValidateRequest::by takes.
const std::vector<std::string>& ValidationFacets();

// $ORRERY_VALIDATION_DIR/training_runs.csv, else the project's validation/.
std::string DefaultValidationCsv();

nlohmann::ordered_json ToJson(const ValidateResult& r);

// orrery::ReproduceScalingLaws: the published scaling-law fits reproduced
// from data Orrery may not ship (Epoch AI's Chinchilla points, Llama 3
// IsoFLOPs, reference optima) in `data_dir` (scaling_laws/reproduction.h).
// kInvalidInput with the reason when the folder or a file cannot be read, or
// when a check fails or its data are missing (the report is kept).
struct ReproduceScalingLawsResult : ResultBase {
  scaling_laws::ReproductionReport report;
};
ReproduceScalingLawsResult ReproduceScalingLaws(const std::string& data_dir);
nlohmann::ordered_json ToJson(const ReproduceScalingLawsResult& r);

}  // namespace orrery
