#include "core/validation/inference_validation.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "core/estimate/inference_estimator.h"
#include "core/estimate/max_load.h"
#include "core/validation/validation.h"
#include "core/base/csv.h"

namespace orrery::engine {
namespace {

using hardware::DataType;

bool Contains(const std::string& text, const char* what) {
  return text.find(what) != std::string::npos;
}

// The minor version of a TensorRT-LLM 0.x release a source names ("v0.6.1",
// "v0.20 data", "version 0.9.0"; the first one named), or -1 when it names
// no TensorRT-LLM 0.x version.
int TensorRtLlmMinorVersion(const std::string& text) {
  if (!Contains(text, "TensorRT-LLM") && !Contains(text, "trtllm")) return -1;
  const size_t v = text.find("v0."), version = text.find("version 0.");
  const size_t at = std::min(v, version);
  if (at == std::string::npos) return -1;
  size_t i = at + (at == v ? 3 : 10);
  int minor = 0, digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && digits < 4) {
    minor = minor * 10 + (text[i] - '0');
    ++i;
    ++digits;
  }
  return digits > 0 ? minor : -1;
}

// lmdeploy's TurboMind engine context-decodes every prompt token but the
// last and runs that one through the first decode step, which samples the
// first output token; a one-token prompt skips context decoding
// (InternLM/lmdeploy src/turbomind/models/llama/LlamaBatch.cc,
// LlamaBatch::contextDecode, v0.1 era: input and context lengths less one,
// "skip last input token (will process with decoder later)"; the stream
// callback runs after each decode step). Its benchmark/profile_generation.py
// takes the first-token latency from a request's stream_infer call to the
// first streamed token, and the throughput as generated tokens over the
// whole run. So the first token costs a prefill of input - 1 tokens plus a
// decode step over the batch, and each of the other out - 1 tokens a step.
InferenceEstimate TurboMindStatic(const InferenceEstimator& est,
                                  const parallelism::InferenceDeployment& d, InferenceEstimate e) {
  const double b = static_cast<double>(d.batch);
  const double in = static_cast<double>(d.input);
  const double out = static_cast<double>(d.output);
  const double context = in > 1 ? est.Pass(d, IterationShape::Prefill(b, in - 1, 0, &est.model())).total : 0.0;
  e.ttft_s = context + est.Pass(d, IterationShape::Decode(b, in, &est.model())).total;
  e.e2e_s = e.ttft_s + (out - 1) * e.tpot_s;
  e.output_tokens_per_s = b * out / e.e2e_s;
  e.output_tokens_per_s_per_device = e.output_tokens_per_s / static_cast<double>(e.devices);
  return e;
}

}  // namespace

bool IsInferenceCsv(const std::string& csv_file) {
  auto table = base::ReadCsvFile(csv_file);
  if (!table) return false;
  const bool measured = table->ColumnIndex("measured_ttft_ms") >= 0 ||
                        table->ColumnIndex("measured_tpot_ms") >= 0 ||
                        table->ColumnIndex("measured_tokens_per_s") >= 0;
  return measured && table->ColumnIndex("input_len") >= 0 && table->ColumnIndex("output_len") >= 0;
}

ValidationReport ValidateInferenceCsv(const std::string& csv_file, const PresetStore& store,
                                      base::Diagnostics& diags) {
  ValidationReport report;
  auto table = base::ReadCsvFile(csv_file);
  if (!table) {
    diags.Add({csv_file, 0, 0}, "", "", table.error().message);
    return report;
  }
  const auto& t = *table;
  const std::vector<std::string> required = {"model", "gpu", "num_gpus", "tp", "precision",
                                             "batch", "input_len", "output_len"};
  for (const auto& c : required)
    if (t.ColumnIndex(c) < 0)
      diags.Add({csv_file, t.header_line, 0}, c, "", "required column is missing",
                base::DidYouMean(c, t.header));
  if (!diags.ok()) return report;

  std::map<std::string, std::pair<models::ModelSpec, bool>> models_by_name;
  std::map<std::string, std::pair<hardware::SystemSpec, bool>> systems;

  for (const auto& r : t.rows) {
    ValidationRow base_row;
    base_row.file = csv_file;
    base_row.line = r.line;
    auto cell = [&](const char* name) -> std::string {
      const int i = t.ColumnIndex(name);
      return i < 0 ? std::string() : TrimCell(r.cells[static_cast<size_t>(i)]);
    };
    auto num = [&](const char* name, double& out) {
      return base::ParseDouble(cell(name), &out);
    };
    base_row.model = cell("model");
    base_row.source = cell("source");
    const std::string notes = cell("notes");
    std::string assumed;
    auto assume = [&](const std::string& a) { assumed += (assumed.empty() ? "" : "; ") + a; };
    auto skip = [&](const std::string& why) {
      ValidationRow row = base_row;
      row.skipped = why;
      report.rows.push_back(row);
    };

    // --- what was measured -----------------------------------------------------
    double ttft_ms = 0, tpot_ms = 0, tok_s = 0;
    const bool has_ttft = num("measured_ttft_ms", ttft_ms) && ttft_ms > 0;
    const bool has_tpot = num("measured_tpot_ms", tpot_ms) && tpot_ms > 0;
    const bool has_tok = num("measured_tokens_per_s", tok_s) && tok_s > 0;
    double e2e_ms = 0, req_s = 0;
    const bool has_e2e = num("measured_e2e_ms", e2e_ms) && e2e_ms > 0;
    const bool has_req = num("measured_requests_per_s", req_s) && req_s > 0;
    if (!has_ttft && !has_tpot && !has_tok && !has_e2e && !has_req) {
      skip("no measured TTFT, TPOT, e2e latency, requests/s or tokens/s");
      continue;
    }

    // --- the model -------------------------------------------------------------
    const auto resolved = store.Resolve(DocKind::kModel, base_row.model);
    if (!resolved) {
      const std::string near = store.CloseTo(DocKind::kModel, base_row.model);
      skip("no model preset for '" + base_row.model + "'" + (near.empty() ? "" : "; " + near));
      continue;
    }
    const std::string& preset = resolved->preset;
    if (!resolved->dropped.empty())
      assume("'" + base_row.model + "' read as preset " + preset + " ('" + resolved->dropped +
             "' names a variant of the same shape)");
    auto mit = models_by_name.find(preset);
    if (mit == models_by_name.end()) {
      models::ModelSpec m;
      base::Diagnostics d;
      const bool ok = LoadModelPreset(preset, store, {csv_file, r.line, 0}, "model", m, d);
      if (!ok) diags.Append(d);
      mit = models_by_name.emplace(preset, std::make_pair(m, ok)).first;
    }
    if (!mit->second.second) {
      skip("model preset '" + preset + "' failed to load");
      continue;
    }

    // --- precision ---------------------------------------------------------------
    const std::string precision = cell("precision");
    parallelism::InferenceDeployment dep;
    if (precision == "FP16" || precision == "BF16") {
      const DataType dt = precision == "FP16" ? DataType::kFp16 : DataType::kBf16;
      dep.weights = dep.activations = dep.kv_cache = dt;
    } else if (precision == "FP8") {
      // TensorRT-LLM FP8 builds quantise weights, GEMM inputs and the KV cache
      // (--enable_fp8 --fp8_kv_cache, docs/source/performance.md v0.6.1;
      // ModelOpt FP8 checkpoints carry an FP8 KV cache as well).
      dep.weights = dep.activations = dep.kv_cache = DataType::kFp8;
      assume("FP8 weights, GEMM inputs and KV cache");
    } else if (precision.rfind("FP4", 0) == 0 || precision.rfind("NVFP4", 0) == 0 ||
               precision.rfind("MXFP4", 0) == 0) {
      // ModelOpt NVFP4 checkpoints quantise weights and GEMM inputs to FP4
      // and the KV cache to FP8 (TensorRT-LLM perf-overview: nvidia/*-FP4
      // checkpoints; ModelOpt kv_cache_quant_algo FP8).
      const bool mx = precision.find("MXFP4") != std::string::npos;
      dep.weights = dep.activations = mx ? DataType::kMxfp4 : DataType::kFp4;
      dep.kv_cache = DataType::kFp8;
      assume(std::string(mx ? "MXFP4" : "NVFP4") + " weights and GEMM inputs, FP8 KV cache");
    } else if (precision.rfind("INT4", 0) == 0 || precision.rfind("W4A16", 0) == 0 ||
               precision.rfind("AWQ", 0) == 0 || precision.rfind("GPTQ", 0) == 0) {
      // Weight-only INT4 (AWQ, GPTQ; Marlin kernels): int4 weights with
      // group-128 scales, FP16 GEMM inputs and KV cache (vLLM's AWQ/GPTQ
      // paths run FP16 activations; Frantar et al. 2024, arXiv 2408.11743).
      dep.weights = DataType::kInt4;
      dep.activations = dep.kv_cache = DataType::kFp16;
      assume("INT4 weight-only (group-128 scales), FP16 GEMM inputs and KV cache");
    } else if (precision.empty()) {
      // Weight bytes, and so decode time, depend on the precision; none is
      // assumed (validation/README.md: the NeMo rows dropped for this).
      skip("precision not stated (weight bytes, and so decode time, depend on it)");
      continue;
    } else {
      skip("precision '" + precision + "' is not a modelled datatype");
      continue;
    }

    // --- the system -----------------------------------------------------------------
    const std::string gpu = cell("gpu");
    const GpuPlacement place = PlaceGpu(gpu, store);
    if (!place.error.empty()) {
      skip(place.error);
      continue;
    }
    if (!place.assumption.empty()) assume(place.assumption);
    base_row.device = place.device;
    const std::string key = place.system + "/" + place.device;
    auto sit = systems.find(key);
    if (sit == systems.end()) {
      base::Diagnostics d;
      hardware::SystemSpec sys;
      bool ok = LoadSystemPreset(place.system, store, {csv_file, r.line, 0}, "system", sys, d);
      if (ok && sys.device_preset != place.device) {
        ok = LoadDevicePreset(place.device, store, {csv_file, r.line, 0}, "system.device",
                              sys.device, d);
        sys.device_preset = place.device;
      }
      if (!ok) diags.Append(d);
      sit = systems.emplace(key, std::make_pair(sys, ok)).first;
    }
    if (!sit->second.second) {
      skip("system preset '" + place.system + "' failed to load");
      continue;
    }

    // --- deployment and workload -----------------------------------------------------
    double v = 0;
    double gpus = 0;
    if (!num("num_gpus", gpus) || gpus < 1) {
      skip("num_gpus missing");
      continue;
    }
    dep.tp = num("tp", v) && v >= 1 ? static_cast<int64_t>(v) : 1;
    dep.pp = num("pp", v) && v >= 1 ? static_cast<int64_t>(v) : 1;
    // Devices beyond one replica serve further replicas (data-parallel
    // serving): throughput scales with them, latency does not.
    const int64_t per_replica = dep.tp * dep.pp;
    const int64_t n_gpus = static_cast<int64_t>(gpus);
    if (n_gpus % per_replica != 0) {
      skip("num_gpus is not a multiple of tp x pp (whole replicas)");
      continue;
    }
    const int64_t whole_replicas = n_gpus / per_replica;  // exact: checked just above
    const double replicas = static_cast<double>(whole_replicas);
    if (replicas > 1) assume(std::to_string(whole_replicas) + " independent replicas");
    double batch = 0, in = 0, out = 0;
    if (!num("input_len", in) || !num("output_len", out) || in < 1 || out < 1) {
      skip("input_len or output_len missing");
      continue;
    }
    const bool max_load = !num("batch", batch) || batch < 1;
    if (max_load && !Contains(notes, "max-load")) {
      skip("no batch size, and the notes do not say it is a max-load run");
      continue;
    }
    // TensorRT-LLM before v0.8 decoded GQA models with its masked-MHA kernel,
    // one thread block per sequence and query head, each loading its KV
    // head's cache; v0.8 brought the XQA kernel that loads it once per group
    // (TensorRT-LLM docs/source/blogs/XQA-kernel.md: Llama-70B on H200,
    // 128/2048, 1,227 tok/s/GPU without XQA, 2,941 with).
    // In v0.8 and v0.9 the kernel was opt-in and narrow: their performance
    // pages warn that the GQA kernels "are currently experimental and not
    // enabled by default" and `export TRTLLM_ENABLE_XQA=1` only in the
    // benchmark sections of the models they enabled it for (Llama2-70b,
    // Falcon-180B: NVIDIA/TensorRT-LLM docs/source/performance.md at
    // 77d24b5f, and the v0.9.0 perf-overview.md); and the precompiled
    // generation kernels of that time are built for head sizes 128 and 256
    // with 8 query heads per KV head only (cpp/tensorrt_llm/kernels/
    // decoderMaskedMultiheadAttention/cubin/xqa_kernel_cubin.h,
    // "SingleQueryToken kernels": xqa_kernel_dt_*_d_{128,256}_..._nqpkv_8).
    // A row of those releases runs XQA only where its notes carry that
    // export and its model has that shape (Llama 2 70B: 64 / 8 heads of 128;
    // not Falcon-180B: 232 / 8 heads of 64, nor Mistral's 32 / 8).
    const int trtllm_minor = TensorRtLlmMinorVersion(base_row.source + " " + notes);
    const models::ModelSpec& spec = mit->second.first;
    const bool gqa = models::KvHeads(spec) < spec.heads;
    if (trtllm_minor >= 0 && trtllm_minor < 8) {
      dep.gqa_shared_kv = false;
      if (gqa)
        assume("TensorRT-LLM v0." + std::to_string(trtllm_minor) +
               " (before XQA): decode attention reads the KV cache once per query head");
    } else if ((trtllm_minor == 8 || trtllm_minor == 9) && gqa) {
      const bool exported = Contains(notes, "TRTLLM_ENABLE_XQA=1");
      const int64_t head = models::HeadDim(spec);
      const bool kernel = spec.heads == 8 * models::KvHeads(spec) && (head == 128 || head == 256);
      if (!exported || !kernel) {
        dep.gqa_shared_kv = false;
        assume("TensorRT-LLM v0." + std::to_string(trtllm_minor) + ", no XQA (" +
               (exported ? "no precompiled kernel for " + std::to_string(spec.heads) + " / " +
                               std::to_string(models::KvHeads(spec)) + " heads of " +
                               std::to_string(head)
                         : std::string("opt-in then, TRTLLM_ENABLE_XQA=1 not set")) +
               "): decode attention reads the KV cache once per query head");
      }
    }
    // The measured runs sized their KV cache to the whole device; the flag
    // "does not fit" then means the memory model needs more than the device.
    dep.memory_fraction = 1.0;
    dep.batch = max_load ? 1 : static_cast<int64_t>(batch);
    dep.input = static_cast<int64_t>(in);
    dep.output = static_cast<int64_t>(out);
    // A measured run past the model's trained context: a learned position
    // table has no row for it (the row cannot have run as stated), RoPE
    // computes every position and the engine's own limits bound the run
    // (TensorRT-LLM's max_input_len + max_output_len: GPT-J 6B, 2048
    // positions, benchmarked at 2048 + 2048). The deployment check that
    // refuses such a request from a user (parallelism/deployment_spec.cpp) is
    // lifted for the row, said in its assumptions.
    models::ModelSpec row_model = mit->second.first;
    if (row_model.max_seq > 0 && dep.input + dep.output > row_model.max_seq) {
      const std::string total = std::to_string(dep.input + dep.output);
      if (row_model.position == models::Position::kLearned) {
        skip("input + output (" + total +
             " tokens) exceeds the model's learned position table (max_seq " +
             std::to_string(row_model.max_seq) + ")");
        continue;
      }
      assume("input + output (" + total + " tokens) past the model's trained context (max_seq " +
             std::to_string(row_model.max_seq) + "), as the run went: RoPE positions are computed");
      row_model.max_seq = dep.input + dep.output;
    }

    Scenario s;
    s.name = base_row.model;
    s.file = csv_file + ":" + std::to_string(r.line);
    s.model = row_model;
    s.system = sit->second.first;
    s.system.nodes = 1;
    s.system.devices_per_node = std::max<int64_t>(8, per_replica);
    s.has_training = false;
    s.inference = dep;
    base::Diagnostics d;
    CrossCheck(s, d);
    if (!d.ok()) {
      skip("deployment does not fit the model: " + d.items()[0].message);
      continue;
    }
    const InferenceEstimator est(s.model, s.system);
    auto add = [&](const char* metric, double measured, double predicted) {
      ValidationRow row = base_row;
      row.assumptions = assumed;
      row.metric = metric;
      row.measured = measured;
      row.predicted = predicted;
      // A prediction that is not a positive, finite figure has no error (a
      // time of 0 would make its speed error infinite): the row says why.
      if (std::isfinite(predicted) && predicted > 0)
        row.error_pct = (predicted - measured) / measured * 100;
      else
        row.skipped = std::string("the estimator predicted no positive ") + metric;
      report.rows.push_back(row);
    };
    const bool per_gpu = Contains(notes, "tok/s/GPU") || Contains(notes, "per GPU");
    if (max_load) {
      // The benchmark chose its own limits: its documented rule.
      LimitRule rule;
      const std::string engine_text = base_row.source + " " + notes;
      if (Contains(engine_text, "TensorRT-LLM") || Contains(engine_text, "trtllm"))
        rule = LimitRule::kTrtllmBench;
      else if (Contains(engine_text, "vLLM") || Contains(engine_text, "vllm"))
        rule = LimitRule::kVllm;
      else {
        skip("max-load run of an engine whose limit rule is not modelled");
        continue;
      }
      double requests = 0;
      if (!num("requests", requests) || requests < 1) {
        requests = 1000;
        assume("1000 requests queued (the row states no count)");
      }
      const EngineLimits lim = BenchmarkLimits(rule, s.model, s.system.device, dep, dep.input,
                                               dep.output);
      const MaxLoadResult ml = RunMaxLoad(est, dep, lim, static_cast<int64_t>(requests));
      if (!ml.feasible) {
        skip("infeasible at max load: " + ml.reason);
        continue;
      }
      assume(lim.rule);
      if (has_ttft) add("max_load_ttft_ms", ttft_ms, ml.ttft_s * 1e3);
      if (has_tpot) add("max_load_tpot_ms", tpot_ms, ml.tpot_s * 1e3);
      if (has_tok) {
        if (per_gpu)
          add("max_load_output_tok_per_s_per_gpu", tok_s,
              ml.output_tokens_per_s / static_cast<double>(per_replica));
        else
          add("max_load_output_tok_per_s", tok_s, ml.output_tokens_per_s * replicas);
      }
      continue;
    }
    InferenceEstimate e = est.Run(dep);
    if (e.e2e_s > 0 && Contains(base_row.source, "TurboMind")) {
      e = TurboMindStatic(est, dep, e);
      assume("TurboMind: first token = prefill of input - 1 tokens + one decode step");
    }
    if (e.e2e_s <= 0) {
      skip("infeasible: " + ExplainInfeasible(e, s));
      continue;
    }
    base_row.predicted_oom = e.infeasible == InferenceInfeasible::kOutOfMemory;
    if (has_ttft) add("ttft_ms", ttft_ms, e.ttft_s * 1e3);
    if (has_tpot) add("tpot_ms", tpot_ms, e.tpot_s * 1e3);
    if (has_e2e) add("e2e_ms", e2e_ms, e.e2e_s * 1e3);
    if (has_req)
      add("requests_per_s", req_s, static_cast<double>(dep.batch) / e.e2e_s * replicas);
    if (has_tok) {
      if (Contains(notes, "not explicitly per GPU"))
        assume("throughput column read as per GPU (as the same table's H100 rows)");
      if (per_gpu)
        add("output_tok_per_s_per_gpu", tok_s, e.output_tokens_per_s_per_device);
      else
        add("output_tok_per_s", tok_s, e.output_tokens_per_s * replicas);
    }
  }
  Summarise(report);
  return report;
}

}  // namespace orrery::engine
