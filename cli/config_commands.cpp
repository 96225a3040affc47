// Verbs about configuration: presets, check, explain.

#include <boost/program_options.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "core/estimate/scenario.h"

namespace orrery::cli {

namespace po = boost::program_options;
using engine::DocKind;

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

const DocKind kAllKinds[] = {DocKind::kDevice, DocKind::kSystem, DocKind::kModel, DocKind::kScenario};

template <class Spec>
void AddFields(const base::Schema<Spec>& schema, const Spec& spec, const std::string& prefix,
               std::vector<std::pair<std::string, std::string>>& rows) {
  for (const auto& f : schema.fields())
    rows.emplace_back(prefix + f.info.key, base::FormatParam(f.info, f.load(spec)));
}

void AddCurve(const std::string& key, const hardware::Curve& c, base::Dimension dim,
              std::vector<std::pair<std::string, std::string>>& rows) {
  std::string text;
  for (size_t i = 0; i < c.x.size(); ++i)
    text += (i ? ", " : "") + std::string("[") + base::FormatQuantity(c.x[i], dim) + ", " +
            base::FormatNumber(c.y[i]) + "]";
  rows.emplace_back(key, "[" + text + "]");
}

void AddDevice(const hardware::DeviceSpec& d, const std::string& prefix,
               std::vector<std::pair<std::string, std::string>>& rows) {
  AddFields(hardware::DeviceSchema(), d, prefix, rows);
  AddCurve(prefix + "gemm_efficiency", d.gemm_efficiency, base::Dimension::kFlops, rows);
  AddCurve(prefix + "memory_efficiency", d.memory_efficiency, base::Dimension::kBytes, rows);
}

void AddSystem(const hardware::SystemSpec& s, const std::string& prefix,
               std::vector<std::pair<std::string, std::string>>& rows) {
  AddFields(hardware::SystemSchema(), s, prefix, rows);
  rows.emplace_back(prefix + "device", s.device_preset.empty() ? "(inline)" : s.device_preset);
  for (size_t i = 0; i < s.network.size(); ++i) {
    const std::string p = prefix + "network[" + std::to_string(i) + "].";
    AddFields(hardware::NetworkTierSchema(), s.network[i], p, rows);
    AddCurve(p + "efficiency", s.network[i].efficiency, base::Dimension::kBytes, rows);
  }
  AddDevice(s.device, prefix + "device.", rows);
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
      "format", po::value(&format), "table | json | csv (show only)");
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
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  if (words.empty() || words[0] == "list") {
    for (DocKind k : kAllKinds) {
      if (words.size() > 1 && words[1] != engine::DocKindFolder(k) && words[1] != engine::DocKindName(k))
        continue;
      out << engine::DocKindFolder(k) << ":\n";
      for (const auto& n : store.Names(k)) out << "  " << n << "\n";
    }
    return kExitOk;
  }
  if (words[0] != "show" || words.size() != 2) {
    err << "error: expected 'presets list [KIND]' or 'presets show NAME' (see --help)\n";
    return kExitUsage;
  }
  const std::string& name = words[1];
  base::Diagnostics diags;
  std::vector<std::pair<std::string, std::string>> rows;
  const base::SourceLocation where{"<command line>", 0, 0};
  if (!store.PathOf(DocKind::kDevice, name).empty()) {
    hardware::DeviceSpec d;
    if (engine::LoadDevicePreset(name, store, where, "device", d, diags)) AddDevice(d, "", rows);
  } else if (!store.PathOf(DocKind::kSystem, name).empty()) {
    hardware::SystemSpec s;
    if (engine::LoadSystemPreset(name, store, where, "system", s, diags)) AddSystem(s, "", rows);
  } else if (!store.PathOf(DocKind::kModel, name).empty()) {
    models::ModelSpec m;
    if (engine::LoadModelPreset(name, store, where, "model", m, diags))
      AddFields(models::ModelSchema(), m, "", rows);
  } else if (!store.PathOf(DocKind::kScenario, name).empty()) {
    auto s = engine::LoadScenarioFile(name, store, diags);
    if (s) {
      AddFields(models::ModelSchema(), s->model, "model.", rows);
      AddSystem(s->system, "system.", rows);
      AddFields(parallelism::TrainingPlanSchema(), s->training, "training.", rows);
      AddFields(parallelism::WorkloadSchema(), s->workload, "workload.", rows);
    }
  } else {
    std::vector<std::string> all;
    for (DocKind k : kAllKinds)
      for (const auto& n : store.Names(k)) all.push_back(n);
    err << "error: no preset named '" << name << "'";
    const std::string hint = base::DidYouMean(name, all);
    err << (hint.empty() ? std::string(" (see 'orrery presets list')") : "; " + hint) << "\n";
    return kExitInvalid;
  }
  if (!diags.ok()) {
    PrintDiagnostics(diags, err);
    return kExitInvalid;
  }
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
  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  int bad = 0;
  for (const auto& f : vm["files"].as<std::vector<std::string>>()) {
    base::Diagnostics diags;
    const auto kind = engine::CheckFile(f, store, diags);
    if (kind) {
      if (!vm.count("quiet")) out << f << ": ok (" << engine::DocKindName(*kind) << ")\n";
    } else {
      ++bad;
      PrintDiagnostics(diags, err);
    }
  }
  return bad == 0 ? kExitOk : kExitInvalid;
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
    out << engine::ReferenceMarkdown();
    return kExitOk;
  }
  if (!vm.count("path")) {
    for (const auto& sec : engine::Registry()) {
      out << sec.prefix << ": " << sec.help << "\n";
      for (const auto& p : sec.params) out << "  " << sec.prefix << "." << p.key << "\n";
    }
    return kExitOk;
  }
  std::string hint;
  const std::string text = engine::Explain(vm["path"].as<std::string>(), hint);
  if (text.empty()) {
    err << "error: unknown parameter path '" << vm["path"].as<std::string>() << "'"
        << (hint.empty() ? "" : "; " + hint) << " (orrery explain lists them all)\n";
    return kExitInvalid;
  }
  out << text;
  return kExitOk;
}

}  // namespace orrery::cli
