#include <gtest/gtest.h>

#include "core/base/diagnostics.h"
#include "core/base/format.h"
#include "core/base/param.h"
#include "core/base/quantity.h"
#include "core/base/yaml_source.h"

namespace orrery::base {
namespace {

double Q(const char* text, Dimension d) {
  const QuantityParse r = ParseQuantity(text, d);
  EXPECT_TRUE(r.value.has_value()) << text << ": " << r.error;
  return r.value.value_or(-1);
}

TEST(Quantity, DecimalAndBinaryBytesAreNeverConflated) {
  EXPECT_DOUBLE_EQ(Q("80 GB", Dimension::kBytes), 80e9);
  EXPECT_DOUBLE_EQ(Q("80 GiB", Dimension::kBytes), 80.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(Q("1 TiB", Dimension::kBytes), 1099511627776.0);
  EXPECT_DOUBLE_EQ(Q("1 KB", Dimension::kBytes), 1000);
  EXPECT_DOUBLE_EQ(Q("1 KiB", Dimension::kBytes), 1024);
  EXPECT_DOUBLE_EQ(Q("40MB", Dimension::kBytes), 40e6);
}

TEST(Quantity, BandwidthBitsAreDividedByEight) {
  EXPECT_DOUBLE_EQ(Q("3.35 TB/s", Dimension::kBandwidth), 3.35e12);
  EXPECT_DOUBLE_EQ(Q("400 Gb/s", Dimension::kBandwidth), 50e9);
  EXPECT_DOUBLE_EQ(Q("200 Gbit/s", Dimension::kBandwidth), 25e9);
  EXPECT_DOUBLE_EQ(Q("1 GiB/s", Dimension::kBandwidth), 1073741824.0);
}

TEST(Quantity, ComputeTimePowerEnergyMoney) {
  EXPECT_DOUBLE_EQ(Q("989.4 TFLOP/s", Dimension::kFlopRate), 989.4e12);
  EXPECT_DOUBLE_EQ(Q("2 PFLOP/s", Dimension::kFlopRate), 2e15);
  EXPECT_DOUBLE_EQ(Q("1.5 us", Dimension::kTime), 1.5e-6);
  EXPECT_DOUBLE_EQ(Q("2 h", Dimension::kTime), 7200);
  EXPECT_DOUBLE_EQ(Q("3 d", Dimension::kTime), 259200);
  EXPECT_DOUBLE_EQ(Q("10 ns", Dimension::kTime), 1e-8);
  EXPECT_DOUBLE_EQ(Q("700 W", Dimension::kPower), 700);
  EXPECT_DOUBLE_EQ(Q("1.2 MW", Dimension::kPower), 1.2e6);
  EXPECT_DOUBLE_EQ(Q("1 kWh", Dimension::kEnergy), 3.6e6);
  EXPECT_DOUBLE_EQ(Q("2 MWh", Dimension::kEnergy), 7.2e9);
  EXPECT_DOUBLE_EQ(Q("5 J", Dimension::kEnergy), 5);
  EXPECT_DOUBLE_EQ(Q("25000 USD", Dimension::kMoney), 25000);
  EXPECT_DOUBLE_EQ(Q("1e24 FLOP", Dimension::kFlops), 1e24);
}

TEST(Quantity, BareNumberNeedsAUnit) {
  const QuantityParse r = ParseQuantity("80", Dimension::kBytes);
  EXPECT_FALSE(r.value.has_value());
  EXPECT_NE(r.error.find("a unit is required for a bytes"), std::string::npos) << r.error;
  EXPECT_TRUE(ParseQuantity("80", Dimension::kDimensionless).value.has_value());
  EXPECT_FALSE(ParseQuantity("80 GB", Dimension::kDimensionless).value.has_value());
}

TEST(Quantity, MisspeltUnitGetsDidYouMean) {
  const QuantityParse r = ParseQuantity("3.35 TB/S", Dimension::kBandwidth);
  EXPECT_FALSE(r.value.has_value());
  EXPECT_EQ(r.error, "unknown unit 'TB/S' for a bandwidth");
  EXPECT_EQ(r.hint, "did you mean 'TB/s'?");
  // A unit of another dimension is not accepted.
  EXPECT_FALSE(ParseQuantity("80 GB", Dimension::kBandwidth).value.has_value());
  EXPECT_FALSE(ParseQuantity("nan GB", Dimension::kBytes).value.has_value());
  EXPECT_FALSE(ParseQuantity("inf GB", Dimension::kBytes).value.has_value());
  EXPECT_FALSE(ParseQuantity("", Dimension::kBytes).value.has_value());
  EXPECT_FALSE(ParseQuantity("GB", Dimension::kBytes).value.has_value());
  EXPECT_FALSE(ParseQuantity("1e308 PB", Dimension::kBytes).value.has_value());
}

TEST(Quantity, FormatsWithReadableUnits) {
  EXPECT_EQ(FormatQuantity(80.0 * 1073741824.0, Dimension::kBytes), "80 GiB");
  EXPECT_EQ(FormatQuantity(80e9, Dimension::kBytes), "80 GB");
  // An exact binary size too large for its unit without an exponent: the
  // activations of Llama 3 405B at tp 8, pp 16 once printed "6.48e+04 MiB".
  // 64800 MiB = 64800 x 1,048,576 B = 67,947,724,800 B = 67.95 GB.
  EXPECT_EQ(FormatQuantity(64800.0 * 1048576.0, Dimension::kBytes), "67.95 GB");
  EXPECT_EQ(FormatQuantity(9999.0 * 1048576.0, Dimension::kBytes), "9999 MiB");
  EXPECT_EQ(FormatQuantity(3.35e12, Dimension::kBandwidth), "3.35 TB/s");
  EXPECT_EQ(FormatQuantity(989.4e12, Dimension::kFlopRate), "989.4 TFLOP/s");
  EXPECT_EQ(FormatQuantity(1.5e-6, Dimension::kTime), "1.5 us");
  EXPECT_EQ(FormatQuantity(18.13, Dimension::kTime), "18.13 s");
  EXPECT_EQ(FormatQuantity(0, Dimension::kTime), "0 s");  // had read "0 ns"
  EXPECT_EQ(FormatQuantity(3.6e9, Dimension::kEnergy), "1 MWh");
  EXPECT_EQ(FormatQuantity(700, Dimension::kPower), "700 W");
  // Round trip: what is printed parses back to the same value.
  for (double v : {80e9, 0x1p36, 1.23e9, 5e5}) {
    EXPECT_DOUBLE_EQ(Q(FormatQuantity(v, Dimension::kBytes).c_str(), Dimension::kBytes), v);
  }
}

TEST(DidYouMean, FindsNearKeysOnly) {
  const std::vector<std::string> keys = {"hidden", "heads", "layers", "vocab"};
  EXPECT_EQ(DidYouMean("hiden", keys), "did you mean 'hidden'?");
  EXPECT_EQ(DidYouMean("layres", keys), "did you mean 'layers'?");
  EXPECT_EQ(DidYouMean("completely_other", keys), "");
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

// What people type: swapped letters, the start of a name, one word of a
// long name, other case or '-' for '_'. Several equally good fits are all
// named, in the candidates' order.
TEST(DidYouMean, SwappedLettersCountOnce) {
  EXPECT_EQ(EditDistance("memroy", "memory"), 1u);
  EXPECT_EQ(EditDistance("recmopute", "recompute"), 1u);
  EXPECT_EQ(EditDistance("ab", "ba"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
}

TEST(DidYouMean, WhatPeopleType) {
  const std::vector<std::string> device = {"name", "citation", "peak_bf16", "peak_fp8",
                                           "memory_capacity", "memory_bandwidth", "l2_cache",
                                           "scaleup_bandwidth", "tdp", "roofline"};
  // A swap in the first word of two keys: both.
  EXPECT_EQ(DidYouMean("memroy", device), "did you mean 'memory_capacity' or 'memory_bandwidth'?");
  // The start of a name.
  EXPECT_EQ(DidYouMean("mem", device), "did you mean 'memory_capacity' or 'memory_bandwidth'?");
  EXPECT_EQ(DidYouMean("scaleup", device), "did you mean 'scaleup_bandwidth'?");
  // A word inside names.
  EXPECT_EQ(DidYouMean("bandwidth", device),
            "did you mean 'memory_bandwidth' or 'scaleup_bandwidth'?");
  // A typo inside one word of a name.
  EXPECT_EQ(DidYouMean("capcity", device), "did you mean 'memory_capacity'?");
  // Every word of a name, with one more typed: 6 letters from peak_bf16, 6
  // from peak_fp8, beyond a typo of 15 / 3 = 5 letters.
  EXPECT_EQ(DidYouMean("peak_flops_bf16", device), "did you mean 'peak_bf16'?");
  EXPECT_EQ(DidYouMean("tdp_watts", device), "did you mean 'tdp'?");
  EXPECT_EQ(DidYouMean("bf16_flops", device), "");  // 'peak' not typed: not every word of peak_bf16
  // A whole-name typo beats a partial fit.
  EXPECT_EQ(DidYouMean("memory_bandwith", device), "did you mean 'memory_bandwidth'?");
  EXPECT_EQ(DidYouMean("Peak-BF16", device), "did you mean 'peak_bf16'?");
  // At most three, and nothing for a short unrelated word.
  EXPECT_EQ(DidYouMean("peak", {"peak_bf16", "peak_fp8", "peak_int8", "peak_tf32"}),
            "did you mean 'peak_bf16', 'peak_fp8' or 'peak_int8'?");
  EXPECT_EQ(DidYouMean("xyz", device), "");
  EXPECT_EQ(ClosestMatch("memroy", device), "memory_capacity");
  // Enum values with '-' and preset names.
  EXPECT_EQ(DidYouMean("tokens_per_dolar", {"time", "cost", "energy", "tokens-per-dollar"}),
            "did you mean 'tokens-per-dollar'?");
  EXPECT_EQ(DidYouMean("h100", {"a100-80gb", "h100-sxm", "h200", "h200-measured"}),
            "did you mean 'h100-sxm'?");
  EXPECT_EQ(DidYouMean("h20", {"a100-80gb", "h100-sxm", "h200", "h200-measured"}),
            "did you mean 'h200'?");
}

struct Toy {
  int layers = 0;
  double bw = 0;
  bool flag = false;
  enum class Mode { kA, kB } mode = Mode::kA;
  std::string name;
};

Schema<Toy> ToySchema() {
  Schema<Toy> s("toy", "a toy spec");
  s.Int("layers", &Toy::layers, 1, 1000, "", "layer count")
      .Quantity("bw", &Toy::bw, Dimension::kBandwidth, 0, 1e15, "1 GB/s", "bandwidth", true)
      .Bool("flag", &Toy::flag, "false", "a flag")
      .Enum<Toy::Mode>("mode", &Toy::mode, {{"a", Toy::Mode::kA}, {"b", Toy::Mode::kB}}, "a",
                       "mode")
      .String("name", &Toy::name, "", "a name");
  return s;
}

Diagnostics ParseToy(const std::string& yaml, Toy& t) {
  Diagnostics d;
  auto node = ParseYamlText(yaml, "toy.yaml", d);
  if (node) ToySchema().Parse(*node, "toy", "toy.yaml", t, d);
  return d;
}

TEST(Schema, ParsesValuesAndDefaults) {
  Toy t;
  Diagnostics d = ParseToy("layers: 12\nmode: b\nname: x\n", t);
  ASSERT_TRUE(d.ok()) << d.ToString();
  EXPECT_EQ(t.layers, 12);
  EXPECT_DOUBLE_EQ(t.bw, 1e9);
  EXPECT_EQ(t.mode, Toy::Mode::kB);
  EXPECT_EQ(t.name, "x");
}

// One test per error class; the text is pinned because users read it.
TEST(Schema, UnknownKeyNamesFileLineColumnAndSuggests) {
  Toy t;
  Diagnostics d = ParseToy("layers: 12\nlayres: 3\n", t);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].ToString(),
            "toy.yaml:2:1: error: toy.layres: unknown key in toy; did you mean 'layers'?");
}

TEST(Schema, WrongTypeIsReported) {
  Toy t;
  Diagnostics d = ParseToy("layers: [1, 2]\n", t);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].ToString(),
            "toy.yaml:1:9: error: toy.layers: expected a single value (integer in [1, 1000]), got a "
            "sequence");
  Diagnostics d2 = ParseToy("layers: twelve\n", t);
  EXPECT_EQ(d2.items()[0].ToString(),
            "toy.yaml:1:9: error: toy.layers: expected an integer (got 'twelve')");
}

TEST(Schema, MissingUnitIsReported) {
  Toy t;
  Diagnostics d = ParseToy("layers: 2\nbw: 100\n", t);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].ToString(),
            "toy.yaml:2:5: error: toy.bw: a unit is required for a bandwidth (e.g. '100 GB/s') "
            "(got '100')");
}

// The rule's example is a value a user would write, inside the range: a
// time was shown as '1.157e+07 d' (10^12 s) and a power as '1000 GW'.
TEST(Schema, RuleExampleIsATypicalValueInsideTheRange) {
  ParamInfo time;
  time.type = ParamType::kQuantity;
  time.dim = Dimension::kTime;
  time.min = 0;
  time.max = 1;
  EXPECT_EQ(time.RuleText(), "time with a unit (e.g. '10 us') in [0 s, 1 s]");
  ParamInfo power = time;
  power.dim = Dimension::kPower;
  power.min = 1000;  // the typical 700 W is below: the example moves up to the minimum
  power.max = 1e6;
  EXPECT_EQ(power.RuleText().rfind("power with a unit (e.g. '1 kW')", 0), 0u) << power.RuleText();
  ParamInfo price = time;
  price.dim = Dimension::kMoneyRate;
  price.min = 0;
  price.max = std::numeric_limits<double>::infinity();
  EXPECT_EQ(price.RuleText().rfind("price per hour with a unit (e.g. '2.5 USD/h')", 0), 0u)
      << price.RuleText();
}

TEST(Schema, OutOfRangeIsReported) {
  Toy t;
  Diagnostics d = ParseToy("layers: 0\nbw: 0 GB/s\n", t);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.items()[0].ToString(),
            "toy.yaml:1:9: error: toy.layers: value out of range: must be in [1, 1000] (got '0')");
  EXPECT_EQ(d.items()[1].ToString(),
            "toy.yaml:2:5: error: toy.bw: value out of range: must be in (0 B/s, 1 PB/s] (got "
            "'0 GB/s')");
}

TEST(Schema, MisspeltEnumAndMissingRequired) {
  Toy t;
  Diagnostics d = ParseToy("mode: bb\n", t);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.items()[0].ToString(),
            "toy.yaml:1:7: error: toy.mode: one of: a, b (got 'bb'); did you mean 'b'?");
  EXPECT_EQ(d.items()[1].ToString(),
            "toy.yaml:1:1: error: toy.layers: required key is missing (integer in [1, 1000])");
}

TEST(Schema, SetTextAppliesOverridesWithTheSameRules) {
  Toy t;
  Diagnostics d;
  const Schema<Toy> s = ToySchema();
  EXPECT_TRUE(s.SetText(t, "bw", "400 Gb/s", {"--set", 0, 0}, "toy.bw", d));
  EXPECT_DOUBLE_EQ(t.bw, 50e9);
  EXPECT_EQ(s.GetText(t, "bw"), "50 GB/s");
  EXPECT_FALSE(s.SetText(t, "bww", "1 GB/s", {"--set", 0, 0}, "toy.bww", d));
  EXPECT_EQ(d.items()[0].ToString(), "--set: error: toy.bww: unknown key in toy; did you mean 'bw'?");
}

TEST(Yaml, SyntaxErrorsBecomeDiagnosticsNotExceptions) {
  Diagnostics d;
  EXPECT_FALSE(ParseYamlText("a: [1, 2\n", "bad.yaml", d).has_value());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].where.file, "bad.yaml");
  EXPECT_GT(d.items()[0].where.line, 0);
  EXPECT_NE(d.items()[0].message.find("YAML syntax error"), std::string::npos);
  Diagnostics d2;
  EXPECT_FALSE(LoadYamlFile("/nonexistent/x.yaml", d2).has_value());
  EXPECT_EQ(d2.items()[0].ToString(), "/nonexistent/x.yaml: error: cannot open file");
}

// The table family (format.h): one unit family per dimension, 4 significant
// digits, never an exponent — the values the issue saw printed as
// "1.265e+04 MiB" and "6.497e+05 tokens/s".
TEST(Format, OneFamilyEngineeringPrefixesNoExponent) {
  EXPECT_EQ(FormatBytes(12650.0 * (1 << 20)), "13.26 GB");  // 12650 MiB = 13.264e9 B
  EXPECT_EQ(FormatBytes(80.0 * (1ull << 30)), "85.9 GB");    // 80 GiB, decimal like its neighbours
  EXPECT_EQ(FormatBytes(5.6e9), "5.6 GB");
  EXPECT_EQ(FormatBytes(999.96e3), "1 MB");                  // rounding reaches the next prefix
  EXPECT_EQ(FormatRate(6.497e5, "tokens"), "649.7 k tokens/s");
  EXPECT_EQ(FormatRate(3.5, "requests"), "3.5 requests/s");
  EXPECT_EQ(FormatCount(9999), "9999");
  EXPECT_EQ(FormatCount(1.55e6, "candidates"), "1.55 M candidates");
  EXPECT_EQ(FormatCount(300e9, "tokens"), "300 G tokens");
  EXPECT_EQ(FormatTime(1.5e-6), "1.5 us");
  EXPECT_EQ(FormatTime(0), "0 s");
  EXPECT_EQ(FormatTime(17.546), "17.55 s");
  EXPECT_EQ(FormatTime(3 * 86400.0), "3 d");
  EXPECT_EQ(FormatTime(86400.0 * 12345), "12345 d");         // plain digits, not 1.234e+04
  EXPECT_EQ(FormatFlopRate(989.4e12), "989.4 TFLOP/s");
  EXPECT_EQ(FormatEnergy(4.376e6), "1.216 kWh");             // 4.376 MJ / 3.6 MJ per kWh
  EXPECT_EQ(FormatEnergy(250), "250 J");
  EXPECT_EQ(FormatMoney(2.5e6), "2.5 MUSD");
  EXPECT_EQ(FormatPercent(0.45234), "45.2 %");
  EXPECT_EQ(FormatGrouped(57347040), "57,347,040");
  EXPECT_EQ(FormatPlain(0.0001234), "0.0001234");
  EXPECT_EQ(FormatPlain(123456.7), "123457");
}

// POSIX shell quoting (XCU 2.2.2): inside single quotes nothing is special,
// and a quote itself is closed, escaped, reopened: ' -> '\''.
TEST(Format, ShellQuoteKeepsSafeWordsAndQuotesTheRest) {
  EXPECT_EQ(ShellQuote("--gpus"), "--gpus");
  EXPECT_EQ(ShellQuote("training.pp=8"), "training.pp=8");
  EXPECT_EQ(ShellQuote("system.device.memory_capacity=141 GB"), "'system.device.memory_capacity=141 GB'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(ShellQuote(""), "''");
}

}  // namespace
}  // namespace orrery::base
