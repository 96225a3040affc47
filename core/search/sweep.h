#pragma once
// What-if sweeps: a grid of scenarios made by setting registry paths
// (`--set` paths, engine::ApplyOverride) to values, each point estimated with
// the scenario's plan or searched for its best plan, stored in SQLite
// (result_store.h) so that an interrupted sweep resumes where it stopped.
//
// A sweep file:
//
//   sweep:
//     name: llama3-70b-what-if
//     scenario: llama3-70b-h100        # a scenario file (relative to this file) or preset
//     each: search                     # estimate (the scenario's plan) | search (best plan)
//     search: {top: 1, objective: time, offload: false}
//     set: {workload.train_tokens: 15e12}   # applied to every point first
//     axes:
//       - path: system.nodes
//         values: [32, 64, 128]
//       - path: system.network[1].bandwidth
//         log: {from: 200 Gb/s, to: 1600 Gb/s, points: 4}
//       - path: system.device.memory_capacity
//         linear: {from: 80 GB, to: 160 GB, points: 3}
//         group: hbm                   # axes sharing a group are zipped
//
// Axes in one group are zipped (they must have as many values); groups
// (an axis without `group` is its own) are crossed, the first outermost.
// Linear ranges are from + i (to - from) / (points - 1); log ranges
// from * (to / from)^(i / (points - 1)); `step:` instead of `points:` gives
// from, from + step, ... up to to.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/estimate/scenario.h"
#include "core/search/search.h"

namespace orrery::engine {

// The processes of one run (MPI ranks, or one process). Rank 0 owns the
// result store; the others evaluate their share and send it there.
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank 0's `text` to every rank.
  virtual void Broadcast(std::string& text) = 0;
  // Every rank's text, on rank 0 in rank order; empty on the others.
  virtual std::vector<std::string> Gather(const std::string& text) = 0;
};

class LocalComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void Broadcast(std::string&) override {}
  std::vector<std::string> Gather(const std::string& text) override { return {text}; }
};

// 64-bit FNV-1a (Fowler, Noll and Vo; offset basis 14695981039346656037,
// prime 1099511628211): the stable hash of point keys and sweep specs.
uint64_t Fnv1a64(std::string_view text);
// 16 lower-case hex digits.
std::string HashHex(uint64_t h);

enum class SweepEach { kEstimate, kSearch };

struct SweepAxis {
  std::string path;
  std::vector<std::string> values;  // texts for ApplyOverride
  std::string group;                // empty: its own group
  base::SourceLocation where;
};

struct SweepSpec {
  std::string name;
  std::string file;
  std::string scenario;         // as written
  std::string scenario_path;    // resolved file
  SweepEach each = SweepEach::kEstimate;
  int top = 1;
  Objective objective = Objective::kTime;
  PlanSpaceOptions space;
  std::vector<std::pair<std::string, std::string>> set;  // applied to every point
  std::vector<SweepAxis> axes;
  std::string canonical;        // what the sweep hash covers (see docs/result-store.md)
  uint64_t hash = 0;
};

// Loads and checks a sweep file; every error names file:line:col, the key
// path, the value and the rule. Also loads the scenario into `base`.
std::optional<SweepSpec> LoadSweepFile(const std::string& file, const PresetStore& store,
                                       Scenario& base, base::Diagnostics& diags);

struct SweepPoint {
  uint64_t index = 0;
  std::vector<std::pair<std::string, std::string>> params;  // path, value text
  uint64_t key = 0;  // Fnv1a64 of "path=value\n" for each param in axis order
};

// Every point, in a fixed order (groups crossed, first group outermost).
std::vector<SweepPoint> ExpandPoints(const SweepSpec& s);

// One stored row (docs/result-store.md).
struct PointResult {
  uint64_t index = 0;
  uint64_t key = 0;
  std::string params;     // JSON object {path: value}
  std::string status;     // ok | infeasible | invalid
  std::string reason;
  std::string plan;       // JSON of the plan estimated (the best one for search)
  int64_t devices = 0;
  int64_t global_batch = 0;
  double iteration_s = 0, tokens_per_s = 0, mfu = 0, memory_bytes = 0, capacity_bytes = 0;
  double cost_usd = 0, energy_j = 0, train_time_s = 0, train_cost_usd = 0;
  std::string breakdown;  // JSON: time and memory parts
  std::string search;     // JSON: candidates of the inner search ("" for estimates)
};

// Evaluates one point (pure; threads may call it at once). With a memo
// (borrowed, one thread's), the inner search shares its work with the
// points evaluated before with the same memo, which must differ from this
// one in system.device.memory_capacity alone (SearchMemo); the row is the
// same as without it.
PointResult EvaluatePoint(const Scenario& base, const SweepSpec& spec, const SweepPoint& p,
                          SearchMemo* memo = nullptr);

// The path of the axis whose points share an inner search's work.
inline constexpr const char* kSharedCapacityPath = "system.device.memory_capacity";

// The points in units of work, in order of first point: with each: search
// and system.device.memory_capacity an axis of its own (not zipped), the
// points that differ only in it form one unit and share a SearchMemo;
// otherwise, and with `share` false, every point is its own unit.
std::vector<std::vector<uint64_t>> WorkUnits(const SweepSpec& s, const std::vector<SweepPoint>& points,
                                             const std::vector<uint64_t>& pending, bool share);

// Serialisation of results between processes (one JSON object per line).
std::string ResultsToText(const std::vector<PointResult>& r);
bool ResultsFromText(const std::string& text, std::vector<PointResult>& out);

struct SweepRunOptions {
  std::string db;
  bool resume = false;
  int threads = 0;          // 0 = every hardware thread
  size_t batch = 64;        // points per transaction (at least; whole units of WorkUnits,
                            // and at least one per thread when they share work)
  // Points that differ only in the memory capacity share their inner
  // search's work (WorkUnits); false evaluates each alone. The rows are
  // the same either way.
  bool share_across_capacity = true;
  Comm* comm = nullptr;     // nullptr = this process alone
  // Rank 0, after each committed batch: points stored so far, total.
  std::function<void(uint64_t, uint64_t)> progress;
  // Borrowed; rank 0 polls it between batches. When raised, the run stops
  // after the last committed batch (SweepRunStats::cancelled); --resume
  // finishes it.
  const std::atomic<bool>* cancel = nullptr;
};

struct SweepRunStats {
  uint64_t points = 0;      // in the spec
  uint64_t skipped = 0;     // already stored (--resume)
  uint64_t evaluated = 0;   // this run
  uint64_t ok = 0, infeasible = 0, invalid = 0;
  double wall_s = 0;
  bool cancelled = false;   // SweepRunOptions::cancel was raised
};

// Runs the sweep into the store. Returns false with `error` (the same on
// every rank) when the store cannot be used or the sweep is already stored
// without `resume`.
bool RunSweep(const SweepSpec& spec, const Scenario& base, const SweepRunOptions& o,
              SweepRunStats& stats, std::string& error);

}  // namespace orrery::engine
