// Builds the report model (report.h) from the library's results: the
// closed-form estimator, the search, the event engine, the planner and the
// validation harness. Every number the document shows is set here.

#include "core/report/report.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/csv.h"
#include "core/base/quantity.h"
#include "core/base/yaml_source.h"
#include "core/estimate/event_estimator.h"
#include "core/estimate/training_estimator.h"
#include "core/goodput/goodput.h"
#include "core/report/report_format.h"
#include "hardware/network.h"
#include "core/search/result_store.h"
#include "core/validation/validation.h"
#include "models/transformer.h"
#include "scaling_laws/law_presets.h"

#ifndef ORRERY_VALIDATION_DIR_DEFAULT
#define ORRERY_VALIDATION_DIR_DEFAULT "validation"
#endif

namespace orrery::report {

using engine::Scenario;
using engine::TrainingEstimate;

namespace {

// "Eos (DGX H100 SuperPOD)" -> "Eos": the headline names the machine, the
// details stand elsewhere in the report.
std::string SystemFamily(const std::string& name) {
  const size_t paren = name.find(" (");
  return paren == std::string::npos ? name : name.substr(0, paren);
}

std::string PlanText(const parallelism::TrainingPlan& p, int64_t dp) {
  std::string s = "TP " + std::to_string(p.tp) + " · PP " + std::to_string(p.pp);
  if (p.interleave > 1) s += " (interleave " + std::to_string(p.interleave) + ")";
  // A schedule other than 1F1B (or its interleaved form, said above) is named.
  if (p.pp > 1 && !parallelism::TakesInterleave(p.schedule))
    s += std::string(" (") + parallelism::ScheduleName(p.schedule) + ")";
  s += " · DP " + std::to_string(dp);
  if (p.cp > 1) s += " · CP " + std::to_string(p.cp);
  if (p.ep > 1) s += " · EP " + std::to_string(p.ep);
  s += " · micro-batch " + std::to_string(p.micro_batch);
  s += " · ZeRO-" + std::to_string(p.zero);
  if (p.recompute != parallelism::Recompute::kNone)
    s += std::string(" · ") + parallelism::RecomputeName(p.recompute) + " recompute";
  if (p.sequence_parallel) s += " · sequence parallel";
  if (p.offload_optimizer) s += " · optimizer offload";
  return s;
}

// Exposed seconds by cause, in the order a reader follows a step; parts
// that are zero are left out.
std::vector<TimePart> Parts(const engine::TimeBreakdown& t) {
  const std::pair<const char*, double> all[] = {
      {"forward", t.forward},          {"backward", t.backward},
      {"recompute", t.recompute},      {"TP communication", t.tp_comm},
      {"CP communication", t.cp_comm}, {"EP communication", t.ep_comm},
      {"pipeline bubble", t.pp_bubble}, {"pipeline transfers", t.pp_p2p},
      {"DP communication", t.dp_comm}, {"optimizer", t.optimizer},
      {"offload", t.offload}};
  std::vector<TimePart> out;
  for (const auto& [n, v] : all)
    if (v > 0) out.push_back({n, v});
  return out;
}

double CommAndBubble(const engine::TimeBreakdown& t) {
  return t.tp_comm + t.cp_comm + t.ep_comm + t.pp_bubble + t.pp_p2p + t.dp_comm + t.offload;
}

PlanRow Row(const std::string& label, const Scenario& s, const TrainingEstimate& e) {
  PlanRow r;
  r.label = label;
  r.device = s.system.device.name;
  r.gpus = hardware::DeviceCount(s.system);
  r.system = SystemFamily(s.system.name);
  const auto& p = s.training;
  r.tp = p.tp;
  r.pp = p.pp;
  r.cp = p.cp;
  r.ep = p.ep;
  r.dp = e.dp > 0 ? e.dp : engine::DataParallel(s);
  r.interleave = p.interleave;
  r.micro_batch = p.micro_batch;
  r.microbatches = e.microbatches;
  r.zero = p.zero;
  r.recompute = parallelism::RecomputeName(p.recompute);
  r.sequence_parallel = p.sequence_parallel;
  r.global_batch = s.workload.global_batch;
  r.seq_len = s.workload.seq_len;
  r.plan = PlanText(p, r.dp);
  r.feasible = e.feasible();
  if (!r.feasible) r.reason = engine::ExplainInfeasible(e, s);
  r.iteration_s = e.iteration_s;
  r.mfu = e.mfu;
  r.mfu_causal = e.mfu_causal;
  r.tokens_per_s = e.tokens_per_s;
  r.memory_bytes = e.memory.total();
  r.capacity_bytes = e.memory_capacity;
  r.host_bytes = e.memory.host_optimizer + e.memory.host_activations;
  if (r.feasible) r.time = Parts(e.time);
  r.train_tokens = s.workload.train_tokens;
  r.days = e.train_time_s / 86400;
  r.gpu_hours = e.train_device_hours;
  r.energy_mwh = e.train_energy_j / 3.6e9;
  r.cost_usd = e.train_cost_usd;
  if (r.feasible) {
    const goodput::Result g = goodput::Evaluate(goodput::MakeInputs(
        s.system, p, models::ParameterCount(s.model, s.workload.seq_len), e.iteration_s,
        e.train_time_s));
    r.goodput = g.goodput;
    r.effective_days = e.train_time_s > 0 ? g.effective_s / 86400 : 0;
    r.checkpoint_interval_s = g.interval_s;
  }
  return r;
}

TrainingEstimate Estimate(const Scenario& s) {
  const engine::TrainingEstimator est(s.model, s.system);
  return est.Run(s.training, s.workload);
}

// The search space of a report: the planner's (no optimizer offload, the
// default group order, micro-batches up to 8, context parallelism in), which
// keeps a search over a GPU range in seconds on a small machine.
engine::PlanSpaceOptions ReportSpace() { return engine::PlanSpace{}.search; }

// Whether a ranked plan can run as scheduled. The closed form prices an
// interleaved pipeline with fewer microbatches than a multiple of pp with its
// (p - 1) / (v m) bubble, but Megatron-LM refuses that shape and so does the
// event engine (parallelism/step_graph.cpp, StepError::kInterleaveMultiple):
// a report does not recommend a plan nobody can launch.
bool Runnable(const Scenario& s, const engine::SearchCandidate& c) {
  const parallelism::TrainingPlan p = engine::PlanOf(s, c.knobs);
  return !(p.interleave > 1 && p.pp > 1 && c.estimate.microbatches % p.pp != 0);
}

// Search at each count, merged: the overall top 5 and each count's best.
// Each count ranks its 20 best (200, 2,000, ... when fewer than five of them
// pass Runnable()); pruning never changes the top K (core/search/search.h).
struct RangeSearch {
  engine::SearchResult merged;
  std::vector<std::pair<int64_t, engine::SearchResult>> per_count;
  uint64_t unrunnable = 0;  // ranked plans left out by Runnable()
};
RangeSearch SearchCounts(const Scenario& s, const std::vector<int64_t>& counts,
                         engine::Objective objective, int threads) {
  RangeSearch out;
  std::vector<engine::SearchResult> parts;
  for (const int64_t n : counts) {
    engine::SearchResult r;
    std::vector<engine::SearchCandidate> kept;
    uint64_t dropped = 0;
    // Widen the ranking until five runnable plans remain (or the space is exhausted).
    for (int top = 20; top <= 20000; top *= 10) {
      engine::SearchOptions o;
      o.top = top;
      o.objective = objective;
      o.threads = threads;
      o.space = ReportSpace();
      o.device_counts = {n};
      r = engine::Search(s, o);
      kept.clear();
      dropped = 0;
      for (auto& c : r.top) {
        if (!Runnable(s, c)) {
          ++dropped;
          continue;
        }
        if (kept.size() < 5) kept.push_back(c);
      }
      if (kept.size() >= 5 || r.top.size() < static_cast<size_t>(top)) break;
    }
    out.unrunnable += dropped;
    if (kept.empty() && !r.top.empty())
      r.why_none = "every plan that fits needs an interleaved pipeline with fewer microbatches than a multiple of "
                   "its stages, which Megatron-LM cannot schedule";
    r.top = std::move(kept);
    parts.push_back(r);
    out.per_count.emplace_back(n, std::move(r));
  }
  out.merged = engine::MergeSearchResults(parts, 5);
  if (out.merged.top.empty() && !parts.empty()) out.merged.why_none = parts.back().why_none;
  return out;
}

// A task kind as the legend names it (the breakdown's names where they match).
const char* KindName(parallelism::TaskKind k) {
  using parallelism::TaskKind;
  switch (k) {
    case TaskKind::kForward: return "forward";
    case TaskKind::kBackward: return "backward";
    case TaskKind::kBackwardInput: return "backward (input gradients)";
    case TaskKind::kBackwardWeight: return "backward (weight gradients)";
    case TaskKind::kRecompute: return "recompute";
    case TaskKind::kTpComm: return "TP communication";
    case TaskKind::kSend: return "pipeline transfers";
    case TaskKind::kGradReduce: return "DP gradient reduction";
    case TaskKind::kParamGather: return "ZeRO parameter gather";
    case TaskKind::kOptimizer: return "optimizer";
    case TaskKind::kOffload: return "offload";
    case TaskKind::kJoin: return "join";
  }
  return "other";
}

// A loss in nats per token, with at least one decimal ("2.0", "1.95").
std::string LossText(double loss) {
  std::string t = FormatSig(loss, 4);
  return t.find('.') == std::string::npos ? t + ".0" : t;
}

// Why `a` ranks above `b`, for a reader: WhyBetter's line, except that a
// tie is called a tie and the knobs that differ are named.
std::string WhyFirst(const engine::SearchCandidate& a, const engine::SearchCandidate& b) {
  std::string why = engine::WhyBetter(a, b);
  const double ta = a.estimate.iteration_s, tb = b.estimate.iteration_s;
  if (tb - ta < 1e-3 * ta) {
    std::string knobs;
    const size_t semi = why.find("; ");
    const size_t colon = why.find(": ");
    if (why.rfind("no breakdown item", 0) == 0 && semi != std::string::npos) knobs = why.substr(semi + 2);
    else if (colon != std::string::npos) knobs = why.substr(colon + 2, why.find(" (iterations") - colon - 2);
    return "practically a tie (steps of " + FormatSig(ta * 1e3, 4) + " ms and " + FormatSig(tb * 1e3, 4) +
           " ms, within 0.1 %)" + (knobs.empty() ? "" : "; from the other plan to this one: " + knobs);
  }
  return why;
}

// One step of `s` on the event engine, as bars per stage and stream.
StepTimeline Timeline(const Scenario& s) {
  StepTimeline t;
  const engine::EventEstimator ev(s.model, s.system);
  engine::EventOptions opt;
  opt.keep_timeline = true;
  const engine::EventEstimate e = ev.Run(s.training, s.workload, opt);
  t.closed_form_s = e.closed_form.iteration_s;
  if (!e.simulated()) {
    t.note = engine::ExplainEventError(e, s);
    if (t.note.empty()) t.note = "the event engine could not simulate this plan";
    return t;
  }
  t.simulated = true;
  t.schedule = parallelism::PipelineScheduleName(e.schedule);
  t.makespan_s = e.timeline.makespan;
  t.bubble_fraction = e.step.bubble_fraction;
  const auto& g = e.graph;
  const int64_t stages = g.stages;
  // Rows: stage x stream, only those that ran something.
  std::vector<std::vector<size_t>> by_row(static_cast<size_t>(stages * parallelism::kStreamsPerStage));
  for (size_t i = 0; i < g.info.size(); ++i) {
    const auto& info = g.info[i];
    if (info.kind == parallelism::TaskKind::kJoin) continue;
    const double a = e.timeline.start[i], b = e.timeline.finish[i];
    if (!(b > a)) continue;
    by_row[static_cast<size_t>(info.stage) * static_cast<size_t>(parallelism::kStreamsPerStage) +
           static_cast<size_t>(info.stream)]
        .push_back(i);
  }
  const char* kStream[] = {"compute", "TP", "PP send", "DP"};
  for (size_t row = 0; row < by_row.size(); ++row) {
    auto& tasks = by_row[row];
    if (tasks.empty()) continue;
    std::sort(tasks.begin(), tasks.end(),
              [&](size_t x, size_t y) { return e.timeline.start[x] < e.timeline.start[y]; });
    const int32_t r = static_cast<int32_t>(t.rows.size());
    t.rows.push_back("stage " + std::to_string(row / parallelism::kStreamsPerStage) + " " +
                     kStream[row % parallelism::kStreamsPerStage]);
    // Back-to-back tasks of one kind merge into one bar (the chart cannot
    // show thousands of microbatch slivers, and the reader does not need them).
    const double gap = 1e-4 * t.makespan_s;
    for (const size_t i : tasks) {
      const std::string kind = KindName(g.info[i].kind);
      const double a = e.timeline.start[i], b = e.timeline.finish[i];
      if (!t.bars.empty() && t.bars.back().row == r && t.bars.back().kind == kind &&
          a - t.bars.back().end_s <= gap) {
        t.bars.back().end_s = std::max(t.bars.back().end_s, b);
        continue;
      }
      t.bars.push_back({r, a, b, kind});
    }
  }
  t.note = "one iteration of one data-parallel replica, " + std::to_string(g.microbatches) +
           " microbatches, " + t.schedule + " schedule; consecutive tasks of one kind drawn as one bar";
  return t;
}

// Scales every point of a curve's efficiency by f, at most 1.
void ScaleCurve(hardware::Curve& c, double f) {
  for (double& y : c.y) y = std::min(1.0, y * f);
}

std::string CurveRange(const hardware::Curve& c) {
  if (c.y.empty()) return "not set";
  const auto [lo, hi] = std::minmax_element(c.y.begin(), c.y.end());
  return FormatSig(*lo, 2) + "-" + FormatSig(*hi, 2) + " of peak by size";
}

Sensitivity Sensitivities(const Scenario& s, double price_per_gpu_s) {
  Sensitivity out;
  const TrainingEstimate base = Estimate(s);
  const bool priced = price_per_gpu_s > 0;
  const bool trained = s.workload.train_tokens > 0;
  auto answer = [&](const TrainingEstimate& e, double price_factor) {
    if (priced && trained) return e.train_cost_usd * price_factor;
    return trained ? e.train_time_s / 86400 : e.iteration_s;
  };
  out.metric = priced && trained ? "cost" : trained ? "days to train" : "step time";
  out.base_value = answer(base, 1);
  if (!base.feasible() || !(out.base_value > 0)) {
    out.notes.push_back("the plan is infeasible; nothing to perturb");
    return out;
  }
  struct Knob {
    std::string name, value;
    void (*apply)(Scenario&, double);
  };
  std::vector<Knob> knobs;
  knobs.push_back({"GEMM efficiency", CurveRange(s.system.device.gemm_efficiency),
                   [](Scenario& x, double f) {
                     ScaleCurve(x.system.device.gemm_efficiency, f);
                     ScaleCurve(x.system.device.gemm_efficiency_fp8, f);
                     ScaleCurve(x.system.device.gemm_efficiency_mxfp8, f);
                     ScaleCurve(x.system.device.gemm_efficiency_fp4, f);
                   }});
  knobs.push_back({"attention kernel efficiency",
                   FormatSig(s.system.device.flash_attention_efficiency, 2) + " forward, " +
                       FormatSig(s.system.device.flash_attention_bwd_efficiency, 2) + " backward",
                   [](Scenario& x, double f) {
                     auto& d = x.system.device;
                     d.flash_attention_efficiency = std::min(1.0, d.flash_attention_efficiency * f);
                     d.flash_attention_bwd_efficiency = std::min(1.0, d.flash_attention_bwd_efficiency * f);
                   }});
  knobs.push_back({"HBM bandwidth", FormatBandwidth(s.system.device.memory_bandwidth),
                   [](Scenario& x, double f) { x.system.device.memory_bandwidth *= f; }});
  if (!s.system.network.empty()) {
    const auto& in = s.system.network.front();
    knobs.push_back({"scale-up bandwidth (" + in.name + ")",
                     FormatBandwidth(hardware::DeviceTierBandwidth(s.system, 0)) + " per GPU",
                     [](Scenario& x, double f) {
                       x.system.network.front().bandwidth *= f;
                       x.system.device.scaleup_bandwidth *= f;
                     }});
  }
  if (s.system.network.size() > 1) {
    const auto& out_tier = s.system.network.back();
    knobs.push_back({"scale-out bandwidth (" + out_tier.name + ")",
                     FormatBandwidth(out_tier.bandwidth) + " per GPU", [](Scenario& x, double f) {
                       for (size_t i = 1; i < x.system.network.size(); ++i) x.system.network[i].bandwidth *= f;
                     }});
  }
  for (const Knob& k : knobs) {
    SensitivityRow row{k.name, k.value, 0, 0};
    for (const double f : {0.8, 1.2}) {
      Scenario x = s;
      k.apply(x, f);
      const TrainingEstimate e = Estimate(x);
      const double pct = e.feasible() ? 100 * (answer(e, 1) / out.base_value - 1) : 0;
      (f < 1 ? row.low_pct : row.high_pct) = pct;
    }
    out.rows.push_back(row);
  }
  if (priced && trained)
    out.rows.push_back({"price per GPU-hour", FormatMoney(price_per_gpu_s * 3600, 3), -20, 20});
  else
    out.notes.push_back("no price per GPU-hour was given, so the answer is the time to train and the price is not a row");
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const SensitivityRow& a, const SensitivityRow& b) {
    return std::max(std::fabs(a.low_pct), std::fabs(a.high_pct)) >
           std::max(std::fabs(b.low_pct), std::fabs(b.high_pct));
  });
  out.notes.push_back(
      "each input moved by -20 % and +20 % with the recommended plan held fixed (efficiencies capped at 1)");
  out.notes.push_back(
      "failure rate is not a row: the answer is failure-free; the plans' effective days add "
      "interruptions, restarts and checkpoint time at the system's failure rates (docs/goodput.md)");
  return out;
}

Confidence ConfidenceFor(const Scenario& s, const std::string& csv_file,
                         const engine::PresetStore& store) {
  Confidence c;
  base::Diagnostics d;
  const engine::ValidationReport v = engine::ValidateTrainingCsv(csv_file, store, d);
  const auto table = base::ReadCsvFile(csv_file);
  if (!d.ok() || !table.ok()) {
    c.statement = "no measured runs could be read (" + csv_file + ")";
    return c;
  }
  const int gpus_col = table->ColumnIndex("gpus"), gpu_col = table->ColumnIndex("gpu");
  std::map<int, std::pair<std::string, int64_t>> by_line;
  for (const auto& row : table->rows) {
    double g = 0;
    if (gpus_col >= 0 && gpu_col >= 0 && base::ParseDouble(row.cells[static_cast<size_t>(gpus_col)], &g))
      by_line[row.line] = {engine::TrimCell(row.cells[static_cast<size_t>(gpu_col)]), static_cast<int64_t>(g)};
  }
  const std::string device = s.system.device_preset;
  const double n = static_cast<double>(hardware::DeviceCount(s.system));
  std::vector<MeasuredRun> same, all;
  engine::ValidationReport on_device;  // every run on this device, for its bias
  for (const auto& r : v.rows) {
    if (!r.error_pct || !by_line.count(r.line)) continue;
    const auto& [gpu, gpus] = by_line[r.line];
    MeasuredRun m{r.model, gpu, gpus, r.metric, r.measured, r.predicted, *r.error_pct, engine::SpeedBiasPct(r),
                  engine::SourceGroup(r.source)};
    const engine::GpuPlacement p = engine::PlaceGpu(gpu, store);
    all.push_back(m);
    if (p.error.empty() && !device.empty() && device == p.device) {
      same.push_back(m);
      on_device.rows.push_back(r);
    }
  }
  engine::Summarise(on_device);
  c.device_runs = on_device.evaluated;
  c.device_speed_bias_pct = on_device.speed_bias_pct;
  std::vector<MeasuredRun>& pool = same.size() >= 3 ? same : all;
  std::string family = same.size() >= 3 ? s.system.device.name + " runs" : "runs on any device";
  std::stable_sort(pool.begin(), pool.end(), [&](const MeasuredRun& a, const MeasuredRun& b) {
    return std::fabs(std::log(static_cast<double>(a.gpus) / n)) <
           std::fabs(std::log(static_cast<double>(b.gpus) / n));
  });
  if (pool.size() > 6) pool.resize(6);
  if (pool.empty()) {
    c.statement = "no measured run in " + csv_file + " could be predicted";
    return c;
  }
  int64_t lo = pool.front().gpus, hi = lo;
  double sum = 0, mx = 0;
  for (const auto& m : pool) {
    lo = std::min(lo, m.gpus);
    hi = std::max(hi, m.gpus);
    sum += std::fabs(m.error_pct);
    mx = std::max(mx, std::fabs(m.error_pct));
  }
  std::sort(pool.begin(), pool.end(), [](const MeasuredRun& a, const MeasuredRun& b) { return a.gpus < b.gpus; });
  c.runs = pool;
  c.mean_abs_error_pct = sum / static_cast<double>(pool.size());
  c.max_abs_error_pct = mx;
  c.basis = family + " from " + FormatCount(lo) + " to " + FormatCount(hi) + " GPUs, the nearest in scale to " +
            FormatCount(static_cast<int64_t>(n));
  c.statement = "Measured runs like this one were predicted within " + FormatSig(mx, 2) + " % (" +
                std::to_string(pool.size()) + " runs; mean error " + FormatSig(c.mean_abs_error_pct, 2) +
                " %).";
  if (same.size() < 3)
    c.statement += " Fewer than three measured runs use this device, so runs on other devices are shown.";
  // Which way: a band says how far, the bias which side of it. Over every
  // run on the device, so that one scale's luck does not set it.
  if (on_device.evaluated >= 3 && std::fabs(on_device.speed_bias_pct) >= 1)
    c.statement += " Over all " + std::to_string(on_device.evaluated) + " measured " + s.system.device.name +
                   " runs the predictions ran " + FormatSig(std::fabs(on_device.speed_bias_pct), 2) + " % " +
                   (on_device.speed_bias_pct > 0 ? "faster" : "slower") + " than measured on average: read the "
                   "step time and the days as " + (on_device.speed_bias_pct > 0 ? "optimistic" : "pessimistic") +
                   " by about that much.";
  const double largest = static_cast<double>(hi);
  if (n > 2 * largest)
    c.statement += " This run is " + FormatSig(n / largest, 2) + "x larger than the largest measured run here, "
                   "so the band is a floor, not a bound.";
  return c;
}

void AddAssumptions(const Scenario& s, double price_per_gpu_s, std::vector<Assumption>& a) {
  const auto& m = s.model;
  const auto& d = s.system.device;
  const auto& sys = s.system;
  const std::string mc = m.citation.empty() ? "model preset (no citation given)" : m.citation;
  a.push_back({"model", m.name,
               FormatSig(models::ParameterCount(m, s.workload.seq_len) / 1e9, 3) + " B parameters, " +
                   std::to_string(m.layers) + " layers, d_model " + std::to_string(m.hidden) + ", " +
                   std::to_string(m.heads) + " heads (" + std::to_string(models::KvHeads(m)) + " KV), FFN " +
                   std::to_string(models::FfnSize(m)) + ", vocabulary " + std::to_string(m.vocab),
               mc});
  const std::string dc = d.citation.empty() ? "device preset (no citation given)" : d.citation;
  a.push_back({"device", d.name + ": peak BF16", FormatFlops(d.peak_bf16), dc});
  a.push_back({"device", "memory capacity", FormatBytes(d.memory_capacity), dc});
  a.push_back({"device", "HBM bandwidth", FormatBandwidth(d.memory_bandwidth), dc});
  a.push_back({"device", "TDP", FormatSig(d.tdp, 3) + " W", dc});
  a.push_back({"device", "GEMM efficiency", CurveRange(d.gemm_efficiency),
               "measured curve in the device profile (" + dc + ")"});
  a.push_back({"device", "attention kernel efficiency",
               FormatSig(d.flash_attention_efficiency, 2) + " forward, " +
                   FormatSig(d.flash_attention_bwd_efficiency, 2) + " backward",
               "device profile (Shah et al. 2024, FlashAttention-3, Fig. 5 for Hopper)"});
  a.push_back({"device", "kernel overhead", base::FormatQuantity(d.kernel_overhead, base::Dimension::kTime),
               "device profile"});
  const std::string sc = sys.citation.empty() ? "system preset (no citation given)" : sys.citation;
  a.push_back({"system", SystemFamily(sys.name), FormatCount(hardware::DeviceCount(sys)) + " GPUs, " +
                                       std::to_string(sys.devices_per_node) + " per node",
               sc});
  for (size_t i = 0; i < sys.network.size(); ++i) {
    const auto& t = sys.network[i];
    a.push_back({"system", "network tier " + t.name,
                 FormatBandwidth(hardware::DeviceTierBandwidth(sys, static_cast<int>(i))) + " per GPU, " +
                     hardware::TopologyName(t.topology) +
                     (t.domain > 0 ? ", " + std::to_string(t.domain) + " GPUs per domain" : ", all GPUs") +
                     ", latency " + base::FormatQuantity(t.latency, base::Dimension::kTime),
                 sc});
  }
  a.push_back({"system", "PUE", FormatSig(sys.pue, 3),
               sys.pue == 1.0 ? "not published for this system; 1.0 means IT power only" : sc});
  a.push_back({"price", "price per GPU-hour",
               price_per_gpu_s > 0 ? FormatMoney(price_per_gpu_s * 3600, 3) : "not priced",
               price_per_gpu_s > 0 ? "given on the command line or in the system preset"
                                   : "no price given; pass --price-per-gpu-hour"});
  a.push_back({"workload", "global batch",
               FormatCount(s.workload.global_batch) + " sequences of " + FormatCount(s.workload.seq_len) +
                   " tokens",
               s.file.empty() ? "the question" : s.file});
  if (s.workload.train_tokens > 0)
    a.push_back({"workload", "tokens to train", FormatTokens(s.workload.train_tokens),
                 s.file.empty() ? "the question" : s.file});
  a.push_back({"plan", "precision", hardware::DataTypeName(s.training.precision),
               "scenario (not searched)"});
  a.push_back({"plan", "energy", "TDP x time x PUE for every GPU", "Orrery's energy model (no idle or network power)"});
}

std::string Today(std::time_t now) {
  char buf[32];
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string DateAfterDays(std::time_t now, double days) {
  return Today(now + static_cast<std::time_t>(std::ceil(days) * 86400));
}

// "Train Llama-3 70B on 15 T tokens: 4,096 H100 for 34 days, 3.3 M GPU-hours, 9.1 GWh, $8.3 M at $2.50/GPU-h."
std::string AnswerSentence(const PlanRow& r, double price_per_gpu_h) {
  if (!r.feasible) return "No feasible plan: " + r.reason;
  std::string s = FormatCount(r.gpus) + " " + ShortDevice(r.device) + " GPUs";
  const std::string mfu = FormatSig(100 * r.mfu, 3) + " % MFU";
  if (!(r.days > 0)) return s + ": " + base::FormatQuantity(r.iteration_s, base::Dimension::kTime) + " per step at " + mfu + ".";
  s += " for " + FormatDays(r.days);
  if (r.effective_days > 0)
    s += " (" + FormatDays(r.effective_days) + " after failures and checkpoints, " +
         FormatSig(100 * r.goodput, 3) + " % goodput)";
  s += ", " + FormatGpuHours(r.gpu_hours) + " GPU-hours, " + FormatEnergyMwh(r.energy_mwh);
  if (price_per_gpu_h > 0)
    return s + ", " + FormatMoney(r.cost_usd, 2) + " at " + FormatMoney(price_per_gpu_h, 3) + "/GPU-hour (" + mfu + ").";
  return s + " at " + mfu + ". No price per GPU-hour was given, so the cost is not stated.";
}

std::string Range(const std::vector<int64_t>& v) {
  if (v.empty()) return "";
  if (v.size() == 1) return FormatCount(v.front());
  return FormatCount(v.front()) + " to " + FormatCount(v.back());
}

std::vector<int64_t> AroundCount(int64_t n, int64_t per_node) {
  std::vector<int64_t> out;
  for (int64_t k = n / 8; k <= n * 8; k *= 2)
    if (k >= per_node && k % per_node == 0) out.push_back(k);
  if (out.empty()) out.push_back(n);
  return out;
}

// Fills everything that follows from the scenario `s` (the question's
// recommended run when plans were searched).
void BuildScenarioSections(const ReportRequest& req, const Scenario& base_scenario,
                           const engine::PresetStore& store, ReportModel& m, Scenario& chosen) {
  const double price_s = base_scenario.system.price_per_device_hour;
  m.price_per_gpu_hour = price_s * 3600;
  m.pue = base_scenario.system.pue;
  const int64_t per_node = base_scenario.system.devices_per_node;
  std::vector<int64_t> scaling = req.scaling_gpus;
  chosen = base_scenario;
  if (req.search) {
    std::vector<int64_t> counts = req.search_gpus;
    if (counts.empty()) counts = {hardware::DeviceCount(base_scenario.system)};
    RangeSearch rs = SearchCounts(base_scenario, counts, req.objective, req.threads);
    const auto& top = rs.merged.top;
    uint64_t space = 0, evaluated = 0;
    for (const auto& [n, r] : rs.per_count) {
      space += r.stats.candidates;
      evaluated += r.stats.evaluated;
    }
    m.search_summary = "Orrery searched " + FormatCount(static_cast<int64_t>(space)) + " plans on " +
                       Range(counts) + " GPUs (" + FormatCount(static_cast<int64_t>(evaluated)) +
                       " estimated in full, the rest pruned by divisibility, memory and a time bound), "
                       "objective: " + engine::ObjectiveName(req.objective) + ".";
    if (rs.unrunnable > 0)
      m.search_summary += " Left out: " + FormatCount(static_cast<int64_t>(rs.unrunnable)) +
                          " highly ranked interleaved plans with fewer microbatches than a multiple of the pipeline "
                          "stages, which Megatron-LM cannot schedule (the closed form would price them).";
    if (top.empty()) {
      m.plans.push_back(Row("#1", base_scenario, Estimate(base_scenario)));
      m.plans.back().feasible = false;
      m.plans.back().reason = rs.merged.why_none.empty() ? "no plan fits" : rs.merged.why_none;
    }
    for (size_t i = 0; i < top.size(); ++i) {
      const Scenario si = engine::ScenarioOf(base_scenario, top[i].knobs);
      PlanRow row = Row("#" + std::to_string(i + 1), si, top[i].estimate);
      if (i > 0) row.why = "#1: " + WhyFirst(top[0], top[i]);
      m.plans.push_back(row);
    }
    if (top.size() > 1) m.why_first = WhyFirst(top[0], top[1]);
    if (!top.empty()) chosen = engine::ScenarioOf(base_scenario, top[0].knobs);
    // When the scaling counts are the searched ones, reuse each count's best.
    if (scaling.empty() || scaling == counts) {
      scaling = counts;
      for (const auto& [n, r] : rs.per_count) {
        ScalingPoint p;
        p.gpus = n;
        if (r.top.empty()) {
          p.reason = r.why_none;
        } else {
          const Scenario sn = engine::ScenarioOf(base_scenario, r.top[0].knobs);
          const auto& e = r.top[0].estimate;
          p.feasible = true;
          p.plan = PlanText(sn.training, e.dp);
          p.iteration_s = e.iteration_s;
          p.days = e.train_time_s / 86400;
          p.cost_usd = e.train_cost_usd;
          p.mfu = e.mfu;
          p.comm_fraction = CommAndBubble(e.time) / e.time.total;
        }
        m.scaling.points.push_back(p);
      }
    }
  } else {
    m.plans.push_back(Row("scenario plan", base_scenario, Estimate(base_scenario)));
    m.search_summary = "The scenario's own plan (no search asked; --search ranks the alternatives).";
  }
  if (m.scaling.points.empty()) {
    if (scaling.empty()) scaling = AroundCount(hardware::DeviceCount(chosen.system), per_node);
    // The best plan at each count, searched the same way.
    const RangeSearch rs = SearchCounts(base_scenario, scaling, req.objective, req.threads);
    for (const auto& [n, r] : rs.per_count) {
      ScalingPoint p;
      p.gpus = n;
      if (r.top.empty()) {
        p.reason = r.why_none;
      } else {
        const Scenario sn = engine::ScenarioOf(base_scenario, r.top[0].knobs);
        const auto& e = r.top[0].estimate;
        p.feasible = true;
        p.plan = PlanText(sn.training, e.dp);
        p.iteration_s = e.iteration_s;
        p.days = e.train_time_s / 86400;
        p.cost_usd = e.train_cost_usd;
        p.mfu = e.mfu;
        p.comm_fraction = CommAndBubble(e.time) / e.time.total;
      }
      m.scaling.points.push_back(p);
    }
  }
  for (const auto& p : m.scaling.points)
    if (p.feasible && p.comm_fraction > 0.5) {
      m.scaling.comm_takes_over_gpus = p.gpus;
      break;
    }
  {
    double mx = 0;
    int64_t at = 0;
    for (const auto& p : m.scaling.points)
      if (p.feasible && p.comm_fraction > mx) {
        mx = p.comm_fraction;
        at = p.gpus;
      }
    m.scaling.note =
        "Each point is the best plan Orrery finds at that GPU count for the same global batch. " +
        (m.scaling.comm_takes_over_gpus > 0
             ? "Communication and pipeline bubble take over (more than half of the step) from " +
                   FormatCount(m.scaling.comm_takes_over_gpus) + " GPUs."
             : mx < 0.005
                   ? std::string("The best plans hide communication behind compute over this whole range (exposed "
                                 "communication and pipeline bubble below 0.5 % of the step).")
                   : "Communication and pipeline bubble stay below half of the step over this range (at most " +
                         FormatSig(100 * mx, 2) + " %, at " + FormatCount(at) + " GPUs).");
  }

  m.feasible = !m.plans.empty() && m.plans.front().feasible;
  // Diminishing returns: a smaller count of the range that is almost as fast.
  if (m.feasible && m.plans.front().days > 0) {
    const PlanRow& rec = m.plans.front();
    for (const auto& p : m.scaling.points) {
      if (!p.feasible || p.gpus >= rec.gpus || !(p.days > 0) || p.days > 1.1 * rec.days) continue;
      const double hours = p.days * 24 * static_cast<double>(p.gpus);
      m.notes.push_back("Diminishing returns: " + FormatCount(p.gpus) + " GPUs would take " + FormatDays(p.days) +
                        " (" + FormatSig(100 * (p.days / rec.days - 1), 2) + " % longer) for " +
                        FormatGpuHours(hours) + " GPU-hours (" + FormatSig(100 * (1 - hours / rec.gpu_hours), 2) +
                        " % fewer) at " + FormatSig(100 * p.mfu, 3) + " % MFU.");
      break;
    }
  }
  if (m.feasible) {
    m.timeline = Timeline(chosen);
    m.sensitivity = Sensitivities(chosen, price_s);
  } else {
    m.timeline.note = "no feasible plan to simulate";
  }
  const std::string csv = req.validation_csv.empty()
                              ? std::string(ORRERY_VALIDATION_DIR_DEFAULT) + "/training_runs.csv"
                              : req.validation_csv;
  m.confidence = ConfidenceFor(chosen, csv, store);

  // Alternatives: the recommended run, then each scenario named.
  if (!m.plans.empty()) {
    PlanRow first = m.plans.front();
    first.label = "recommended";
    first.why.clear();
    m.alternatives.push_back(first);
  }
  AddAssumptions(chosen, price_s, m.assumptions);
}

// The sweep of a result store (the only one, or the first), summarised.
std::optional<SweepSection> ReadSweep(const std::string& path, std::string& scenario_file,
                                      base::Diagnostics& diags) {
  const base::SourceLocation where{"--sweep", 0, 0};
  std::string error;
  auto store = engine::ResultStore::Open(path, error, true);
  if (!store) {
    diags.Add(where, "sweep", path, "cannot open the result store: " + error);
    return std::nullopt;
  }
  const auto sweeps = store->Sweeps(error);
  if (sweeps.empty()) {
    diags.Add(where, "sweep", path, error.empty() ? "the store holds no sweep" : error);
    return std::nullopt;
  }
  const engine::SweepRecord& rec = sweeps.front();
  std::ostringstream text;
  if (!store->Export(text, true, rec.name, error)) {
    diags.Add(where, "sweep", path, error);
    return std::nullopt;
  }
  const auto rows = nlohmann::ordered_json::parse(text.str(), nullptr, false);  // axes in sweep order
  if (rows.is_discarded() || !rows.is_array()) {
    diags.Add(where, "sweep", path, "the store's points could not be read");
    return std::nullopt;
  }
  scenario_file = rec.scenario_file;
  SweepSection s;
  s.name = rec.name;
  s.store = path;
  s.each = rec.each;
  s.points = static_cast<int64_t>(rows.size());
  bool trained = false;
  for (const auto& r : rows)
    if (r.value("status", "") == "ok" && r["train_time_s"].is_number() && r["train_time_s"].get<double>() > 0)
      trained = true;
  s.metric = trained ? "days to train" : "seconds per step";
  // Axis order and value order as enumerated (the first point holds every axis).
  std::vector<std::string> axes;
  std::vector<std::vector<std::string>> values;
  std::vector<std::vector<std::vector<double>>> answers;
  std::vector<std::vector<int64_t>> totals;
  std::vector<SweepPoint> points;
  for (const auto& r : rows) {
    if (!r.contains("params") || !r["params"].is_object()) continue;
    const bool ok = r.value("status", "") == "ok";
    double answer = 0;
    if (ok) {
      answer = trained ? r["train_time_s"].get<double>() / 86400 : r["iteration_s"].get<double>();
      ++s.ok;
    }
    std::string params;
    for (const auto& [k, v] : r["params"].items()) {
      const std::string value = v.is_string() ? v.get<std::string>() : v.dump();
      params += (params.empty() ? "" : ", ") + k + "=" + value;
      size_t a = static_cast<size_t>(std::find(axes.begin(), axes.end(), k) - axes.begin());
      if (a == axes.size()) {
        axes.push_back(k);
        values.emplace_back();
        answers.emplace_back();
        totals.emplace_back();
      }
      size_t i = static_cast<size_t>(std::find(values[a].begin(), values[a].end(), value) - values[a].begin());
      if (i == values[a].size()) {
        values[a].push_back(value);
        answers[a].emplace_back();
        totals[a].push_back(0);
      }
      ++totals[a][i];
      if (ok) answers[a][i].push_back(answer);
    }
    if (ok) {
      SweepPoint p{params, answer, r.value("mfu", 0.0), ""};
      if (r.contains("plan") && r["plan"].is_object()) {
        const auto& pl = r["plan"];
        p.plan = "TP " + pl.value("tp", nlohmann::json(1)).dump() + " · PP " + pl.value("pp", nlohmann::json(1)).dump() +
                 " · DP " + pl.value("dp", nlohmann::json(1)).dump() + " · micro-batch " +
                 pl.value("micro_batch", nlohmann::json(1)).dump();
      }
      points.push_back(p);
    }
  }
  for (size_t a = 0; a < axes.size(); ++a) {
    SweepAxis ax;
    ax.path = axes[a];
    for (size_t i = 0; i < values[a].size(); ++i) {
      std::vector<double> v = answers[a][i];
      SweepValue sv;
      sv.value = values[a][i];
      sv.total = totals[a][i];
      sv.ok = static_cast<int64_t>(v.size());
      if (!v.empty()) {
        std::sort(v.begin(), v.end());
        sv.best = v.front();
        sv.worst = v.back();
        sv.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
      }
      ax.values.push_back(sv);
    }
    s.axes.push_back(ax);
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const SweepPoint& x, const SweepPoint& y) { return x.answer < y.answer; });
  if (points.size() > 5) points.resize(5);
  s.best = points;
  return s;
}

std::optional<Scenario> LoadScenario(const std::string& name, const std::vector<std::string>& sets,
                                     double price_per_gpu_hour, double pue, const engine::PresetStore& store,
                                     base::Diagnostics& diags) {
  auto s = engine::LoadScenarioFile(name, store, diags);
  if (!s) return std::nullopt;
  for (const auto& a : sets) engine::ApplyOverride(*s, a, diags);
  if (!diags.ok()) return std::nullopt;
  if (price_per_gpu_hour >= 0) s->system.price_per_device_hour = price_per_gpu_hour / 3600;
  if (pue > 0) s->system.pue = pue;
  engine::CrossCheck(*s, diags);
  hardware::RefusePools(s->system, "orrery report", {name, 0, 0}, diags);
  if (!diags.ok()) return std::nullopt;
  if (!s->has_training) {
    diags.Add(base::SourceLocation{name, 0, 0}, "scenario.training", "",
              "a report needs a training scenario (this file has only an inference: section)");
    return std::nullopt;
  }
  return s;
}

}  // namespace

std::optional<ReportModel> BuildReport(const ReportRequest& req, base::Diagnostics& diags) {
  const engine::PresetStore store(req.config_dir.empty() ? engine::PresetStore::DefaultConfigDir()
                                                         : req.config_dir);
  ReportModel m;
  m.version = kOrreryVersion;
  m.command = req.command;
  const std::time_t now = std::time(nullptr);
  m.generated = Today(now);
  Scenario chosen;

  if (req.plan) {
    const PlanQuestion& q = *req.plan;
    const auto law = engine::LoadLaw(q.law, scaling_laws::DefaultPresetCatalogPath(), diags);
    const auto family = engine::LoadFamily(q.family, store.dir(), diags);
    hardware::SystemSpec system;
    const bool file = q.system.find('/') != std::string::npos || q.system.ends_with(".yaml") ||
                      q.system.ends_with(".yml");
    if (file) {
      if (auto doc = base::LoadYamlFile(q.system, diags)) {
        if (!doc->IsMap() || !(*doc)["system"])
          diags.Add(base::LocationOf(*doc, q.system), "", "", "expected a top-level key 'system'");
        else
          engine::LoadSystemMap((*doc)["system"], "system", q.system, store, system, diags);
      }
    } else {
      engine::LoadSystemPreset(q.system, store, base::SourceLocation{"--system", 0, 0}, "system", system,
                               diags);
    }
    hardware::RefusePools(system, "orrery report", {q.system, 0, 0}, diags);
    if (!diags.ok() || !law || !family) return std::nullopt;
    engine::PlanRequest pr = q.request;
    if (req.price_per_gpu_hour >= 0) pr.price_per_gpu_s = req.price_per_gpu_hour / 3600;
    if (req.pue > 0) pr.pue = req.pue;
    const engine::PlanResult r = engine::Plan(*law, *family, system, pr);
    if (!r.error.empty()) {
      diags.Add(base::SourceLocation{"--loss/--budget", 0, 0}, "plan", "", r.error);
      return std::nullopt;
    }
    const engine::ChainPoint& p = r.point;
    m.kind = "plan";
    LawSummary ls;
    ls.name = law->name;
    ls.source = law->source;
    const auto& L = law->point;
    ls.formula = "L = " + FormatSig(L.E, 4) + " + " + FormatSig(L.A, 4) + " / N^" + FormatSig(L.alpha, 3) +
                 " + " + FormatSig(L.B, 4) + " / D^" + FormatSig(L.beta, 3);
    ls.params_n = p.params_n;
    ls.tokens_d = p.tokens_d;
    ls.compute_flops = p.compute_flops;
    ls.loss = p.loss;
    ls.has_range = r.has_range;
    ls.level = r.level;
    ls.days_lo = r.days.lo;
    ls.days_hi = r.days.hi;
    ls.cost_lo = r.cost_usd.lo;
    ls.cost_hi = r.cost_usd.hi;
    ls.model = p.model.name;
    m.law = ls;
    for (const auto& n : r.notes) m.notes.push_back(n);
    std::string goal;
    switch (pr.goal) {
      case engine::PlanGoal::kLoss: goal = "reach a loss of " + LossText(pr.target_loss); break;
      case engine::PlanGoal::kBudget: goal = "spend " + FormatFlopCount(pr.budget_flops) + " of training compute"; break;
      case engine::PlanGoal::kGpuDays:
        goal = "use " + FormatCount(pr.gpus) + " GPUs for " + FormatSig(pr.days, 3) + " days";
        break;
    }
    m.title = "Capacity plan: " + goal + " (" + family->name + " family, " + ShortDevice(r.system.device.name) + ")";
    m.question = "What model, how many " + ShortDevice(r.system.device.name) + " GPUs, how long and at what cost to " +
                 goal + " with a " + family->name + "-family model on " + SystemFamily(r.system.name) +
                 (pr.deadline_days > 0 ? ", finishing within " + FormatDays(pr.deadline_days) + " (by " +
                                             DateAfterDays(now, pr.deadline_days) + " if started " + m.generated + ")"
                                       : "") +
                 "?";
    if (!p.best.found) {
      m.answer = "No plan: " + p.infeasible;
      m.feasible = false;
      return m;
    }
    // The chain's answer as a scenario: the built model on the chosen system.
    Scenario s;
    s.name = p.model.name;
    s.model = p.model;
    s.system = r.system;
    s.training = p.best.plan;
    s.workload.global_batch = p.global_batch;
    s.workload.seq_len = p.seq_len;
    s.workload.train_tokens = p.tokens_trained;
    ReportRequest inner = req;
    inner.search = true;
    inner.search_gpus = {p.gpus};
    if (inner.scaling_gpus.empty()) inner.scaling_gpus = AroundCount(p.gpus, s.system.devices_per_node);
    BuildScenarioSections(inner, s, store, m, chosen);
    const PlanRow& first = m.plans.front();
    m.answer = "A " + FormatSig(p.model_params / 1e9, 3) + " B-parameter model (" + std::to_string(p.model.layers) +
               " layers, d_model " + std::to_string(p.model.hidden) + ") trained on " + FormatTokens(p.tokens_trained) +
               " reaches a predicted loss of " + LossText(p.loss) + ": " + AnswerSentence(first, m.price_per_gpu_hour);
    if (pr.deadline_days > 0 && first.days > 0)
      m.answer += " It finishes on " + DateAfterDays(now, first.days) + " if started " + m.generated +
                  (first.days <= pr.deadline_days ? ", within the deadline of " : ", after the deadline of ") +
                  DateAfterDays(now, pr.deadline_days) + ".";
    m.assumptions.insert(m.assumptions.begin(),
                         {{"law", law->name, ls.formula, law->source},
                          {"law", "family " + family->name, "shape rules for the built model",
                           family->citation.empty() ? "family preset" : family->citation}});
  } else {
    std::string scenario = req.scenario;
    if (!req.sweep_store.empty()) {
      std::string from_sweep;
      m.sweep = ReadSweep(req.sweep_store, from_sweep, diags);
      if (!m.sweep) return std::nullopt;
      if (scenario.empty()) scenario = from_sweep;
    }
    auto s = LoadScenario(scenario, req.sets, req.price_per_gpu_hour, req.pue, store, diags);
    if (!s) return std::nullopt;
    m.kind = "scenario";
    const std::string model = s->model.name;
    const std::string dev = ShortDevice(s->system.device.name);
    m.title = "Capacity report: " + model + " on " + dev;
    const std::string tokens = s->workload.train_tokens > 0 ? " on " + FormatTokens(s->workload.train_tokens) : "";
    const std::string gpus = req.search && !req.search_gpus.empty()
                                 ? Range(req.search_gpus) + " " + dev + " GPUs"
                                 : FormatCount(hardware::DeviceCount(s->system)) + " " + dev + " GPUs";
    m.question = std::string(req.search ? "What is the fastest way to train " : "How long does it take to train ") +
                 model + tokens + " with " + gpus + " (" + SystemFamily(s->system.name) + "), at a global batch of " +
                 FormatCount(s->workload.global_batch) + " sequences of " + FormatCount(s->workload.seq_len) +
                 " tokens?";
    if (req.search && req.objective != engine::Objective::kTime)
      m.question = "What is the " + std::string(engine::ObjectiveName(req.objective)) +
                   "-optimal way to train " + model + tokens + " with " + gpus + "?";
    BuildScenarioSections(req, *s, store, m, chosen);
    m.answer = (s->workload.train_tokens > 0 ? "Train " + model + tokens + " on " : model + " on ") +
               AnswerSentence(m.plans.front(), m.price_per_gpu_hour);
  }

  // Alternatives the user named.
  for (const auto& alt : req.compare) {
    base::Diagnostics d;
    auto a = LoadScenario(alt, {}, req.price_per_gpu_hour, req.pue, store, d);
    if (!a) {
      for (const auto& x : d.items()) diags.Add(x);
      return std::nullopt;
    }
    if (req.search) {
      const RangeSearch rs = SearchCounts(*a, {hardware::DeviceCount(a->system)}, req.objective, req.threads);
      if (!rs.merged.top.empty()) {
        const Scenario sa = engine::ScenarioOf(*a, rs.merged.top[0].knobs);
        m.alternatives.push_back(Row(a->name, sa, rs.merged.top[0].estimate));
        continue;
      }
    }
    m.alternatives.push_back(Row(a->name, *a, Estimate(*a)));
  }
  return m;
}

}  // namespace orrery::report
