// Sweeps and the result store: spec parsing and its error text, ranges,
// zipped and crossed axes, FNV-1a keys, kill -9 then --resume, thread and
// MPI-rank independence, export.

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <set>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/cli_common.h"
#include "core/search/result_store.h"
#include "core/search/sweep.h"

namespace orrery::engine {
namespace {

namespace fs = std::filesystem;
const std::string kConfigs = ORRERY_TEST_CONFIG_DIR;

std::string TempDir() {
  const fs::path d = fs::path(testing::TempDir()) /
                     ("orrery_sweep_" + std::to_string(getpid()) + "_" +
                      testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::string Write(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

struct Loaded {
  std::optional<SweepSpec> spec;
  Scenario base;
  base::Diagnostics diags;
};

// Run options for one thread writing `db`, `batch` points per transaction.
SweepRunOptions OneThreadInto(const std::string& db, size_t batch = SweepRunOptions{}.batch) {
  SweepRunOptions o;
  o.db = db;
  o.threads = 1;
  o.batch = batch;
  return o;
}

Loaded Load(const std::string& file) {
  Loaded l;
  l.spec = LoadSweepFile(file, PresetStore(kConfigs), l.base, l.diags);
  return l;
}

std::string Export(const std::string& db, bool json = false) {
  std::string e;
  auto store = ResultStore::Open(db, e, true);
  EXPECT_TRUE(store) << e;
  if (!store) return {};
  std::ostringstream os;
  EXPECT_TRUE(store->Export(os, json, "", e)) << e;
  return os.str();
}

int64_t RowCount(const std::string& db) {
  sqlite3* h = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 1000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM points", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return n;
}

// 8 bandwidths x 5 HBM sizes x 2 micro-batch sizes of GPT-3 175B on 64 A100:
// 80 points, each a fixed-plan estimate.
const char* kGrid = R"(sweep:
  name: grid
  scenario: gpt3-175b-a100
  each: estimate
  axes:
    - path: system.network[1].bandwidth
      linear: {from: 100 Gb/s, to: 800 Gb/s, points: 8}
    - path: system.device.memory_capacity
      values: [40 GB, 60 GB, 80 GB, 120 GB, 160 GB]
    - path: training.micro_batch
      values: [1, 2]
)";

TEST(Sweep, Fnv1aTestVectors) {
  // Fowler-Noll-Vo reference values for 64-bit FNV-1a.
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
  EXPECT_EQ(HashHex(0xaf63dc4c8601ec8cull), "af63dc4c8601ec8c");
}

TEST(Sweep, RangesZipAndCross) {
  const std::string dir = TempDir();
  const auto l = Load(Write(dir, "s.yaml", R"(sweep:
  scenario: gpt3-175b-a100
  axes:
    - path: system.network[1].bandwidth
      log: {from: 200 Gb/s, to: 800 Gb/s, points: 3}
    - path: system.device.memory_capacity
      linear: {from: 80 GB, to: 160 GB, points: 3}
      group: g
    - path: system.device.memory_bandwidth
      values: [2 TB/s, 3 TB/s, 4 TB/s]
      group: g
    - path: system.nodes
      linear: {from: 8, to: 32, step: 8}
)"));
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  const SweepSpec& s = *l.spec;
  // 200 Gb/s = 25 GB/s; x 2 per step on a log range of 3 points.
  EXPECT_EQ(s.axes[0].values, (std::vector<std::string>{"25 GB/s", "50 GB/s", "100 GB/s"}));
  EXPECT_EQ(s.axes[1].values, (std::vector<std::string>{"80 GB", "120 GB", "160 GB"}));
  EXPECT_EQ(s.axes[3].values, (std::vector<std::string>{"8", "16", "24", "32"}));
  const auto points = ExpandPoints(s);
  // bandwidth (3) x zipped {capacity, hbm} (3) x nodes (4).
  ASSERT_EQ(points.size(), 36u);
  EXPECT_EQ(points[0].params[1].second, "80 GB");
  EXPECT_EQ(points[0].params[2].second, "2 TB/s");
  EXPECT_EQ(points[4].params[1].second, "120 GB");  // the zipped pair moves together
  EXPECT_EQ(points[4].params[2].second, "3 TB/s");
  EXPECT_EQ(points[4].params[3].second, "8");
  // The key is FNV-1a of the canonical "path=value" lines.
  EXPECT_EQ(points[0].key,
            Fnv1a64("system.network[1].bandwidth=25 GB/s\nsystem.device.memory_capacity=80 GB\n"
                    "system.device.memory_bandwidth=2 TB/s\nsystem.nodes=8\n"));
}

TEST(Sweep, SpecErrorsNameFileLineColumn) {
  const std::string dir = TempDir();
  const std::string f = Write(dir, "bad.yaml", R"(sweep:
  scenario: gpt3-175b-a100
  eech: search
  axes:
    - path: system.network[1].bandwith
      values: [1 TB/s]
    - path: system.nodes
      valuse: [1, 2]
    - path: system.device.memory_capacity
      values: [80 GB, 80]
    - path: system.nodes
      log: {from: 8, to: 32, points: 3}
      group: z
    - path: system.devices_per_node
      values: [8, 4]
      group: z
)");
  const auto l = Load(f);
  ASSERT_FALSE(l.spec);
  const std::string t = l.diags.ToString();
  EXPECT_NE(t.find(f + ":3:3: error: sweep.eech: unknown key in sweep; did you mean 'each'?"), std::string::npos) << t;
  EXPECT_NE(t.find(f + ":5:13: error: sweep.axes[0].path: unknown parameter path (got 'system.network[1].bandwith'); "
                       "did you mean 'system.network[i].bandwidth'?"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find(f + ":8:7: error: sweep.axes[1].valuse: unknown key in axis; did you mean 'values'?"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find(f + ":10:23: error: system.device.memory_capacity"), std::string::npos) << t;
  EXPECT_NE(t.find("axes zipped in group 'z' need as many values (system.nodes has 3, "
                   "system.devices_per_node has 2)"),
            std::string::npos)
      << t;
}

// Child: runs the sweep with a pause after each batch so that the parent can
// kill it in the middle.
void RunChild(const std::string& file, const std::string& db) {
  auto l = Load(file);
  if (!l.spec) _exit(3);
  SweepRunOptions o = OneThreadInto(db, 4);
  o.progress = [](uint64_t, uint64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(40)); };
  SweepRunStats st;
  std::string e;
  _exit(RunSweep(*l.spec, l.base, o, st, e) ? 0 : 4);
}

TEST(Sweep, KillNineThenResumeGivesTheUninterruptedRows) {
  const std::string dir = TempDir();
  const std::string file = Write(dir, "grid.yaml", kGrid);
  auto l = Load(file);
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  ASSERT_EQ(ExpandPoints(*l.spec).size(), 80u);

  // Uninterrupted reference.
  SweepRunOptions o = OneThreadInto(dir + "/whole.sqlite");
  SweepRunStats st;
  std::string e;
  ASSERT_TRUE(RunSweep(*l.spec, l.base, o, st, e)) << e;
  EXPECT_EQ(st.evaluated, 80u);
  EXPECT_EQ(st.ok + st.infeasible + st.invalid, 80u);
  EXPECT_GT(st.infeasible, 0u);  // 40 GB does not hold the plan
  EXPECT_GT(st.ok, 0u);

  const std::string db = dir + "/killed.sqlite";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) RunChild(file, db);
  // Kill it once a few batches are committed.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (RowCount(db) < 12 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child finished before it was killed";
  const int64_t kept = RowCount(db);
  EXPECT_GE(kept, 12);
  EXPECT_LT(kept, 80);
  EXPECT_EQ(kept % 4, 0);  // whole batches only

  // Without --resume the store refuses to mix runs.
  o.db = db;
  EXPECT_FALSE(RunSweep(*l.spec, l.base, o, st, e));
  EXPECT_NE(e.find("add --resume"), std::string::npos) << e;
  o.resume = true;
  o.threads = 2;
  e.clear();
  ASSERT_TRUE(RunSweep(*l.spec, l.base, o, st, e)) << e;
  EXPECT_EQ(st.skipped, static_cast<uint64_t>(kept));
  EXPECT_EQ(st.evaluated, 80u - static_cast<uint64_t>(kept));
  EXPECT_EQ(Export(db), Export(dir + "/whole.sqlite"));
  // Resuming a finished sweep evaluates nothing.
  ASSERT_TRUE(RunSweep(*l.spec, l.base, o, st, e)) << e;
  EXPECT_EQ(st.evaluated, 0u);
}

// Issue 20: SIGKILL at 100 random moments across a sweep (batches of two
// points, so kills land between, during and after commits). After --resume
// the rows equal an uninterrupted run's every time. The moments are drawn in
// the child's own progress (after its n-th committed batch, plus a few
// hundred microseconds), not in wall-clock time, so a loaded machine moves
// them no closer to the start or the end of the sweep.
TEST(Sweep, KillAtHundredRandomPointsThenResumeGivesTheUninterruptedRows) {
  const std::string dir = TempDir();
  const std::string file = Write(dir, "grid.yaml", kGrid);
  auto l = Load(file);
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  SweepRunOptions o = OneThreadInto(dir + "/whole.sqlite");
  SweepRunStats st;
  std::string e;
  ASSERT_TRUE(RunSweep(*l.spec, l.base, o, st, e)) << e;
  const std::string reference = Export(o.db);

  std::mt19937 rng(20);  // fixed seed: the same 100 kill moments every run
  // 80 points in batches of two: one progress report before the first batch
  // and one after each of the 40 commits. Targets past 41 let the child
  // finish on its own.
  std::uniform_int_distribution<int> after_report(0, 44);
  std::uniform_int_distribution<int> extra_us(0, 2500);
  int killed_mid_sweep = 0;
  for (int k = 0; k < 100; ++k) {
    const std::string db = dir + "/k" + std::to_string(k) + ".sqlite";
    const int target = after_report(rng);
    const auto delay = std::chrono::microseconds(extra_us(rng));
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      const int out = fds[1];
      SweepRunOptions c = OneThreadInto(db, 2);
      c.progress = [out](uint64_t, uint64_t) {
        const char tick = 1;
        if (write(out, &tick, 1) != 1) _exit(5);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      };
      SweepRunStats cs;
      std::string ce;
      _exit(RunSweep(*l.spec, l.base, c, cs, ce) ? 0 : 4);
    }
    close(fds[1]);
    int reports = 0;
    char tick = 0;
    while (reports <= target && read(fds[0], &tick, 1) == 1) ++reports;
    close(fds[0]);
    std::this_thread::sleep_for(delay);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
        << "kill point " << k << ": the child failed on its own (status " << status << ")";
    const int64_t kept = RowCount(db);
    if (WIFSIGNALED(status) && kept > 0 && kept < 80) ++killed_mid_sweep;
    if (kept > 0) {
      EXPECT_EQ(kept % 2, 0) << "kill point " << k << ": a partial batch was kept";
    }
    SweepRunOptions r = OneThreadInto(db);
    r.resume = true;
    SweepRunStats rs;
    std::string re;
    ASSERT_TRUE(RunSweep(*l.spec, l.base, r, rs, re)) << "kill point " << k << ": " << re;
    ASSERT_EQ(Export(db), reference)
        << "kill point " << k << " after report " << target << " + " << delay.count() << " us";
    fs::remove(db);
    fs::remove(db + "-wal");
    fs::remove(db + "-shm");
  }
  // Most kills must land inside the sweep, or the test proves little.
  EXPECT_GE(killed_mid_sweep, 30);
}

// Issue 20: 4 KiB of random bytes written into a store; --resume used to go
// on ("already stored") and only `db export` found it malformed.
// An axis over whole presets: each value any name the preset answers to; a
// range over them, or an unknown name, is a located error.
TEST(Sweep, AxisOverModelPresets) {
  const std::string dir = TempDir();
  auto l = Load(Write(dir, "m.yaml", R"(sweep:
  name: models
  scenario: gpt3-175b-a100
  each: search
  search: {top: 1, offload: false, all_group_orders: false, context_parallel: false}
  axes:
    - path: model
      values: [gpt-1.7b, Llama-3-8B-Instruct]
)"));
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  SweepRunOptions o = OneThreadInto(dir + "/m.sqlite");
  SweepRunStats st;
  std::string e;
  ASSERT_TRUE(RunSweep(*l.spec, l.base, o, st, e)) << e;
  EXPECT_EQ(st.ok, 2u);
  const std::string rows = Export(o.db, true);
  EXPECT_NE(rows.find("\"model\": \"Llama-3-8B-Instruct\""), std::string::npos) << rows;

  auto bad = Load(Write(dir, "bad.yaml", R"(sweep:
  name: models
  scenario: gpt3-175b-a100
  axes:
    - path: model
      values: [gpt-1.7b, lama3-8b]
    - path: system.device
      linear: {from: 1, to: 2, points: 2}
)"));
  EXPECT_FALSE(bad.spec);
  EXPECT_NE(bad.diags.ToString().find("bad.yaml:6:26: error: model: unknown model preset (got "
                                      "'lama3-8b'); did you mean 'llama3-8b'?"),
            std::string::npos)
      << bad.diags.ToString();
  EXPECT_NE(bad.diags.ToString().find("an axis over whole presets takes values: [names], not a range"),
            std::string::npos)
      << bad.diags.ToString();
}

TEST(Sweep, DamagedStoreIsRefusedWithAMessage) {
  const std::string dir = TempDir();
  const std::string file = Write(dir, "grid.yaml", kGrid);
  auto l = Load(file);
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  SweepRunOptions o = OneThreadInto(dir + "/r.sqlite");
  SweepRunStats st;
  std::string e;
  ASSERT_TRUE(RunSweep(*l.spec, l.base, o, st, e)) << e;
  const auto size = fs::file_size(o.db);
  ASSERT_GT(size, 3 * 4096u);
  {
    std::fstream f(o.db, std::ios::in | std::ios::out | std::ios::binary);
    std::mt19937 rng(7);
    f.seekp(static_cast<std::streamoff>(size / 2 / 4096 * 4096));
    for (int i = 0; i < 4096; ++i) f.put(static_cast<char>(rng() & 0xff));
  }
  o.resume = true;
  EXPECT_FALSE(RunSweep(*l.spec, l.base, o, st, e));
  EXPECT_NE(e.find(o.db + ": the result store is damaged (SQLite quick_check: "), std::string::npos) << e;
  EXPECT_NE(e.find("it cannot be reused"), std::string::npos) << e;

  // Not a store at all (a half-written or foreign file).
  o.db = Write(dir, "junk.sqlite", std::string(8192, 'x'));
  e.clear();
  EXPECT_FALSE(RunSweep(*l.spec, l.base, o, st, e));
  EXPECT_NE(e.find(o.db + ": not a result store, or a damaged one (file is not a database)"),
            std::string::npos)
      << e;
}

// Issue 20: two sweeps on one store both ran. One writer per store: the
// second is refused, by a kernel lock, so there is no window between check
// and start; reading (export) stays allowed.
TEST(Sweep, SecondWriterOfOneStoreIsRefused) {
  const std::string dir = TempDir();
  const std::string db = dir + "/r.sqlite";
  std::string e;
  auto first = ResultStore::Open(db, e);
  ASSERT_TRUE(first) << e;
  EXPECT_FALSE(ResultStore::Open(db, e));
  EXPECT_EQ(e, db + " is in use: another orrery process is writing this result store; wait for "
                    "it to finish, or choose another --db");
  EXPECT_TRUE(ResultStore::Open(db, e, /*read_only=*/true)) << e;
  first.reset();
  EXPECT_TRUE(ResultStore::Open(db, e)) << e;  // released on close

  // Two processes started together: exactly one runs the sweep.
  const std::string file = Write(dir, "grid.yaml", kGrid);
  auto l = Load(file);
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  const std::string shared = dir + "/two.sqlite";
  pid_t pids[2];
  for (pid_t& pid : pids) {
    pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      SweepRunOptions c = OneThreadInto(shared);
      c.batch = 4;  // 20 batches of 5 ms: the two runs overlap
      c.progress = [](uint64_t, uint64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(5)); };
      SweepRunStats cs;
      std::string ce;
      const bool ok = RunSweep(*l.spec, l.base, c, cs, ce);
      _exit(ok ? 0 : ce.find("is in use") != std::string::npos ? 5 : 4);
    }
  }
  int codes[2];
  for (int i = 0; i < 2; ++i) {
    int status = 0;
    waitpid(pids[i], &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    codes[i] = WEXITSTATUS(status);
  }
  std::sort(codes, codes + 2);
  EXPECT_EQ(codes[0], 0);
  EXPECT_EQ(codes[1], 5);
  EXPECT_EQ(RowCount(shared), 80);
}

TEST(Sweep, OneAndTwoThreadsGiveTheSameRows) {
  const std::string dir = TempDir();
  auto l = Load(Write(dir, "grid.yaml", kGrid));
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  for (int t : {1, 2}) {
    SweepRunOptions o;
    o.db = dir + "/t" + std::to_string(t) + ".sqlite";
    o.threads = t;
    o.batch = 7;
    SweepRunStats st;
    std::string e;
    ASSERT_TRUE(RunSweep(*l.spec, l.base, o, st, e)) << e;
  }
  const std::string one = Export(dir + "/t1.sqlite", true);
  EXPECT_EQ(one, Export(dir + "/t2.sqlite", true));
  EXPECT_NE(one.find("\"status\": \"infeasible\""), std::string::npos);
}

TEST(Sweep, InnerSearchAndExport) {
  const std::string dir = TempDir();
  const std::string file = Write(dir, "s.yaml", R"(sweep:
  name: search-grid
  scenario: gpt3-175b-a100
  each: search
  search: {top: 2, offload: false, all_group_orders: false}
  axes:
    - path: system.nodes
      values: [1, 8]
)");
  auto l = Load(file);
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  std::ostringstream out, err;
  const std::string db = dir + "/r.sqlite";
  ASSERT_EQ(cli::RunSweep({file, "--db", db, "-q"}, out, err), cli::kExitOk) << err.str();
  out.str("");
  ASSERT_EQ(cli::RunDb({"export", db, "--format", "csv"}, out, err), cli::kExitOk) << err.str();
  const std::string csv = out.str();
  // Flat: the axis is its own column (a count: no unit), no JSON in cells, no "null".
  EXPECT_EQ(csv.rfind("sweep,point_index,system.nodes,status,reason,", 0), 0u) << csv;
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",plan.tp,"), std::string::npos) << header;
  EXPECT_NE(header.find(",time.forward_s,"), std::string::npos) << header;
  EXPECT_EQ(csv.find("null"), std::string::npos) << csv;
  EXPECT_EQ(csv.find('{'), std::string::npos) << csv;
  // The axis' node counts read as whole numbers (the store keeps doubles).
  EXPECT_NE(csv.find("\nsearch-grid,0,1,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nsearch-grid,1,8,"), std::string::npos) << csv;
  // One node cannot hold GPT-3 175B; eight can.
  EXPECT_NE(csv.find("infeasible,no plan fits"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",ok,"), std::string::npos) << csv;
  out.str("");
  ASSERT_EQ(cli::RunDb({"list", db}, out, err), cli::kExitOk);
  EXPECT_NE(out.str().find("search-grid  (2 points"), std::string::npos) << out.str();
  // As CSV: a header and the one sweep (it had printed one empty line, its
  // rows read through a reference into a destroyed document).
  out.str("");
  ASSERT_EQ(cli::RunDb({"list", db, "--format", "csv"}, out, err), cli::kExitOk);
  const std::string list = out.str();
  ASSERT_EQ(std::count(list.begin(), list.end(), '\n'), 2) << list;
  EXPECT_NE(list.find("search-grid"), std::string::npos) << list;
}

// Issue 19: the points of a sweep of searches that differ only in HBM
// share their inner search's work (SearchMemo). Llama 3 70B on 128 and 256
// H100 at two scale-out bandwidths and six HBM sizes: 24 points in 4 units
// of 6. At 128 GPUs 8 GB cannot hold even the states: mixed-precision Adam
// keeps 16 bytes a parameter (Rajbhandari et al. 2020, Sec. 3.1), 16 B x
// 70.55e9 / 128 GPUs = 8.819 GB per GPU fully sharded; the larger sizes
// admit plans the smaller ones do not, so the best plan changes along HBM.
const char* kHbmSweep = R"(sweep:
  name: hbm-share
  scenario: llama3-70b-h100
  each: search
  search: {top: 2, objective: time, offload: false, all_group_orders: false}
  axes:
    - path: system.nodes
      values: [16, 32]
    - path: system.network[1].bandwidth
      values: [100 Gb/s, 400 Gb/s]
    - path: system.device.memory_capacity
      values: [8 GB, 9 GB, 10 GB, 12 GB, 40 GB, 141 GB]
)";

TEST(Sweep, Issue19PointsDifferingInHbmOnlyShareTheSearchWithIdenticalRows) {
  const std::string dir = TempDir();
  auto l = Load(Write(dir, "hbm.yaml", kHbmSweep));
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  const std::vector<SweepPoint> points = ExpandPoints(*l.spec);
  std::vector<uint64_t> all(points.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  // The HBM axis turns fastest: units are 6 consecutive points.
  const auto units = WorkUnits(*l.spec, points, all, true);
  ASSERT_EQ(units.size(), 4u);
  for (size_t u = 0; u < units.size(); ++u)
    EXPECT_EQ(units[u], (std::vector<uint64_t>{6 * u, 6 * u + 1, 6 * u + 2, 6 * u + 3, 6 * u + 4, 6 * u + 5}));
  EXPECT_EQ(WorkUnits(*l.spec, points, all, false).size(), 24u);

  // Point by point: the shared memo gives the plain path's row, field by field.
  for (const auto& unit : units) {
    SearchMemo memo;
    // Largest HBM first, then smallest: the memo is filled at one capacity
    // and read at both larger and smaller ones.
    std::vector<uint64_t> order(unit.rbegin(), unit.rend());
    std::swap(order[1], order.back());
    for (uint64_t i : order) {
      const PointResult a = EvaluatePoint(l.base, *l.spec, points[i]);
      const PointResult b = EvaluatePoint(l.base, *l.spec, points[i], &memo);
      EXPECT_EQ(ResultsToText({a}), ResultsToText({b})) << "point " << i;
    }
  }

  // The whole run: shared and plain stores export the same rows.
  for (bool share : {false, true}) {
    SweepRunOptions o;
    o.db = dir + (share ? "/shared.sqlite" : "/plain.sqlite");
    o.threads = 2;
    o.batch = 5;
    o.share_across_capacity = share;
    SweepRunStats st;
    std::string e;
    ASSERT_TRUE(RunSweep(*l.spec, l.base, o, st, e)) << e;
    EXPECT_EQ(st.evaluated, 24u);
  }
  const std::string plain = Export(dir + "/plain.sqlite", true);
  EXPECT_EQ(plain, Export(dir + "/shared.sqlite", true));
  // What makes the comparison worth having: infeasible points, and more
  // than one best plan across the HBM sizes of one unit.
  EXPECT_NE(plain.find("no plan fits: minimum weights+gradients+optimizer per GPU 8.819 GB > 8 GB"),
            std::string::npos);
  EXPECT_NE(plain.find("\"status\": \"ok\""), std::string::npos);
  std::set<std::string> plans;
  for (uint64_t i : units[0]) {
    const PointResult r = EvaluatePoint(l.base, *l.spec, points[i]);
    if (r.status == "ok") plans.insert(r.plan);
  }
  EXPECT_GE(plans.size(), 2u);
}

TEST(Sweep, Issue19ZippedHbmAxisIsNotShared) {
  const std::string dir = TempDir();
  auto l = Load(Write(dir, "zip.yaml", R"(sweep:
  scenario: llama3-70b-h100
  each: search
  axes:
    - path: system.nodes
      values: [16, 32]
    - path: system.device.memory_capacity
      values: [80 GB, 141 GB]
      group: hbm
    - path: system.device.memory_bandwidth
      values: [3.35 TB/s, 4.8 TB/s]
      group: hbm
)"));
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  const std::vector<SweepPoint> points = ExpandPoints(*l.spec);
  const std::vector<uint64_t> all = {0, 1, 2, 3};
  // Its points differ in the bandwidth too: each is its own unit.
  EXPECT_EQ(WorkUnits(*l.spec, points, all, true).size(), 4u);
}

int Shell(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(Sweep, MpiRanksGiveTheSameRowsAsOneProcess) {
  if (!ORRERY_TEST_MPI) GTEST_SKIP() << "built without MPI (ORRERY_WITH_MPI found no OpenMPI); "
                                        "apt-get install libopenmpi-dev openmpi-bin and reconfigure";
  if (Shell("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun is not on PATH";
  const std::string dir = TempDir();
  const std::string file = Write(dir, "grid.yaml", kGrid);
  const std::string bin = ORRERY_TEST_BINARY;
  const std::string env = "ORRERY_CONFIG_DIR='" + kConfigs + "' ";
  // OpenMPI keeps allocations until exit by design; under AddressSanitizer its
  // leak report would fail the ranks (issue 20), so leak checking is off for
  // them. Every other sanitizer check stays on.
  const std::string mpi = "ASAN_OPTIONS=detect_leaks=0 mpirun -np 2 --oversubscribe --allow-run-as-root ";
  ASSERT_EQ(Shell(env + bin + " sweep " + file + " --db " + dir + "/one.sqlite -q > /dev/null"), 0);
  ASSERT_EQ(Shell(env + mpi + bin + " sweep " + file + " --db " + dir + "/two.sqlite --batch 5 -q > " + dir +
                  "/mpi.log 2>&1"),
            0);
  EXPECT_EQ(Export(dir + "/two.sqlite"), Export(dir + "/one.sqlite"));
  // A search sharded over two ranks finds the same plans.
  const std::string search = " search gpt3-175b-a100 --default-order --no-offload --top 3 --format json -q";
  ASSERT_EQ(Shell(env + bin + search + " > " + dir + "/s1.json"), 0);
  ASSERT_EQ(Shell(env + mpi + bin + search + " > " + dir + "/s2.json"), 0);
  auto top = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string t = ss.str();
    return t.substr(t.find("\"top\""));
  };
  EXPECT_EQ(top(dir + "/s1.json"), top(dir + "/s2.json"));
}


// A disk that fills: a VFS over the default one whose writes succeed until a
// budget runs out and then fail with SQLITE_FULL, as a full file system makes
// SQLite do (https://www.sqlite.org/rescode.html#full). It forwards every
// other call, so the store behaves as on disk until the budget is spent.
struct FullDisk {
  static inline sqlite3_vfs* real = nullptr;
  static inline sqlite3_vfs vfs{};
  static inline sqlite3_io_methods methods{};
  static inline int64_t writes_left = 0;
  static inline int64_t failed = 0;
  struct File {
    sqlite3_file base;
    sqlite3_file* inner;  // the real file, allocated right after this struct
  };
  static sqlite3_file* In(sqlite3_file* f) { return reinterpret_cast<File*>(f)->inner; }
  static int Write(sqlite3_file* f, const void* p, int n, sqlite3_int64 off) {
    if (writes_left <= 0) {
      ++failed;
      return SQLITE_FULL;
    }
    --writes_left;
    return In(f)->pMethods->xWrite(In(f), p, n, off);
  }
  static int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out) {
    File* w = reinterpret_cast<File*>(f);
    w->inner = reinterpret_cast<sqlite3_file*>(w + 1);
    const int rc = real->xOpen(real, name, w->inner, flags, out);
    if (rc != SQLITE_OK || w->inner->pMethods == nullptr) {
      w->base.pMethods = nullptr;  // SQLite does not close a file whose open failed
      return rc;
    }
    const sqlite3_io_methods* m = w->inner->pMethods;
    methods.iVersion = std::min(m->iVersion, 3);
    methods.xClose = [](sqlite3_file* x) { return In(x)->pMethods->xClose(In(x)); };
    methods.xRead = [](sqlite3_file* x, void* p, int n, sqlite3_int64 o) {
      return In(x)->pMethods->xRead(In(x), p, n, o);
    };
    methods.xWrite = Write;
    methods.xTruncate = [](sqlite3_file* x, sqlite3_int64 n) { return In(x)->pMethods->xTruncate(In(x), n); };
    methods.xSync = [](sqlite3_file* x, int fl) { return In(x)->pMethods->xSync(In(x), fl); };
    methods.xFileSize = [](sqlite3_file* x, sqlite3_int64* n) { return In(x)->pMethods->xFileSize(In(x), n); };
    methods.xLock = [](sqlite3_file* x, int l) { return In(x)->pMethods->xLock(In(x), l); };
    methods.xUnlock = [](sqlite3_file* x, int l) { return In(x)->pMethods->xUnlock(In(x), l); };
    methods.xCheckReservedLock = [](sqlite3_file* x, int* r) {
      return In(x)->pMethods->xCheckReservedLock(In(x), r);
    };
    methods.xFileControl = [](sqlite3_file* x, int op, void* a) {
      return In(x)->pMethods->xFileControl(In(x), op, a);
    };
    methods.xSectorSize = [](sqlite3_file* x) { return In(x)->pMethods->xSectorSize(In(x)); };
    methods.xDeviceCharacteristics = [](sqlite3_file* x) {
      return In(x)->pMethods->xDeviceCharacteristics(In(x));
    };
    methods.xShmMap = [](sqlite3_file* x, int pg, int sz, int ext, void volatile** pp) {
      return In(x)->pMethods->xShmMap(In(x), pg, sz, ext, pp);
    };
    methods.xShmLock = [](sqlite3_file* x, int o, int n, int fl) {
      return In(x)->pMethods->xShmLock(In(x), o, n, fl);
    };
    methods.xShmBarrier = [](sqlite3_file* x) { In(x)->pMethods->xShmBarrier(In(x)); };
    methods.xShmUnmap = [](sqlite3_file* x, int del) { return In(x)->pMethods->xShmUnmap(In(x), del); };
    methods.xFetch = [](sqlite3_file* x, sqlite3_int64 o, int n, void** pp) {
      return In(x)->pMethods->xFetch(In(x), o, n, pp);
    };
    methods.xUnfetch = [](sqlite3_file* x, sqlite3_int64 o, void* p) {
      return In(x)->pMethods->xUnfetch(In(x), o, p);
    };
    w->base.pMethods = &methods;
    return rc;
  }
  // Installs the full disk as SQLite's default VFS with `budget` writes.
  static void Install(int64_t budget) {
    if (real == nullptr) {
      real = sqlite3_vfs_find(nullptr);
      vfs = *real;
      vfs.iVersion = std::min(real->iVersion, 3);
      vfs.szOsFile = static_cast<int>(sizeof(File)) + real->szOsFile;
      vfs.zName = "orrery-full-disk";
      vfs.pNext = nullptr;
      vfs.xOpen = Open;
    }
    writes_left = budget;
    failed = 0;
    sqlite3_vfs_register(&vfs, 1);
  }
  static void Remove() {
    sqlite3_vfs_unregister(&vfs);
    sqlite3_vfs_register(real, 1);
  }
};

// Issue 20: a file system that fills up part-way through a sweep. At every
// write budget from 0 (the store cannot even be created) past the whole
// sweep's writes, the sweep either completes or stops with the store's name
// and SQLite's "database or disk is full"; it never aborts, keeps only whole
// batches, and once space is back `--resume` gives exactly the rows of an
// uninterrupted run.
TEST(Sweep, DiskFullAtAnyWriteThenResumeGivesTheUninterruptedRows) {
  const std::string dir = TempDir();
  auto l = Load(Write(dir, "grid.yaml", kGrid));
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  SweepRunOptions o = OneThreadInto(dir + "/whole.sqlite", 8);
  SweepRunStats st;
  std::string e;
  ASSERT_TRUE(RunSweep(*l.spec, l.base, o, st, e)) << e;
  const std::string reference = Export(o.db);

  int stopped = 0, completed = 0, partial = 0, late = 0;
  for (int64_t budget = 0;; budget += budget < 16 ? 1 : 3) {
    const std::string db = dir + "/full" + std::to_string(budget) + ".sqlite";
    SweepRunOptions c = o;
    c.db = db;
    FullDisk::Install(budget);
    std::string ce;
    const bool ok = RunSweep(*l.spec, l.base, c, st, ce);
    const int64_t failed = FullDisk::failed;
    FullDisk::Remove();
    if (ok) {
      // A write may still fail after the last commit: the checkpoint that
      // copies the write-ahead log into the database when the store closes.
      // The committed rows stay in the log and the next open replays them.
      if (failed > 0) ++late;
      EXPECT_EQ(Export(db), reference) << "budget " << budget;
      ++completed;
      if (completed == 3 + late) break;  // three budgets past the whole sweep's writes
      continue;
    }
    ++stopped;
    EXPECT_NE(ce.find(db), std::string::npos) << "budget " << budget << ": " << ce;
    EXPECT_NE(ce.find("database or disk is full"), std::string::npos) << "budget " << budget << ": " << ce;
    EXPECT_EQ(ce.find("damaged"), std::string::npos) << "budget " << budget << ": " << ce;
    const int64_t kept = fs::exists(db) ? RowCount(db) : 0;
    if (kept > 0) {
      EXPECT_EQ(kept % 8, 0) << "budget " << budget << ": a partial batch was kept";
      if (kept < 80) ++partial;
    }
    SweepRunOptions r = o;
    r.db = db;
    r.resume = true;
    std::string re;
    ASSERT_TRUE(RunSweep(*l.spec, l.base, r, st, re)) << "budget " << budget << ": " << re;
    EXPECT_EQ(Export(db), reference) << "budget " << budget;
    ASSERT_LT(budget, 2000) << "the sweep never completed within the write budget";
  }
  // The disk must have filled at many places, including between batches.
  EXPECT_GE(stopped, 20);
  EXPECT_GE(partial, 3);
}

}  // namespace
}  // namespace orrery::engine
