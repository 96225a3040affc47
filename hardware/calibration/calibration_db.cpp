#include "calibration_db.h"

#include <ctime>
#include <memory>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

namespace orrery::calibration {
namespace {

constexpr const char* kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS probe_runs(
  run_id INTEGER PRIMARY KEY,
  probe TEXT NOT NULL, mode TEXT NOT NULL, host TEXT NOT NULL, device TEXT NOT NULL,
  compiler TEXT, date_utc TEXT NOT NULL, command_line TEXT NOT NULL, threads INTEGER,
  extra_json TEXT, source TEXT, imported_utc TEXT,
  UNIQUE(probe, mode, host, device, date_utc, command_line));
CREATE TABLE IF NOT EXISTS probe_records(
  run_id INTEGER NOT NULL REFERENCES probe_runs(run_id), idx INTEGER NOT NULL,
  kind TEXT NOT NULL, dtype TEXT NOT NULL, shape TEXT NOT NULL,
  m INTEGER, n INTEGER, k INTEGER, shape_bytes INTEGER, rows INTEGER, cols INTEGER, ranks INTEGER,
  reps INTEGER, inner INTEGER, median_s REAL, p10_s REAL, p90_s REAL, min_s REAL, max_s REAL,
  flop REAL, bytes REAL, rate REAL, rate_unit TEXT, note TEXT,
  PRIMARY KEY(run_id, idx));
CREATE INDEX IF NOT EXISTS probe_records_by_shape ON probe_records(kind, dtype, shape);
)sql";

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

std::string Error(sqlite3* db, const std::string& what) {
  return what + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
}

// Opens (creating when `create`) and makes sure the tables exist.
Db Open(const std::string& path, bool create, std::string* error) {
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) {
    *error = Error(raw, "cannot open database '" + path + "'");
    return nullptr;
  }
  sqlite3_busy_timeout(db.get(), 5000);
  char* message = nullptr;
  if (sqlite3_exec(db.get(), kSchemaSql, nullptr, nullptr, &message) != SQLITE_OK) {
    *error = "'" + path + "' is not a calibration database: " + (message ? message : "?");
    sqlite3_free(message);
    return nullptr;
  }
  return db;
}

Stmt Prepare(sqlite3* db, const char* sql, std::string* error) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) {
    *error = Error(db, "SQL error");
    return nullptr;
  }
  return Stmt(raw);
}

void BindText(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

void BindExtent(sqlite3_stmt* s, int i, std::int64_t v) {
  if (v < 0) {
    sqlite3_bind_null(s, i);
  } else {
    sqlite3_bind_int64(s, i, v);
  }
}

std::string Column(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool Exec(sqlite3* db, const char* sql, std::string* error) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    *error = std::string("SQL error: ") + (message ? message : "?");
    sqlite3_free(message);
    return false;
  }
  return true;
}

}  // namespace

std::string ShapeText(const ProbeRecord& r) {
  std::string out;
  for (const auto& [key, value] : r.shape) {
    if (!out.empty()) out += ",";
    out += key + "=" + std::to_string(value);
  }
  return out;
}

StoreResult StoreProbeRun(const std::string& db_path, const ProbeFile& probe,
                          const std::string& source) {
  StoreResult res;
  Db db = Open(db_path, true, &res.error);
  if (!db) return res;
  const ProbeHeader& h = probe.header;
  {
    Stmt find = Prepare(db.get(),
                        "SELECT run_id FROM probe_runs WHERE probe=? AND mode=? AND host=? AND "
                        "device=? AND date_utc=? AND command_line=?",
                        &res.error);
    if (!find) return res;
    const std::string keys[] = {h.probe, h.mode, h.host, h.device, h.date_utc, h.command_line};
    for (int i = 0; i < 6; ++i) BindText(find.get(), i + 1, keys[i]);
    if (sqlite3_step(find.get()) == SQLITE_ROW) {
      res.ok = true;
      res.already_stored = true;
      res.run_id = sqlite3_column_int64(find.get(), 0);
      return res;
    }
  }
  if (!Exec(db.get(), "BEGIN", &res.error)) return res;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  for (const auto& [k, v] : h.extra) extra[k] = v;
  {
    Stmt run = Prepare(db.get(),
                       "INSERT INTO probe_runs(probe, mode, host, device, compiler, date_utc, "
                       "command_line, threads, extra_json, source, imported_utc) "
                       "VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                       &res.error);
    if (!run) return res;
    const std::string texts[] = {h.probe, h.mode, h.host, h.device, h.compiler, h.date_utc, h.command_line};
    for (int i = 0; i < 7; ++i) BindText(run.get(), i + 1, texts[i]);
    sqlite3_bind_int64(run.get(), 8, h.threads);
    BindText(run.get(), 9, extra.dump());
    BindText(run.get(), 10, source);
    BindText(run.get(), 11, UtcNow());
    if (sqlite3_step(run.get()) != SQLITE_DONE) {
      res.error = Error(db.get(), "cannot store the run");
      std::string ignored;
      Exec(db.get(), "ROLLBACK", &ignored);
      return res;
    }
    res.run_id = sqlite3_last_insert_rowid(db.get());
  }
  Stmt rec = Prepare(db.get(),
                     "INSERT INTO probe_records(run_id, idx, kind, dtype, shape, m, n, k, shape_bytes, "
                     "rows, cols, ranks, reps, inner, median_s, p10_s, p90_s, min_s, max_s, flop, "
                     "bytes, rate, rate_unit, note) "
                     "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                     &res.error);
  if (!rec) return res;
  for (size_t i = 0; i < probe.records.size(); ++i) {
    const ProbeRecord& r = probe.records[i];
    sqlite3_stmt* s = rec.get();
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    sqlite3_bind_int64(s, 1, res.run_id);
    sqlite3_bind_int64(s, 2, static_cast<std::int64_t>(i));
    BindText(s, 3, r.kind);
    BindText(s, 4, r.dtype);
    BindText(s, 5, ShapeText(r));
    const char* extents[] = {"m", "n", "k", "bytes", "rows", "cols", "ranks"};
    for (int e = 0; e < 7; ++e) BindExtent(s, 6 + e, r.Extent(extents[e]));
    sqlite3_bind_int64(s, 13, r.reps);
    sqlite3_bind_int64(s, 14, r.inner);
    const double numbers[] = {r.median_s, r.p10_s, r.p90_s, r.min_s, r.max_s, r.flop, r.bytes, r.rate};
    for (int e = 0; e < 8; ++e) sqlite3_bind_double(s, 15 + e, numbers[e]);
    BindText(s, 23, r.rate_unit);
    BindText(s, 24, r.note);
    if (sqlite3_step(s) != SQLITE_DONE) {
      res.error = Error(db.get(), "cannot store record " + std::to_string(i));
      std::string ignored;
      Exec(db.get(), "ROLLBACK", &ignored);
      return res;
    }
  }
  if (!Exec(db.get(), "COMMIT", &res.error)) return res;
  res.ok = true;
  return res;
}

std::vector<StoredRun> ListProbeRuns(const std::string& db_path, std::string* error) {
  std::vector<StoredRun> out;
  Db db = Open(db_path, false, error);
  if (!db) return out;
  Stmt s = Prepare(db.get(),
                   "SELECT r.run_id, r.probe, r.mode, r.host, r.device, r.date_utc, r.source, "
                   "r.threads, (SELECT COUNT(*) FROM probe_records p WHERE p.run_id = r.run_id) "
                   "FROM probe_runs r ORDER BY r.run_id",
                   error);
  if (!s) return out;
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    StoredRun r;
    r.run_id = sqlite3_column_int64(s.get(), 0);
    r.probe = Column(s.get(), 1);
    r.mode = Column(s.get(), 2);
    r.host = Column(s.get(), 3);
    r.device = Column(s.get(), 4);
    r.date_utc = Column(s.get(), 5);
    r.source = Column(s.get(), 6);
    r.threads = sqlite3_column_int64(s.get(), 7);
    r.records = sqlite3_column_int64(s.get(), 8);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RecordComparison> CompareProbeRuns(const std::string& db_path, std::int64_t run_a,
                                               std::int64_t run_b, std::string* error) {
  std::vector<RecordComparison> out;
  Db db = Open(db_path, false, error);
  if (!db) return out;
  for (const std::int64_t id : {run_a, run_b}) {
    Stmt s = Prepare(db.get(), "SELECT 1 FROM probe_runs WHERE run_id = ?", error);
    if (!s) return out;
    sqlite3_bind_int64(s.get(), 1, id);
    if (sqlite3_step(s.get()) != SQLITE_ROW) {
      *error = "no run " + std::to_string(id) + " in '" + db_path + "' (see orrery calibrate runs)";
      return out;
    }
  }
  // The first record of each (kind, dtype, shape) in each run.
  Stmt s = Prepare(db.get(),
                   "SELECT a.kind, a.dtype, a.shape, a.rate_unit, a.rate, b.rate FROM probe_records a "
                   "JOIN probe_records b ON a.kind = b.kind AND a.dtype = b.dtype AND a.shape = b.shape "
                   "WHERE a.run_id = ?1 AND b.run_id = ?2 "
                   "AND a.idx = (SELECT MIN(idx) FROM probe_records x WHERE x.run_id = ?1 AND "
                   "x.kind = a.kind AND x.dtype = a.dtype AND x.shape = a.shape) "
                   "AND b.idx = (SELECT MIN(idx) FROM probe_records y WHERE y.run_id = ?2 AND "
                   "y.kind = b.kind AND y.dtype = b.dtype AND y.shape = b.shape) "
                   "ORDER BY a.idx",
                   error);
  if (!s) return out;
  sqlite3_bind_int64(s.get(), 1, run_a);
  sqlite3_bind_int64(s.get(), 2, run_b);
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    RecordComparison c;
    c.kind = Column(s.get(), 0);
    c.dtype = Column(s.get(), 1);
    c.shape = Column(s.get(), 2);
    c.rate_unit = Column(s.get(), 3);
    c.rate_a = sqlite3_column_double(s.get(), 4);
    c.rate_b = sqlite3_column_double(s.get(), 5);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace orrery::calibration
