// `orrery infer`: inference latency, throughput and memory of a served model,
// for a static batch, a simulated request stream, or the highest request
// rate that meets an SLO. Parses options, calls orrery::Infer, presents.

#include <iomanip>

#include "cli/cli_common.h"
#include "core/api/infer.h"
#include "core/api/json.h"
#include "core/api/text.h"
#include "core/base/format.h"

namespace orrery::cli {

namespace po = boost::program_options;
using namespace base;  // the Format* functions

namespace {

constexpr const char* kHelp =
    "orrery infer SCENARIO.yaml [options]\n\n"
    "Predicts serving the scenario's model as its `inference:` section deploys it\n"
    "(orrery explain inference lists every key). Four modes:\n"
    "  (default)   a static batch: batch prompts of `input` tokens, `output` tokens each;\n"
    "              time to first token, time per output token, end-to-end latency,\n"
    "              tokens/s in total and per device, memory per device, the largest\n"
    "              batch and context that fit, energy per token\n"
    "  --serve     a simulated request stream (Poisson at `rate`, or a CSV trace) through\n"
    "              the scheduler (static, continuous, chunked prefill; paged KV with\n"
    "              preemption): TTFT/TPOT p50/p90/p99, throughput, goodput under the SLO\n"
    "  --max-rate  the highest Poisson rate at which slo_attainment of the requests meet\n"
    "              slo_ttft and slo_tpot on each of rate_seeds arrival seeds (default 5):\n"
    "              per-seed capacities by bisection, their mean and 95 % interval, and a\n"
    "              rate at or below both that passes --serve --rate R on every seed\n"
    "  --best-split  the best use of the system's devices at `rate` under the SLO: every\n"
    "              disaggregated layout (prefill replicas and tp, decode replicas and tp)\n"
    "              and every colocated one, simulated on the same requests; first the\n"
    "              fewest devices meeting the SLO, then the rest by SLO attainment\n"
    "Disaggregated serving (--disagg, = --set inference.disaggregate=true, with --serve):\n"
    "prompts run on prefill_replicas replicas of prefill_tp x prefill_pp devices, tokens\n"
    "on decode_replicas replicas of decode_tp x decode_pp, and each prompt's KV cache\n"
    "(layers x 2 x KV heads x head dim x prompt tokens x KV bytes) crosses the network\n"
    "tier kv_tier between them (DistServe, Zhong et al. 2024; Splitwise, Patel et al.\n"
    "2024). It pays when long prompts would stall colocated decodes under tight SLOs;\n"
    "short prompts and long outputs leave prefill GPUs idle and favour colocation.\n"
    "Speculative decoding (inference.speculate, acceptance, draft_model or draft_cost)\n"
    "applies to every mode but disaggregated serving.";

constexpr const char* kExamples =
    "\nExamples:\n"
    "  orrery infer configs/scenarios/llama2-70b-h100-infer.yaml\n"
    "  orrery infer llama2-70b-h100-infer --batch 64 --input 2048 --output 256 --format json\n"
    "  orrery infer llama2-70b-h100-infer --set inference.weights=int4 --set inference.tp=2\n"
    "  orrery infer llama2-70b-h100-infer --set inference.speculate=4 --set inference.acceptance=0.8\n"
    "  orrery infer llama2-70b-h100-infer --serve --rate 4 --scheduler chunked\n"
    "  orrery infer llama2-70b-h100-infer --max-rate --set inference.slo_ttft=500ms "
    "--set inference.slo_tpot=50ms\n"
    "  orrery infer llama2-70b-h100-infer --serve --disagg --set inference.prefill_tp=2 "
    "--set inference.prefill_replicas=2 --set inference.decode_tp=4\n"
    "  orrery infer llama2-70b-h100-infer --best-split --rate 4\n";

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
      "best-split", "best disaggregated or colocated layout of the system's devices at --rate")(
      "disagg", "with --serve: prefill and decode on separate pools (= --set inference.disaggregate=true)")(
      "rate", po::value(&rate), "requests/s for --serve (= --set inference.rate=R)")(
      "requests", po::value(&requests), "requests to simulate (= --set inference.requests=N)")(
      "scheduler", po::value(&scheduler), "static | continuous | chunked")(
      "trace", po::value(&trace), "CSV of arrival_s,input,output (sets inference.arrivals=trace)");
  v.Examples(kExamples);
  if (const int code = v.Parse(args, out, err); code >= 0) return code;
  if (!v.Has("scenario")) return v.Usage(err, "missing SCENARIO");
  if (v.Has("serve") + v.Has("max-rate") + v.Has("best-split") > 1)
    return v.Usage(err, "--serve, --max-rate and --best-split are separate modes; give one");
  if (v.Has("disagg") && !v.Has("serve"))
    return v.Usage(err, "--disagg simulates a request stream: give it with --serve");
  InferRequest req;
  req.mode = v.Has("serve")        ? InferMode::kServe
             : v.Has("max-rate")   ? InferMode::kMaxRate
             : v.Has("best-split") ? InferMode::kSplit
                                   : InferMode::kStatic;
  // Shortcut options are --set overrides with the same rules and messages.
  std::vector<std::string> sets = v.sets();
  if (v.Has("batch")) sets.push_back("inference.batch=" + std::to_string(batch));
  if (v.Has("input")) sets.push_back("inference.input=" + std::to_string(input));
  if (v.Has("output")) sets.push_back("inference.output=" + std::to_string(output));
  if (v.Has("rate")) sets.push_back("inference.rate=" + FormatPlain(rate, 12));
  if (v.Has("requests")) sets.push_back("inference.requests=" + std::to_string(requests));
  if (v.Has("scheduler")) sets.push_back("inference.scheduler=" + scheduler);
  if (v.Has("disagg")) sets.push_back("inference.disaggregate=true");
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
  else text::PrintInferTable(r, out);
  return ExitCode(r.status);
}

}  // namespace orrery::cli
