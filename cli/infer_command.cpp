// `orrery infer`: inference latency, throughput and memory of a served model,
// for a static batch, a simulated request stream, or the highest request
// rate that meets an SLO. Parses options, calls orrery::Infer, presents.

#include <iomanip>

#include "cli/cli_common.h"
#include "core/api/infer.h"
#include "core/api/json.h"
#include "core/base/format.h"

namespace orrery::cli {

namespace po = boost::program_options;
using namespace base;  // the Format* functions

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
    "applies to every mode.";

constexpr const char* kExamples =
    "\nExamples:\n"
    "  orrery infer configs/scenarios/llama2-70b-h100-infer.yaml\n"
    "  orrery infer llama2-70b-h100-infer --batch 64 --input 2048 --output 256 --format json\n"
    "  orrery infer llama2-70b-h100-infer --set inference.weights=int4 --set inference.tp=2\n"
    "  orrery infer llama2-70b-h100-infer --set inference.speculate=4 --set inference.acceptance=0.8\n"
    "  orrery infer llama2-70b-h100-infer --serve --rate 4 --scheduler chunked\n"
    "  orrery infer llama2-70b-h100-infer --max-rate --set inference.slo_ttft=500ms "
    "--set inference.slo_tpot=50ms\n";

void PrintHeader(const InferResult& r, std::ostream& out) {
  const engine::Scenario& s = r.scenario;
  const auto& d = *s.inference;
  out << "scenario   " << (s.name.empty() ? s.file : s.name) << "\n"
      << "model      " << s.model.name << " (" << FormatCount(r.parameters, "parameters") << ")\n"
      << "system     " << s.system.name << ": replica of " << d.tp * d.pp << " x "
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
      << "  KV cache          " << std::setw(12) << FormatBytes(e.memory.kv_cache) << "\n"
      << "  activations       " << std::setw(12) << FormatBytes(e.memory.activations) << "\n";
  if (e.memory.draft > 0) out << "  draft model       " << std::setw(12) << FormatBytes(e.memory.draft) << "\n";
  out << "  total             " << std::setw(12) << FormatBytes(e.memory.total()) << "  of "
      << FormatBytes(e.memory_usable) << " usable (" << FormatBytes(e.memory_capacity) << " x "
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
    out << "  " << std::left << std::setw(6) << name << std::right << std::setw(12) << FormatTime(p.mean)
        << std::setw(12) << FormatTime(p.p50) << std::setw(12) << FormatTime(p.p90) << std::setw(12)
        << FormatTime(p.p99) << std::setw(12) << FormatTime(p.max) << "\n";
  };
  out << "          mean         p50         p90         p99         max\n";
  row("TTFT", r.ttft_s);
  row("TPOT", r.tpot_s);
  row("E2E", r.e2e_s);
  out << "\nthroughput   " << FormatRate(r.output_tokens_per_s, "output tokens") << ", "
      << FormatRate(r.requests_per_s, "requests") << " over " << FormatTime(r.duration_s) << "\n"
      << "goodput      " << FormatRate(r.goodput_requests_per_s, "requests") << " meet the SLO ("
      << FormatPercent(r.slo_attainment) << " of requests)\n"
      << "scheduler    " << r.iterations << " iterations, " << r.peak_running
      << " requests running at most, " << r.preemptions << " preemptions, KV cache of "
      << FormatCount(static_cast<double>(r.kv_capacity_tokens), "tokens") << "\n";
}

void PrintTable(const InferResult& r, std::ostream& out) {
  const auto& d = *r.scenario.inference;
  PrintHeader(r, out);
  if (r.mode == InferMode::kStatic) return PrintStatic(r, out);
  if (!r.has_result) {
    out << "\nINFEASIBLE: " << r.reason << "\n";
    return;
  }
  if (r.mode == InferMode::kServe) {
    out << "serving    " << SchedulerName(d.scheduler) << " batching"
        << (d.paged_kv && d.scheduler != parallelism::Scheduler::kStatic ? ", paged KV" : "")
        << ", max " << d.max_batch << " running, " << d.max_batch_tokens << " tokens per iteration; "
        << (d.arrivals == parallelism::Arrivals::kTrace
                ? "trace " + d.trace
                : std::to_string(d.requests) + " Poisson requests at " + FormatRate(d.rate, "requests"))
        << "\n\n";
    return PrintServing(r.serving, out);
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
  out << "highest rate meeting the SLO: " << FormatRate(m.max_rate, "requests") << " ("
      << m.simulations << " simulations)\n\n";
  PrintServing(m.at_max, out);
}

}  // namespace

int RunInfer(const Args& args, std::ostream& out, std::ostream& err) {
  VerbOptions v("infer", kHelp);
  int64_t batch = 0, input = 0, output = 0, requests = 0;
  double rate = 0;
  std::string scheduler, trace;
  v.Positional("scenario").Formats().Set(
      "override one parameter, e.g. --set inference.tp=4 --set inference.kv_cache=fp8");
  v.add_options()("batch", po::value(&batch), "static batch size (= --set inference.batch=B)")(
      "input", po::value(&input), "prompt tokens (= --set inference.input=I)")(
      "output", po::value(&output), "generated tokens (= --set inference.output=O)")(
      "serve", "simulate serving a request stream")(
      "max-rate", "search the highest request rate meeting the SLO")(
      "rate", po::value(&rate), "requests/s for --serve (= --set inference.rate=R)")(
      "requests", po::value(&requests), "requests to simulate (= --set inference.requests=N)")(
      "scheduler", po::value(&scheduler), "static | continuous | chunked")(
      "trace", po::value(&trace), "CSV of arrival_s,input,output (sets inference.arrivals=trace)");
  v.Examples(kExamples);
  if (const int code = v.Parse(args, out, err); code >= 0) return code;
  if (!v.Has("scenario")) return v.Usage(err, "missing SCENARIO");
  if (v.Has("serve") && v.Has("max-rate"))
    return v.Usage(err, "--serve and --max-rate are separate modes; give one");
  InferRequest req;
  req.mode = v.Has("serve") ? InferMode::kServe : v.Has("max-rate") ? InferMode::kMaxRate : InferMode::kStatic;
  // Shortcut options are --set overrides with the same rules and messages.
  std::vector<std::string> sets = v.sets();
  if (v.Has("batch")) sets.push_back("inference.batch=" + std::to_string(batch));
  if (v.Has("input")) sets.push_back("inference.input=" + std::to_string(input));
  if (v.Has("output")) sets.push_back("inference.output=" + std::to_string(output));
  if (v.Has("rate")) sets.push_back("inference.rate=" + FormatPlain(rate, 12));
  if (v.Has("requests")) sets.push_back("inference.requests=" + std::to_string(requests));
  if (v.Has("scheduler")) sets.push_back("inference.scheduler=" + scheduler);
  if (v.Has("trace")) {
    sets.push_back("inference.trace=" + trace);
    sets.push_back("inference.arrivals=trace");
  }
  req.scenario = ScenarioInput::File(v.Arg("scenario"), sets);
  req.scenario.model_config = v.model_config();
  const InferResult r = Infer(req);
  if (r.status == Status::kInvalidInput || !r.scenario.inference) return v.Report(r, err);
  if (v.format() == Format::kJson) out << ToJson(r).dump(2) << "\n";
  else if (v.format() == Format::kCsv) WriteCsv(ToJson(r), out);
  else PrintTable(r, out);
  return ExitCode(r.status);
}

}  // namespace orrery::cli
