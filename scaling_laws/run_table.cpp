#include "core/base/diagnostics.h"
#include "scaling_laws/run_table.h"

#include <array>
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/csv.h"

namespace orrery::scaling_laws {
namespace {

const std::vector<std::string> kParamsAliases = {"N", "params", "params_N", "n_params",
                                                 "num_params", "parameters"};
const std::vector<std::string> kTokensAliases = {"D", "tokens", "tokens_D", "training_tokens",
                                                 "n_tokens"};
const std::vector<std::string> kComputeAliases = {"C", "flops", "flops_C", "compute",
                                                  "compute_budget"};
const std::vector<std::string> kLossAliases = {"L", "loss", "validation_loss", "final_loss",
                                               "val_loss"};

// Resolves one column: an explicit name must exist; otherwise the first alias
// present is used; returns -1 when absent (and not required by name).
base::Result<int> Resolve(const base::CsvTable& t, const std::string& requested,
                    const std::vector<std::string>& aliases, const char* what) {
  if (!requested.empty()) {
    const int idx = t.ColumnIndex(requested);
    if (idx >= 0) return idx;
    std::string msg = t.source + ":" + std::to_string(t.header_line) + ": no column named '" +
                      requested + "' (for " + what + ")";
    const std::string guess = base::DidYouMean(requested, t.header);
    if (!guess.empty()) msg += "; " + guess;
    msg += " Columns are:";
    for (const auto& h : t.header) msg += " '" + h + "'";
    return base::Error{msg};
  }
  for (const auto& a : aliases) {
    const int idx = t.ColumnIndex(a);
    if (idx >= 0) return idx;
  }
  return -1;
}

}  // namespace

namespace {

base::Result<RunTable> RunsFromTable(const base::CsvTable& t, const RunColumns& columns) {
  auto n_col = Resolve(t, columns.params, kParamsAliases, "parameters N");
  if (!n_col) return n_col.error();
  auto d_col = Resolve(t, columns.tokens, kTokensAliases, "tokens D");
  if (!d_col) return d_col.error();
  auto c_col = Resolve(t, columns.compute, kComputeAliases, "compute C");
  if (!c_col) return c_col.error();
  auto l_col = Resolve(t, columns.loss, kLossAliases, "loss L");
  if (!l_col) return l_col.error();
  if (*l_col < 0) {
    return base::Error{t.source + ":" + std::to_string(t.header_line) +
                 ": no loss column found (looked for L, loss, validation_loss, final_loss, "
                 "val_loss); name it with --loss-col"};
  }
  const int present = (*n_col >= 0) + (*d_col >= 0) + (*c_col >= 0);
  if (present < 2) {
    return base::Error{t.source + ":" + std::to_string(t.header_line) +
                 ": need two of parameters N, tokens D, compute C; found " +
                 std::to_string(present) + " (name them with --n-col/--d-col/--c-col)"};
  }
  if (!(columns.flops_per_param_token > 0.0)) {
    return base::Error{"flops_per_param_token must be positive"};
  }

  std::vector<std::pair<int, std::string>> where;
  for (const auto& [name, value] : columns.where) {
    auto idx = Resolve(t, name, {}, "a row filter");
    if (!idx) return idx.error();
    where.emplace_back(*idx, value);
  }

  RunTable out;
  out.source = t.source;
  const double k = columns.flops_per_param_token;
  auto read = [&](const base::CsvRow& row, int col, double* v) -> base::Result<bool> {
    if (col < 0) return false;
    if (!base::ParseDouble(row.cells[col], v) || !(*v > 0.0)) {
      return base::Error{t.source + ":" + std::to_string(row.line) + ": column '" + t.header[col] +
                   "': expected a positive number, got '" + row.cells[col] + "'"};
    }
    return true;
  };
  bool imputed_n = false, imputed_d = false;
  for (const auto& row : t.rows) {
    bool keep = true;
    for (const auto& [idx, value] : where) keep = keep && row.cells[idx] == value;
    if (!keep) continue;
    RunPoint p;
    p.line = row.line;
    auto has_n = read(row, *n_col, &p.params_n);
    if (!has_n) return has_n.error();
    auto has_d = read(row, *d_col, &p.tokens_d);
    if (!has_d) return has_d.error();
    auto has_c = read(row, *c_col, &p.compute_c);
    if (!has_c) return has_c.error();
    auto has_l = read(row, *l_col, &p.loss);
    if (!has_l) return has_l.error();
    if (!*has_n) {
      p.params_n = p.compute_c / (k * p.tokens_d);
      imputed_n = true;
    }
    if (!*has_d) {
      p.tokens_d = p.compute_c / (k * p.params_n);
      imputed_d = true;
    }
    if (!*has_c) p.compute_c = k * p.params_n * p.tokens_d;
    out.points.push_back(p);
  }
  if (imputed_n) out.notes.push_back("parameters N imputed as C/(k D), k = " + std::to_string(k));
  if (imputed_d) out.notes.push_back("tokens D imputed as C/(k N), k = " + std::to_string(k));
  if (out.points.empty()) {
    return base::Error{t.source + ": no data rows" + std::string(where.empty() ? "" : " match the filter")};
  }
  return out;
}

}  // namespace

base::Result<RunTable> ParseRuns(const std::string& csv_text, const std::string& source_name,
                           const RunColumns& columns) {
  auto parsed = base::ParseCsv(csv_text, source_name);
  if (!parsed) return parsed.error();
  return RunsFromTable(parsed.value(), columns);
}

base::Result<RunTable> LoadRuns(const std::string& path, const RunColumns& columns) {
  auto parsed = base::ReadCsvFile(path);
  if (!parsed) return parsed.error();
  return RunsFromTable(parsed.value(), columns);
}

std::vector<std::string> SpreadWarnings(const RunTable& table, double min_decades,
                                        size_t min_points) {
  std::vector<std::string> warnings;
  const auto& pts = table.points;
  if (pts.size() < min_points) {
    warnings.push_back("only " + std::to_string(pts.size()) + " points for a fit; at least " +
                       std::to_string(min_points) + " are needed to determine the parameters");
  }
  if (pts.size() < 2) return warnings;
  double n_lo = pts[0].params_n, n_hi = n_lo, d_lo = pts[0].tokens_d, d_hi = d_lo;
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  for (const auto& p : pts) {
    n_lo = std::min(n_lo, p.params_n);
    n_hi = std::max(n_hi, p.params_n);
    d_lo = std::min(d_lo, p.tokens_d);
    d_hi = std::max(d_hi, p.tokens_d);
    const double x = std::log(p.params_n), y = std::log(p.tokens_d);
    sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y;
  }
  const double n_dec = std::log10(n_hi / n_lo), d_dec = std::log10(d_hi / d_lo);
  auto fmt = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return std::string(buf);
  };
  if (n_dec < min_decades) {
    warnings.push_back("parameters N span only " + fmt(n_dec) +
                       " decades: alpha and A are poorly determined");
  }
  if (d_dec < min_decades) {
    warnings.push_back("tokens D span only " + fmt(d_dec) +
                       " decades: beta and B are poorly determined");
  }
  const double m = static_cast<double>(pts.size());
  const double vx = sxx / m - (sx / m) * (sx / m), vy = syy / m - (sy / m) * (sy / m);
  if (vx > 0 && vy > 0) {
    const double corr = (sxy / m - (sx / m) * (sy / m)) / std::sqrt(vx * vy);
    if (std::abs(corr) > 0.98) {
      warnings.push_back("log N and log D are almost collinear (correlation " + fmt(corr) +
                         "): the N and D terms cannot be separated");
    }
  }
  return warnings;
}

}  // namespace orrery::scaling_laws
