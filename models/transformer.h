#pragma once
// The operators of one transformer layer (and of the embedding and LM head)
// for one microbatch on one device, with FLOPs, bytes moved and GEMM shapes.
// Filled into fixed arrays, without allocation: the estimator calls this on
// its hot path.
//
// FLOP conventions (Narayanan et al. 2021, SC21, Sec. 5.1 / Eq. 3): a GEMM of
// (M x K) by (K x N) is 2*M*N*K FLOP; the backward pass of a GEMM is two GEMMs
// of the same size (input gradient and weight gradient); attention scores
// and attention-over-values count the full s x s product (the convention
// behind Eq. 3 and MFU), while the time model lets causal FlashAttention skip
// the masked half.

#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "models/model_spec.h"

namespace orrery::models {

enum class OpKind : uint8_t {
  kGemm,         // one (M x K) x (K x N) product, weights resident
  kBatchedGemm,  // `batch` independent products (materialised attention)
  kFlashAttention,  // fused attention core (no s^2 memory traffic)
  kElementwise,  // memory-bound: norms, activations, dropout, softmax, residuals
};

struct Op {
  const char* name = "";
  OpKind kind = OpKind::kElementwise;
  // Part of a dense layer's MLP block as Megatron-Core checkpoints it under
  // --recompute-modules mlp (TrainingPlan::recompute_mlp): the MLP's norm
  // (fused into its first linear), the up projection, the activation and the
  // down projection. Beside `kind`, in what would be padding.
  bool dense_mlp = false;
  // A norm Megatron-Core builds as a module of its own (TENorm), which its
  // layernorm recompute module reruns (TrainingPlan::recompute_layernorm):
  // a MoE layer's pre-MLP norm (the router reads its output) and MLA's input
  // norm (its down projections are plain linears). Norms fused into a TE
  // LayerNormLinear are not.
  bool module_norm = false;
  // The routed experts' activation, which its moe_act recompute module
  // reruns (TrainingPlan::recompute_moe_act).
  bool expert_act = false;
  // The part of an element-wise operator's traffic that PyTorch moves with
  // its non-vectorized element-wise kernels, and the elements those kernels
  // process, forward and backward (a part of bytes / of the backward's
  // bytes; 0 = all of it runs vectorized). ATen's TensorIterator runs an
  // element-wise operator as vectorized_elementwise_kernel when every
  // operand is contiguous and of one datatype; a dtype-converting copy runs
  // unrolled_elementwise_kernel and an operand that is broadcast or strided
  // the generic elementwise_kernel (aten/src/ATen/native/cuda/Loops.cuh,
  // CUDALoops.cuh), which load one element per thread and instruction and
  // are bound by the elements they process, not the bytes
  // (hardware::DeviceSpec::unvectorized_element_rate). Eager code's norms,
  // rotary embedding and repeat_kv run such kernels (LayerOps); fused
  // frameworks' kernels are their own and leave these 0.
  // Held in single precision: they only price time, and in floats they fit
  // beside the flags in what would be padding (the estimator copies
  // operators on its hot path; Op stays 104 bytes).
  float unvec_bytes = 0, unvec_elements = 0;
  float bwd_unvec_bytes = 0, bwd_unvec_elements = 0;
  bool attention_core = false; // recomputed by selective recompute
  bool mla_up = false;         // an MLA up projection (recompute_mla_up_proj redoes it)
  bool expert = false;         // an expert GEMM of a MoE layer (all local experts)
  // The MoE router's gating GEMM. Megatron-Core computes it with its own
  // autograd function (megatron/core/transformer/moe/moe_utils.py,
  // RouterGatingLinearFunction: torch.mm or te_general_gemm in router_dtype),
  // not a Transformer Engine module, so fp8_autocast leaves it in the
  // activations' datatype (router.py, Router.gating: router_dtype =
  // input.dtype unless moe_router_dtype is fp32 or fp64).
  bool router = false;
  // A linear layer with a bias whose gradient the backward computes in a
  // reduction kernel of its own (LayerShape::separate_bias_grad): the bytes
  // of the output gradient it reads, over the tokens the bias is added on
  // (a row-parallel layer's 1/tp of them under sequence parallelism, where
  // the bias is added after the reduce-scatter); 0 = none. Single
  // precision, in what would be padding, as unvec_bytes.
  float bias_grad_bytes = 0;
  // Independent GEMMs (kBatchedGemm): batch x heads, an integer well within
  // single precision's exact range; beside bias_grad_bytes in what would be
  // padding.
  float batch = 1;
  double m = 0, n = 0, k = 0;  // GEMM shape (per device)
  double flops = 0;            // forward FLOP on this device
  double bytes = 0;            // forward bytes moved to/from device memory
  // Backward bytes of a memory-bound operator whose backward kernel's traffic
  // is known (> 0); 0: twice the forward bytes (the estimator's rule: read the
  // gradient and the saved input, write the input gradient); kNoBackward: a
  // forward copy whose backward is a view and runs no kernel (BackwardBytes).
  double bwd_bytes = 0;
  // torchtitan's op-level selective activation checkpointing
  // (parallelism::Recompute::kOp; the policy is described at LayerOps): the
  // share of this operator's forward that runs again in the backward pass
  // (1: recomputed; 0: its output kept), and the bytes of its output (what
  // keeping it costs; GEMMs and the fused attention only).
  double op_sac_recompute = 0;
  double out_bytes = 0;
};

// Reduction depths of the three GEMMs of a linear layer's operator
// (Narayanan et al. 2021, Sec. 5.1): the forward Y = X W, (M x K) by
// (K x N), reduces over K; the input gradient dX = dY W^T over N; the weight
// gradient dW = X^T dY over M, the tokens. The same FLOP each; their depths
// set their efficiency (hardware::GemmDepthFactor). Batched attention GEMMs
// and grouped expert GEMMs keep the curve as it is (depth 0): the table the
// depth factor comes from measured neither. The training estimator and the
// CPU layer check (validation/cpu_layer) price the GEMMs at these depths.
struct GemmDepths {
  double fwd = 0, dgrad = 0, wgrad = 0;
};
inline GemmDepths DepthsOf(const Op& op) {
  if (op.kind != OpKind::kGemm || op.expert) return {};
  return {op.k, op.n, op.m};
}

// How one microbatch is split on a device.
struct LayerShape {
  int64_t micro_batch = 1;  // b
  int64_t seq = 1;          // s, tokens of the sequence handled by this device (s / cp)
  int64_t full_seq = 1;     // s before context parallelism (keys attended to)
  int64_t tp = 1;           // tensor-parallel degree t
  bool sequence_parallel = false;
  bool flash = true;        // FlashAttention vs materialised softmax
  double act_bytes = 2;     // bytes per activation element (bf16/fp16 = 2)
  // Routed-expert work on the busiest device over the balanced share (>= 1):
  // the expert that receives the most tokens paces the layer
  // (core/estimate/moe_comm.h, ExpertLoadFactor). 1 = balanced routing.
  double expert_load = 1;
  // Expert tensor parallelism: routed experts' matrices split over etp
  // devices instead of tp (0 = tp). With etp != tp the MoE layer is folded
  // (parallelism::ExpertTensorParallel): a device computes etp / tp of its
  // tp group's routed tokens on 1/etp of each expert's width.
  int64_t etp = 0;
  // PyTorch eager element-wise operators (parallelism::Elementwise::kEager):
  // the norms, rotary embedding and gated activation as the separate kernels
  // eager code launches (EagerNormBytesPerElement and LayerOps).
  bool eager = false;
  // Training passes run the model's dropout (ModelSpec::hidden_dropout,
  // attention_dropout); an inference pass drops nothing and writes no masks
  // (PyTorch's Dropout is the identity in eval mode).
  bool dropout = true;
  // The backward reduces each biased linear layer's output gradient over the
  // tokens into its bias gradient in a kernel of its own, as PyTorch autograd
  // and Megatron-LM's own layers do, rather than in the weight-gradient
  // GEMM's epilogue, as Transformer Engine does
  // (parallelism::TrainingPlan::separate_bias_grad). Read only where the
  // model has biases (ModelSpec::bias).
  bool separate_bias_grad = false;
  // The queries, keys and values are autograd views split off the fused QKV
  // projection's output, whose backward concatenates their gradients
  // (parallelism::TrainingPlan::qkv_split_cat): LayerOps adds the
  // backward-only qkv_split_grad operator. Not read for MLA.
  bool qkv_split_cat = false;
  // The norms' backward computes the weight (and bias) gradient in a kernel
  // of its own after the input gradient's, each reading the output gradient
  // and the input (parallelism::TrainingPlan::norm_weight_grad_kernel):
  // a backward-only norm_weight_grad operator moves 2e an element beside
  // the norm's own backward (3e, one pass, either way). Not read for an
  // eager RMSNorm.
  bool norm_weight_grad_kernel = false;
  // RoPE runs as a kernel of its own on a fused (non-eager) plan, reading
  // and writing the queries and keys forward and their gradients backward
  // (parallelism::TrainingPlan::rope_kernel; Transformer Engine's
  // fused_rope_forward / fused_rope_backward). Read only for a RoPE model
  // without MLA; eager code prices its own rotary kernels.
  bool rope_kernel = false;
  // Megatron-Core's packed QKV layout with Transformer Engine's attention
  // (parallelism::TrainingPlan::packed_qkv_copies): forward the grouped
  // queries' reshape and, where RoPE rewrites the keys, the values made
  // contiguous; backward, with RoPE or grouped-query attention, the split's
  // concatenation. Read on a fused plan without MLA.
  bool packed_qkv_copies = false;
};

// Bytes one eager RMSNorm moves per activation element of `act_bytes`,
// forward, written as PyTorch eager code computes it in fp32 (litgpt's
// RMSNorm: x.float(); mean(x * x); x * rsqrt(.); * weight; .to(dtype)):
// the upcast reads e and writes 4, the square reads and writes 4 + 4, the
// mean reads 4, the normalising product reads and writes 4 + 4, the weight
// product 4 + 4, the downcast reads 4 and writes e: 2e + 36 bytes, 40 in
// bf16, against 2e = 4 for a fused kernel that reads its input and writes
// its output once. The per-row statistics are a 1/h part and left out.
inline double EagerNormBytesPerElement(double act_bytes) { return 2 * act_bytes + 36; }

// Bytes a norm moves per activation element, forward. Eager code pays
// EagerNormBytesPerElement for RMSNorm only: a LayerNorm is torch.nn.
// LayerNorm in eager code too (litgpt's "LayerNorm" norm class; torchtitan's
// norm_type "layernorm", torchtitan/models/norms.py build_norm:
// nn.LayerNorm(dim, eps=eps, bias=False)), which runs as PyTorch's one
// native_layer_norm kernel (aten/src/ATen/native/cuda/layer_norm_kernel.cu)
// reading its input and writing its output once: 2e, as fused.
inline double NormBytesPerElement(Norm norm, bool eager, double act_bytes) {
  return eager && norm == Norm::kRmsNorm ? EagerNormBytesPerElement(act_bytes) : 2 * act_bytes;
}

// The part of an eager RMSNorm's passes (EagerNormBytesPerElement) that runs
// non-vectorized kernels (Op::unvec_bytes), per activation element, as the
// shape-resolved profile of one H200 microbatch of a Llama written like
// torchtitan's shows them (validation/gpu_step/h200/shapes/, read by
// trace_bandwidth.py: per norm one of each forward and backward): forward
// the upcast (unrolled, reads e and writes 4 bytes), the product by the
// broadcast per-row rsqrt (4 + 4) and by the broadcast weight (4 + 4): 3
// elements and e + 20 bytes; backward the gradient's upcast (e + 4), the
// two broadcast products (8 each) and the mean's broadcast division (8): 4
// elements and e + 28 bytes. The rest (square, mean, downcast, the
// backward's same-shape products) runs vectorized.
struct UnvecPasses {
  double fwd_bytes = 0, fwd_elements = 0, bwd_bytes = 0, bwd_elements = 0;
};
inline UnvecPasses EagerNormUnvecPasses(double act_bytes) {
  return {act_bytes + 20, 3, act_bytes + 28, 4};
}

// Op::bwd_bytes of an operator whose backward runs no kernel.
inline constexpr double kNoBackward = -1;
// The bytes a memory-bound operator's backward moves (Op::bwd_bytes).
inline double BackwardBytes(const Op& op) {
  return op.bwd_bytes > 0 ? op.bwd_bytes : op.bwd_bytes < 0 ? 0 : 2 * op.bytes;
}

// The most operators one layer lists: 26 with every flag, QK-norms and
// their weight-gradient kernels among them (Transformer.
// EveryFlagCombinationFitsTheOperatorList).
inline constexpr int kMaxLayerOps = 28;
// The size the hot path's copies were measured at (Op's comments: its
// single-precision fields sit in what would be padding).
static_assert(sizeof(Op) == 104, "an Op grew: recount the estimator's copies before accepting it");

// kMaxLayerOps operators in storage left uninitialised: a list is filled by
// Add() from its first slot on, and only its first `count` are read.
// Initialising all 24 operators (then its size) of 104 bytes whenever a
// list was made cost about 460 instructions of a 12,877-instruction
// estimate (callgrind, 2026-12-05). Add() assigns a whole Op, whose copy
// assignment is trivial, which begins that slot's lifetime ([class.union]).
class OpSlots {
 public:
  OpSlots() {}  // not = default: the slots stay uninitialised
  Op& operator[](size_t i) { return slots_[i].op; }
  const Op& operator[](size_t i) const { return slots_[i].op; }

 private:
  union Slot {
    Slot() {}  // leaves the operator uninitialised
    Op op;
  };
  static_assert(std::is_trivially_copy_assignable_v<Op> && std::is_trivially_destructible_v<Op>,
                "OpSlots relies on Op being a plain record");
  std::array<Slot, kMaxLayerOps> slots_;
};

struct OpList {
  OpSlots ops;
  int count = 0;
  // The last operators of the list that a checkpoint stopping early does
  // not run again (training.checkpoint_early_stop): PyTorch's non-reentrant
  // checkpoint replays a layer's forward only until the backward's last
  // saved tensor is packed (torch/utils/checkpoint.py, _StopRecomputationError),
  // and an aten.mm saves its inputs before it runs. So a layer ending in a
  // residual add (which saves nothing) skips the add, and a dense MLP's down
  // projection before it too (its input is the last tensor saved) unless a
  // dropout sits between them (the dropout saves its mask, which it must run
  // to make). LayerOps sets it; 0 for the head and the embedding.
  int early_stop_tail = 0;
  void Add(const Op& op) { ops[static_cast<size_t>(count++)] = op; }
};

// The forward operators of one transformer layer (dense, or MoE when
// `moe` is true: router + experts replace the MLP; `ep` experts groups).
//
// Each operator's Op::op_sac_recompute follows torchtitan's op-level
// selective activation checkpointing (torchtitan/parallelisms/
// parallelize_llama.py at commit 004b3148, _save_list and _custom_policy):
// within one block's forward it counts the aten.mm calls and keeps the
// output of every mm but each second one (count % 2 == 0 recomputed), of
// the SDPA kernels (flash / memory-efficient) and of the reduce-scatters;
// every other operator (norms, rotary, SwiGLU, residual adds, the
// materialised attention's bmm and softmax) is recomputed. In torchtitan's
// Llama (torchtitan/models/llama/model.py: Attention.forward computes
// `self.wq(x), self.wk(x), self.wv(x)` then `self.wo(...)`; FeedForward
// `self.w2(F.silu(self.w1(x)) * self.w3(x))`) the calls are wq 1, wk 2,
// wv 3, wo 4, w1 5, w3 6, w2 7: wk, wo and w3 are recomputed, wq, wv, w1 and
// w2 kept. Fused GEMMs here (qkv_proj, the gated mlp_up) carry the
// recomputed share of their width. Expert GEMMs (grouped, not aten.mm) are
// recomputed and not counted.
void LayerOps(const ModelSpec& m, const LayerShape& s, bool moe, int64_t ep, OpList& out);

// LM head GEMM and the softmax cross-entropy loss (last pipeline stage).
// The loss is always the last operator (kHeadLossIsLast): a caller that
// prices the loss its own way drops it by count, with no name compared.
inline constexpr bool kHeadLossIsLast = true;
void HeadOps(const ModelSpec& m, const LayerShape& s, OpList& out);

// Input embedding lookup (first pipeline stage).
void EmbeddingOps(const ModelSpec& m, const LayerShape& s, OpList& out);

// Parameters of the whole model (embeddings counted once when tied).
double ParameterCount(const ModelSpec& m, int64_t seq_len);
// Parameters a token passes through (MoE layers count top_k experts):
// "activated" parameters in the MoE literature.
double ActivatedParameterCount(const ModelSpec& m, int64_t seq_len);
// Parameters of one layer (MoE layers count every expert).
double LayerParameters(const ModelSpec& m, bool moe);
// Parameters of the routed experts of one MoE layer (what expert
// parallelism splits; the router and shared experts stay with every rank).
double RoutedExpertParameters(const ModelSpec& m);
// Parameters of the multi-token-prediction modules (DeepSeek-V3 Sec. 2.2:
// per module a transformer block, the 2h x h projection M_k and two RMSNorms;
// embedding and LM head shared with the main model). Not in ParameterCount,
// which counts the main model as papers state it (DeepSeek-V3: 671B + 14B MTP).
double MtpParameters(const ModelSpec& m);
// Parameters of the input embedding (+ learned positions) and of the LM head
// when untied (0 when tied).
inline double EmbeddingParameters(const ModelSpec& m, int64_t seq_len) {
  const double h = static_cast<double>(m.hidden);
  double p = static_cast<double>(m.vocab) * h;
  if (m.position == Position::kLearned)
    p += static_cast<double>(m.max_seq > 0 ? m.max_seq : seq_len) * h;
  return p;
}
double HeadParameters(const ModelSpec& m);

// Model FLOPs of one iteration (forward + backward, no recompute): the
// numerator of MFU. For a GPT-style model this is Narayanan et al. 2021
// Eq. 3 without recompute, 72*B*s*L*h^2*(1 + s/(6h) + V/(12*L*h)).
double ModelFlopsPerIteration(const ModelSpec& m, int64_t global_batch, int64_t seq);
// The same, listing the operators in a caller's `scratch` (its contents are
// overwritten): the training estimator's hot path already holds an OpList.
double ModelFlopsPerIteration(const ModelSpec& m, int64_t global_batch, int64_t seq, OpList& scratch);
// The same, also setting `attention_flops` to its attention scores' and
// attention-over-values' part (the operators marked attention_core, forward
// and backward, over the full s x s product): the part a causal mask
// halves (engine::TrainingEstimate::mfu_causal). For a GPT-style model
// 12*B*s^2*L*h, Eq. 3's s/(6h) term.
double ModelFlopsPerIteration(const ModelSpec& m, int64_t global_batch, int64_t seq, OpList& scratch,
                              double& attention_flops);

// A layer's causal attention work over a sequence of `seq` tokens, averaged
// over the layers, as a share of full causal attention's, where some layers
// attend locally: to a sliding window (ModelSpec::sliding_window) or within
// chunks (ModelSpec::attention_chunk).
// - A windowed query i attends to min(i, w) keys, so a windowed layer does
//   s w - w^2 / 2 of the s^2 / 2 score elements for w < s: 1 - (1 - w/s)^2
//   (the fused kernels skip the blocks outside the band: flash-attn's
//   `window_size`, from release 2.3, Dao-AILab/flash-attention README;
//   cuDNN's sliding window, which Transformer Engine takes as (left, 0)).
// - A chunked layer runs each chunk of c tokens as a sequence of its own
//   (no new kernel: the chunks are a batch of independent causal sequences,
//   flashinfer issue 1004; MaxText PR 1545's chunk mask): n = floor(s / c)
//   whole chunks and a remainder r = s - n c do (n c^2 + r^2) / 2 of the
//   s^2 / 2 elements: (n c^2 + r^2) / s^2.
// With a share f of local layers the mean layer does 1 - f (1 - local).
// LocalLayerWork: one local layer's share (1 with neither, or a window or
// chunk as long as the sequence); LocalLayers: how many layers are local;
// LocalLayerFraction: their share f of the layers (0 without any).
inline int64_t LocalLayers(const ModelSpec& m) {
  if (m.sliding_window > 0) return m.sliding_window_layers;
  return m.attention_chunk > 0 ? m.attention_chunk_layers : 0;
}
inline double LocalLayerFraction(const ModelSpec& m) {
  return m.layers > 0 ? static_cast<double>(LocalLayers(m)) / static_cast<double>(m.layers) : 0.0;
}
inline double LocalLayerWork(const ModelSpec& m, double seq) {
  if (m.sliding_window > 0) {
    if (seq <= static_cast<double>(m.sliding_window)) return 1.0;
    const double outside = 1 - static_cast<double>(m.sliding_window) / seq;
    return 1 - outside * outside;
  }
  if (m.attention_chunk <= 0 || seq <= static_cast<double>(m.attention_chunk)) return 1.0;
  const double c = static_cast<double>(m.attention_chunk);
  const double n = std::floor(seq / c);
  const double r = seq - n * c;
  return (n * c * c + r * r) / (seq * seq);
}
inline double LocalAttentionShare(const ModelSpec& m, double seq) {
  const double f = LocalLayerFraction(m);
  if (f <= 0) return 1.0;
  return 1 - f * (1 - LocalLayerWork(m, seq));
}

// Whether layer `index` (0-based) is a MoE layer.
// The first `first_dense_layers` stay dense; of the rest every
// `moe_every`-th is MoE.
inline bool IsMoeLayer(const ModelSpec& m, int64_t index) {
  const int64_t i = index - m.first_dense_layers;
  return m.experts > 1 && i >= 0 && (i % m.moe_every) == m.moe_every - 1;
}
inline int64_t MoeLayerCount(const ModelSpec& m) {
  return m.experts > 1 && m.layers > m.first_dense_layers
             ? (m.layers - m.first_dense_layers) / m.moe_every
             : 0;
}
// Share of the layers that are MoE (spread evenly over pipeline stages).
inline double MoeFraction(const ModelSpec& m) {
  return m.layers > 0 ? static_cast<double>(MoeLayerCount(m)) / static_cast<double>(m.layers) : 0.0;
}

}  // namespace orrery::models
