#pragma once
// Presentation of `orrery network` results: table, CSV, JSON.

#include <ostream>

#include "cli/cli_common.h"
#include "core/api/network.h"

namespace orrery::cli {

void PrintNetwork(const NetworkResult& r, Format fmt, std::ostream& out);
void PrintNetworkStudy(const NetworkStudyResult& r, Format fmt, std::ostream& out);

}  // namespace orrery::cli
