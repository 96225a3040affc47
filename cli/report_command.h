#pragma once
// `orrery report`: a scenario, a search or a plan question -> a self-contained
// HTML report (and a PDF of it).

#include <ostream>
#include <string>
#include <vector>

namespace orrery::cli {

int RunReport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace orrery::cli
