// `orrery validate --scaling-laws DIR`: presents scaling_laws::ReproducePublishedFits.

#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "scaling_laws/reproduction.h"

namespace orrery::cli {

int RunScalingLawReproduction(const std::string& dir, Format fmt, std::ostream& out,
                              std::ostream& err) {
  auto report = scaling_laws::ReproducePublishedFits(dir);
  if (!report.ok()) {
    err << "error: " << report.error().message << "\n";
    return kExitInvalid;
  }
  if (fmt == Format::kJson) {
    nlohmann::ordered_json j;
    j["data_dir"] = report->data_dir;
    j["checks"] = nlohmann::ordered_json::array();
    for (const auto& c : report->checks)
      j["checks"].push_back({{"name", c.name}, {"reference", c.reference},
                             {"published", c.published}, {"ours", c.ours}, {"rule", c.rule},
                             {"pass", c.pass}});
    j["missing"] = report->missing;
    j["failed"] = report->Failed();
    j["passed"] = report->Passed();
    out << j.dump(2) << "\n";
  } else {
    out << "Published scaling-law fits reproduced from " << report->data_dir << "\n\n";
    for (const auto& c : report->checks) {
      std::ostringstream line;
      line << std::left << std::setw(44) << c.name << std::right << std::setw(13)
           << std::setprecision(6) << c.published << std::setw(13) << c.ours << "  "
           << std::left << std::setw(28) << c.rule << (c.pass ? "ok" : "FAIL");
      out << line.str() << "\n      " << c.reference << "\n";
    }
    for (const auto& m : report->missing) out << "not run: " << dir << "/" << m << " not found\n";
    out << "\n" << report->checks.size() - report->Failed() << " of " << report->checks.size()
        << " checks pass" << (report->missing.empty() ? "" : "; some data were missing") << "\n";
  }
  return report->Passed() ? kExitOk : kExitInvalid;
}

}  // namespace orrery::cli
