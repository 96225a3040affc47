// The text and JSON of heterogeneous estimates and split searches
// (core/hetero): which layers or batch share each pool runs, its stage time,
// and how long its devices wait for the slowest pool.

#include <algorithm>

#include "core/api/json.h"
#include "core/api/text.h"
#include "core/base/format.h"

namespace orrery {

namespace {

using parallelism::HeteroSplit;

std::string PadRight(std::string s, size_t n) {
  if (s.size() < n) s.append(n - s.size(), ' ');
  return s;
}

std::string PadLeft(std::string s, size_t n) {
  if (s.size() < n) s.insert(0, n - s.size(), ' ');
  return s;
}

std::string Share(const hetero::Result& r, const hetero::PoolResult& p) {
  if (r.split == HeteroSplit::kPipeline)
    return std::to_string(p.layers) + " (" + std::to_string(p.first_layer) + "-" +
           std::to_string(p.first_layer + p.layers - 1) + ")";
  return std::to_string(p.batch);
}

void PoolTable(const hetero::Result& r, const std::string& indent, std::ostream& out) {
  const bool pipe = r.split == HeteroSplit::kPipeline;
  size_t name_w = 6, dev_w = 8;
  for (const auto& p : r.pools) {
    name_w = std::max(name_w, p.name.size() + 2);
    dev_w = std::max(dev_w, p.device.size() + 2);
  }
  out << indent << "pool  " << PadRight("name", name_w) << PadRight("device", dev_w) << "devices  "
      << (pipe ? "stages  layers      " : "dp  sequences  ") << PadLeft(pipe ? "stage/mb" : "alone", 10)
      << PadLeft("busy", 11) << PadLeft("idle", 8) << PadLeft("energy", 11) << "\n";
  for (size_t g = 0; g < r.pools.size(); ++g) {
    const hetero::PoolResult& p = r.pools[g];
    out << indent << PadRight(std::to_string(g), 6) << PadRight(p.name, name_w) << PadRight(p.device, dev_w)
        << PadLeft(std::to_string(p.devices), 7) << "  ";
    if (pipe)
      out << PadLeft(std::to_string(p.stages), 6) << "  " << PadRight(Share(r, p), 12);
    else
      out << PadLeft(std::to_string(p.dp), 2) << "  " << PadLeft(Share(r, p), 9) << "  ";
    out << PadLeft(base::FormatTime(pipe ? p.stage_s : p.own_s), 10) << PadLeft(base::FormatTime(p.busy_s), 11)
        << PadLeft(base::FormatPercent(p.idle_fraction), 8) << PadLeft(base::FormatEnergy(p.energy_j), 11)
        << "\n";
  }
}

void Summary(const hetero::Result& r, const std::string& indent, std::ostream& out) {
  const bool pipe = r.split == HeteroSplit::kPipeline;
  out << indent << "iteration " << base::FormatTime(r.iteration_s);
  if (pipe)
    out << " = pipeline " << base::FormatTime(r.pipeline_s) << " (" << r.microbatches
        << " microbatches; the slowest stage paces) + gradient sync and optimizer "
        << base::FormatTime(r.sync_s) << " (slowest pool)";
  else
    out << " = slowest pool " << base::FormatTime(r.iteration_s - r.cross_pool_s)
        << " + all-reduce between pools " << base::FormatTime(r.cross_pool_s);
  out << "\n"
      << indent << "throughput " << base::FormatRate(r.tokens_per_s, "tokens") << "\n"
      << indent << "energy " << base::FormatEnergy(r.energy_j)
      << " per iteration, devices at idle power while they wait (" << base::FormatEnergy(r.energy_at_tdp_j)
      << " with every device at TDP throughout)";
  if (r.cost_usd > 0) out << "; cost " << base::FormatMoney(r.cost_usd) << " per iteration";
  out << "\n";
}

Json PoolJson(const hetero::PoolResult& p) {
  return Json{{"name", p.name},         {"device", p.device},       {"devices", p.devices},
              {"stages", p.stages},     {"dp", p.dp},               {"first_layer", p.first_layer},
              {"layers", p.layers},     {"batch", p.batch},         {"stage_s", p.stage_s},
              {"own_s", p.own_s},       {"busy_s", p.busy_s},       {"idle_s", p.idle_s},
              {"idle_fraction", p.idle_fraction}, {"energy_j", p.energy_j}};
}

}  // namespace

Json HeteroJson(const hetero::Result& r) {
  Json j;
  j["split"] = parallelism::HeteroSplitName(r.split);
  j["feasible"] = r.feasible;
  j["reason"] = r.feasible ? Json() : Json(r.reason);
  j["layers"] = r.layers;
  j["batch"] = r.batch;
  j["microbatches"] = r.microbatches;
  j["iteration_s"] = r.iteration_s;
  j["pipeline_s"] = r.pipeline_s;
  j["sync_s"] = r.sync_s;
  j["cross_pool_s"] = r.cross_pool_s;
  j["tokens_per_s"] = r.tokens_per_s;
  j["energy_j"] = r.energy_j;
  j["energy_at_tdp_j"] = r.energy_at_tdp_j;
  j["cost_usd"] = r.cost_usd;
  Json pools = Json::array();
  for (const auto& p : r.pools) pools.push_back(PoolJson(p));
  j["pools"] = pools;
  return j;
}

Json HeteroSearchJson(const hetero::SplitSearch& s) {
  Json j;
  j["splits"] = s.splits;
  j["truncated"] = s.truncated;
  j["feasible"] = s.feasible;
  j["naive"] = HeteroJson(s.naive);
  Json top = Json::array();
  for (const auto& r : s.top) top.push_back(HeteroJson(r));
  j["top"] = top;
  if (s.top.empty()) j["why_none"] = s.why_none;
  return j;
}

namespace text {

void PrintHeteroEstimate(const EstimateResult& r, std::ostream& out) {
  const engine::Scenario& s = r.scenario;
  const hetero::Result& h = *r.hetero;
  const auto& p = s.training;
  int64_t devices = 0;
  for (size_t g = 0; g < hetero::PoolCount(s.system); ++g)
    devices += hardware::DeviceCount(hetero::PoolSystem(s.system, g));
  out << "scenario   " << (s.name.empty() ? s.file : s.name) << "\n"
      << "model      " << s.model.name << " (" << base::FormatCount(r.parameters, "parameters") << ")\n"
      << UnreadKeysLine(s.model)
      << "system     " << s.system.name << ": " << hetero::PoolCount(s.system) << " device pools, "
      << devices << " devices\n"
      << "plan       " << parallelism::HeteroSplitName(h.split) << " split over the pools, tp " << p.tp
      << ", " << (h.split == HeteroSplit::kPipeline ? "pp " + std::to_string(p.pp) + " in all" : "pp " + std::to_string(p.pp) + " per pool")
      << ", micro-batch " << p.micro_batch << ", recompute " << parallelism::RecomputeName(p.recompute)
      << "\n";
  if (!h.feasible) {
    out << "\nINFEASIBLE: " << h.reason << "\n";
    return;
  }
  out << "\n";
  PoolTable(h, "", out);
  out << (h.split == HeteroSplit::kPipeline
              ? "(stage/mb: the pool's slowest stage per microbatch, forward and backward; "
              : "(alone: the pool's iteration on its share before the pools' all-reduce; ")
      << "busy and idle\n per device and iteration; idle: pipeline bubbles and waiting for the slowest "
         "stage or pool)\n\n";
  Summary(h, "", out);
}

void PrintHeteroSearch(const SearchResult& r, std::ostream& out) {
  const engine::Scenario& s = r.scenario;
  const hetero::SplitSearch& h = *r.hetero;
  const bool pipe = s.hetero.split == HeteroSplit::kPipeline;
  out << "search     " << s.model.name << " on " << hetero::PoolCount(s.system) << " device pools, "
      << (pipe ? "layers per pool (pipeline split)" : "batch share per pool (data split)") << ", objective "
      << engine::ObjectiveName(r.objective) << "\n"
      << "space      " << h.splits << " splits, " << h.feasible << " fit"
      << (h.truncated ? " (stopped at the limit: the best of these, not of every split)" : "") << "\n";
  if (h.naive.feasible) {
    out << "naive      " << (pipe ? "layers " + parallelism::CountListText(h.naive.layers)
                                    : "batch " + parallelism::CountListText(h.naive.batch))
        << ": " << base::FormatTime(h.naive.iteration_s) << " per iteration, "
        << base::FormatEnergy(h.naive.energy_j) << "\n";
  } else if (!h.naive.reason.empty()) {
    out << "naive      infeasible: " << h.naive.reason << "\n";
  }
  for (size_t i = 0; i < h.top.size(); ++i) {
    const hetero::Result& t = h.top[i];
    out << "\n#" << i + 1 << "  " << (pipe ? "layers " + parallelism::CountListText(t.layers)
                                            : "batch " + parallelism::CountListText(t.batch))
        << ": " << base::FormatTime(t.iteration_s) << " per iteration";
    if (h.naive.feasible && t.iteration_s > 0)
      out << " (x " << base::FormatPlain(h.naive.iteration_s / t.iteration_s, 3) << " the naive split's speed)";
    out << "\n";
    PoolTable(t, "    ", out);
    Summary(t, "    ", out);
  }
  if (h.top.empty()) out << "\nno split fits: " << h.why_none << "\n";
}

}  // namespace text
}  // namespace orrery
