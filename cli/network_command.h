#pragma once
// `orrery network`: a system's topology, part counts, cost and power, the
// time of one collective on it, and (`orrery network study`) the rail-only
// versus Clos study of configs/studies/rail-only.yaml.

#include <iostream>
#include <string>
#include <vector>

namespace orrery::cli {

int RunNetwork(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace orrery::cli
