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
  // For a pass that knows more than the one that reported (a hint added
  // once every section has been read).
  std::vector<Diagnostic>& items() { return items_; }
  void Append(const Diagnostics& other);
  // All messages, one per line.
  std::string ToString() const;

 private:
  std::vector<Diagnostic> items_;
};

// Edit distance counting insertions, deletions, substitutions and swaps of
// two adjacent letters ("memroy" -> "memory" is 1): optimal string alignment.
size_t EditDistance(std::string_view a, std::string_view b);

// What the user probably meant by `word`, best first, at most `max_count`:
// every candidate that fits equally best, in the candidates' order. Case and
// '-' versus '_' are ignored. Fits, best first (the score in brackets):
//   - the same name [0; case breaks ties: "TB/S" -> TB/s, not Tb/s];
//   - the name starts with `word`, 3 letters or more [0.25 when it is also a
//     near typo of the whole name, as below ("h20" -> h200, not
//     h200-measured); else 0.5: "mem" -> memory_capacity; "h100" -> h100-sxm
//     rather than h200];
//   - `word` is the name with d <= max(1, len/3) typos [d], a swap of two
//     adjacent letters counting as one ("layres" -> layers);
//   - the name contains `word`, 3 letters or more [2] ("bandwidth" ->
//     memory_bandwidth);
//   - one '_'-separated word of the name, or its start, is `word` with d
//     such typos [2 + d] ("memroy" -> memory_capacity and memory_bandwidth).
std::vector<std::string> Suggestions(std::string_view word,
                                     const std::vector<std::string>& candidates,
                                     size_t max_count = 3);

// The first of Suggestions(), or empty.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

// "did you mean 'x'?", "did you mean 'x' or 'y'?", "did you mean 'x', 'y' or
// 'z'?", or empty when nothing fits.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace orrery::base
