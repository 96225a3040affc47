#pragma once
// Small pieces the verbs share when they call the library (core/api):
// printing a failed result and turning status messages into stderr lines.

#include <ostream>
#include <string>
#include <string_view>

#include "cli/cli_common.h"
#include "core/api/common.h"

namespace orrery::cli {

// Prints a failed result's located errors and its reason ("error: ...");
// returns the exit status, which is the result's status (0 ok, 1 invalid
// input or a failed tolerance, 2 usage, 3 infeasible). `see` names the help
// to point at on a usage error (e.g. "orrery network --help").
inline int PrintFailure(const ResultBase& r, std::ostream& err, const std::string& see = "") {
  if (!r.diagnostics.ok()) PrintDiagnostics(r.diagnostics, err);
  if (!r.reason.empty())
    err << "error: " << r.reason << (r.status == Status::kUsage && !see.empty() ? " (see " + see + ")" : "")
        << "\n";
  return static_cast<int>(r.status);
}

// A Control whose progress prints each stage text on its own line of `err`
// (for calls whose "progress" is a few status messages).
inline Control StatusLines(std::ostream& err) {
  Control c;
  c.progress = [&err](uint64_t, uint64_t, std::string_view stage) { err << stage << "\n"; };
  return c;
}

}  // namespace orrery::cli
