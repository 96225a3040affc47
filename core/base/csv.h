#pragma once
// Minimal RFC-4180-style CSV reader (scaling-law runs, law catalogue, measured
// runs, request traces): comma separated, optional double quotes ("" escapes a quote),
// CRLF or LF line ends, blank lines skipped, '#' lines at the top skipped as
// comments. Every row remembers its 1-based line number so errors can name it.

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
// cells, empty input) name `source` and the line.
Result<CsvTable> ParseCsv(std::string_view text, const std::string& source);

// Reads and parses a file; a missing or unreadable file is an error naming it.
Result<CsvTable> ReadCsvFile(const std::string& path);

// Parses a whole cell as a finite double ("1e24", " 3.5 "). Returns false on
// anything else (empty, trailing junk, nan, inf).
bool ParseDouble(std::string_view cell, double* value);

}  // namespace orrery::base
