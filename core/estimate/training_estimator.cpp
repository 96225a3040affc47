#include "core/estimate/training_estimator.h"

#include "core/estimate/result_invariants.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/estimate/parallel_comm.h"
#include "core/estimate/step_kernels.h"
#include "hardware/device_model.h"
#include "models/transformer.h"
#include "parallelism/schedule.h"

namespace orrery::engine {

using hardware::Collective;
using models::Op;
using models::OpKind;
using parallelism::Recompute;
using parallelism::TrainingPlan;

namespace {

// Kernel times by argument, kept while one plan shape's operators are
// priced: a layer runs the same kernel more than once (its two norms, its two
// residual adds; GPT's MLP up and down GEMMs move the same FLOP and bytes),
// and hardware::MemoryTime and GemmTime are pure functions of their
// arguments, so a hit returns the very double the call would (each call
// interpolates an efficiency curve in log size, a logarithm per call).
// Fixed size, on the stack: no allocation; when full, later kernels are
// priced without it.
class KernelMemo {
 public:
  explicit KernelMemo(const hardware::DeviceSpec& d) : d_(d) {}
  double Memory(double bytes) {
    for (int i = 0; i < memory_n_; ++i)
      if (memory_[i].bytes == bytes) return memory_[i].time;
    const double t = hardware::MemoryTime(d_, bytes);
    if (memory_n_ < kSlots) memory_[memory_n_++] = {bytes, t};
    return t;
  }
  // A GEMM's curve lookups (hardware::GemmPartsOf), keyed on the GEMM, not
  // its depth: the forward, input-gradient and weight-gradient GEMMs of an
  // operator share flops and bytes, so the caller asks once per operator and
  // prices each depth from the parts (hardware::GemmTimeFromParts, the
  // arithmetic of GemmTimeAtDepth).
  hardware::GemmParts Gemm(hardware::DataType dt, double flops, double bytes, bool mxfp8) {
    for (int i = 0; i < gemm_n_; ++i)
      if (gemm_[i].flops == flops && gemm_[i].bytes == bytes && gemm_[i].dt == static_cast<int>(dt) &&
          gemm_[i].mxfp8 == mxfp8)
        return gemm_[i].parts;
    const hardware::GemmParts parts = hardware::GemmPartsOf(d_, dt, flops, bytes, mxfp8);
    if (gemm_n_ < kSlots) gemm_[gemm_n_++] = {static_cast<int>(dt), mxfp8, flops, bytes, parts};
    return parts;
  }

 private:
  static constexpr int kSlots = 16;
  struct Entry {
    double bytes, time;
  };
  struct GemmEntry {
    int dt;
    bool mxfp8;
    double flops, bytes;
    hardware::GemmParts parts;
  };
  const hardware::DeviceSpec& d_;
  Entry memory_[kSlots];
  GemmEntry gemm_[kSlots];
  int memory_n_ = 0, gemm_n_ = 0;
};

// A GEMM operator's forward, input-gradient and weight-gradient seconds, each
// at its reduction depth (models::DepthsOf): the curves read once per operator
// (hardware::GemmPartsOf, through `memo` when there is one) and each depth
// priced from those parts (GemmTimeFromParts, the arithmetic of
// hardware::GemmTimeAtDepth). An expert GEMM (Op::expert) is the grouped GEMM
// of the device's local experts (ExpertGemmTime, parallel_comm.h), its three
// times alike; a batched attention GEMM's three are its time at the curve
// (depth 0). `mxfp8`: FP8 GEMMs with MXFP8 block scales (the device's
// gemm_efficiency_mxfp8 where it has one).
// Seconds to copy one layer's activations of one microbatch to or from host
// memory (training.offload_activation_layers; ActivationOffloadExposed).
double ActivationCopySeconds(const models::ModelSpec& m, const TrainingPlan& p, int64_t seq_len,
                             const hardware::SystemSpec& system) {
  return parallelism::StageActivationTerms(m, p, seq_len).per_layer / HostLinkBandwidth(system);
}

struct GemmPassTimes {
  double fwd = 0, dgrad = 0, wgrad = 0;
};
GemmPassTimes OpGemmPassTimes(const hardware::DeviceSpec& d, hardware::DataType dt, const Op& op,
                              double local_experts, KernelMemo* memo, bool mxfp8) {
  GemmPassTimes t;
  if (op.expert) {
    t.fwd = ExpertGemmTime(d, dt, op.flops, op.bytes, local_experts, mxfp8);
    t.dgrad = t.wgrad = t.fwd;
    return t;
  }
  const hardware::GemmParts parts = memo != nullptr ? memo->Gemm(dt, op.flops, op.bytes, mxfp8)
                                                    : hardware::GemmPartsOf(d, dt, op.flops, op.bytes, mxfp8);
  const models::GemmDepths depth = models::DepthsOf(op);
  t.fwd = hardware::GemmTimeFromParts(d, parts, hardware::GemmDepthFactor(dt, depth.fwd));
  t.dgrad = t.wgrad = t.fwd;
  if (depth.wgrad > 0) {
    t.wgrad = hardware::GemmTimeFromParts(d, parts, hardware::GemmDepthFactor(dt, depth.wgrad));
    t.dgrad = hardware::GemmTimeFromParts(d, parts, hardware::GemmDepthFactor(dt, depth.dgrad));
  }
  return t;
}
// hardware::MemoryTime, through `memo` when there is one. Inlined at every
// call: Times() calls it for each memory-bound operator and bias gradient,
// and GCC, left to itself, calls it out of line there (about 280
// instructions an estimate from scratch).
[[gnu::always_inline]] inline double OpMemoryTime(const hardware::DeviceSpec& d, double bytes, KernelMemo* memo) {
  return memo != nullptr ? memo->Memory(bytes) : hardware::MemoryTime(d, bytes);
}

// The fused attention kernel a plan's attention field names (a
// materialised plan has no kFlashAttention operator, so its value is unused).
hardware::AttentionKernel KernelOf(parallelism::Attention a) {
  switch (a) {
    case parallelism::Attention::kFlash2: return hardware::AttentionKernel::kFlash2;
    case parallelism::Attention::kTriton: return hardware::AttentionKernel::kTriton;
    case parallelism::Attention::kFlash:
    case parallelism::Attention::kMaterialized: break;
  }
  return hardware::AttentionKernel::kFused;
}

// Forward and backward time of a list of operators. Backward of a GEMM is
// two GEMMs of the same size (input and weight gradients), each priced at
// its own reduction depth (models::DepthsOf); of FlashAttention
// 2.5x the forward FLOP (Dao 2023, FlashAttention-2, Sec. 3: 5 matmuls vs 2)
// at the backward efficiency; of a memory-bound kernel twice its traffic
// (read the gradient and the saved input, write the input gradient), or the
// backward traffic its operator states (Op::bwd_bytes: the materialised
// attention's softmax and dropout, models/transformer.cpp).
// `kernel`: the fused attention kernel the plan runs (KernelOf).
// `local_experts`: routed experts on the device (experts / ep), the problems
// of a MoE layer's grouped expert GEMMs (OpGemmPassTimes).
// `memo`: kernel times already known for this plan shape (KernelMemo), or null.
// `recipe`: how FP8 linear layers scale their operands (read only for fp8).
// Whether operator i of `ops` is one a full recompute stopping early does
// not run again (OpList::early_stop_tail): an FP8 linear layer is Transformer
// Engine's or torchao's own autograd function, which saves its quantized
// input inside, after the GEMM has run, so its GEMM runs again.
bool SkippedByEarlyStop(const models::OpList& ops, int i, hardware::DataType dt) {
  if (i < ops.count - ops.early_stop_tail) return false;
  const Op& op = ops.ops[static_cast<size_t>(i)];
  return op.kind != OpKind::kGemm || dt != hardware::DataType::kFp8 || op.router;
}
// The FLOPs of those operators: above 0 only when a dense MLP's down
// projection is among them, so also whether its closing TP reduction is
// skipped (TpLayerCollectives).
double EarlyStopFlops(const models::OpList& ops, hardware::DataType dt) {
  double flops = 0;
  for (int i = ops.count - ops.early_stop_tail; i < ops.count; ++i)
    if (SkippedByEarlyStop(ops, i, dt)) flops += ops.ops[static_cast<size_t>(i)].flops;
  return flops;
}

OpTimes Times(const hardware::DeviceSpec& d, hardware::DataType dt, parallelism::Fp8Recipe recipe,
              const models::OpList& ops, bool causal, hardware::AttentionKernel kernel, double local_experts,
              KernelMemo* memo = nullptr) {
  // FP8 training casts the inputs of the linear layers' GEMMs; the
  // dot-product attention (scores, softmax, scores x V) stays in BF16 unless
  // FP8 attention is asked for: Transformer Engine's recipes default to
  // fp8_dpa = False and fp8_mha = False (transformer_engine.common.recipe,
  // TE 2.x API reference), and Megatron-Core / NeMo leave them off. At long
  // sequences attention is most of the step, so pricing it at the FP8 peak
  // doubles the predicted throughput.
  const hardware::DataType attention_dt = dt == hardware::DataType::kFp8 ? hardware::DataType::kBf16 : dt;
  OpTimes t;
  bool routed = false;
  // Which TP block a linear GEMM belongs to (TpBlockGemms), by its place in
  // the layer's operator list (models::LayerOps builds every layer in this
  // order): the GEMMs before the attention core are the attention's input
  // projections, the first one after it the output projection; every later
  // GEMM is the MLP's, up and down projections in turn (mlp_up, mlp_down;
  // a MoE layer's expert_up, expert_down, shared_up, shared_down; the router
  // is none of them).
  bool past_attention = false, attention_out_seen = false;
  int mlp_gemms = 0;
  for (int i = 0; i < ops.count; ++i) {
    const Op& op = ops.ops[static_cast<size_t>(i)];
    double f = 0, b = 0;
    switch (op.kind) {
      case OpKind::kGemm:
      case OpKind::kBatchedGemm: {
        // Attention and the MoE router stay in BF16 under FP8
        // (TrainingGemmDataType, step_kernels.h); the router casts nothing.
        const hardware::DataType gemm_dt = TrainingGemmDataType(op, dt, recipe);
        const bool fp8_linear = dt == hardware::DataType::kFp8 && !op.router;
        const GemmPassTimes g =
            OpGemmPassTimes(d, gemm_dt, op, local_experts, memo, Mxfp8LinearGemm(op, dt, recipe));
        f = g.fwd;
        const double wgrad = g.wgrad;
        b = g.dgrad + wgrad;
        t.gemm += f + b;
        if (op.kind == OpKind::kGemm && !op.router && !op.attention_core) {
          TpBlockGemms& block = !past_attention || !attention_out_seen ? t.tp_attention : t.tp_mlp;
          const bool out = past_attention && (!attention_out_seen || mlp_gemms % 2 == 1);
          if (out) {
            block.out_fwd += g.fwd;
            block.out_dgrad += g.dgrad;
          } else {
            block.in_fwd += g.fwd;
            block.in_dgrad += g.dgrad;
            block.in_wgrad += g.wgrad;
          }
          if (past_attention && attention_out_seen) ++mlp_gemms;
          if (past_attention) attention_out_seen = true;
        }
        if (op.kind == OpKind::kGemm) t.weight_grad += wgrad;
        // A bias gradient reduced in a kernel of its own
        // (Op::bias_grad_bytes): the backward sums the layer's output
        // gradient over the tokens, reading it once and writing one row,
        // memory-bound; a parameter gradient, so it goes with the weight
        // gradients.
        if (op.bias_grad_bytes > 0) {
          const double bias = OpMemoryTime(d, static_cast<double>(op.bias_grad_bytes), memo);
          b += bias;
          t.weight_grad += bias;
        }
        // An FP8 linear layer casts its input forward and its output
        // gradient backward (Fp8LinearCastTimes, step_kernels.h): memory-bound
        // kernels beside the GEMM, not part of what TP overlap hides behind.
        // A grouped expert GEMM casts its rows split by local expert
        // (Fp8GroupedCastTimes).
        if (op.kind == OpKind::kGemm && fp8_linear) {
          const PassTimes cast = op.expert ? Fp8GroupedCastTimes(d, op, recipe, local_experts)
                                           : Fp8LinearCastTimes(d, op, recipe);
          f += cast.fwd;
          b += cast.bwd;
        }
        break;
      }
      case OpKind::kFlashAttention: {
        // A causal kernel skips the masked half of the score blocks.
        double work = causal ? 0.5 * op.flops : op.flops;
        // The Triton kernel computes on tiles of the head dimension padded to
        // the next power of two, at least 16 (flash_attn_triton.py,
        // _flash_attn_forward / _flash_attn_backward: BLOCK_HEADDIM =
        // max(triton.next_power_of_2(d), 16), loads masked beyond d): a head
        // of 112 (MPT-30B) does the matmuls of 128. op.k is the mean of the
        // query/key and value head sizes.
        // Its efficiency is then that of the padded head (head_dim below).
        double head_dim = op.k;
        if (kernel == hardware::AttentionKernel::kTriton && op.k > 0) {
          double padded = 16;
          while (padded < op.k) padded *= 2;
          work *= padded / op.k;
          head_dim = padded;
        }
        // The profile's attention length factors are read at the query length one
        // kernel call sees (op.m: the sequence over context parallelism,
        // which is also the key/value block one ring step attends to;
        // without CP the whole sequence), and the head-dimension factor at
        // head_dim (hardware::AttentionHeadDimFactor).
        f = hardware::FlashAttentionTime(d, attention_dt, work, op.bytes, false, kernel, op.m, head_dim);
        b = hardware::FlashAttentionTime(d, attention_dt, 2.5 * work, 2 * op.bytes, true, kernel, op.m, head_dim);
        break;
      }
      case OpKind::kElementwise: {
        const double bwd_bytes = models::BackwardBytes(op);
        // Eager code's non-vectorized kernels (Op::unvec_bytes) at the
        // device's element rate; the rest, fused operators, and every
        // operator on a device without a rate, by bytes (through the memo:
        // ElementwiseTime is MemoryTime there).
        const bool rated = d.unvectorized_element_rate > 0;
        f = rated && op.unvec_bytes > 0
                ? hardware::ElementwiseTime(d, op.bytes, op.unvec_bytes, op.unvec_elements)
                : OpMemoryTime(d, op.bytes, memo);
        b = rated && op.bwd_unvec_bytes > 0
                ? hardware::ElementwiseTime(d, bwd_bytes, op.bwd_unvec_bytes, op.bwd_unvec_elements)
                : OpMemoryTime(d, bwd_bytes, memo);
        break;
      }
    }
    t.fwd += f;
    t.bwd += b;
    past_attention = past_attention || op.attention_core;
    if (op.attention_core) t.attention_fwd += f;
    if (op.mla_up) t.mla_up_fwd += f;
    if (op.dense_mlp) t.mlp_fwd += f;
    if (op.module_norm) t.norm_fwd += f;
    if (op.expert_act) t.moe_act_fwd += f;
    t.op_sac_fwd += op.op_sac_recompute * f;
    if (SkippedByEarlyStop(ops, i, dt)) t.early_stop_fwd += f;
    if (routed) t.after_router_fwd += f;
    routed = routed || op.router;
  }
  return t;
}

// The LM head's operators and their GEMM datatype as Megatron-Core trains
// them. The output layer is Megatron-Core's own ColumnParallelLinear, not a
// Transformer Engine module, so fp8_autocast leaves it in BF16 (as DeepSeek-V3
// keeps its output head in BF16 under FP8 training, arXiv 2412.19437 Sec.
// 3.3.1). The loss is not models::HeadOps' one-pass cross entropy but the
// plan's loss kernels (TrainingPlan::loss_kernel, LossTimes in
// step_kernels.h: by default Megatron-Core's fp32 vocabulary-parallel one),
// added by AddLoss: HeadOps' last operator is dropped here.
hardware::DataType HeadDataType(hardware::DataType dt) {
  return dt == hardware::DataType::kFp8 ? hardware::DataType::kBf16 : dt;
}
void TrainingHeadOps(const models::ModelSpec& m, const models::LayerShape& shape, models::OpList& ops) {
  models::HeadOps(m, shape, ops);
  static_assert(models::kHeadLossIsLast, "HeadOps ends with its loss");
  if (ops.count > 0) --ops.count;  // no string compared on the hot path
}
void AddLoss(const hardware::DeviceSpec& d, const models::ModelSpec& m, const models::LayerShape& shape,
             parallelism::LossKernel kernel, OpTimes& head) {
  const double tokens = static_cast<double>(shape.micro_batch) * static_cast<double>(shape.seq);
  const PassTimes ce =
      LossTimes(d, tokens, static_cast<double>(m.vocab) / static_cast<double>(shape.tp), kernel);
  head.fwd += ce.fwd;
  head.bwd += ce.bwd;
}

double Sum(const models::OpList& ops, double Op::*field) {
  double s = 0;
  for (int i = 0; i < ops.count; ++i) s += ops.ops[static_cast<size_t>(i)].*field;
  return s;
}

// Strides of the parallel groups from the configured order (innermost
// first). Unfolded (etp = tp), EP groups are carved out of cp x dp:
// consecutive members of whichever of the two is laid innermost. Folded
// (etp != tp), the MoE layers lay a stage's devices out as etp x ep x edp,
// etp innermost (Megatron-Core's expert rank generator: the attention's
// order with etp for tp and cp folded away; arXiv 2504.14960): EP members
// are etp devices apart, times pp when pp is laid inside tp.
struct Strides {
  int64_t tp = 1, cp = 1, dp = 1, pp = 1, ep = 1, etp = 1;
};

Strides GroupStrides(const TrainingPlan& p, int64_t dp) {
  Strides s;
  // Parse "tp,cp,ep,dp,pp" without allocating. The five names differ in
  // their first letter, and an order is checked to hold each once
  // (parallelism::IsGroupOrder) before it reaches here, so the first letter
  // of each three-character field names the group.
  const std::string& o = p.group_order;
  int64_t stride = 1;
  bool ep_placed = false;
  for (size_t i = 0; i + 1 < o.size(); i += 3) {
    switch (o[i]) {
      case 't': s.tp = stride; stride *= p.tp; break;
      case 'c': s.cp = stride; if (!ep_placed) { s.ep = stride; ep_placed = true; } stride *= p.cp; break;
      case 'd': s.dp = stride; if (!ep_placed) { s.ep = stride; ep_placed = true; } stride *= dp; break;
      case 'p': s.pp = stride; stride *= p.pp; break;
      default: break;
    }
  }
  const int64_t etp = parallelism::ExpertTensorParallel(p);
  if (etp != p.tp) {
    s.etp = s.pp < s.tp ? p.pp : 1;
    s.ep = etp * s.etp;
  } else {
    s.etp = s.tp;
  }
  return s;
}

// The dense parameters' data-parallel group: the dp replicas times the cp
// ranks, which hold the same weights and sum the gradients of their own
// tokens. Megatron-Core's DistributedDataParallel allocates the dense
// parameters' gradient buffers over the data-parallel group "with context
// parallel" (megatron/core/distributed/distributed_data_parallel.py:
// intra_dp_cp_group), so the gradient reduce-scatter, the distributed
// optimizer's shards and the parameter all-gather all span dp x cp.
int64_t DenseDataParallel(const TrainingPlan& p, int64_t dp) { return dp * p.cp; }

// The dp x cp devices of a pipeline stage as two nested runs, in the order
// the plan lays them (GroupStrides): the inner one (cp or dp, whichever
// comes first; dp alone when cp is 1) at its size and stride, repeated at
// the outer one's. They are one run when nothing is laid between them (the
// outer stride is the inner run's span, as in the default tp,cp,ep,dp,pp).
struct Run {
  int64_t size = 1, stride = 1;
};
struct DpCpRuns {
  Run inner, outer;
};
DpCpRuns DataParallelRuns(const TrainingPlan& p, int64_t dp, const Strides& st) {
  const Run c{p.cp, st.cp}, d{dp, st.dp};
  if (p.cp <= 1) return {d, Run{1, st.dp * dp}};
  return st.cp < st.dp ? DpCpRuns{c, d} : DpCpRuns{d, c};
}

// A group of two nested runs (the outer stride at least the inner run's
// span): a domain of a tier holds the inner run's members that fit in it
// times the outer run's that do. With cp laid first on a DGX, tp 4 x cp 2 a
// node, cp,ep,tp,dp,pp puts 2 of the dp x cp group in each node of 8, not
// the 8 a single run at the inner stride 1 would put there, which priced a
// ZeRO-3 gather over 1024 nodes as one over 256 (Llama 3 405B on 8,192
// H100: 1.1 s exposed against 8.5 s). The ring stride is the inner one.
// `place` places one run (Network::Place, or PlaceTiled for the EP group).
template <typename PlaceRun>
hardware::GroupPlacement PlaceNestedRuns(Run inner, Run outer, PlaceRun place) {
  if (outer.size <= 1 || outer.stride == inner.stride * inner.size) return place(inner.size * outer.size, inner.stride);
  const hardware::GroupPlacement a = place(inner.size, inner.stride);
  const hardware::GroupPlacement b = place(outer.size, outer.stride);
  hardware::GroupPlacement g = place(inner.size * outer.size, inner.stride);
  for (int i = 0; i < g.tiers; ++i) {
    const auto t = static_cast<size_t>(i);
    g.per_domain[t] = std::min(g.size, a.per_domain[t] * b.per_domain[t]);
  }
  return g;
}

hardware::GroupPlacement PlaceDenseDataParallel(const hardware::Network& net, const TrainingPlan& p, int64_t dp,
                                                const Strides& st) {
  const DpCpRuns r = DataParallelRuns(p, dp, st);
  return PlaceNestedRuns(r.inner, r.outer, [&](int64_t n, int64_t stride) { return net.Place(n, stride); });
}

// The EP group and the experts' data-parallel group when the experts are
// not split over other devices than the tp group (etp = tp): EP takes the
// first ep members of the dp x cp runs (riding with whichever of cp and dp
// is laid first) and the edp replicas the rest. With ep within the inner
// run: EP is one run, the edp replicas the inner run's remaining members
// (ep x its stride apart) nested in the outer run. With ep beyond it: EP is
// the inner run nested in the outer run's first ep / inner members, the edp
// replicas one run of the outer stride x ep / inner.
struct ExpertRuns {
  Run ep_inner, ep_outer, edp_inner, edp_outer;
};
ExpertRuns ExpertParallelRuns(const TrainingPlan& p, int64_t dp, const Strides& st) {
  const DpCpRuns r = DataParallelRuns(p, dp, st);
  ExpertRuns e;
  if (p.ep <= r.inner.size) {
    e.ep_inner = {p.ep, r.inner.stride};
    e.edp_inner = {r.inner.size / std::max<int64_t>(1, p.ep), r.inner.stride * p.ep};
    e.edp_outer = r.outer;
  } else {
    const int64_t across = p.ep / std::max<int64_t>(1, r.inner.size);
    e.ep_inner = r.inner;
    e.ep_outer = {across, r.outer.stride};
    e.edp_inner = {r.outer.size / std::max<int64_t>(1, across), r.outer.stride * across};
  }
  return e;
}

// DeepSeek-V3's multi-token-prediction modules (Sec. 2.2) run after the LM
// head on the last stage: per module one block (MoE when the model has
// experts) and another pass of the shared head; the 2h -> h projection is
// small against the block and rides with it. Folded into the head's costs
// so that the closed form and the event engine see them alike.
// One layer's shape on one device for a plan: its microbatch, its share of
// the sequence (cp) and of the heads (tp), the activation width, and the
// busiest expert rank's load.
models::LayerShape ShapeOf(const TrainingPlan& p, const parallelism::Workload& w, double act) {
  models::LayerShape shape;
  shape.micro_batch = p.micro_batch;
  shape.seq = w.seq_len / std::max<int64_t>(1, p.cp);
  shape.full_seq = w.seq_len;
  shape.tp = p.tp;
  shape.sequence_parallel = p.sequence_parallel;
  shape.flash = p.attention != parallelism::Attention::kMaterialized;
  shape.act_bytes = act;
  shape.expert_load = parallelism::ExpertLoadFactor(p);
  shape.etp = p.etp;
  shape.eager = p.elementwise == parallelism::Elementwise::kEager;
  shape.separate_bias_grad = p.separate_bias_grad;
  shape.qkv_split_cat = p.qkv_split_cat;
  shape.norm_weight_grad_kernel = p.norm_weight_grad_kernel;
  shape.rope_kernel = p.rope_kernel;
  shape.packed_qkv_copies = p.packed_qkv_copies;
  return shape;
}

// The MoE token dispatcher's permute, regroup and unpermute kernels
// (ExpertPermuteBytes, parallel_comm.h), forward and their transposes
// backward, on a MoE layer's times.
void AddExpertPermute(const hardware::DeviceSpec& dev, const models::ModelSpec& m, const TrainingPlan& p,
                      const models::LayerShape& shape, double& fwd, double& bwd) {
  const double tokens = static_cast<double>(shape.micro_batch) * static_cast<double>(shape.seq);
  const double t = ExpertPermuteTime(dev, ExpertPermuteBytes(m, p, tokens, shape.act_bytes, shape.expert_load));
  fwd += t;
  bwd += t;
}

// Dropless routing's host-launch bound on a MoE layer's forward and
// backward (MoeLayerKernels, MoeForwardHostTime, HostBoundTime,
// parallel_comm.h): with a capacity factor the token counts are known
// without a device-to-host copy and the host keeps ahead; so it does when
// the plan sets no host cost. The forward's host blocks on that copy once a
// layer (SyncedForwardTime): `device_before_sync` is the device's forward
// seconds of the layer's operators up to its router (OpTimes::fwd less
// after_router_fwd, before the permute is added).
void AddMoeHostBound(const TrainingPlan& p, const models::OpList& moe_ops, double local_experts,
                     double device_before_sync, double& fwd, double& bwd) {
  if (p.expert_capacity_factor > 0) return;
  if (p.host_kernel_launch <= 0 && p.host_te_module <= 0 && p.host_te_split <= 0) return;
  const LayerKernels k =
      MoeLayerKernels(moe_ops, local_experts, p.precision == hardware::DataType::kFp8, p.fp8_recipe, p.ep > 1);
  fwd = SyncedForwardTime(fwd, MoeForwardHostTime(k, p.host_kernel_launch, p.host_te_module, p.host_te_split),
                          MoeForwardHostTimeAfterSync(k, p.host_kernel_launch, p.host_te_module, p.host_te_split),
                          device_before_sync);
  bwd = HostBoundTime(bwd, k.bwd, p.host_kernel_launch);
}

void AddMtpModules(const models::ModelSpec& m, const OpTimes& dense, const OpTimes& moe, OpTimes& head) {
  if (m.mtp_depth <= 0) return;
  const OpTimes& block = m.experts > 1 ? moe : dense;
  const double k = static_cast<double>(m.mtp_depth);
  const OpTimes one = head;
  head.fwd += k * (block.fwd + one.fwd);
  head.bwd += k * (block.bwd + one.bwd);
  head.attention_fwd += k * block.attention_fwd;
  head.mla_up_fwd += k * block.mla_up_fwd;
  head.mlp_fwd += k * block.mlp_fwd;
  head.norm_fwd += k * block.norm_fwd;
  head.moe_act_fwd += k * block.moe_act_fwd;
  head.op_sac_fwd += k * block.op_sac_fwd;
  head.early_stop_fwd += k * block.early_stop_fwd;
  head.gemm += k * (block.gemm + one.gemm);
  head.weight_grad += k * (block.weight_grad + one.weight_grad);
}

// Routed experts on one device: experts / ep.
double LocalExperts(const models::ModelSpec& m, const TrainingPlan& p) {
  return static_cast<double>(m.experts) / static_cast<double>(std::max<int64_t>(1, p.ep));
}

// What every pricing of one plan starts from (PrepareInto, Costs,
// Breakdown): the GEMM datatype, the fused attention kernel, the activation
// width (FP8 training keeps BF16 activations), one layer's shape on a device
// and the routed experts it holds.
struct LayerPricing {
  hardware::DataType dt;
  hardware::AttentionKernel attn_kernel;
  double act;
  models::LayerShape shape;
  double local;
};
LayerPricing PricingOf(const models::ModelSpec& m, const TrainingPlan& p, const parallelism::Workload& w) {
  const hardware::DataType dt = p.precision;
  const double act = hardware::BytesPer(dt == hardware::DataType::kFp8 ? hardware::DataType::kBf16 : dt);
  return {dt, KernelOf(p.attention), act, ShapeOf(p, w, act), LocalExperts(m, p)};
}

// Routed experts are split differently from the rest of the layer (ep > 1,
// or etp != tp): their weights then have their own data-parallel group.
bool ExpertsApart(const TrainingPlan& p) { return p.ep > 1 || parallelism::ExpertTensorParallel(p) != p.tp; }

// MTP parameters on the last stage, split like a layer's (tp; experts over
// ep x etp).
double MtpExpertParamsOnDevice(const models::ModelSpec& m, const TrainingPlan& p) {
  if (m.mtp_depth <= 0 || m.experts <= 1 || !ExpertsApart(p)) return 0;
  return static_cast<double>(m.mtp_depth) * models::RoutedExpertParameters(m) /
         static_cast<double>(p.ep) / static_cast<double>(parallelism::ExpertTensorParallel(p));
}
double MtpParamsOnDevice(const models::ModelSpec& m, const TrainingPlan& p) {
  if (m.mtp_depth <= 0) return 0;
  const double expert_part = models::RoutedExpertParameters(m);
  const double all = models::MtpParameters(m);
  const double k = static_cast<double>(m.mtp_depth);
  return (all - k * expert_part) / static_cast<double>(p.tp) +
         k * expert_part / static_cast<double>(p.ep) / static_cast<double>(parallelism::ExpertTensorParallel(p));
}

// Replicas of each routed expert: the expert-data-parallel group
// (tp cp dp / (ep etp); Megatron-Core expert_data_parallel_size).
int64_t ExpertDataParallel(const TrainingPlan& p, int64_t dp) {
  return ExpertsApart(p) ? std::max<int64_t>(1, parallelism::ExpertDataParallelSize(p, dp)) : dp;
}

// Both data-parallel groups of a plan and where they sit (DataParallelGroups,
// parallel_comm.h), for Run() and Costs() alike: the dense parameters over
// dp x cp (PlaceDenseDataParallel), the routed experts over their edp
// replicas, etp x ep devices apart (the expert rank generator's etp x ep x
// edp layout, Strides: st.ep x ep). Unsplit experts (ep 1, etp = tp) have
// no parameters of their own group (StageParams::expert_*: 0).
DataParallelGroups DataParallelGroupsOf(const hardware::Network& net, const TrainingPlan& p, int64_t dp,
                                        const Strides& st) {
  DataParallelGroups g;
  g.dense = DenseDataParallel(p, dp);
  g.expert = ExpertDataParallel(p, dp);
  const bool flat = p.dp_collective == parallelism::DpCollective::kFlat;
  if (g.dense > 1) {
    g.dense_group = PlaceDenseDataParallel(net, p, dp, st);
    g.dense_group.flat = flat;
  }
  if (g.expert > 1) {
    if (p.ep > 1 && parallelism::ExpertTensorParallel(p) == p.tp) {
      const ExpertRuns e = ExpertParallelRuns(p, dp, st);
      g.expert_group = PlaceNestedRuns(e.edp_inner, e.edp_outer,
                                       [&](int64_t n, int64_t stride) { return net.Place(n, stride); });
    } else {
      g.expert_group = net.Place(g.expert, st.ep * p.ep);
    }
    g.expert_group.flat = flat;
  }
  return g;
}

// Seconds of one MoE layer's expert communication per microbatch, forward
// and backward: the dispatch and combine all-to-alls over the EP group
// (parallel_comm.h), and, when the experts are split over etp devices
// other than the tp group (etp > 1, etp != tp), the all-gather of the
// routed tokens over the etp ranks before the expert GEMMs and the
// reduce-scatter of their outputs after them, and both again for the
// gradients (Megatron-Core's all-to-all dispatcher with expert tensor
// parallelism: all-to-all over EP, then all-gather over ETP; arXiv
// 2504.14960). With etp = tp the layer's TP collectives already move the
// tokens (the estimator's tp term).
double ExpertLayerComm(const hardware::Network& net, const hardware::SystemSpec& sys, const models::ModelSpec& m,
                       const TrainingPlan& p, const Strides& st, double tokens, double act, double load,
                       hardware::GroupPlacement* ep_group, int64_t dp) {
  hardware::GroupPlacement g;
  if (parallelism::ExpertTensorParallel(p) == p.tp) {
    const ExpertRuns e = ExpertParallelRuns(p, dp, st);
    g = PlaceNestedRuns(e.ep_inner, e.ep_outer,
                        [&](int64_t n, int64_t stride) { return PlaceTiled(net, sys, n, stride); });
  } else {
    g = PlaceTiled(net, sys, p.ep, st.ep);
  }
  if (ep_group != nullptr) *ep_group = g;
  const double bytes = ExpertAllToAllBytes(m, DispatchedTokens(p, tokens), act, load);
  double t = kExpertAllToAllsPerLayer * ExpertAllToAllTime(net, g, m, bytes);
  const int64_t etp = parallelism::ExpertTensorParallel(p);
  if (etp > 1 && etp != p.tp) {
    const auto ge = net.Place(etp, st.etp);
    const double gathered = static_cast<double>(etp) * bytes;
    t += 2 * (net.Time(Collective::kAllGather, gathered, ge) + net.Time(Collective::kReduceScatter, gathered, ge));
  }
  return t;
}

// One layer's tensor-parallel collectives for one microbatch on one device,
// seconds, none of them overlapped; `time(c)` is collective c's time on one
// layer's activations (b s h elements) over the tp group, `g` what each of
// its all-gathers costs (TpGathers below: quantized ones under per-tensor
// FP8). Megatron: two
// all-reduces forward (after the attention and the MLP) and two backward;
// with SP each becomes an all-gather and a reduce-scatter of the same tensor
// (Korthikanti et al. 2022, Sec. 4.2.2, Fig. 5). With SP each
// column-parallel GEMM keeps only its sequence shard Y_i^s of its input and
// gathers it again in the backward pass for its weight gradient: "we store
// only the Y_i^s part on the ith tensor parallel rank and perform an extra
// all-gather in the backward pass" (Sec. 4.2.2, last paragraph; the
// s b h (34/t) of Table 2 counts the shard). Megatron-LM does so in
// ColumnParallelLinearWithSequenceParallelism.backward (megatron/mpu/
// layers.py, commit 02bb1f5c, 2022), Transformer Engine in LayerNormLinear
// and LayerNormMLP's backward (gather_along_first_dim of ln_out). A dense
// layer has two such GEMMs (QKV, MLP up), a MoE layer one (QKV; its experts
// keep the tokens the dispatcher gathered), weighted by `moe_fraction`.
// (training.sequence_parallel is Megatron's; PyTorch DTensor's sequence
// parallelism keeps the gathered input instead, TrainingPlan::
// sp_input_regather false: no second gather.) A recomputed forward (full recompute) runs its collectives
// again; torchtitan's op-level SAC keeps the reduce-scatters' outputs (its
// _save_list) and reruns the rest: with SP the two all-gathers, without it
// the two all-reduces (models::LayerOps' policy).
struct TpLayerComm {
  double fwd = 0, bwd = 0, rec = 0;
};
// What each of a layer's sequence-parallel all-gathers costs, seconds
// (TpGathersOf): in the layers' datatype (`plain`), or, where the plan
// gathers quantized activations (TrainingPlan::fp8_tp_gather), a Transformer
// Engine column-parallel module's forward input (`input`; a recomputed
// forward's too), its backward re-gather of the saved input (`regather`; 0
// where the plan keeps the gathered input, TrainingPlan::
// sp_input_regather), a row-parallel module's output gradient (`grad`), and
// the amax all-reduce current scaling makes over the tp group before
// quantizing a gathered input or gradient (`amax_input`, `amax_grad`). A MoE
// layer's MLP block gathers through its token dispatcher, in the layers'
// datatype. All 0 without sequence parallelism.
struct TpGathers {
  double plain = 0, input = 0, regather = 0, grad = 0;
  double amax_input = 0, amax_grad = 0;
};
// Whether a plan's sequence-parallel all-gathers move quantized
// activations: a per-tensor FP8 recipe, whose one scale needs no block
// scales beside the data (transformer_engine/pytorch/distributed.py,
// _all_gather_fp8: only the uint8 data is gathered, the scale is shared),
// and fp8_tp_gather other than none. The block-scaled recipes gather
// their data and scales in layouts not priced here: bf16.
inline bool QuantizedTpGathers(const TrainingPlan& p) {
  return p.precision == hardware::DataType::kFp8 &&
         (p.fp8_recipe == parallelism::Fp8Recipe::kDelayed || p.fp8_recipe == parallelism::Fp8Recipe::kCurrent) &&
         p.fp8_tp_gather != parallelism::Fp8TpGather::kNone;
}
// TpGathers of a plan whose layer activations are `elements` (b s h) of
// `act` bytes; `time(c, bytes)` is collective c's time on `bytes` over the
// tp group. A quantized gather moves one byte an element, current
// scaling's amax all-reduce one fp32.
template <typename CollectiveSeconds>
TpGathers TpGathersOf(const TrainingPlan& p, double elements, double act, CollectiveSeconds time) {
  TpGathers g;
  if (p.tp <= 1 || !p.sequence_parallel) return g;
  g.plain = g.input = g.regather = g.grad = time(Collective::kAllGather, elements * act);
  if (QuantizedTpGathers(p)) {
    const double q = time(Collective::kAllGather, elements);
    const double a = p.fp8_recipe == parallelism::Fp8Recipe::kCurrent ? time(Collective::kAllReduce, 4.0) : 0.0;
    g.input = q;
    g.amax_input = a;
    if (p.fp8_tp_gather == parallelism::Fp8TpGather::kAll) {
      g.regather = q;
      g.grad = q;
      g.amax_grad = a;
    }
  }
  if (!p.sp_input_regather) g.regather = 0;
  return g;
}
template <typename CollectiveSeconds>
TpLayerComm TpLayerCollectives(const TrainingPlan& p, double moe_fraction, bool down_proj_skipped,
                               const TpGathers& g, CollectiveSeconds time) {
  TpLayerComm c;
  if (p.tp <= 1) return c;
  const double f = moe_fraction;
  const bool early = p.recompute == Recompute::kFull && p.checkpoint_early_stop && down_proj_skipped;
  if (p.sequence_parallel) {
    const double rs = time(Collective::kReduceScatter);
    const double in_attention = g.input + g.amax_input;
    const double in_mlp = (1 - f) * in_attention + f * g.plain;
    const double grad_attention = g.grad + g.amax_grad;
    const double grad_mlp = (1 - f) * grad_attention + f * g.plain;
    c.fwd = in_attention + in_mlp + 2 * rs;
    c.bwd = grad_attention + grad_mlp + 2 * rs + (2 - f) * g.regather;
    if (p.recompute == Recompute::kFull) c.rec = c.fwd;
    // Stopping early, the MLP's closing reduce-scatter after the skipped
    // down projection does not run again: a dense layer whose down
    // projection is skipped (`down_proj_skipped`, EarlyStopFlops of its
    // operators: not under FP8, not with dropout after it); a MoE layer's
    // experts end it.
    if (early) c.rec -= (1 - f) * rs;
    if (p.recompute == Recompute::kOp) c.rec = in_attention + in_mlp;
    return c;
  }
  const double ar = time(Collective::kAllReduce);
  c.fwd = 2 * ar;
  c.bwd = 2 * ar;
  if (p.recompute == Recompute::kFull) c.rec = early ? 2 * ar - (1 - f) * ar : 2 * ar;
  if (p.recompute == Recompute::kOp) c.rec = 2 * ar;
  return c;
}

// The chunks Transformer Engine splits a forward output projection and its
// reduce-scatter into under --tp-comm-overlap: the "pipeline" method's
// num_splits, 4 (transformer_engine/pytorch/module/base.py, initialize_ub,
// get_default_config; Megatron-Bridge's BF16 userbuffers configs for Llama 3
// 70B and 405B, training/comm_overlap.py: PipelineOverlapCfg(num_splits=4)
// for proj_fprop and fc2_fprop), or, under FP8, the "ring_exchange" method's
// one chunk a rank (the FP8 configs' RingExchangeOverlapCfg for both;
// num_splits = tp_size).
inline double TpOverlapReduceScatterSplits(const TrainingPlan& p) {
  return p.precision == hardware::DataType::kFp8 ? static_cast<double>(p.tp) : 4.0;
}

// The same collectives of one layer (a MoE layer's with `moe_layer`) run
// under Transformer Engine's userbuffer overlap (Megatron-Core
// --tp-comm-overlap), each exposed by what outlasts the one GEMM it is
// overlapped with, and by the contention of running beside it
// (OverlapExposed, parallel_comm.h), seconds. TE pairs every collective of a
// tensor-parallel block with a GEMM of that block
// (transformer_engine/pytorch/module/base.py, initialize_ub: the
// "ring_exchange", "pipeline" and "bulk" methods and the qkv/proj and
// fc1/fc2 pairs; Megatron-Bridge's and NeMo's userbuffers configs,
// training/comm_overlap.py, keep those pairs and tune only SMs and splits):
//   forward   the all-gather of the block's input beside its input
//             projection (qkv_fprop, fc1_fprop: ring exchange), the
//             reduce-scatter of its output beside the output projection
//             (proj_fprop, fc2_fprop: pipelined or ring exchange);
//   backward  the all-gather of the output gradient beside the output
//             projection's input-gradient GEMM (proj_dgrad, fc2_dgrad: ring
//             exchange); the all-gather of the input again for the weight
//             gradient beside the input projection's input-gradient GEMM
//             (qkv_dgrad, fc1_dgrad: bulk), and the reduce-scatter of that
//             input gradient beside the input projection's weight-gradient
//             GEMM (qkv_wgrad, fc1_wgrad: bulk).
// A collective cannot hide behind another block's GEMMs: it feeds or is fed
// by its own. Without sequence parallelism (userbuffers need it: Megatron-LM
// arguments.py, "Tensor parallel communication/GEMM overlap can happen only
// when sequence parallelism is enabled") the forward all-reduces have no GEMM
// to hide behind; the backward ones run beside the weight gradient
// (Megatron's asynchronous input-gradient all-reduce). A MoE layer's MLP
// block pairs with its expert and shared-expert GEMMs, and has no second
// gather (TpLayerCollectives); a recomputed forward pairs as the forward;
// early stopping skips the MLP's closing reduce-scatter as there.
// The forward reduce-scatter beside the output projection is split with its
// GEMM (kTpOverlapReduceScatterSplits): chunk i's reduce-scatter runs beside
// chunk i + 1's GEMM, so the last chunk's runs after the GEMM, exposed.
template <typename CollectiveSeconds>
TpLayerComm TpExposedCollectives(const TrainingPlan& p, bool moe_layer, bool down_proj_skipped, const OpTimes& t,
                                 double slowdown, const TpGathers& g, CollectiveSeconds time) {
  TpLayerComm c;
  if (p.tp <= 1) return c;
  auto exposed = [&](double comm, double gemm) { return OverlapExposed(comm, gemm, slowdown); };
  if (p.sequence_parallel) {
    const double rs = time(Collective::kReduceScatter);
    const double splits = TpOverlapReduceScatterSplits(p);
    const double rest = (splits - 1) / splits;
    const TpBlockGemms* blocks[2] = {&t.tp_attention, &t.tp_mlp};
    for (int i = 0; i < 2; ++i) {
      const TpBlockGemms& b = *blocks[i];
      // A Transformer Engine module's gathers (TpGathers); a MoE layer's
      // MLP block's are its dispatcher's. The amax all-reduce runs before
      // the quantized gather it scales, beside no GEMM.
      const bool te = i == 0 || !moe_layer;
      const double gather_in = (te ? g.amax_input : 0.0) + exposed(te ? g.input : g.plain, b.in_fwd);
      const double scatter_out = rs / splits + exposed(rest * rs, rest * b.out_fwd);
      c.fwd += gather_in + scatter_out;
      c.bwd += (te ? g.amax_grad : 0.0) + exposed(te ? g.grad : g.plain, b.out_dgrad) + exposed(rs, b.in_wgrad);
      if (te) c.bwd += exposed(g.regather, b.in_dgrad);
      const bool skipped = i == 1 && !moe_layer && p.checkpoint_early_stop && down_proj_skipped;
      if (p.recompute == Recompute::kFull) c.rec += gather_in + (skipped ? 0.0 : scatter_out);
      if (p.recompute == Recompute::kOp) c.rec += gather_in;
    }
    return c;
  }
  const double ar = time(Collective::kAllReduce);
  c.fwd = 2 * ar;
  c.bwd = exposed(ar, t.tp_attention.in_wgrad) + exposed(ar, t.tp_mlp.in_wgrad);
  if (p.recompute == Recompute::kFull)
    c.rec = (!moe_layer && p.checkpoint_early_stop && down_proj_skipped) ? ar : 2 * ar;
  if (p.recompute == Recompute::kOp) c.rec = 2 * ar;
  return c;
}

// TpExposedCollectives of a model's average layer: its dense and MoE layers
// (`dense`, `moe`) weighted by the MoE layers' share `moe_fraction`.
template <typename CollectiveSeconds>
TpLayerComm TpExposedLayer(const TrainingPlan& p, double moe_fraction, bool down_proj_skipped, const OpTimes& dense,
                           const OpTimes& moe, double slowdown, const TpGathers& g, CollectiveSeconds time) {
  const TpLayerComm d = TpExposedCollectives(p, false, down_proj_skipped, dense, slowdown, g, time);
  if (moe_fraction <= 0) return d;
  const TpLayerComm e = TpExposedCollectives(p, true, down_proj_skipped, moe, slowdown, g, time);
  const double f = moe_fraction;
  return {(1 - f) * d.fwd + f * e.fwd, (1 - f) * d.bwd + f * e.bwd, (1 - f) * d.rec + f * e.rec};
}

// The tensor-parallel collectives outside the layers, for one microbatch on
// one device, seconds, none overlapped; `time(c, bytes)` is collective c's
// time on `bytes` over the tp group, `act_bytes` the b s h activations.
// - The embedding: VocabParallelEmbedding looks up its own vocabulary shard
//   and all-reduces the b s h output (reduce_from_tensor_model_parallel_
//   region; NVIDIA/Megatron-LM megatron/mpu/layers.py at commit 02bb1f5c,
//   2022). With SP Megatron-Core reduce-scatters it into the sequence shards
//   instead (VocabParallelEmbedding's reduce_scatter_embeddings), whose
//   backward all-gathers the gradient (the Megatron-LM of 2022 all-reduced,
//   then split: megatron/model/language_model.py Embedding.forward,
//   scatter_to_sequence_parallel_region, at commit 01e9ce60).
// - The LM head: a column-parallel GEMM on the embedding's (or its own)
//   vocabulary shard (parallel_lm_logits, language_model.py at 01e9ce60:
//   linear_with_grad_accumulation_and_async_allreduce): without SP the input
//   is copied (copy_to_tensor_model_parallel_region), its gradient
//   all-reduced in the backward; with SP the input is all-gathered in the
//   forward and, as every column-parallel GEMM's (TpLayerCollectives),
//   gathered again in the backward for the weight gradient, the input
//   gradient reduce-scattered.
// - The vocabulary-parallel cross entropy (megatron/mpu/cross_entropy.py,
//   _VocabParallelCrossEntropy.forward) all-reduces three fp32 values per
//   token in its forward: the logits' max, the target's logit, the sum of
//   the exponentials.
struct TpHeadComm {
  double embed_fwd = 0, embed_bwd = 0, head_fwd = 0, head_bwd = 0;
};
template <typename CollectiveSeconds>
TpHeadComm TpHeadCollectives(const TrainingPlan& p, double tokens, double act_bytes, CollectiveSeconds time) {
  TpHeadComm c;
  if (p.tp <= 1) return c;
  const double loss = 3 * time(Collective::kAllReduce, tokens * 4.0);
  if (p.sequence_parallel) {
    const double gather = time(Collective::kAllGather, act_bytes);
    const double scatter = time(Collective::kReduceScatter, act_bytes);
    c.embed_fwd = scatter;
    c.embed_bwd = gather;
    c.head_fwd = gather + loss;
    c.head_bwd = gather + scatter;
  } else {
    const double all_reduce = time(Collective::kAllReduce, act_bytes);
    c.embed_fwd = all_reduce;
    c.head_fwd = loss;
    c.head_bwd = all_reduce;
  }
  return c;
}

}  // namespace

TrainingEstimator::TrainingEstimator(const models::ModelSpec& model,
                                     const hardware::SystemSpec& system)
    : model_(model), system_(system), network_(system), devices_(hardware::DeviceCount(system)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id.fetch_add(1, std::memory_order_relaxed);
  dense_layer_params_ = models::LayerParameters(model, false);
  moe_layer_params_ = models::LayerParameters(model, true);
}

// The MFU numerator depends on the model and the workload, not on any plan
// field, yet listing and summing the model's operators for it was 7 % of an
// estimate from scratch (922 of 12,877 instructions, callgrind, 2026-12-05):
// a search or a sweep point asks it again for every plan of one workload.
// The last answer is kept per thread (estimators are shared by a search's
// threads), keyed on the estimator (its model is fixed at construction, as
// the layer parameters above are) and the two workload numbers: a hit
// returns the very double the computation gives.
double TrainingEstimator::ModelFlops(int64_t global_batch, int64_t seq, models::OpList& scratch,
                                     double& attention_flops) const {
  struct Memo {
    uint64_t estimator = 0;
    int64_t global_batch = 0, seq = 0;
    double flops = 0, attention = 0;
  };
  thread_local Memo memo;
  if (memo.estimator != id_ || memo.global_batch != global_batch || memo.seq != seq) {
    double attention = 0;
    const double flops = models::ModelFlopsPerIteration(model_, global_batch, seq, scratch, attention);
    memo = {id_, global_batch, seq, flops, attention};
  }
  attention_flops = memo.attention;
  return memo.flops;
}

// Collective times by (collective, bytes, placement): Network::Time() is a
// pure function of them, so a hit returns the very double it returned.
// Direct-mapped, 32 slots.
struct CollectiveMemo {
  struct Slot {
    int collective = -1;
    double bytes = 0;
    hardware::GroupPlacement g;
    double time = 0;
  };
  std::array<Slot, 32> slots{};
  // ChooseCpScheme's answers: within a prepared workload only the group's
  // placement (the group order) changes them; the rest is checked anyway.
  struct CpSlot {
    bool valid = false;
    hardware::GroupPlacement g;
    parallelism::CpScheme asked = parallelism::CpScheme::kAuto, scheme = parallelism::CpScheme::kAuto;
    parallelism::Attention attention = parallelism::Attention::kFlash;  // which schemes run it
    int64_t tp = 0, cp = 0;
    double tokens = 0, act = 0, attention_fwd = 0;
    CpExposed t;
  };
  std::array<CpSlot, 4> cp{};
  size_t cp_next = 0;
  // hardware::MemoryTime of the optimizer step's bytes: within a prepared
  // workload they change only with the ZeRO stage, the optimizer and the
  // pipeline split, so a few values recur across a block.
  struct MemorySlot {
    double bytes = -1;
    double time = 0;
  };
  std::array<MemorySlot, 4> memory{};
  size_t memory_next = 0;
};

namespace {

// hardware::MemoryTime, remembered in `memo` when there is one (a pure
// function of its arguments: a hit returns the very double it returned).
double MemoryTimeMemo(CollectiveMemo* memo, const hardware::DeviceSpec& d, double bytes) {
  if (memo == nullptr) return hardware::MemoryTime(d, bytes);
  for (const CollectiveMemo::MemorySlot& s : memo->memory)
    if (s.bytes == bytes) return s.time;
  CollectiveMemo::MemorySlot& s = memo->memory[memo->memory_next++ % memo->memory.size()];
  s.bytes = bytes;
  s.time = hardware::MemoryTime(d, bytes);
  return s.time;
}

// Bytes of FSDP2's copy-out of one gather (Zero3CopyOutBytes,
// parallel_comm.h) of a layer, of the embedding and of the LM head, for
// Run() and Costs() alike: nothing unless the dense parameters are sharded
// over more than one device (dense_dp, dp x cp: what ZeRO-3 gathers over),
// and no second copy of a head tied to the embedding on a single stage.
struct CopyOutBytes {
  double layer = 0, embed = 0, head = 0;
};

CopyOutBytes Zero3CopyOut(const models::ModelSpec& m, const TrainingPlan& p, int64_t dense_dp, double layer_params,
                          double embed_params, double head_params, double w_bytes) {
  CopyOutBytes b;
  if (dense_dp <= 1) return b;
  b.layer = Zero3CopyOutBytes(p, layer_params, w_bytes);
  b.embed = Zero3CopyOutBytes(p, embed_params, w_bytes);
  if (!(p.pp == 1 && m.tied_embeddings)) b.head = Zero3CopyOutBytes(p, head_params, w_bytes);
  return b;
}

// Bytes the optimizer step moves per parameter, gradient clipping included
// (see "Adam step" in Evaluate): 38 for Adam, 30 for SGD with momentum, with
// an fp32 master copy of weights of w < 4 bytes (Micikevicius et al. 2018,
// "Mixed Precision Training", Sec. 3.1: the update reads and writes the
// master copy, and the w-byte copy is made from it), 12 + w bytes of the
// total: the update reads and writes the master (8), and the w-byte copy is
// its own pass after the update, reading the master once more (4 + w).
// Megatron-LM does so in every version: FP16OptimizerWithFP16Params.step()
// runs the fused Adam, then _copy_main_params_to_model_params
// (multi_tensor_scale by 1.0 from the fp32 main to the fp16 model
// parameters; megatron/optimizer/optimizer.py, NVIDIA/Megatron-LM commit
// 00764415, 2020; so its successors Float16OptimizerWithFloat16Params and
// the distributed optimizer); none of the fused Adam kernels the measured
// frameworks call writes the low-precision copy from inside the update.
// Without a master (training.fp32_master_weights = false; the memory model,
// parallelism/memory_model.cpp, then keeps none) the step reads and writes
// the w-byte weights themselves, 2 w: 10 bytes less in bf16 or fp16, 28
// and 20.
// Each moment is read and written once: bf16 moments (training.
// optimizer_moments) move 2 x 2 bytes of it less, Adam 30 and SGD 26 with
// an fp32 master.
//
// PyTorch's own step (training.optimizer_step = pytorch) runs the update as
// separate element-wise passes. Composer's DecoupledAdamW (llm-foundry's
// decoupled_adamw; composer/optim/decoupled_weight_decay.py, adamw): per
// parameter exp_avg.mul_(beta1).add_(grad), exp_avg_sq.mul_(beta2).
// addcmul_(grad, grad), denom = (exp_avg_sq.sqrt() / sqrt(bc2)).add_(eps),
// param.addcdiv_(exp_avg, denom), the weight decay's param.mul_ skipped at
// weight_decay 0 (the mpt yamls' value). Each moment is touched five
// times (two read-writes and a read), the denominator's temporaries six
// (written by the square root, read and written by the division and by the
// epsilon, read by addcdiv), the gradient read twice and the parameter read
// and written: 16 m + 2 g + 2 p bytes with m, g and p the moments',
// gradients' and parameters' bytes, 80 in fp32. torch.optim.AdamW's foreach
// path (_multi_tensor_adamw, torchtitan's default) runs one kernel per
// operation over lists of tensors: with weight decay _foreach_mul_(params)
// (2 p), _foreach_lerp_(exp_avgs, grads) (2 m + g), _foreach_mul_ and
// _foreach_addcmul_ of exp_avg_sqs (4 m + g), _foreach_sqrt, _foreach_div_,
// _foreach_add_ of the denominator (m + 5 m of temporaries) and
// _foreach_addcdiv_(params, exp_avgs, denom) (2 p + 2 m): 14 m + 2 g + 4 p,
// also 80 in fp32, its moments being in the fp32 parameters' datatype.
// SGD with momentum:
// buf.mul_(momentum).add_(grad), param.add_(buf): 5 m + g + 2 p, 32.
// There is no separate low-precision copy (FSDP casts its fp32 shard when
// it gathers). torch.nn.utils.clip_grad_norm_ and FSDP's clip_grad_norm_
// read every gradient for the norm and then multiply each by the clamped
// coefficient whatever its value (no branch on the host): 3 g, 12 more.
// The gradients and parameters are fp32 with a master copy (FSDP's sharded
// parameter is it), else in the weights' datatype.
double OptimizerStepBytesPerParam(const TrainingPlan& p, double w_bytes) {
  if (p.optimizer_step == parallelism::OptimizerStep::kPytorch) {
    const double m = hardware::BytesPer(p.optimizer_moments);
    const double pg = p.fp32_master_weights || w_bytes >= 4 ? 4.0 : w_bytes;
    // Adam: 16 m, the gradient read twice, the parameter read and written;
    // SGD: 5 m, the gradient once, the parameter read and written; then the
    // clip's 3 g.
    const double update = p.optimizer == parallelism::Optimizer::kAdam ? 16 * m + 4 * pg : 5 * m + 3 * pg;
    return update + 3 * pg;
  }
  const double with_master = (p.optimizer == parallelism::Optimizer::kAdam ? 38.0 : 30.0) -
                             parallelism::OptimizerMoments(p) * 2 * (4 - hardware::BytesPer(p.optimizer_moments));
  if (p.fp32_master_weights || w_bytes >= 4) return with_master;
  return with_master - (12.0 + w_bytes) + 2.0 * w_bytes;
}

// Bytes per parameter of the device's whole gradient buffer (every
// parameter it holds, not the optimizer's shard) that a ZeRO 0-2 step
// passes over outside the optimizer's update, with `grad_bytes` per
// gradient as reduced. Megatron's DistributedDataParallel keeps the
// gradients in one contiguous buffer the backward accumulates into, and:
// - zeroes it at the start of every iteration (zero_grad_buffer: "Set the
//   grad buffer data to zero. Needs to be called at the begining of each
//   iteration", megatron/model/distributed.py, NVIDIA/Megatron-LM commit
//   01d65bde; Megatron-Core's zero_grad_buffer zeroes its
//   _ParamAndGradBuffer's grad_data alike): grad_bytes written;
// - scales it by 1 / (data-parallel size) in place before the reduction
//   when that is not 1 (_ParamAndGradBucketGroup.start_grad_sync: "if
//   bucket.gradient_scaling_factor != 1.0: bucket.grad_data *= ...",
//   megatron/core/distributed/param_and_grad_buffer.py at commit 00119989):
//   grad_bytes read and written. The Megatron-LM of 2021-2023 divided by
//   the size even when it was 1 (DistributedDataParallel.allreduce_gradients:
//   "buffer_.data /= mpu.get_data_parallel_world_size()", called every step,
//   megatron/model/distributed.py at 01d65bde, a 2023 file, and the same
//   line since the contiguous buffer appeared in 2021): with
//   training.grad_scale_at_dp1 the scaling is priced whether reduced or not;
// - with training.grad_nan_check, reads it once more for the L2 norm each
//   bucket takes before its reduction to catch a NaN
//   (_ParamAndGradBucketGroup.start_grad_sync -> check_grads: "grad_norm =
//   self.buckets[i].grad_data.norm(p=2)" at commit 00119989; the Megatron-Core
//   of 2024 computes "norm = self.grad_data.norm(p=2)" in
//   Bucket.start_grad_sync), when the config's check_for_nan_in_grad is set
//   (Megatron-LM: --check-for-nan-in-loss-and-grad, on by default). It runs
//   whatever the data-parallel size: finish_grad_sync issues the sync, check
//   included, at dp 1 too. grad_bytes read.
// ZeRO-3 keeps no such buffer (FSDP reduce-scatters each microbatch's
// gradients into their shards): 0.
double GradBufferBytesPerParam(const TrainingPlan& p, double grad_bytes, bool reduced) {
  if (p.zero >= 3) return 0.0;
  return grad_bytes + (reduced || p.grad_scale_at_dp1 ? 2.0 * grad_bytes : 0.0) +
         (p.grad_nan_check ? grad_bytes : 0.0);
}

// Bytes of one gradient as the data-parallel reduction and the gradient
// buffer hold it (parallelism::GradientBytes, training.grad_reduce_fp32).
double GradBytes(const TrainingPlan& p) { return parallelism::GradientBytes(p); }

// Bytes per parameter and microbatch of accumulating the weight gradients
// into the gradient buffer outside the GEMMs (training.grad_accumulation_fusion
// = false), with w_bytes per weight gradient as the backward writes it and
// grad_bytes per buffer element. Megatron-LM before the fusion computes each
// weight gradient as a tensor of its own ("grad_weight =
// grad_output.t().matmul(input)", ColumnParallelLinearWithAsyncAllreduce and
// the sequence-parallel variant, megatron/mpu/layers.py at NVIDIA/Megatron-LM
// commit 02bb1f5c, 2022; torch's own linear backward for the row-parallel
// layers), and DistributedDataParallel's hook on each parameter adds it into
// the buffer ("param.main_grad.add_(param.grad.data)",
// megatron/model/distributed.py at 01d65bde): the add reads w_bytes and
// grad_bytes and writes grad_bytes, over every parameter the device holds,
// once per microbatch (10 bytes in bf16 with fp32 gradients). The fusion
// (--gradient-accumulation-fusion, apex's fused_weight_gradient_mlp_cuda
// wgrad_gemm_accum_fp32, which appeared in apex in early 2022: NVIDIA/apex
// issue 1314 and PR 1317, 2022-03-02; on by default, "supported only with
// fp32 gradient accumulation", megatron/arguments.py at 00129014; in
// Megatron-Core and Transformer Engine alike) accumulates inside the GEMM:
// 0. ZeRO-3 keeps no buffer: 0, unless the framework concatenates a unit's
// parameter gradients into one flat gradient on the compute stream
// (training.zero3_flat_grad, PyTorch FSDP1): the module's parameters are
// views split off the unit's FlatParameter (torch/distributed/fsdp/
// _flat_param.py, _get_unflat_views: torch.split of the flat tensor), the
// split's backward concatenates their gradients (tools/autograd/
// derivatives.yaml, split_with_sizes: split_with_sizes_backward, a cat),
// and AccumulateGrad takes the result as the flat gradient the
// reduce-scatter reads: each gradient read and written once, 2 w_bytes a
// parameter a microbatch over the gathered (unsharded) stage.
// PyTorch's automatic mixed precision on fp32 parameters
// (training.autocast_fp32_weights) has no fused path: autocast casts each
// weight to bf16 at its use every microbatch (aten::_to_copy, 4 read + 2
// written), the cast's backward turns the bf16 weight gradient into fp32
// (2 + 4), and AccumulateGrad adds that into the fp32 .grad (4 + 4 read, 4
// written): 24 bytes a parameter a microbatch, whatever the datatypes'
// sizes elsewhere. The profile of one such microbatch (validation/gpu_step/
// h200/shapes/, Llama 3.2 1B shape) shows the weight-shaped copies and adds
// (aten::copy_ and aten::add_ on [8192, 2048], [2048, 8192], [2048, 2048],
// [512, 2048], [128256, 2048]) at 9.9 ms, 24 B x 1.236 G = 29.7 GB at 3.0
// TB/s. The first microbatch's AccumulateGrad takes its tensor without
// adding; counted as an add, at most 12 bytes a parameter once a step. The
// forward's casts are priced with the backward's pass (the step's sum is
// the same).
double GradAccumulationBytesPerParam(const TrainingPlan& p, double w_bytes, double grad_bytes) {
  if (p.zero >= 3) return p.zero3_flat_grad ? 2.0 * w_bytes : 0.0;
  if (p.autocast_fp32_weights) return 24.0;
  if (p.grad_accumulation_fusion) return 0.0;
  return w_bytes + 2.0 * grad_bytes;
}

// Of those bytes, the part PyTorch moves in a non-vectorized kernel, one
// element a parameter (models::Op::unvec_bytes; hardware::ElementwiseTime).
// Under autocast the cast of each bf16 weight gradient back to fp32 (2 read
// + 4 written) is a dtype-converting copy, ATen's
// unrolled_elementwise_kernel with LoadWithCast, bound by the elements it
// processes; the forward's fp32 -> bf16 weight cast has a vectorized kernel
// of its own (bfloat16_copy_kernel_cuda) and the fp32 add into .grad is
// vectorized. The H200 steps' profiles (validation/gpu_step/h200/run1/
// *.json, kernels_one_step) show fp32 -> bf16 copies only under the first
// template and bf16 -> fp32 copies only under the second (1,116 calls of
// each in the 1B step's four microbatches, 3,856 in the 3B step's eight).
// Eager code only: with its blocks through torch.compile
// (training.elementwise: fused) Inductor generates the blocks' casts with
// the rest of their graph, and the compiled step's profile has 28 calls of
// each template left (llama1b_compile.json: the embedding's, outside the
// blocks). 0 otherwise.
double GradAccumulationUnvecBytesPerParam(const TrainingPlan& p) {
  return p.zero < 3 && p.autocast_fp32_weights && p.elementwise == parallelism::Elementwise::kEager ? 6.0 : 0.0;
}

// Bytes per parameter of a recomputed layer that full recompute casts once
// more. Autocast caches a weight's cast only inside the autocast region that
// made it (torch.autocast's weight cache is cleared when the outermost
// region exits), and torch.utils.checkpoint reruns the forward in the
// backward under a fresh region of the same state, so each recomputed linear
// layer casts its fp32 weight to bf16 again: 4 read + 2 written. The H200
// checkpointed step's profile (validation/gpu_step/h200/run1/
// llama1b_ckpt.json, kernels_one_step) has 978 fp32 -> bf16 copies in its
// two microbatches against 558 for two of the eager step's (1,116 in four,
// llama1b_eager.json): 210 more a microbatch, the recompute's. Eager and
// compiled code alike (Inductor's kernels read the fp32 weight too); not
// under ZeRO-3, whose gathers cast; 0 otherwise.
double RecomputeRecastBytesPerParam(const TrainingPlan& p) {
  return p.zero < 3 && p.autocast_fp32_weights && p.recompute == Recompute::kFull ? 6.0 : 0.0;
}

// Seconds of that pass over `params` parameters: ElementwiseTime with its
// non-vectorized part where there is one (one element a parameter), else
// MemoryTime through `memo` (ElementwiseTime is MemoryTime there).
double GradAccumulationTime(const hardware::DeviceSpec& d, double params, double bytes_per_param,
                            double unvec_bytes_per_param, CollectiveMemo* memo) {
  if (unvec_bytes_per_param > 0 && d.unvectorized_element_rate > 0)
    return hardware::ElementwiseTime(d, params * bytes_per_param, params * unvec_bytes_per_param, params);
  return MemoryTimeMemo(memo, d, params * bytes_per_param);
}

}  // namespace

namespace {

// ChooseCpScheme (parallel_comm.h), remembered in `memo` when there is one.
parallelism::CpScheme CpSchemeMemo(CollectiveMemo* memo, const hardware::Network& net,
                                   const hardware::GroupPlacement& g, const models::ModelSpec& m,
                                   const TrainingPlan& p, double tokens, double act, double attention_fwd,
                                   CpExposed* t) {
  if (memo == nullptr) return ChooseCpScheme(net, g, m, p, tokens, act, attention_fwd, t, nullptr);
  for (const CollectiveMemo::CpSlot& s : memo->cp)
    if (s.valid && s.g.size == g.size && s.g.tiers == g.tiers && s.g.per_domain == g.per_domain &&
        s.g.flat == g.flat && s.g.stride == g.stride && s.asked == p.cp_scheme &&
        s.attention == p.attention && s.tp == p.tp &&
        s.cp == p.cp && s.tokens == tokens && s.act == act && s.attention_fwd == attention_fwd) {
      *t = s.t;
      return s.scheme;
    }
  CollectiveMemo::CpSlot& s = memo->cp[memo->cp_next++ % memo->cp.size()];
  s = CollectiveMemo::CpSlot{true,  g,    p.cp_scheme, parallelism::CpScheme::kAuto, p.attention, p.tp, p.cp,
                             tokens, act, attention_fwd, CpExposed{}};
  s.scheme = ChooseCpScheme(net, g, m, p, tokens, act, attention_fwd, &s.t, nullptr);
  *t = s.t;
  return s.scheme;
}

// Layers and parameters on the first, last and middle pipeline stages: the
// inputs of the memory model, and of the data-parallel and optimizer terms.
// Layers per stage: as even as whole numbers allow, the remainder to the
// middle stages first (parallelism::EvenSplitLayers; ceil(L/p) on every
// stage for the V-shapes), unless the plan gives the first and/or last
// stage its own count (Megatron-Core --decoder-first/last-pipeline-num-layers,
// or one layer fewer with the embedding and loss counted as layers:
// parallelism::FirstStageLayers); the middle stages share the rest.
struct StageParams {
  double first_layers = 0, last_layers = 0, mid_layers = 0;
  double first_params = 0, last_params = 0, mid_params = 0;
  double expert_first = 0, expert_last = 0, expert_mid = 0;
  double layer_params = 0, embed_params = 0, head_params = 0;  // per device, one of each
};

StageParams StageParamsOf(const models::ModelSpec& m, const TrainingPlan& p, int64_t seq_len,
                          double dense_layer_params, double moe_layer_params) {
  StageParams s;
  const parallelism::EvenStageLayers split = parallelism::StageLayers(p, m.layers);
  s.first_layers = static_cast<double>(split.first);
  s.last_layers = static_cast<double>(split.last);
  s.mid_layers = static_cast<double>(split.mid);
  const double moe_fraction = models::MoeFraction(m);
  const double tp_d = static_cast<double>(p.tp);
  const double ep_d = static_cast<double>(p.ep);
  const double etp_d = static_cast<double>(parallelism::ExpertTensorParallel(p));
  // Per device: layer weights split over tp; the routed experts over ep x
  // etp instead (attention, router and shared experts stay whole on every
  // EP rank). tp_d / etp_d is 1 unless the layer is folded.
  const double routed = models::RoutedExpertParameters(m);
  const double layer_params_dev =
      ((1 - moe_fraction) * dense_layer_params + moe_fraction * (moe_layer_params - routed) +
       moe_fraction * routed / ep_d * (tp_d / etp_d)) / tp_d;
  const double embed_params_dev = models::EmbeddingParameters(m, seq_len) / tp_d;
  const double head_params_dev = (m.tied_embeddings ? models::EmbeddingParameters(m, seq_len)
                                                    : models::HeadParameters(m)) / tp_d +
                                 MtpParamsOnDevice(m, p);
  // Parameters held by the first and the last stage (the fullest devices);
  // a tied LM head keeps its own copy of the embedding on the last stage.
  s.first_params = s.first_layers * layer_params_dev + embed_params_dev +
                   (p.pp == 1 && !m.tied_embeddings ? head_params_dev : 0);
  s.last_params = p.pp == 1 ? s.first_params : s.last_layers * layer_params_dev + head_params_dev;
  s.mid_params = s.mid_layers * layer_params_dev;
  s.layer_params = layer_params_dev;
  s.embed_params = embed_params_dev;
  s.head_params = head_params_dev;
  // The routed experts' share of those (sharded over the expert-data-parallel
  // group, not dp: ExpertDataParallel).
  const double expert_layer_dev = ExpertsApart(p) ? moe_fraction * routed / ep_d / etp_d : 0.0;
  s.expert_first = s.first_layers * expert_layer_dev;
  s.expert_last = s.last_layers * expert_layer_dev + MtpExpertParamsOnDevice(m, p);
  s.expert_mid = s.mid_layers * expert_layer_dev;
  return s;
}

// Per-device memory of the fullest pipeline stage (parallelism::DeviceMemory).
// The first stage keeps the most microbatches in flight, the last holds the
// logits; a middle stage can be the fullest when the ends are made light.
// The activation terms every stage shares are worked out once
// (parallelism::StageActivationTerms).
parallelism::MemoryBreakdown FullestStageMemory(const models::ModelSpec& m, const TrainingPlan& p,
                                                const StageParams& s, int64_t dp, int64_t edp,
                                                int64_t mb_count, int64_t seq_len) {
  const parallelism::ActivationTerms act = parallelism::StageActivationTerms(m, p, seq_len);
  parallelism::MemoryInputs mi;
  mi.dp = dp;
  mi.microbatches = mb_count;
  mi.seq = seq_len;
  mi.expert_dp = edp;
  parallelism::MemoryBreakdown fullest;
  // The device holding `params` (`expert` of them routed experts) and the
  // activations of `layers` on pipeline stage `stage`; the fullest so far kept.
  auto consider = [&](double params, double expert, double layers, int64_t stage, bool last_stage) {
    mi.params_on_device = params;
    mi.expert_params_on_device = expert;
    mi.layers_on_device = layers;
    mi.stage = stage;
    mi.last_stage = last_stage;
    const parallelism::MemoryBreakdown d = parallelism::DeviceMemory(p, mi, act);
    if (stage == 0 || d.total() > fullest.total()) fullest = d;
  };
  if (parallelism::RunsDualPipe(p)) {
    // DualPipe: the first and the last device each hold the first and the
    // last stage (the embedding, the LM head and its logits), a middle
    // device two middle stages; pp + 1 stage-microbatches of activations
    // (DeviceMemory), of the fuller of its two stages.
    consider(s.first_params + s.last_params, s.expert_first + s.expert_last,
             std::max(s.first_layers, s.last_layers), 0, true);
    if (p.pp > 2) consider(2 * s.mid_params, 2 * s.expert_mid, s.mid_layers, 1, false);
    return fullest;
  }
  consider(s.first_params, s.expert_first, s.first_layers, 0, p.pp == 1);
  if (p.pp > 1) consider(s.last_params, s.expert_last, s.last_layers, p.pp - 1, true);
  if (p.pp > 2) consider(s.mid_params, s.expert_mid, s.mid_layers, 1, false);
  return fullest;
}

}  // namespace

PreparedWorkload::PreparedWorkload() = default;
PreparedWorkload::~PreparedWorkload() = default;
PreparedWorkload::PreparedWorkload(PreparedWorkload&&) noexcept = default;
PreparedWorkload& PreparedWorkload::operator=(PreparedWorkload&&) noexcept = default;

double TrainingEstimator::CollectiveTime(CollectiveMemo* memo, Collective c, double bytes,
                                         const hardware::GroupPlacement& g) const {
  if (memo == nullptr) return network_.Time(c, bytes, g);
  uint64_t key = 0;
  std::memcpy(&key, &bytes, sizeof key);
  key ^= static_cast<uint64_t>(c) * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(g.size) * 0xC2B2AE3D27D4EB4FULL ^
         static_cast<uint64_t>(g.stride) * 0x165667B19E3779F9ULL ^ (g.flat ? 0x27D4EB2F165667C5ULL : 0);
  key *= 0xFF51AFD7ED558CCDULL;
  CollectiveMemo::Slot& s = memo->slots[(key >> 40) % memo->slots.size()];
  if (s.collective == static_cast<int>(c) && s.bytes == bytes && s.g.size == g.size &&
      s.g.tiers == g.tiers && s.g.per_domain == g.per_domain && s.g.flat == g.flat && s.g.stride == g.stride)
    return s.time;
  s.collective = static_cast<int>(c);
  s.bytes = bytes;
  s.g = g;
  s.time = network_.Time(c, bytes, g);
  return s.time;
}

bool PreparedWorkload::Matches(const TrainingPlan& p, const parallelism::Workload& w) const {
  return valid && p.micro_batch == micro_batch && p.tp == tp && p.cp == cp && p.ep == ep && p.etp == etp &&
         parallelism::ExpertLoadFactor(p) == expert_load && p.host_kernel_launch == host_kernel_launch &&
         p.host_te_module == host_te_module && p.host_te_split == host_te_split &&
         (p.expert_capacity_factor > 0) == capacity_bound &&
         p.sequence_parallel == sequence_parallel && p.attention == attention && p.elementwise == elementwise &&
         p.separate_bias_grad == separate_bias_grad && p.qkv_split_cat == qkv_split_cat &&
         p.norm_weight_grad_kernel == norm_weight_grad_kernel && p.rope_kernel == rope_kernel &&
         p.packed_qkv_copies == packed_qkv_copies &&
         p.loss_kernel == loss_kernel &&
         p.precision == precision && p.fp8_recipe == fp8_recipe && w.seq_len == seq_len &&
         w.global_batch == global_batch;
}

void TrainingEstimator::PrepareInto(const TrainingPlan& p, const parallelism::Workload& w,
                                    PreparedWorkload& out) const {
  const models::ModelSpec& m = model_;
  const hardware::DeviceSpec& dev = system_.device;
  const auto [dt, attn_kernel, act, shape, local] = PricingOf(m, p, w);
  models::OpList ops;
  KernelMemo kernels(dev);  // the layers, the head and the embedding share kernels
  models::LayerOps(m, shape, false, p.ep, ops);
  out.dense = Times(dev, dt, p.fp8_recipe, ops, true, attn_kernel, local, &kernels);
  // What recompute redoes per layer and device: every operator (full) or the
  // attention core (selective; Korthikanti et al. 2022, Sec. 5).
  out.layer_flops = Sum(ops, &Op::flops);
  out.attention_core_flops = 0;
  out.mla_up_flops = 0;
  out.mlp_flops = 0;
  out.op_sac_flops = 0;
  for (int i = 0; i < ops.count; ++i) {
    const Op& op = ops.ops[static_cast<size_t>(i)];
    if (op.attention_core) out.attention_core_flops += op.flops;
    if (op.mla_up) out.mla_up_flops += op.flops;
    if (op.dense_mlp) out.mlp_flops += op.flops;
    // torchtitan's op-level SAC (models::LayerOps' policy).
    out.op_sac_flops += op.op_sac_recompute * op.flops;
  }
  out.early_stop_flops = EarlyStopFlops(ops, dt);
  out.moe = OpTimes{};
  if (m.experts > 1) {
    models::LayerOps(m, shape, true, p.ep, ops);
    out.moe = Times(dev, dt, p.fp8_recipe, ops, true, attn_kernel, local, &kernels);
    const double before_sync = out.moe.fwd - out.moe.after_router_fwd;
    AddExpertPermute(dev, m, p, shape, out.moe.fwd, out.moe.bwd);
    AddMoeHostBound(p, ops, local, before_sync, out.moe.fwd, out.moe.bwd);
  }
  TrainingHeadOps(m, shape, ops);
  out.head = Times(dev, HeadDataType(dt), p.fp8_recipe, ops, true, attn_kernel, local, &kernels);
  AddLoss(dev, m, shape, p.loss_kernel, out.head);
  AddMtpModules(m, out.dense, out.moe, out.head);
  models::EmbeddingOps(m, shape, ops);
  out.embed = Times(dev, dt, p.fp8_recipe, ops, true, attn_kernel, local, &kernels);
  out.model_flops = ModelFlops(w.global_batch, w.seq_len, ops, out.model_attention_flops);  // ops reused
  out.micro_batch = p.micro_batch;
  out.tp = p.tp;
  out.cp = p.cp;
  out.ep = p.ep;
  out.etp = p.etp;
  out.expert_load = shape.expert_load;
  out.host_kernel_launch = p.host_kernel_launch;
  out.host_te_module = p.host_te_module;
  out.host_te_split = p.host_te_split;
  out.capacity_bound = p.expert_capacity_factor > 0;
  out.sequence_parallel = p.sequence_parallel;
  out.attention = p.attention;
  out.elementwise = p.elementwise;
  out.separate_bias_grad = p.separate_bias_grad;
  out.qkv_split_cat = p.qkv_split_cat;
  out.norm_weight_grad_kernel = p.norm_weight_grad_kernel;
  out.rope_kernel = p.rope_kernel;
  out.packed_qkv_copies = p.packed_qkv_copies;
  out.loss_kernel = p.loss_kernel;
  out.precision = p.precision;
  out.fp8_recipe = p.fp8_recipe;
  out.seq_len = w.seq_len;
  out.global_batch = w.global_batch;
  out.valid = true;
}

PreparedWorkload TrainingEstimator::Prepare(const TrainingPlan& p, const parallelism::Workload& w) const {
  PreparedWorkload out;
  PrepareInto(p, w, out);
  out.memo = std::make_unique<CollectiveMemo>();  // not on Run()'s own path: that one never allocates
  return out;
}

TrainingEstimate TrainingEstimator::Run(const TrainingPlan& p, const parallelism::Workload& w) const {
  return Evaluate(p, w, nullptr, false);
}

TrainingEstimate TrainingEstimator::Run(const TrainingPlan& p, const parallelism::Workload& w,
                                        const PreparedWorkload& prepared) const {
  return Evaluate(p, w, &prepared, false);
}

TrainingEstimate TrainingEstimator::RunIfFits(const TrainingPlan& p, const parallelism::Workload& w,
                                              const PreparedWorkload& prepared) const {
  return Evaluate(p, w, &prepared, true);
}

TrainingEstimate TrainingEstimator::Evaluate(const TrainingPlan& p, const parallelism::Workload& w,
                                             const PreparedWorkload* prepared, bool memory_first) const {
  TrainingEstimate e;
  const models::ModelSpec& m = model_;
  const hardware::DeviceSpec& dev = system_.device;
  e.memory_capacity = dev.memory_capacity;
  const int64_t inner = p.tp * p.pp * p.cp;  // each at most 1e6 (plan_spec.cpp): no overflow
  const int64_t dp = p.dp > 0 ? p.dp : (inner > 0 ? devices_ / inner : 0);
  e.dp = dp;
  int64_t replicas = 0;  // inner x dp, which can overflow for a dp given by hand
  if (dp <= 0 || __builtin_mul_overflow(inner, dp, &replicas) || replicas != devices_) {
    e.infeasible = Infeasible::kDeviceCount;
    return e;
  }
  if (w.global_batch % (dp * p.micro_batch) != 0) {
    e.infeasible = Infeasible::kBatchSplit;
    return e;
  }
  if (m.heads % p.tp != 0 || models::FfnSize(m) % p.tp != 0 || m.experts % p.ep != 0 ||
      parallelism::ExpertDataParallelSize(p, dp) == 0 ||
      (m.experts > 1 && models::ExpertFfn(m) % parallelism::ExpertTensorParallel(p) != 0) ||
      w.seq_len % p.cp != 0 ||
      (p.cp > 1 && !CpPlanRuns(m, p))) {
    e.infeasible = Infeasible::kHeadsSplit;
    return e;
  }
  const int64_t v = parallelism::ScheduleChunks(p);
  if (parallelism::PipelineSplitUnits(p, m.layers) < p.pp * v || parallelism::StageLayoutInvalid(p, m.layers) ||
      parallelism::OffloadLayersInvalid(p, m.layers)) {
    e.infeasible = Infeasible::kLayerSplit;
    return e;
  }
  if (devices_ > 1 && system_.network.empty() && (p.tp * p.cp * dp * p.pp) > 1) {
    e.infeasible = Infeasible::kNoNetwork;
    return e;
  }
  const int64_t mb_count = w.global_batch / (dp * p.micro_batch);
  e.microbatches = mb_count;
  if (parallelism::InterleaveNeedsMultiple(p, mb_count)) {
    e.infeasible = Infeasible::kInterleaveMicrobatches;
    return e;
  }
  if (parallelism::DualPipeShapeInvalid(p, mb_count)) {
    e.infeasible = Infeasible::kDualPipeShape;
    return e;
  }
  // Memory needs only the per-stage layer and parameter counts: a caller that
  // drops a plan that does not fit (RunIfFits) learns it before any time term.
  const StageParams sp = StageParamsOf(m, p, w.seq_len, dense_layer_params_, moe_layer_params_);
  const int64_t edp = ExpertDataParallel(p, dp);
  const int64_t dense_dp = DenseDataParallel(p, dp);  // dp x cp
  if (memory_first) {
    e.memory = FullestStageMemory(m, p, sp, dense_dp, edp, mb_count, w.seq_len);
    if (e.memory.total() > dev.memory_capacity) {
      e.infeasible = Infeasible::kOutOfMemory;
      return e;
    }
  }
  const double m_d = static_cast<double>(mb_count);
  const hardware::DataType dt = p.precision;
  const double act = hardware::BytesPer(dt == hardware::DataType::kFp8 ? hardware::DataType::kBf16 : dt);

  // --- one layer, one microbatch, on one device -----------------------------
  const models::LayerShape shape = ShapeOf(p, w, act);
  // The operators' times and FLOPs: prepared by the caller for every plan of
  // the same per-layer shape, or here.
  std::optional<PreparedWorkload> own;  // made only when not given (zeroing it costs)
  if (prepared == nullptr || !prepared->Matches(p, w)) {
    PrepareInto(p, w, own.emplace());
    prepared = &*own;
  }
  CollectiveMemo* const memo = own ? nullptr : prepared->memo.get();
  const OpTimes& dense = prepared->dense;
  const OpTimes& moe = prepared->moe;
  const OpTimes& head = prepared->head;
  const OpTimes& embed = prepared->embed;

  // --- communication inside a layer -----------------------------------------
  const Strides st = GroupStrides(p, dp);
  const double tokens = static_cast<double>(p.micro_batch * shape.seq);
  const double h = static_cast<double>(m.hidden);
  const double layer_act_bytes = tokens * h * act;
  double tp_fwd = 0, tp_bwd = 0, tp_rec = 0;
  TpHeadComm tp_head;  // the embedding's, the LM head's and the loss's (TpHeadCollectives)
  // TP communication can hide behind GEMMs only inside the scale-up domain:
  // Transformer Engine's userbuffer overlap (Megatron-Core --tp-comm-overlap)
  // splits GEMMs into chunks exchanged over NVLink; across the scale-out
  // network it is not available.
  bool tp_overlappable = false;
  if (p.tp > 1) {
    const auto g = network_.Place(p.tp, st.tp);
    tp_overlappable = p.tp_comm_overlap && g.tiers > 0 && g.per_domain[0] >= p.tp;
    // The layers' collectives and the embedding's and LM head's move the same
    // b s h activations over the same group: each is priced once.
    double known[3] = {-1, -1, -1};  // all-reduce, all-gather, reduce-scatter of layer_act_bytes
    auto tp_time = [&](Collective c, double bytes) {
      const int k = c == Collective::kAllReduce ? 0 : c == Collective::kAllGather ? 1
                    : c == Collective::kReduceScatter ? 2 : -1;
      if (k < 0 || bytes != layer_act_bytes) return CollectiveTime(memo, c, bytes, g);
      if (known[k] < 0) known[k] = CollectiveTime(memo, c, bytes, g);
      return known[k];
    };
    auto layer_time = [&](Collective c) { return tp_time(c, layer_act_bytes); };
    const TpGathers gathers = TpGathersOf(p, tokens * h, act, tp_time);
    const TpLayerComm tp_layer =
        TpLayerCollectives(p, models::MoeFraction(m), prepared->early_stop_flops > 0, gathers, layer_time);
    tp_fwd = tp_layer.fwd;
    tp_bwd = tp_layer.bwd;
    tp_rec = tp_layer.rec;
    tp_head = TpHeadCollectives(p, tokens, layer_act_bytes, tp_time);
    if (tp_overlappable) {
      // Overlapped, each collective hides behind its own GEMM only
      // (TpExposedCollectives): what is left exposed, per layer.
      const TpLayerComm x =
          TpExposedLayer(p, models::MoeFraction(m), prepared->early_stop_flops > 0, dense, moe, dev.overlap_slowdown,
                         gathers, layer_time);
      tp_fwd = x.fwd;
      tp_bwd = x.bwd;
      tp_rec = x.rec;
    }
  }
  double cp_layer = 0;
  if (p.cp > 1) {
    // K/V exchange of the plan's scheme, or of the cheapest with `auto`
    // (parallel_comm.h).
    CpExposed cp_t;
    e.cp_scheme = CpSchemeMemo(memo, network_, PlaceTiled(network_, system_, p.cp, st.cp), m, p, tokens, act,
                               dense.attention_fwd, &cp_t);
    cp_layer = cp_t.total();
  }
  double ep_layer = 0;
  if (m.experts > 1 && p.ep > 1) {
    // Dispatch and combine all-to-all, forward and backward, sized for the
    // busiest rank, and the etp gathers (ExpertLayerComm).
    ep_layer = ExpertLayerComm(network_, system_, m, p, st, tokens, act, shape.expert_load, nullptr, dp);
    if (parallelism::OverlapsExpertComm(p)) ep_layer = ExposedExpertComm(ep_layer, moe.fwd + moe.bwd, dev.overlap_slowdown);
  }

  // --- one stage, one microbatch --------------------------------------------
  // Layers per stage: StageParamsOf.
  const double first_layers = sp.first_layers, last_layers = sp.last_layers, mid_layers = sp.mid_layers;
  const double moe_fraction = models::MoeFraction(m);
  const double rec_share = parallelism::FullRecomputeShare(p);
  // Op-level SAC recomputes part of every layer (OpTimes::op_sac_fwd) and
  // its tp_rec in every layer.
  const double tp_rec_share = p.recompute == Recompute::kOp ? 1.0 : rec_share;
  auto mix = [&](double n, double OpTimes::*f) {
    return n * ((1 - moe_fraction) * dense.*f + moe_fraction * moe.*f);
  };
  // FSDP2 copies each gathered unit out of the all-gather buffer on the
  // compute stream (Zero3CopyOutBytes, parallel_comm.h): a layer before its
  // forward, before its backward, and before its recomputed forward where
  // the framework gathers again; the root unit's embedding and LM head (no
  // second copy of a tied head on a single stage) before the forward and
  // the backward.
  const CopyOutBytes copy_bytes =
      Zero3CopyOut(m, p, dense_dp, sp.layer_params, sp.embed_params, sp.head_params, act);
  auto copy_time = [&](double bytes) { return bytes > 0 ? MemoryTimeMemo(memo, dev, bytes) : 0.0; };
  const double copy_layer = copy_time(copy_bytes.layer), copy_embed = copy_time(copy_bytes.embed),
               copy_head = copy_time(copy_bytes.head);
  // Under a pipeline each unit is gathered, and so copied out, once per step
  // (Zero3GathersOncePerStep, parallel_comm.h): before the first
  // microbatch's forward, nothing per microbatch.
  const bool z3_once = Zero3GathersOncePerStep(p);
  const double regathers = z3_once ? 0.0 : Zero3GathersPerMicrobatch(p) - 2;  // per layer, for its recompute
  // Per-microbatch time of a stage with n layers and its extra operators.
  struct StageTime {
    double fwd = 0, bwd = 0, rec = 0, tp = 0, cp = 0, ep = 0;
    double weight_grad = 0;  // part of bwd
    double copy_out_step = 0;  // FSDP2 copy-out once per step (not in total())
    double total() const { return fwd + bwd + rec + tp + cp + ep; }
  };
  // Without gradient-accumulation fusion every microbatch's backward adds
  // each weight gradient into the gradient buffer in a pass of its own over
  // the stage's parameters (GradAccumulationBytesPerParam), part of the
  // weight-gradient work.
  const double accum_bytes_per_param =
      GradAccumulationBytesPerParam(p, act, GradBytes(p));
  const double accum_unvec_bytes_per_param = GradAccumulationUnvecBytesPerParam(p);
  const double recast_bytes_per_param = RecomputeRecastBytesPerParam(p);
  auto stage_time = [&](double n, bool has_embed, bool has_head, double params) {
    StageTime st_;
    st_.fwd = mix(n, &OpTimes::fwd) + (has_embed ? embed.fwd : 0) + (has_head ? head.fwd : 0);
    st_.bwd = mix(n, &OpTimes::bwd) + (has_embed ? embed.bwd : 0) + (has_head ? head.bwd : 0);
    // The embedding's backward is all weight gradient (as in Costs()).
    st_.weight_grad = mix(n, &OpTimes::weight_grad) + (has_embed ? embed.bwd : 0) +
                      (has_head ? head.weight_grad : 0);
    if (accum_bytes_per_param > 0) {
      const double accumulate =
          GradAccumulationTime(dev, params, accum_bytes_per_param, accum_unvec_bytes_per_param, memo);
      st_.bwd += accumulate;
      st_.weight_grad += accumulate;
    }
    // Full recompute runs the forward of the recomputed share of the
    // layers once more (all of them, or every recompute_interval-th:
    // FullRecomputeShare, plan_spec.h), with its TP collectives.
    const double rec_layers = n * rec_share;
    if (p.recompute == Recompute::kFull)
      st_.rec = mix(rec_layers, &OpTimes::fwd) - (p.checkpoint_early_stop ? mix(rec_layers, &OpTimes::early_stop_fwd) : 0.0);
    else if (p.recompute == Recompute::kSelective) st_.rec = mix(n, &OpTimes::attention_fwd);
    // torchtitan's op-level SAC reruns every layer's unsaved operators
    // (models::LayerOps: wk, wo, w3, norms, rotary, SwiGLU, residuals).
    else if (p.recompute == Recompute::kOp) st_.rec = mix(n, &OpTimes::op_sac_fwd);
    // Under autocast the recomputed layers cast their weights once more
    // (RecomputeRecastBytesPerParam).
    if (recast_bytes_per_param > 0 && rec_layers > 0)
      st_.rec += MemoryTimeMemo(memo, dev, rec_layers * sp.layer_params * recast_bytes_per_param);
    // Megatron-Core's mla_up_proj recompute runs the up projections once
    // more before the attention's backward (RecomputesMlaUpProj).
    if (parallelism::RecomputesMlaUpProj(m, p)) st_.rec += mix(n, &OpTimes::mla_up_fwd);
    // Its mlp recompute runs each dense layer's MLP block once more before
    // that block's backward (RecomputesMlp; a MoE layer has no dense MLP:
    // mlp_fwd is 0 there).
    if (parallelism::RecomputesMlp(p)) st_.rec += mix(n, &OpTimes::mlp_fwd);
    // Its layernorm and moe_act modules rerun the norms built as modules of
    // their own and the routed experts' activation (RecomputesLayernorm,
    // RecomputesMoeAct): memory-bound kernels, no FLOPs counted.
    if (parallelism::RecomputesLayernorm(p)) st_.rec += mix(n, &OpTimes::norm_fwd);
    if (parallelism::RecomputesMoeAct(p)) st_.rec += mix(n, &OpTimes::moe_act_fwd);
    const double copy_out = n * copy_layer + (has_embed ? copy_embed : 0) + (has_head ? copy_head : 0);
    if (z3_once) {
      st_.copy_out_step = copy_out;
    } else {
      st_.fwd += copy_out;
      st_.bwd += copy_out;
    }
    st_.rec += n * regathers * copy_layer;
    // Overlapped, tp_fwd, tp_bwd and tp_rec are what stays exposed
    // (TpExposedCollectives).
    st_.tp = n * (tp_fwd + tp_bwd + tp_rec_share * tp_rec);
    // The embedding's and the LM head's collectives are priced exposed:
    // neither is a Transformer Engine module, whose GEMMs --tp-comm-overlap
    // splits (Megatron-Core builds them from its own VocabParallelEmbedding
    // and ColumnParallelLinear; HeadDataType).
    st_.tp += (has_embed ? tp_head.embed_fwd + tp_head.embed_bwd : 0) +
              (has_head ? tp_head.head_fwd + tp_head.head_bwd : 0);
    st_.cp = n * cp_layer;
    st_.ep = n * moe_fraction * ep_layer;
    return st_;
  };
  // The slowest stage sets the pace of the pipeline. With pp = 1 one device
  // runs the embedding, every layer and the LM head.
  StageTime pace = stage_time(first_layers, true, p.pp == 1, sp.first_params);
  const bool dualpipe = parallelism::RunsDualPipe(p);
  if (dualpipe) {
    // DualPipe: the first device runs the first stage for one direction's
    // microbatches and the last stage for the other's, half each, as the
    // last device; the middle devices two middle stages.
    const StageTime last_st = stage_time(last_layers, false, true, sp.last_params);
    auto half = [](double a, double b) { return (a + b) / 2; };
    pace.fwd = half(pace.fwd, last_st.fwd);
    pace.bwd = half(pace.bwd, last_st.bwd);
    pace.rec = half(pace.rec, last_st.rec);
    pace.tp = half(pace.tp, last_st.tp);
    pace.cp = half(pace.cp, last_st.cp);
    pace.ep = half(pace.ep, last_st.ep);
    pace.weight_grad = half(pace.weight_grad, last_st.weight_grad);
    pace.copy_out_step += last_st.copy_out_step;
    if (p.pp > 2) {
      const StageTime mid_st = stage_time(mid_layers, false, false, sp.mid_params);
      if (mid_st.total() > pace.total()) {
        pace = mid_st;
        pace.copy_out_step *= 2;
      }
    }
  } else if (p.pp > 1) {
    const StageTime last_st = stage_time(last_layers, false, true, sp.last_params);
    if (last_st.total() > pace.total()) pace = last_st;
    if (p.pp > 2) {
      const StageTime mid_st = stage_time(mid_layers, false, false, sp.mid_params);
      if (mid_st.total() > pace.total()) pace = mid_st;
    }
  }
  const double stage_fwd = pace.fwd, stage_bwd = pace.bwd, stage_rec = pace.rec;
  const double stage_tp = pace.tp, stage_cp = pace.cp, stage_ep = pace.ep;
  const double stage = pace.total();
  // Activation offload to host memory (training.offload_activation_layers;
  // ActivationOffloadExposed, parallel_comm.h): each offloaded layer's
  // activations cross the host link out in the forward and back in the
  // backward, beside a window of layers' compute each way; what the compute
  // does not cover is charged per microbatch, on the stage exposing the most.
  double act_offload = 0;
  if (p.offload_activation_layers > 0) {
    const double copy_s = ActivationCopySeconds(m, p, w.seq_len, system_);
    const double f1 = mix(1, &OpTimes::fwd), b1 = mix(1, &OpTimes::bwd);
    auto exposed = [&](double n) {
      return ActivationOffloadExposed(p.offload_activation_layers, std::llround(n), copy_s, f1, b1);
    };
    act_offload = std::max(exposed(first_layers), p.pp > 1 ? std::max(exposed(last_layers), exposed(mid_layers)) : 0.0);
  }

  // --- pipeline ---------------------------------------------------------------
  // The forward side of the stage for ZB-H1: the forward compute and the
  // forward's share of the exposed communication.
  const double stage_comm = stage_tp + stage_cp + stage_ep;
  const double stage_compute = stage_fwd + stage_bwd + stage_rec;
  const double forward_side = stage_fwd + (stage_compute > 0 ? stage_comm * stage_fwd / stage_compute : 0);
  const double bubble = parallelism::PipelineBubble(p, mb_count, stage, forward_side, pace.weight_grad);
  double p2p = 0;
  if (p.pp > 1) {
    const auto g = network_.Place(p.pp, st.pp);
    // Activations between stages, split over the tp ranks (Narayanan et al.
    // 2021, Sec. 4.1 scatter/gather optimisation).
    const double one = CollectiveTime(memo, Collective::kSendRecv, layer_act_bytes / static_cast<double>(p.tp), g);
    p2p = parallelism::CriticalPathTransfers(p, mb_count) * one;
    // Overlapped (interleaved 1F1B with overlap_p2p_comm): in the steady
    // one-forward-one-backward phase each transfer runs beside a model
    // chunk's forward or backward on the device, exposing what outlasts it
    // and the contention beside it (OverlapExposed); the fill's and the
    // flush's stay exposed ("The PP communications in pipeline fill and
    // flush are still exposed", NeMo docs, features/optimizations/
    // communication_overlap.rst). The first device's fill is Megatron-Core's
    // warm-up, 2 (p - 1) + (v - 1) p chunk forwards (schedules.py,
    // forward_backward_pipelining_with_interleaving: num_warmup_microbatches
    // at rank 0), its flush as many chunk backwards, and the pipeline
    // transfers once more p - 1 times each way to fill and drain.
    if (parallelism::OverlapsPipelineSends(p)) {
      const double chunks = static_cast<double>(parallelism::ScheduleChunks(p));
      const double pp_d = static_cast<double>(p.pp);
      const double vm = chunks * static_cast<double>(mb_count);
      const double warmup = std::min(vm, 2 * (pp_d - 1) + (chunks - 1) * pp_d);
      p2p = 2 * (warmup + pp_d - 1) * one +
            (vm - warmup) * (OverlapExposed(one, stage_fwd / chunks, dev.overlap_slowdown) +
                             OverlapExposed(one, (stage_bwd + stage_rec) / chunks, dev.overlap_slowdown));
    }
  }

  // --- parameters, data parallelism, optimizer -------------------------------
  // Parameters per device on each stage: StageParamsOf.
  const double tp_d = static_cast<double>(p.tp);
  // DualPipe: every device holds its stage and the mirror one.
  const double first_params = dualpipe ? sp.first_params + sp.last_params : sp.first_params;
  const double last_params = dualpipe ? first_params : sp.last_params;
  const double mid_params = dualpipe ? 2 * sp.mid_params : sp.mid_params;
  const double params_dev = std::max({first_params, last_params, mid_params});
  const double expert_first = dualpipe ? sp.expert_first + sp.expert_last : sp.expert_first;
  const double expert_last = dualpipe ? expert_first : sp.expert_last;
  const double expert_mid = dualpipe ? 2 * sp.expert_mid : sp.expert_mid;
  const double expert_dev = params_dev == first_params ? expert_first
                            : params_dev == last_params ? expert_last : expert_mid;

  const double w_bytes = act;
  const double grad_bytes = GradBytes(p);
  double dp_exposed = 0;
  double zero3_per_mb = 0;
  double zero3_edges = 0;  // ZeRO-3 communication no pass can hide, per iteration
  double zero3_gather = 0;  // per microbatch: the gathers prefetched behind the forward pass
  double zero3_bwd_gather = 0;  // the backward's (and recompute's) gathers
  double zero3_reduce = 0;      // and its reduce-scatters, behind the backward
  double t_copy_out_step = 0;   // FSDP2's copy-out of the once-per-step gathers
  if (dense_dp > 1 || (edp > 1 && expert_dev > 0)) {
    // Dense weights reduce over dp x cp, routed-expert weights over the
    // expert-data-parallel group, one after the other (DataParallelGroupsOf,
    // DataParallelTime, parallel_comm.h; the event engine prices them alike).
    const DataParallelGroups groups = DataParallelGroupsOf(network_, p, dp, st);
    const double dense_dev = params_dev - expert_dev;
    auto time = [&](Collective c, double bytes, const hardware::GroupPlacement& g) {
      return CollectiveTime(memo, c, bytes, g);
    };
    auto group_time = [&](Collective c, double bytes_per_param) {
      return DataParallelTime(time, c, groups, dense_dev, expert_dev, bytes_per_param);
    };
    const double grads = params_dev * grad_bytes;
    double comm = 0;       // gradient reduction, at the end of the backward pass
    double gather = 0;     // parameter all-gather after the step (ZeRO-1/2)
    if (p.zero == 0) {
      comm = group_time(Collective::kAllReduce, grad_bytes);
    } else if (p.zero <= 2) {
      comm = group_time(Collective::kReduceScatter, grad_bytes);
      gather = group_time(Collective::kAllGather, ParamGatherBytesPerParam(p, w_bytes));
    } else if (z3_once) {
      // ZeRO-3 under a pipeline (Zero3GathersOncePerStep, parallel_comm.h):
      // each chunk's weights gathered once, before its first microbatch's
      // forward, unit by unit, the units after the first prefetched behind
      // that forward (as without a pipeline); later chunks' gathers run
      // during the forwards before them (PyTorch pipelining's UNSHARD
      // actions ahead of a stage's compute, schedules.py _add_unshard_reshard):
      // the ZeRO-1/2 gather's chunk-by-chunk expression below with one unit
      // in place of one bucket. Each chunk's gradients reduce-scattered once,
      // after its last backward, with the compute stream waiting for them
      // (perform_reduce_grad): all exposed.
      const double gather_all = group_time(Collective::kAllGather, w_bytes);
      const double reduce_all = group_time(Collective::kReduceScatter, Zero3ReduceBytesPerParam(p, w_bytes));
      if (p.dp_overlap) {
        const double v_d = static_cast<double>(v);
        const bool chunked = v_d > 1 && parallelism::TakesInterleave(p.schedule);
        const double v_gather = chunked ? v_d : 1.0;
        const double pass_groups = 1 + (v_gather - 1) * static_cast<double>(p.pp);
        const double stage_layers = std::max(1.0, std::max({first_layers, last_layers, mid_layers}));
        const double first_unit = std::min(gather_all / stage_layers, gather_all / v_gather);
        const double f_chunk = stage_fwd / v_gather;
        dp_exposed =
            first_unit + reduce_all +
            std::max(OverlapExposed(gather_all / v_gather - first_unit, f_chunk, dev.overlap_slowdown),
                     OverlapExposed(gather_all - first_unit, f_chunk * pass_groups, dev.overlap_slowdown));
      } else {
        dp_exposed = gather_all + reduce_all;
      }
      t_copy_out_step = pace.copy_out_step;
    } else {
      // ZeRO-3 / FSDP: gather each layer's weights for forward and backward
      // (and, where the framework re-gathers, recompute), reduce-scatter its
      // gradients (in fp32 where the framework reduces so), every microbatch
      // (Rajbhandari et al. 2020, Sec. 7.2.3: 1.5x the all-reduce volume;
      // Zero3GathersPerMicrobatch, Zero3ReduceBytesPerParam, parallel_comm.h).
      // Per microbatch also under gradient accumulation: FSDP's no_sync
      // would keep unsharded gradients, and Composer (llm-foundry's trainer)
      // enters no_sync only for a DistributedDataParallel model
      // (Composer's ddp_sync_context returns at once for any other model,
      // an FSDP-wrapped one included: it syncs every microbatch).
      const double gathers = Zero3GathersPerMicrobatch(p);
      const double gather_all = group_time(Collective::kAllGather, w_bytes);
      const double reduce_all = group_time(Collective::kReduceScatter, Zero3ReduceBytesPerParam(p, w_bytes));
      zero3_per_mb = gathers * gather_all + reduce_all;
      // With prefetch, each layer's gather hides behind the layer before it,
      // but the iteration's first gather has nothing before it and its last
      // reduce-scatter nothing after it (the optimizer step needs the
      // gradients): one layer's worth of each, the unit FSDP and DeepSpeed
      // gather in (Zhao et al. 2023, "PyTorch FSDP", VLDB: one FSDP unit
      // per transformer block).
      const double stage_layers = std::max(1.0, std::max({first_layers, last_layers, mid_layers}));
      if (p.dp_overlap) zero3_edges = (gather_all + reduce_all) / stage_layers;
      zero3_gather = gather_all;
      zero3_bwd_gather = (gathers - 1) * gather_all;
      zero3_reduce = reduce_all;
    }
    if (p.zero < 3) {
      if (p.dp_overlap) {
        // Buckets reduce while the last microbatch's backward runs (PyTorch
        // DDP, Li et al. 2020, VLDB 13(12), Sec. 3.2; Megatron-Core
        // --overlap-grad-reduce): the last bucket's gradients exist only when
        // the backward ends, so its reduction cannot hide, and the buckets
        // before it hide behind the backward but slow it (OverlapExposed).
        //
        // Interleaved 1F1B (v chunks a device) reduces chunk by chunk:
        // Megatron-Core starts a chunk's gradient reduction as soon as that
        // chunk's last microbatch is through its backward (megatron/core/
        // pipeline_parallel/schedules.py, forward_backward_pipelining_with_
        // interleaving: grad_sync_func[chunk] once is_last_microbatch_for_
        // model_chunk), and the last group of p microbatches runs its
        // backwards chunk v-1 first, chunk 0 last, p microbatches each. With
        // b = one chunk's backward of one microbatch, the first chunk's
        // gradients are ready b (1 + (v-1) p) before the backward ends, the
        // last chunk's only b before: the reduction hides behind the longer
        // window unless the last chunk's own share (comm / v) outruns its b.
        // v = 1 gives the one-pass expression above. The event engine
        // reduces chunk by chunk in the same way (parallelism/step_graph.cpp).
        const double v_d = static_cast<double>(v);
        const bool chunked = v_d > 1 && p.pp > 1 && parallelism::TakesInterleave(p.schedule);
        const double v_grad = chunked ? v_d : 1.0;
        const double pass_groups = 1 + (v_grad - 1) * static_cast<double>(p.pp);
        const double bucket_share = std::min(1.0, p.dp_bucket / std::max(1.0, grads));
        const double last_bucket = std::min(comm * bucket_share, comm / v_grad);
        const double b_chunk = (stage_bwd + stage_rec) / v_grad;
        dp_exposed = last_bucket + std::max(OverlapExposed(comm / v_grad - last_bucket, b_chunk, dev.overlap_slowdown),
                                            OverlapExposed(comm - last_bucket, b_chunk * pass_groups,
                                                           dev.overlap_slowdown));
        // The updated parameters are gathered bucket by bucket while the next
        // iteration's first forward pass runs (Megatron-Core
        // --overlap-param-gather): the first bucket is needed before the
        // first layer can start. Interleaved, chunk k+1's gather runs beside
        // chunk k's forwards (schedules.py: param_sync_func[chunk + 1] in the
        // warm-up), the mirror image of the reduction: p forwards of each
        // chunk before the next one starts.
        const double first_bucket = std::min(gather * bucket_share, gather / v_grad);
        const double f_chunk = stage_fwd / v_grad;
        dp_exposed += first_bucket +
                      std::max(OverlapExposed(gather / v_grad - first_bucket, f_chunk, dev.overlap_slowdown),
                               OverlapExposed(gather - first_bucket, f_chunk * pass_groups, dev.overlap_slowdown));
      } else {
        dp_exposed = comm + gather;
      }
    }
  }
  // ZeRO-3 gathers prefetch one layer ahead (FSDP's backward/forward
  // prefetch, Zhao et al. 2023 Sec. 3.3.2): the forward's gathers hide behind
  // the forward, the backward's gathers and reduce-scatters behind the
  // backward (and recompute), each pass on its own, slowing the compute they
  // run beside (OverlapExposed). Without overlap (training.dp_overlap=false)
  // every gather and reduce-scatter stands between two passes. With FSDP1's
  // BACKWARD_POST (training.zero3_backward_prefetch=false) a layer's
  // backward gather is issued from the post-backward hook of the layer after
  // it (torch/distributed/fsdp/_runtime_utils.py: _post_backward_reshard
  // prefetches, then _reduce_grad reduce-scatters) and the layer's backward,
  // or recomputation, waits for it: the backward's gathers are exposed, its
  // reduce-scatters still hide behind the next layer's backward.
  const double bwd_compute = stage_bwd + stage_rec;
  double stage_z3_bwd =
      p.zero3_backward_prefetch
          ? OverlapExposed(zero3_bwd_gather + zero3_reduce, bwd_compute, dev.overlap_slowdown)
          : zero3_bwd_gather + OverlapExposed(zero3_reduce, bwd_compute, dev.overlap_slowdown);
  double stage_z3_fwd = OverlapExposed(zero3_gather, stage_fwd, dev.overlap_slowdown);
  // DeepSpeed ZeRO-3 of 2021 fetches one weight matrix at a time and
  // prefetches only the next (training.zero3_matrix_prefetch;
  // PrefetchOneAheadExposed, parallel_comm.h): each pass pairs a matrix's
  // gather with the compute of the matrix before it (the recomputed forward
  // as the forward), the backward's gathers and reduce-scatters with the
  // backward of the matrix after it.
  if (p.zero3_matrix_prefetch && p.zero3_backward_prefetch && zero3_gather > 0) {
    const LayerWeightShares shares = DenseLayerWeightShares(model_);
    const double rec_gather = std::max(0.0, zero3_bwd_gather - zero3_gather);
    stage_z3_fwd = PrefetchOneAheadExposed(shares, zero3_gather, stage_fwd, dev.overlap_slowdown, false);
    stage_z3_bwd = PrefetchOneAheadExposed(shares, rec_gather, stage_rec, dev.overlap_slowdown, false) +
                   PrefetchOneAheadExposed(shares, zero3_gather + zero3_reduce, stage_bwd, dev.overlap_slowdown,
                                           true);
  }
  const double stage_z3 = p.dp_overlap ? stage_z3_fwd + stage_z3_bwd : zero3_per_mb;
  dp_exposed += zero3_edges;

  // Adam step: read fp32 master weight, gradient, two moments; write them
  // (16 + 12), then the low-precision copy from the master in its own pass
  // (4 + 2): 34 bytes per parameter, memory-bound.
  // Before it, gradient clipping by global norm reads every local fp32
  // gradient once more (Megatron-LM optimizer/clip_grads.py: an L2 norm over
  // the local main gradients, a one-number all-reduce, and a rescale only
  // when the norm exceeds the limit, which a stable run rarely does):
  // + 4 bytes per parameter, 38 (Adam) and 30 (SGD with momentum); without
  // fp32 master weights 28 and 20 (OptimizerStepBytesPerParam). Besides the
  // optimizer's shard, the whole gradient buffer of the device is zeroed and,
  // under data parallelism (or at dp 1 with training.grad_scale_at_dp1),
  // scaled (GradBufferBytesPerParam).
  const double opt_params = p.zero >= 1 ? (params_dev - expert_dev) / static_cast<double>(dense_dp) +
                                              expert_dev / static_cast<double>(edp)
                                        : params_dev;
  const double opt_bytes_per_param = OptimizerStepBytesPerParam(p, w_bytes);
  const double grad_buffer_bytes =
      params_dev * GradBufferBytesPerParam(p, grad_bytes, dense_dp > 1 || (edp > 1 && expert_dev > 0));
  double optimizer = 0, offload = 0;
  if (p.offload_optimizer) {
    // ZeRO-Offload (Ren et al. 2021): gradients to host, updated weights back.
    offload = opt_params * (grad_bytes + w_bytes) / HostLinkBandwidth(system_);
    if (grad_buffer_bytes > 0) optimizer = MemoryTimeMemo(memo, dev, grad_buffer_bytes);
  } else {
    optimizer = MemoryTimeMemo(memo, dev, opt_params * opt_bytes_per_param + grad_buffer_bytes);
  }

  // --- totals -----------------------------------------------------------------
  TimeBreakdown& t = e.time;
  t.forward = m_d * stage_fwd + t_copy_out_step;
  t.backward = m_d * stage_bwd;
  t.recompute = m_d * stage_rec;
  t.tp_comm = m_d * stage_tp;
  t.cp_comm = m_d * stage_cp;
  t.ep_comm = m_d * stage_ep;
  t.pp_bubble = bubble;
  t.pp_p2p = p2p;
  t.dp_comm = dp_exposed + m_d * stage_z3;
  t.optimizer = optimizer;
  t.offload = offload + m_d * act_offload;
  t.total = t.forward + t.backward + t.recompute + t.tp_comm + t.cp_comm + t.ep_comm +
            t.pp_bubble + t.pp_p2p + t.dp_comm + t.optimizer + t.offload;
  e.iteration_s = t.total;

  // --- memory -------------------------------------------------------------------
  // FullestStageMemory (already known when asked for first).
  if (!memory_first) e.memory = FullestStageMemory(m, p, sp, dense_dp, edp, mb_count, w.seq_len);
  if (e.memory.total() > dev.memory_capacity) e.infeasible = Infeasible::kOutOfMemory;
  // ZeRO-Offload (Ren et al. 2021, Sec. 3) keeps the optimizer states (fp32
  // master weights, Adam's moments) in the node's CPU memory: the node's
  // devices together must fit theirs in system.host_memory (0 = not given).
  if (e.feasible() && system_.host_memory > 0 &&
      e.memory.host_optimizer * static_cast<double>(system_.devices_per_node) > system_.host_memory)
    e.infeasible = Infeasible::kHostOutOfMemory;

  // --- metrics --------------------------------------------------------------------
  const double devices = static_cast<double>(devices_);
  e.model_flops = prepared->model_flops;
  double rec_flops = 0;
  if (p.recompute != Recompute::kNone || parallelism::RecomputesMlaUpProj(m, p) || parallelism::RecomputesMlp(p)) {
    const double per_layer_dev =
        (p.recompute == Recompute::kFull
             ? (prepared->layer_flops - (p.checkpoint_early_stop ? prepared->early_stop_flops : 0.0)) *
                   parallelism::FullRecomputeShare(p)
         : p.recompute == Recompute::kSelective ? prepared->attention_core_flops
         : p.recompute == Recompute::kOp        ? prepared->op_sac_flops
                                                : 0.0) +
        (parallelism::RecomputesMlaUpProj(m, p) ? prepared->mla_up_flops : 0.0);
    // The MLP recompute redoes the dense layers' MLP only.
    const double dense_layers = static_cast<double>(m.layers) * (1 - models::MoeFraction(m));
    const double per_dense_layer = parallelism::RecomputesMlp(p) ? prepared->mlp_flops : 0.0;
    rec_flops = (per_layer_dev * static_cast<double>(m.layers) + per_dense_layer * dense_layers) * tp_d *
                static_cast<double>(p.cp) * static_cast<double>(w.global_batch) /
                static_cast<double>(p.micro_batch);
  }
  e.hardware_flops = e.model_flops + rec_flops;
  const double peak = hardware::PeakFlops(dev, dt) * devices;
  e.mfu = e.model_flops / (e.iteration_s * peak);
  e.hfu = e.hardware_flops / (e.iteration_s * peak);
  e.mfu_causal = (e.model_flops - 0.5 * prepared->model_attention_flops) / (e.iteration_s * peak);
  e.tflops_per_device = e.model_flops / e.iteration_s / devices;
  e.tokens_per_s = static_cast<double>(w.global_batch * w.seq_len) / e.iteration_s;
  // A board held to a power cap below its TDP draws at most the cap.
  const double board_w = hardware::BusyPower(dev);
  e.energy_j = devices * board_w * e.iteration_s * system_.pue;
  e.cost_usd = devices * system_.price_per_device_hour * e.iteration_s;
  if (w.train_tokens > 0) {
    const double iters = w.train_tokens / static_cast<double>(w.global_batch * w.seq_len);
    e.train_time_s = iters * e.iteration_s;
    e.train_device_hours = e.train_time_s * devices / 3600;
    e.train_energy_j = iters * e.energy_j;
    e.train_cost_usd = iters * e.cost_usd;
  }
  if (const char* broken = TrainingInvariantViolation(e)) {
    // Numbers that break an invariant never reach a face (result_invariants.h).
    e.infeasible = Infeasible::kInvalidResult;
    e.invariant = broken;
    e.iteration_s = 0;
  }
  return e;
}

OperatorCosts TrainingEstimator::Costs(const TrainingPlan& p, const parallelism::Workload& w) const {
  // The same steps as Run(), stopped before the closed form assumes a
  // schedule; tests/event_engine_test.cpp holds the two to agreement.
  OperatorCosts c;
  const models::ModelSpec& m = model_;
  const hardware::DeviceSpec& dev = system_.device;
  const int64_t inner = p.tp * p.pp * p.cp;
  const int64_t dp = p.dp > 0 ? p.dp : (inner > 0 ? devices_ / inner : 1);
  // Named copies, not structured bindings: the lambda below uses them, and
  // a lambda may not capture a structured binding before C++20's P1091
  // (Clang before 16 refuses it).
  const LayerPricing pricing = PricingOf(m, p, w);
  const hardware::DataType dt = pricing.dt;
  const hardware::AttentionKernel attn_kernel = pricing.attn_kernel;
  const double act = pricing.act;
  const models::LayerShape& shape = pricing.shape;
  const double local = pricing.local;
  // Forward, backward and the weight-gradient half of each weight GEMM's
  // backward (a GEMM's backward is an input-gradient and a weight-gradient
  // GEMM of its size, Narayanan et al. 2021 Sec. 5.1).
  // `head`: the LM head (its GEMM datatype and its loss, as PrepareInto).
  auto layer = [&](const models::OpList& ops, const OpTimes* dense_t, const OpTimes* moe_t) {
    const bool head = dense_t != nullptr;
    const hardware::DataType op_dt = head ? HeadDataType(dt) : dt;
    OpTimes t = Times(dev, op_dt, p.fp8_recipe, ops, true, attn_kernel, local);
    if (head) AddLoss(dev, m, shape, p.loss_kernel, t);
    if (head) AddMtpModules(m, *dense_t, *moe_t, t);  // the head carries MTP
    LayerCosts l;
    l.fwd = t.fwd;
    l.bwd = t.bwd;
    l.attention_fwd = t.attention_fwd;
    l.mla_up_fwd = t.mla_up_fwd;
    l.mlp_fwd = t.mlp_fwd;
    l.norm_fwd = t.norm_fwd;
    l.moe_act_fwd = t.moe_act_fwd;
    l.op_sac_fwd = t.op_sac_fwd;
    l.early_stop_fwd = t.early_stop_fwd;
    l.gemm = t.gemm;
    l.tp_attention = t.tp_attention;
    l.tp_mlp = t.tp_mlp;
    for (int i = 0; i < ops.count; ++i) {
      const Op& op = ops.ops[static_cast<size_t>(i)];
      if (op.kind == OpKind::kGemm) {
        // NVFP4's linear GEMMs in FP4 (TrainingGemmDataType).
        const hardware::DataType w_dt =
            p.fp8_recipe == parallelism::Fp8Recipe::kNvfp4 ? TrainingGemmDataType(op, op_dt, p.fp8_recipe) : op_dt;
        l.bwd_weight +=
            OpGemmPassTimes(dev, w_dt, op, local, nullptr, Mxfp8LinearGemm(op, op_dt, p.fp8_recipe)).wgrad;
      }
    }
    // MTP's weight gradients beyond the head's own GEMMs (AddMtpModules).
    if (head)
      l.bwd_weight += t.weight_grad - Times(dev, op_dt, p.fp8_recipe, ops, true, attn_kernel, local).weight_grad;
    return l;
  };
  models::OpList ops;
  models::LayerOps(m, shape, false, p.ep, ops);
  c.dense = layer(ops, nullptr, nullptr);
  const bool down_proj_skipped = EarlyStopFlops(ops, dt) > 0;
  const OpTimes dense_t = Times(dev, dt, p.fp8_recipe, ops, true, attn_kernel, local);
  OpTimes moe_t;
  if (m.experts > 1) {
    models::LayerOps(m, shape, true, p.ep, ops);
    c.moe = layer(ops, nullptr, nullptr);
    moe_t = Times(dev, dt, p.fp8_recipe, ops, true, attn_kernel, local);
    const double before_sync = moe_t.fwd - moe_t.after_router_fwd;
    AddExpertPermute(dev, m, p, shape, c.moe.fwd, c.moe.bwd);
    AddExpertPermute(dev, m, p, shape, moe_t.fwd, moe_t.bwd);
    AddMoeHostBound(p, ops, local, before_sync, c.moe.fwd, c.moe.bwd);
    AddMoeHostBound(p, ops, local, before_sync, moe_t.fwd, moe_t.bwd);
  }
  TrainingHeadOps(m, shape, ops);
  c.head = layer(ops, &dense_t, &moe_t);
  models::EmbeddingOps(m, shape, ops);
  c.embed = layer(ops, nullptr, nullptr);
  c.embed.bwd_weight = c.embed.bwd;  // the lookup's backward is all weight gradient
  c.moe_fraction = models::MoeFraction(m);

  const Strides st = GroupStrides(p, dp);
  const double tokens = static_cast<double>(p.micro_batch * shape.seq);
  const double h = static_cast<double>(m.hidden);
  const double layer_act_bytes = tokens * h * act;
  if (p.tp > 1) {
    const auto g = network_.Place(p.tp, st.tp);
    const bool overlapped = p.tp_comm_overlap && g.tiers > 0 && g.per_domain[0] >= p.tp;
    auto tp_time = [&](Collective k, double bytes) { return network_.Time(k, bytes, g); };
    auto layer_time = [&](Collective k) { return tp_time(k, layer_act_bytes); };
    const TpGathers gathers = TpGathersOf(p, tokens * h, act, tp_time);
    const TpLayerComm tp_layer = TpLayerCollectives(p, c.moe_fraction, down_proj_skipped, gathers, layer_time);
    c.tp_fwd = tp_layer.fwd;
    c.tp_bwd = tp_layer.bwd;
    c.tp_rec = tp_layer.rec;
    if (overlapped) {
      // Overlapped, each collective hides behind its own GEMM only, as in
      // the closed form (TpExposedCollectives): the engine runs what stays
      // exposed after the pass.
      const TpLayerComm x =
          TpExposedLayer(p, c.moe_fraction, down_proj_skipped, dense_t, moe_t, dev.overlap_slowdown, gathers,
                         layer_time);
      c.tp_fwd = x.fwd;
      c.tp_bwd = x.bwd;
      c.tp_rec = x.rec;
    }
    const TpHeadComm tp_head = TpHeadCollectives(p, tokens, layer_act_bytes, tp_time);
    c.tp_embed_fwd = tp_head.embed_fwd;
    c.tp_embed_bwd = tp_head.embed_bwd;
    c.tp_head_fwd = tp_head.head_fwd;
    c.tp_head_bwd = tp_head.head_bwd;
  }
  c.tokens = tokens;
  c.act_bytes = act;
  c.overlap_slowdown = dev.overlap_slowdown;
  if (p.cp > 1) {
    CpExposed cp_t;
    c.cp_group = PlaceTiled(network_, system_, p.cp, st.cp);
    ChooseCpScheme(network_, c.cp_group, m, p, tokens, act, c.dense.attention_fwd, &cp_t, nullptr);
    c.cp_fwd = cp_t.fwd;
    c.cp_bwd = cp_t.bwd;
  }
  if (m.experts > 1 && p.ep > 1) {
    c.ep_layer = ExpertLayerComm(network_, system_, m, p, st, tokens, act, shape.expert_load, &c.ep_group, dp);
    if (parallelism::OverlapsExpertComm(p))
      c.ep_layer = ExposedExpertComm(c.ep_layer, c.moe.fwd + c.moe.bwd, dev.overlap_slowdown);
  }
  if (p.pp > 1)
    c.p2p = network_.Time(Collective::kSendRecv, layer_act_bytes / static_cast<double>(p.tp),
                          network_.Place(p.pp, st.pp));

  const double tp_d = static_cast<double>(p.tp);
  const double routed = models::RoutedExpertParameters(m);
  const double etp_d = static_cast<double>(parallelism::ExpertTensorParallel(p));
  c.layer_params = ((1 - c.moe_fraction) * dense_layer_params_ + c.moe_fraction * (moe_layer_params_ - routed) +
                    c.moe_fraction * routed / static_cast<double>(p.ep) * (tp_d / etp_d)) / tp_d;
  c.embed_params = models::EmbeddingParameters(m, w.seq_len) / tp_d;
  c.head_params = (m.tied_embeddings ? models::EmbeddingParameters(m, w.seq_len) : models::HeadParameters(m)) / tp_d +
                  MtpParamsOnDevice(m, p);
  c.weight_bytes = act;
  c.dense_dp = DenseDataParallel(p, dp);
  // As Run(): FSDP2's copy-out of each gather (Zero3CopyOut).
  const CopyOutBytes copy_bytes = Zero3CopyOut(m, p, c.dense_dp, c.layer_params, c.embed_params, c.head_params, act);
  auto copy_time = [&](double bytes) { return bytes > 0 ? hardware::MemoryTime(dev, bytes) : 0.0; };
  c.zero3_copy_out_layer = copy_time(copy_bytes.layer);
  c.zero3_copy_out_embed = copy_time(copy_bytes.embed);
  c.zero3_copy_out_head = copy_time(copy_bytes.head);
  c.grad_bytes = GradBytes(p);
  c.optimizer_bytes_per_param = OptimizerStepBytesPerParam(p, act);  // with clipping, as Run()
  c.grad_buffer_bytes_per_param = GradBufferBytesPerParam(p, c.grad_bytes, false);
  c.grad_buffer_scaled_bytes_per_param = GradBufferBytesPerParam(p, c.grad_bytes, true);
  c.grad_accumulation_bytes_per_param = GradAccumulationBytesPerParam(p, act, c.grad_bytes);
  c.grad_accumulation_unvec_bytes_per_param = GradAccumulationUnvecBytesPerParam(p);
  c.recompute_recast_bytes_per_param = RecomputeRecastBytesPerParam(p);
  // The two data-parallel groups and the routed experts' share of a
  // layer's parameters, as Run() (DataParallelGroupsOf, StageParamsOf).
  c.dp_groups = DataParallelGroupsOf(network_, p, dp, st);
  c.expert_layer_params =
      ExpertsApart(p) ? c.moe_fraction * routed / static_cast<double>(p.ep) / etp_d : 0.0;
  c.head_expert_params = MtpExpertParamsOnDevice(m, p);
  // As Run(): one offloaded layer's copy to or from host memory
  // (training.offload_activation_layers, ActivationOffloadExposed).
  if (p.offload_activation_layers > 0) c.act_offload_copy = ActivationCopySeconds(m, p, w.seq_len, system_);
  return c;
}

std::string ExplainInfeasible(const TrainingEstimate& e, const Scenario& s) {
  const auto& p = s.training;
  switch (e.infeasible) {
    case Infeasible::kNone: return {};
    case Infeasible::kDeviceCount:
      return "tp x pp x cp x dp does not equal the " + std::to_string(hardware::DeviceCount(s.system)) + " devices";
    case Infeasible::kBatchSplit:
      return "global batch " + std::to_string(s.workload.global_batch) + " is not a multiple of dp x micro_batch (" +
             std::to_string(e.dp * p.micro_batch) + ")";
    case Infeasible::kHeadsSplit:
      if (p.cp > 1 && !CpSchemeFits(s.model, p.cp_scheme, p.tp, p.cp))
        return "cp_scheme ulysses scatters heads over cp: the " +
               std::to_string(s.model.heads / std::max<int64_t>(1, p.tp)) +
               " heads per tp rank are not a multiple of cp = " + std::to_string(p.cp);
      if (!CpPlanRuns(s.model, p))
        return "materialized attention takes context parallelism only by Ulysses (ring and all-gather CP are "
               "loops of a fused attention kernel; Megatron-Core's unfused attention asserts cp 1), and " +
               std::string(p.cp_scheme == parallelism::CpScheme::kAuto
                               ? "Ulysses cannot split the " + std::to_string(s.model.heads / std::max<int64_t>(1, p.tp)) +
                                     " heads per tp rank over cp = " + std::to_string(p.cp)
                               : "the plan names " + std::string(parallelism::CpSchemeName(p.cp_scheme)));
      return "tp/cp/ep/etp do not divide the heads, MLP, sequence or experts, or ep x etp does not divide "
             "tp x cp x dp";
    case Infeasible::kLayerSplit:
      if (parallelism::OffloadLayersInvalid(p, s.model.layers))
        return "offload_activation_layers " + std::to_string(p.offload_activation_layers) +
               " is not below the " + std::to_string(s.model.layers / std::max<int64_t>(1, p.pp)) +
               " layers of a pipeline stage (the last layer keeps its activations)";
      if (parallelism::StageLayoutInvalid(p, s.model.layers))
        return "the first and last stage layers (" + std::to_string(parallelism::FirstStageLayers(p, s.model.layers)) +
               ", " + std::to_string(parallelism::LastStageLayers(p, s.model.layers)) + ") do not fit pp " +
               std::to_string(p.pp) + " and the " + std::to_string(s.model.layers) + " layers";
      return "pp x interleave exceeds the " + std::to_string(s.model.layers) + " layers";
    case Infeasible::kOutOfMemory:
      return "needs " + base::FormatQuantity(e.memory.total(), base::Dimension::kBytes) +
             " per device (weights " + base::FormatQuantity(e.memory.weights, base::Dimension::kBytes) +
             ", gradients " + base::FormatQuantity(e.memory.gradients, base::Dimension::kBytes) +
             ", optimizer " + base::FormatQuantity(e.memory.optimizer, base::Dimension::kBytes) +
             ", activations " + base::FormatQuantity(e.memory.activations, base::Dimension::kBytes) +
             ") but the device has " + base::FormatQuantity(e.memory_capacity, base::Dimension::kBytes);
    case Infeasible::kNoNetwork:
      return "the plan spans devices but the system declares no network tier";
    case Infeasible::kInvalidResult:
      return std::string("internal error: the estimate breaks an invariant (") +
             (e.invariant != nullptr ? e.invariant : "unknown") + ") for model '" + s.model.name +
             "' on " + std::to_string(hardware::DeviceCount(s.system)) + " x " +
             s.system.device.name + ", tp " + std::to_string(p.tp) + " pp " + std::to_string(p.pp) +
             " cp " + std::to_string(p.cp) + " ep " + std::to_string(p.ep) + " dp " +
             std::to_string(e.dp) + ", micro batch " + std::to_string(p.micro_batch) +
             ", global batch " + std::to_string(s.workload.global_batch) + ", sequence " +
             std::to_string(s.workload.seq_len) + (s.file.empty() ? "" : " (" + s.file + ")") +
             "; the inputs are valid but the model cannot cost them: please report it";
    case Infeasible::kHostOutOfMemory:
      return "the offloaded optimizer states need " +
             base::FormatQuantity(e.memory.host_optimizer * static_cast<double>(s.system.devices_per_node),
                                  base::Dimension::kBytes) +
             " of host memory per node (" +
             base::FormatQuantity(e.memory.host_optimizer, base::Dimension::kBytes) + " for each of its " +
             std::to_string(s.system.devices_per_node) + " devices) but system.host_memory is " +
             base::FormatQuantity(s.system.host_memory, base::Dimension::kBytes);
    case Infeasible::kDualPipeShape:
      return "DualPipe needs an even pp and an even number of microbatches, at least 2 x pp (here pp " +
             std::to_string(p.pp) + ", " + std::to_string(e.microbatches) +
             " microbatches per iteration; deepseek-ai/DualPipe asserts the same); change pp, micro_batch or "
             "the global batch, or choose another training.schedule";
    case Infeasible::kInterleaveMicrobatches:
      return "interleaved 1F1B needs the " + std::to_string(e.microbatches) +
             " microbatches per iteration to be a multiple of pp = " + std::to_string(p.pp) +
             " (Megatron-LM refuses other counts); change micro_batch or the global batch, or set "
             "training.interleave=1";
  }
  return {};
}


// --- per-operator breakdown ----------------------------------------------------

const char* OpBoundName(OpBound b) {
  switch (b) {
    case OpBound::kCompute: return "compute";
    case OpBound::kMemory: return "memory";
    case OpBound::kLaunch: return "launch";
    case OpBound::kNone: return "none";
  }
  return "compute";
}

namespace {

// The roofline's larger part, or the kernel overhead when that is longer
// than both (hardware/device_model.h: t = combine(compute, memory) + overhead).
OpBound BoundOf(const hardware::DeviceSpec& d, double compute_s, double memory_s) {
  if (compute_s <= 0 && memory_s <= 0) return OpBound::kNone;  // no kernel (MemoryTime of 0 bytes is 0)
  if (d.kernel_overhead > compute_s && d.kernel_overhead > memory_s) return OpBound::kLaunch;
  return compute_s >= memory_s ? OpBound::kCompute : OpBound::kMemory;
}

// Seconds of memory traffic alone, without the kernel overhead (MemoryTime's
// transfer part).
double TransferTime(const hardware::DeviceSpec& d, double bytes) {
  return bytes > 0 ? bytes / (d.memory_bandwidth * d.memory_efficiency.At(bytes)) : 0.0;
}

// One operator through Times() on its own: the seconds Times() adds for it
// within its list (Times sums its operators' f and b one by one, so the lines
// of a list, summed in order, give the list's OpTimes to the bit).
OperatorLine LineOf(const hardware::DeviceSpec& d, hardware::DataType dt, parallelism::Fp8Recipe recipe,
                    const Op& op, hardware::AttentionKernel kernel, double local_experts) {
  models::OpList one;
  one.Add(op);
  const OpTimes t = Times(d, dt, recipe, one, true, kernel, local_experts);
  OperatorLine l;
  l.name = op.name;
  l.fwd_s = t.fwd;
  l.bwd_s = t.bwd;
  // Times(): attention cores stay in BF16 under FP8 training.
  const hardware::DataType attention_dt = dt == hardware::DataType::kFp8 ? hardware::DataType::kBf16 : dt;
  const double bw = d.memory_bandwidth;
  switch (op.kind) {
    case OpKind::kGemm:
    case OpKind::kBatchedGemm: {
      const hardware::DataType gemm_dt = TrainingGemmDataType(op, dt, recipe);
      l.kind = op.kind == OpKind::kBatchedGemm ? "batched_gemm" : op.expert ? "grouped_gemm" : "gemm";
      l.fwd_flops = op.flops;
      l.bwd_flops = 2 * op.flops;  // input and weight gradients
      l.fwd_bytes = op.bytes;
      l.bwd_bytes = 2 * op.bytes;
      if (op.kind == OpKind::kGemm && dt == hardware::DataType::kFp8 && !op.router) {
        const PassTimes cast = op.expert ? Fp8GroupedCastTimes(d, op, recipe, local_experts)
                                         : Fp8LinearCastTimes(d, op, recipe);
        l.fp8_cast_fwd_s = cast.fwd;
        l.fp8_cast_bwd_s = cast.bwd;
      }
      if (op.bias_grad_bytes > 0) l.bias_grad_bwd_s = hardware::MemoryTime(d, static_cast<double>(op.bias_grad_bytes));
      const double peak = hardware::PeakFlops(d, gemm_dt);
      const double gemm_fwd = l.fwd_s - l.fp8_cast_fwd_s,
                   gemm_bwd = l.bwd_s - l.fp8_cast_bwd_s - l.bias_grad_bwd_s;
      l.fwd_fraction = gemm_fwd > 0 ? l.fwd_flops / (gemm_fwd * peak) : 0;
      l.bwd_fraction = gemm_bwd > 0 ? l.bwd_flops / (gemm_bwd * peak) : 0;
      const hardware::GemmParts parts =
          hardware::GemmPartsOf(d, gemm_dt, op.flops, op.bytes, Mxfp8LinearGemm(op, dt, recipe));
      const models::GemmDepths depth = models::DepthsOf(op);
      l.fwd_bound = BoundOf(d, parts.compute_s / hardware::GemmDepthFactor(gemm_dt, depth.fwd), parts.memory_s);
      l.bwd_bound = BoundOf(d, parts.compute_s / hardware::GemmDepthFactor(gemm_dt, depth.dgrad), parts.memory_s);
      break;
    }
    case OpKind::kFlashAttention: {
      l.kind = "attention";
      // Times(): a causal kernel does half the score blocks; the backward
      // 2.5x the forward's FLOP and twice its bytes.
      l.fwd_flops = 0.5 * op.flops;
      l.bwd_flops = 2.5 * l.fwd_flops;
      l.fwd_bytes = op.bytes;
      l.bwd_bytes = 2 * op.bytes;
      const double peak = hardware::PeakFlops(d, attention_dt);
      l.fwd_fraction = l.fwd_s > 0 ? l.fwd_flops / (l.fwd_s * peak) : 0;
      l.bwd_fraction = l.bwd_s > 0 ? l.bwd_flops / (l.bwd_s * peak) : 0;
      // The kernel's time past its overhead is its compute unless its
      // traffic alone is as long (a max roofline).
      const double fwd_mem = TransferTime(d, l.fwd_bytes), bwd_mem = TransferTime(d, l.bwd_bytes);
      const double fwd_body = l.fwd_s - d.kernel_overhead, bwd_body = l.bwd_s - d.kernel_overhead;
      l.fwd_bound = BoundOf(d, fwd_body > fwd_mem ? fwd_body : 0, fwd_mem);
      l.bwd_bound = BoundOf(d, bwd_body > bwd_mem ? bwd_body : 0, bwd_mem);
      break;
    }
    case OpKind::kElementwise: {
      l.kind = "elementwise";
      l.fwd_bytes = op.bytes;
      l.bwd_bytes = models::BackwardBytes(op);
      l.fwd_fraction = l.fwd_s > 0 ? l.fwd_bytes / (l.fwd_s * bw) : 0;
      l.bwd_fraction = l.bwd_s > 0 ? l.bwd_bytes / (l.bwd_s * bw) : 0;
      l.fwd_bound = BoundOf(d, 0, TransferTime(d, l.fwd_bytes));
      l.bwd_bound = BoundOf(d, 0, TransferTime(d, l.bwd_bytes));
      break;
    }
  }
  return l;
}

// The lines of a list of operators and their sum, which is Times()' fwd and
// bwd of the list.
OperatorGroup GroupOf(const hardware::DeviceSpec& d, hardware::DataType dt, parallelism::Fp8Recipe recipe,
                      const models::OpList& ops, hardware::AttentionKernel kernel, double local_experts) {
  OperatorGroup g;
  for (int i = 0; i < ops.count; ++i) {
    g.ops.push_back(LineOf(d, dt, recipe, ops.ops[static_cast<size_t>(i)], kernel, local_experts));
    g.fwd_s += g.ops.back().fwd_s;
    g.bwd_s += g.ops.back().bwd_s;
  }
  return g;
}

// A memory-bound step kernel added to a group after its operators (the loss,
// the MoE permutes): its line, and the group's sums carried on.
void AddMemoryLine(OperatorGroup& g, const hardware::DeviceSpec& d, const char* name, const char* kind,
                   double fwd_s, double bwd_s, double fwd_bytes, double bwd_bytes) {
  OperatorLine l;
  l.name = name;
  l.kind = kind;
  l.fwd_s = fwd_s;
  l.bwd_s = bwd_s;
  l.fwd_bytes = fwd_bytes;
  l.bwd_bytes = bwd_bytes;
  l.fwd_fraction = fwd_s > 0 ? fwd_bytes / (fwd_s * d.memory_bandwidth) : 0;
  l.bwd_fraction = bwd_s > 0 ? bwd_bytes / (bwd_s * d.memory_bandwidth) : 0;
  l.fwd_bound = l.bwd_bound = OpBound::kMemory;
  g.ops.push_back(l);
  g.fwd_s += fwd_s;
  g.bwd_s += bwd_s;
}

}  // namespace

OperatorBreakdown TrainingEstimator::Breakdown(const TrainingPlan& p, const parallelism::Workload& w,
                                               const TrainingEstimate& e) const {
  // The steps of PrepareInto(), operator by operator.
  OperatorBreakdown b;
  const models::ModelSpec& m = model_;
  const hardware::DeviceSpec& dev = system_.device;
  const auto [dt, attn_kernel, act, shape, local] = PricingOf(m, p, w);
  b.peak_flops = hardware::PeakFlops(dev, dt);
  b.memory_bandwidth = dev.memory_bandwidth;
  models::OpList ops;
  models::LayerOps(m, shape, false, p.ep, ops);
  b.dense = GroupOf(dev, dt, p.fp8_recipe, ops, attn_kernel, local);
  const OpTimes dense_t = Times(dev, dt, p.fp8_recipe, ops, true, attn_kernel, local);
  OpTimes moe_t;
  if (m.experts > 1) {
    models::LayerOps(m, shape, true, p.ep, ops);
    b.moe = GroupOf(dev, dt, p.fp8_recipe, ops, attn_kernel, local);
    moe_t = Times(dev, dt, p.fp8_recipe, ops, true, attn_kernel, local);
    const double before_sync = moe_t.fwd - moe_t.after_router_fwd;
    // AddExpertPermute: the dispatcher's permute and unpermute, forward and
    // backward alike.
    const double tokens = static_cast<double>(shape.micro_batch) * static_cast<double>(shape.seq);
    const ExpertPermuteTraffic traffic = ExpertPermuteBytes(m, p, tokens, shape.act_bytes, shape.expert_load);
    const double permute = ExpertPermuteTime(dev, traffic);
    const double permute_bytes = traffic.permute_bytes + traffic.unpermute_bytes;
    AddMemoryLine(b.moe, dev, "expert_permute", "permute", permute, permute, permute_bytes, permute_bytes);
    AddExpertPermute(dev, m, p, shape, moe_t.fwd, moe_t.bwd);
    // AddMoeHostBound: what the host's kernel launches add beyond the
    // kernels' own time.
    double fwd = moe_t.fwd, bwd = moe_t.bwd;
    AddMoeHostBound(p, ops, local, before_sync, fwd, bwd);
    if (fwd > moe_t.fwd || bwd > moe_t.bwd) {
      OperatorLine l;
      l.name = "host_launch_bound";
      l.kind = "host_bound";
      l.fwd_s = fwd - moe_t.fwd;
      l.bwd_s = bwd - moe_t.bwd;
      l.fwd_bound = l.bwd_bound = OpBound::kLaunch;
      b.moe.ops.push_back(l);
    }
    b.moe.fwd_s = fwd;
    b.moe.bwd_s = bwd;
  }
  // The head as PrepareInto prices it: its GEMM datatype, the plan's loss
  // kernels (LossTimes), the MTP modules.
  TrainingHeadOps(m, shape, ops);
  b.head = GroupOf(dev, HeadDataType(dt), p.fp8_recipe, ops, attn_kernel, local);
  {
    const double tokens = static_cast<double>(shape.micro_batch) * static_cast<double>(shape.seq);
    const double vocab_shard = static_cast<double>(m.vocab) / static_cast<double>(shape.tp);
    const PassTimes ce = LossTimes(dev, tokens, vocab_shard, p.loss_kernel);
    AddMemoryLine(b.head, dev,
                  p.loss_kernel == parallelism::LossKernel::kFusedBf16 ? "cross_entropy_fused" : "cross_entropy_fp32",
                  "loss", ce.fwd, ce.bwd, LossFwdBytesPerLogit(p.loss_kernel) * tokens * vocab_shard,
                  LossBwdBytesPerLogit(p.loss_kernel) * tokens * vocab_shard);
  }
  if (m.mtp_depth > 0) {
    OpTimes head_t;
    head_t.fwd = b.head.fwd_s;
    head_t.bwd = b.head.bwd_s;
    OpTimes with_mtp = head_t;
    AddMtpModules(m, dense_t, moe_t, with_mtp);
    OperatorLine l;
    l.name = "mtp_modules";
    l.kind = "mtp";
    l.fwd_s = with_mtp.fwd - head_t.fwd;
    l.bwd_s = with_mtp.bwd - head_t.bwd;
    b.head.ops.push_back(l);
    b.head.fwd_s = with_mtp.fwd;
    b.head.bwd_s = with_mtp.bwd;
  }
  models::EmbeddingOps(m, shape, ops);
  b.embed = GroupOf(dev, dt, p.fp8_recipe, ops, attn_kernel, local);

  // The stage that paces the pipeline holds the most layers (StageLayers).
  const parallelism::EvenStageLayers split = parallelism::StageLayers(p, m.layers);
  const double stage_layers = static_cast<double>(std::max({split.first, split.mid, split.last}));
  b.moe_layers = stage_layers * models::MoeFraction(m);
  b.layers = stage_layers - b.moe_layers;
  b.microbatches = e.microbatches;
  b.optimizer_s = e.time.optimizer;

  // Communication: the same estimate with every overlap off gives each
  // kind's traffic on its own (Evaluate: tp_comm_overlap, ep_comm_overlap,
  // dp_overlap), against what the estimate leaves exposed.
  TrainingPlan bare = p;
  bare.tp_comm_overlap = false;
  bare.ep_comm_overlap = false;
  bare.dp_overlap = false;
  bare.pp_comm_overlap = false;
  const TrainingEstimate alone = Run(bare, w);
  const TimeBreakdown& t = e.time;
  auto add = [&](const char* name, double traffic, double exposed) {
    if (traffic != 0 || exposed != 0) b.comm.push_back({name, traffic, exposed});
  };
  add("tp_collectives", alone.time.tp_comm, t.tp_comm);
  add("cp_kv_exchange", t.cp_comm != 0 ? -1.0 : 0.0, t.cp_comm);
  // DualPipe overlaps the all-to-alls whatever the flags say
  // (parallelism::OverlapsExpertComm): their traffic is the exposed time
  // scaled by what one layer's all-to-alls take over what they leave exposed.
  double ep_traffic = alone.time.ep_comm;
  if (parallelism::RunsDualPipe(p) && t.ep_comm > 0) {
    TrainingPlan plain = bare;
    plain.schedule = parallelism::Schedule::kOneFOneB;
    const double exposed_layer = Costs(p, w).ep_layer;
    if (exposed_layer > 0) ep_traffic = t.ep_comm * Costs(plain, w).ep_layer / exposed_layer;
  }
  add("ep_all_to_all", ep_traffic, t.ep_comm);
  // The pipeline sends likewise: with the overlapped interleaved sends off
  // they are all exposed (alone); DualPipe's wait only on the first
  // microbatch's chain (parallelism::CriticalPathTransfers), and move what
  // 1F1B would send at one chunk a device.
  double pp_traffic = alone.time.pp_p2p;
  if (parallelism::RunsDualPipe(p) && t.pp_p2p > 0) {
    TrainingPlan plain = p;
    plain.schedule = parallelism::Schedule::kOneFOneB;
    plain.interleave = 1;
    pp_traffic = t.pp_p2p * parallelism::CriticalPathTransfers(plain, e.microbatches) /
                 parallelism::CriticalPathTransfers(p, e.microbatches);
  }
  add("pp_point_to_point", pp_traffic, t.pp_p2p);
  add("dp_gradients_and_parameters", alone.time.dp_comm, t.dp_comm);
  return b;
}

}  // namespace orrery::engine
