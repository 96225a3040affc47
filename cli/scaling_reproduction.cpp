// `orrery validate --scaling-laws DIR`: presents orrery::ReproduceScalingLaws.

#include <iomanip>
#include <sstream>

#include "cli/cli_common.h"
#include "core/api/validate.h"

namespace orrery::cli {

int RunScalingLawReproduction(const std::string& dir, Format fmt, std::ostream& out,
                              std::ostream& err) {
  const ReproduceScalingLawsResult r = ReproduceScalingLaws(dir);
  if (r.report.data_dir.empty()) {
    err << "error: " << r.reason << "\n";
    return kExitInvalid;
  }
  if (fmt == Format::kJson) {
    out << ToJson(r).dump(2) << "\n";
  } else {
    out << "Published scaling-law fits reproduced from " << r.report.data_dir << "\n\n";
    for (const auto& c : r.report.checks) {
      std::ostringstream line;
      line << std::left << std::setw(44) << c.name << std::right << std::setw(13)
           << std::setprecision(6) << c.published << std::setw(13) << c.ours << "  "
           << std::left << std::setw(28) << c.rule << (c.pass ? "ok" : "FAIL");
      out << line.str() << "\n      " << c.reference << "\n";
    }
    for (const auto& m : r.report.missing) out << "not run: " << dir << "/" << m << " not found\n";
    out << "\n" << r.report.checks.size() - r.report.Failed() << " of " << r.report.checks.size()
        << " checks pass" << (r.report.missing.empty() ? "" : "; some data were missing") << "\n";
  }
  return r.ok() ? kExitOk : kExitInvalid;
}

}  // namespace orrery::cli
