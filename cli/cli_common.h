#pragma once
// Shared pieces of the `orrery` verbs: output format, printing diagnostics.

#include <iostream>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"

namespace orrery::cli {

enum class Format { kTable, kJson, kCsv };

// Exit codes: 0 success, 1 the input is invalid or a check failed, 2 usage.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitUsage = 2;

// Parses "table", "json", "csv"; prints an error and returns false otherwise.
bool ParseFormat(const std::string& text, Format& out, std::ostream& err);

void PrintDiagnostics(const base::Diagnostics& d, std::ostream& err);

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
