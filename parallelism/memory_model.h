#pragma once
// Memory one device needs for a training plan.
//
// Model states (Rajbhandari et al. 2020, "ZeRO", Sec. 3.1): with mixed
// precision and Adam, 2 bytes of weights + 2 of gradients + K = 12 of
// optimizer state (fp32 master weights, momentum, variance) per parameter;
// ZeRO-1 shards the optimizer state over dp, ZeRO-2 also the gradients,
// ZeRO-3 also the weights. The paper's 2 bytes of gradients are fp16
// training's; bf16 training keeps an fp32 gradient buffer by default, 4
// bytes (GradientBytes below, training.grad_reduce_fp32).
//
// Activations per layer and microbatch (Korthikanti et al. 2022, "Reducing
// activation recomputation in large transformer models", Sec. 4, Table 2),
// in bytes, for the GPT case (h heads of size h/a, 4h GeLU MLP):
//   no parallelism             s b h (34 + 5 a s / h)
//   tensor parallel            s b h (10 + 24/t + 5 a s / (h t))
//   tensor + sequence parallel s b h (34 + 5 a s / h) / t
//   selective recompute        the 5 a s / h term goes
//   full recompute             2 s b h (only the layer input; / t with SP)
// Generalised here to GQA and SwiGLU by summing the same stored tensors.
// These counts include dropout on both residual branches and on the
// attention probabilities (the paper's GPT); a model without hidden dropout
// keeps no residual masks (34 -> 32), one without attention dropout only the
// softmax output of the scores (5 a s / h -> 2 a s / h).
// FlashAttention stores no s x s tensor (Dao et al. 2022), like selective.
// 1F1B keeps p microbatches in flight on the first stage (Narayanan et al.
// 2021 Sec. 2.2.1), interleaving multiplies that by 1 + (p-1)/(p v)
// (Korthikanti et al. 2022 Sec. 4.2.3), GPipe keeps all m.

#include <cstdint>

#include "models/model_spec.h"
#include "models/transformer.h"
#include "parallelism/plan_spec.h"

namespace orrery::parallelism {

struct MemoryBreakdown {
  double weights = 0;        // bytes
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double temporary = 0;      // logits, communication buffers
  // Optimizer states kept in host memory instead (offload_optimizer): not
  // on the device, so not in total().
  double host_optimizer = 0;
  // Activations of the layers offloaded to host memory
  // (offload_activation_layers): not on the device, so not in total().
  double host_activations = 0;
  double total() const { return weights + gradients + optimizer + activations + temporary; }
};

// Whether the plan recomputes the MLA up projections (TrainingPlan::
// recompute_mla_up_proj, Megatron-Core --recompute-modules mla_up_proj):
// only a model with multi-head latent attention, and only below full
// recompute, which keeps the layer input alone anyway. The layer then keeps
// the query and KV latents (with the RoPE key) and the attention output,
// not the per-head queries, keys and values the up projections make
// (Megatron-Core MLASelfAttention: the up projections and RoPE run under a
// checkpoint whose outputs are freed once the attention core has read them
// and rebuilt before its backward).
inline bool RecomputesMlaUpProj(const models::ModelSpec& m, const TrainingPlan& p) {
  return p.recompute_mla_up_proj && p.recompute != Recompute::kFull && models::UsesMla(m);
}

// Bytes an element of the quantized copy of its input a Transformer Engine
// linear layer keeps for its weight-gradient GEMM under a plan in fp8
// (LayerActivationBytes): the FP8 byte under delayed, current, blockwise and
// MXFP8 scaling (their scales not counted), or under NVFP4 the column-wise
// copy the wgrad GEMM reads, a 4-bit element and an E4M3 scale per 16
// elements, 0.5 + 1/16 (NVIDIA, "Pretraining Large Language Models with
// NVFP4", arXiv 2509.25149, Sec. 2; Transformer Engine's NVFP4BlockScaling).
inline double SavedQuantizedBytes(const TrainingPlan& p) {
  return p.fp8_recipe == Fp8Recipe::kNvfp4 ? 0.5 + 1.0 / 16 : 1.0;
}

// Whether the plan recomputes the dense layers' MLP blocks (TrainingPlan::
// recompute_mlp, Megatron-Core --recompute-modules mlp): below full
// recompute, and not under torchtitan's op-level policy, which is its own.
// Megatron-Core's TransformerLayer then runs its MLP under a checkpoint
// whose saved input is the block's input, the residual stream the norm
// reads (its norm is fused into the first linear as TE LayerNormLinear),
// so a dense layer keeps neither the norm's output (the up projection's
// input) nor the MLP's activations; it rebuilds them before the block's
// backward. A MoE layer's MLP is a MoELayer, which the mlp module leaves
// alone (transformer_layer.py: recompute_mlp only for a dense MLP).
// Whether the plan's recompute leaves room for Megatron-Core's recompute
// modules (--recompute-modules): none or selective; full and op recompute
// have their own rules, which keep less.
inline bool RunsRecomputeModules(const TrainingPlan& p) {
  return p.recompute == Recompute::kNone || p.recompute == Recompute::kSelective;
}
inline bool RecomputesMlp(const TrainingPlan& p) { return p.recompute_mlp && RunsRecomputeModules(p); }

// Whether the plan recomputes the norms that are modules of their own
// (TrainingPlan::recompute_layernorm, Megatron-Core --recompute-modules
// layernorm) and the routed experts' activation (recompute_moe_act,
// --recompute-modules moe_act), under the same rule as RecomputesMlp. Both
// run under Megatron-Core's output-discarding checkpoint
// (tensor_parallel.CheckpointWithoutOutput): the module's output is freed
// once the next module has read it, whatever saved it, and rebuilt from
// the module's input before that module's backward. What the next module
// keeps of its own stays: Transformer Engine's FP8 linears keep the FP8
// copy of their input they cast, so in FP8 only the BF16 outputs go (the
// MoE pre-MLP norm's, which the router reads; nothing of the activation,
// whose product the down projection keeps in FP8).
inline bool RecomputesLayernorm(const TrainingPlan& p) { return p.recompute_layernorm && RunsRecomputeModules(p); }
inline bool RecomputesMoeAct(const TrainingPlan& p) { return p.recompute_moe_act && RunsRecomputeModules(p); }

// Bytes of one gradient as the data-parallel gradient buffer holds it and
// the ZeRO-0/1/2 reduction moves it (TrainingPlan::grad_reduce_fp32). fp32
// by default for bf16 (and FP8) training: Megatron-LM forces it ("bfloat16
// requires gradient accumulation and all-reduce to be done in fp32",
// megatron/training/arguments.py: accumulate_allreduce_grads_in_fp32 =
// True), and its memory estimate counts 18 bytes per parameter, 6 + 12 / dp
// with the distributed optimizer (megatron/training/
// theoretical_memory_usage.py, compute_weight_and_optimizer_memory: 2 bytes
// of bf16 weights + 4 of fp32 gradients + 12 of optimizer state). With
// grad_reduce_fp32 off, the weights' datatype (2 bytes in bf16 and FP8, whose
// weights are kept in bf16). fp16 training keeps fp16 gradients (Megatron-LM
// turns the fp32 accumulation on for bf16 only). ZeRO-3's sharded gradients
// are priced apart (TrainingPlan::zero3_fp32_reduce).
inline double GradientBytes(const TrainingPlan& p) {
  switch (p.precision) {
    case hardware::DataType::kFp16: return 2.0;
    case hardware::DataType::kFp32:
    case hardware::DataType::kTf32: return 4.0;
    default: return p.grad_reduce_fp32 ? 4.0 : 2.0;  // bf16 weights (FP8 keeps them in bf16)
  }
}

// Bytes of activations one layer stores for one microbatch (b sequences of
// s tokens on this device), following the table above.
double LayerActivationBytes(const models::ModelSpec& m, const TrainingPlan& p, int64_t b,
                            int64_t s);

// The same for a MoE layer: the MLP term becomes top_k x load copies of the
// experts' tensors plus the shared experts' and the dispatcher's buffers.
double MoeLayerActivationBytes(const models::ModelSpec& m, const TrainingPlan& p, int64_t b,
                               int64_t s);

struct MemoryInputs {
  double params_on_device = 0;  // parameters held by this device before ZeRO sharding
  // The routed experts' part of params_on_device, whose ZeRO shards spread
  // over the expert-data-parallel group (dp x cp / ep) instead of dp.
  double expert_params_on_device = 0;
  int64_t expert_dp = 0;        // 0 = dp
  double layers_on_device = 0;  // transformer layers on this stage (all chunks)
  int64_t dp = 1;                // the dense parameters' ZeRO group (dp x cp for Megatron-Core)
  int64_t microbatches = 1;     // m per iteration
  int64_t seq = 0;              // full sequence length
  int64_t stage = 0;             // pipeline stage index (0 = first)
  bool last_stage = false;
};

MemoryBreakdown DeviceMemory(const models::ModelSpec& m, const TrainingPlan& p,
                             const MemoryInputs& in);

// The part of DeviceMemory that is the same on every pipeline stage of a
// plan: one layer's activations per microbatch (dense and MoE layers mixed
// by models::MoeFraction), the full activations of the layer being
// recomputed (recompute full), and the last stage's fp32 logits. A caller
// that sizes several stages (the estimator's fullest stage) works them out
// once; DeviceMemory(m, p, in) is DeviceMemory(p, in,
// StageActivationTerms(m, p, in.seq)), the same doubles (the model enters
// through the terms only).
struct ActivationTerms {
  double per_layer = 0;          // bytes per layer and microbatch in flight
  double recomputing_layer = 0;  // bytes, added once (recompute full or op, or recompute_mlp)
  double logits = 0;             // bytes, on the last stage
};
ActivationTerms StageActivationTerms(const models::ModelSpec& m, const TrainingPlan& p, int64_t seq);
MemoryBreakdown DeviceMemory(const TrainingPlan& p, const MemoryInputs& in, const ActivationTerms& a);

}  // namespace orrery::parallelism
