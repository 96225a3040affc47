#pragma once
// The SQLite result store of sweeps (schema: docs/result-store.md).
//
// Write-ahead logging (PRAGMA journal_mode=WAL) and one transaction per
// batch of points: a process killed at any moment leaves every committed
// batch intact and no partial one, so a resumed sweep recomputes only the
// points of the batch that was lost.
//
// Opening a store to write checks every page (PRAGMA quick_check) and refuses
// a damaged or foreign file with a message; and it takes an exclusive lock
// on the file, so a second process writing the same store is refused (not
// merged): one writer per store, readers (`db export`) any time.

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/search/sweep.h"

struct sqlite3;

namespace orrery::engine {

struct SweepRecord {
  uint64_t hash = 0;
  std::string name, spec_file, scenario_file, each, objective, spec;
  int64_t points = 0;
};

class ResultStore {
 public:
  // Opens (creating when absent) the store at `path`. nullptr and `error`
  // on failure: unreadable, damaged, or (to write) locked by another process.
  static std::unique_ptr<ResultStore> Open(const std::string& path, std::string& error,
                                           bool read_only = false);
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  // Inserts the sweep row unless one with its hash exists.
  bool RegisterSweep(const SweepRecord& s, std::string& error);
  // Point keys stored for a sweep.
  std::unordered_set<uint64_t> StoredKeys(uint64_t sweep_hash, std::string& error);
  // Writes the rows in one transaction (INSERT OR REPLACE by key).
  bool WriteBatch(uint64_t sweep_hash, const std::vector<PointResult>& rows, std::string& error);

  std::vector<SweepRecord> Sweeps(std::string& error);
  // Every point row of one sweep (hash, hex prefix or name; empty = all), in
  // (sweep, point index) order, as CSV or JSON.
  bool Export(std::ostream& out, bool json, const std::string& sweep, std::string& error);

 private:
  explicit ResultStore(sqlite3* db) : db_(db) {}
  bool Exec(const char* sql, std::string& error);
  // True when PRAGMA quick_check finds nothing; else `error` lists problems.
  bool QuickCheck(std::string& error);
  sqlite3* db_ = nullptr;
  int lock_fd_ = -1;  // flock(LOCK_EX) held while open to write; -1 read-only
};

}  // namespace orrery::engine
