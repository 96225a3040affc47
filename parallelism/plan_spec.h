#pragma once
// How training work is split across devices: a plan. Plain data; the keys are
// declared in plan_spec.cpp.

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/param.h"
#include "hardware/device_spec.h"

namespace orrery::parallelism {

// kOp: torchtitan's op-level selective activation checkpointing
// (activation_checkpoint.mode = "selective", selective_ac_option = "op"):
// every layer keeps the outputs of its matmuls (but every second one), of
// its attention kernel and of its reduce-scatters, and recomputes the rest
// (models::OpSacRecompute, memory_model.cpp).
enum class Recompute { kNone, kSelective, kFull, kOp };
// The name a plan file, the CLI and every output use for a recompute mode.
inline const char* RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
    case Recompute::kOp: return "op";
  }
  return "?";
}
// kZeroBubbleH1 and the V-shape schedules are simulated by the event-driven
// engine (parallelism/step_graph.h); the closed form (schedule.h) prices
// ZB-H1 with its B/W split and the V-shapes as interleaved with v = 2.
// kDualPipe: DeepSeek-V3's bidirectional pipeline (DeepSeek-AI 2024,
// "DeepSeek-V3 Technical Report", Sec. 3.2.1, Table 2): both engines.
enum class Schedule { kOneFOneB, kInterleaved, kGpipe, kZeroBubbleH1, kVMin, kVHalf, kVZeroBubble, kDualPipe };
// 1F1B and interleaved 1F1B: one schedule at interleave 1 and above, whose
// chunks the plan's interleave sets; GPipe, ZB-H1 and the V-shapes have
// theirs fixed (ScheduleChunks).
inline bool TakesInterleave(Schedule s) { return s == Schedule::kOneFOneB || s == Schedule::kInterleaved; }
// The name a plan file, the CLI and every output use for a schedule.
inline const char* ScheduleName(Schedule s) {
  switch (s) {
    case Schedule::kOneFOneB: return "1f1b";
    case Schedule::kInterleaved: return "interleaved";
    case Schedule::kGpipe: return "gpipe";
    case Schedule::kZeroBubbleH1: return "zb-h1";
    case Schedule::kVMin: return "v-min";
    case Schedule::kVHalf: return "v-half";
    case Schedule::kVZeroBubble: return "v-zb";
    case Schedule::kDualPipe: return "dualpipe";
  }
  return "?";
}
// kFlash: a fused attention kernel at the device profile's
// flash_attention_* efficiencies (cuDNN / FlashAttention-3 class on Hopper,
// what Megatron-Core and NeMo run through Transformer Engine); kFlash2: the
// FlashAttention-2 kernels of the flash-attn package (Dao 2023), which
// frameworks calling that package or PyTorch SDPA run, at flash2_attention_*;
// kMaterialized: softmax over the materialised score matrix; kTriton: the
// Triton port of FlashAttention (flash-attn's flash_attn_triton.py, what
// llm-foundry runs with attn_impl: triton), priced from FlashAttention-2's
// efficiency by the slowdown Dao 2023 measured (hardware::AttentionKernel).
enum class Attention { kFlash, kMaterialized, kFlash2, kTriton };
// How the framework runs the memory-bound operators around the GEMMs
// (norms, rotary embedding, gated activation): kFused, one kernel per
// operator reading its inputs and writing its output once (Megatron-Core /
// Transformer Engine, Apex, torch.compile); kEager, PyTorch eager mode
// running each tensor operation of the Python code as its own kernel with
// fp32 intermediates where the code upcasts (litgpt, nanoGPT-style code).
// models::LayerOps counts the passes of each.
enum class Elementwise { kFused, kEager };
// Which kernels compute the training loss over the logits (a cross entropy
// over the vocabulary shard; core/estimate/step_kernels.h counts the bytes
// per logit of each, docs/loss-path.md cites the code):
// kMegatronFp32, Megatron-Core's unfused vocabulary-parallel cross entropy
// (tensor_parallel/cross_entropy.py: the logits upcast to fp32 and six
// passes forward, two backward; 52 B per logit); kTorchFp32, PyTorch's
// F.cross_entropy on logits upcast to fp32 (torchtitan's .float(), or
// autocast's fp32 policy for cross_entropy): the cast, log_softmax and
// nll_loss and their backward kernels (36 B per logit); kFusedBf16, one fused
// kernel reading the bf16 logits forward and one reading them and writing
// their gradient backward (flash-attn's cross entropy, llm-foundry's
// loss_fn: fused_crossentropy; 6 B per logit).
enum class LossKernel { kMegatronFp32, kTorchFp32, kFusedBf16 };
enum class Optimizer { kAdam, kSgd };
// How the optimizer step runs (core/estimate/training_estimator.cpp,
// OptimizerStepBytesPerParam): kFused, one fused update kernel, the
// low-precision copy of the weights as a pass of its own, and gradient
// clipping that reads the norm and rescales only past the limit (Megatron-LM,
// Megatron-Core, NeMo); kPytorch, PyTorch's own step: the optimizer's update
// as separate element-wise passes over each parameter (torch.optim's
// foreach path, or a per-parameter loop such as Composer's DecoupledAdamW),
// and torch's clip_grad_norm_ (FSDP's too), which always multiplies the
// gradients by the clamped coefficient.
enum class OptimizerStep { kFused, kPytorch };
// How the FP8 GEMM operands of a linear layer are scaled (read only when
// precision is fp8; core/estimate/step_kernels.h prices each one's casts):
// kDelayed, one per-tensor scale from an amax history (Transformer Engine
// DelayedScaling); kCurrent, one per-tensor scale from the tensor's own amax
// (TE Float8CurrentScaling); kBlockwise, one fp32 scale per 1x128 / 128x128
// block (DeepSeek-V3, arXiv 2412.19437, Sec. 3.3; TE Float8BlockScaling);
// kMxfp8, one E8M0 scale per 32 elements (OCP Microscaling Formats v1.0;
// TE MXFP8BlockScaling), Blackwell tensor cores only; kNvfp4, the linear
// layers' GEMMs in FP4 (E2M1) with one E4M3 scale per 16 elements and a
// per-tensor fp32 scale (TE NVFP4BlockScaling), Blackwell tensor cores only.
enum class Fp8Recipe { kDelayed, kCurrent, kBlockwise, kMxfp8, kNvfp4 };
// Which tensor-parallel all-gathers of a sequence-parallel layer move its
// activations quantized under a per-tensor FP8 recipe (TrainingPlan::
// fp8_tp_gather; TpGatherTimes, core/estimate/training_estimator.cpp).
enum class Fp8TpGather { kAll, kInput, kNone };
enum class DpCollective { kHierarchical, kFlat };
// How context parallelism exchanges keys and values (core/estimate/parallel_comm.h).
enum class CpScheme { kAuto, kRing, kAllGather, kUlysses };
const char* CpSchemeName(CpScheme s);

struct TrainingPlan {
  int64_t tp = 1;            // tensor parallel (Megatron column/row split)
  int64_t pp = 1;            // pipeline stages
  int64_t dp = 0;            // data parallel; 0 = devices / (tp*pp*cp)
  int64_t cp = 1;            // context parallel (ring attention)
  int64_t ep = 1;            // expert parallel (MoE)
  // Expert tensor parallel: each routed expert's matrices split over etp
  // devices; 0 = tp (Megatron-Core's default). The expert group of ep x etp
  // devices is drawn from a pipeline stage's tp x cp x dp devices
  // ("MoE parallel folding", ExpertTensorParallel below).
  int64_t etp = 0;
  CpScheme cp_scheme = CpScheme::kAuto;  // auto = the cheapest for the plan
  // MoE routing: the busiest EP rank's token load over the balanced share,
  // minus one (0 = perfectly balanced), and the expert capacity factor
  // (0 = dropless: nothing caps the busiest expert).
  double expert_imbalance = 0.04;
  double expert_capacity_factor = 0;
  // Host seconds to launch one kernel (framework dispatch + CUDA launch);
  // 0: the host is assumed to keep ahead of the device. Read only for
  // dropless MoE layers (expert_capacity_factor 0), whose dispatcher reads
  // the tokens per expert back to the host every layer (MoeHostLaunchTime,
  // core/estimate/parallel_comm.h).
  double host_kernel_launch = 0;
  // Host seconds of one Transformer Engine linear module's forward call
  // (te.Linear, te.LayerNormLinear, te.GroupedLinear: Python and C++
  // dispatch, the recipe's quantizer bookkeeping and the launches of the
  // module's own GEMMs and casts), and of each split a GroupedLinear forward
  // makes per local expert; 0: the module's kernels are priced at
  // host_kernel_launch each. Read with host_kernel_launch, for dropless MoE
  // layers only (MoeForwardHostTime, core/estimate/parallel_comm.h).
  double host_te_module = 0;
  double host_te_split = 0;
  // Hide each MoE layer's all-to-alls behind the compute of another
  // microbatch (DeepSeek-V3 DualPipe; Megatron-Core 1F1B A2A overlap).
  bool ep_comm_overlap = false;
  bool sequence_parallel = false;
  // Under sequence parallelism, whether each column-parallel module keeps
  // only its sequence shard of the input and all-gathers it again in the
  // backward for its weight gradient (true: Megatron-LM's
  // ColumnParallelLinear, Transformer Engine's LayerNormLinear and
  // LayerNormMLP), or keeps the gathered input (false: PyTorch DTensor's
  // PrepareModuleInput with ColwiseParallel, as torchtitan runs tensor
  // parallelism: autograd saves the replicated tensor the all-gather made).
  bool sp_input_regather = true;
  int64_t interleave = 1;    // virtual stages per device (v) for interleaved 1F1B
  int64_t first_stage_layers = 0;  // layers on the first pipeline stage; 0 = even split
  int64_t last_stage_layers = 0;   // layers on the last pipeline stage; 0 = even split
  // Count the embedding and the loss as one layer each when splitting the
  // layers over pipeline stages (Megatron-Core
  // --account-for-embedding-in-pipeline-split and
  // --account-for-loss-in-pipeline-split): the first and last stages then
  // take one layer fewer, and pp x interleave may reach layers + 2.
  bool pipeline_split_embedding_loss = false;
  Schedule schedule = Schedule::kOneFOneB;
  int64_t straggler_stage = -1;    // pipeline stage whose devices run slow; -1 = none
  double straggler_slowdown = 1;   // compute time factor on that stage (event engine)
  int64_t micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  // Under recompute full, every recompute_interval-th transformer layer is
  // checkpointed and recomputed, the others keep all their activations
  // (torchtitan activation_checkpoint.mode = "selective" with
  // selective_ac_option = "N"); 1 = every layer (FullRecomputeShare).
  int64_t recompute_interval = 1;
  // Whether a fully recomputed layer's forward stops once every tensor its
  // backward needs is back (PyTorch's non-reentrant torch.utils.checkpoint,
  // whose default since PyTorch 2.1 is to stop early: pytorch PRs 90105 and
  // 96866, torch.utils.checkpoint.set_checkpoint_early_stop), so the
  // operators after the last tensor the layer saves do not run again:
  // models::OpList::early_stop_tail. false: the whole forward runs again
  // (Megatron's CheckpointFunction, reentrant checkpointing, PyTorch 2.0 and
  // before).
  bool checkpoint_early_stop = false;
  // Megatron-Core's fine-grained recompute of the multi-head latent
  // attention's up projections and RoPE (--recompute-modules mla_up_proj):
  // the per-head queries, keys and values are not kept for the backward
  // pass but rebuilt from the latents; read only for MLA models and below
  // full recompute (parallelism/memory_model.h).
  bool recompute_mla_up_proj = false;
  // Megatron-Core's fine-grained recompute of each dense layer's MLP block
  // (--recompute-modules mlp): the block keeps only its input and runs its
  // forward once more before its backward; a MoE layer's MLP is not touched
  // (Megatron-Core's moe module is another switch). Read below full
  // recompute and with recompute none or selective (RecomputesMlp,
  // parallelism/memory_model.h).
  bool recompute_mlp = false;
  // Megatron-Core's layernorm and moe_act recompute modules
  // (--recompute-modules layernorm moe_act): the norms built as modules of
  // their own (a MoE layer's pre-MLP norm, MLA's input norm) and the routed
  // experts' activation discard their outputs once the next module has read
  // them and rerun before its backward (RecomputesLayernorm,
  // RecomputesMoeAct, parallelism/memory_model.h).
  bool recompute_layernorm = false;
  bool recompute_moe_act = false;
  // Transformer layers per pipeline stage whose activations go to host
  // memory after their forward and come back before their backward
  // (Megatron-Core --cpu-offloading with --cpu-offloading-num-layers N and
  // cpu_offloading_activations, weights kept: Transformer Engine's
  // get_cpu_offload_context). The first N layers of the stage are
  // offloaded; at least the last stays on the device. 0 = none.
  int64_t offload_activation_layers = 0;
  Attention attention = Attention::kFlash;
  Elementwise elementwise = Elementwise::kFused;
  LossKernel loss_kernel = LossKernel::kMegatronFp32;
  int64_t zero = 0;          // ZeRO stage 0..3 (3 = FSDP)
  bool dp_overlap = true;    // gradient reduction overlapped with backward (bucketed)
  DpCollective dp_collective = DpCollective::kHierarchical;
  // How the framework's ZeRO-3 / FSDP runs (core/estimate/training_estimator.cpp):
  // whether a layer's weights are gathered again for its recomputed forward
  // under full recompute (DeepSpeed's reentrant checkpointing re-runs the
  // module and its fetch hooks; PyTorch FSDP with the checkpoint wrapper
  // inside each FSDP unit recomputes after the unit's backward gather), and
  // whether gradients are reduce-scattered in fp32 rather than the weights'
  // datatype (FSDP MixedPrecision reduce_dtype float32), and whether each
  // gather is copied out of the all-gather buffer into the parameters' own
  // tensors on the compute stream (FSDP2's foreach_all_gather_copy_out;
  // core/estimate/parallel_comm.h, Zero3CopyOutBytes).
  bool zero3_recompute_gather = true;
  bool zero3_fp32_reduce = false;
  // ZeRO-0/1/2: whether the gradient buffer and its data-parallel
  // reduction are fp32 (true: Megatron-LM, which forces it for bf16 with
  // accumulate_allreduce_grads_in_fp32, and Megatron-Core's default
  // grad_reduce_in_fp32) or the weights' datatype (false: the
  // Megatron-Bridge performance recipes' grad_reduce_in_fp32 = False).
  // fp16 training keeps fp16 gradients either way (GradientBytes,
  // parallelism/memory_model.h).
  bool grad_reduce_fp32 = true;
  // Whether a layer's backward gather is issued before the layer behind it
  // finishes its backward, so that it hides behind that compute (true:
  // PyTorch FSDP BackwardPrefetch.BACKWARD_PRE, FSDP2, DeepSpeed's prefetch),
  // or only from that layer's post-backward hook, after its gradients exist
  // (false: FSDP1 BackwardPrefetch.BACKWARD_POST, Composer's default), so
  // that every backward gather is exposed.
  bool zero3_backward_prefetch = true;
  // Whether ZeRO-3 fetches weights one matrix at a time with only the next
  // matrix prefetched, each fetch blocking (DeepSpeed ZeRO-3 of 2021:
  // core/estimate/parallel_comm.h, PrefetchOneAheadExposed), instead of one
  // layer (an FSDP unit) at a time.
  bool zero3_matrix_prefetch = false;
  bool zero3_copy_out = false;
  // Whether a ZeRO-3 unit's parameter gradients are concatenated into the
  // unit's flat gradient on the compute stream every microbatch (PyTorch
  // FSDP1: the module's parameters are views split off the FlatParameter,
  // whose split's backward concatenates their gradients); see
  // GradAccumulationBytesPerParam, core/estimate/training_estimator.cpp.
  bool zero3_flat_grad = false;
  bool tp_comm_overlap = false;  // TP collectives overlapped with GEMMs
  // Whether an interleaved pipeline's sends and receives run beside the
  // computation of other model chunks in the steady 1F1B phase (Megatron-
  // Core's overlap_p2p_comm with batch_p2p_comm off), the fill's and the
  // flush's still exposed; false: each send blocks its sender (batched,
  // synchronous p2p). Read only for interleaved 1F1B (interleave > 1):
  // OverlapsPipelineSends, parallelism/schedule.h. Off by default: the
  // measured NeMo and Megatron-Bridge rows, whose recipes turn it on, read
  // as if their sends were exposed (validation/README.md).
  bool pp_comm_overlap = false;
  double dp_bucket = 25e6 * 4;   // bytes per gradient bucket
  hardware::DataType precision = hardware::DataType::kBf16;
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;
  // Whether the weights are kept in FP8 and the distributed optimizer's
  // all-gather of the updated weights moves them in FP8, 1 byte per
  // parameter (Megatron-Core --fp8-param-gather; NeMo's fp8_params /
  // fp8_param_gather, set by its bf16_with_fp8_mixed precision recipe).
  // Read only with precision fp8 and ZeRO-1/2 (core/estimate/parallel_comm.h,
  // ParamGatherBytesPerParam).
  bool fp8_param_gather = false;
  // Under a per-tensor FP8 recipe (delayed or current scaling) with
  // sequence parallelism, which of a layer's tensor-parallel all-gathers
  // move the quantized activations, 1 B an element: kAll, Transformer
  // Engine's linear modules (each column-parallel module's forward input,
  // its backward re-gather and the output gradient a row-parallel module
  // gathers), kInput the forward inputs only (torchao's float8 tensor
  // parallelism), kNone every gather in the layers' datatype.
  Fp8TpGather fp8_tp_gather = Fp8TpGather::kAll;
  bool fp32_master_weights = true;
  // Whether each weight gradient is accumulated into the gradient buffer
  // inside its weight-gradient GEMM (Megatron-LM --gradient-accumulation-
  // fusion, 2022 on; Megatron-Core), or written as a tensor of its own that
  // a hook then adds into the buffer, a memory-bound pass over the device's
  // parameters every microbatch (Megatron-LM of 2021-2022). See
  // GradAccumulationBytesPerParam, core/estimate/training_estimator.cpp.
  bool grad_accumulation_fusion = true;
  // Whether the parameters stay in fp32 and torch.autocast casts each weight
  // to the compute datatype at its use (PyTorch automatic mixed precision
  // on fp32 parameters, as a plain PyTorch loop or Lightning's bf16-mixed
  // runs it; validation/gpu_step): every microbatch then casts every weight
  // forward and every weight gradient back to fp32 before adding it into
  // .grad (GradAccumulationBytesPerParam, core/estimate/training_estimator.cpp).
  bool autocast_fp32_weights = false;
  // Whether the gradient buffer is divided by the data-parallel size even
  // when that is 1 (Megatron-LM's DistributedDataParallel.allreduce_gradients
  // of 2021-2023); Megatron-Core skips the scaling at dp 1. See
  // GradBufferBytesPerParam, core/estimate/training_estimator.cpp.
  bool grad_scale_at_dp1 = false;
  // Whether the data-parallel wrapper takes the L2 norm of each gradient
  // bucket before reducing it, to catch a NaN (Megatron-LM's
  // --check-for-nan-in-loss-and-grad, on by default, 2024 on): one more read
  // of the gradient buffer every step. See GradBufferBytesPerParam,
  // core/estimate/training_estimator.cpp.
  bool grad_nan_check = false;
  // Whether the backward computes each biased linear layer's bias gradient
  // in a reduction kernel of its own, reading the layer's output gradient
  // once more (PyTorch autograd's addmm backward summed to the bias's shape;
  // Megatron-LM's own layers, grad_output.sum(dim=0)), or inside the
  // weight-gradient GEMM's epilogue (Transformer Engine). Read only where
  // the model has biases (models::LayerShape::separate_bias_grad).
  bool separate_bias_grad = false;
  // Whether the attention's queries, keys and values are split by autograd
  // views off one fused QKV projection's output, so that the backward
  // concatenates their three gradients into the projection's output
  // gradient (the split's backward is a cat): one more read and write of
  // that gradient per layer and microbatch (models::LayerShape::qkv_split_cat).
  bool qkv_split_cat = false;
  // Whether a norm's backward computes its weight (and bias) gradient in a
  // kernel of its own that reads the output gradient and the input again,
  // as PyTorch's LayerNorm, Megatron's non-persistent fused LayerNorm and
  // torch.compile's kernels do, rather than beside the input gradient in
  // one pass, as Transformer Engine and apex's persistent FastLayerNorm do
  // (models::LayerShape::norm_weight_grad_kernel).
  bool norm_weight_grad_kernel = false;
  // Whether a fused (non-eager) plan applies RoPE to the queries and keys in
  // a kernel of its own that reads and writes them, forward and backward
  // (Transformer Engine's fused_rope_forward / fused_rope_backward, which
  // Megatron-Core calls under apply_rope_fusion), rather than inside the
  // attention or QKV kernel (models::LayerShape::rope_kernel).
  bool rope_kernel = true;
  // Whether the attention runs on Megatron-Core's packed QKV layout with
  // Transformer Engine's kernels, which copies its inputs out of the packed
  // projection forward (the grouped queries' reshape; where RoPE rewrites
  // the keys, the values made contiguous by TE's layout check) and, with
  // RoPE or grouped-query attention, concatenates the three gradients
  // backward (models::LayerShape::packed_qkv_copies). On by default, with
  // rope_kernel: the Megatron-Core step the other defaults describe.
  bool packed_qkv_copies = true;
  Optimizer optimizer = Optimizer::kAdam;
  // Datatype of the optimizer's moments (Adam's two, SGD's momentum):
  // fp32, or bf16 as DeepSeek-V3 tracks AdamW's (arXiv 2412.19437,
  // Sec. 3.3.3). OptimizerStateBytesPerParam.
  hardware::DataType optimizer_moments = hardware::DataType::kFp32;
  OptimizerStep optimizer_step = OptimizerStep::kFused;
  bool offload_optimizer = false;
  std::string group_order = "tp,cp,ep,dp,pp";  // innermost first
};

// Bytes of optimizer state per parameter: the moments (Adam two, SGD with
// momentum one) in optimizer_moments, plus an fp32 master copy of weights
// narrower than 4 bytes (`w_bytes`) when the plan keeps one (Micikevicius
// et al. 2018, Sec. 3.1): 12 for Adam in mixed precision, 8 with bf16
// moments.
inline double OptimizerMoments(const TrainingPlan& p) { return p.optimizer == Optimizer::kAdam ? 2.0 : 1.0; }
inline double OptimizerStateBytesPerParam(const TrainingPlan& p, double w_bytes) {
  return OptimizerMoments(p) * hardware::BytesPer(p.optimizer_moments) +
         (p.fp32_master_weights && w_bytes < 4 ? 4.0 : 0.0);
}

struct Workload {
  int64_t global_batch = 0;    // sequences per iteration
  int64_t seq_len = 0;         // tokens per sequence
  double train_tokens = 0;     // total tokens to train on (0 = not asked)
};

// The expert-tensor-parallel degree of a plan: etp, or tp when it is 0.
//
// MoE parallel folding (Liu et al. 2025, "MoE Parallel Folding:
// Heterogeneous Parallelism Mappings for Efficient Large-Scale MoE Model
// Training with Megatron Core", arXiv 2504.14960, abstract and method): the attention
// layers split a pipeline stage's devices as tp x cp x dp, the MoE layers
// split the same devices as etp x ep x edp, each mapping with its own
// groups, so that tp x cp x dp = etp x ep x edp. With etp = tp (no folding)
// that is Megatron-Core's older rule: ep divides dp x cp.
inline int64_t ExpertTensorParallel(const TrainingPlan& p) { return p.etp > 0 ? p.etp : p.tp; }

// Replicas of each routed expert, edp = tp cp dp / (ep etp) (Megatron-Core
// expert_data_parallel_size); 0 when ep x etp does not divide tp cp dp.
inline int64_t ExpertDataParallelSize(const TrainingPlan& p, int64_t dp) {
  const int64_t stage = p.tp * p.cp * dp;
  const int64_t group = p.ep * ExpertTensorParallel(p);
  return group > 0 && stage % group == 0 ? stage / group : 0;
}

// Routed-expert tokens on the busiest EP rank over the balanced share: the
// rank holding the most loaded expert paces every MoE layer (Lepikhin et al.
// 2021, GShard, Sec. 2.2: with capacity C an expert takes at most C times its
// balanced share and drops the rest). 1 when one rank holds every expert.
inline double ExpertLoadFactor(const TrainingPlan& p) {
  if (p.ep <= 1) return 1.0;
  const double busiest = 1.0 + p.expert_imbalance;
  return p.expert_capacity_factor > 0 && p.expert_capacity_factor < busiest ? p.expert_capacity_factor
                                                                             : busiest;
}

// The share of a stage's layers whose forward runs again in the backward
// pass under recompute full: 1 / recompute_interval. torchtitan wraps every
// N-th transformer block in checkpoint_wrapper and leaves the rest as they
// are (torchtitan/parallelisms/parallelize_llama.py, _apply_ac_to_transformer_block:
// a running count of blocks, checkpointed when count % ac_freq == 0), so of
// n layers floor(n / N) are recomputed; priced as n / N, exact when N divides
// the layers (every row and preset so far), and the same for the closed form
// and the event engine, stage by stage. 0 when the plan is not recompute full.
inline double FullRecomputeShare(const TrainingPlan& p) {
  if (p.recompute != Recompute::kFull) return 0.0;
  return p.recompute_interval > 1 ? 1.0 / static_cast<double>(p.recompute_interval) : 1.0;
}

// Whether `order` names tp, cp, ep, dp and pp once each, comma-separated
// (training.group_order, innermost first). kGroupOrderRule says so in words.
bool IsGroupOrder(const std::string& order);
inline constexpr const char* kGroupOrderRule =
    "must list tp, cp, ep, dp and pp once each, comma-separated, innermost first";

const base::Schema<TrainingPlan>& TrainingPlanSchema();
const base::Schema<Workload>& WorkloadSchema();

}  // namespace orrery::parallelism
