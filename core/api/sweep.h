#pragma once
// orrery::Sweep: a what-if grid over any parameter paths into a resumable
// SQLite store (core/search/sweep.h, docs/result-store.md); orrery::DbList
// and orrery::DbExport read the store back.
//
//   orrery::SweepRequest req;
//   req.sweep_file = "configs/sweeps/llama3-70b-what-if.yaml";
//   req.db = "results.sqlite";
//   orrery::SweepResult r = orrery::Sweep(req, control);

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/api/common.h"
#include "core/search/result_store.h"
#include "core/search/sweep.h"

namespace orrery {

struct SweepRequest {
  std::string sweep_file;             // a sweep document (top-level key `sweep:`)
  std::string db;                     // SQLite result store, created when absent
  bool resume = false;                // skip the points already stored
  int threads = 0;                    // 0 = every core
  size_t batch = 64;                  // points per transaction, 1..100000
  engine::Comm* comm = nullptr;       // MPI ranks; nullptr = this process
  std::string config_dir;             // presets; empty = ConfigDir()
};

struct SweepResult : ResultBase {
  engine::SweepSpec spec;
  engine::SweepRunStats stats;
  std::string db;
  int ranks = 1;
  bool primary = true;                // false on MPI ranks other than 0
};

// Status: kOk (points that are infeasible or invalid are rows with their
// status, not a failed sweep); kInvalidInput for a bad sweep file or a store
// that cannot be used; kUsage for a malformed request; kCancelled after the
// last committed batch. Progress: points stored of total ("points").
SweepResult Sweep(const SweepRequest& req, const Control& control = {});

struct DbRequest {
  std::string db;                     // the store
  std::string sweep;                  // export: only this sweep (name, hash or hash prefix)
};

struct DbListResult : ResultBase {
  std::string db;
  std::vector<engine::SweepRecord> sweeps;
};
DbListResult DbList(const DbRequest& req);

// One stored point, flat: the sweep, its axes' values as SI numbers (text
// for enumerations), status, plan and metrics.
struct DbExportResult : ResultBase {
  std::string db;
  // Rows as JSON objects with the store's columns (params, plan, breakdown
  // and search embedded as JSON; docs/result-store.md).
  std::vector<nlohmann::ordered_json> rows;
};
DbExportResult DbExport(const DbRequest& req);

}  // namespace orrery
