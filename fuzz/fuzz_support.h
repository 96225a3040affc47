#pragma once
// Shared by the libFuzzer targets (fuzz/README.md): the input as a file the
// loaders read the way the command line does, and the checks every target
// makes on what comes back.

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/base/diagnostics.h"

namespace orrery::fuzz {

// Writes the input to one temporary file per process and returns its path.
// The loaders under test take paths, as the faces give them.
inline std::string AsFile(const uint8_t* data, size_t size, const char* extension) {
  static const std::string base = (std::filesystem::temp_directory_path() /
                                   ("orrery_fuzz_" + std::to_string(getpid()))).string();
  const std::string path = base + extension;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// A broken property is a finding: say which and stop (libFuzzer saves the input).
[[noreturn]] inline void Finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

inline void Require(bool ok, const std::string& what) {
  if (!ok) Finding(what);
}

// Every rejection is a located message: a file and a rule, never empty text.
inline void RequireLocated(const base::Diagnostics& d, const std::string& file) {
  Require(!d.ok(), "rejected without a message");
  for (const auto& item : d.items()) {
    Require(!item.message.empty(), "a diagnostic without a message");
    Require(item.where.file == file || item.where.file.rfind(file + ":", 0) == 0 ||
                !item.where.file.empty(),
            "a diagnostic without a file: " + item.ToString());
  }
}

inline bool FiniteNonNegative(double v) { return std::isfinite(v) && v >= 0; }

// The preset folder of the source tree (fuzz/CMakeLists.txt defines it).
inline std::string ConfigDir() { return ORRERY_FUZZ_CONFIG_DIR; }

}  // namespace orrery::fuzz
