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
  SweepRunOptions o;
  o.db = db;
  o.threads = 1;
  o.batch = 4;
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
  SweepRunOptions o;
  o.db = dir + "/whole.sqlite";
  o.threads = 1;
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
  SweepRunOptions o;
  o.db = dir + "/whole.sqlite";
  o.threads = 1;
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
      SweepRunOptions c;
      c.db = db;
      c.threads = 1;
      c.batch = 2;
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
    SweepRunOptions r;
    r.db = db;
    r.threads = 1;
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
TEST(Sweep, DamagedStoreIsRefusedWithAMessage) {
  const std::string dir = TempDir();
  const std::string file = Write(dir, "grid.yaml", kGrid);
  auto l = Load(file);
  ASSERT_TRUE(l.spec) << l.diags.ToString();
  SweepRunOptions o;
  o.db = dir + "/r.sqlite";
  o.threads = 1;
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
      SweepRunOptions c;
      c.db = shared;
      c.threads = 1;
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
  // One node cannot hold GPT-3 175B; eight can.
  EXPECT_NE(csv.find("infeasible,no plan fits"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",ok,"), std::string::npos) << csv;
  out.str("");
  ASSERT_EQ(cli::RunDb({"list", db}, out, err), cli::kExitOk);
  EXPECT_NE(out.str().find("search-grid  (2 points"), std::string::npos) << out.str();
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

}  // namespace
}  // namespace orrery::engine
