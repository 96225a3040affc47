#include "core/base/csv.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

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

// Splits one physical line into cells. Returns false on an unterminated quote.
bool SplitLine(std::string_view line, std::vector<std::string>* cells) {
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
        }
      } else {
        cell.push_back(c);
      }
    } else if (c == '"') {
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
  if (quoted) return false;
  cells->push_back(was_quoted ? cell : Trim(cell));
  return true;
}

}  // namespace

Result<CsvTable> ParseCsv(std::string_view text, const std::string& source) {
  CsvTable table;
  table.source = source;
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
    if (!SplitLine(line, &cells)) {
      return Error{source + ":" + std::to_string(line_no) + ": unterminated double quote"};
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
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open file (missing or unreadable)"};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Error{path + ": read error"};
  return ParseCsv(buffer.str(), path);
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
