#pragma once
// Communication inside a layer for expert parallelism (MoE dispatch and
// combine) and context parallelism (the three ways to exchange keys and
// values), as separate terms the training estimator and the event engine
// add. Volumes are per device, per layer, per microbatch, in bytes; times
// come from the network seam (hardware/network.h). Allocation-free.

#include <cstdint>

#include "hardware/network.h"
#include "models/model_spec.h"
#include "models/transformer.h"
#include "parallelism/plan_spec.h"

namespace orrery::engine {

// The placement of the worst-placed group of `size` members `stride`
// devices apart when consecutive groups tile the devices: where a domain of
// D devices does not hold a whole number of groups (EP 64 in a 72-GPU NVL72
// rack), some group straddles two domains and its smallest piece, gcd(size x
// stride, D) / stride members, sends the rest of its all-to-all across the
// tier above. Network::Place assumes aligned groups; this corrects it. A
// domain wider than the system (64 devices of a 72-GPU NVL72 preset) holds
// all of them: no group straddles it.
hardware::GroupPlacement PlaceTiled(const hardware::Network& net, const hardware::SystemSpec& sys,
                                    int64_t size, int64_t stride);

// --- ZeRO-3 / FSDP -----------------------------------------------------------

// All-gathers of a layer's weights per microbatch under ZeRO-3: one before
// its forward and one before its backward (Rajbhandari et al. 2020, ZeRO,
// Sec. 7.2.3; Zhao et al. 2023, PyTorch FSDP, Sec. 3.3: reshard after
// forward, unshard again in the pre-backward hook), and under full recompute
// a third for the recomputed forward where the framework's checkpointing
// re-runs the layer's forward hooks (DeepSpeed: its parameter fetch is a
// module pre-forward hook, and its reentrant checkpoint re-runs the module).
// PyTorch FSDP with the checkpoint wrapper inside each FSDP unit (Composer
// applies it to the blocks after FSDP wrapping; torchtitan applies
// activation checkpointing before fully_shard, so each FSDP2 unit holds a
// checkpointed block) recomputes inside the unit's backward, on the weights
// its pre-backward hook gathered: two (TrainingPlan::zero3_recompute_gather).
// With recompute_interval N only every N-th layer recomputes: 2 + 1/N
// (parallelism::FullRecomputeShare).
inline double Zero3GathersPerMicrobatch(const parallelism::TrainingPlan& p) {
  return p.zero3_recompute_gather ? 2 + parallelism::FullRecomputeShare(p) : 2;
}

// ZeRO-3 under a pipeline (pp > 1) as the framework that runs it does: once
// per step per chunk, not per microbatch. DeepSpeed refuses the combination
// (deepspeed/runtime/pipe/engine.py, PipelineEngine.__init__: assert
// zero_optimization_stage() < 2, "ZeRO-2 and ZeRO-3 are incompatible with
// pipeline parallelism"); torchtitan runs FSDP2 under PyTorch's pipelining:
//   - its apply_fsdp (torchtitan/models/llama3/infra/parallelize.py) wraps
//     each block with reshard_after_forward = not pp_enabled under the
//     "default" reshard_after_forward_policy: a chunk's weights, gathered by
//     its first microbatch's forward, stay unsharded for the rest;
//   - torch/distributed/pipelining/stage.py, backward_maybe_with_nosync:
//     every microbatch's backward runs with set_requires_gradient_sync(False)
//     and set_reshard_after_backward(False): no reduce-scatter, no reshard,
//     the unsharded gradients accumulate (in reduce_dtype, FSDP2's
//     to_accumulated_grad_if_needed);
//   - schedules.py, _add_reduce_grad: a REDUCE_GRAD action right after the
//     stage's n_microbatches-th backward (or W) runs perform_reduce_grad
//     (stage.py): FSDP's post_backward for every unit, the reduce-scatter of
//     the whole chunk, then _root_post_backward_final_callback, which makes
//     the compute stream wait for it: exposed, not overlapped.
// The weights and gradients stay unsharded through the step: the memory
// model counts them (parallelism/memory_model.cpp, DeviceMemory).
inline bool Zero3GathersOncePerStep(const parallelism::TrainingPlan& p) { return p.zero >= 3 && p.pp > 1; }

// Bytes per parameter of ZeRO-3's gradient reduce-scatter: the weights'
// datatype (`weight_bytes`), or fp32 when the framework reduces in fp32
// (TrainingPlan::zero3_fp32_reduce): PyTorch FSDP's MixedPrecision with
// reduce_dtype float32, what Composer's fsdp_config mixed_precision DEFAULT
// sets (composer/distributed mixed-precision helper: param_dtype the autocast
// precision, reduce_dtype torch.float32) and torchtitan's default
// (training.mixed_precision_reduce = "float32").
inline double Zero3ReduceBytesPerParam(const parallelism::TrainingPlan& p, double weight_bytes) {
  return p.zero3_fp32_reduce ? 4.0 : weight_bytes;
}

// Bytes per parameter of the distributed optimizer's all-gather of the
// updated weights (ZeRO-1/2): the weights' datatype (`weight_bytes`), or 1
// byte when the weights are kept in FP8 and gathered so
// (TrainingPlan::fp8_param_gather, precision fp8): Megatron-Core's
// --fp8-param-gather ("Keep the compute param in fp8 (do not use any other
// intermediate dtype) and perform the param all-gather in fp8",
// megatron/training/arguments.py), which NeMo 2's bf16_with_fp8_mixed turns
// on (nemo/collections/llm/recipes/precision/mixed_precision.py: fp8_params
// = True in 2024, fp8_param_gather = True at NVIDIA/NeMo 0a07447c). The
// optimizer casts its fp32 shard of the weights to FP8 before the gather;
// that cast (5 bytes per parameter of the shard, 1/dp of the device's) is
// not priced. ZeRO-3 keeps `weight_bytes` (Megatron-FSDP's FP8 gather is
// not modelled).
inline double ParamGatherBytesPerParam(const parallelism::TrainingPlan& p, double weight_bytes) {
  const bool fp8 = p.precision == hardware::DataType::kFp8 && p.fp8_param_gather && p.zero >= 1 && p.zero <= 2;
  return fp8 ? 1.0 : weight_bytes;
}

// Bytes of one FSDP2 all-gather copy-out of `params` gathered parameters of
// `weight_bytes` each (TrainingPlan::zero3_copy_out): fully_shard gathers a
// unit's shards into one flat buffer and then, in FSDPParamGroup::
// wait_for_unshard on the current (compute) stream, before the unit's
// forward and again before its backward, copies them into each parameter's
// own unsharded tensor with torch.split_with_sizes_copy (PyTorch torch/
// distributed/_composable/fsdp/_fsdp_param_group.py and _fsdp_collectives.py,
// foreach_all_gather_copy_out, 2024): every gathered byte read once and
// written once, 2 x params x weight_bytes. FSDP1 (its FlatParameter is the
// gather's output, the module's tensors views into it) and DeepSpeed ZeRO-3
// copy nothing. Left out: the copy-in of the local shard (1/dp of the bytes,
// on FSDP2's all-gather copy-in stream) and the reduce-scatter's copy-in
// (the gradients cast into the fp32 reduce buffer), which runs on the
// reduce-scatter stream beside the compute.
inline double Zero3CopyOutBytes(const parallelism::TrainingPlan& p, double params, double weight_bytes) {
  return p.zero >= 3 && p.zero3_copy_out ? 2 * params * weight_bytes : 0;
}

// --- data parallelism -------------------------------------------------------

// The two data-parallel groups a stage's gradients reduce over. Megatron-Core
// keeps two gradient buffers (megatron/core/distributed/
// distributed_data_parallel.py, DistributedDataParallel.__init__): the
// parameters with allreduce=True (attention, norms, router, shared experts,
// embedding, LM head) over the data-parallel group with context parallelism
// (intra_dp_cp_group: dp x cp members), and the routed experts' (allreduce=
// False, set by the expert MLPs) over the expert-data-parallel group
// (intra_expt_dp_group), the ranks holding the same experts:
// expert_data_parallel_size = world / (etp x ep x pp) (megatron/core/
// parallel_state.py, initialize_model_parallel: the expert rank generator
// lays a stage out as etp x ep x edp, etp innermost), tp cp dp / (etp ep) at
// pp fixed. Each buffer's buckets all-reduce (DDP) or reduce-scatter (the
// distributed optimizer) over their own group, and the distributed
// optimizer all-gathers the updated weights over the same group
// (start_grad_sync / start_param_sync run every bucket group of both). A
// group of one member moves nothing.
struct DataParallelGroups {
  int64_t dense = 1;   // dp x cp
  int64_t expert = 1;  // edp (= dense when the experts are split as the rest)
  hardware::GroupPlacement dense_group, expert_group;
};

// Seconds of one data-parallel collective `c` over a stage's parameters,
// `bytes_per_param` each: the dense ones over the dense group, then the
// routed experts over theirs, one after the other (both buffers' buckets
// are issued from the same backward hooks and share the device's links and
// SMs; where the two groups run on different tiers this is an upper
// bound). `time` is
// hardware::Network::Time or a caller's memo of it: (Collective, bytes,
// GroupPlacement) -> seconds. Both engines price the data-parallel
// gradient reduction, the ZeRO-1/2 parameter all-gather and the ZeRO-3
// gathers with it. Allocation-free.
template <class CollectiveTime>
double DataParallelTime(CollectiveTime&& time, hardware::Collective c, const DataParallelGroups& g,
                        double dense_params, double expert_params, double bytes_per_param) {
  return (g.dense > 1 ? time(c, dense_params * bytes_per_param, g.dense_group) : 0.0) +
         (g.expert > 1 ? time(c, expert_params * bytes_per_param, g.expert_group) : 0.0);
}

// --- expert parallelism ---------------------------------------------------

// Bytes one device holds for one dispatch (or combine) all-to-all of one MoE
// layer: every one of its `tokens` goes to top_k experts as a hidden vector of
// h elements (Lepikhin et al. 2021, GShard, Sec. 2.2; Megatron-Core's
// all-to-all token dispatcher), times `load` for the busiest rank
// (parallelism::ExpertLoadFactor). This is the network's all-to-all buffer S:
// (ep - 1)/ep of it leaves the device, the rest stays with its local experts.
double ExpertAllToAllBytes(const models::ModelSpec& m, double tokens, double act_bytes, double load);

// The most scale-out nodes one token's routed experts lie on, for an EP group
// of `ep` members laid `per_node` to a scale-up domain (0 = no limit).
// m.routing_node_limit states it (DeepSeek-V3 Sec. 2.1.2: M = 4). Group-
// limited routing bounds it too where its groups line up with the nodes:
// Megatron-Core gives EP rank r the experts [r E/ep, (r + 1) E/ep) and
// consecutive EP ranks share a node, so node j holds a run of E/nodes
// consecutive experts, and DeepSeek's gate groups consecutive experts
// (scores viewed as n_group x E/n_group, MoEGate in modeling_deepseek_v3.py).
// With routing_groups a multiple of the nodes each node holds whole groups:
// a token reaches at most routing_group_limit nodes (DeepSeek-V3's
// released config, n_group 8 and topk_group 4 over 8 nodes: the paper's 4).
// With the nodes a multiple of the groups each group spans nodes / groups
// of them: routing_group_limit x nodes / groups. Otherwise a group can
// straddle two nodes and no bound is taken. Both stated: the smaller.
int64_t RoutingNodeLimit(const models::ModelSpec& m, int64_t ep, int64_t per_node);

// Seconds of one dispatch (or combine) all-to-all of `bytes` per device on
// the EP group `g`. With node-limited routing (RoutingNodeLimit = M) and
// a group wider than one scale-up domain, a token crosses the scale-out
// tier once per destination node, at most min(M, top_k) times, and is
// forwarded to its experts inside the node (DeepSeek-V3 Sec. 3.2.2: IB then
// NVLink, the two overlapped): the slower of the scale-out all-to-all of
// min(M, top_k)/top_k of the bytes and the scale-up all-to-all of all of
// them. Otherwise the network's all-to-all of `bytes`.
double ExpertAllToAllTime(const hardware::Network& net, const hardware::GroupPlacement& g,
                          const models::ModelSpec& m, double bytes);

// Dispatch and combine forward, and their gradients backward.
inline constexpr double kExpertAllToAllsPerLayer = 4;

// Tokens one device dispatches per microbatch: its b s / cp tokens, split
// over the tp ranks (Megatron-Core runs MoE with tp > 1 under sequence
// parallelism: each tp rank routes its own 1/t of the sequence).
inline double DispatchedTokens(const parallelism::TrainingPlan& p, double tokens_on_device) {
  return tokens_on_device / static_cast<double>(p.tp);
}

// What a collective of `comm` seconds adds to `compute` seconds of work it
// overlaps, when the compute runs `slowdown` slower beside it (the
// collective's kernels hold SMs and HBM bandwidth; DeviceSpec::
// overlap_slowdown). The compute progresses at 1/(1+s) while the collective
// runs and at full speed after it, so the pair ends at
//   max(c, T + c s/(1+s))   (c <= T (1+s): the lost work is c s/(1+s))
// and the exposed part is
//   max(c - T, c s/(1+s)),
// which is max(0, c - T) for s = 0. Measured slowdowns: 18.9 % on average,
// 40 % at most, for GEMMs of GPT and Llama layers overlapped with NCCL
// collectives on A100, H100, MI210 and MI250 ("Characterizing Compute-
// Communication Overlap in GPU-Accelerated Distributed Deep Learning:
// Performance and Power Implications", arXiv 2507.03114, 2025, abstract and
// Sec. 5); DeepSeek-V3 gives its all-to-alls 20 of the H800's 132 SMs
// (arXiv 2412.19437 Sec. 3.2.2), 132/112 - 1 = 17.9 % slower compute.
inline double OverlapExposed(double comm, double compute, double slowdown) {
  const double contention = comm * slowdown / (1 + slowdown);
  const double tail = comm - compute;
  return tail > contention ? tail : contention;
}

// The rate of the device's link to host memory (system.host_bandwidth), for
// what ZeRO-Offload and activation offload copy. CrossCheck refuses
// activation offload on a system without one; a system that states none
// gets 1 GB/s, so that a plan asked of it stays finite.
inline double HostLinkBandwidth(const hardware::SystemSpec& s) {
  return s.host_bandwidth > 0 ? s.host_bandwidth : 1e9;
}

// What offloading the activations of the first `offloaded` of a stage's
// `layers` transformer layers to host memory adds to one microbatch
// (training.offload_activation_layers; Megatron-Core --cpu-offloading, which
// calls Transformer Engine's get_cpu_offload_context with
// cpu_offloading_num_layers and the model's num_layers: megatron/core/
// transformer/transformer_block.py). TE's AsyncDoubleBufferGroupOffloadHandler
// (transformer_engine/pytorch/cpu_offload.py, TE 1.x-2.x until the refactor
// of PR 1762, Nov 2025) spreads the N offloaded layers over the L layers of
// the model: with q = L / N and r = L % N, the window points are
//   layer_window_map[i] = q (i + 1) - 1 + min(i + 1, r)
// and at the forward commit of layer window_map[k] the compute stream and the
// device-to-host stream wait for each other (wait_stream both ways, no host
// sync), layer k's activations are freed and layer k + 1's copy is issued on
// d2h_stream; it runs beside the forward of the layers up to the next window
// point. The backward mirrors it on h2d_stream: at the window points the
// next layer's reload is issued and the one before is waited for. A copy
// therefore pairs with a window of w layers' compute, and the windows are
//   group 0: window_map[0] = q - 1 + (r > 0) layers (its copy starts after
//            layer 0's forward), r - 1 groups of q + 1 (r > 0), the rest of q,
// which sum to L - 1. Each copy adds max(0, copy - w x compute) each way.
// The later OffloadSynchronizer (PR 1762) lets layer i's copy run until
// layer L - N + i, one copy stream: the same volume against the same
// compute, exposing about as much in total. The copies run on the copy
// engines, not on SMs, so the compute beside them is not slowed
// (OverlapExposed with no slowdown); the HBM traffic they add, at most the
// host rate (225 GB/s on GB200), under 3 % of a B200's 8 TB/s, is not charged.
inline double ActivationOffloadExposed(int64_t offloaded, int64_t layers, double copy_s, double layer_fwd_s,
                                       double layer_bwd_s) {
  if (offloaded <= 0 || layers <= offloaded) return 0;
  const int64_t q = layers / offloaded, r = layers % offloaded;
  auto pair = [&](double windows, int64_t w) {
    const double f = static_cast<double>(w) * layer_fwd_s, b = static_cast<double>(w) * layer_bwd_s;
    return windows * (OverlapExposed(copy_s, f, 0) + OverlapExposed(copy_s, b, 0));
  };
  const int64_t first = q - 1 + (r > 0 ? 1 : 0);
  const int64_t wider = r > 0 ? r - 1 : 0;  // groups with q + 1 layers
  return pair(1, first) + pair(static_cast<double>(wider), q + 1) +
         pair(static_cast<double>(offloaded - 1 - wider), q);
}

// A dense layer's four weight matrices in the order its forward pass runs
// them: the QKV projection, the attention output projection, the MLP's
// first matrix (with the gate under SwiGLU, one fused matrix as Megatron
// holds it) and its second; each as its share of the layer's weights.
struct LayerWeightShares {
  double w[4] = {0.25, 0.25, 0.25, 0.25};
};
// h (h + 2 kv d) : h (a d) : h f (2 h f under SwiGLU) : h f, with a the
// query heads, d the head dimension, kv the key/value heads and f the MLP
// width. Multi-head latent attention keeps the equal quarters.
inline LayerWeightShares DenseLayerWeightShares(const models::ModelSpec& m) {
  LayerWeightShares s;
  if (models::UsesMla(m) || m.hidden <= 0) return s;
  const double h = static_cast<double>(m.hidden), d = static_cast<double>(models::HeadDim(m));
  const double q = static_cast<double>(m.heads) * d, kv = static_cast<double>(models::KvHeads(m)) * d;
  const double f = static_cast<double>(models::FfnSize(m));
  const double w[4] = {h * (q + 2 * kv), q * h, (m.activation == models::Activation::kSwiglu ? 2 : 1) * h * f,
                       f * h};
  const double total = w[0] + w[1] + w[2] + w[3];
  if (total <= 0) return s;
  for (int i = 0; i < 4; ++i) s.w[i] = w[i] / total;
  return s;
}

// What the collectives of one pass (`comm` seconds) add to its `compute`
// seconds when the framework fetches weights one matrix at a time and
// prefetches only the next one: DeepSpeed ZeRO-3 as it stood in 2021
// (deepspeed/runtime/zero/stage3.py, v0.3.x). Its pre-forward and
// pre-backward hooks fetch a submodule's parameters (fetch_sub_module:
// blocking, comm_stream.synchronize() and torch.cuda.synchronize() once any
// of them is in flight), then prefetch_next_sub_modules issues, only when
// nothing is in flight, the gather of the next parameters in the recorded
// trace until stage3_prefetch_bucket_size elements (5e7 by default) are
// reached: at least one whole weight matrix, and no more than one for
// matrices of more than 5e7 elements (a 175B GPT's smallest is 1.5e8). Biases
// and norms stay whole (stage3_param_persistence_threshold, 1e5 elements).
// So matrix k's gather runs beside matrix k-1's compute only, and each pair
// ends at the later of the two: the pass takes
//   sum_k max(w_k c, w_{k-1} T)          (forward and recomputed forward)
// and, in the backward, which walks the matrices in reverse, matrix k's
// gather runs beside matrix k+1's backward:
//   sum_k max(w_k c, w_{k+1} T),
// indices cyclic (the next layer's first matrix follows a layer's last),
// the pass's compute spread over the matrices by their weight shares
// (GEMMs are nearly all of it). Each pair pays the contention term of
// OverlapExposed. With equal shares this is OverlapExposed(c, T, s) exactly;
// with unequal ones a small matrix's compute cannot hide a large matrix's
// gather: near balance (c = T) a GPT layer's 3 : 1 : 4 : 4 shares give
// (4 + 3 + 4 + 4) / 12 = 1.25 T where the pooled pass gives T.
// Returns the exposed seconds (the part beyond `compute`).
inline double PrefetchOneAheadExposed(const LayerWeightShares& s, double comm, double compute, double slowdown,
                                      bool backward) {
  double exposed = 0;
  for (int k = 0; k < 4; ++k) {
    const int beside = backward ? (k + 1) % 4 : (k + 3) % 4;
    exposed += OverlapExposed(s.w[k] * comm, s.w[beside] * compute, slowdown);
  }
  return exposed;
}

// The part of a MoE layer's all-to-alls (`comm`, seconds) that stays exposed
// when they overlap the compute of another microbatch's layer (`compute`,
// its forward + backward): DeepSeek-V3's DualPipe pairs a forward and a
// backward chunk so that each one's all-to-all runs under the other's
// compute (arXiv 2412.19437 Sec. 3.2.1, Fig. 4); Megatron-Core's 1F1B A2A
// overlap does the same inside 1F1B. The compute beside them is slowed
// (OverlapExposed).
inline double ExposedExpertComm(double comm, double compute, double slowdown = 0) {
  return OverlapExposed(comm, compute, slowdown);
}

// The MoE token dispatcher's regrouping of the rows the local experts run:
// before the expert GEMMs the device permutes its received rows into
// expert-major order (one contiguous block per local expert, as a grouped
// GEMM takes them), after them it permutes the outputs back and sums each
// token's rows (scatter-add). Every dropless dispatcher does both: Megatron-
// Core's all-to-all dispatcher as sort_chunks_by_idxs after the dispatch and
// before the combine (megatron/core/transformer/moe/token_dispatcher.py,
// moe_utils.py; the pipeline of MoE parallel folding, arXiv 2504.14960,
// Sec. 3), its flex dispatcher (DeepEP, HybridEP) as permute / unpermute
// around the experts, since DeepEP delivers each token once per destination
// rank (DeepSeek-V3, arXiv 2412.19437, Sec. 3.2.2) and the copies per
// expert are made on arrival. Each kernel reads and writes the Q rows the
// experts run, h elements of `act_bytes` each: Q = tokens x (etp / tp) x
// top_k x load on the busiest device (models::LayerOps' routed rows).
// Not counted: the all-to-all dispatcher's own gather of the sender's
// tokens into destination order before the dispatch (and its inverse after
// the combine), which DeepEP's kernels fold into the transfer; the rows do
// not say which dispatcher ran.
struct ExpertPermuteTraffic {
  double permute_bytes = 0;    // forward: received rows into expert-major order
  double unpermute_bytes = 0;  // forward: expert outputs back, summed per token
};
ExpertPermuteTraffic ExpertPermuteBytes(const models::ModelSpec& m, const parallelism::TrainingPlan& p,
                                        double tokens_on_device, double act_bytes, double load);

// Seconds of those two kernels per MoE layer and microbatch, forward; the
// backward runs each one's transpose (a permutation's gradient is the
// inverse permutation of the same rows), the same traffic again. One
// memory-bound kernel each (hardware::MemoryTime, with its launch overhead).
double ExpertPermuteTime(const hardware::DeviceSpec& d, const ExpertPermuteTraffic& t);

// Kernels one MoE layer launches per microbatch on a device, forward and
// backward, for the host-launch bound of dropless routing. Megatron-Core's
// all-to-all dispatcher reads the tokens per expert back to the host in
// every dropless layer (token_dispatcher.py, MoEAlltoAllTokenDispatcher.
// preprocess: the "before_ep_alltoall" / "before_finish" CUDA sync points;
// only drop-and-pad, with the capacity known beforehand, skips it), and the
// grouped expert MLP needs them as a host list (experts.py, TEGroupedMLP.
// forward: tokens_per_expert.tolist(), "transformer engine requires this to
// be a list"): Transformer Engine's GroupedLinear splits its input by that
// list and runs one GEMM per local expert, each FP8 split cast by its own
// quantize kernel first. After the copy the device has nothing queued: it
// runs each kernel as the host launches it, so the layer takes at least the
// host time of its kernels. Counted here:
//   - each operator of the layer that is not an expert GEMM (models::
//     LayerOps): one kernel forward; backward two for a GEMM (input and
//     weight gradient, Narayanan et al. 2021 Sec. 5.1), one otherwise;
//     none in a pass the operator does not run in (a backward-only
//     element-wise operator's forward, bytes 0: the split's concatenation,
//     a norm's weight-gradient kernel; a forward copy's backward, models::
//     kNoBackward: the packed layout's copies);
//   - in FP8, the quantize kernels the estimator prices beside each linear
//     GEMM (Fp8LinearCastTimes, step_kernels.h): one each way, two under
//     current scaling (its amax pass is a kernel of its own); none for the
//     attention core and the router, which stay in BF16
//     (TrainingGemmDataType);
//   - each expert GEMM (fc1, fc2): per local expert one GEMM forward and two
//     backward, plus, in FP8, its split's quantize kernels each way; under
//     delayed scaling one fused kernel for all splits (Fp8GroupedCastTimes);
//   - the router's fused top-k and score kernel, one forward and one
//     backward (moe_utils.py, topk_routing_with_score_function with
//     moe_router_fusion: Transformer Engine's fused_topk_with_score_function,
//     an autograd function of one kernel each way; every Qwen3 recipe of
//     Megatron-Bridge sets moe_router_fusion, scripts/performance/configs/
//     qwen/qwen3_llm_pretrain.py, set_qwen3_common_configs);
//   - the all-to-all dispatcher's own kernels (MoEAlltoAllTokenDispatcher,
//     moe_permute_fusion on): forward, routing_map.sum (1) and, with ep > 1,
//     the rest of preprocess: the input splits' sum, the all-gather of the
//     counts over the tp x ep group, the local experts' slice made
//     contiguous, and three sums of it (6); the fused permute and unpermute
//     (2); with ep > 1 the all-to-alls of the tokens and of their
//     probabilities and the combine's (3); with more than one local expert
//     sort_chunks_by_idxs and its inverse (2). Backward, each differentiable
//     one's gradient: permute, unpermute (2), the three all-to-alls (3),
//     the two sorts (2).
// Still a lower bound: the auxiliary loss (when the model trains with one),
// the device-to-host copies of the counts, and the fused permute's index-map
// kernels beyond one are not counted.
//
// Of the forward's kernels, those launched from inside Transformer Engine's
// linear modules, whose host time is priced per module call where the plan
// sets one (MoeForwardHostTime): Megatron-Core's Transformer Engine layer
// spec (gpt_layer_specs.py) builds every linear GEMM but the router's from
// them, the attention projections as TELayerNormColumnParallelLinear /
// TERowParallelLinear (te.LayerNormLinear, te.Linear; MLA's and the shared
// experts' projections as TE linears too) and the routed experts' fc1 and
// fc2 as TEColumnParallelGroupedLinear / TERowParallelGroupedLinear
// (te.GroupedLinear, one split per local expert). Counted: one call per
// such GEMM operator (te_modules_fwd), the GEMM and quantize kernels
// counted above for it (te_kernels_fwd), and for each grouped one its
// local experts' splits (te_splits_fwd). The fused norm of
// te.LayerNormLinear stays a kernel of its own: the module figure is
// te.Linear's.
//
// Of the forward's kernels, those launched after the dispatcher's
// device-to-host copy of the token counts (after_sync_*): the sync sits
// between the local permute and the expert-parallel all-to-all
// (token_dispatcher.py, MoEAlltoAllTokenDispatcher: cuda_sync_point
// "before_ep_alltoall" when ep > 1 or more than one local expert), so
// every operator after the router (the routed experts' fc1, activation and
// fc2, shared experts, the residual add) and the dispatcher's all-to-alls,
// sorts and unpermute come after it; the router, its top-k,
// routing_map.sum, the preprocess kernels and the permute before it.
struct LayerKernels {
  double fwd = 0;
  double bwd = 0;
  double te_modules_fwd = 0;
  double te_kernels_fwd = 0;
  double te_splits_fwd = 0;
  double after_sync_fwd = 0;
  double after_sync_te_modules_fwd = 0;
  double after_sync_te_kernels_fwd = 0;
};
LayerKernels MoeLayerKernels(const models::OpList& ops, double local_experts, bool fp8,
                             parallelism::Fp8Recipe recipe, bool expert_parallel);

// A MoE layer's seconds per microbatch in one direction with its kernels
// launched by a host `host_per_kernel` seconds each: max(device, kernels x
// host) (the device idles until the host has launched the next kernel).
double HostBoundTime(double device_s, double kernels, double host_per_kernel);

// Host seconds of a MoE layer's forward: each kernel launched outside a
// Transformer Engine linear module at `per_kernel`, each module call at
// `per_module` in place of its own kernels' launches, and each grouped
// split at `per_split` (LayerKernels' te_* counts). With `per_module` 0 no
// module figure is known: every kernel at `per_kernel`, the splits still
// at `per_split`. The backward stays kernels x per_kernel: the published
// per-call figures (TransformerEngine PR 1191, issues 761 and 2053) time
// forward passes only.
double MoeForwardHostTime(const LayerKernels& k, double per_kernel, double per_module, double per_split);

// The same host seconds for the forward's kernels after the dispatcher's
// device-to-host sync alone (LayerKernels' after_sync_* counts; every
// grouped split is after it).
double MoeForwardHostTimeAfterSync(const LayerKernels& k, double per_kernel, double per_module,
                                   double per_split);

// Seconds of a dropless MoE layer's forward whose host blocks on the
// dispatcher's device-to-host copy once a layer (LayerKernels). A host that
// launches kernels of host times h_1..h_n to a device that runs them in
// d_1..d_n finishes at max over j of (h_1 + ... + h_j) + (d_j + ... + d_n)
// (a two-stage flow line: kernel j starts once launched and once j - 1 is
// done). Between two syncs the host launches this layer's kernels after
// the sync (A: the experts, host `host_after_sync`) and then the next
// layer's up to its sync (B: norms, attention, router, permute, device
// `device_before_sync`); three of the candidates bound the segment from
// below: j at the first kernel (the device's whole time `device_s`), at the
// last (the host's whole time `host_s`) and at B's first, host_after_sync +
// device_before_sync: B's device time cannot start before the host has
// launched A, and the host cannot launch ahead of the sync into A while B
// runs. Without the sync (token dropping with padding) the host runs ahead
// and the layer takes max(device, host).
double SyncedForwardTime(double device_s, double host_s, double host_after_sync, double device_before_sync);

// Seconds of a MoE layer's expert GEMM of `flops` and `bytes` over all of
// the device's `local_experts` (experts / ep): one grouped GEMM of E
// problems, one per local expert, each with 1/E of the rows, FLOPs and
// bytes (MegaBlocks, Gale et al. 2023, arXiv 2211.15841, Sec. 5: the
// experts' products as a variable-sized batched matrix multiply;
// Megatron-Core's GroupedMLP / Transformer Engine's GroupedLinear). Tiles
// and waves are per problem, so each runs at the efficiency of a GEMM of
// its own FLOPs (a device's curve is indexed by one GEMM's FLOPs), not of
// the group's sum: Qwen3-30B-A3B's 16 local experts of width 768 on 2,048
// rows each are 6.4 and 12.9 GFLOP problems, not one 206 GFLOP GEMM.
// Launched once: one kernel overhead for the group. `mxfp8`: FP8 problems
// with MXFP8 block scales (hardware::GemmTime).
double ExpertGemmTime(const hardware::DeviceSpec& d, hardware::DataType dt, double flops, double bytes,
                      double local_experts, bool mxfp8 = false);

// --- context parallelism --------------------------------------------------

// What one scheme moves and holds, per device, per layer and microbatch.
struct CpVolume {
  double fwd_bytes = 0;     // bytes this device sends in the forward pass
  double bwd_bytes = 0;     // in the backward pass
  double buffer_bytes = 0;  // extra device memory while one layer runs
};

// Bytes of the keys and values of `tokens` tokens on one device (its
// tensor-parallel share of the heads; MLA's expanded per-head K/V).
double KvBytes(const models::ModelSpec& m, double tokens, int64_t tp, double act_bytes);

// Whether the scheme can split this model: Ulysses scatters query heads, so
// heads / tp must be a multiple of cp (Jacobs et al. 2023, Sec. 3.1).
bool CpSchemeFits(const models::ModelSpec& m, parallelism::CpScheme scheme, int64_t tp, int64_t cp);
// Whether the scheme can run the plan's attention kernel. Ring and
// all-gather CP are loops of a fused attention kernel over K/V blocks
// (Transformer Engine's context-parallel attention); Megatron-Core's
// unfused DotProductAttention asserts context_parallel_size == 1 ("Context
// parallelism is only supported by TEDotProductAttention!",
// megatron/core/transformer/dot_product_attention.py), and so does NeMo's
// unfused Gemma 2 attention. Ulysses wraps any local attention between its
// all-to-alls (DeepSpeed's DistributedAttention takes the local attention
// as a module; Jacobs et al. 2023, Sec. 3.1). Auto: some scheme runs it.
bool CpSchemeRunsAttention(parallelism::CpScheme scheme, parallelism::Attention attention);
// Whether a plan's context parallelism can run at all: cp 1, or its scheme
// (auto: one of ring, all-gather, Ulysses) both splits the model
// (CpSchemeFits) and runs the plan's attention (CpSchemeRunsAttention).
bool CpPlanRuns(const models::ModelSpec& m, const parallelism::TrainingPlan& p);

// Volumes per scheme, for `tokens` = b s / cp tokens on this device:
//   ring       (Liu et al. 2023, "Ring Attention with Blockwise
//              Transformers", arXiv 2310.01889, Sec. 3; Megatron-Core CP):
//              cp - 1 steps, each passing this device's K/V block (kv) to
//              the next rank: fwd (cp-1) kv; backward passes K/V and their
//              gradient accumulators: 2 (cp-1) kv. Buffers: the block in
//              flight and the one computed, for K/V and dK/dV: 4 kv.
//   allgather  (Llama Team 2024, "The Llama 3 Herd of Models", arXiv
//              2407.21783, Sec. 3.3.2): all-gather K/V before attention,
//              (cp-1) kv in; backward gathers them again and reduce-scatters
//              their gradients: 2 (cp-1) kv. Buffer: the gathered K/V, cp kv.
//   ulysses    (Jacobs et al. 2023, "DeepSpeed Ulysses", arXiv 2309.14509,
//              Sec. 3.1-3.2): all-to-all of Q, K, V (sequence-split to
//              head-split) and of the output back; the same backward on the
//              gradients. K/V heads fewer than cp are replicated up to cp.
//              Sends (cp-1)/cp of (q + k + v + o) each way. Buffer: q+k+v+o.
CpVolume CpVolumeOf(const models::ModelSpec& m, parallelism::CpScheme scheme, double tokens,
                    int64_t tp, int64_t cp, double act_bytes);

// Exposed seconds of one layer's CP exchange for one microbatch.
struct CpExposed {
  double fwd = 0;
  double bwd = 0;
  double total() const { return fwd + bwd; }
};

// `attention_fwd`: the attention core's forward seconds on this device
// (what ring attention hides its steps behind, one block of 1/cp per step;
// the backward block is 2.5x, FlashAttention-2 Sec. 3). All-gather and
// Ulysses run between kernels and stay exposed.
CpExposed CpExposedTime(const hardware::Network& net, const hardware::GroupPlacement& g,
                        const models::ModelSpec& m, parallelism::CpScheme scheme, double tokens,
                        int64_t tp, int64_t cp, double act_bytes, double attention_fwd);

// The whole sequence of a CP plan whose device holds `tokens` = b s / cp
// tokens of a microbatch: what sliding windows are measured against.
inline double CpSequence(const parallelism::TrainingPlan& p, double tokens) {
  return tokens * static_cast<double>(p.cp) / static_cast<double>(p.micro_batch > 0 ? p.micro_batch : 1);
}

// One layer's attention forward seconds on a global and on a local
// (sliding-window or chunked) layer, from the layers' mean `attention_fwd`
// over a sequence of `seq` tokens: a global layer does 1 /
// LocalAttentionShare of the mean, a local one LocalLayerWork of a global
// one. Both the mean without local layers.
struct LayerAttention {
  double global = 0;
  double local = 0;
};
LayerAttention LayerAttentionOf(const models::ModelSpec& m, double attention_fwd, double seq);

// The scheme the local layers of a plan running `scheme` use.
// - Sliding-window layers (ModelSpec::sliding_window): Transformer Engine's
//   ring (p2p) context parallelism does not take a window; its all-gather
//   variant was added for it (TransformerEngine PR 1060: "sliding window
//   attention + causal + FlashAttention"; Megatron-LM PR 1160: "the default
//   cp_comm_type 'p2p' does not work with sliding window attention"), and
//   all-to-all takes it too (Megatron-LM issue 2222, maintainer:
//   "compatible with both all_gather and a2a"). Megatron-Core takes a
//   cp_comm_type per layer, so a ring plan runs its windowed layers on
//   whichever of the two exposes less (all-gather where Ulysses cannot
//   split the heads); other schemes run as they are.
// - Chunked layers (attention_chunk) run the plan's scheme: chunks are
//   packed sequences (THD), which the ring takes, splitting each sequence
//   into 2 cp pieces and attending only within a sequence
//   (TransformerEngine PR 641; TE issue 1368, maintainer), and which
//   Ulysses' whole-sequence heads take as any mask.
// `local_attention_fwd`: one local layer's attention.
parallelism::CpScheme LocalLayersCpScheme(const hardware::Network& net, const hardware::GroupPlacement& g,
                                          const models::ModelSpec& m, parallelism::CpScheme scheme,
                                          double tokens, int64_t tp, int64_t cp, double act_bytes,
                                          double local_attention_fwd);

// A layer's exposed CP exchange averaged over the stage's layers: with no
// local layers CpExposedTime at `attention_fwd`; with sliding-window or
// chunked layers (a share f of them) the global layers' exchange behind a
// global layer's attention (attention_fwd / LocalAttentionShare) and the
// local layers' (LocalLayersCpScheme) behind theirs, weighted 1 - f and f.
// Each windowed layer still exchanges the whole sequence's K/V: the
// window-aware exchange of only the w tokens before each chunk
// (Megatron-LM PR 5597, swa_p2p, open in 2026) is not modelled. `seq`: the
// whole sequence.
CpExposed CpExposedOverLayers(const hardware::Network& net, const hardware::GroupPlacement& g,
                              const models::ModelSpec& m, parallelism::CpScheme scheme, double tokens,
                              int64_t tp, int64_t cp, double act_bytes, double attention_fwd, double seq);

// The scheme `auto` runs: the one with the least exposed time among those
// that fit (ring first on ties), each priced over the layers
// (CpExposedOverLayers); the plan's own scheme otherwise. Writes the
// exposed time of each scheme (index by CpScheme; infinity when it does not
// fit) into `each` when not null.
parallelism::CpScheme ChooseCpScheme(const hardware::Network& net, const hardware::GroupPlacement& g,
                                     const models::ModelSpec& m, const parallelism::TrainingPlan& p,
                                     double tokens, double act_bytes, double attention_fwd,
                                     CpExposed* chosen, double* each);

}  // namespace orrery::engine
