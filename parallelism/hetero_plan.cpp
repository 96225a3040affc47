#include "parallelism/hetero_plan.h"

#include "core/base/yaml_source.h"

namespace orrery::parallelism {

const char* HeteroSplitName(HeteroSplit s) {
  switch (s) {
    case HeteroSplit::kPipeline: return "pipeline";
    case HeteroSplit::kData: return "data";
  }
  return "?";
}

const base::Schema<HeteroPlan>& HeteroPlanSchema() {
  static const base::Schema<HeteroPlan> schema = [] {
    base::Schema<HeteroPlan> s(
        "hetero",
        "How the plan uses the device pools of a heterogeneous system (system.pools; "
        "docs/heterogeneous.md). Only for systems with pools.");
    s.Enum("split", &HeteroPlan::split,
           {{"pipeline", HeteroSplit::kPipeline}, {"data", HeteroSplit::kData}}, "pipeline",
           "pipeline: the pipeline runs through the pools in order, pool 0 (the system's own "
           "devices) first, each pool on devices / (tp x cp x dp) stages; data: every pool runs the "
           "whole model (tp, pp, cp of the plan, dp filling the pool) on its share of the batch.")
        .String("layers", &HeteroPlan::layers, "",
                "Pipeline split: layers per pool in pipeline order, e.g. [24, 56] (sum = the "
                "model's layers); empty = in proportion to each pool's stages.")
        .String("batch", &HeteroPlan::batch, "",
                "Data split: sequences of the global batch per pool, e.g. [640, 1408] (sum = "
                "workload.global_batch); empty = in proportion to each pool's devices.");
    return s;
  }();
  return schema;
}

bool ParseCountList(const std::string& text, std::vector<int64_t>& out, std::string& why) {
  out.clear();
  std::string cur;
  auto flush = [&]() {
    if (cur.empty() || cur.size() > 9 || cur.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(cur) < 1) {
      why = "expected whole numbers >= 1 separated by commas, e.g. 24,56; got '" + text + "'";
      return false;
    }
    out.push_back(std::stoll(cur));
    cur.clear();
    return true;
  };
  if (text.find_first_not_of(' ') == std::string::npos) return true;
  for (char c : text) {
    if (c == ' ' || c == '[' || c == ']') continue;
    if (c == ',') {
      if (!flush()) return false;
    } else {
      cur += c;
    }
  }
  return flush();
}

std::string CountListText(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

void ParseHeteroPlan(const YAML::Node& map, const std::string& path, const std::string& file,
                     HeteroPlan& out, base::Diagnostics& diags) {
  HeteroPlanSchema().Parse(map, path, file, out, diags, {"layers", "batch"});
  out.given = true;
  if (!map.IsMap()) return;
  for (const char* key : {"layers", "batch"}) {
    const YAML::Node n = map[key];
    if (!n) continue;
    const std::string at = path + "." + key;
    std::string text;
    if (n.IsScalar()) {
      text = n.Scalar();
    } else if (n.IsSequence()) {
      for (size_t i = 0; i < n.size(); ++i) {
        if (!n[i].IsScalar()) {
          diags.Add(base::LocationOf(n[i], file), at + "[" + std::to_string(i) + "]", "",
                    "expected a whole number");
          return;
        }
        text += (i ? "," : "") + n[i].Scalar();
      }
    } else {
      diags.Add(base::LocationOf(n, file), at, "", "expected a list of whole numbers, e.g. [24, 56]");
      continue;
    }
    std::vector<int64_t> v;
    std::string why;
    if (!ParseCountList(text, v, why)) {
      diags.Add(base::LocationOf(n, file), at, text, why);
      continue;
    }
    (std::string(key) == "layers" ? out.layers : out.batch) = text;
  }
}

}  // namespace orrery::parallelism
