#include "core/search/result_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

namespace orrery::engine {

namespace {

constexpr int kSchemaVersion = 1;

// docs/result-store.md documents these tables column by column.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sweeps (
  sweep_hash    TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  spec_file     TEXT NOT NULL,
  scenario_file TEXT NOT NULL,
  each          TEXT NOT NULL,
  objective     TEXT NOT NULL,
  points        INTEGER NOT NULL,
  spec          TEXT NOT NULL,
  created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE TABLE IF NOT EXISTS points (
  sweep_hash     TEXT NOT NULL REFERENCES sweeps(sweep_hash),
  point_key      TEXT NOT NULL,
  point_index    INTEGER NOT NULL,
  params         TEXT NOT NULL,
  status         TEXT NOT NULL,
  reason         TEXT NOT NULL,
  plan           TEXT NOT NULL,
  devices        INTEGER NOT NULL,
  global_batch   INTEGER NOT NULL,
  iteration_s    REAL,
  tokens_per_s   REAL,
  mfu            REAL,
  memory_bytes   REAL,
  capacity_bytes REAL,
  cost_usd       REAL,
  energy_j       REAL,
  train_time_s   REAL,
  train_cost_usd REAL,
  breakdown      TEXT NOT NULL,
  search         TEXT NOT NULL,
  PRIMARY KEY (sweep_hash, point_key)
);
CREATE INDEX IF NOT EXISTS points_by_index ON points(sweep_hash, point_index);
)sql";

constexpr const char* kColumns[] = {"sweep_hash",     "point_key",    "point_index", "params",
                                    "status",         "reason",       "plan",        "devices",
                                    "global_batch",   "iteration_s",  "tokens_per_s", "mfu",
                                    "memory_bytes",   "capacity_bytes", "cost_usd",  "energy_j",
                                    "train_time_s",   "train_cost_usd", "breakdown", "search"};

std::string Message(sqlite3* db, const std::string& what) {
  return what + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory");
}

// RAII statement.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { ok_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) == SQLITE_OK; }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return ok_; }
  sqlite3_stmt* get() { return s_; }
  void Text(int i, const std::string& v) { sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void Int(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  void Real(int i, double v) { sqlite3_bind_double(s_, i, v); }
  std::string ColText(int i) {
    const unsigned char* t = sqlite3_column_text(s_, i);
    return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t));
  }

 private:
  sqlite3_stmt* s_ = nullptr;
  bool ok_ = false;
};

uint64_t ParseHex(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 16); }

}  // namespace

std::unique_ptr<ResultStore> ResultStore::Open(const std::string& path, std::string& error,
                                               bool read_only) {
  // One writer per store, by an exclusive flock(2) on the store file itself:
  // the kernel grants it to one process at a time, atomically, and drops it
  // when the holder exits or is killed, so a second sweep is refused with
  // no race and a killed sweep leaves no stale lock behind. (flock locks are
  // separate from the fcntl locks SQLite takes, and belong to this open file
  // description, so SQLite closing its own descriptors does not release it.)
  int lock_fd = -1;
  if (!read_only) {
    lock_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd < 0) {
      error = "cannot open " + path + ": " + std::strerror(errno);
      return nullptr;
    }
    if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
      const int why = errno;
      ::close(lock_fd);
      error = why == EWOULDBLOCK
                  ? path + " is in use: another orrery process is writing this result store; "
                           "wait for it to finish, or choose another --db"
                  : "cannot lock " + path + ": " + std::strerror(why);
      return nullptr;
    }
  }
  sqlite3* db = nullptr;
  const int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    error = Message(db, "cannot open " + path);
    sqlite3_close(db);
    if (lock_fd >= 0) ::close(lock_fd);
    return nullptr;
  }
  std::unique_ptr<ResultStore> s(new ResultStore(db));
  s->lock_fd_ = lock_fd;
  // Another process (an export while a sweep runs) may hold the lock briefly.
  sqlite3_busy_timeout(db, 10000);
  if (read_only) return s;
  std::string e;
  if (!s->Exec("PRAGMA journal_mode=WAL;", e)) {
    // A full disk or an I/O error is not a damaged store: say which.
    const int code = sqlite3_errcode(db) & 0xff;
    error = code == SQLITE_FULL || code == SQLITE_IOERR || code == SQLITE_READONLY ||
                    code == SQLITE_CANTOPEN
                ? path + ": cannot write the result store (" + e + "); fix the cause and run again"
                : path + ": not a result store, or a damaged one (" + e +
                      "); it cannot be reused: move it away and run the sweep again";
    return nullptr;
  }
  // A store damaged by a disk fault or an overwrite must not be resumed as if
  // its rows were sound: check every page and index before writing.
  if (!s->QuickCheck(e)) {
    error = path + ": the result store is damaged (SQLite quick_check: " + e +
            "); it cannot be reused: move it away and run the sweep again, or export what is "
            "readable with `orrery db export`";
    return nullptr;
  }
  if (!s->Exec("PRAGMA synchronous=NORMAL;", e) || !s->Exec(kSchema, e)) {
    error = path + ": " + e;
    return nullptr;
  }
  Stmt meta(db, "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', ?1)");
  meta.Text(1, std::to_string(kSchemaVersion));
  if (!meta.ok() || sqlite3_step(meta.get()) != SQLITE_DONE) {
    error = Message(db, path);
    return nullptr;
  }
  Stmt version(db, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (version.ok() && sqlite3_step(version.get()) == SQLITE_ROW &&
      version.ColText(0) != std::to_string(kSchemaVersion)) {
    error = path + ": result store schema version " + version.ColText(0) + ", this orrery writes " +
            std::to_string(kSchemaVersion);
    return nullptr;
  }
  return s;
}

ResultStore::~ResultStore() {
  sqlite3_close(db_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the writer's lock
}

bool ResultStore::QuickCheck(std::string& error) {
  Stmt st(db_, "PRAGMA quick_check;");
  if (!st.ok()) {
    error = sqlite3_errmsg(db_);
    return false;
  }
  std::string problems;
  int rc;
  int shown = 0;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    const std::string line = st.ColText(0);
    if (line == "ok") continue;
    if (shown++ < 3) problems += (problems.empty() ? "" : "; ") + line;
  }
  if (rc != SQLITE_DONE) {
    error = sqlite3_errmsg(db_);
    return false;
  }
  if (shown > 3) problems += "; and " + std::to_string(shown - 3) + " more";
  error = problems;
  return problems.empty();
}

bool ResultStore::Exec(const char* sql, std::string& error) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    error = msg != nullptr ? msg : "sqlite error";
    sqlite3_free(msg);
    return false;
  }
  return true;
}

bool ResultStore::RegisterSweep(const SweepRecord& r, std::string& error) {
  Stmt st(db_,
          "INSERT OR IGNORE INTO sweeps(sweep_hash, name, spec_file, scenario_file, each, objective, "
          "points, spec) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!st.ok()) {
    error = Message(db_, "register sweep");
    return false;
  }
  st.Text(1, HashHex(r.hash));
  st.Text(2, r.name);
  st.Text(3, r.spec_file);
  st.Text(4, r.scenario_file);
  st.Text(5, r.each);
  st.Text(6, r.objective);
  st.Int(7, r.points);
  st.Text(8, r.spec);
  if (sqlite3_step(st.get()) != SQLITE_DONE) {
    error = Message(db_, "register sweep");
    return false;
  }
  return true;
}

std::unordered_set<uint64_t> ResultStore::StoredKeys(uint64_t sweep_hash, std::string& error) {
  std::unordered_set<uint64_t> out;
  Stmt st(db_, "SELECT point_key FROM points WHERE sweep_hash = ?1");
  if (!st.ok()) {
    error = Message(db_, "read points");
    return out;
  }
  st.Text(1, HashHex(sweep_hash));
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) out.insert(ParseHex(st.ColText(0)));
  if (rc != SQLITE_DONE) error = Message(db_, "read points");
  return out;
}

bool ResultStore::WriteBatch(uint64_t sweep_hash, const std::vector<PointResult>& rows,
                             std::string& error) {
  if (rows.empty()) return true;
  if (!Exec("BEGIN IMMEDIATE;", error)) return false;
  {
    Stmt st(db_,
            "INSERT OR REPLACE INTO points(sweep_hash, point_key, point_index, params, status, reason, "
            "plan, devices, global_batch, iteration_s, tokens_per_s, mfu, memory_bytes, "
            "capacity_bytes, cost_usd, energy_j, train_time_s, train_cost_usd, breakdown, search) "
            "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
            "?19, ?20)");
    if (!st.ok()) {
      error = Message(db_, "write points");
      std::string ignored;
      Exec("ROLLBACK;", ignored);
      return false;
    }
    for (const PointResult& r : rows) {
      sqlite3_reset(st.get());
      st.Text(1, HashHex(sweep_hash));
      st.Text(2, HashHex(r.key));
      st.Int(3, static_cast<int64_t>(r.index));
      st.Text(4, r.params);
      st.Text(5, r.status);
      st.Text(6, r.reason);
      st.Text(7, r.plan);
      st.Int(8, r.devices);
      st.Int(9, r.global_batch);
      const bool has = r.status != "invalid";
      const double vals[] = {r.iteration_s, r.tokens_per_s, r.mfu, r.memory_bytes, r.capacity_bytes,
                             r.cost_usd, r.energy_j, r.train_time_s, r.train_cost_usd};
      for (int i = 0; i < 9; ++i) {
        if (has) st.Real(10 + i, vals[i]);
        else sqlite3_bind_null(st.get(), 10 + i);
      }
      st.Text(19, r.breakdown);
      st.Text(20, r.search);
      if (sqlite3_step(st.get()) != SQLITE_DONE) {
        error = Message(db_, "write points");
        std::string ignored;
        Exec("ROLLBACK;", ignored);
        return false;
      }
    }
  }
  return Exec("COMMIT;", error);
}

std::vector<SweepRecord> ResultStore::Sweeps(std::string& error) {
  std::vector<SweepRecord> out;
  Stmt st(db_,
          "SELECT sweep_hash, name, spec_file, scenario_file, each, objective, points, spec FROM "
          "sweeps ORDER BY created_at, sweep_hash");
  if (!st.ok()) {
    error = Message(db_, "read sweeps");
    return out;
  }
  while (sqlite3_step(st.get()) == SQLITE_ROW) {
    SweepRecord r;
    r.hash = ParseHex(st.ColText(0));
    r.name = st.ColText(1);
    r.spec_file = st.ColText(2);
    r.scenario_file = st.ColText(3);
    r.each = st.ColText(4);
    r.objective = st.ColText(5);
    r.points = sqlite3_column_int64(st.get(), 6);
    r.spec = st.ColText(7);
    out.push_back(r);
  }
  return out;
}

bool ResultStore::Export(std::ostream& out, bool json, const std::string& sweep, std::string& error) {
  std::string sql = "SELECT s.name";
  for (const char* c : kColumns) sql += std::string(", p.") + c;
  sql +=
      " FROM points p JOIN sweeps s ON s.sweep_hash = p.sweep_hash WHERE ?1 = '' OR s.name = ?1 OR "
      "p.sweep_hash LIKE ?1 || '%' ORDER BY s.created_at, p.sweep_hash, p.point_index";
  Stmt st(db_, sql.c_str());
  if (!st.ok()) {
    error = Message(db_, "export");
    return false;
  }
  st.Text(1, sweep);
  const int n = sqlite3_column_count(st.get());
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  auto csv_field = [](const std::string& v) {
    if (v.find_first_of(",\"\n") == std::string::npos) return v;
    std::string q = "\"";
    for (char c : v) {
      q += c;
      if (c == '"') q += '"';
    }
    return q + "\"";
  };
  if (!json) {
    out << "sweep";
    for (const char* c : kColumns) out << "," << c;
    out << "\n";
  }
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    nlohmann::ordered_json row;
    for (int i = 0; i < n; ++i) {
      const char* name = i == 0 ? "sweep" : kColumns[i - 1];
      const int type = sqlite3_column_type(st.get(), i);
      if (!json) {
        if (i > 0) out << ",";
        if (type == SQLITE_FLOAT) {
          char buf[40];
          std::snprintf(buf, sizeof buf, "%.17g", sqlite3_column_double(st.get(), i));
          out << buf;
        } else if (type != SQLITE_NULL) {
          out << csv_field(st.ColText(i));
        }
        continue;
      }
      const std::string key = name;
      if (type == SQLITE_NULL) row[key] = nullptr;
      else if (type == SQLITE_INTEGER) row[key] = sqlite3_column_int64(st.get(), i);
      else if (type == SQLITE_FLOAT) row[key] = sqlite3_column_double(st.get(), i);
      else {
        const std::string text = st.ColText(i);
        // JSON-valued columns are embedded as JSON, not as strings.
        if ((key == "params" || key == "plan" || key == "breakdown" || key == "search") && !text.empty()) {
          auto parsed = nlohmann::ordered_json::parse(text, nullptr, false);
          row[key] = parsed.is_discarded() ? nlohmann::ordered_json(text) : parsed;
        } else {
          row[key] = text;
        }
      }
    }
    if (json) rows.push_back(std::move(row));
    else out << "\n";
  }
  if (rc != SQLITE_DONE) {
    error = Message(db_, "export");
    return false;
  }
  if (json) out << rows.dump(2) << "\n";
  return true;
}

}  // namespace orrery::engine
