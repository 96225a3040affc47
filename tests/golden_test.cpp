// The CLI's JSON output for every README example of estimate, infer, search,
// sweep and db, against the documents captured before those verbs became
// thin calls of the public API (tests/golden/, commands.txt says how each was
// made). Every field of a golden document must be present with the same
// value: numbers within a relative 1e-9, strings and booleans equal. New
// fields (schema_version, kind, status, ...) may be added. Known renames of
// schema version 1 are mapped; wall-clock fields are skipped.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unistd.h>

#include "cli/cli_common.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kSource = fs::path(ORRERY_TEST_CONFIG_DIR).parent_path();

// Fields measured in wall-clock time: they differ from run to run.
bool Volatile(const std::string& key) {
  return key == "wall_s" || key == "simulate_s" || key == "elapsed_s";
}

// Renamed in schema version 1: old key -> new key and the factor new/old.
const std::map<std::string, std::pair<std::string, double>> kRenamed = {
    {"model_tflops_per_device", {"model_flops_per_s_per_device", 1e12}},
};

void Compare(const Json& want, const Json& got, const std::string& where,
             std::vector<std::string>& problems, double scale = 1) {
  if (want.is_number()) {
    if (!got.is_number()) {
      problems.push_back(where + ": want a number " + want.dump() + ", got " + got.dump());
      return;
    }
    const double w = want.get<double>() * scale, g = got.get<double>();
    if (std::fabs(w - g) > 1e-9 * std::max(std::fabs(w), std::fabs(g)) + 1e-300)
      problems.push_back(where + ": want " + want.dump() + ", got " + got.dump());
    return;
  }
  if (want.is_object()) {
    if (!got.is_object()) {
      problems.push_back(where + ": want an object, got " + got.dump().substr(0, 80));
      return;
    }
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (Volatile(it.key())) continue;
      std::string key = it.key();
      double factor = 1;
      if (auto r = kRenamed.find(key); r != kRenamed.end() && !got.contains(key)) {
        key = r->second.first;
        factor = r->second.second;
      }
      if (!got.contains(key)) {
        problems.push_back(where + "." + it.key() + ": missing");
        continue;
      }
      Compare(*it, got[key], where + "." + key, problems, factor);
    }
    return;
  }
  if (want.is_array()) {
    if (!got.is_array() || got.size() != want.size()) {
      problems.push_back(where + ": want an array of " + std::to_string(want.size()));
      return;
    }
    for (size_t i = 0; i < want.size(); ++i)
      Compare(want[i], got[i], where + "[" + std::to_string(i) + "]", problems);
    return;
  }
  if (want != got) problems.push_back(where + ": want " + want.dump() + ", got " + got.dump());
}

struct Golden {
  std::string name;
  std::vector<std::string> args;
};

std::vector<Golden> Commands(const std::set<std::string>& verbs) {
  std::ifstream in(kSource / "tests/golden/commands.txt");
  std::vector<Golden> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    Golden g{line.substr(0, tab), {}};
    std::istringstream words(line.substr(tab + 1));
    for (std::string w; words >> w;) g.args.push_back(w);
    if (verbs.count(g.args.front())) out.push_back(g);
  }
  return out;
}

// Runs each golden command of `verbs` (in file order, sharing one temporary
// store as @DB) and compares its JSON with the golden document.
void Check(const std::set<std::string>& verbs) {
  const fs::path db = fs::temp_directory_path() / ("orrery_golden_" + std::to_string(::getpid()) + ".sqlite");
  fs::remove(db);
  const fs::path cwd = fs::current_path();
  fs::current_path(kSource);
  const auto commands = Commands(verbs);
  ASSERT_FALSE(commands.empty());
  for (const Golden& g : commands) {
    SCOPED_TRACE(g.name);
    std::vector<std::string> args(g.args.begin() + 1, g.args.end());
    for (auto& a : args)
      if (a == "@DB") a = db.string();
    using Run = int (*)(const cli::Args&, std::ostream&, std::ostream&);
    const std::map<std::string, Run> runs = {{"estimate", cli::RunEstimate}, {"infer", cli::RunInfer},
                                              {"search", cli::RunSearch},     {"sweep", cli::RunSweep},
                                              {"db", cli::RunDb}};
    std::ostringstream out, err;
    const int code = runs.at(g.args.front())(args, out, err);
    EXPECT_TRUE(code == 0 || code == cli::kExitInfeasible) << code << " " << err.str();
    std::ifstream file(kSource / "tests/golden" / (g.name + ".json"));
    const Json want = Json::parse(file);
    Json got = Json::parse(out.str(), nullptr, false);
    ASSERT_FALSE(got.is_discarded()) << out.str();
    EXPECT_EQ(got.value("schema_version", 0), 1);
    if (want.is_array()) {
      // Lists became documents: {"schema_version", ..., "sweeps" | "rows": [...]}.
      Json list;
      for (auto it = got.begin(); it != got.end(); ++it)
        if (it->is_array()) list = *it;
      got = list;
    }
    Json expected = want;
    if (expected.is_object() && expected.contains("db")) expected["db"] = db.string();
    std::vector<std::string> problems;
    Compare(expected, got, g.name, problems);
    EXPECT_TRUE(problems.empty()) << problems.size() << " differences, first: " << problems.front();
  }
  fs::current_path(cwd);
  fs::remove(db);
}

TEST(Golden, Estimate) { Check({"estimate"}); }
TEST(Golden, Infer) { Check({"infer"}); }
TEST(Golden, Search) { Check({"search"}); }
TEST(Golden, SweepAndDb) { Check({"sweep", "db"}); }

}  // namespace
}  // namespace orrery
