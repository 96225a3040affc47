#pragma once
// The closed-form inference estimator: the time of one forward pass of a
// served model (prefill, decode, or a mix of both in one iteration), the
// memory a replica needs, and the static-batch figures built from them
// (time to first token, time per output token, throughput, energy).
//
// Per layer and device, every operator of models::LayerOps is timed on the
// device roofline (hardware/device_model.h) with the deployment's datatypes:
// a GEMM reads its weights at the weight precision and its activations at
// the activation precision, so at 1-16 tokens it sits on the weight-streaming
// floor and at thousands of tokens on the compute roof (the H200 measurements
// in hardware/calibration/measurements/h200/ show both). Attention is timed
// separately:
//   prefill  FlashAttention (Dao et al. 2022): 4 * pairs * heads * d FLOP over
//            the causal (query, key) pairs, Q/O and K/V read once
//   decode   one query per sequence against its cache: memory-bound reading
//            context * KV bytes per token (Pope et al. 2022, Sec. 3.3;
//            Kwon et al. 2023, PagedAttention); with gqa_shared_kv off, a
//            GQA cache is read once per query head (masked-MHA kernels
//            before TensorRT-LLM's XQA, blogs/XQA-kernel.md)
// Attention arithmetic runs in 16-bit: the KV cache is dequantised on load
// (TensorRT-LLM's FP8 builds use --use_gpt_attention_plugin float16 with
// --fp8_kv_cache; docs/source/performance.md, v0.6.1).
// Tensor parallelism adds two all-reduces of the layer's 16-bit activations
// per layer (Shoeybi et al. 2019, Megatron-LM, Sec. 3); pipeline stages run
// one after the other for a pass (no micro-batch pipelining of decode steps)
// with a point-to-point send between stages. Offloaded weights and KV are
// streamed over PCIe while the previous layer computes, so a layer takes
// max(compute, transfer) (Sheng et al. 2023, FlexGen, Sec. 4.1).
//
// Run() and Pass() are allocation-free, with no string handling or I/O.

#include <array>
#include <cstdint>
#include <string>

#include "core/estimate/scenario.h"
#include "hardware/network.h"
#include "models/transformer.h"
#include "parallelism/deployment_spec.h"

namespace orrery::engine {

// The tokens of one forward pass of one replica. Counts are sums over the
// sequences in the pass.
struct IterationShape {
  double prefill_seqs = 0;     // sequences processing prompt tokens
  double prefill_tokens = 0;   // their new tokens
  double prefill_pairs = 0;    // causal (query, key) pairs of those tokens
  double prefill_context = 0;  // keys they attend to (cached + new), summed
  double decode_seqs = 0;      // sequences generating one token each
  double decode_context = 0;   // tokens cached for them, summed
  // The same three on a local layer (ModelSpec::sliding_window,
  // attention_chunk: models::LocalKeys, LocalKeysSum): the pairs, the keys
  // read and the keys attended there; equal to the fields above for a model
  // without local layers, or a shape made without its model.
  double prefill_pairs_local = 0;
  double prefill_context_local = 0;
  double decode_context_local = 0;

  // `seqs` prompts of `tokens` new tokens each after `cached` tokens already
  // in the cache (a whole prompt: cached = 0; a prefill chunk: cached > 0),
  // of model `m` (its local layers; none when null).
  static IterationShape Prefill(double seqs, double tokens, double cached = 0,
                                const models::ModelSpec* m = nullptr);
  // `seqs` sequences decoding one token with `context` cached tokens each.
  static IterationShape Decode(double seqs, double context, const models::ModelSpec* m = nullptr);
  IterationShape& operator+=(const IterationShape& o);
};

// Seconds of one pass of one replica, by cause; the parts add up to `total`.
struct PassTime {
  double gemm = 0;         // linear layers, LM head
  double attention = 0;    // attention core
  double elementwise = 0;  // norms, activations, residuals, embedding, sampling
  double tp_comm = 0;      // tensor-parallel all-reduces
  double pp_comm = 0;      // sends between pipeline stages
  double offload = 0;      // PCIe transfers not hidden behind compute
  double total = 0;
  double flops = 0;        // whole replica
  double weight_bytes = 0; // weights read from device memory, whole replica
  double kv_bytes = 0;     // KV cache read and written, whole replica
};

// Bytes one device of the fullest pipeline stage holds.
struct InferenceMemory {
  double weights = 0;
  double kv_cache = 0;
  double activations = 0;  // the largest pass's transient tensors and logits
  double draft = 0;        // draft model weights and KV (speculative decoding)
  double total() const { return weights + kv_cache + activations + draft; }
};

enum class InferenceInfeasible {
  kNone,
  kDeviceCount,  // tp * pp exceeds the devices
  kSplit,        // tp/ep do not divide heads, MLP or experts; pp exceeds the layers
  kDatatype,     // the device has no peak for the activation datatype
  kNoNetwork,    // tp or pp > 1 but no network tier
  kOutOfMemory,  // weights + KV + activations exceed memory_fraction of the device
};

struct InferenceEstimate {
  InferenceInfeasible infeasible = InferenceInfeasible::kNone;
  bool feasible() const { return infeasible == InferenceInfeasible::kNone; }
  int64_t devices = 0;           // of one replica (tp x pp)
  PassTime prefill;              // the whole batch's prompts in one pass
  PassTime decode;               // one decode step at the mean context
  double ttft_s = 0;             // time to first token = prefill
  double tpot_s = 0;             // time per output token after the first
  double e2e_s = 0;              // ttft + (output - 1) * tpot
  double tokens_per_step = 1;    // speculative decoding: expected tokens per target step
  double output_tokens_per_s = 0;          // batch * output / e2e, one replica
  double output_tokens_per_s_per_device = 0;
  double total_tokens_per_s = 0;           // (input + output) * batch / e2e
  double energy_per_token_j = 0;           // TDP x e2e x PUE x devices / output tokens
  InferenceMemory memory;
  double memory_capacity = 0;    // bytes per device
  double memory_usable = 0;      // capacity x memory_fraction
  int64_t max_batch = 0;         // sequences of input + output tokens that fit
  int64_t max_context = 0;       // tokens per sequence that fit at this batch (-1: no limit,
                                 // every layer keeps a window or chunk)
};

// Expected tokens per target step with k draft tokens at acceptance rate a:
// (1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, "Fast inference from
// transformers via speculative decoding", Eq. 1); k + 1 at a = 1.
double SpeculativeTokensPerStep(int64_t k, double a);

// The part of a pass that depends only on its token and sequence counts
// (GEMMs, norms, embedding, LM head, collectives), kept between passes: a
// serving simulation runs millions of passes over a few hundred distinct
// batches. A fixed direct-mapped table, no allocation after construction;
// owned by one caller and not shared between threads. Pass() with a cache
// gives the same doubles as Pass() without. Entries are keyed by the
// addresses of the model and the deployment: use a cache only while the
// deployments passed with it live unchanged (SimulateServing makes one per
// simulation).
class PassCache {
 public:
  PassCache() = default;

 private:
  friend class InferenceEstimator;
  struct Layer {  // one transformer layer's operators other than attention
    double gemm = 0, elementwise = 0, weight_bytes = 0;
    double gemm_flops[2 * models::kMaxLayerOps] = {};  // in operator order
    int gemm_ops = 0;
  };
  struct Entry {
    const void* model = nullptr;  // the model and deployment the entry is for
    const void* deployment = nullptr;
    double tokens = -1, seqs = -1;
    Layer layer[2];               // dense, MoE
    double ends_gemm = 0, ends_elementwise = 0, ends_flops = 0, ends_weight_bytes = 0;
    double tp_layer = 0, pp_comm = 0;
  };
  static constexpr size_t kEntries = 512;
  std::array<Entry, kEntries> entries_{};
};

class InferenceEstimator {
 public:
  // Borrows the model, system and optional draft; they must outlive it.
  InferenceEstimator(const models::ModelSpec& model, const hardware::SystemSpec& system,
                     const models::ModelSpec* draft = nullptr);
  // It keeps references to both: a temporary would dangle and its passes
  // would read freed memory (as TrainingEstimator).
  InferenceEstimator(models::ModelSpec&&, const hardware::SystemSpec&, const models::ModelSpec* = nullptr) = delete;
  InferenceEstimator(const models::ModelSpec&, hardware::SystemSpec&&, const models::ModelSpec* = nullptr) = delete;

  // One forward pass of one replica.
  PassTime Pass(const parallelism::InferenceDeployment& d, const IterationShape& it) const;
  // One draft-model decode step (speculative decoding), 0 without a draft model.
  PassTime DraftPass(const parallelism::InferenceDeployment& d, const IterationShape& it) const;
  // The same, reusing `cache` (the same numbers, faster over many passes).
  PassTime Pass(const parallelism::InferenceDeployment& d, const IterationShape& it, PassCache& cache) const;
  PassTime DraftPass(const parallelism::InferenceDeployment& d, const IterationShape& it,
                     PassCache& cache) const;

  // The static workload of `d`: batch prompts of `input` tokens, `output`
  // tokens generated for each, the whole batch together to the end.
  InferenceEstimate Run(const parallelism::InferenceDeployment& d) const;

  // Memory of one device with `seqs` sequences of `tokens` cached tokens and
  // a largest pass of `pass_tokens` tokens over `pass_seqs` sequences.
  InferenceMemory Memory(const parallelism::InferenceDeployment& d, double seqs, double tokens,
                         double pass_tokens, double pass_seqs) const;
  // KV-cache tokens one replica can hold besides weights and the activations
  // of a pass of `pass_tokens` tokens (the serving simulator's block pool).
  double KvCapacityTokens(const parallelism::InferenceDeployment& d, double pass_tokens) const;
  // KV bytes per token on one device of the fullest stage (before offload).
  double KvBytesPerTokenPerDevice(const parallelism::InferenceDeployment& d) const;

  bool has_draft() const { return draft_ != nullptr; }
  const models::ModelSpec& model() const { return model_; }
  const hardware::SystemSpec& system() const { return system_; }

 private:
  PassTime PassOf(const models::ModelSpec& m, const parallelism::InferenceDeployment& d,
                  const IterationShape& it, PassCache* cache) const;
  // Parameters on one device of the fullest stage; `layers` gets the part in
  // transformer layers (what offload_weights moves off the device).
  double WeightParamsPerDevice(const models::ModelSpec& m,
                               const parallelism::InferenceDeployment& d,
                               double* layers = nullptr) const;
  double ActivationBytes(const models::ModelSpec& m, const parallelism::InferenceDeployment& d,
                         double pass_tokens, double pass_seqs) const;

  const models::ModelSpec& model_;
  const hardware::SystemSpec& system_;
  const models::ModelSpec* draft_;
  hardware::AlphaBetaNetwork network_;
  int64_t devices_ = 0;
};

// Whether a deployment can run at all (before memory), with the reason.
InferenceInfeasible CheckShape(const models::ModelSpec& m, const hardware::SystemSpec& system,
                               const parallelism::InferenceDeployment& d);

// One sentence on why an estimate is infeasible, with its numbers.
std::string ExplainInfeasible(const InferenceEstimate& e, const Scenario& s);

}  // namespace orrery::engine
