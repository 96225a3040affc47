// The tables of `orrery infer`; JSON and CSV are orrery::ToJson.

#include <cstdio>
#include <iomanip>
#include <string>

#include "core/api/text.h"
#include "core/base/format.h"
#include "models/kv_cache.h"

namespace orrery::text {

using namespace base;  // the Format* functions

namespace {

// "2 replicas of 4" (data-parallel serving) or "replica of 4".
std::string FormatReplicas(const engine::Scenario& s, const parallelism::InferenceDeployment& d) {
  const int64_t n = engine::ServingReplicas(s.system, d);
  return (n == 1 ? std::string("replica of ") : std::to_string(n) + " replicas of ") +
         std::to_string(d.tp * d.pp);
}

void PrintHeader(const InferResult& r, std::ostream& out) {
  const engine::Scenario& s = r.scenario;
  const auto& d = *s.inference;
  out << "scenario   " << (s.name.empty() ? s.file : s.name) << "\n"
      << "model      " << s.model.name << " (" << FormatCount(r.parameters, "parameters") << ")\n"
      << UnreadKeysLine(s.model)
      << "system     " << s.system.name << ": " << FormatReplicas(s, d) << " x "
      << s.system.device.name << " (" << hardware::DeviceCount(s.system) << " devices)\n"
      << "deployment tp " << d.tp << ", pp " << d.pp << ", ep " << d.ep << "; weights "
      << hardware::DataTypeName(d.weights) << ", activations "
      << hardware::DataTypeName(d.activations) << ", KV cache "
      << hardware::DataTypeName(d.kv_cache);
  if (d.offload_weights > 0 || d.offload_kv > 0)
    out << "; offload " << FormatPercent(d.offload_weights) << " of weights, "
        << FormatPercent(d.offload_kv) << " of KV to "
        << (d.offload_to == parallelism::OffloadTarget::kNvme ? "NVMe" : "host memory");
  out << "\n";
}

void PrintPass(const char* title, const engine::PassTime& p, std::ostream& out) {
  out << title << std::setw(12) << FormatTime(p.total) << "  (GEMM " << FormatTime(p.gemm)
      << ", attention " << FormatTime(p.attention) << ", element-wise " << FormatTime(p.elementwise);
  if (p.tp_comm > 0) out << ", TP comm " << FormatTime(p.tp_comm);
  if (p.pp_comm > 0) out << ", PP sends " << FormatTime(p.pp_comm);
  if (p.offload > 0) out << ", exposed offload " << FormatTime(p.offload);
  out << ")\n";
}

void PrintStatic(const InferResult& r, std::ostream& out) {
  const auto& d = *r.scenario.inference;
  const engine::InferenceEstimate& e = r.estimate;
  out << "workload   batch " << d.batch << ", input " << d.input << ", output " << d.output
      << " tokens\n";
  if (!e.feasible()) {
    out << "\nINFEASIBLE: " << r.reason << "\n";
    if (e.e2e_s <= 0) return;
    out << "(the figures below are what it would take)\n";
  }
  out << "\ntime to first token   " << std::setw(12) << FormatTime(e.ttft_s) << "\n"
      << "time per output token " << std::setw(12) << FormatTime(e.tpot_s);
  if (d.speculate > 0)
    out << "  (speculative: k " << d.speculate << ", acceptance " << d.acceptance << ", "
        << FormatPlain(e.tokens_per_step, 3) << " tokens per target step)";
  out << "\nend-to-end latency    " << std::setw(12) << FormatTime(e.e2e_s) << "\n"
      << "throughput            " << FormatRate(e.output_tokens_per_s, "output tokens") << " ("
      << FormatRate(e.output_tokens_per_s_per_device, "tokens") << " per device), "
      << FormatRate(e.total_tokens_per_s, "tokens") << " with prompts\n";
  if (e.energy_per_token_j > 0)
    out << "energy                " << FormatEnergy(e.energy_per_token_j)
        << " per output token (TDP x time x PUE)\n";
  out << "\n";
  PrintPass("prefill pass  ", e.prefill, out);
  PrintPass("decode step   ", e.decode, out);
  out << "\nmemory per device (fullest stage)\n"
      << "  weights           " << std::setw(12) << FormatBytes(e.memory.weights) << "\n"
      << "  KV cache          " << std::setw(12) << FormatBytes(e.memory.kv_cache);
  const models::ModelSpec& m = r.scenario.model;
  if (models::LocalLayers(m) > 0)
    out << "  (" << models::LocalLayers(m) << " of " << m.layers << " layers keep at most "
        << static_cast<int64_t>(models::LocalSpan(m)) << " tokens: their "
        << (m.sliding_window > 0 ? "window" : "chunk") << ")";
  out << "\n"
      << "  activations       " << std::setw(12) << FormatBytes(e.memory.activations) << "\n";
  if (e.memory.draft > 0) out << "  draft model       " << std::setw(12) << FormatBytes(e.memory.draft) << "\n";
  out << "  total             " << std::setw(12) << FormatBytes(e.memory.total()) << "  of "
      << FormatBytes(e.memory_usable) << " usable (" << FormatBytes(e.memory_capacity) << " x "
      << d.memory_fraction << ")\n"
      << "largest batch of " << d.input + d.output << "-token sequences that fits: " << e.max_batch
      << "; longest context at batch " << d.batch << ", all of it prompt: "
      << (e.max_context < 0 ? std::string("no limit from memory (every layer keeps a window)")
                            : std::to_string(e.max_context) + " tokens")
      << "\n";
}

void PrintServing(const engine::ServingResult& r, const models::ModelSpec& model, std::ostream& out) {
  if (!r.feasible) {
    out << "INFEASIBLE: " << r.reason << "\n";
    if (r.iterations == 0) return;
  }
  auto row = [&](const char* name, const engine::Percentiles& p) {
    out << "  " << std::left << std::setw(6) << name << std::right << std::setw(12) << FormatTime(p.mean)
        << std::setw(12) << FormatTime(p.p50) << std::setw(12) << FormatTime(p.p90) << std::setw(12)
        << FormatTime(p.p99) << std::setw(12) << FormatTime(p.max) << "\n";
  };
  // The header right-aligned over the value columns (a 6-wide label after
  // two spaces, then five of 12).
  out << std::string(8, ' ');
  for (const char* h : {"mean", "p50", "p90", "p99", "max"}) out << std::right << std::setw(12) << h;
  out << "\n";
  row("TTFT", r.ttft_s);
  row("TPOT", r.tpot_s);
  row("E2E", r.e2e_s);
  out << "\nthroughput   " << FormatRate(r.output_tokens_per_s, "output tokens") << ", "
      << FormatRate(r.requests_per_s, "requests") << " over " << FormatTime(r.duration_s) << "\n"
      << "goodput      " << FormatRate(r.goodput_requests_per_s, "requests") << " meet the SLO ("
      << FormatPercent(r.slo_attainment) << " of requests)\n"
      << "scheduler    " << r.iterations << " iterations, " << r.peak_running
      << " requests running at most, " << r.preemptions << " preemptions, KV cache of "
      << FormatCount(static_cast<double>(r.kv_capacity_tokens), "tokens");
  if (models::LocalLayers(model) > 0)
    out << " of every layer's cache (a request holds its whole context on " << model.layers - models::LocalLayers(model)
        << " layers and at most " << static_cast<int64_t>(models::LocalSpan(model)) << " tokens on the other "
        << models::LocalLayers(model) << ")";
  out << "\n";
}

void PrintPools(const engine::DisaggResult& g, std::ostream& out) {
  out << "pools      prefill " << g.prefill.replicas << " x (tp " << g.prefill.tp << ", pp "
      << g.prefill.pp << "), decode " << g.decode.replicas << " x (tp " << g.decode.tp << ", pp "
      << g.decode.pp << "): " << g.devices << " devices\n";
  if (!g.feasible) return;
  out << "KV handoff " << FormatBytes(g.kv_bytes_mean) << " per request over "
      << (g.link.tier < 0 ? std::string("no tier (same device)") : "tier '" + g.link.name + "'")
      << ": " << FormatTime(g.transfer_s_mean) << " on the link, "
      << FormatTime(g.transfer_wait_s_mean) << " waiting for it, "
      << FormatTime(g.decode_wait_s_mean) << " waiting for a decode slot (means; in TPOT)\n";
}

std::string PoolText(const engine::PoolShape& p) {
  return std::to_string(p.replicas) + " x tp" + std::to_string(p.tp) +
         (p.pp > 1 ? " pp" + std::to_string(p.pp) : "");
}

void PrintSplit(const InferResult& r, std::ostream& out) {
  const auto& d = *r.scenario.inference;
  const engine::SplitSearch& sp = r.split;
  out << "SLO        TTFT " << (d.slo_ttft > 0 ? FormatTime(d.slo_ttft) : "none") << ", TPOT "
      << (d.slo_tpot > 0 ? FormatTime(d.slo_tpot) : "none") << ", met by "
      << FormatPercent(d.slo_attainment) << " of " << d.requests << " Poisson requests at "
      << FormatRate(d.rate, "requests") << "; up to " << sp.gpus << " devices\n\n";
  if (!sp.found) {
    out << "no split found: " << sp.reason << "\n";
    return;
  }
  out << "  rank  layout        prefill       decode        devices  SLO met   goodput     "
         "TTFT p90    TPOT p90\n";
  auto row = [&](size_t i) {
    const engine::SplitCandidate& c = sp.candidates[i];
    out << std::setw(6) << i + 1 << "  " << std::left << std::setw(14)
        << (c.disaggregated ? "disaggregated" : "colocated") << std::setw(14) << PoolText(c.prefill)
        << std::setw(14) << (c.disaggregated ? PoolText(c.decode) : "(same)") << std::right
        << std::setw(7) << c.devices;
    if (!c.feasible) {
      out << "  infeasible: " << c.reason << "\n";
      return;
    }
    out << std::setw(9) << FormatPercent(c.slo_attainment) << std::setw(12)
        << FormatNumber(c.goodput_requests_per_s, 4) << "/s" << std::setw(12)
        << FormatTime(c.ttft_p90_s) << std::setw(12) << FormatTime(c.tpot_p90_s) << "\n";
  };
  const size_t shown = std::min<size_t>(10, sp.candidates.size());
  for (size_t i = 0; i < shown; ++i) row(i);
  for (int best : {sp.best_colocated, sp.best_disaggregated})
    if (best >= static_cast<int>(shown)) row(static_cast<size_t>(best));
  out << "(" << sp.candidates.size() << " layouts simulated on the same requests)\n\n";
  out << "best: " << (sp.prefers_disaggregation ? "disaggregated" : "colocated");
  if (sp.best_colocated >= 0 && sp.best_disaggregated >= 0) {
    const auto& c = sp.candidates[static_cast<size_t>(sp.best_colocated)];
    const auto& g = sp.candidates[static_cast<size_t>(sp.best_disaggregated)];
    out << " (colocated best " << FormatPercent(c.slo_attainment) << " on " << c.devices
        << " devices, disaggregated best " << FormatPercent(g.slo_attainment) << " on "
        << g.devices << ")";
  }
  out << "\n";
}

}  // namespace

void PrintInferTable(const InferResult& r, std::ostream& out) {
  const auto& d = *r.scenario.inference;
  PrintHeader(r, out);
  if (r.mode == InferMode::kStatic) return PrintStatic(r, out);
  if (!r.has_result) {
    out << "\nINFEASIBLE: " << r.reason << "\n";
    return;
  }
  if (r.mode == InferMode::kSplit) return PrintSplit(r, out);
  if (r.mode == InferMode::kServe) {
    if (r.disaggregated) PrintPools(r.disagg, out);
    out << "serving    " << SchedulerName(d.scheduler) << " batching"
        << (d.paged_kv && d.scheduler != parallelism::Scheduler::kStatic ? ", paged KV" : "")
        << ", max " << d.max_batch << " running, " << d.max_batch_tokens << " tokens per iteration; "
        << (d.arrivals == parallelism::Arrivals::kTrace
                ? "trace " + d.trace
                : std::to_string(d.requests) + " Poisson requests at " + FormatRate(d.rate, "requests"));
    if (const int64_t n = engine::ServingReplicas(r.scenario.system, d); !r.disaggregated && n > 1)
      out << ", dealt round robin to " << n << " replicas";
    out << "\n\n";
    return PrintServing(r.serving, r.scenario.model, out);
  }
  const engine::RateSearch& m = r.max_rate;
  out << "SLO        TTFT " << (d.slo_ttft > 0 ? FormatTime(d.slo_ttft) : "none") << ", TPOT "
      << (d.slo_tpot > 0 ? FormatTime(d.slo_tpot) : "none") << ", met by "
      << FormatPercent(d.slo_attainment) << " of " << d.requests << " requests; "
      << SchedulerName(d.scheduler) << " batching\n\n";
  if (!m.found) {
    out << "no rate found: " << m.reason << "\n";
    return;
  }
  // The rate as checked, three significant digits (FloorToThreeDigits): what
  // is printed can be given back to --serve --rate.
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.6g", m.max_rate);
  out << "highest rate meeting the SLO: " << rate << " requests/s on each of " << d.rate_seeds
      << " arrival seeds (" << d.seed << " .. " << d.seed + d.rate_seeds - 1 << "; "
      << m.simulations << " simulations)\n";
  if (m.seed_rates.size() > 1) {
    out << "  per-seed capacity        ";
    for (size_t i = 0; i < m.seed_rates.size(); ++i)
      out << (i ? ", " : "") << base::FormatNumber(m.seed_rates[i], 4);
    out << " requests/s\n"
        << "  mean, 95 % interval      " << base::FormatNumber(m.mean_rate, 4) << " ["
        << base::FormatNumber(m.ci_low, 4) << ", " << base::FormatNumber(m.ci_high, 4)
        << "] requests/s (Student's t)\n"
        << "  the rate above           at or below the interval's lower end and every seed's "
           "capacity;\n"
        << "                           another seed's capacity falls below the smallest of "
        << m.seed_rates.size() << " with probability 1/" << m.seed_rates.size() + 1 << "\n";
  }
  out << "\n";
  PrintServing(m.at_max, r.scenario.model, out);
}

}  // namespace orrery::text
