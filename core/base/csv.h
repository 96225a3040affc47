#pragma once
// Minimal RFC-4180-style CSV reader (scaling-law runs, law catalogue, measured
// runs, request traces): comma separated, optional double quotes ("" escapes a quote),
// CRLF or LF line ends, blank lines skipped, '#' lines at the top skipped as
// comments. Every row remembers its 1-based line number so errors can name it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.h"

namespace orrery::base {

struct CsvRow {
  int line = 0;                     // 1-based line in the source text
  std::vector<std::string> cells;   // same length as CsvTable::header
};

struct CsvTable {
  std::string source;               // file name (or label) for messages
  int header_line = 0;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;

  // Index of a column by exact name, or -1.
  int ColumnIndex(std::string_view name) const;
};

// Parses CSV text. Errors (unterminated quote, a row with the wrong number of
// cells, empty input) name `source` and the line. A UTF-8 byte-order mark at
// the start is skipped.
Result<CsvTable> ParseCsv(std::string_view text, const std::string& source);

// The largest CSV file ReadCsvFile accepts. The measured-run tables are a few
// hundred kilobytes; the cap keeps `/dev/zero` or a wrong file from growing
// without bound.
inline constexpr size_t kMaxCsvBytes = size_t{64} << 20;

// Reads and parses a file; a missing or unreadable file, a directory or
// device, or one larger than kMaxCsvBytes is an error naming it.
Result<CsvTable> ReadCsvFile(const std::string& path);

// Typed, range-checked cells. Each returns std::nullopt when the column is
// absent or the cell empty (the caller decides what a missing value means),
// the value when it parses and lies in [min, max], and otherwise an Error that
// names the place and the rule: "file:line: column 'tp': got '0.5': must be
// an integer in [1, 1000000]".
Result<std::optional<double>> CsvNumber(const CsvTable& table, const CsvRow& row,
                                        std::string_view column, double min, double max);
Result<std::optional<int64_t>> CsvInteger(const CsvTable& table, const CsvRow& row,
                                          std::string_view column, int64_t min, int64_t max);

// Parses a whole cell as a finite double ("1e24", " 3.5 "). Returns false on
// anything else (empty, trailing junk, nan, inf).
bool ParseDouble(std::string_view cell, double* value);

}  // namespace orrery::base
