#include "core/report/report_format.h"

#include <cmath>
#include <cstdio>

namespace orrery::report {

std::string FormatSig(double v, int digits) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : v < 0 ? "-inf" : "n/a";
  if (v == 0) return "0";
  const double a = std::fabs(v);
  char buf[64];
  if (a < 1e-3 || a >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
  }
  const int magnitude = static_cast<int>(std::floor(std::log10(a)));
  int decimals = digits - 1 - magnitude;
  if (decimals < 0) {
    const double scale = std::pow(10.0, -decimals);
    std::snprintf(buf, sizeof buf, "%.0f", std::round(v / scale) * scale);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string FormatCount(int64_t n) {
  std::string s = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return n < 0 ? "-" + s : s;
}

std::string FormatMoney(double usd, int digits) {
  if (!std::isfinite(usd)) return "n/a";
  const double a = std::fabs(usd);
  if (a >= 1e9) return "$" + FormatSig(usd / 1e9, digits) + " B";
  if (a >= 1e6) return "$" + FormatSig(usd / 1e6, digits) + " M";
  if (a >= 1e3) {
    std::string k = FormatSig(usd / 1e3, digits);
    if (k.find('.') == std::string::npos && k.size() < static_cast<size_t>(digits)) k += ".0";
    return "$" + k + " k";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, a < 10 ? "$%.2f" : "$%.0f", usd);
  return buf;
}

std::string FormatGpuHours(double hours) {
  if (hours >= 1e6) return FormatSig(hours / 1e6, 2) + " M";
  return FormatCount(static_cast<int64_t>(std::llround(hours)));
}

std::string FormatDays(double days) {
  if (!std::isfinite(days)) return "n/a";
  if (days < 1) return FormatSig(days * 24, 2) + " hours";
  const std::string n = FormatSig(days, days < 10 ? 2 : days < 1000 ? 3 : 4);
  return n + (n == "1" ? " day" : " days");
}

namespace {
std::string Scaled(double v, const char* unit) {
  static const char* kPrefix[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (std::fabs(v) >= 999.5 && i < 6) {
    v /= 1000;
    ++i;
  }
  return FormatSig(v, 3) + " " + kPrefix[i] + unit;
}
}  // namespace

std::string FormatBandwidth(double bytes_per_s) { return Scaled(bytes_per_s, "B/s"); }
std::string FormatBytes(double bytes) { return Scaled(bytes, "B"); }
std::string FormatFlops(double flops_per_s) { return Scaled(flops_per_s, "FLOP/s"); }

std::string FormatFlopCount(double flops) {
  if (!(flops > 0) || !std::isfinite(flops)) return FormatSig(flops, 3) + " FLOP";
  const int e = static_cast<int>(std::floor(std::log10(flops)));
  return FormatSig(flops / std::pow(10.0, e), 3) + " x 10^" + std::to_string(e) + " FLOP";
}

std::string FormatTokens(double tokens) {
  if (tokens >= 1e12) return FormatSig(tokens / 1e12, 3) + " T tokens";
  if (tokens >= 1e9) return FormatSig(tokens / 1e9, 3) + " B tokens";
  if (tokens >= 1e6) return FormatSig(tokens / 1e6, 3) + " M tokens";
  return FormatSig(tokens, 3) + " tokens";
}

std::string FormatEnergyMwh(double mwh) {
  if (mwh >= 1000) return FormatSig(mwh / 1000, 2) + " GWh";
  if (mwh >= 1) return FormatSig(mwh, 2) + " MWh";
  return FormatSig(mwh * 1000, 2) + " kWh";
}

std::string ShortDevice(const std::string& name) {
  std::string s = name;
  for (const char* vendor : {"NVIDIA ", "AMD ", "Google "})
    if (s.rfind(vendor, 0) == 0) s = s.substr(std::string(vendor).size());
  const size_t space = s.find(' ');
  return space == std::string::npos ? s : s.substr(0, space);
}

std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace orrery::report
