// The table and CSV of `orrery plan`; JSON is orrery::ToJson.

#include "core/api/text.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/api/json.h"
#include "core/base/format.h"
#include "core/base/quantity.h"

namespace orrery::text {

using base::Dimension;
using base::FormatCount;
using base::FormatGrouped;
using base::FormatNumber;
using base::FormatQuantity;

namespace {

const char* ActivationName(models::Activation a) {
  return a == models::Activation::kSwiglu ? "swiglu" : "gelu";
}

// Flattens the JSON to "path,value" rows.
void Flatten(const nlohmann::ordered_json& j, const std::string& prefix, std::ostream& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) Flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else if (j.is_array() && !j.empty() && !j[0].is_string()) {
    for (size_t i = 0; i < j.size(); ++i) Flatten(j[i], prefix + "[" + std::to_string(i) + "]", out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      std::string s = j[i].get<std::string>();
      for (char& c : s)
        if (c == '"') c = '\'';
      out << prefix << "[" << i << "],\"" << s << "\"\n";
    }
  } else if (j.is_string()) {
    std::string s = j.get<std::string>();
    for (char& c : s)
      if (c == '"') c = '\'';
    out << prefix << ",\"" << s << "\"\n";
  } else {
    out << prefix << "," << j.dump() << "\n";
  }
}

std::string Sci(double v) { return std::isfinite(v) ? FormatNumber(v, 4) : "inf"; }
std::string Days(double v) { return std::isfinite(v) ? FormatNumber(v, 4) : "inf"; }
// GPU-hours and GPU counts as a planner reads them: 62.57 k, 3.22 M.
std::string Count(double v, std::string_view unit) {
  if (std::isfinite(v)) return FormatCount(v, unit);
  return unit.empty() ? std::string("inf") : "inf " + std::string(unit);
}
std::string Money(double usd) {
  if (!std::isfinite(usd)) return "inf";
  if (usd >= 1e6) return FormatNumber(usd / 1e6, 4) + " M USD";
  if (usd >= 1e3) return FormatNumber(usd / 1e3, 4) + " k USD";
  return FormatNumber(usd, 4) + " USD";
}
std::string Span(double lo, double hi) {
  return Sci(lo) + " .. " + Sci(hi);
}

}  // namespace

void PrintPlanTable(const PlanResult& res, std::ostream& out) {
  const engine::LawWithUncertainty& law = res.law;
  const engine::FamilySpec& family = res.family;
  const engine::PlanRequest& req = res.chain;
  const engine::PlanResult& r = res.plan;
  const engine::ChainPoint& p = r.point;
  const auto& L = law.point;
  const bool range = r.has_range;
  const std::string pct = FormatNumber(100 * r.level, 3) + " %";
  out << "1 law        " << law.name << ": L = " << FormatNumber(L.E, 5) << " + "
      << FormatNumber(L.A, 5) << "/N^" << FormatNumber(L.alpha, 4) << " + " << FormatNumber(L.B, 5)
      << "/D^" << FormatNumber(L.beta, 4) << "\n             " << law.source << "\n";
  if (range)
    out << "             " << law.samples.size() << " bootstrap replicates; ranges below are "
        << pct << " intervals over " << r.range_samples << " of them\n";

  out << "2 N and D    ";
  switch (req.goal) {
    case engine::PlanGoal::kLoss:
      out << (req.inference_tokens > 0
                  ? "cheapest training + inference (" + Sci(req.inference_tokens) +
                        " inference tokens, Sardana et al. 2023) reaching loss "
                  : "cheapest training run reaching loss ")
          << FormatNumber(req.target_loss, 5) << "\n";
      break;
    case engine::PlanGoal::kBudget:
      out << "compute-optimal split of " << Sci(req.budget_flops) << " FLOP (Hoffmann et al. 2022 Eq. 4)\n";
      break;
    case engine::PlanGoal::kGpuDays:
      out << "compute-optimal budget that " << req.gpus << " GPUs train in " << Days(req.days)
          << " days\n";
      break;
  }
  out << "             N = " << Sci(p.params_n) << " parameters, D = " << Sci(p.tokens_d)
      << " tokens (" << FormatNumber(p.tokens_d / p.params_n, 3) << " per parameter)\n"
      << "             C = " << FormatNumber(req.flops_per_param_token) << " N D = "
      << Sci(p.compute_flops) << " FLOP, predicted loss " << FormatNumber(p.loss, 5) << "\n";
  if (p.inference_flops > 0)
    out << "             inference: " << Sci(p.inference_flops) << " FLOP (2 N per token)\n";
  if (range)
    out << "             range: N " << Span(r.params_n.lo, r.params_n.hi) << ", D "
        << Span(r.tokens_d.lo, r.tokens_d.hi) << ", C " << Span(r.compute_flops.lo, r.compute_flops.hi)
        << ", loss " << FormatNumber(r.loss.lo, 5) << " .. " << FormatNumber(r.loss.hi, 5) << "\n";

  const auto& m = p.model;
  out << "3 model      " << m.name << " (" << family.name << " family): " << m.layers
      << " layers, d_model " << m.hidden << ", " << m.heads << " heads (" << res.kv_heads
      << " KV) of " << res.head_dim << ", " << ActivationName(m.activation) << " ffn "
      << res.ffn << ", vocab " << m.vocab << "\n"
      << "             " << Sci(p.model_params) << " parameters ("
      << FormatNumber(100 * (p.model_params / p.params_n - 1), 3) << " % vs N), d_model/layers "
      << FormatNumber(static_cast<double>(m.hidden) / static_cast<double>(m.layers), 4) << "\n";
  if (p.best.found)
    out << "             engine: " << FormatNumber(p.model_flops_per_token / p.model_params, 4)
        << " FLOP per parameter per token (vs " << FormatNumber(req.flops_per_param_token)
        << " in C = k N D)\n";

  // Without a price the cost is not stated, rather than printed as 0 USD.
  const bool priced = r.system.price_per_device_hour > 0;
  out << "4 system     " << r.system.name << ": " << p.gpus << " x " << r.system.device.name
      << ", PUE " << FormatNumber(r.system.pue, 3) << ", TDP "
      << FormatQuantity(r.system.device.tdp, Dimension::kPower) << ", "
      << (priced ? FormatNumber(r.system.price_per_device_hour * 3600, 4) + " USD per GPU-hour"
                 : std::string("no price per GPU-hour"))
      << "\n";

  if (!p.best.found) {
    out << "5 plan       INFEASIBLE: " << p.infeasible << "\n";
  } else {
    const auto& pl = p.best.plan;
    const auto& e = p.best.estimate;
    out << "5 plan       tp " << pl.tp << ", pp " << pl.pp
        << (pl.interleave > 1 ? " (interleave " + std::to_string(pl.interleave) + ")" : "")
        << (pl.cp > 1 ? ", cp " + std::to_string(pl.cp) : "") << ", dp " << e.dp << ", micro-batch " << pl.micro_batch << " (" << e.microbatches
        << " per iteration), recompute " << parallelism::RecomputeName(pl.recompute) << ", ZeRO-" << pl.zero
        << (pl.sequence_parallel ? ", sequence parallel" : "")
        << (pl.tp_comm_overlap ? ", TP overlap" : "") << "\n"
        << "             orrery search: best of " << FormatGrouped(p.best.candidates) << " plans ("
        << FormatGrouped(p.best.evaluated) << " estimated, " << FormatGrouped(p.best.feasible)
        << " feasible): iteration " << FormatQuantity(e.iteration_s, Dimension::kTime) << " for "
        << p.global_batch << " x " << p.seq_len << " tokens, MFU "
        << FormatNumber(100 * e.mfu, 3) << " %, "
        << base::FormatBytes(e.memory.total()) << " of " << base::FormatBytes(e.memory_capacity)
        << " per GPU\n";
    if (!p.infeasible.empty()) out << "             INFEASIBLE: " << p.infeasible << "\n";
    out << "6 training   " << FormatGrouped(static_cast<uint64_t>(std::max<int64_t>(0, p.steps))) << " steps (" << Sci(p.tokens_trained) << " tokens, "
        << Sci(p.train_model_flops) << " model FLOP)\n"
        << "             " << Days(p.days) << " days, " << Count(p.gpu_hours, "GPU-hours") << ", "
        << FormatNumber(p.energy_j / 3.6e9, 4) << " MWh" << (priced ? ", " + Money(p.cost_usd) : "")
        << " without failures\n";
    const goodput::Result& g = p.goodput;
    out << "             goodput " << FormatNumber(100 * g.goodput, 3) << " %: "
        << Days(p.effective_days) << " effective days, " << Count(p.effective_gpu_hours, "GPU-hours")
        << ", " << FormatNumber(g.effective_energy_j / 3.6e9, 4) << " MWh"
        << (priced ? ", " + Money(p.effective_cost_usd) : "");
    if (r.system.grid_co2_kg_per_kwh > 0) out << ", " << Sci(g.carbon_kg / 1000) << " t CO2e";
    if (std::isfinite(g.in.mtbf_s))
      out << " (a failure every " << FormatQuantity(g.in.mtbf_s, Dimension::kTime)
          << ", checkpoint of " << base::FormatBytes(g.in.checkpoint_bytes)
          << " every " << FormatQuantity(g.interval_s, Dimension::kTime) << ")";
    out << "\n";
    if (res.goodput_mc && !res.goodput_mc->skipped.empty())
      out << "             Monte-Carlo not run: " << res.goodput_mc->skipped << "\n";
    if (res.goodput_mc && res.goodput_mc->runs > 0)
      out << "             Monte-Carlo " << res.goodput_mc->runs << " runs (seed " << res.goodput_mc->seed
          << "): mean " << Days(res.goodput_mc->mean_s / 86400) << ", p50 "
          << Days(res.goodput_mc->p50_s / 86400) << ", p90 " << Days(res.goodput_mc->p90_s / 86400)
          << " days, " << FormatNumber(res.goodput_mc->mean_failures, 3) << " failures per run\n";
    if (range)
      out << "             range: " << Days(r.effective_days.lo) << " .. "
          << Days(r.effective_days.hi) << " effective days\n";
    if (range)
      out << "             range: " << Days(r.days.lo) << " .. " << Days(r.days.hi) << " days, "
          << Count(r.gpu_hours.lo, "") << " .. " << Count(r.gpu_hours.hi, "GPU-hours") << ", "
          << FormatNumber(r.energy_j.lo / 3.6e9, 4) << " .. " << FormatNumber(r.energy_j.hi / 3.6e9, 4)
          << " MWh" << (priced ? ", " + Money(r.cost_usd.lo) + " .. " + Money(r.cost_usd.hi) : "")
          << (req.deadline_days > 0 ? ", GPUs " + Count(r.gpus.lo, "") + " .. " + Count(r.gpus.hi, "") : "")
          << "\n";
  }
  if (range && r.range_infeasible > 0)
    out << "             (" << r.range_infeasible << " of " << r.range_samples
        << " replicates found no answer; they count as infinite)\n";
  for (const auto& n : r.notes) out << "note: " << n << "\n";
}

void PrintPlanCsv(const PlanResult& r, std::ostream& out) {
  out << "key,value\n";
  Flatten(ToJson(r), "", out);
}

}  // namespace orrery::text
