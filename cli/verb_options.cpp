#include "cli/verb_options.h"

namespace orrery::cli {

namespace po = boost::program_options;

int ExitCode(Status s) { return static_cast<int>(s) <= kExitInfeasible ? static_cast<int>(s) : kExitInvalid; }

bool ParseFormat(const std::string& text, Format& out, std::ostream& err) {
  if (text == "table") out = Format::kTable;
  else if (text == "json") out = Format::kJson;
  else if (text == "csv") out = Format::kCsv;
  else {
    err << "error: --format: unknown format '" << text << "' (one of: table, json, csv)";
    const std::string hint = base::DidYouMean(text, {"table", "json", "csv"});
    if (!hint.empty()) err << "; " << hint;
    err << "\n";
    return false;
  }
  return true;
}

void PrintDiagnostics(const base::Diagnostics& d, std::ostream& err) { err << d.ToString(); }

VerbOptions::VerbOptions(std::string verb, const std::string& usage)
    : verb_(std::move(verb)), visible_(usage + "\n\noptions") {
  visible_.add_options()("help,h", "show this help");
}

VerbOptions& VerbOptions::Positional(const std::string& name, int max) {
  hidden_.add_options()(name.c_str(), po::value<std::vector<std::string>>(), "");
  positional_.add(name.c_str(), max);
  positional_names_.push_back(name);
  return *this;
}

VerbOptions& VerbOptions::Set(const std::string& help) {
  visible_.add_options()("set", po::value(&sets_)->composing(), help.c_str())(
      "model-config", po::value(&model_config_),
      "read the model from a Hugging Face config.json (llama, mistral, mixtral, qwen2, "
      "qwen2_moe, deepseek_v3, gpt2, gpt_neox, ... families) instead of the scenario's");
  return *this;
}

VerbOptions& VerbOptions::Formats(const std::string& default_format, const std::string& allowed) {
  format_text_ = default_format;
  allowed_formats_ = allowed;
  visible_.add_options()("format", po::value(&format_text_), allowed_formats_.c_str());
  return *this;
}

VerbOptions& VerbOptions::Quiet() {
  visible_.add_options()("quiet,q", "no progress output");
  return *this;
}

VerbOptions& VerbOptions::Threads() {
  visible_.add_options()("threads", po::value(&threads_), "worker threads (default: every core)");
  return *this;
}

VerbOptions& VerbOptions::Examples(std::string text) {
  examples_ = std::move(text);
  return *this;
}

int VerbOptions::Parse(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    po::options_description all;
    all.add(visible_).add(hidden_);
    po::store(po::command_line_parser(args).options(all).positional(positional_).run(), vm_);
    po::notify(vm_);
  } catch (const po::error& e) {
    return Usage(err, e.what());
  }
  if (Has("help")) {
    out << visible_ << examples_ << kExitStatusHelp;
    return kExitOk;
  }
  if (!allowed_formats_.empty() && !ParseFormat(format_text_, format_, err)) return kExitUsage;
  if (threads_ < 0 || threads_ > 1024)
    return Usage(err, "--threads must be in [0, 1024] (0 = every core), got " + std::to_string(threads_));
  return -1;
}

std::string VerbOptions::Arg(const std::string& name) const {
  const auto v = Args(name);
  return v.empty() ? std::string() : v.front();
}

std::vector<std::string> VerbOptions::Args(const std::string& name) const {
  if (!Has(name)) return {};
  return vm_[name].as<std::vector<std::string>>();
}

int VerbOptions::Usage(std::ostream& err, const std::string& message) const {
  err << "error: " << message << " (see orrery " << verb_ << " --help)\n";
  return kExitUsage;
}

int VerbOptions::Report(const ResultBase& r, std::ostream& err) const {
  if (!r.diagnostics.ok()) PrintDiagnostics(r.diagnostics, err);
  if (r.status == Status::kInfeasible && !r.reason.empty())
    err << "orrery " << verb_ << ": infeasible: " << r.reason << "\n";
  else if (r.status != Status::kOk && r.diagnostics.ok() && !r.reason.empty())
    err << "orrery " << verb_ << ": error: " << r.reason << "\n";
  return ExitCode(r.status);
}

}  // namespace orrery::cli
