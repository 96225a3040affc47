#include "core/base/csv.h"

#include "core/base/text_check.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace orrery::base {

int CsvTable::ColumnIndex(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Splits one physical line into cells (RFC 4180: a quoted cell ends at a
// lone double quote, which a comma or the end of the line must follow; a
// quote inside it is written twice; an unquoted cell holds no quote).
// Returns an empty string, or what is wrong and `*column` (1-based) where.
std::string SplitLine(std::string_view line, std::vector<std::string>* cells, size_t* column) {
  cells->clear();
  std::string cell;
  bool quoted = false;
  bool was_quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cell.push_back('"');
          ++i;
        } else {
          quoted = false;
          // After the closing quote only spaces, then a comma or the end.
          size_t j = i + 1;
          while (j < line.size() && (line[j] == ' ' || line[j] == '\t')) ++j;
          if (j < line.size() && line[j] != ',') {
            *column = i + 1;
            return "a double quote inside a quoted cell must be written twice (\"\"); this one ends "
                   "the cell but is followed by text";
          }
          i = j - 1;
        }
      } else {
        cell.push_back(c);
      }
    } else if (c == '"') {
      if (!Trim(cell).empty()) {
        *column = i + 1;
        return "a double quote in an unquoted cell; quote the whole cell and write the quote twice "
               "(\"\")";
      }
      cell.clear();
      quoted = true;
      was_quoted = true;
    } else if (c == ',') {
      cells->push_back(was_quoted ? cell : Trim(cell));
      cell.clear();
      was_quoted = false;
    } else {
      cell.push_back(c);
    }
  }
  if (quoted) {
    *column = 0;
    return "unterminated double quote";
  }
  cells->push_back(was_quoted ? cell : Trim(cell));
  return {};
}

}  // namespace

Result<CsvTable> ParseCsv(std::string_view text, const std::string& source) {
  CsvTable table;
  table.source = source;
  if (HasUtf8Bom(text)) text.remove_prefix(3);
  if (const size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos) {
    const TextPosition p = PositionOf(text, bad);
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[bad]));
    return Error{source + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) +
                 ": not UTF-8 text (invalid byte " + hex + "); save the file as UTF-8"};
  }
  int line_no = 0;
  size_t pos = 0;
  bool have_header = false;
  std::vector<std::string> cells;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Trim(line).empty()) {
      if (end == text.size()) break;
      continue;
    }
    if (!have_header && Trim(line).front() == '#') continue;
    size_t column = 0;
    if (const std::string bad = SplitLine(line, &cells, &column); !bad.empty()) {
      return Error{source + ":" + std::to_string(line_no) + (column > 0 ? ":" + std::to_string(column) : "") +
                   ": " + bad};
    }
    if (!have_header) {
      table.header = cells;
      table.header_line = line_no;
      have_header = true;
    } else {
      if (cells.size() != table.header.size()) {
        return Error{source + ":" + std::to_string(line_no) + ": row has " +
                     std::to_string(cells.size()) + " cells but the header (line " +
                     std::to_string(table.header_line) + ") has " +
                     std::to_string(table.header.size())};
      }
      table.rows.push_back(CsvRow{line_no, cells});
    }
    if (end == text.size()) break;
  }
  if (!have_header) return Error{source + ": empty CSV (no header line)"};
  return table;
}

Result<CsvTable> ReadCsvFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Error{path + ": cannot open file (missing or unreadable)"};
  if (S_ISDIR(st.st_mode)) return Error{path + ": is a directory, not a CSV file"};
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    return Error{path + ": not a regular file (a device or socket); give a CSV file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open file (missing or unreadable)"};
  // Read in chunks up to the cap: a pipe has no size to check in advance.
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxCsvBytes)
      return Error{path + ": larger than the " + std::to_string(kMaxCsvBytes >> 20) +
                   " MiB a CSV file may have"};
  }
  if (in.bad()) return Error{path + ": read error"};
  return ParseCsv(text, path);
}

namespace {

std::string CellError(const CsvTable& table, const CsvRow& row, std::string_view column,
                      std::string_view cell, const std::string& rule) {
  return table.source + ":" + std::to_string(row.line) + ": column '" + std::string(column) +
         "': got '" + std::string(cell) + "': " + rule;
}

std::string Number(double v) {
  std::ostringstream ss;
  ss << v;
  return ss.str();
}

// The cell of `column` in `row`, or nullopt when the column is absent.
std::optional<std::string> CellOf(const CsvTable& table, const CsvRow& row,
                                  std::string_view column) {
  const int i = table.ColumnIndex(column);
  if (i < 0 || static_cast<size_t>(i) >= row.cells.size()) return std::nullopt;
  return Trim(row.cells[static_cast<size_t>(i)]);
}

}  // namespace

Result<std::optional<double>> CsvNumber(const CsvTable& table, const CsvRow& row,
                                        std::string_view column, double min, double max) {
  const auto cell = CellOf(table, row, column);
  if (!cell || cell->empty()) return std::optional<double>();
  const std::string rule = "must be a number in [" + Number(min) + ", " + Number(max) + "]";
  double v = 0;
  if (!ParseDouble(*cell, &v) || v < min || v > max)
    return Error{CellError(table, row, column, *cell, rule)};
  return std::optional<double>(v);
}

Result<std::optional<int64_t>> CsvInteger(const CsvTable& table, const CsvRow& row,
                                          std::string_view column, int64_t min, int64_t max) {
  const auto cell = CellOf(table, row, column);
  if (!cell || cell->empty()) return std::optional<int64_t>();
  const std::string rule =
      "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  // Whole numbers may be written as 1e3 or 8.0; 0.5 is not an integer.
  double v = 0;
  if (!ParseDouble(*cell, &v) || v != std::floor(v) || v < static_cast<double>(min) ||
      v > static_cast<double>(max))
    return Error{CellError(table, row, column, *cell, rule)};
  return std::optional<int64_t>(static_cast<int64_t>(v));
}

bool ParseDouble(std::string_view cell, double* value) {
  std::string s = Trim(cell);
  if (s.empty()) return false;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (*first == '+') ++first;
  double v = 0.0;
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || ptr != last || !std::isfinite(v)) return false;
  *value = v;
  return true;
}

}  // namespace orrery::base
