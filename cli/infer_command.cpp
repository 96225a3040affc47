// `orrery infer`: inference latency, throughput and memory of a served model,
// for a static batch, a simulated request stream, or the highest request
// rate that meets an SLO.

#include <algorithm>
#include <boost/program_options.hpp>
#include <iomanip>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "core/estimate/inference_estimator.h"
#include "core/estimate/serving_sim.h"
#include "models/kv_cache.h"
#include "models/transformer.h"

namespace orrery::cli {

namespace po = boost::program_options;
using base::Dimension;
using base::FormatQuantity;
using nlohmann::ordered_json;

namespace {

constexpr const char* kHelp =
    "orrery infer SCENARIO.yaml [options]\n\n"
    "Predicts serving the scenario's model as its `inference:` section deploys it\n"
    "(orrery explain inference lists every key). Three modes:\n"
    "  (default)   a static batch: batch prompts of `input` tokens, `output` tokens each;\n"
    "              time to first token, time per output token, end-to-end latency,\n"
    "              tokens/s in total and per device, memory per device, the largest\n"
    "              batch and context that fit, energy per token\n"
    "  --serve     a simulated request stream (Poisson at `rate`, or a CSV trace) through\n"
    "              the scheduler (static, continuous, chunked prefill; paged KV with\n"
    "              preemption): TTFT/TPOT p50/p90/p99, throughput, goodput under the SLO\n"
    "  --max-rate  the highest Poisson rate at which slo_attainment of the requests meet\n"
    "              slo_ttft and slo_tpot (doubling, then bisection)\n"
    "Speculative decoding (inference.speculate, acceptance, draft_model or draft_cost)\n"
    "applies to every mode.\n\noptions";

constexpr const char* kExamples =
    "\nExamples:\n"
    "  orrery infer configs/scenarios/llama2-70b-h100-infer.yaml\n"
    "  orrery infer llama2-70b-h100-infer --batch 64 --input 2048 --output 256 --format json\n"
    "  orrery infer llama2-70b-h100-infer --set inference.weights=int4 --set inference.tp=2\n"
    "  orrery infer llama2-70b-h100-infer --set inference.speculate=4 --set inference.acceptance=0.8\n"
    "  orrery infer llama2-70b-h100-infer --serve --rate 4 --scheduler chunked\n"
    "  orrery infer llama2-70b-h100-infer --max-rate --set inference.slo_ttft=500ms "
    "--set inference.slo_tpot=50ms\n"
    "\nExit status: 0 success (an infeasible deployment is a result with its reason),\n"
    "1 invalid input, 2 usage error.\n";

std::string Ms(double s) { return FormatQuantity(s, Dimension::kTime); }
std::string Bytes(double b) { return FormatQuantity(b, Dimension::kBytes); }

const char* SchedulerName(parallelism::Scheduler s) {
  switch (s) {
    case parallelism::Scheduler::kStatic: return "static";
    case parallelism::Scheduler::kContinuous: return "continuous";
    case parallelism::Scheduler::kChunked: return "chunked";
  }
  return "?";
}

ordered_json PassJson(const engine::PassTime& p) {
  return {{"total_s", p.total},         {"gemm_s", p.gemm},
          {"attention_s", p.attention}, {"elementwise_s", p.elementwise},
          {"tp_comm_s", p.tp_comm},     {"pp_comm_s", p.pp_comm},
          {"offload_s", p.offload},     {"flops", p.flops},
          {"weight_bytes", p.weight_bytes}, {"kv_bytes", p.kv_bytes}};
}

ordered_json PercentilesJson(const engine::Percentiles& p) {
  return {{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"max", p.max}};
}

ordered_json HeaderJson(const engine::Scenario& s) {
  const auto& d = *s.inference;
  ordered_json j;
  j["scenario"] = s.name;
  j["model"] = s.model.name;
  j["system"] = s.system.name;
  j["device"] = s.system.device.name;
  j["replica_devices"] = d.tp * d.pp;
  j["replicas"] = hardware::DeviceCount(s.system) / std::max<int64_t>(1, d.tp * d.pp);
  j["deployment"] = {{"tp", d.tp},
                     {"pp", d.pp},
                     {"ep", d.ep},
                     {"weights", hardware::DataTypeName(d.weights)},
                     {"activations", hardware::DataTypeName(d.activations)},
                     {"kv_cache", hardware::DataTypeName(d.kv_cache)},
                     {"offload_weights", d.offload_weights},
                     {"offload_kv", d.offload_kv}};
  return j;
}

ordered_json StaticJson(const engine::Scenario& s, const engine::InferenceEstimator& est,
                        const engine::InferenceEstimate& e) {
  const auto& d = *s.inference;
  ordered_json j = HeaderJson(s);
  j["workload"] = {{"batch", d.batch}, {"input", d.input}, {"output", d.output}};
  j["feasible"] = e.feasible();
  j["reason"] = e.feasible() ? ordered_json() : ordered_json(engine::ExplainInfeasible(e, s));
  if (e.e2e_s <= 0) return j;
  j["ttft_s"] = e.ttft_s;
  j["tpot_s"] = e.tpot_s;
  j["e2e_s"] = e.e2e_s;
  j["output_tokens_per_s"] = e.output_tokens_per_s;
  j["output_tokens_per_s_per_device"] = e.output_tokens_per_s_per_device;
  j["total_tokens_per_s"] = e.total_tokens_per_s;
  j["energy_per_output_token_j"] = e.energy_per_token_j;
  if (d.speculate > 0)
    j["speculative"] = {{"k", d.speculate},
                        {"acceptance", d.acceptance},
                        {"draft_model", d.draft_model},
                        {"tokens_per_step", e.tokens_per_step}};
  j["prefill"] = PassJson(e.prefill);
  j["decode_step"] = PassJson(e.decode);
  j["memory_per_device"] = {{"weights_bytes", e.memory.weights},
                            {"kv_cache_bytes", e.memory.kv_cache},
                            {"activations_bytes", e.memory.activations},
                            {"draft_bytes", e.memory.draft},
                            {"total_bytes", e.memory.total()},
                            {"usable_bytes", e.memory_usable},
                            {"capacity_bytes", e.memory_capacity}};
  j["kv_bytes_per_token"] =
      models::KvBytesPerToken(s.model, hardware::BytesPer(d.kv_cache));
  j["kv_bytes_per_token_per_device"] = est.KvBytesPerTokenPerDevice(d);
  j["max_batch"] = e.max_batch;
  j["max_context"] = e.max_context;
  return j;
}

ordered_json ServingJson(const engine::ServingResult& r) {
  ordered_json j;
  j["feasible"] = r.feasible;
  j["reason"] = r.feasible ? ordered_json() : ordered_json(r.reason);
  j["requests"] = r.requests.size();
  j["ttft_s"] = PercentilesJson(r.ttft_s);
  j["tpot_s"] = PercentilesJson(r.tpot_s);
  j["e2e_s"] = PercentilesJson(r.e2e_s);
  j["duration_s"] = r.duration_s;
  j["output_tokens_per_s"] = r.output_tokens_per_s;
  j["requests_per_s"] = r.requests_per_s;
  j["goodput_requests_per_s"] = r.goodput_requests_per_s;
  j["slo_attainment"] = r.slo_attainment;
  j["preemptions"] = r.preemptions;
  j["iterations"] = r.iterations;
  j["peak_running"] = r.peak_running;
  j["kv_capacity_tokens"] = r.kv_capacity_tokens;
  return j;
}

void PrintCsv(const ordered_json& j, std::ostream& out) {
  const auto flat = j.flatten();
  std::string header, row;
  bool first = true;
  for (auto it = flat.begin(); it != flat.end(); ++it, first = false) {
    std::string key = it.key().substr(1);
    std::replace(key.begin(), key.end(), '/', '.');
    std::string v = it->is_string() ? it->get<std::string>() : it->dump();
    if (v.find_first_of(",\"\n") != std::string::npos) {
      std::string q = "\"";
      for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
      v = q + "\"";
    }
    header += (first ? "" : ",") + key;
    row += (first ? "" : ",") + v;
  }
  out << header << "\n" << row << "\n";
}

void PrintHeader(const engine::Scenario& s, std::ostream& out) {
  const auto& d = *s.inference;
  out << "scenario   " << (s.name.empty() ? s.file : s.name) << "\n"
      << "model      " << s.model.name << " ("
      << base::FormatNumber(models::ParameterCount(s.model, d.input + d.output) / 1e9, 4)
      << " B parameters)\n"
      << "system     " << s.system.name << ": replica of " << d.tp * d.pp << " x "
      << s.system.device.name << " (" << hardware::DeviceCount(s.system) << " devices)\n"
      << "deployment tp " << d.tp << ", pp " << d.pp << ", ep " << d.ep << "; weights "
      << hardware::DataTypeName(d.weights) << ", activations "
      << hardware::DataTypeName(d.activations) << ", KV cache "
      << hardware::DataTypeName(d.kv_cache);
  if (d.offload_weights > 0 || d.offload_kv > 0)
    out << "; offload " << base::FormatNumber(100 * d.offload_weights, 3) << " % of weights, "
        << base::FormatNumber(100 * d.offload_kv, 3) << " % of KV to "
        << (d.offload_to == parallelism::OffloadTarget::kNvme ? "NVMe" : "host memory");
  out << "\n";
}

void PrintPass(const char* title, const engine::PassTime& p, std::ostream& out) {
  out << title << std::setw(12) << Ms(p.total) << "  (GEMM " << Ms(p.gemm) << ", attention "
      << Ms(p.attention) << ", element-wise " << Ms(p.elementwise);
  if (p.tp_comm > 0) out << ", TP comm " << Ms(p.tp_comm);
  if (p.pp_comm > 0) out << ", PP sends " << Ms(p.pp_comm);
  if (p.offload > 0) out << ", exposed offload " << Ms(p.offload);
  out << ")\n";
}

void PrintStatic(const engine::Scenario& s, const engine::InferenceEstimate& e,
                 std::ostream& out) {
  const auto& d = *s.inference;
  PrintHeader(s, out);
  out << "workload   batch " << d.batch << ", input " << d.input << ", output " << d.output
      << " tokens\n";
  if (!e.feasible()) {
    out << "\nINFEASIBLE: " << engine::ExplainInfeasible(e, s) << "\n";
    if (e.e2e_s <= 0) return;
    out << "(the figures below are what it would take)\n";
  }
  out << "\ntime to first token   " << std::setw(12) << Ms(e.ttft_s) << "\n"
      << "time per output token " << std::setw(12) << Ms(e.tpot_s);
  if (d.speculate > 0)
    out << "  (speculative: k " << d.speculate << ", acceptance " << d.acceptance << ", "
        << base::FormatNumber(e.tokens_per_step, 3) << " tokens per target step)";
  out << "\nend-to-end latency    " << std::setw(12) << Ms(e.e2e_s) << "\n"
      << "throughput            " << base::FormatNumber(e.output_tokens_per_s)
      << " output tokens/s (" << base::FormatNumber(e.output_tokens_per_s_per_device)
      << " per device), " << base::FormatNumber(e.total_tokens_per_s) << " tokens/s with prompts\n";
  if (e.energy_per_token_j > 0)
    out << "energy                " << FormatQuantity(e.energy_per_token_j, Dimension::kEnergy)
        << " per output token (TDP x time x PUE)\n";
  out << "\n";
  PrintPass("prefill pass  ", e.prefill, out);
  PrintPass("decode step   ", e.decode, out);
  out << "\nmemory per device (fullest stage)\n"
      << "  weights           " << std::setw(12) << Bytes(e.memory.weights) << "\n"
      << "  KV cache          " << std::setw(12) << Bytes(e.memory.kv_cache) << "\n"
      << "  activations       " << std::setw(12) << Bytes(e.memory.activations) << "\n";
  if (e.memory.draft > 0) out << "  draft model       " << std::setw(12) << Bytes(e.memory.draft) << "\n";
  out << "  total             " << std::setw(12) << Bytes(e.memory.total()) << "  of "
      << Bytes(e.memory_usable) << " usable (" << Bytes(e.memory_capacity) << " x "
      << d.memory_fraction << ")\n"
      << "largest batch of " << d.input + d.output << "-token sequences that fits: " << e.max_batch
      << "; longest context at batch " << d.batch << ": " << e.max_context << " tokens\n";
}

void PrintServing(const engine::ServingResult& r, std::ostream& out) {
  if (!r.feasible) {
    out << "INFEASIBLE: " << r.reason << "\n";
    if (r.iterations == 0) return;
  }
  auto row = [&](const char* name, const engine::Percentiles& p) {
    out << "  " << std::left << std::setw(6) << name << std::right << std::setw(12) << Ms(p.mean)
        << std::setw(12) << Ms(p.p50) << std::setw(12) << Ms(p.p90) << std::setw(12)
        << Ms(p.p99) << std::setw(12) << Ms(p.max) << "\n";
  };
  out << "          mean         p50         p90         p99         max\n";
  row("TTFT", r.ttft_s);
  row("TPOT", r.tpot_s);
  row("E2E", r.e2e_s);
  out << "\nthroughput   " << base::FormatNumber(r.output_tokens_per_s) << " output tokens/s, "
      << base::FormatNumber(r.requests_per_s) << " requests/s over "
      << Ms(r.duration_s) << "\n"
      << "goodput      " << base::FormatNumber(r.goodput_requests_per_s)
      << " requests/s meet the SLO (" << base::FormatNumber(100 * r.slo_attainment, 4)
      << " % of requests)\n"
      << "scheduler    " << r.iterations << " iterations, " << r.peak_running
      << " requests running at most, " << r.preemptions << " preemptions, KV cache of "
      << base::FormatNumber(r.kv_capacity_tokens) << " tokens\n";
}

}  // namespace

int RunInfer(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(kHelp);
  std::string format = "table";
  std::vector<std::string> sets;
  int64_t batch = 0, input = 0, output = 0, requests = 0;
  double rate = 0;
  std::string scheduler, trace;
  opts.add_options()("help,h", "show this help")(
      "set", po::value(&sets)->composing(),
      "override one parameter, e.g. --set inference.tp=4 --set inference.kv_cache=fp8")(
      "batch", po::value(&batch), "static batch size (= --set inference.batch=B)")(
      "input", po::value(&input), "prompt tokens (= --set inference.input=I)")(
      "output", po::value(&output), "generated tokens (= --set inference.output=O)")(
      "serve", "simulate serving a request stream")(
      "max-rate", "search the highest request rate meeting the SLO")(
      "rate", po::value(&rate), "requests/s for --serve (= --set inference.rate=R)")(
      "requests", po::value(&requests), "requests to simulate (= --set inference.requests=N)")(
      "scheduler", po::value(&scheduler), "static | continuous | chunked")(
      "trace", po::value(&trace), "CSV of arrival_s,input,output (sets inference.arrivals=trace)")(
      "format", po::value(&format), "table | json | csv");
  po::options_description hidden;
  hidden.add_options()("scenario", po::value<std::string>(), "");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  try {
    po::options_description all;
    all.add(opts).add(hidden);
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see orrery infer --help)\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts << kExamples;
    return kExitOk;
  }
  if (!vm.count("scenario")) {
    err << "error: missing SCENARIO (see orrery infer --help)\n";
    return kExitUsage;
  }
  if (vm.count("serve") && vm.count("max-rate")) {
    err << "error: --serve and --max-rate are separate modes; give one (see orrery infer --help)\n";
    return kExitUsage;
  }
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;

  const engine::PresetStore store(engine::PresetStore::DefaultConfigDir());
  base::Diagnostics diags;
  auto scenario = engine::LoadScenarioFile(vm["scenario"].as<std::string>(), store, diags);
  if (scenario) {
    // Shortcut options are --set overrides with the same rules and messages.
    if (vm.count("batch")) sets.push_back("inference.batch=" + std::to_string(batch));
    if (vm.count("input")) sets.push_back("inference.input=" + std::to_string(input));
    if (vm.count("output")) sets.push_back("inference.output=" + std::to_string(output));
    if (vm.count("rate")) sets.push_back("inference.rate=" + base::FormatNumber(rate, 12));
    if (vm.count("requests")) sets.push_back("inference.requests=" + std::to_string(requests));
    if (vm.count("scheduler")) sets.push_back("inference.scheduler=" + scheduler);
    if (vm.count("trace")) {
      sets.push_back("inference.trace=" + trace);
      sets.push_back("inference.arrivals=trace");
    }
    for (const auto& s : sets) engine::ApplyOverride(*scenario, s, diags);
    if (diags.ok()) engine::LoadDraftModel(*scenario, store, diags);
  }
  if (scenario && diags.ok() && !scenario->inference)
    diags.Add({scenario->file, 0, 0}, "scenario.inference", "",
              "the scenario has no inference section (add `inference:` or --set inference.tp=1)");
  if (scenario && diags.ok()) engine::CrossCheck(*scenario, diags);
  if (!scenario || !diags.ok()) {
    PrintDiagnostics(diags, err);
    return kExitInvalid;
  }
  const engine::Scenario& s = *scenario;
  const auto& d = *s.inference;
  const engine::InferenceEstimator est(s.model, s.system,
                                       s.draft_model ? &*s.draft_model : nullptr);

  if (!vm.count("serve") && !vm.count("max-rate")) {
    const engine::InferenceEstimate e = est.Run(d);
    if (fmt == Format::kJson) out << StaticJson(s, est, e).dump(2) << "\n";
    else if (fmt == Format::kCsv) PrintCsv(StaticJson(s, est, e), out);
    else PrintStatic(s, e, out);
    return kExitOk;
  }

  if (engine::CheckShape(s.model, s.system, d) != engine::InferenceInfeasible::kNone) {
    engine::InferenceEstimate e;
    e.infeasible = engine::CheckShape(s.model, s.system, d);
    err << "error: " << s.file << ": inference: " << engine::ExplainInfeasible(e, s) << "\n";
    return kExitInvalid;
  }
  ordered_json j = HeaderJson(s);
  j["scheduler"] = SchedulerName(d.scheduler);
  j["slo"] = {{"ttft_s", d.slo_ttft}, {"tpot_s", d.slo_tpot}, {"attainment", d.slo_attainment}};
  if (vm.count("serve")) {
    std::vector<engine::Request> reqs;
    if (d.arrivals == parallelism::Arrivals::kTrace) {
      auto t = engine::LoadTrace(d.trace, diags);
      if (!t) {
        PrintDiagnostics(diags, err);
        return kExitInvalid;
      }
      reqs = std::move(*t);
      j["arrivals"] = "trace " + d.trace;
    } else {
      reqs = engine::PoissonRequests(d, d.rate);
      j["arrivals"] = "poisson";
      j["rate_requests_per_s"] = d.rate;
    }
    const engine::ServingResult r = engine::SimulateServing(est, d, std::move(reqs));
    j["result"] = ServingJson(r);
    if (fmt == Format::kJson) out << j.dump(2) << "\n";
    else if (fmt == Format::kCsv) PrintCsv(j, out);
    else {
      PrintHeader(s, out);
      out << "serving    " << SchedulerName(d.scheduler) << " batching"
          << (d.paged_kv && d.scheduler != parallelism::Scheduler::kStatic ? ", paged KV" : "")
          << ", max " << d.max_batch << " running, " << d.max_batch_tokens
          << " tokens per iteration; "
          << (d.arrivals == parallelism::Arrivals::kTrace
                  ? "trace " + d.trace
                  : std::to_string(d.requests) + " Poisson requests at " +
                        base::FormatNumber(d.rate) + "/s")
          << "\n\n";
      PrintServing(r, out);
    }
    return kExitOk;
  }

  const engine::RateSearch m = engine::MaxRateMeetingSlo(est, d);
  j["found"] = m.found;
  j["reason"] = m.found ? ordered_json() : ordered_json(m.reason);
  j["max_rate_requests_per_s"] = m.max_rate;
  j["simulations"] = m.simulations;
  if (m.found) j["at_max_rate"] = ServingJson(m.at_max);
  if (fmt == Format::kJson) out << j.dump(2) << "\n";
  else if (fmt == Format::kCsv) PrintCsv(j, out);
  else {
    PrintHeader(s, out);
    out << "SLO        TTFT " << (d.slo_ttft > 0 ? Ms(d.slo_ttft) : "none") << ", TPOT "
        << (d.slo_tpot > 0 ? Ms(d.slo_tpot) : "none") << ", met by "
        << base::FormatNumber(100 * d.slo_attainment, 3) << " % of " << d.requests
        << " requests; " << SchedulerName(d.scheduler) << " batching\n\n";
    if (!m.found) {
      out << "no rate found: " << m.reason << "\n";
      return kExitOk;
    }
    out << "highest rate meeting the SLO: " << base::FormatNumber(m.max_rate)
        << " requests/s (" << m.simulations << " simulations)\n\n";
    PrintServing(m.at_max, out);
  }
  return kExitOk;
}

}  // namespace orrery::cli
