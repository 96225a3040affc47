#pragma once
// The `orrery` verbs' entry points; what they share is in cli/verb_options.h.

#include <iostream>
#include <string>
#include <vector>

#include "cli/verb_options.h"
#include "core/base/diagnostics.h"

namespace orrery::cli {

using Args = std::vector<std::string>;

int RunPresets(const Args& args, std::ostream& out, std::ostream& err);
int RunCheck(const Args& args, std::ostream& out, std::ostream& err);
int RunExplain(const Args& args, std::ostream& out, std::ostream& err);
int RunEstimate(const Args& args, std::ostream& out, std::ostream& err);
int RunValidate(const Args& args, std::ostream& out, std::ostream& err);
// orrery validate --scaling-laws DIR (scaling_laws/reproduction.h).
int RunScalingLawReproduction(const std::string& dir, Format fmt, std::ostream& out,
                              std::ostream& err);
int RunBench(const Args& args, std::ostream& out, std::ostream& err);
int RunPlan(const Args& args, std::ostream& out, std::ostream& err);
int RunCalibrate(const Args& args, std::ostream& out, std::ostream& err);
int RunInfer(const Args& args, std::ostream& out, std::ostream& err);
int RunSearch(const Args& args, std::ostream& out, std::ostream& err);
int RunSweep(const Args& args, std::ostream& out, std::ostream& err);
int RunDb(const Args& args, std::ostream& out, std::ostream& err);

}  // namespace orrery::cli
