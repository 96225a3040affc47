#pragma once
// The one JSON serializer every face uses (docs/output-schema.md).
//
// Conventions, for every ToJson overload (in this file or beside a verb's
// own API header):
//   - a document starts with "schema_version" (kSchemaVersion), "kind" (the
//     verb: "estimate", "infer", ...) and "status" (StatusName);
//   - numbers are plain JSON numbers in SI base units (s, B, B/s, FLOP,
//     FLOP/s, J, W, USD) with the unit in the key: iteration_s,
//     weights_bytes, tokens_per_s, energy_j, cost_usd; fractions (mfu,
//     bubble_fraction) are 0..1; counts carry no suffix;
//   - a value that does not apply is null in JSON, and an empty cell in CSV.
//   - keys are snake_case and never renamed within a schema version.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>
#include <vector>

#include "core/api/common.h"

namespace orrery {

namespace engine {
struct TrainingEstimate;
}
namespace hetero {
struct Result;
struct SplitSearch;
}  // namespace hetero
namespace goodput {
struct Result;
struct MonteCarlo;
}

using Json = nlohmann::ordered_json;

struct EstimateResult;
struct InferResult;
struct SearchResult;
struct SweepResult;
struct DbListResult;
struct PresetListResult;
struct DbExportResult;
struct BenchResult;
struct EventBenchResult;

// {"schema_version", "kind", "status"}: the head of every document.
Json DocumentHead(std::string_view kind, const ResultBase& r);

Json ToJson(const EstimateResult& r);
// The `hetero` objects of estimate and search documents (core/api/hetero_text.cpp).
Json HeteroJson(const hetero::Result& r);
Json HeteroSearchJson(const hetero::SplitSearch& s);
Json ToJson(const InferResult& r);
Json ToJson(const SearchResult& r);
Json ToJson(const SweepResult& r);
Json ToJson(const DbListResult& r);
// `presets list`: {"kinds": [{"folder", "names": [...]}]}.
Json ToJson(const PresetListResult& r);
Json ToJson(const DbExportResult& r);
Json ToJson(const BenchResult& r);
Json ToJson(const EventBenchResult& r);

// The rows of a store export made flat for analysis (one object per point,
// no nesting): sweep, point_index, each sweep axis as its own column with
// its value in SI units and the unit in the column name ("system.network[1].
// bandwidth_bytes_per_s"; enumerations stay text), status, reason, the plan's knobs
// as plan.*, the metrics, and the time and memory breakdown.
std::vector<Json> FlatExportRows(const DbExportResult& r);

// The fields of one training estimate (time and memory breakdowns, FLOPs,
// MFU, tokens/s, energy, cost, the training run) without the scenario's
// names or the plan: what estimate, search and sweep rows share.
Json TrainingEstimateJson(const engine::Scenario& s, const engine::TrainingEstimate& e);

// Goodput (core/goodput/goodput.h): failure rate, checkpoint size, write and
// stall, the optimum interval (with Young's and Daly's), goodput and the
// effective training time; `mc` adds the Monte-Carlo's distribution.
Json GoodputJson(const goodput::Result& g, const goodput::MonteCarlo* mc = nullptr);

// Located errors as [{"file", "line", "column", "path", "value", "message", "hint"}].
Json DiagnosticsJson(const base::Diagnostics& d);

// CSV (RFC 4180): one header line, then one row per document, each document
// flattened with its keys joined by '.' ("time.forward_s"); arrays index as
// "stages.0.busy_s". The header is the union of the rows' keys in order of
// first appearance. Null and absent values are empty cells.
void WriteCsv(const std::vector<Json>& rows, std::ostream& out);
void WriteCsv(const Json& doc, std::ostream& out);

}  // namespace orrery
