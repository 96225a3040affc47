#pragma once
// Physical quantities with units. Units are converted once, here, at the
// parser; everything inside Orrery is SI: bytes, bytes/s, FLOP, FLOP/s,
// seconds, watts, joules, US dollars.
//
// Decimal and binary prefixes are never conflated: GB is 10^9 bytes, GiB is
// 2^30 bytes. Bit rates (Gb/s, Gbit/s) are converted to bytes/s (divide by 8).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orrery::base {

enum class Dimension {
  kDimensionless,
  kBytes,        // B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB
  kBandwidth,    // B/s .. TB/s, KiB/s .. TiB/s, b/s .. Tb/s, Gbit/s, ...
  kFlops,        // FLOP, GFLOP, TFLOP, PFLOP, EFLOP, ZFLOP (a count of operations)
  kFlopRate,     // FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s, EFLOP/s
  kTime,         // ns, us, ms, s, min, h, d
  kPower,        // W, kW, MW
  kEnergy,       // J, kJ, MJ, Wh, kWh, MWh, GWh
  kMoney,        // USD, kUSD, MUSD
  kMoneyRate,    // USD/h (prices per hour of use)
};

// Name of a dimension for messages and docs ("bytes", "bandwidth", ...).
std::string_view DimensionName(Dimension d);

// The SI unit the value is stored in ("B", "B/s", "FLOP", "s", ...).
std::string_view SiUnit(Dimension d);

// Every unit spelling accepted for a dimension, for help text and "did you mean".
std::vector<std::string> UnitsFor(Dimension d);

struct QuantityParse {
  std::optional<double> value;  // SI value on success
  std::string error;            // the rule broken, on failure
  std::string hint;             // "did you mean 'GB/s'?" when a unit was misspelt
};

// Parses "80 GiB", "3.35 TB/s", "1.5us", "400 Gb/s". A bare number is an
// error for every dimension except kDimensionless. NaN and infinities are
// rejected. The space between number and unit is optional.
QuantityParse ParseQuantity(std::string_view text, Dimension dim);

// Prints an SI value with a readable prefix and 4 significant digits:
// 8.59e10 B -> "80 GiB" (binary prefixes are used only when the value is an
// exact multiple of 2^30, 2^40, 2^20 or 2^10; otherwise decimal), 3.35e12 B/s
// -> "3.35 TB/s", 9.894e14 FLOP/s -> "989.4 TFLOP/s", 1.5e-6 s -> "1.5 us".
std::string FormatQuantity(double value_si, Dimension dim);

// Plain number with `digits` significant digits, no trailing zeros.
std::string FormatNumber(double v, int digits = 4);

}  // namespace orrery::base
