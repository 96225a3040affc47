#include "core/base/diagnostics.h"

#include <algorithm>
#include <cctype>
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
  // Optimal string alignment: Levenshtein plus adjacent transpositions
  // (Damerau 1964), on three rolling rows.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {

// Lower case, '-' read as '_': "Memory-Capacity" and "memory_capacity" match.
std::string Normalise(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c == '-') c = '_';
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// How well `candidate_as_given` fits `word_as_given`; lower is better, kNoFit
// when it does not fit at all (scores in diagnostics.h).
constexpr double kNoFit = 1e9;
// The '_'-separated words of a normalised name (empty ones dropped).
std::vector<std::string_view> Words(std::string_view name) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('_', start);
    if (end == std::string_view::npos) end = name.size();
    if (end > start) out.push_back(name.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

double FitScore(std::string_view word_as_given, std::string_view candidate_as_given) {
  const std::string word = Normalise(word_as_given);
  const std::string candidate = Normalise(candidate_as_given);
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  // A typo of the whole name: 0 (case only) .. limit. Case breaks ties, as
  // units need it: "TB/S" is nearer to TB/s than to Tb/s.
  const size_t whole = EditDistance(word, candidate);
  double score = kNoFit;
  if (whole <= limit)
    score = static_cast<double>(whole) +
            0.01 * static_cast<double>(EditDistance(word_as_given, candidate_as_given));
  if (word.size() < 3) return score;
  // The start of the name ("mem" -> memory_capacity, "h100" -> h100-sxm):
  // better than a one-letter typo of another name ("h200"), and better still
  // when it is also a near typo of the whole name.
  if (candidate.compare(0, word.size(), word) == 0)
    return std::min(score, whole <= limit ? 0.25 : 0.5);  // "h20": h200 before h200-measured
  // One word of the name, or its start, typed with a typo ("memroy" ->
  // memory_capacity, "bandwdith" -> memory_bandwidth); an exact substring
  // ("bandwidth") scores as a typo of distance 0. Worse than a typo of the
  // whole name.
  if (candidate.find(word) != std::string::npos) return std::min(score, 2.0);
  size_t best = EditDistance(word, candidate.substr(0, word.size()));
  size_t start = 0;
  while (start <= candidate.size()) {
    size_t end = candidate.find('_', start);
    if (end == std::string::npos) end = candidate.size();
    best = std::min(best, EditDistance(word, candidate.substr(start, end - start)));
    start = end + 1;
  }
  if (best <= limit) score = std::min(score, 2.0 + static_cast<double>(best));
  // Every word of the name is among the words typed, and more were typed
  // ("peak_flops_bf16" -> peak_bf16, "tdp_watts" -> tdp; a one-word name of
  // 3 letters or more): 3, plus one for each word typed beyond the name's.
  const std::vector<std::string_view> typed = Words(word), named = Words(candidate);
  if (!named.empty() && candidate.size() >= 3 && typed.size() > named.size()) {
    bool all = true;
    for (std::string_view n : named)
      all = all && std::find(typed.begin(), typed.end(), n) != typed.end();
    if (all) score = std::min(score, 3.0 + static_cast<double>(typed.size() - named.size()));
  }
  return score;
}

}  // namespace

std::vector<std::string> Suggestions(std::string_view word,
                                     const std::vector<std::string>& candidates,
                                     size_t max_count) {
  double best = kNoFit;
  std::vector<std::string> out;
  for (const auto& c : candidates) {
    const double score = FitScore(word, c);
    if (score >= kNoFit || score > best) continue;
    if (score < best) {
      best = score;
      out.clear();
    }
    if (std::find(out.begin(), out.end(), c) == out.end() && out.size() < max_count)
      out.push_back(c);
  }
  return out;
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  const std::vector<std::string> s = Suggestions(word, candidates, 1);
  return s.empty() ? std::string() : s.front();
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::vector<std::string> s = Suggestions(word, candidates);
  if (s.empty()) return {};
  std::string out = "did you mean ";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0) out += i + 1 == s.size() ? " or " : ", ";
    out += "'" + s[i] + "'";
  }
  return out + "?";
}

}  // namespace orrery::base
