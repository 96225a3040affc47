// Verbs about configuration: presets, check, explain.

#include <algorithm>
#include <boost/program_options.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "core/api/config.h"
#include "core/api/json.h"

namespace orrery::cli {

namespace po = boost::program_options;

namespace {

// Parses verb options; prints the error and returns false on bad usage.
bool ParseOptions(const Args& args, const po::options_description& visible,
                  const po::positional_options_description& pos, po::variables_map& vm,
                  std::ostream& err, const po::options_description* hidden = nullptr) {
  po::options_description all;
  all.add(visible);
  if (hidden != nullptr) all.add(*hidden);
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see --help)\n";
    return false;
  }
  return true;
}

void PrintRows(const std::vector<std::pair<std::string, std::string>>& rows, Format f,
               std::ostream& out) {
  if (f == Format::kJson) {
    nlohmann::ordered_json j;
    for (const auto& [k, v] : rows) j[k] = v;
    out << j.dump(2) << "\n";
    return;
  }
  if (f == Format::kCsv) {
    out << "key,value\n";
    for (const auto& [k, v] : rows) out << k << ",\"" << v << "\"\n";
    return;
  }
  size_t w = 0;
  for (const auto& r : rows) w = std::max(w, r.first.size());
  for (const auto& [k, v] : rows) out << k << std::string(w + 2 - k.size(), ' ') << v << "\n";
}

}  // namespace

int RunPresets(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery presets list [KIND]      list presets (kinds: devices, systems, models, scenarios)\n"
      "orrery presets show NAME        print one preset's values with units\n\noptions");
  std::string format = "table";
  opts.add_options()("help,h", "show this help")(
      "format", po::value(&format), "table | json | csv");
  po::options_description hidden;
  hidden.add_options()("words", po::value<std::vector<std::string>>(), "");
  po::positional_options_description pos;
  pos.add("words", -1);
  po::variables_map vm;
  if (!ParseOptions(args, opts, pos, vm, err, &hidden)) return kExitUsage;
  if (vm.count("help")) {
    out << opts << "\nExample: orrery presets show h100-sxm\n";
    return kExitOk;
  }
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  const auto words = vm.count("words") ? vm["words"].as<std::vector<std::string>>()
                                        : std::vector<std::string>{};
  if (words.empty() || words[0] == "list") {
    const PresetListResult r = ListPresets(words.size() > 1 ? words[1] : std::string());
    if (!r.ok()) {
      err << "error: " << r.reason << "\n";
      return kExitInvalid;
    }
    if (fmt == Format::kJson) {
      out << ToJson(r).dump(2) << "\n";
    } else if (fmt == Format::kCsv) {
      std::vector<Json> rows;
      for (const auto& k : r.kinds)
        for (size_t i = 0; i < k.names.size(); ++i)
          rows.push_back({{"kind", k.folder}, {"name", k.names[i]}, {"title", k.titles[i]}});
      WriteCsv(rows, out);
    } else {
      // Each preset beside its own name (what `presets show` and the
      // estimate's header print), the file names in one column.
      for (const auto& k : r.kinds) {
        size_t width = 0;
        for (const auto& n : k.names) width = std::max(width, n.size());
        out << k.folder << " (" << k.names.size() << "):\n";
        for (size_t i = 0; i < k.names.size(); ++i) {
          out << "  " << k.names[i];
          if (!k.titles[i].empty()) out << std::string(width + 2 - k.names[i].size(), ' ') << k.titles[i];
          out << "\n";
        }
      }
    }
    return kExitOk;
  }
  if (words[0] != "show" || words.size() != 2) {
    err << "error: expected 'presets list [KIND]' or 'presets show NAME' (see --help)\n";
    return kExitUsage;
  }
  const PresetShowResult r = ShowPreset(words[1]);
  if (!r.diagnostics.ok()) {
    PrintDiagnostics(r.diagnostics, err);
    return kExitInvalid;
  }
  if (!r.ok()) {
    err << "error: " << r.reason << "\n";
    return kExitInvalid;
  }
  if (r.preset != r.name)
    err << "note: '" << r.name << "' is the " << r.kind << " preset " << r.preset << "\n";
  const auto& rows = r.rows;
  PrintRows(rows, fmt, out);
  return kExitOk;
}

int RunCheck(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery check FILE...   validate device, system, model and scenario files\n\n"
      "Reports every error with file:line:col, the key path, the value and the rule;\n"
      "exits 1 when any file is invalid.\n\noptions");
  opts.add_options()("help,h", "show this help")("quiet,q", "print nothing for valid files");
  po::options_description hidden;
  hidden.add_options()("files", po::value<std::vector<std::string>>(), "");
  po::positional_options_description pos;
  pos.add("files", -1);
  po::variables_map vm;
  if (!ParseOptions(args, opts, pos, vm, err, &hidden)) return kExitUsage;
  if (vm.count("help") || !vm.count("files")) {
    (vm.count("help") ? out : err) << opts << "\nExample: orrery check configs/devices/*.yaml\n";
    return vm.count("help") ? kExitOk : kExitUsage;
  }
  const CheckResult r = CheckFiles(vm["files"].as<std::vector<std::string>>());
  for (const auto& f : r.files) {
    if (f.diagnostics.ok()) {
      if (!vm.count("quiet")) out << f.file << ": ok (" << f.kind << ")\n";
    } else {
      PrintDiagnostics(f.diagnostics, err);
    }
  }
  return r.ok() ? kExitOk : kExitInvalid;
}

int RunExplain(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery explain [PATH]   document a key, e.g. 'training.recompute' or 'system.device'\n"
      "orrery explain          list every key\n\noptions");
  opts.add_options()("help,h", "show this help")("markdown", "print the whole reference as Markdown");
  po::options_description hidden;
  hidden.add_options()("path", po::value<std::string>(), "");
  po::positional_options_description pos;
  pos.add("path", 1);
  po::variables_map vm;
  if (!ParseOptions(args, opts, pos, vm, err, &hidden)) return kExitUsage;
  if (vm.count("help")) {
    out << opts;
    return kExitOk;
  }
  if (vm.count("markdown")) {
    out << ReferenceMarkdown();
    return kExitOk;
  }
  if (!vm.count("path")) {
    out << ListKeys();
    return kExitOk;
  }
  const ExplainResult r = ExplainKey(vm["path"].as<std::string>());
  if (!r.ok()) {
    err << "error: " << r.reason << "\n";
    return kExitInvalid;
  }
  out << r.text;
  return kExitOk;
}

}  // namespace orrery::cli
