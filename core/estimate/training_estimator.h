#pragma once
// The closed-form training estimator: the hot path of search and sweeps.
// Construct once per (model, system); Run() is pure, allocation-free and does
// no string handling or I/O, so it can be called millions of times.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/estimate/parallel_comm.h"
#include "core/estimate/scenario.h"
#include "hardware/network.h"
#include "parallelism/memory_model.h"

namespace orrery::engine {

// Why a plan cannot run. Text (with the numbers) comes from Explain().
enum class Infeasible {
  kNone,
  kDeviceCount,      // tp*pp*cp*dp != devices
  kBatchSplit,       // global batch not a multiple of dp*micro_batch
  kHeadsSplit,       // tp does not divide heads / ffn, ep does not divide experts
  kLayerSplit,       // pp*v > layers, end-stage layers that leave layers out, or offload of a whole stage
  kOutOfMemory,      // the first or last stage does not fit in device memory
  kNoNetwork,        // a group spans devices but the system has no network tier
  kInvalidResult,    // the numbers broke an invariant (result_invariants.h): an internal error
  kInterleaveMicrobatches,  // interleaved 1F1B with m not a multiple of pp
  kHostOutOfMemory,  // offloaded optimizer states exceed the node's host memory
  kDualPipeShape,    // DualPipe with an odd pp, an odd microbatch count or fewer than 2 pp
};

// Seconds of one iteration by cause. The parts add up to `total`.
struct TimeBreakdown {
  double forward = 0;
  double backward = 0;
  double recompute = 0;
  double tp_comm = 0;      // exposed tensor-parallel collectives
  double cp_comm = 0;      // exposed context-parallel K/V exchange
  double ep_comm = 0;      // exposed expert-parallel all-to-all
  double pp_bubble = 0;
  double pp_p2p = 0;
  double dp_comm = 0;      // exposed data-parallel / ZeRO collectives
  double optimizer = 0;
  double offload = 0;
  double total = 0;
};

struct TrainingEstimate {
  Infeasible infeasible = Infeasible::kNone;
  bool feasible() const { return infeasible == Infeasible::kNone; }
  TimeBreakdown time;
  parallelism::MemoryBreakdown memory;  // the fullest device (first or last stage)
  double memory_capacity = 0;           // bytes per device
  int64_t dp = 0;
  int64_t microbatches = 0;             // per iteration per pipeline
  double iteration_s = 0;
  double model_flops = 0;               // per iteration, no recompute (MFU numerator)
  double hardware_flops = 0;            // per iteration, with recompute (HFU numerator)
  double mfu = 0;
  double hfu = 0;
  // MFU with the attention scores and attention-over-values counted at the
  // causal half a masked kernel computes, as Megatron-LM's
  // num_floating_point_operations now counts them (megatron/training/
  // training.py: "causal mask (only half of the mask is non-zero)"). `mfu`
  // counts the full s x s product (Narayanan et al. 2021 Eq. 3, the
  // convention the measured rows state), which at long sequences credits
  // FLOPs no causal kernel runs: Llama 3.1 8B at 128K tokens counts twice
  // its causal attention FLOPs (models::ModelFlopsPerIteration).
  double mfu_causal = 0;
  double tokens_per_s = 0;
  double tflops_per_device = 0;         // model FLOP/s per device
  double energy_j = 0;                  // per iteration, facility (TDP x time x PUE)
  double cost_usd = 0;                  // per iteration at the rental price
  double train_time_s = 0;              // for workload.train_tokens (0 when not asked)
  double train_device_hours = 0;
  double train_energy_j = 0;
  double train_cost_usd = 0;
  const char* invariant = nullptr;      // the rule broken, with kInvalidResult
  // The context-parallel scheme the plan runs (cp > 1): the plan's, or with
  // `auto` the cheapest (parallel_comm.h ChooseCpScheme).
  parallelism::CpScheme cp_scheme = parallelism::CpScheme::kAuto;
};

// Whether a causal MFU differs from the MFU by half a point or more, where
// the faces state it beside the MFU (long sequences: causal attention's
// masked half is a visible part of the FLOPs).
inline bool CausalMfuDiffers(double mfu, double mfu_causal) { return mfu - mfu_causal >= 0.005; }

// Forward and backward time of one layer's (or the embedding's, or the LM
// head's) operators for one microbatch on one device.
// The GEMM passes one tensor-parallel block (attention or MLP) pairs its
// collectives with under Transformer Engine's userbuffer overlap
// (TpExposedCollectives): its column-parallel input projections (QKV, or
// MLA's query and key/value projections; the MLP's up projection, a MoE
// layer's routed and shared up projections) and its row-parallel output
// projection (the attention's output, the MLP's down projection), seconds
// per microbatch.
struct TpBlockGemms {
  double in_fwd = 0, in_dgrad = 0, in_wgrad = 0;
  double out_fwd = 0, out_dgrad = 0;
};

struct OpTimes {
  double fwd = 0;
  double bwd = 0;
  double attention_fwd = 0;  // attention-core part of fwd (selective recompute)
  double mla_up_fwd = 0;     // MLA up-projection part of fwd (recompute_mla_up_proj)
  double mlp_fwd = 0;        // dense MLP block part of fwd (recompute_mlp; Op::dense_mlp)
  double norm_fwd = 0;       // module norms of fwd (recompute_layernorm; Op::module_norm)
  double moe_act_fwd = 0;    // routed experts' activation of fwd (recompute_moe_act; Op::expert_act)
  double op_sac_fwd = 0;     // part of fwd op-level SAC runs again (Op::op_sac_recompute)
  double early_stop_fwd = 0; // part of fwd a checkpoint stopping early skips (OpList::early_stop_tail)
  double gemm = 0;           // fwd + bwd GEMM time
  double weight_grad = 0;    // weight-gradient GEMMs of bwd (ZB-H1's W pass)
  double after_router_fwd = 0;  // part of fwd after a MoE layer's router (its experts on)
  TpBlockGemms tp_attention, tp_mlp;  // the GEMMs each block's TP collectives pair with
};

// The part of an estimate that depends only on the model, the workload
// (global batch, sequence) and the plan's per-layer shape (micro_batch, tp,
// cp, ep, sequence_parallel, attention, elementwise, separate_bias_grad, qkv_split_cat,
// norm_weight_grad_kernel, rope_kernel, packed_qkv_copies,
// precision, fp8_recipe): the operator lists,
// their times and FLOPs. A search prepares it once per block of plans and
// runs every plan of the block (recompute, overlaps, ZeRO stage, offload,
// interleave, group order) against it. Valid for the estimator that made
// it; Run() keeps in it the collective times it looked up (a memo: they
// recur across the plans of a block), so use one from one thread at a time.
// Movable, not copyable.
struct CollectiveMemo;
struct PreparedWorkload {
  OpTimes dense, moe, head, embed;
  double layer_flops = 0;           // one dense layer per device per microbatch (full recompute)
  double attention_core_flops = 0;  // its attention core (selective recompute)
  double mla_up_flops = 0;          // its MLA up projections (recompute_mla_up_proj)
  double mlp_flops = 0;             // its MLP block (recompute_mlp)
  double op_sac_flops = 0;          // what op-level SAC recomputes of it (Recompute::kOp)
  double early_stop_flops = 0;      // what full recompute stopping early skips of it
  double model_flops = 0;           // per iteration, no recompute
  double model_attention_flops = 0; // its attention scores' part, full s x s (mfu_causal)
  // What it was prepared for.
  bool valid = false;
  int64_t micro_batch = 0, tp = 0, cp = 0, ep = 0, etp = 0, seq_len = 0, global_batch = 0;
  double expert_load = 1;  // parallelism::ExpertLoadFactor of the plan
  double host_kernel_launch = 0;  // the plan's, with capacity_bound: MoE host-launch bound
  double host_te_module = 0;      // the plan's Transformer Engine module and split host times
  double host_te_split = 0;
  bool capacity_bound = false;    // expert_capacity_factor > 0 (no host sync)
  bool sequence_parallel = false;
  parallelism::Attention attention = parallelism::Attention::kFlash;
  parallelism::Elementwise elementwise = parallelism::Elementwise::kFused;
  bool separate_bias_grad = false;
  bool qkv_split_cat = false;
  bool norm_weight_grad_kernel = false;
  bool rope_kernel = false;
  bool packed_qkv_copies = false;
  parallelism::LossKernel loss_kernel = parallelism::LossKernel::kMegatronFp32;
  hardware::DataType precision = hardware::DataType::kBf16;
  parallelism::Fp8Recipe fp8_recipe = parallelism::Fp8Recipe::kDelayed;
  // True when a plan and workload have the shape it was prepared for.
  bool Matches(const parallelism::TrainingPlan& p, const parallelism::Workload& w) const;
  std::unique_ptr<CollectiveMemo> memo;  // filled by Run()

  PreparedWorkload();
  ~PreparedWorkload();
  PreparedWorkload(PreparedWorkload&&) noexcept;
  PreparedWorkload& operator=(PreparedWorkload&&) noexcept;
};

// The costs Run() is built from, for the event-driven engine
// (core/estimate/event_estimator.h), which lays them out per stage, chunk and
// microbatch instead of assuming a schedule. Seconds per microbatch on one
// device; parameters per device (already split over tp and ep).
struct LayerCosts {
  double fwd = 0;
  double bwd = 0;          // input and weight gradients
  double bwd_weight = 0;   // the weight-gradient GEMMs of `bwd` (a W pass)
  double attention_fwd = 0;  // attention core of `fwd` (what selective recompute redoes)
  double mla_up_fwd = 0;     // MLA up projections of `fwd` (what recompute_mla_up_proj redoes)
  double mlp_fwd = 0;        // dense MLP block of `fwd` (what recompute_mlp redoes)
  double norm_fwd = 0;       // module norms of `fwd` (what recompute_layernorm redoes)
  double moe_act_fwd = 0;    // routed experts' activation of `fwd` (what recompute_moe_act redoes)
  double op_sac_fwd = 0;     // what op-level SAC redoes of `fwd` (Recompute::kOp)
  double early_stop_fwd = 0; // what full recompute stopping early does not redo (checkpoint_early_stop)
  double gemm = 0;         // GEMM time of fwd + bwd
  TpBlockGemms tp_attention, tp_mlp;  // the GEMMs each block's TP collectives pair with
};
struct OperatorCosts {
  LayerCosts dense, moe;   // one transformer layer
  LayerCosts embed, head;  // embedding lookup; LM head and loss
  double moe_fraction = 0; // share of MoE layers
  // TP collectives per layer: all of them, or under TP overlap (inside the
  // scale-up domain) what stays exposed beside each one's own GEMM
  // (TpExposedCollectives).
  double tp_fwd = 0, tp_bwd = 0, tp_rec = 0;
  // The embedding's and the LM head and loss's TP collectives per microbatch,
  // forward and backward, never overlapped (TpHeadCollectives).
  double tp_embed_fwd = 0, tp_embed_bwd = 0, tp_head_fwd = 0, tp_head_bwd = 0;
  double overlap_slowdown = 0;  // DeviceSpec::overlap_slowdown: compute beside a collective runs 1+s slower
  double cp_fwd = 0, cp_bwd = 0;  // exposed CP exchange per layer, forward and backward
  double ep_layer = 0;     // EP all-to-alls per MoE layer
  double p2p = 0;          // one activation send between pipeline stages
  double layer_params = 0, embed_params = 0, head_params = 0;
  double weight_bytes = 0; // per parameter
  // FSDP2's copy-out of one gather of a layer, of the embedding and of the
  // LM head on the compute stream, seconds (Zero3CopyOutBytes; 0 without it).
  double zero3_copy_out_layer = 0, zero3_copy_out_embed = 0, zero3_copy_out_head = 0;
  double grad_bytes = 0;   // per parameter, as reduced
  double optimizer_bytes_per_param = 0;
  // Bytes per parameter of the device's whole gradient buffer zeroed every
  // step, and zeroed and scaled when the stage's gradients are reduced over
  // more than one device (GradBufferBytesPerParam; 0 under ZeRO-3; with
  // training.grad_scale_at_dp1 both hold the scaling).
  double grad_buffer_bytes_per_param = 0, grad_buffer_scaled_bytes_per_param = 0;
  // Bytes per parameter the backward of every microbatch moves adding the
  // weight gradients into the gradient buffer outside the GEMMs
  // (GradAccumulationBytesPerParam; 0 with training.grad_accumulation_fusion).
  double grad_accumulation_bytes_per_param = 0;
  // Of those, the bytes moved by a non-vectorized kernel, one element a
  // parameter (GradAccumulationUnvecBytesPerParam: autocast's bf16 -> fp32
  // weight-gradient cast).
  double grad_accumulation_unvec_bytes_per_param = 0;
  // Bytes per parameter of each recomputed layer that full recompute casts
  // again under autocast (RecomputeRecastBytesPerParam; 0 otherwise).
  double recompute_recast_bytes_per_param = 0;
  int64_t dense_dp = 1;    // the dense parameters' data-parallel group: dp x cp
  // Both data-parallel groups, dense (dp x cp) and routed experts (edp), and
  // the routed experts' parameters per device in one layer (averaged over
  // the layers as layer_params) and on the last stage's MTP modules: what
  // reduces over the expert group (DataParallelTime, parallel_comm.h).
  DataParallelGroups dp_groups;
  double expert_layer_params = 0, head_expert_params = 0;
  hardware::GroupPlacement ep_group;  // where the MoE all-to-alls run (ep > 1)
  hardware::GroupPlacement cp_group;  // where the K/V exchange runs (cp > 1)
  double tokens = 0;       // tokens of one microbatch on one device (b s / cp)
  double act_bytes = 0;    // bytes per activation element
  // Seconds to copy one layer's activations of one microbatch to or from
  // host memory (training.offload_activation_layers; 0 without offload).
  double act_offload_copy = 0;
};

// --- per-operator breakdown (orrery estimate --ops) -------------------------
// What bounds one kernel's time in the roofline (hardware/device_model.h):
// its tensor-core work, its memory traffic, or the fixed kernel overhead
// (DeviceSpec::kernel_overhead) when that is longer than either.
// What bounds one pass of an operator; kNone: the pass runs no kernel (the
// backward-only qkv_split_grad's forward).
enum class OpBound { kCompute, kMemory, kLaunch, kNone };
const char* OpBoundName(OpBound b);

// One operator of one layer (or of the LM head or the embedding), one
// microbatch on one device, as the estimator prices it: fwd_s and bwd_s are
// the very seconds Run() adds for it. FLOPs are those executed on the
// device (a causal attention kernel does half of the full score matrix; a
// GEMM's backward is two GEMMs of its size; FlashAttention's 2.5x the
// forward); bytes are the priced memory traffic. `*_fraction`: achieved
// FLOP/s over the datatype's peak for compute-bound kinds, achieved bytes/s
// over the memory bandwidth for memory-bound ones.
struct OperatorLine {
  std::string name;
  const char* kind = "";  // gemm, grouped_gemm, batched_gemm, attention, elementwise, loss, permute, mtp, host_bound
  double fwd_s = 0, bwd_s = 0;
  double fwd_flops = 0, bwd_flops = 0;
  double fwd_bytes = 0, bwd_bytes = 0;
  double fwd_fraction = 0, bwd_fraction = 0;
  OpBound fwd_bound = OpBound::kCompute, bwd_bound = OpBound::kCompute;
  double fp8_cast_fwd_s = 0, fp8_cast_bwd_s = 0;  // part of fwd_s / bwd_s: the FP8 casts of a linear layer
  double bias_grad_bwd_s = 0;  // part of bwd_s: a linear layer's bias-gradient reduction (Op::bias_grad_bytes)
};
// A layer's (or the head's, or the embedding's) operators; fwd_s and bwd_s
// are the estimator's times of the whole (PreparedWorkload's OpTimes): the
// lines sum to them in order.
struct OperatorGroup {
  std::vector<OperatorLine> ops;
  double fwd_s = 0, bwd_s = 0;
};
// One kind of communication over an iteration: the time its traffic takes
// on its own (every overlap off) and what the estimate leaves exposed
// (TimeBreakdown); hidden = traffic - exposed. traffic_s < 0: not separable
// (a context-parallel scheme prices only what it exposes).
struct CommLine {
  const char* name = "";
  double traffic_s = 0, exposed_s = 0;
};
struct OperatorBreakdown {
  OperatorGroup dense, moe, head, embed;  // moe empty for a dense model
  double peak_flops = 0;        // of the plan's datatype, per device (FLOP/s)
  double memory_bandwidth = 0;  // per device (bytes/s)
  double layers = 0, moe_layers = 0;  // on the stage that paces the pipeline
  int64_t microbatches = 0;
  std::vector<CommLine> comm;   // per iteration, only kinds the plan has
  double optimizer_s = 0;       // per iteration
};

class TrainingEstimator {
 public:
  // Borrows the model and system; they must outlive the estimator.
  TrainingEstimator(const models::ModelSpec& model, const hardware::SystemSpec& system);
  // It keeps references to both: a temporary would dangle (a test once
  // passed one and read freed memory).
  TrainingEstimator(const models::ModelSpec&, hardware::SystemSpec&&) = delete;
  TrainingEstimator(models::ModelSpec&&, const hardware::SystemSpec&) = delete;

  TrainingEstimate Run(const parallelism::TrainingPlan& plan,
                       const parallelism::Workload& workload) const;

  // Prepare once, run many: the per-layer work of a plan's shape, and Run()
  // against it. The result is the same, bit for bit, as Run(plan, workload);
  // a `prepared` made for another shape (PreparedWorkload::Matches) is not
  // used, the work is then done again.
  PreparedWorkload Prepare(const parallelism::TrainingPlan& plan,
                           const parallelism::Workload& workload) const;
  TrainingEstimate Run(const parallelism::TrainingPlan& plan, const parallelism::Workload& workload,
                       const PreparedWorkload& prepared) const;

  // Run(plan, workload, prepared) for a caller that drops a plan that does
  // not fit in memory: such a plan comes back as soon as its memory is known
  // (before any time term), infeasible = kOutOfMemory with the same memory
  // breakdown as Run() gives, but no times or metrics. Any other plan gets
  // exactly Run()'s result. Used by the search's blocks; every face that
  // shows an out-of-memory plan's time calls Run().
  TrainingEstimate RunIfFits(const parallelism::TrainingPlan& plan, const parallelism::Workload& workload,
                             const PreparedWorkload& prepared) const;

  // The costs behind Run() for a plan that passes Run()'s checks (a feasible
  // plan, or one only short of memory). Not on the hot path.
  OperatorCosts Costs(const parallelism::TrainingPlan& plan,
                      const parallelism::Workload& workload) const;

  // Where one estimate's time goes per operator (OperatorBreakdown), from
  // the functions Run() prices with. Not on the hot path (it allocates):
  // `orrery estimate --ops`. `e`: Run(plan, workload)'s result.
  OperatorBreakdown Breakdown(const parallelism::TrainingPlan& plan, const parallelism::Workload& workload,
                              const TrainingEstimate& e) const;

  const hardware::Network& network() const { return network_; }

 private:
  void PrepareInto(const parallelism::TrainingPlan& plan, const parallelism::Workload& workload,
                   PreparedWorkload& out) const;
  TrainingEstimate Evaluate(const parallelism::TrainingPlan& plan, const parallelism::Workload& workload,
                            const PreparedWorkload* prepared, bool memory_first) const;
  // network_.Time(), through the memo when there is one.
  double CollectiveTime(CollectiveMemo* memo, hardware::Collective c, double bytes,
                        const hardware::GroupPlacement& g) const;
  // models::ModelFlopsPerIteration for this estimator's model, remembered per
  // thread for the last (global batch, sequence) asked (see the definition).
  // `attention_flops`: its attention scores' part (models::ModelFlopsPerIteration).
  double ModelFlops(int64_t global_batch, int64_t seq, models::OpList& scratch, double& attention_flops) const;

  const models::ModelSpec& model_;
  const hardware::SystemSpec& system_;
  hardware::AlphaBetaNetwork network_;
  int64_t devices_ = 0;
  double dense_layer_params_ = 0;
  double moe_layer_params_ = 0;
  // Tells this estimator's model apart from any other's in ModelFlops' memo
  // (an address can be reused by the next estimator; this number is not).
  uint64_t id_ = 0;
};

// One sentence on why an estimate is infeasible, with its numbers.
std::string ExplainInfeasible(const TrainingEstimate& e, const Scenario& s);

}  // namespace orrery::engine
