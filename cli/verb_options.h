#pragma once
// The option parsing every verb shares, written once: the usage line and
// description, positional arguments, --help with examples and the exit
// status, --set PATH=VALUE, --format table|json|csv, --quiet, --threads, and
// the mapping of a result's status to the exit code.
//
//   VerbOptions v("search", "orrery search SCENARIO.yaml [options]\n\n<what it does>");
//   v.Positional("scenario", "SCENARIO").Set().Format().Quiet().Threads();
//   v.add_options()("top", po::value(&top), "plans to print (default 5)");
//   if (int code = v.Parse(args, out, err); code >= 0) return code;  // help or usage error

#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "core/api/common.h"
#include "core/api/text.h"
#include "core/base/diagnostics.h"

namespace orrery::cli {

using Format = text::Format;  // table | json | csv (core/api/text.h)

// Exit codes, one meaning each (README.md "Exit status"). They are the
// numeric values of orrery::Status.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;     // invalid input, or a failed tolerance
inline constexpr int kExitUsage = 2;       // bad command line
inline constexpr int kExitInfeasible = 3;  // no feasible plan / an infeasible result
// The lines every --help ends with.
inline constexpr const char* kExitStatusHelp =
    "\nExit status: 0 ok; 1 invalid input or a failed tolerance; 2 usage error;\n"
    "3 no feasible plan or an infeasible result (the reason is printed).\n";

int ExitCode(Status s);

// Parses "table", "json", "csv"; prints an error and returns false otherwise.
bool ParseFormat(const std::string& text, Format& out, std::ostream& err);

void PrintDiagnostics(const base::Diagnostics& d, std::ostream& err);

class VerbOptions {
 public:
  // `verb` names the verb in messages ("see orrery VERB --help"); `usage` is
  // printed at the top of --help (usage lines, a blank line, what it does).
  VerbOptions(std::string verb, const std::string& usage);

  // Verb-specific options: v.add_options()("top", po::value(&top), "...").
  boost::program_options::options_description_easy_init add_options() {
    return visible_.add_options();
  }
  // A positional argument (in order of calls); `max` > 1 or -1 takes several.
  VerbOptions& Positional(const std::string& name, int max = 1);
  // --set PATH=VALUE, repeatable.
  VerbOptions& Set(const std::string& help =
                       "override one parameter, e.g. --set training.tp=4 --set "
                       "'system.device.memory_capacity=141 GB' (orrery explain lists the paths)");
  // --format; `allowed` names the formats this verb writes.
  VerbOptions& Formats(const std::string& default_format = "table",
                       const std::string& allowed = "table | json | csv");
  VerbOptions& Quiet();
  VerbOptions& Threads();
  // Text after the options in --help (examples); the exit status follows.
  VerbOptions& Examples(std::string text);

  // Parses `args`. Returns -1 to go on, or the exit code when --help was
  // printed (0) or the command line is wrong (2, the error printed).
  int Parse(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

  bool Has(const std::string& name) const { return vm_.count(name) > 0; }
  std::string Arg(const std::string& name) const;                 // "" when absent
  std::vector<std::string> Args(const std::string& name) const;   // every value
  const std::vector<std::string>& sets() const { return sets_; }
  const std::string& model_config() const { return model_config_; }  // --model-config
  Format format() const { return format_; }
  bool quiet() const { return Has("quiet"); }
  int threads() const { return threads_; }

  // Prints "error: MESSAGE (see orrery VERB --help)" and returns 2.
  int Usage(std::ostream& err, const std::string& message) const;
  // Prints what went wrong with a result (diagnostics, or the reason of an
  // infeasible or cancelled call) and returns its exit code.
  int Report(const ResultBase& r, std::ostream& err) const;

 private:
  std::string verb_;
  boost::program_options::options_description visible_;
  boost::program_options::options_description hidden_;
  boost::program_options::positional_options_description positional_;
  std::vector<std::string> positional_names_;
  boost::program_options::variables_map vm_;
  std::string model_config_;
  std::vector<std::string> sets_;
  std::string format_text_ = "table", allowed_formats_;
  Format format_ = Format::kTable;
  int threads_ = 0;
  std::string examples_;
};

}  // namespace orrery::cli
