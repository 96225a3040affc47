#pragma once
// Numbers as a report shows them: units, thousands separators and a
// sensible number of significant digits ("34 days", "3.3 M GPU-hours",
// "9.1 GWh", "$8.3 M", "80 GB", "3.35 TB/s").

#include <cstdint>
#include <string>

namespace orrery::report {

// `digits` significant digits, no exponent for 1e-3 <= |v| < 1e9, trailing
// zeros dropped: FormatSig(34.04, 2) = "34", FormatSig(0.4567, 2) = "0.46".
std::string FormatSig(double v, int digits);
// 16384 -> "16,384".
std::string FormatCount(int64_t n);
// USD: "$8.3 M", "$420 k", "$2.50" (below $10, cents shown).
std::string FormatMoney(double usd, int digits);
// GPU-hours: "3.3 M" from a million up, else "4,247".
std::string FormatGpuHours(double hours);
// "34 days", "1.5 days", "9.6 hours" below one day.
std::string FormatDays(double days);
// Decimal units: "3.35 TB/s", "400 GB/s", "50 Gb/s" is never used (bytes only).
std::string FormatBandwidth(double bytes_per_s);
// Decimal units: "80 GB", "61.3 GB".
std::string FormatBytes(double bytes);
// "989 TFLOP/s".
std::string FormatFlops(double flops_per_s);
// "1.2e24 FLOP" style with a plain mantissa: "1.2 x 10^24 FLOP".
std::string FormatFlopCount(double flops);
// "15 T tokens", "1.4 T tokens", "300 B tokens".
std::string FormatTokens(double tokens);
// "9.1 GWh", "540 MWh", "12 MWh".
std::string FormatEnergyMwh(double mwh);
// "NVIDIA H100 SXM5 80GB" -> "H100"; names without a vendor prefix kept.
std::string ShortDevice(const std::string& device_name);
// Escapes &, <, >, " for HTML text and attributes.
std::string HtmlEscape(const std::string& s);

}  // namespace orrery::report
