// The README examples of network, plan, fit, validate and calibrate, run
// through the CLI verbs, against the JSON they printed before those verbs
// became library calls (tests/golden/, captured by tests/golden/capture.sh).
// Every number must agree within a relative 1e-9, every string and flag
// exactly; new keys (schema_version) may be added, none may go missing.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/fit_command.h"
#include "cli/network_command.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;
const std::string kSource = ORRERY_TEST_SOURCE_DIR;

struct Golden {
  std::string name;
  std::vector<std::string> args;
};

std::vector<Golden> ReadCommands() {
  std::ifstream in(kSource + "/tests/golden/golden_commands.txt");
  std::vector<Golden> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t bar = line.find('|');
    Golden g;
    g.name = line.substr(0, bar);
    std::istringstream words(line.substr(bar + 1));
    std::string w;
    while (words >> w) g.args.push_back(w);
    out.push_back(std::move(g));
  }
  return out;
}

// Runs `orrery ARGS` in-process; returns its standard output.
std::string RunVerb(std::vector<std::string> args, int& code, std::string& err_text) {
  const std::string verb = args.front();
  args.erase(args.begin());
  std::ostringstream out, err;
  if (verb == "network") code = cli::RunNetwork(args, out, err);
  else if (verb == "plan") code = cli::RunPlan(args, out, err);
  else if (verb == "fit") code = cli::RunFitCommand(args, out, err);
  else if (verb == "validate") code = cli::RunValidate(args, out, err);
  else if (verb == "calibrate") code = cli::RunCalibrate(args, out, err);
  else ADD_FAILURE() << "no verb " << verb;
  err_text = err.str();
  return out.str();
}

// Every value of `want` is in `got`: numbers within a relative 1e-9.
void Compare(const nlohmann::json& want, const nlohmann::json& got, const std::string& path,
             std::vector<std::string>& diffs) {
  if (diffs.size() > 20) return;
  if (want.is_number() && got.is_number()) {
    const double a = want.get<double>(), b = got.get<double>();
    if (!(std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)) + 1e-300) && !(a == b))
      diffs.push_back(path + ": " + want.dump() + " became " + got.dump());
    return;
  }
  if (want.type() != got.type()) {
    diffs.push_back(path + ": " + want.dump().substr(0, 80) + " became " + got.dump().substr(0, 80));
    return;
  }
  if (want.is_object()) {
    for (const auto& [k, v] : want.items()) {
      if (!got.contains(k)) diffs.push_back(path + "." + k + ": missing");
      else Compare(v, got[k], path + "." + k, diffs);
    }
  } else if (want.is_array()) {
    if (want.size() != got.size()) {
      diffs.push_back(path + ": " + std::to_string(want.size()) + " elements became " + std::to_string(got.size()));
      return;
    }
    for (size_t i = 0; i < want.size(); ++i) Compare(want[i], got[i], path + "[" + std::to_string(i) + "]", diffs);
  } else if (want != got) {
    diffs.push_back(path + ": " + want.dump() + " became " + got.dump());
  }
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

TEST(GoldenVerbs, ReadmeExamplesPrintTheSameJson) {
  setenv("ORRERY_CONFIG_DIR", ORRERY_TEST_CONFIG_DIR, 1);
  const std::vector<Golden> commands = ReadCommands();
  ASSERT_GE(commands.size(), 13u);
  const fs::path tmp = fs::temp_directory_path() / ("orrery_golden_" + std::to_string(getpid()));
  fs::create_directories(tmp);
  const fs::path before = fs::current_path();
  fs::current_path(kSource);  // the commands name files relative to the repository root
  for (const Golden& g : commands) {
    SCOPED_TRACE(g.name);
    std::vector<std::string> args;
    for (const auto& a : g.args) args.push_back(ReplaceAll(a, "@TMP@", tmp.string()));
    int code = -1;
    std::string err;
    const std::string out = RunVerb(args, code, err);
    const nlohmann::json got = nlohmann::json::parse(ReplaceAll(out, tmp.string(), "@TMP@"), nullptr, false);
    ASSERT_FALSE(got.is_discarded()) << "exit " << code << "\n" << out.substr(0, 400) << err;
    std::ifstream in(kSource + "/tests/golden/" + g.name + ".json");
    const nlohmann::json want = nlohmann::json::parse(in, nullptr, false);
    ASSERT_FALSE(want.is_discarded());
    std::vector<std::string> diffs;
    Compare(want, got, g.name, diffs);
    std::string all;
    for (const auto& d : diffs) all += d + "\n";
    EXPECT_TRUE(diffs.empty()) << all;
  }
  fs::current_path(before);
  fs::remove_all(tmp);
}

// The exit statuses of the goldens' verbs mean one thing each: the budget
// plan on selene finds no feasible plan (3), the others succeed (0).
TEST(GoldenVerbs, ExitStatusesMeanOneThingEach) {
  setenv("ORRERY_CONFIG_DIR", ORRERY_TEST_CONFIG_DIR, 1);
  const fs::path before = fs::current_path();
  fs::current_path(kSource);
  for (const Golden& g : ReadCommands()) {
    if (g.name.rfind("calibrate_import", 0) == 0) continue;  // writes a file
    int code = -1;
    std::string err;
    RunVerb(g.args, code, err);
    EXPECT_EQ(code, g.name == "plan_budget" ? 3 : 0) << g.name << ": " << err;
  }
  fs::current_path(before);
}

// Issue 19's invariants: a source none of whose rows could be evaluated has
// no mean error. The table says "no data" where a MAPE would stand (it used
// to print "MAPE 0.00 %"), the JSON gives null with the reason, and a source
// name longer than the old 40-character column is printed whole.
TEST(GoldenVerbs, ValidateSourceWithNoEvaluatedRowSaysNoData) {
  setenv("ORRERY_CONFIG_DIR", ORRERY_TEST_CONFIG_DIR, 1);
  std::ifstream in(kSource + "/validation/training_runs.csv");
  std::string header, row;
  ASSERT_TRUE(std::getline(in, header) && std::getline(in, row));
  // The first row's fields up to its one quoted (last) field, as cells.
  const size_t quote = row.find('"');
  ASSERT_NE(quote, std::string::npos);
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    return cells;
  };
  const std::vector<std::string> names = split(header);
  std::vector<std::string> cells = split(row.substr(0, quote));
  const auto gpus = std::find(names.begin(), names.end(), "gpus") - names.begin();
  ASSERT_LT(static_cast<size_t>(gpus), cells.size());
  // 57 characters, none of the (,' that end a source group's name.
  const std::string source = "A measured source whose name runs well past forty columns";
  ASSERT_EQ(source.size(), 57u);
  cells[0] = source;
  cells[static_cast<size_t>(gpus)] = "";  // skipped: the GPU count cannot be assumed
  std::string skipped_row;
  for (const auto& c : cells) skipped_row += c + ",";
  skipped_row += row.substr(quote);
  const fs::path csv = fs::temp_directory_path() / ("orrery_no_data_" + std::to_string(getpid()) + ".csv");
  std::ofstream(csv) << header << "\n" << skipped_row << "\n";

  int code = -1;
  std::string err;
  const std::string text = RunVerb({"validate", csv.string()}, code, err);
  EXPECT_EQ(code, 0) << err;
  EXPECT_NE(text.find("  " + source + "  no data"), std::string::npos) << text;
  EXPECT_NE(text.find("(0 evaluated, 1 skipped)"), std::string::npos) << text;
  EXPECT_NE(text.find("all: no data, 0 evaluated, 1 skipped"), std::string::npos) << text;
  EXPECT_EQ(text.find("MAPE"), std::string::npos) << text;

  const nlohmann::json j = nlohmann::json::parse(RunVerb({"validate", csv.string(), "--format", "json"}, code, err));
  EXPECT_TRUE(j["mape_pct"].is_null());
  EXPECT_TRUE(j["max_abs_error_pct"].is_null());
  EXPECT_EQ(j["no_data"], "no row evaluated (1 skipped)");
  const nlohmann::json& g = j["by_source"][source];
  EXPECT_TRUE(g["mape_pct"].is_null());
  EXPECT_TRUE(g["max_abs_error_pct"].is_null());
  EXPECT_EQ(g["no_data"], "no row evaluated (1 skipped)");
  EXPECT_EQ(g["evaluated"], 0);
  EXPECT_EQ(g["skipped"], 1);
  fs::remove(csv);
}

// `orrery validate --row N`: the row (measured as its source states it,
// predicted, the error) and then the estimate it was predicted with, the
// same time in both; --set changes the row's scenario and says the error
// then; a line without a row, or --set without --row, is refused.
// A tolerance below 0 (or not a number) is a usage error: -1 had been taken
// as "no tolerance" and the run passed. A loss target at or below a law's
// irreducible loss names both, without the solver's name or six decimals.
TEST(GoldenVerbs, ToleranceAndLossTargetsOutOfRangeAreRefused) {
  setenv("ORRERY_CONFIG_DIR", ORRERY_TEST_CONFIG_DIR, 1);
  const std::string csv = kSource + "/validation/training_runs.csv";
  int code = -1;
  std::string err;
  RunVerb({"validate", csv, "--max-mape", "-1"}, code, err);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("--max-mape -1: a tolerance is a percentage >= 0"), std::string::npos) << err;
  RunVerb({"validate", csv, "--max-error", "nan"}, code, err);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("--max-error nan"), std::string::npos) << err;
  RunVerb({"fit", "--preset", "chinchilla", "--target-loss", "1.0"}, code, err);
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("target loss 1 is not above the law's irreducible loss E = 1.69: no finite "
                     "model and data reach it"),
            std::string::npos)
      << err;
}

TEST(GoldenVerbs, ValidateRowShowsTheRowAndTheEstimateBehindIt) {
  setenv("ORRERY_CONFIG_DIR", ORRERY_TEST_CONFIG_DIR, 1);
  const std::string csv = kSource + "/validation/training_runs.csv";
  int code = -1;
  std::string err;
  const std::string text = RunVerb({"validate", csv, "--row", "2"}, code, err);
  ASSERT_EQ(code, 0) << err;
  // Line 2: Korthikanti et al. 2022, Table 5, Megatron-22B, 1.42 s.
  EXPECT_NE(text.find("training_runs.csv:2  Megatron-22B\n"), std::string::npos) << text;
  EXPECT_NE(text.find("measured   iteration_s 1.42 s\n"), std::string::npos) << text;
  const size_t at = text.find("predicted  ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string predicted = text.substr(at + 11, text.find(',', at) - at - 11);
  EXPECT_NE(text.find("iteration  " + predicted + "\n"), std::string::npos) << predicted << "\n" << text;

  const std::string changed =
      RunVerb({"validate", csv, "--row", "2", "--set", "training.micro_batch=2"}, code, err);
  ASSERT_EQ(code, 0) << err;
  const std::string lead = "with --set training.micro_batch=2: predicted ";
  const size_t with = changed.find(lead);
  ASSERT_NE(with, std::string::npos) << changed;
  const size_t from = with + lead.size();
  const std::string other = changed.substr(from, changed.find(',', from) - from);
  EXPECT_NE(changed.find("iteration  " + other + "\n"), std::string::npos) << changed;
  EXPECT_NE(changed.find("micro-batch 2 x 2 microbatches"), std::string::npos) << changed;
  EXPECT_NE(other, predicted);
  // Without recompute the 22B shape does not fit an 80 GB A100 at micro
  // batch 4 (the reason Table 5 recomputes): said on the row's line, exit 3.
  const std::string oom = RunVerb({"validate", csv, "--row", "2", "--set", "training.recompute=none"}, code, err);
  EXPECT_EQ(code, 3);
  EXPECT_NE(oom.find("(infeasible: "), std::string::npos) << oom;

  const nlohmann::json j =
      nlohmann::json::parse(RunVerb({"validate", csv, "--row", "2", "--format", "json"}, code, err));
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["line"], 2);
  EXPECT_EQ(j["rows"][0]["predicted"], j["estimate"]["iteration_s"]);

  // --engine event: the row's plan replayed on the event engine, its error
  // beside the closed form's, and the estimate shown is the event engine's.
  const std::string event = RunVerb({"validate", csv, "--row", "2", "--engine", "event"}, code, err);
  ASSERT_EQ(code, 0) << err;
  const std::string event_lead = "with the event engine: predicted ";
  const size_t ev = event.find(event_lead);
  ASSERT_NE(ev, std::string::npos) << event;
  const size_t ev_from = ev + event_lead.size();
  EXPECT_NE(event.find("iteration  " + event.substr(ev_from, event.find(',', ev_from) - ev_from) + "\n"),
            std::string::npos)
      << event;
  const nlohmann::json je = nlohmann::json::parse(
      RunVerb({"validate", csv, "--row", "2", "--engine", "event", "--format", "json"}, code, err));
  EXPECT_EQ(je["engine"], "closed");  // what predicted the rows: the row itself stays the closed form's
  EXPECT_EQ(je["engine_with_set"], "event");
  EXPECT_EQ(je["predicted_with_set"], je["estimate"]["iteration_s"]);
  EXPECT_EQ(je["estimate"]["engine"], "event");
  RunVerb({"validate", csv, "--row", "2", "--engine", "evnt"}, code, err);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("must be closed or event"), std::string::npos) << err;

  RunVerb({"validate", csv, "--row", "99999"}, code, err);
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("no measured run on line 99999"), std::string::npos) << err;
  RunVerb({"validate", csv, csv, "--row", "2"}, code, err);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("a row by line reads one CSV; 2 were given"), std::string::npos) << err;
  RunVerb({"validate", csv, "--set", "training.tp=1"}, code, err);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("give --row N"), std::string::npos) << err;
}

// `orrery validate --by FACET`: the rows grouped by what they were predicted
// with, each group with its MAPE and bias; the table says what the bias is;
// a facet it does not know is a usage error that lists the ones it does.
TEST(GoldenVerbs, ValidateByGroupsTheRowsByWhatTheyRanWith) {
  setenv("ORRERY_CONFIG_DIR", ORRERY_TEST_CONFIG_DIR, 1);
  const std::string csv = kSource + "/validation/training_runs.csv";
  int code = -1;
  std::string err;
  const nlohmann::json j =
      nlohmann::json::parse(RunVerb({"validate", csv, "--by", "recompute", "--format", "json"}, code, err));
  ASSERT_TRUE(j.contains("by_facet")) << j.dump().substr(0, 400);
  int evaluated = 0, grouped = 0;
  std::map<std::string, int> per_mode;
  int times = 0, rates = 0;
  double speed_sum = 0;
  for (const auto& row : j["rows"])
    if (!row["error_pct"].is_null()) {
      ++evaluated;
      ++per_mode[row["recompute"].get<std::string>()];
      // speed_error_pct says the error in one direction: a rate's equals
      // its error; a time's speed is the inverse, (1 + e)(1 + s) = 1
      // (line 110: 28.19 s measured, 12.06 s predicted: e -57.2 %, s +133.7 %).
      const double e = row["error_pct"].get<double>() / 100, sp = row["speed_error_pct"].get<double>() / 100;
      if (row["metric"] == "iteration_s") {
        ++times;
        EXPECT_NEAR((1 + e) * (1 + sp), 1.0, 1e-12) << row["line"];
        EXPECT_TRUE((e < 0) == (sp > 0)) << row["line"];
      } else {
        ++rates;
        EXPECT_NEAR(sp, e, 1e-12) << row["line"];
      }
      speed_sum += sp;
    } else {
      EXPECT_TRUE(row["speed_error_pct"].is_null()) << row["line"];
    }
  EXPECT_GT(times, 0);
  EXPECT_GT(rates, 0);
  // The file's bias is the mean of the rows' speed errors.
  EXPECT_NEAR(j["speed_bias_pct"].get<double>(), 100 * speed_sum / evaluated, 1e-9);
  for (const auto& [mode, g] : j["by_facet"].items()) {
    grouped += g["evaluated"].get<int>();
    EXPECT_EQ(g["evaluated"].get<int>(), per_mode[mode]) << mode;
  }
  EXPECT_EQ(grouped, evaluated);
  // Korthikanti et al.'s Table 5 alone has selective rows (4 of its 8).
  EXPECT_EQ(per_mode["selective"], 4);

  const std::string text = RunVerb({"validate", csv, "--by", "device"}, code, err);
  EXPECT_NE(text.find("\nby device:\n"), std::string::npos);
  EXPECT_NE(text.find("  a100-80gb "), std::string::npos);
  EXPECT_NE(text.find("speed: predicted over measured speed, less 1,\n + = predicted faster than measured"),
            std::string::npos);
  // The table's speed column: line 2 (Megatron-22B) is a time.
  const std::string row2 = text.substr(text.find("\n2 "), text.find("\n3 ") - text.find("\n2 "));
  EXPECT_NE(row2.find("%"), row2.rfind("%")) << row2;  // error and speed

  RunVerb({"validate", csv, "--by", "colour"}, code, err);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("--by 'colour': must be one of device, framework, precision, recompute, metric"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace orrery
