#include "parallelism/deployment_spec.h"

namespace orrery::parallelism {

using base::Dimension;
using hardware::DataType;

namespace {

std::vector<std::pair<std::string, DataType>> StorageTypes() {
  return {{"bf16", DataType::kBf16}, {"fp16", DataType::kFp16}, {"fp8", DataType::kFp8},
          {"int8", DataType::kInt8}, {"int4", DataType::kInt4}, {"fp4", DataType::kFp4},
          {"mxfp4", DataType::kMxfp4}};
}

}  // namespace

hardware::DataType ComputeType(const InferenceDeployment& d) { return d.activations; }

const base::Schema<InferenceDeployment>& InferenceDeploymentSchema() {
  static const base::Schema<InferenceDeployment> schema = [] {
    using D = InferenceDeployment;
    base::Schema<D> s("inference",
                      "How the model is served: parallelism, precisions, offload, a static "
                      "workload (batch, input, output), the serving scheduler and request "
                      "stream, SLOs, and speculative decoding.");
    s.Int("tp", &D::tp, 1, 1e5, "1", "Tensor-parallel degree of one replica.")
        .Int("pp", &D::pp, 1, 1e4, "1",
             "Pipeline stages of one replica (a decode step crosses every stage).")
        .Int("ep", &D::ep, 1, 1e5, "1",
             "Expert-parallel groups inside the tp group for MoE layers (ep divides tp; each "
             "expert is split over tp/ep devices).")
        .Enum<DataType>("weights", &D::weights, StorageTypes(), "bf16",
                        "Datatype of the stored weights. int4 or int8 with 16-bit activations is "
                        "weight-only quantisation (W4A16/W8A16: AWQ, GPTQ, Marlin kernels): int4 "
                        "carries one 16-bit scale per 128 weights (4.125 bits), the embedding "
                        "and LM head stay 16-bit, and every GEMM dequantizes its weights on the "
                        "CUDA cores once per 64 rows (Frantar et al. 2024, arXiv 2408.11743).")
        .Enum<DataType>("activations", &D::activations,
                        {{"bf16", DataType::kBf16}, {"fp16", DataType::kFp16},
                         {"fp8", DataType::kFp8}, {"int8", DataType::kInt8},
                         {"fp4", DataType::kFp4}, {"mxfp4", DataType::kMxfp4}},
                        "bf16", "Datatype of GEMM inputs; GEMMs run at the device peak for it.")
        .Enum<DataType>("kv_cache", &D::kv_cache, StorageTypes(), "bf16",
                        "Datatype of the KV cache.")
        .Bool("gqa_shared_kv", &D::gqa_shared_kv, "true",
              "Decode attention reads each KV head once for all the query heads sharing it "
              "(GQA/MQA); false reads it once per query head, as masked-MHA kernels with one "
              "thread block per sequence and head do (TensorRT-LLM before its XQA kernel, "
              "v0.8: 1,227 vs 2,941 tok/s/GPU on Llama-70B, blogs/XQA-kernel.md).")
        .Real("offload_weights", &D::offload_weights, 0, 1, "0",
              "Fraction of the weights kept in host memory or on NVMe and streamed over PCIe "
              "every forward pass (FlexGen, Sheng et al. 2023).")
        .Real("offload_kv", &D::offload_kv, 0, 1, "0",
              "Fraction of the KV cache kept in the offload tier and streamed every step.")
        .Enum<OffloadTarget>("offload_to", &D::offload_to,
                             {{"host", OffloadTarget::kHost}, {"nvme", OffloadTarget::kNvme}},
                             "host", "Offload tier: host memory (system.host_bandwidth) or NVMe.")
        .Quantity("nvme_bandwidth", &D::nvme_bandwidth, Dimension::kBandwidth, 0, 1e13, "0 B/s",
                  "NVMe read bandwidth per device when offloading there (needed for "
                  "offload_to: nvme; the slower of it and the host link applies).")
        .Real("memory_fraction", &D::memory_fraction, 0, 1, "0.9",
              "Fraction of device memory for weights, KV cache and activations (vLLM "
              "gpu_memory_utilization, default 0.9).",
              true)
        .Int("batch", &D::batch, 1, 1e7, "1", "Static workload: sequences per batch.")
        .Int("input", &D::input, 1, 1e8, "128", "Static workload: prompt tokens per sequence.")
        .Int("output", &D::output, 1, 1e8, "128",
             "Static workload: generated tokens per sequence (the first comes from prefill).")
        .Enum<Scheduler>("scheduler", &D::scheduler,
                         {{"static", Scheduler::kStatic},
                          {"continuous", Scheduler::kContinuous},
                          {"chunked", Scheduler::kChunked}},
                         "continuous",
                         "Serving: static batches run to completion; continuous batching "
                         "(Yu et al. 2022, Orca) admits requests every iteration; chunked "
                         "prefill (Agrawal et al. 2024, Sarathi-Serve) splits prompts to fit "
                         "max_batch_tokens alongside decodes.")
        .Int("max_batch", &D::max_batch, 1, 1e7, "256",
             "Serving: most sequences running at once (vLLM max_num_seqs, default 256).")
        .Int("max_batch_tokens", &D::max_batch_tokens, 1, 1e9, "8192",
             "Serving: most tokens one iteration processes (prefill chunk budget).")
        .Bool("paged_kv", &D::paged_kv, "true",
              "Serving: KV cache in fixed-size blocks allocated on demand, preempting the "
              "newest request when blocks run out (Kwon et al. 2023, vLLM); false reserves "
              "input + output tokens per request at admission.")
        .Int("kv_block", &D::kv_block, 1, 1e6, "16", "Serving: tokens per KV block (vLLM: 16).")
        .Enum<Arrivals>("arrivals", &D::arrivals,
                        {{"poisson", Arrivals::kPoisson}, {"trace", Arrivals::kTrace}}, "poisson",
                        "Serving: Poisson arrivals at `rate`, or the CSV `trace`.")
        .Real("rate", &D::rate, 0, 1e9, "1", "Serving: mean request arrival rate (requests/s).",
              true)
        .Int("requests", &D::requests, 1, 1e7, "500", "Serving: requests to simulate.")
        .String("trace", &D::trace, "",
                "Serving: CSV with columns arrival_s,input,output (one request a row).")
        .Enum<LengthDistribution>("lengths", &D::lengths,
                                  {{"fixed", LengthDistribution::kFixed},
                                   {"uniform", LengthDistribution::kUniform},
                                   {"exponential", LengthDistribution::kExponential}},
                                  "fixed",
                                  "Serving: input and output lengths fixed at input/output, "
                                  "uniform on [1, 2x-1], or exponential with that mean.")
        .Int("seed", &D::seed, 0, 4e18, "1", "Serving: random seed of arrivals and lengths.")
        .Int("rate_seeds", &D::rate_seeds, 1, 100, "5",
             "Max-rate search: arrival seeds (seed, seed + 1, ...) the rate must meet the SLO on; "
             "the answer is at most the lower end of the 95 % confidence interval of their "
             "capacities.")
        .Quantity("slo_ttft", &D::slo_ttft, Dimension::kTime, 0, 1e6, "0 s",
                  "SLO on time to first token (0 = none).")
        .Quantity("slo_tpot", &D::slo_tpot, Dimension::kTime, 0, 1e6, "0 s",
                  "SLO on mean time per output token of a request (0 = none).")
        .Real("slo_attainment", &D::slo_attainment, 0, 1, "0.9",
              "Fraction of requests that must meet the SLO for a rate to count as served.",
              true)
        .Int("speculate", &D::speculate, 0, 64, "0",
             "Speculative decoding: draft tokens k proposed per target step (0 = off).")
        .Real("acceptance", &D::acceptance, 0, 1, "0.7",
              "Speculative decoding: probability a that the target accepts a draft token "
              "(Leviathan et al. 2023, alpha).")
        .String("draft_model", &D::draft_model, "",
                "Speculative decoding: model preset of the draft, run on the same devices; "
                "empty = draft_cost.")
        .Real("draft_cost", &D::draft_cost, 0, 10, "0.05",
              "Speculative decoding without a draft model: one draft step as a fraction of a "
              "target decode step (Leviathan et al. 2023, c; small for Medusa-style heads).")
        .Bool("disaggregate", &D::disaggregate, "false",
              "Serving: run prompts (prefill) and token generation (decode) on separate "
              "pools of replicas and send each prompt's KV cache between them (DistServe, "
              "Zhong et al. 2024; Splitwise, Patel et al. 2024): no prefill stalls the "
              "decodes, each phase gets its own tp; costs the KV transfer and the split GPUs.")
        .Int("prefill_tp", &D::prefill_tp, 0, 1e5, "0",
             "Disaggregated serving: tensor-parallel degree of a prefill replica (0 = tp).")
        .Int("prefill_pp", &D::prefill_pp, 0, 1e4, "0",
             "Disaggregated serving: pipeline stages of a prefill replica (0 = pp).")
        .Int("prefill_replicas", &D::prefill_replicas, 1, 1e5, "1",
             "Disaggregated serving: prefill replicas (requests go to them round robin).")
        .Int("decode_tp", &D::decode_tp, 0, 1e5, "0",
             "Disaggregated serving: tensor-parallel degree of a decode replica (0 = tp).")
        .Int("decode_pp", &D::decode_pp, 0, 1e4, "0",
             "Disaggregated serving: pipeline stages of a decode replica (0 = pp).")
        .Int("decode_replicas", &D::decode_replicas, 1, 1e5, "1",
             "Disaggregated serving: decode replicas (KV arrivals go to them round robin).")
        .Int("kv_tier", &D::kv_tier, -1, 64, "-1",
             "Disaggregated serving: index of the system.network tier the KV cache crosses "
             "from prefill to decode (0 = innermost, e.g. NVLink); -1 = the innermost tier "
             "whose domain holds both pools.");
    return s;
  }();
  return schema;
}

void CheckDeployment(const InferenceDeployment& d, const models::ModelSpec& m,
                     const hardware::DeviceSpec& device, int64_t devices, double host_bandwidth,
                     const std::string& path, const base::SourceLocation& where,
                     base::Diagnostics& diags) {
  const std::string tp = std::to_string(d.tp);
  if (d.tp * d.pp > devices)
    diags.Add(where, path + ".tp", tp,
              "tp x pp (" + std::to_string(d.tp * d.pp) + ") exceeds the system's " +
                  std::to_string(devices) + " devices");
  if (m.heads % d.tp != 0)
    diags.Add(where, path + ".tp", tp,
              "tp must divide the attention heads (" + std::to_string(m.heads) + ")");
  const int64_t kv = models::KvHeads(m);
  if (kv % d.tp != 0 && d.tp % kv != 0)
    diags.Add(where, path + ".tp", tp,
              "KV heads (" + std::to_string(kv) +
                  ") must be divisible by tp, or tp by them (then they are replicated)");
  if (models::FfnSize(m) % d.tp != 0)
    diags.Add(where, path + ".tp", tp,
              "tp must divide the MLP size (" + std::to_string(models::FfnSize(m)) + ")");
  if (d.pp > m.layers)
    diags.Add(where, path + ".pp", std::to_string(d.pp),
              "pp cannot exceed the layers (" + std::to_string(m.layers) + ")");
  if (d.ep > 1 && m.experts == 1)
    diags.Add(where, path + ".ep", std::to_string(d.ep), "ep > 1 needs a model with experts");
  else if (m.experts % d.ep != 0 || d.tp % d.ep != 0)
    diags.Add(where, path + ".ep", std::to_string(d.ep),
              "ep must divide the experts (" + std::to_string(m.experts) + ") and tp (" + tp + ")");
  if (hardware::PeakFlops(device, d.activations) <= 0)
    diags.Add(where, path + ".activations", hardware::DataTypeName(d.activations),
              "the device '" + device.name + "' has no peak rate for this datatype");
  if (d.offload_weights > 0 || d.offload_kv > 0) {
    if (d.offload_to == OffloadTarget::kNvme && d.nvme_bandwidth <= 0)
      diags.Add(where, path + ".nvme_bandwidth", "0 B/s",
                "offloading to NVMe needs nvme_bandwidth > 0");
    if (host_bandwidth <= 0)
      diags.Add(where, path + ".offload_to", d.offload_to == OffloadTarget::kNvme ? "nvme" : "host",
                "offloading needs system.host_bandwidth > 0 (the PCIe link to the device)");
  }
  // A model answers prompts and outputs within its trained context window
  // (max_position_embeddings of a Hugging Face config): RoPE positions past
  // it were never seen in training, a learned table has no row for them.
  if (m.max_seq > 0 && d.input + d.output > m.max_seq)
    diags.Add(where, path + ".input", std::to_string(d.input),
              "input + output (" + std::to_string(d.input) + " + " + std::to_string(d.output) +
                  " = " + std::to_string(d.input + d.output) +
                  " tokens) exceeds the model's context window (model.max_seq " +
                  std::to_string(m.max_seq) + " tokens)");
  if (d.arrivals == Arrivals::kTrace && d.trace.empty())
    diags.Add(where, path + ".trace", "", "arrivals: trace needs a trace file");
  if (d.max_batch_tokens < d.max_batch && d.scheduler == Scheduler::kChunked)
    diags.Add(where, path + ".max_batch_tokens", std::to_string(d.max_batch_tokens),
              "chunked prefill needs max_batch_tokens >= max_batch (one token per decode)");
}

}  // namespace orrery::parallelism
