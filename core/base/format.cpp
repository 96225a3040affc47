#include "core/base/format.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>

namespace orrery::base {

namespace {

struct Scale {
  double factor;
  const char* symbol;
};

// The largest scale not above |v| (the smallest when |v| is below all).
std::string Pick(double v, std::initializer_list<Scale> scales) {
  if (!std::isfinite(v)) return FormatPlain(v) + " " + scales.begin()->symbol;
  const double a = std::fabs(v);
  const Scale* best = scales.begin();
  for (const Scale& s : scales)
    if (a >= s.factor) best = &s;
  // Rounding to 4 digits may reach the next scale (999.96 kB -> 1000 kB).
  std::string text = FormatPlain(v / best->factor);
  if (best + 1 != scales.end() && std::fabs(std::stod(text)) >= (best + 1)->factor / best->factor)
    return FormatPlain(v / (best + 1)->factor) + " " + (best + 1)->symbol;
  return text + " " + best->symbol;
}

}  // namespace

std::string FormatPlain(double v, int digits) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  if (v == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  int decimals = digits - 1 - magnitude;
  if (decimals < 0) decimals = 0;
  if (decimals > 15) decimals = 15;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string FormatBytes(double b) {
  return Pick(b, {{1, "B"}, {1e3, "kB"}, {1e6, "MB"}, {1e9, "GB"}, {1e12, "TB"}, {1e15, "PB"}});
}

std::string FormatBandwidth(double b) {
  return Pick(b, {{1, "B/s"}, {1e3, "kB/s"}, {1e6, "MB/s"}, {1e9, "GB/s"}, {1e12, "TB/s"}});
}

std::string FormatTime(double s) {
  const double a = std::fabs(s);
  if (a == 0) return "0 s";  // no time at all, not "0 ns"
  if (a >= 2 * 86400) return FormatPlain(s / 86400) + " d";
  if (a >= 2 * 3600) return FormatPlain(s / 3600) + " h";
  return Pick(s, {{1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1, "s"}});
}

std::string FormatFlops(double f) {
  return Pick(f, {{1, "FLOP"}, {1e9, "GFLOP"}, {1e12, "TFLOP"}, {1e15, "PFLOP"}, {1e18, "EFLOP"},
                  {1e21, "ZFLOP"}});
}

std::string FormatFlopRate(double f) {
  return Pick(f, {{1, "FLOP/s"}, {1e9, "GFLOP/s"}, {1e12, "TFLOP/s"}, {1e15, "PFLOP/s"},
                  {1e18, "EFLOP/s"}});
}

std::string FormatEnergy(double j) {
  if (std::fabs(j) < 3.6e6) return Pick(j, {{1, "J"}, {1e3, "kJ"}, {1e6, "MJ"}});
  return Pick(j, {{3.6e6, "kWh"}, {3.6e9, "MWh"}, {3.6e12, "GWh"}});
}

std::string FormatPower(double w) {
  return Pick(w, {{1, "W"}, {1e3, "kW"}, {1e6, "MW"}, {1e9, "GW"}});
}

std::string FormatMoney(double usd) {
  return Pick(usd, {{1, "USD"}, {1e3, "kUSD"}, {1e6, "MUSD"}});
}

std::string FormatCount(double n, std::string_view unit) {
  std::string text = std::fabs(n) < 1e4
                         ? FormatPlain(n)
                         : Pick(n, {{1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}});
  if (!unit.empty()) text += " " + std::string(unit);
  return text;
}

std::string FormatRate(double per_s, std::string_view unit) {
  return FormatCount(per_s, std::string(unit) + "/s");
}

std::string FormatPercent(double fraction, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f %%", decimals, 100 * fraction);
  return buf;
}

std::string FormatGrouped(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::string ShellQuote(const std::string& word) {
  constexpr std::string_view kSafe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%";
  if (!word.empty() && word.find_first_not_of(kSafe) == std::string::npos) return word;
  std::string q = "'";
  for (const char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace orrery::base
