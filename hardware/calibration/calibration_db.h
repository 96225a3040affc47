#pragma once
// The calibration database: raw probe records in SQLite, so that several
// runs and machines can be compared (`orrery calibrate runs|compare`, or any
// SQL client).
//
// Tables (created when missing):
//   probe_runs(run_id, probe, mode, host, device, compiler, date_utc,
//              command_line, threads, extra_json, source, imported_utc)
//     one row per probe run; a run is identified by (probe, mode, host,
//     device, date_utc, command_line): storing the same run twice keeps one.
//   probe_records(run_id, idx, kind, dtype, shape, m, n, k, shape_bytes, rows,
//                 cols, ranks, reps, inner, median_s, p10_s, p90_s, min_s,
//                 max_s, flop, bytes, rate, rate_unit, note)
//     one row per record; `shape` is the canonical text "m=4096,n=8192,k=8192"
//     and the named extents also have columns (NULL when absent).
// Times are seconds, work is FLOP and bytes, rates FLOP/s or bytes/s (SI, as
// in the JSON records).

#include <cstdint>
#include <string>
#include <vector>

#include "probe_record_json.h"

namespace orrery::calibration {

struct StoreResult {
  bool ok = false;
  std::string error;
  std::int64_t run_id = 0;
  bool already_stored = false;  // the same run was in the database before
};

// Stores one probe run and its records (one transaction). `source` is where
// the records came from (a file name, or "in-process").
StoreResult StoreProbeRun(const std::string& db_path, const ProbeFile& probe,
                          const std::string& source);

struct StoredRun {
  std::int64_t run_id = 0;
  std::string probe, mode, host, device, date_utc, source;
  std::int64_t threads = 0;
  std::int64_t records = 0;
};

// Every run in the database, oldest first. `error` set (and empty result)
// when the file cannot be read as a calibration database.
std::vector<StoredRun> ListProbeRuns(const std::string& db_path, std::string* error);

// One record kind/dtype/shape measured in both runs.
struct RecordComparison {
  std::string kind, dtype, shape, rate_unit;
  double rate_a = 0, rate_b = 0;  // FLOP/s or bytes/s
};

// Records present in both runs (same kind, dtype and shape), in run A's
// order. When a run holds the same shape twice the first is used.
std::vector<RecordComparison> CompareProbeRuns(const std::string& db_path, std::int64_t run_a,
                                               std::int64_t run_b, std::string* error);

// "m=4096,n=8192,k=8192".
std::string ShapeText(const ProbeRecord& r);

}  // namespace orrery::calibration
