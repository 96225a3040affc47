#pragma once
// `orrery fit`: fit a scaling law to training runs, or answer compute-optimal
// questions from a published preset. See `orrery fit --help`.

#include <ostream>
#include <string>
#include <vector>

namespace orrery::cli {

// args = everything after `fit`. Writes results to `out`, diagnostics and
// warnings to `err`. Returns 0 on success, 2 on bad input (unreadable file,
// unknown column, non-numeric cell, bad option, unknown preset), never throws.
int RunFitCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace orrery::cli
