#include "core/api/sweep.h"

#include <sstream>
#include <utility>

namespace orrery {

SweepResult Sweep(const SweepRequest& req, const Control& control) {
  SweepResult r;
  r.db = req.db;
  if (req.sweep_file.empty() || req.db.empty()) {
    r.status = Status::kUsage;
    r.reason = req.sweep_file.empty() ? "no sweep file given" : "no result store (db) given";
    return r;
  }
  if (req.threads < 0 || req.threads > 1024 || req.batch < 1 || req.batch > 100000) {
    r.status = Status::kUsage;
    r.reason = "threads must be in [0, 1024] and batch in [1, 100000]";
    return r;
  }
  const engine::PresetStore store(req.config_dir.empty() ? ConfigDir() : req.config_dir);
  engine::Scenario base;
  auto spec = engine::LoadSweepFile(req.sweep_file, store, base, r.diagnostics);
  if (spec) hardware::RefusePools(base.system, "orrery sweep", {req.sweep_file, 0, 0}, r.diagnostics);
  if (!spec || !r.diagnostics.ok()) {
    r.status = Status::kInvalidInput;
    return r;
  }
  r.spec = std::move(*spec);
  engine::LocalComm local;
  engine::Comm& comm = req.comm != nullptr ? *req.comm : local;
  r.ranks = comm.size();
  r.primary = comm.rank() == 0;
  engine::SweepRunOptions o;
  o.db = req.db;
  o.resume = req.resume;
  o.threads = req.threads;
  o.batch = req.batch;
  o.comm = &comm;
  if (control.progress)
    o.progress = [&control](uint64_t done, uint64_t total) { control.Report(done, total, "points"); };
  o.cancel = control.cancel;
  std::string error;
  if (!engine::RunSweep(r.spec, base, o, r.stats, error)) {
    r.status = Status::kInvalidInput;
    r.reason = error;
  } else if (r.stats.cancelled) {
    r.status = Status::kCancelled;
    r.reason = "cancelled after " + std::to_string(r.stats.skipped + r.stats.evaluated) + " of " +
               std::to_string(r.stats.points) + " points; --resume finishes the sweep";
  }
  return r;
}

DbListResult DbList(const DbRequest& req) {
  DbListResult r;
  r.db = req.db;
  std::string error;
  auto store = engine::ResultStore::Open(req.db, error, /*read_only=*/true);
  if (store) r.sweeps = store->Sweeps(error);
  if (!store || !error.empty()) {
    r.status = Status::kInvalidInput;
    r.reason = store ? req.db + ": " + error : error;
  }
  return r;
}

DbExportResult DbExport(const DbRequest& req) {
  DbExportResult r;
  r.db = req.db;
  std::string error;
  auto store = engine::ResultStore::Open(req.db, error, /*read_only=*/true);
  std::ostringstream text;
  if (!store || !store->Export(text, /*json=*/true, req.sweep, error)) {
    r.status = Status::kInvalidInput;
    r.reason = store ? req.db + ": " + error : error;
    return r;
  }
  auto rows = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (!rows.is_array()) {
    r.status = Status::kInvalidInput;
    r.reason = req.db + ": the store's rows do not read back as JSON";
    return r;
  }
  for (auto& row : rows) r.rows.push_back(std::move(row));
  return r;
}

}  // namespace orrery
