#include "core/api/config.h"

#include "core/estimate/scenario.h"

namespace orrery {

namespace {

using engine::DocKind;
using Rows = std::vector<std::pair<std::string, std::string>>;

const DocKind kAllKinds[] = {DocKind::kDevice, DocKind::kSystem, DocKind::kModel, DocKind::kScenario};

engine::PresetStore StoreFor(const std::string& config_dir) {
  return engine::PresetStore(config_dir.empty() ? ConfigDir() : config_dir);
}

template <class Spec>
void AddFields(const base::Schema<Spec>& schema, const Spec& spec, const std::string& prefix, Rows& rows) {
  for (const auto& f : schema.fields())
    rows.emplace_back(prefix + f.info.key, base::FormatParam(f.info, f.load(spec)));
}

void AddCurve(const std::string& key, const hardware::Curve& c, base::Dimension dim, Rows& rows) {
  std::string text;
  for (size_t i = 0; i < c.x.size(); ++i)
    text += (i ? ", " : "") + std::string("[") + base::FormatQuantity(c.x[i], dim) + ", " +
            base::FormatNumber(c.y[i]) + "]";
  rows.emplace_back(key, "[" + text + "]");
}

void AddDevice(const hardware::DeviceSpec& d, const std::string& prefix, Rows& rows) {
  AddFields(hardware::DeviceSchema(), d, prefix, rows);
  AddCurve(prefix + "gemm_efficiency", d.gemm_efficiency, base::Dimension::kFlops, rows);
  AddCurve(prefix + "memory_efficiency", d.memory_efficiency, base::Dimension::kBytes, rows);
}

void AddSystem(const hardware::SystemSpec& s, const std::string& prefix, Rows& rows) {
  AddFields(hardware::SystemSchema(), s, prefix, rows);
  AddFields(hardware::HostSchema(), s.host, prefix + "host.", rows);
  rows.emplace_back(prefix + "device", s.device_preset.empty() ? "(inline)" : s.device_preset);
  for (size_t i = 0; i < s.network.size(); ++i) {
    const std::string p = prefix + "network[" + std::to_string(i) + "].";
    AddFields(hardware::NetworkTierSchema(), s.network[i], p, rows);
    AddCurve(p + "efficiency", s.network[i].efficiency, base::Dimension::kBytes, rows);
  }
  AddDevice(s.device, prefix + "device.", rows);
}

}  // namespace

PresetListResult ListPresets(const std::string& kind, const std::string& config_dir) {
  PresetListResult r;
  const engine::PresetStore store = StoreFor(config_dir);
  for (DocKind k : kAllKinds) {
    if (!kind.empty() && kind != engine::DocKindFolder(k) && kind != engine::DocKindName(k)) continue;
    PresetListResult::Kind entry{engine::DocKindFolder(k), store.Names(k), {}};
    for (const auto& n : entry.names) {
      const std::string title = store.Title(k, n);
      entry.titles.push_back(title == n ? std::string() : title);
    }
    r.kinds.push_back(std::move(entry));
  }
  if (r.kinds.empty()) {
    r.status = Status::kInvalidInput;
    const std::string hint = base::DidYouMean(kind, {"devices", "systems", "models", "scenarios"});
    r.reason = "unknown preset kind '" + kind + "'" + (hint.empty() ? "" : "; " + hint) +
               " (devices, systems, models or scenarios)";
  }
  return r;
}

PresetShowResult ShowPreset(const std::string& name, const std::string& config_dir) {
  PresetShowResult r;
  r.name = name;
  const engine::PresetStore store = StoreFor(config_dir);
  const base::SourceLocation where{"<command line>", 0, 0};
  r.preset = name;
  bool by_file = false;
  for (DocKind k : kAllKinds) by_file = by_file || !store.PathOf(k, name).empty();
  if (!by_file) {
    // A name as runs and users write it ("deepseek-ai/DeepSeek-R1", "H100"),
    // resolved as scenarios and measured runs resolve it.
    for (DocKind k : {DocKind::kDevice, DocKind::kSystem, DocKind::kModel})
      if (const auto p = store.Resolve(k, name)) {
        r.preset = p->preset;
        break;
      }
  }
  const std::string& file_name = r.preset;
  if (!store.PathOf(DocKind::kDevice, file_name).empty()) {
    r.kind = "device";
    hardware::DeviceSpec d;
    if (engine::LoadDevicePreset(file_name, store, where, "device", d, r.diagnostics)) AddDevice(d, "", r.rows);
  } else if (!store.PathOf(DocKind::kSystem, file_name).empty()) {
    r.kind = "system";
    hardware::SystemSpec s;
    if (engine::LoadSystemPreset(file_name, store, where, "system", s, r.diagnostics)) AddSystem(s, "", r.rows);
  } else if (!store.PathOf(DocKind::kModel, file_name).empty()) {
    r.kind = "model";
    models::ModelSpec m;
    if (engine::LoadModelPreset(file_name, store, where, "model", m, r.diagnostics))
      AddFields(models::ModelSchema(), m, "", r.rows);
  } else if (!store.PathOf(DocKind::kScenario, file_name).empty()) {
    r.kind = "scenario";
    if (auto s = engine::LoadScenarioFile(file_name, store, r.diagnostics)) {
      AddFields(models::ModelSchema(), s->model, "model.", r.rows);
      AddSystem(s->system, "system.", r.rows);
      AddFields(parallelism::TrainingPlanSchema(), s->training, "training.", r.rows);
      AddFields(parallelism::WorkloadSchema(), s->workload, "workload.", r.rows);
    }
  } else {
    std::vector<std::string> all;
    for (DocKind k : kAllKinds)
      for (const auto& n : store.Names(k)) all.push_back(n);
    const std::string hint = base::DidYouMean(name, all);
    r.status = Status::kInvalidInput;
    r.reason = "no preset named '" + name + "'" +
               (hint.empty() ? std::string(" (see 'orrery presets list')") : "; " + hint);
    return r;
  }
  if (!r.diagnostics.ok()) r.status = Status::kInvalidInput;
  return r;
}

nlohmann::ordered_json ToJson(const PresetShowResult& r) {
  nlohmann::ordered_json j;
  for (const auto& [k, v] : r.rows) j[k] = v;
  return j;
}

CheckResult CheckFiles(const std::vector<std::string>& files, const std::string& config_dir) {
  CheckResult r;
  const engine::PresetStore store = StoreFor(config_dir);
  for (const auto& f : files) {
    CheckResult::File out{f, {}, {}};
    if (const auto kind = engine::CheckFile(f, store, out.diagnostics)) out.kind = engine::DocKindName(*kind);
    else r.status = Status::kInvalidInput;
    r.files.push_back(std::move(out));
  }
  return r;
}

ExplainResult ExplainKey(const std::string& path) {
  ExplainResult r;
  std::string hint;
  r.text = engine::Explain(path, hint);
  if (r.text.empty()) {
    r.status = Status::kInvalidInput;
    r.reason = "unknown parameter path '" + path + "'" + (hint.empty() ? "" : "; " + hint) +
               " (orrery explain lists them all)";
  }
  return r;
}

std::string ListKeys() {
  std::string out;
  for (const auto& sec : engine::Registry()) {
    out += sec.prefix + ": " + sec.help + "\n";
    for (const auto& p : sec.params) out += "  " + sec.prefix + "." + p.key + "\n";
  }
  return out;
}

std::string ReferenceMarkdown() { return engine::ReferenceMarkdown(); }

}  // namespace orrery
