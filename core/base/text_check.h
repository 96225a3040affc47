#pragma once
// Checks on input text before a parser sees it, so that bytes no parser
// should meet are answered with a located message: every input file (YAML,
// CSV, JSON) is UTF-8 text, and whatever a user wrote may reach a JSON
// writer, which refuses invalid UTF-8.

#include <cstddef>
#include <string_view>

namespace orrery::base {

// Byte offset of the first byte of `text` that does not belong to a
// well-formed UTF-8 sequence (RFC 3629, Sec. 4: no overlong forms, no
// surrogates, nothing above U+10FFFF), or std::string_view::npos.
size_t FindInvalidUtf8(std::string_view text);

// 1-based line and column (in bytes) of a byte offset of `text`.
struct TextPosition {
  int line = 1;
  int column = 1;
};
TextPosition PositionOf(std::string_view text, size_t offset);

// True when `text` starts with the UTF-8 byte-order mark EF BB BF.
inline bool HasUtf8Bom(std::string_view text) { return text.substr(0, 3) == "\xEF\xBB\xBF"; }

}  // namespace orrery::base
