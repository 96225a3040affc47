#include "core/base/diagnostics.h"

#include <algorithm>
#include <sstream>

namespace orrery::base {

std::string Diagnostic::ToString() const {
  std::ostringstream os;
  os << (where.file.empty() ? std::string("<input>") : where.file);
  if (where.line > 0) os << ':' << where.line << ':' << where.column;
  os << ": error: ";
  if (!path.empty()) os << path << ": ";
  os << message;
  if (!value.empty()) os << " (got '" << value << "')";
  if (!hint.empty()) os << "; " << hint;
  return os.str();
}

void Diagnostics::Add(const SourceLocation& where, std::string path, std::string value,
                      std::string message, std::string hint) {
  items_.push_back(Diagnostic{where, std::move(path), std::move(value), std::move(message),
                              std::move(hint)});
}

void Diagnostics::Append(const Diagnostics& other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

std::string Diagnostics::ToString() const {
  std::string out;
  for (const auto& d : items_) {
    out += d.ToString();
    out += '\n';
  }
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(1, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string m = ClosestMatch(word, candidates);
  return m.empty() ? std::string() : "did you mean '" + m + "'?";
}

}  // namespace orrery::base
