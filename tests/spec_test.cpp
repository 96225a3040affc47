// Scenario loading, presets and error text across rooms, and a generated-
// corpus fuzz test of the YAML loader.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "cli/cli_common.h"
#include "core/estimate/scenario.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;

const std::string kConfigs = ORRERY_TEST_CONFIG_DIR;
const std::string kData = std::string(ORRERY_TEST_SOURCE_DIR) + "/tests/data/";

engine::PresetStore Store() { return engine::PresetStore(kConfigs); }

std::vector<std::string> AllPresetFiles() {
  std::vector<std::string> files;
  for (const char* dir : {"devices", "systems", "models", "scenarios"})
    for (const auto& e : fs::directory_iterator(kConfigs + "/" + dir))
      if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Presets, EveryPresetPassesCheck) {
  const auto files = AllPresetFiles();
  ASSERT_GE(files.size(), 36u);  // 9 devices, 22 models, 5 systems, scenarios
  for (const auto& f : files) {
    base::Diagnostics d;
    EXPECT_TRUE(engine::CheckFile(f, Store(), d).has_value()) << f << "\n" << d.ToString();
  }
}

TEST(Presets, IssueListIsShipped) {
  const auto store = Store();
  for (const char* n : {"a100-40gb", "a100-80gb", "h100-sxm", "h200", "b200", "mi250x", "mi300x",
                        "tpu-v4", "tpu-v5p"})
    EXPECT_FALSE(store.PathOf(engine::DocKind::kDevice, n).empty()) << n;
  for (const char* n : {"gpt3-175b", "gpt-1.7b", "gpt-1t", "megatron-22b", "megatron-530b",
                        "megatron-1t", "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b",
                        "llama3-70b", "llama3-405b", "mixtral-8x7b", "glam"})
    EXPECT_FALSE(store.PathOf(engine::DocKind::kModel, n).empty()) << n;
  for (const char* n : {"dgx-a100-superpod", "dgx-h100-superpod", "tpu-v4-pod"})
    EXPECT_FALSE(store.PathOf(engine::DocKind::kSystem, n).empty()) << n;
}

// Runs a verb with the shipped presets and captures its output.
struct VerbResult {
  int code;
  std::string out, err;
};
VerbResult Verb(int (*verb)(const cli::Args&, std::ostream&, std::ostream&), cli::Args args) {
  setenv("ORRERY_CONFIG_DIR", kConfigs.c_str(), 1);
  std::ostringstream out, err;
  const int code = verb(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(Presets, ShowPrintsValuesWithUnits) {
  const VerbResult r = Verb(cli::RunPresets, {"show", "h100-sxm"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Values start one column after the longest key (flash2_attention_bwd_efficiency).
  EXPECT_NE(r.out.find("peak_bf16                        989.4 TFLOP/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory_capacity                  80 GB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory_bandwidth                 3.35 TB/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tdp                              700 W"), std::string::npos) << r.out;
  const VerbResult bad = Verb(cli::RunPresets, {"show", "h100-sxn"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_EQ(bad.err, "error: no preset named 'h100-sxn'; did you mean 'h100-sxm'?\n");
}

// `presets list` in each format: it had printed the table whatever
// --format said (the option was for `show` only), so `--format json` gave
// text that is not JSON, and exit 0.
TEST(Presets, ListInEveryFormat) {
  const VerbResult table = Verb(cli::RunPresets, {"list", "devices"});
  ASSERT_EQ(table.code, 0) << table.err;
  // Each preset beside its own `name:` (configs/devices/a100-40gb.yaml),
  // aligned past the longest file name (h200-measured, 13 letters).
  EXPECT_NE(table.out.find("devices (24):\n  a100-40gb      NVIDIA A100 SXM4 40GB\n"), std::string::npos)
      << table.out;
  const VerbResult json = Verb(cli::RunPresets, {"list", "devices", "--format", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["kind"], "presets");
  ASSERT_EQ(j["kinds"].size(), 1u);
  EXPECT_EQ(j["kinds"][0]["folder"], "devices");
  const auto& names = j["kinds"][0]["names"];
  EXPECT_NE(std::find(names.begin(), names.end(), "h100-sxm"), names.end()) << json.out;
  const auto& titles = j["kinds"][0]["titles"];
  ASSERT_EQ(titles.size(), names.size());
  const auto at = std::find(names.begin(), names.end(), "mi300x") - names.begin();
  EXPECT_EQ(titles[static_cast<size_t>(at)], "AMD Instinct MI300X (OAM 192GB)");
  const VerbResult csv = Verb(cli::RunPresets, {"list", "devices", "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("kind,name,title\ndevices,a100-40gb,NVIDIA A100 SXM4 40GB\n", 0), 0u) << csv.out;
  EXPECT_EQ(static_cast<size_t>(std::count(csv.out.begin(), csv.out.end(), '\n')), names.size() + 1) << csv.out;
}

TEST(Check, MisspelledKeyNamesFileLineColumnPathAndSuggestion) {
  const std::string file = kData + "misspelled_key.yaml";
  const VerbResult r = Verb(cli::RunCheck, {file});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, file + ":11:5: error: scenario.training.rcompute: unknown key in training; "
                          "did you mean 'recompute'?\n");
}

// Did-you-mean for what people type (core/base/diagnostics.h), through the
// places that suggest keys, preset names and enum values.
TEST(Check, SwappedLettersAndPrefixesGetEverySuggestionThatFits) {
  const std::string device = kData + "device_typo.yaml";
  const VerbResult d = Verb(cli::RunCheck, {device});
  EXPECT_EQ(d.code, 1);
  EXPECT_NE(d.err.find(device + ":5:3: error: device.memroy: unknown key in device; did you mean "
                                "'memory_capacity', 'memory_bandwidth' or 'memory_efficiency'?"),
            std::string::npos) << d.err;
  const std::string scenario = kData + "prefix_typos.yaml";
  const VerbResult s = Verb(cli::RunCheck, {scenario});
  EXPECT_EQ(s.code, 1);
  EXPECT_NE(s.err.find("(got 'llama3'); did you mean 'llama3-405b', 'llama3-70b' or 'llama3-8b'?"),
            std::string::npos) << s.err;
  EXPECT_NE(s.err.find("(got 'dgx-h1'); did you mean 'dgx-h100-clos-2to1', "
                       "'dgx-h100-rail-only' or 'dgx-h100-superpod'?"),
            std::string::npos) << s.err;
  EXPECT_NE(s.err.find("(got 'sel'); did you mean 'selective'?"), std::string::npos) << s.err;
  // `presets show` resolves a name as scenarios and measured runs do: 'H100'
  // is one of h100-sxm's aliases, and the note says which preset it is.
  const VerbResult p = Verb(cli::RunPresets, {"show", "h100"});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.err, "note: 'h100' is the device preset h100-sxm\n");
  EXPECT_NE(p.out.find("NVIDIA H100 SXM5 80GB"), std::string::npos) << p.out;
  const VerbResult r1 = Verb(cli::RunPresets, {"show", "deepseek-ai/DeepSeek-R1"});
  EXPECT_EQ(r1.code, 0) << r1.err;
  EXPECT_EQ(r1.err, "note: 'deepseek-ai/DeepSeek-R1' is the model preset deepseek-v3\n");
  const VerbResult none = Verb(cli::RunPresets, {"show", "h100-pcie-96"});
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("error: no preset named 'h100-pcie-96'"), std::string::npos) << none.err;
}

// Issue 15: a misspelt recompute mode ('ops' for torchtitan's op-level
// selective checkpointing, recompute op) is a located error naming the
// allowed modes and the nearest one.
TEST(Check, RecomputeModeMisspeltIsALocatedErrorWithTheNearestMode) {
  const std::string f = (fs::path(testing::TempDir()) / "orrery_recompute_op.yaml").string();
  std::ofstream(f) << "scenario:\n"
                      "  model: gpt3-175b\n"
                      "  system: {device: a100-80gb, nodes: 1, devices_per_node: 8}\n"
                      "  training:\n"
                      "    recompute: ops\n";
  base::Diagnostics d;
  EXPECT_FALSE(engine::CheckFile(f, Store(), d).has_value());
  const std::string text = d.ToString();
  EXPECT_NE(text.find(f + ":5:16: error: scenario.training.recompute: "), std::string::npos) << text;
  EXPECT_NE(text.find("one of: none, selective, full, op"), std::string::npos) << text;
  EXPECT_NE(text.find("'ops'"), std::string::npos) << text;
  EXPECT_NE(text.find("did you mean 'op'?"), std::string::npos) << text;
}

// A key put one section off (the global batch under training; it is the
// workload's) is pointed to its home, in a file and on the command line,
// where edit distance over the section's own keys has nothing to offer; a
// typo keeps its in-section suggestion.
TEST(Check, AKeyInTheWrongSectionNamesItsHome) {
  const std::string f = (fs::path(testing::TempDir()) / "orrery_key_section.yaml").string();
  std::ofstream(f) << "scenario:\n"
                      "  model: gpt3-175b\n"
                      "  system: {device: a100-80gb, nodes: 1, devices_per_node: 8}\n"
                      "  training:\n"
                      "    global_batch: 64\n";
  base::Diagnostics d;
  EXPECT_FALSE(engine::CheckFile(f, Store(), d).has_value());
  EXPECT_NE(d.ToString().find(f + ":5:5: error: scenario.training.global_batch: unknown key in training; did "
                                  "you mean 'workload.global_batch'?"),
            std::string::npos)
      << d.ToString();
  base::Diagnostics o;
  auto s = engine::LoadScenarioFile("gpt3-175b-a100", Store(), o);
  ASSERT_TRUE(s) << o.ToString();
  EXPECT_FALSE(engine::ApplyOverride(*s, "workload.tp=2", o));
  EXPECT_FALSE(engine::ApplyOverride(*s, "system.memory_capacity=141 GB", o));
  EXPECT_FALSE(engine::ApplyOverride(*s, "training.micro_bach=2", o));
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o.items()[0].hint, "did you mean 'training.tp'?");
  EXPECT_EQ(o.items()[1].hint, "did you mean 'system.device.memory_capacity'?");
  EXPECT_EQ(o.items()[2].hint, "did you mean 'micro_batch'?");
}

// Issue 15: training.recompute_interval below 1 is a located error (file,
// line, column, key path, the rule and the value).
TEST(Check, RecomputeIntervalBelowOneIsALocatedError) {
  const std::string f = (fs::path(testing::TempDir()) / "orrery_recompute_interval.yaml").string();
  std::ofstream(f) << "scenario:\n"
                      "  model: gpt3-175b\n"
                      "  system: {device: a100-80gb, nodes: 1, devices_per_node: 8}\n"
                      "  training:\n"
                      "    recompute: full\n"
                      "    recompute_interval: 0\n";
  base::Diagnostics d;
  EXPECT_FALSE(engine::CheckFile(f, Store(), d).has_value());
  const std::string text = d.ToString();
  EXPECT_NE(text.find(f + ":6:25: error: scenario.training.recompute_interval: value out of range: must be in "
                          "[1, 1000000] (got '0')"),
            std::string::npos)
      << text;
}

// Issue 15: training.fp8_recipe takes four words; a misspelt one is a
// located error (file, line 6, column 17 where the value starts, key path,
// the allowed words, the value).
TEST(Check, Fp8RecipeMisspeltIsALocatedError) {
  const std::string f = (fs::path(testing::TempDir()) / "orrery_fp8_recipe.yaml").string();
  std::ofstream(f) << "scenario:\n"
                      "  model: llama3-8b\n"
                      "  system: {device: b200, nodes: 1, devices_per_node: 8}\n"
                      "  training:\n"
                      "    precision: fp8\n"
                      "    fp8_recipe: mxfp9\n";
  base::Diagnostics d;
  EXPECT_FALSE(engine::CheckFile(f, Store(), d).has_value());
  const std::string text = d.ToString();
  EXPECT_NE(text.find(f + ":6:17: error: scenario.training.fp8_recipe: one of: delayed, current, blockwise, "
                          "mxfp8, nvfp4 (got 'mxfp9')"),
            std::string::npos)
      << text;
}

// MXFP8 and NVFP4 need block-scaled tensor cores: on DGX H100 (no FP4/MX
// peak in the h100-sxm preset) the plan is refused, naming the key, the
// value and the devices that have them; the same plan on DGX B200 passes.
TEST(Check, Mxfp8RecipeNeedsBlockScaledTensorCores) {
  const std::string dir = testing::TempDir();
  for (const std::string recipe : {"mxfp8", "nvfp4"})
    for (const char* system : {"dgx-h100-superpod", "dgx-b200"}) {
      const std::string f = (fs::path(dir) / ("orrery_" + recipe + "_" + system + ".yaml")).string();
      std::ofstream(f) << "scenario:\n"
                          "  model: llama3-8b\n"
                          "  system: " << system << "\n"
                          "  set:\n"
                          "    system.nodes: 1\n"
                          "  workload: {global_batch: 128, seq_len: 8192}\n"
                          "  training:\n"
                          "    precision: fp8\n"
                          "    fp8_recipe: " << recipe << "\n";
      base::Diagnostics d;
      const bool ok = engine::CheckFile(f, Store(), d).has_value();
      const std::string text = d.ToString();
      if (std::string(system) == "dgx-b200") {
        EXPECT_TRUE(ok) << text;
      } else {
        EXPECT_FALSE(ok);
        EXPECT_NE(text.find("training.fp8_recipe: the device 'NVIDIA H100 SXM5 80GB' has no block-scaled (MX) tensor "
                            "cores: " + recipe + " runs on Blackwell (b200, gb200) (got '" + recipe + "')"),
                  std::string::npos)
            << text;
      }
    }
}

TEST(Check, EachErrorClassIsReportedWithItsRule) {
  const std::string f = kData + "bad_values.yaml";
  base::Diagnostics d;
  EXPECT_FALSE(engine::CheckFile(f, Store(), d).has_value());
  const std::string text = d.ToString();
  // Out of range.
  EXPECT_NE(text.find(f + ":5:13: error: scenario.model.layers: value out of range: must be in "
                          "[1, 100000] (got '-3')"), std::string::npos) << text;
  // Misspelt enum.
  EXPECT_NE(text.find(f + ":9:17: error: scenario.model.activation: one of: gelu, swiglu (got "
                          "'swigl'); did you mean 'swiglu'?"), std::string::npos) << text;
  // Unknown preset: both H100 presets fit the typed prefix equally well.
  EXPECT_NE(text.find(f + ":11:13: error: scenario.system.device: unknown device preset (got "
                          "'h100-sx'); did you mean 'h100-hbm2e' or 'h100-sxm'?"), std::string::npos) << text;
  // Wrong type.
  EXPECT_NE(text.find(f + ":12:12: error: scenario.system.nodes: expected a single value "
                          "(integer in [1, 10000000]), got a sequence"), std::string::npos) << text;
  // Missing unit.
  EXPECT_NE(text.find(f + ":16:20: error: scenario.system.network[0].bandwidth: a unit is "
                          "required for a bandwidth"), std::string::npos) << text;
}

TEST(Check, CrossChecksRunAsOnePassAfterLoading) {
  const std::string f = kData + "cross_check.yaml";
  base::Diagnostics d;
  EXPECT_FALSE(engine::CheckFile(f, Store(), d).has_value());
  const std::string text = d.ToString();
  EXPECT_NE(text.find("training: tp x pp x cp x dp must equal the device count (16 = 2 nodes x 8) "
                      "(got 'tp=3 pp=100 cp=1 dp=1')"), std::string::npos) << text;
  EXPECT_NE(text.find("training.tp: tp must divide the attention heads (64) (got '3')"),
            std::string::npos) << text;
  EXPECT_NE(text.find("training.tp: KV heads (8) must be divisible by tp, or tp by them"),
            std::string::npos) << text;
  EXPECT_NE(text.find("training.tp: tp must divide the MLP size (28672)"), std::string::npos) << text;
  EXPECT_NE(text.find("workload.global_batch: global batch must be a multiple of dp x micro_batch "
                      "(2) (got '7')"), std::string::npos) << text;
  EXPECT_NE(text.find("training.pp: pp x interleave (100) cannot exceed the layers (80)"),
            std::string::npos) << text;
}

TEST(Overrides, SetUsesTheRegistryRules) {
  base::Diagnostics d;
  auto s = engine::LoadScenarioFile("gpt3-175b-a100", Store(), d);
  ASSERT_TRUE(s) << d.ToString();
  EXPECT_TRUE(engine::ApplyOverride(*s, "training.pp=16", d));
  EXPECT_EQ(s->training.pp, 16);
  EXPECT_TRUE(engine::ApplyOverride(*s, "system.device.memory_capacity=141 GB", d));
  EXPECT_DOUBLE_EQ(s->system.device.memory_capacity, 141e9);
  EXPECT_TRUE(engine::ApplyOverride(*s, "system.network[1].bandwidth=400 Gb/s", d));
  EXPECT_DOUBLE_EQ(s->system.network[1].bandwidth, 50e9);
  ASSERT_TRUE(d.ok()) << d.ToString();
  EXPECT_FALSE(engine::ApplyOverride(*s, "training.recompute=ful", d));
  EXPECT_FALSE(engine::ApplyOverride(*s, "trainng.tp=2", d));
  EXPECT_FALSE(engine::ApplyOverride(*s, "system.network[7].bandwidth=1 GB/s", d));
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d.items()[0].ToString(),
            "--set training.recompute=ful: error: training.recompute: one of: none, selective, full, op "
            "(got 'ful'); did you mean 'full'?");
  EXPECT_EQ(d.items()[1].ToString(),
            "--set trainng.tp=2: error: trainng.tp: unknown parameter path; did you mean 'training.tp'?");
  EXPECT_NE(d.items()[2].message.find("no such network tier (the system has 2"), std::string::npos);
}

// A device value set on the command line meets the device's own rules once
// the overrides are in: the H100 profile's fused-attention forward factor
// tops out at 1.041 (16k tokens, configs/devices/h100-sxm.yaml), so an
// efficiency of 0.99 would put the kernel at 0.99 x 1.041 = 1.031 of the
// peak. Checked by CrossCheck, which estimate, search, sweep and the GUI run.
TEST(Overrides, DeviceRulesHoldAfterSet) {
  base::Diagnostics d;
  auto s = engine::LoadScenarioFile("llama3-70b-h100", Store(), d);
  ASSERT_TRUE(s) << d.ToString();
  engine::CrossCheck(*s, d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  EXPECT_TRUE(engine::ApplyOverride(*s, "system.device.flash_attention_efficiency=0.99", d));
  engine::CrossCheck(*s, d);
  ASSERT_FALSE(d.ok());
  const std::string text = d.ToString();
  EXPECT_NE(text.find("system.device.flash_attention_length_factor"), std::string::npos) << text;
  EXPECT_NE(text.find("the kernel would run above the device's peak"), std::string::npos) << text;
}

TEST(Explain, DocumentsEveryKeyFromTheRegistry) {
  std::string hint;
  const std::string text = engine::Explain("training.recompute", hint);
  EXPECT_NE(text.find("one of: none, selective, full"), std::string::npos) << text;
  EXPECT_NE(text.find("default: none"), std::string::npos) << text;
  EXPECT_EQ(engine::Explain("training.recompte", hint), "");
  EXPECT_EQ(hint, "did you mean 'training.recompute'?");
  // The committed reference is what the registry generates.
  std::ifstream in(std::string(ORRERY_TEST_SOURCE_DIR) + "/docs/config-reference.md");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), engine::ReferenceMarkdown())
      << "docs/config-reference.md is stale: regenerate with `orrery explain --markdown`";
}

// Generated-corpus fuzzing: every shipped preset, mutated many ways (bytes
// flipped, lines dropped or duplicated, YAML punctuation inserted, deep
// nesting, huge numbers), must load to a result or to diagnostics — never a
// crash, an exception or a hang. Deterministic seed.
TEST(Fuzz, MutatedPresetsNeverCrashTheLoader) {
  std::mt19937_64 rng(20261129);
  const auto files = AllPresetFiles();
  const fs::path dir = fs::temp_directory_path() / ("orrery_fuzz_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string junk[] = {"{", "}", "[", "]", ":", "- ", "&a ", "*a", "!!binary ", "\"", "'",
                              "\t", "\n", "%YAML 1.2\n", "1e400", "-0", "nan", "~", "? ", "|",
                              ">", "#", "\xff\xfe", std::string(1, '\0'), "<<: *a\n"};
  int inputs = 0;
  for (int round = 0; round < 60; ++round) {
    for (const auto& f : files) {
      std::ifstream in(f);
      std::string text((std::istreambuf_iterator<char>(in)), {});
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !text.empty(); ++e) {
        const size_t pos = rng() % text.size();
        switch (rng() % 5) {
          case 0: text[pos] = static_cast<char>(rng() % 256); break;
          case 1: text.erase(pos, rng() % 40); break;
          case 2: text.insert(pos, junk[rng() % std::size(junk)]); break;
          case 3: text.insert(pos, text.substr(pos, rng() % 200)); break;
          case 4: text.insert(pos, std::string(rng() % 300, rng() % 2 ? '[' : '{')); break;
        }
      }
      const fs::path p = dir / (fs::path(f).filename().string());
      std::ofstream(p, std::ios::binary) << text;
      base::Diagnostics d;
      EXPECT_NO_THROW(engine::CheckFile(p.string(), Store(), d));
      ++inputs;
    }
  }
  fs::remove_all(dir);
  RecordProperty("fuzz_inputs", inputs);
  std::cout << "[ fuzz     ] " << inputs << " mutated inputs loaded without a crash\n";
  EXPECT_GE(inputs, 2000);
}

}  // namespace
}  // namespace orrery
