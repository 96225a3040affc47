#include "core/base/quantity.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/base/diagnostics.h"

namespace orrery::base {
namespace {

struct Unit {
  const char* symbol;
  double to_si;
};

// Tables of accepted spellings. Order matters only for printing: the first
// entry of each scale is the one FormatQuantity uses.
constexpr Unit kByteUnits[] = {
    {"B", 1},          {"KB", 1e3},       {"MB", 1e6},       {"GB", 1e9},
    {"TB", 1e12},      {"PB", 1e15},      {"KiB", 0x1p10},   {"MiB", 0x1p20},
    {"GiB", 0x1p30},   {"TiB", 0x1p40},   {"PiB", 0x1p50},   {"kB", 1e3},
};
constexpr Unit kBandwidthUnits[] = {
    {"B/s", 1},           {"KB/s", 1e3},          {"MB/s", 1e6},          {"GB/s", 1e9},
    {"TB/s", 1e12},       {"PB/s", 1e15},         {"KiB/s", 0x1p10},      {"MiB/s", 0x1p20},
    {"GiB/s", 0x1p30},    {"TiB/s", 0x1p40},      {"b/s", 1.0 / 8},       {"Kb/s", 1e3 / 8},
    {"Mb/s", 1e6 / 8},    {"Gb/s", 1e9 / 8},      {"Tb/s", 1e12 / 8},     {"bit/s", 1.0 / 8},
    {"Kbit/s", 1e3 / 8},  {"Mbit/s", 1e6 / 8},    {"Gbit/s", 1e9 / 8},    {"Tbit/s", 1e12 / 8},
    {"Gbps", 1e9 / 8},    {"Mbps", 1e6 / 8},      {"Tbps", 1e12 / 8},
};
constexpr Unit kFlopUnits[] = {
    {"FLOP", 1},     {"KFLOP", 1e3},  {"MFLOP", 1e6},  {"GFLOP", 1e9},
    {"TFLOP", 1e12}, {"PFLOP", 1e15}, {"EFLOP", 1e18}, {"ZFLOP", 1e21},
};
constexpr Unit kFlopRateUnits[] = {
    {"FLOP/s", 1},     {"KFLOP/s", 1e3},  {"MFLOP/s", 1e6},  {"GFLOP/s", 1e9},
    {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}, {"EFLOP/s", 1e18},
};
constexpr Unit kTimeUnits[] = {
    {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3},  {"s", 1},
    {"min", 60},  {"h", 3600},  {"d", 86400}, {"\xC2\xB5s", 1e-6},  // "µs"
};
constexpr Unit kPowerUnits[] = {{"W", 1}, {"kW", 1e3}, {"MW", 1e6}, {"GW", 1e9}};
constexpr Unit kEnergyUnits[] = {
    {"J", 1},        {"kJ", 1e3},      {"MJ", 1e6},      {"GJ", 1e9},
    {"Wh", 3600},    {"kWh", 3.6e6},   {"MWh", 3.6e9},   {"GWh", 3.6e12},
};
constexpr Unit kMoneyUnits[] = {{"USD", 1}, {"kUSD", 1e3}, {"MUSD", 1e6}};
constexpr Unit kMoneyRateUnits[] = {{"USD/h", 1.0 / 3600}};

struct Table {
  const Unit* begin;
  const Unit* end;
};

Table TableFor(Dimension d) {
  switch (d) {
    case Dimension::kBytes: return {std::begin(kByteUnits), std::end(kByteUnits)};
    case Dimension::kBandwidth: return {std::begin(kBandwidthUnits), std::end(kBandwidthUnits)};
    case Dimension::kFlops: return {std::begin(kFlopUnits), std::end(kFlopUnits)};
    case Dimension::kFlopRate: return {std::begin(kFlopRateUnits), std::end(kFlopRateUnits)};
    case Dimension::kTime: return {std::begin(kTimeUnits), std::end(kTimeUnits)};
    case Dimension::kPower: return {std::begin(kPowerUnits), std::end(kPowerUnits)};
    case Dimension::kEnergy: return {std::begin(kEnergyUnits), std::end(kEnergyUnits)};
    case Dimension::kMoney: return {std::begin(kMoneyUnits), std::end(kMoneyUnits)};
    case Dimension::kMoneyRate: return {std::begin(kMoneyRateUnits), std::end(kMoneyRateUnits)};
    case Dimension::kDimensionless: break;
  }
  return {nullptr, nullptr};
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string_view DimensionName(Dimension d) {
  switch (d) {
    case Dimension::kDimensionless: return "number";
    case Dimension::kBytes: return "bytes";
    case Dimension::kBandwidth: return "bandwidth";
    case Dimension::kFlops: return "FLOP count";
    case Dimension::kFlopRate: return "compute rate";
    case Dimension::kTime: return "time";
    case Dimension::kPower: return "power";
    case Dimension::kEnergy: return "energy";
    case Dimension::kMoney: return "money";
    case Dimension::kMoneyRate: return "price per hour";
  }
  return "?";
}

std::string_view SiUnit(Dimension d) {
  switch (d) {
    case Dimension::kDimensionless: return "";
    case Dimension::kBytes: return "B";
    case Dimension::kBandwidth: return "B/s";
    case Dimension::kFlops: return "FLOP";
    case Dimension::kFlopRate: return "FLOP/s";
    case Dimension::kTime: return "s";
    case Dimension::kPower: return "W";
    case Dimension::kEnergy: return "J";
    case Dimension::kMoney: return "USD";
    case Dimension::kMoneyRate: return "USD/s";
  }
  return "";
}

std::vector<std::string> UnitsFor(Dimension d) {
  std::vector<std::string> out;
  const Table t = TableFor(d);
  for (const Unit* u = t.begin; u != t.end; ++u) out.emplace_back(u->symbol);
  return out;
}

QuantityParse ParseQuantity(std::string_view text, Dimension dim) {
  QuantityParse r;
  const std::string_view s = Trim(text);
  if (s.empty()) {
    r.error = "expected a " + std::string(DimensionName(dim)) + ", got an empty value";
    return r;
  }
  double number = 0;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(first, last, number);
  if (ec != std::errc() || ptr == first) {
    r.error = "expected a number" +
              (dim == Dimension::kDimensionless ? std::string()
                                                : " followed by a unit (" +
                                                      std::string(DimensionName(dim)) + ")");
    return r;
  }
  if (!std::isfinite(number)) {
    r.error = "value must be a finite number";
    return r;
  }
  const std::string_view unit = Trim(std::string_view(ptr, static_cast<size_t>(last - ptr)));
  if (dim == Dimension::kDimensionless) {
    if (!unit.empty()) {
      r.error = "expected a plain number without a unit";
      return r;
    }
    r.value = number;
    return r;
  }
  if (unit.empty()) {
    r.error = "a unit is required for a " + std::string(DimensionName(dim)) + " (e.g. '" +
              FormatQuantity(dim == Dimension::kBandwidth ? 1e11 : 1e9, dim) + "')";
    return r;
  }
  const Table t = TableFor(dim);
  for (const Unit* u = t.begin; u != t.end; ++u) {
    if (unit == u->symbol) {
      r.value = number * u->to_si;
      if (!std::isfinite(*r.value)) {
        r.value.reset();
        r.error = "value overflows";
      }
      return r;
    }
  }
  r.error = "unknown unit '" + std::string(unit) + "' for a " + std::string(DimensionName(dim));
  r.hint = DidYouMean(unit, UnitsFor(dim));
  if (r.hint.empty()) {
    std::string list;
    for (const auto& u : UnitsFor(dim)) list += (list.empty() ? "" : ", ") + u;
    r.hint = "accepted units: " + list;
  }
  return r;
}

std::string FormatNumber(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string FormatQuantity(double v, Dimension dim) {
  if (dim == Dimension::kDimensionless) return FormatNumber(v);
  if (!std::isfinite(v)) return FormatNumber(v) + " " + std::string(SiUnit(dim));
  const double a = std::fabs(v);
  struct Scale {
    double factor;
    const char* symbol;
  };
  auto pick = [&](std::initializer_list<Scale> scales) {
    const Scale* best = scales.begin();
    for (const Scale& sc : scales)
      if (a >= sc.factor) best = &sc;
    return FormatNumber(v / best->factor) + " " + best->symbol;
  };
  switch (dim) {
    case Dimension::kBytes: {
      for (Scale sc : {Scale{0x1p40, "TiB"}, Scale{0x1p30, "GiB"}, Scale{0x1p20, "MiB"}}) {
        // An exact binary size reads best in its own unit (80 GiB), but
        // only while it prints without an exponent (64800 MiB would print
        // as 6.48e+04 MiB: a decimal unit reads better then).
        if (a >= sc.factor && a < sc.factor * 1e4 && std::fmod(a, sc.factor) == 0) return pick({sc});
      }
      return pick({{1, "B"}, {1e3, "KB"}, {1e6, "MB"}, {1e9, "GB"}, {1e12, "TB"}, {1e15, "PB"}});
    }
    case Dimension::kBandwidth:
      return pick({{1, "B/s"}, {1e3, "KB/s"}, {1e6, "MB/s"}, {1e9, "GB/s"}, {1e12, "TB/s"}, {1e15, "PB/s"}});
    case Dimension::kFlops:
      return pick({{1, "FLOP"}, {1e9, "GFLOP"}, {1e12, "TFLOP"}, {1e15, "PFLOP"}, {1e18, "EFLOP"},
                   {1e21, "ZFLOP"}});
    case Dimension::kFlopRate:
      return pick({{1, "FLOP/s"}, {1e9, "GFLOP/s"}, {1e12, "TFLOP/s"}, {1e15, "PFLOP/s"},
                   {1e18, "EFLOP/s"}});
    case Dimension::kTime:
      if (a == 0) return "0 s";  // no time at all, not "0 ns"
      if (a >= 86400 * 2) return FormatNumber(v / 86400) + " d";
      if (a >= 3600 * 2) return FormatNumber(v / 3600) + " h";
      return pick({{1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1, "s"}});
    case Dimension::kPower: return pick({{1, "W"}, {1e3, "kW"}, {1e6, "MW"}, {1e9, "GW"}});
    case Dimension::kEnergy: return pick({{1, "J"}, {3.6e3, "Wh"}, {3.6e6, "kWh"}, {3.6e9, "MWh"}, {3.6e12, "GWh"}});
    case Dimension::kMoney: return pick({{1, "USD"}, {1e3, "kUSD"}, {1e6, "MUSD"}});
    case Dimension::kMoneyRate: return FormatNumber(v * 3600) + " USD/h";
    case Dimension::kDimensionless: break;
  }
  return FormatNumber(v);
}

}  // namespace orrery::base
