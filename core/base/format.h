#pragma once
// Numbers for people: one unit family per kind of quantity, engineering
// prefixes, 4 significant digits, never an exponent ("6.497e+05"). Tables of
// every verb use these; JSON and CSV carry plain SI numbers instead
// (docs/output-schema.md).
//
// The family, one per dimension:
//   bytes       B, kB, MB, GB, TB, PB — decimal only, also for memory that is
//               a power of two (80 GiB prints as 85.9 GB), so that figures
//               beside each other compare at a glance
//   bandwidth   B/s, kB/s, MB/s, GB/s, TB/s (decimal)
//   time        ns, us, ms, s; h from 2 h; d from 2 d
//   FLOP        GFLOP, TFLOP, PFLOP, EFLOP, ZFLOP; FLOP/s likewise
//   energy      J, kJ, MJ below 1 kWh; kWh, MWh, GWh above (what a meter reads)
//   power       W, kW, MW, GW
//   money       USD, kUSD, MUSD
//   rates and counts of things (tokens/s, requests/s, candidates):
//               plain below 10 000, then k, M, G, T ("649.7 k tokens/s")
//   fractions   percent with one decimal ("45.2 %")

#include <cstdint>
#include <string>
#include <string_view>

namespace orrery::base {

// `v` with `digits` significant digits in fixed notation, trailing zeros
// dropped: 0.0001234 -> "0.0001234", 123456 -> "123456", 1.5 -> "1.5".
std::string FormatPlain(double v, int digits = 4);

std::string FormatBytes(double bytes);
std::string FormatBandwidth(double bytes_per_s);
std::string FormatTime(double seconds);
std::string FormatFlops(double flop);
std::string FormatFlopRate(double flop_per_s);
std::string FormatEnergy(double joules);
std::string FormatPower(double watts);
std::string FormatMoney(double usd);

// A count with k/M/G/T from 10 000 on, then `unit` after a space when given:
// FormatCount(1.55e6, "candidates") -> "1.55 M candidates".
std::string FormatCount(double n, std::string_view unit = {});
// A rate of things per second: FormatRate(6.497e5, "tokens") -> "649.7 k tokens/s".
std::string FormatRate(double per_s, std::string_view unit);
// A fraction as percent with `decimals` decimals: 0.4523 -> "45.2 %".
std::string FormatPercent(double fraction, int decimals = 1);
// An integer with thousands separators: 57347040 -> "57,347,040".
std::string FormatGrouped(uint64_t n);
// A word as a POSIX shell reads it back: unchanged when it holds only safe
// characters, else in single quotes with each ' written '\'' (so a command
// line printed in a report or a profile can be pasted into a shell):
// ShellQuote("a b") -> "'a b'", ShellQuote("it's") -> "'it'\''s'".
std::string ShellQuote(const std::string& word);

}  // namespace orrery::base
