#include "core/studies/fabric_study.h"

#include <algorithm>

#include "core/base/yaml_source.h"
#include "core/estimate/scenario.h"
#include "core/estimate/training_estimator.h"
#include "core/studies/network_report.h"
#include "hardware/cost_model.h"
#include "parallelism/plan_spec.h"

namespace orrery::studies {

namespace {

struct StudyCase {
  std::string name;
  std::string model;
  std::vector<std::pair<std::string, std::string>> fabrics;  // label, system preset
  std::vector<std::pair<std::string, base::SourceLocation>> sets;
  YAML::Node training, workload;
  base::SourceLocation where;
};

struct Study {
  std::string name, citation, prices = "default", baseline;
  std::vector<std::pair<std::string, std::string>> fabrics;
  std::vector<StudyCase> cases;
};

std::vector<std::pair<std::string, std::string>> ParseFabrics(const YAML::Node& n,
                                                              const std::string& path,
                                                              const std::string& file,
                                                              base::Diagnostics& d) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!n.IsMap() || n.size() < 2) {
    d.Add(base::LocationOf(n, file), path, "",
          "expected a map of at least two fabrics, label: system preset (e.g. clos: dgx-h100-superpod)");
    return out;
  }
  for (const auto& kv : n) {
    if (!kv.first.IsScalar() || !kv.second.IsScalar()) {
      d.Add(base::LocationOf(kv.first, file), path, "", "expected label: system preset name");
      continue;
    }
    out.emplace_back(kv.first.Scalar(), kv.second.Scalar());
  }
  return out;
}

bool ParseStudy(const std::string& file, Study& st, base::Diagnostics& d) {
  const size_t before = d.size();
  const auto root = base::LoadYamlFile(file, d);
  if (!root) return false;
  const YAML::Node m = (*root)["study"];
  if (!root->IsMap() || !m || !m.IsMap()) {
    d.Add(base::LocationOf(*root, file), "study", "", "expected a map under the top-level key `study:`");
    return false;
  }
  static const std::vector<std::string> keys = {"name", "citation", "prices", "baseline", "fabrics",
                                                "cases"};
  static const std::vector<std::string> case_keys = {"name", "model", "fabrics", "set", "training",
                                                     "workload", "note"};
  for (const auto& kv : m) {
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      d.Add(base::LocationOf(kv.first, file), "study." + k, "", "unknown key in study",
            base::DidYouMean(k, keys));
  }
  auto scalar = [&](const char* key, std::string& outv) {
    if (const YAML::Node n = m[key]) {
      if (n.IsScalar()) outv = n.Scalar();
      else d.Add(base::LocationOf(n, file), std::string("study.") + key, "", "expected a single value");
    }
  };
  scalar("name", st.name);
  scalar("citation", st.citation);
  scalar("prices", st.prices);
  scalar("baseline", st.baseline);
  if (const YAML::Node f = m["fabrics"]) st.fabrics = ParseFabrics(f, "study.fabrics", file, d);
  const YAML::Node cases = m["cases"];
  if (!cases || !cases.IsSequence() || cases.size() == 0) {
    d.Add(base::LocationOf(cases ? cases : m, file), "study.cases", "",
          "expected a non-empty sequence of cases");
    return false;
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    const YAML::Node c = cases[i];
    const std::string at = "study.cases[" + std::to_string(i) + "]";
    StudyCase sc;
    sc.where = base::LocationOf(c, file);
    if (!c.IsMap()) {
      d.Add(sc.where, at, "", "expected a map (name, model, fabrics, set, training, workload)");
      continue;
    }
    for (const auto& kv : c) {
      const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (std::find(case_keys.begin(), case_keys.end(), k) == case_keys.end())
        d.Add(base::LocationOf(kv.first, file), at + "." + k, "", "unknown key in a study case",
              base::DidYouMean(k, case_keys));
    }
    if (c["name"] && c["name"].IsScalar()) sc.name = c["name"].Scalar();
    if (c["model"] && c["model"].IsScalar()) sc.model = c["model"].Scalar();
    else d.Add(sc.where, at + ".model", "", "required key is missing (a model preset name)");
    sc.fabrics = c["fabrics"] ? ParseFabrics(c["fabrics"], at + ".fabrics", file, d) : st.fabrics;
    if (sc.fabrics.empty() && !c["fabrics"])
      d.Add(sc.where, at + ".fabrics", "", "no fabrics: give study.fabrics or the case's own");
    if (const YAML::Node s = c["set"]) {
      if (!s.IsMap()) d.Add(base::LocationOf(s, file), at + ".set", "", "expected a map of path: value");
      else
        for (const auto& kv : s)
          sc.sets.emplace_back(kv.first.Scalar() + "=" + (kv.second.IsScalar() ? kv.second.Scalar() : ""),
                               base::LocationOf(kv.second, file));
    }
    sc.training = c["training"];
    sc.workload = c["workload"];
    if (!sc.training || !sc.workload)
      d.Add(sc.where, at, "", "a case needs `training` and `workload` maps");
    st.cases.push_back(std::move(sc));
  }
  if (st.baseline.empty() && !st.fabrics.empty()) st.baseline = st.fabrics.front().first;
  return d.size() == before;
}

}  // namespace

double FabricStudy::VsBaseline(const FabricStudyRow& r, double FabricStudyRow::*field) const {
  if (r.base_index < 0) return 0;
  const double b = rows[static_cast<size_t>(r.base_index)].*field;
  return b > 0 ? r.*field / b - 1 : 0;
}

bool RunFabricStudy(const std::string& file, const std::string& config_dir, FabricStudy& out,
                    base::Diagnostics& d, const std::function<bool(uint64_t, uint64_t)>& step) {
  const engine::PresetStore store(config_dir);
  Study st;
  ParseStudy(file, st, d);
  hardware::PriceSpec prices;
  if (d.ok()) LoadPrices(st.prices, store.dir(), prices, d);
  if (!d.ok()) return false;
  out.name = st.name;
  out.citation = st.citation;
  out.prices = prices.name;
  out.baseline = st.baseline;
  out.rows.clear();
  uint64_t total = 0, done = 0;
  for (const StudyCase& c : st.cases) total += c.fabrics.size();
  for (const StudyCase& c : st.cases) {
    int base_row = -1;
    for (const auto& [label, preset] : c.fabrics) {
      engine::Scenario s;
      s.file = file;
      s.name = c.name;
      engine::LoadModelPreset(c.model, store, c.where, "study.case.model", s.model, d);
      engine::LoadSystemPreset(preset, store, c.where, "study.case.fabrics." + label, s.system, d);
      if (c.training)
        parallelism::TrainingPlanSchema().Parse(c.training, "study.case.training", file, s.training, d);
      if (c.workload)
        parallelism::WorkloadSchema().Parse(c.workload, "study.case.workload", file, s.workload, d);
      for (const auto& [assignment, where] : c.sets) engine::ApplyOverride(s, assignment, d, &where);
      if (!d.ok()) break;
      hardware::CheckSystem(s.system, "study.case.fabrics." + label, c.where, d);
      engine::CrossCheck(s, d);
      if (!d.ok()) break;
      const engine::TrainingEstimator est(s.model, s.system);
      const engine::TrainingEstimate e = est.Run(s.training, s.workload);
      const hardware::SystemCost cost = hardware::CountParts(s.system, prices);
      FabricStudyRow r;
      r.case_name = c.name;
      r.fabric = label;
      r.system = s.system.name;
      r.model = s.model.name;
      r.devices = hardware::DeviceCount(s.system);
      r.feasible = e.feasible();
      if (!r.feasible) r.reason = engine::ExplainInfeasible(e, s);
      r.iteration_s = e.iteration_s;
      r.ep_comm_s = e.time.ep_comm;
      r.dp_comm_s = e.time.dp_comm;
      r.tp_comm_s = e.time.tp_comm;
      r.pp_s = e.time.pp_p2p;
      r.fabric_cost = cost.fabric_cost;
      r.fabric_power = cost.fabric_power;
      r.scale_out_cost = cost.scale_out_cost;
      r.scale_out_power = cost.scale_out_power;
      r.device_cost = cost.device_cost;
      r.baseline = label == st.baseline;
      if (r.baseline) base_row = static_cast<int>(out.rows.size());
      out.rows.push_back(std::move(r));
      if (step && !step(++done, total)) return false;
    }
    if (!d.ok()) break;
    for (auto& r : out.rows)
      if (r.case_name == c.name && r.base_index < 0) r.base_index = base_row;
  }
  return d.ok();
}

}  // namespace orrery::studies
