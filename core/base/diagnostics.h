#pragma once
// Errors users can act on. Parsers never throw, assert or exit on input; they
// append Diagnostics and return. Every message names the file, line, column,
// YAML path, the bad value and the rule it broke (STYLE.md rule 4).

#include <string>
#include <string_view>
#include <vector>

namespace orrery::base {

// Where a value came from. Line and column are 1-based; 0 means unknown
// (for example a value given with --set on the command line).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

struct Diagnostic {
  SourceLocation where;
  std::string path;     // YAML key path, e.g. "model.hidden" or "system.network[1].bandwidth"
  std::string value;    // the offending text, empty when the key is missing
  std::string message;  // the rule that was broken
  std::string hint;     // "did you mean 'hidden'?" or empty

  // "file:line:col: error: path: message (got 'value'); did you mean 'x'?"
  std::string ToString() const;
};

// An ordered list of errors collected by one pass. Passing one by reference
// lets a loader report every problem of a file at once, not just the first.
class Diagnostics {
 public:
  void Add(Diagnostic d) { items_.push_back(std::move(d)); }
  void Add(const SourceLocation& where, std::string path, std::string value, std::string message,
           std::string hint = {});
  bool ok() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  void Append(const Diagnostics& other);
  // All messages, one per line.
  std::string ToString() const;

 private:
  std::vector<Diagnostic> items_;
};

// Levenshtein distance, for "did you mean".
size_t EditDistance(std::string_view a, std::string_view b);

// The closest candidate to `word` if it is plausibly a typo of it (distance at
// most max(1, len/3)), else empty.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

// "did you mean 'x'?" or empty.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace orrery::base
