#include "core/estimate/event_estimator.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/estimate/parallel_comm.h"
#include "hardware/device_model.h"
#include "parallelism/memory_model.h"
#include "parallelism/schedule.h"

namespace orrery::engine {

using hardware::Collective;
using parallelism::ChunkWork;
using parallelism::PipelineSchedule;
using parallelism::Recompute;
using parallelism::TrainingPlan;

PipelineSchedule StepSchedule(const TrainingPlan& p) {
  switch (p.schedule) {
    case parallelism::Schedule::kGpipe: return PipelineSchedule::kGpipe;
    case parallelism::Schedule::kZeroBubbleH1: return PipelineSchedule::kZeroBubbleH1;
    case parallelism::Schedule::kVMin: return PipelineSchedule::kVMin;
    case parallelism::Schedule::kVHalf: return PipelineSchedule::kVHalf;
    case parallelism::Schedule::kVZeroBubble: return PipelineSchedule::kVZeroBubble;
    // One stage has nothing to pair: plain 1F1B (parallelism::RunsDualPipe).
    case parallelism::Schedule::kDualPipe: return p.pp > 1 ? PipelineSchedule::kDualPipe : PipelineSchedule::kOneFOneB;
    case parallelism::Schedule::kOneFOneB:
    case parallelism::Schedule::kInterleaved:
      break;
  }
  return p.interleave > 1 ? PipelineSchedule::kInterleaved : PipelineSchedule::kOneFOneB;
}

namespace {

bool IsV(PipelineSchedule s) {
  return s == PipelineSchedule::kVMin || s == PipelineSchedule::kVHalf ||
         s == PipelineSchedule::kVZeroBubble;
}

// `total` split into `parts` as evenly as whole numbers allow; the
// remainder goes to the parts listed first in `order`. The even split of the
// layers over the devices (or the V-shape's virtual stages) is
// parallelism::EvenSplitLayersOn, what the closed form prices; this one deals
// the layers left between set end stages and a device's layers over its
// chunks.
std::vector<double> Split(int64_t total, int64_t parts, const std::vector<int64_t>& order) {
  const int64_t whole = total / parts;  // floor: the remainder is dealt below
  std::vector<double> out(static_cast<size_t>(parts), static_cast<double>(whole));
  int64_t rest = total % parts;
  for (int64_t i : order) {
    if (rest-- <= 0) break;
    out[static_cast<size_t>(i)] += 1;
  }
  return out;
}

// Work of a stage (or chunk) of `n` layers, with the embedding and/or the LM
// head, per microbatch: the closed form's stage time, kept in its parts.
// Without gradient-accumulation fusion each microbatch's backward of a chunk
// adds its weight gradients into the gradient buffer in a memory-bound pass
// over the chunk's parameters, part of its weight-gradient (W) work, as the
// closed form (GradAccumulationBytesPerParam, training_estimator.cpp), its
// non-vectorized part (autocast's weight-gradient upcast) at the device's
// element rate (ElementwiseTime is MemoryTime where there is none).
void AddGradAccumulation(const OperatorCosts& c, const hardware::DeviceSpec& d, double params, ChunkWork& w) {
  if (c.grad_accumulation_bytes_per_param <= 0 || params <= 0) return;
  const double t = hardware::ElementwiseTime(d, params * c.grad_accumulation_bytes_per_param,
                                             params * c.grad_accumulation_unvec_bytes_per_param, params);
  w.backward += t;
  w.backward_weight += t;
}

// Full recompute under autocast casts the recomputed layers' weights once
// more (RecomputeRecastBytesPerParam, training_estimator.cpp): one memory
// pass over the recomputed share of a chunk's `n` layers, part of its
// recompute, as the closed form.
void AddRecomputeRecast(const OperatorCosts& c, const hardware::DeviceSpec& d, const TrainingPlan& p, double n,
                        ChunkWork& w) {
  const double layers = n * parallelism::FullRecomputeShare(p);
  if (c.recompute_recast_bytes_per_param <= 0 || layers <= 0) return;
  w.recompute += hardware::MemoryTime(d, layers * c.layer_params * c.recompute_recast_bytes_per_param);
}

ChunkWork StageWork(const OperatorCosts& c, const TrainingPlan& p, double n, bool embed, bool head) {
  const double f = c.moe_fraction;
  auto mix = [&](double LayerCosts::*x) { return n * ((1 - f) * c.dense.*x + f * c.moe.*x); };
  ChunkWork w;
  w.forward = mix(&LayerCosts::fwd) + (embed ? c.embed.fwd : 0) + (head ? c.head.fwd : 0);
  w.backward = mix(&LayerCosts::bwd) + (embed ? c.embed.bwd : 0) + (head ? c.head.bwd : 0);
  w.backward_weight =
      mix(&LayerCosts::bwd_weight) + (embed ? c.embed.bwd_weight : 0) + (head ? c.head.bwd_weight : 0);
  // Under full recompute the recomputed share of the layers (all, or every
  // recompute_interval-th: parallelism::FullRecomputeShare) runs its forward
  // and its TP collectives again, as the closed form.
  const double rec_share = parallelism::FullRecomputeShare(p);
  if (p.recompute == Recompute::kFull)
    w.recompute = rec_share * (mix(&LayerCosts::fwd) - (p.checkpoint_early_stop ? mix(&LayerCosts::early_stop_fwd) : 0.0));
  else if (p.recompute == Recompute::kSelective) w.recompute = mix(&LayerCosts::attention_fwd);
  // torchtitan's op-level SAC: every layer's unsaved operators and TP
  // collectives again (models::LayerOps' policy), as the closed form.
  else if (p.recompute == Recompute::kOp) w.recompute = mix(&LayerCosts::op_sac_fwd);
  // The MLA up projections once more (parallelism::RecomputesMlaUpProj;
  // mla_up_fwd is 0 for a model without MLA).
  if (p.recompute != Recompute::kFull && p.recompute_mla_up_proj) w.recompute += mix(&LayerCosts::mla_up_fwd);
  // The dense layers' MLP blocks once more (parallelism::RecomputesMlp).
  if (parallelism::RecomputesMlp(p)) w.recompute += mix(&LayerCosts::mlp_fwd);
  // The module norms and the routed experts' activation once more
  // (parallelism::RecomputesLayernorm, RecomputesMoeAct).
  if (parallelism::RecomputesLayernorm(p)) w.recompute += mix(&LayerCosts::norm_fwd);
  if (parallelism::RecomputesMoeAct(p)) w.recompute += mix(&LayerCosts::moe_act_fwd);
  // FSDP2's copy-out of each gathered unit on the compute stream, as the
  // closed form (Zero3CopyOutBytes, parallel_comm.h).
  // Under a pipeline once per step, before the first microbatch's forward
  // (Zero3GathersOncePerStep, parallel_comm.h; ChunkWork::zero3_copy_out).
  const double copy_out =
      n * c.zero3_copy_out_layer + (embed ? c.zero3_copy_out_embed : 0) + (head ? c.zero3_copy_out_head : 0);
  if (Zero3GathersOncePerStep(p)) {
    w.zero3_copy_out = copy_out;
  } else {
    w.forward += copy_out;
    w.backward += copy_out;
    w.recompute += n * (Zero3GathersPerMicrobatch(p) - 2) * c.zero3_copy_out_layer;
  }
  w.tp_forward = n * c.tp_fwd;
  w.tp_backward = n * c.tp_bwd;
  // Under TP overlap these are what stays exposed beside each collective's
  // own GEMM (OperatorCosts::tp_fwd; TpExposedCollectives).
  w.tp_recompute = (p.recompute == Recompute::kOp ? 1.0 : rec_share) * n * c.tp_rec;
  // ZeRO-3 gathers and reduce-scatters layer by layer (ChunkWork::zero3_units;
  // the embedding and the LM head ride with the first and last layer's
  // share, as the closed form's one layer of exposed gather and
  // reduce-scatter per iteration).
  w.zero3_units = std::max(1.0, n);
  // EP: two of the four all-to-alls forward, two backward.
  // The embedding's and the LM head's TP collectives, never overlapped (as
  // the closed form, TpHeadCollectives).
  w.head_tp_comm = (embed ? c.tp_embed_fwd + c.tp_embed_bwd : 0) + (head ? c.tp_head_fwd + c.tp_head_bwd : 0);
  w.forward_comm = n * c.cp_fwd + n * f * c.ep_layer / 2 + (embed ? c.tp_embed_fwd : 0) + (head ? c.tp_head_fwd : 0);
  w.backward_comm =
      n * c.cp_bwd + n * f * c.ep_layer / 2 + (embed ? c.tp_embed_bwd : 0) + (head ? c.tp_head_bwd : 0);
  return w;
}

// The closed form's per-microbatch total of a stage (TrainingEstimator::Run,
// "one stage, one microbatch"): what picks its pace-setting stage.
double ClosedFormStageTotal(const ChunkWork& w) {
  const double tp = w.tp_forward + w.tp_backward + w.tp_recompute;
  return w.forward + w.backward + w.recompute + tp + w.forward_comm + w.backward_comm;
}

// a k + b l, member by member.
ChunkWork Combined(ChunkWork a, double k, const ChunkWork& b, double l) {
  ChunkWork bb = b;
  double* xs[] = {&a.forward, &a.backward, &a.backward_weight, &a.recompute, &a.tp_forward, &a.tp_backward, &a.tp_recompute,
                  &a.forward_comm, &a.backward_comm, &a.head_tp_comm, &a.activation_bytes, &a.param_gather,
                  &a.grad_reduce, &a.zero3_units, &a.zero3_copy_out};
  const double* ys[] = {&bb.forward, &bb.backward, &bb.backward_weight, &bb.recompute, &bb.tp_forward, &bb.tp_backward, &bb.tp_recompute,
                        &bb.forward_comm, &bb.backward_comm, &bb.head_tp_comm, &bb.activation_bytes,
                        &bb.param_gather, &bb.grad_reduce, &bb.zero3_units, &bb.zero3_copy_out};
  for (size_t i = 0; i < std::size(xs); ++i) *xs[i] = *xs[i] * k + *ys[i] * l;
  return a;
}

ChunkWork Scaled(const ChunkWork& w, double k) { return Combined(w, k, w, 0.0); }

}  // namespace

EventEstimator::EventEstimator(const models::ModelSpec& model, const hardware::SystemSpec& system)
    : model_(model), system_(system), closed_(model, system) {}

EventError EventEstimator::Spec(const TrainingPlan& p, const parallelism::Workload& w,
                                const EventOptions& options, parallelism::StepSpec& out,
                                std::vector<double>* stage_layers) const {
  const models::ModelSpec& m = model_;
  const OperatorCosts c = closed_.Costs(p, w);
  const PipelineSchedule schedule = StepSchedule(p);
  const int64_t pp = p.pp;
  const int64_t inner = p.tp * p.pp * p.cp;
  const int64_t dp = p.dp > 0 ? p.dp : hardware::DeviceCount(system_) / inner;
  const bool vshape = IsV(schedule);
  // DualPipe: device d runs stage d of the one direction (chunk 0) and
  // stage pp-1-d of the other (chunk 1), placed as the V-shape's virtual
  // stages; each is a whole stage, not a part of one.
  const bool dualpipe = schedule == PipelineSchedule::kDualPipe;
  const bool mirrored = vshape || dualpipe;
  int64_t v = p.interleave > 1 ? p.interleave : 1;
  if (schedule == PipelineSchedule::kGpipe || schedule == PipelineSchedule::kZeroBubbleH1 ||
      schedule == PipelineSchedule::kOneFOneB)
    v = 1;
  if (mirrored) v = 2;
  if (p.straggler_stage >= pp) return EventError::kStraggler;

  out = parallelism::StepSpec{};
  out.stages = pp;
  out.microbatches = w.global_batch / (dp * p.micro_batch);
  out.chunks = v;
  out.schedule = schedule;
  out.p2p = c.p2p;
  // DualPipe sends beside the paired chunk (DeepSeek-V3 Sec. 3.2.1).
  out.p2p_overlap = parallelism::OverlapsPipelineSends(p) || dualpipe;
  out.dp_overlap = p.dp_overlap;
  out.zero3 = p.zero >= 3 && c.dense_dp > 1;
  out.zero3_once_per_step = Zero3GathersOncePerStep(p);  // as the closed form (parallel_comm.h)
  out.zero3_gather_for_recompute = !out.zero3_once_per_step && Zero3GathersPerMicrobatch(p) > 2;
  out.zero3_backward_prefetch = p.zero3_backward_prefetch;
  if (p.straggler_stage >= 0 && p.straggler_slowdown > 1) {
    out.slowdown.assign(static_cast<size_t>(pp), 1.0);
    out.slowdown[static_cast<size_t>(p.straggler_stage)] = p.straggler_slowdown;
  }

  // --- layers: per virtual stage -------------------------------------------------
  // Virtual stage g runs on device g mod pp (chunk g / pp), or, for the
  // V-shape, on device g (chunk 0) going down and 2pp-1-g (chunk 1) coming
  // back. The embedding sits on virtual stage 0, the LM head on the last.
  const int64_t S = pp * v;
  const int64_t L = m.layers;
  auto device_of = [&](int64_t g) { return mirrored ? (g < pp ? g : 2 * pp - 1 - g) : g % pp; };
  auto chunk_of = [&](int64_t g) { return mirrored ? (g < pp ? 0 : 1) : g / pp; };
  // The model stage a virtual stage runs (DualPipe: each direction all pp),
  // and whether it holds the embedding or the LM head.
  auto model_stage = [&](int64_t g) { return dualpipe ? g % pp : g; };
  const int64_t model_stages = dualpipe ? pp : S;
  auto has_embed = [&](int64_t g) { return model_stage(g) == 0; };
  auto has_head = [&](int64_t g) { return model_stage(g) == model_stages - 1; };
  std::vector<double> vs_layers(static_cast<size_t>(S), 0.0);
  // First and last stage layers as the plan sets them, or as counting the
  // embedding and the loss as layers leaves them (parallelism::FirstStageLayers).
  const int64_t first_set = parallelism::FirstStageLayers(p, L), last_set = parallelism::LastStageLayers(p, L);
  const bool custom = pp > 1 && (first_set > 0 || last_set > 0);
  if (vshape) {
    // The first and last virtual stages take first/last_stage_layers.
    std::vector<int64_t> order;
    for (int64_t g = 1; g < S - 1; ++g) order.push_back(g);
    // Counting the embedding and the loss as layers, the units split over
    // the 2 pp virtual stages: the first and the last take one layer fewer.
    const int64_t vs_units = (parallelism::PipelineSplitUnits(p, L) + S - 1) / S - 1;
    const bool split_units = p.pipeline_split_embedding_loss && pp > 1 && vs_units > 0;
    const int64_t first = p.first_stage_layers > 0 ? p.first_stage_layers : split_units ? vs_units : -1;
    const int64_t last = p.last_stage_layers > 0 ? p.last_stage_layers : split_units ? vs_units : -1;
    if (!custom) {
      // The remainder to the middle virtual stages first, then the last,
      // never the first (parallelism::EvenSplitLayersOn over the 2 pp).
      for (int64_t g = 0; g < S; ++g)
        vs_layers[static_cast<size_t>(g)] = static_cast<double>(parallelism::EvenSplitLayersOn(L, S, g));
    } else {
      const int64_t even = (L + S - 1) / S;
      const int64_t a = first > 0 ? first : even, b = last > 0 ? last : even;
      const auto mid = Split(std::max<int64_t>(0, L - a - b), S - 2, order);
      vs_layers[0] = static_cast<double>(a);
      vs_layers[static_cast<size_t>(S - 1)] = static_cast<double>(b);
      for (int64_t g = 1; g < S - 1; ++g) vs_layers[static_cast<size_t>(g)] = mid[static_cast<size_t>(g - 1)];
    }
  } else {
    // Layers per device: the first and last devices may be set; the others
    // share the rest, the remainder going to the middle stages first.
    std::vector<double> dev_layers;
    if (!custom) {
      // The remainder to the middle devices first, then the last, never the
      // first (parallelism::EvenSplitLayers, what the closed form prices).
      dev_layers.assign(static_cast<size_t>(pp), 0.0);
      for (int64_t d = 0; d < pp; ++d)
        dev_layers[static_cast<size_t>(d)] = static_cast<double>(parallelism::EvenSplitLayersOn(L, pp, d));
    } else {
      const int64_t even = (L + pp - 1) / pp;
      const int64_t a = first_set > 0 ? first_set : even;
      const int64_t b = last_set > 0 ? last_set : even;
      dev_layers.assign(static_cast<size_t>(pp), 0.0);
      dev_layers[0] = static_cast<double>(a);
      dev_layers[static_cast<size_t>(pp - 1)] = static_cast<double>(b);
      if (pp > 2) {
        std::vector<int64_t> mid_order;
        for (int64_t d = 0; d < pp - 2; ++d) mid_order.push_back(d);
        const auto mid = Split(std::max<int64_t>(0, L - a - b), pp - 2, mid_order);
        for (int64_t d = 1; d < pp - 1; ++d) dev_layers[static_cast<size_t>(d)] = mid[static_cast<size_t>(d - 1)];
      }
    }
    // Each device's layers over its chunks, the remainder to earlier chunks;
    // under DualPipe each virtual stage is its model stage, whole.
    std::vector<int64_t> chunk_order;
    for (int64_t k = 0; k < v; ++k) chunk_order.push_back(k);
    for (int64_t g = 0; dualpipe && g < S; ++g)
      vs_layers[static_cast<size_t>(g)] = dev_layers[static_cast<size_t>(g % pp)];
    for (int64_t d = 0; !dualpipe && d < pp; ++d) {
      const auto per_chunk = Split(static_cast<int64_t>(dev_layers[static_cast<size_t>(d)]), v, chunk_order);
      for (int64_t k = 0; k < v; ++k) vs_layers[static_cast<size_t>(k * pp + d)] = per_chunk[static_cast<size_t>(k)];
    }
  }

  // --- work per (device, chunk) -----------------------------------------------
  const double act_layer = parallelism::LayerActivationBytes(m, p, p.micro_batch, w.seq_len / p.cp);
  out.work.assign(static_cast<size_t>(pp * v), ChunkWork{});
  std::vector<double> dev_layers(static_cast<size_t>(pp), 0.0);
  std::vector<double> dev_params(static_cast<size_t>(pp), 0.0);
  std::vector<std::vector<double>> chunk_params(static_cast<size_t>(pp), std::vector<double>(static_cast<size_t>(v), 0.0));
  // The routed experts' share of those, which reduces over its own group
  // (OperatorCosts::expert_layer_params; DataParallelTime, parallel_comm.h).
  std::vector<double> dev_expert(static_cast<size_t>(pp), 0.0);
  std::vector<std::vector<double>> chunk_expert(static_cast<size_t>(pp), std::vector<double>(static_cast<size_t>(v), 0.0));
  for (int64_t g = 0; g < S; ++g) {
    const int64_t d = device_of(g), k = chunk_of(g);
    const double n = vs_layers[static_cast<size_t>(g)];
    ChunkWork cw = StageWork(c, p, n, has_embed(g), has_head(g));
    cw.activation_bytes = n * act_layer;
    out.work[static_cast<size_t>(d * v + k)] = cw;
    dev_layers[static_cast<size_t>(d)] += n;
    // A tied LM head keeps its own copy of the embedding on the last stage,
    // unless one device holds both (pp = 1).
    double params = n * c.layer_params + (has_embed(g) ? c.embed_params : 0);
    if (has_head(g) && !(pp == 1 && m.tied_embeddings)) params += c.head_params;
    AddGradAccumulation(c, system_.device, params, out.work[static_cast<size_t>(d * v + k)]);
    AddRecomputeRecast(c, system_.device, p, n, out.work[static_cast<size_t>(d * v + k)]);
    chunk_params[static_cast<size_t>(d)][static_cast<size_t>(k)] = params;
    dev_params[static_cast<size_t>(d)] += params;
    const double expert = n * c.expert_layer_params + (has_head(g) ? c.head_expert_params : 0);
    chunk_expert[static_cast<size_t>(d)][static_cast<size_t>(k)] = expert;
    dev_expert[static_cast<size_t>(d)] += expert;
  }

  if (options.uniform_stages) {
    // The closed form's assumption: every stage runs like its slowest, with
    // the first/last/middle layer counts it uses (parallelism::StageLayers).
    const parallelism::EvenStageLayers paced = parallelism::StageLayers(p, L);
    const double first_layers = static_cast<double>(paced.first), last_layers = static_cast<double>(paced.last),
                 mid_layers = static_cast<double>(paced.mid);
    const double first_params = first_layers * c.layer_params + c.embed_params +
                                (pp == 1 && !m.tied_embeddings ? c.head_params : 0);
    const double last_params = pp == 1 ? first_params : last_layers * c.layer_params + c.head_params;
    // One stage's work per microbatch, as the closed form prices it.
    auto stage_work = [&](double layers, bool embed, bool head, double params) {
      ChunkWork work = StageWork(c, p, layers, embed, head);
      work.activation_bytes = layers * act_layer;
      AddGradAccumulation(c, system_.device, params, work);
      AddRecomputeRecast(c, system_.device, p, layers, work);
      return work;
    };
    ChunkWork pace = stage_work(first_layers, true, pp == 1, first_params);
    const ChunkWork last = pp > 1 ? stage_work(last_layers, false, true, last_params) : pace;
    const ChunkWork mid = pp > 2 ? stage_work(mid_layers, false, false, mid_layers * c.layer_params) : pace;
    if (dualpipe) {
      // As the closed form: the end devices run the first and the last
      // stage half the time each, the middle ones two middle stages; each
      // holds both stages' weights.
      pace = Combined(pace, 0.5, last, 0.5);
      double params = first_params + last_params;
      double expert = (first_layers + last_layers) * c.expert_layer_params + c.head_expert_params;
      if (pp > 2 && ClosedFormStageTotal(mid) > ClosedFormStageTotal(pace)) pace = mid;
      if (pp > 2 && 2 * mid_layers * c.layer_params > params) {
        params = 2 * mid_layers * c.layer_params;
        expert = 2 * mid_layers * c.expert_layer_params;
      }
      std::fill(out.work.begin(), out.work.end(), pace);
      std::fill(dev_params.begin(), dev_params.end(), params);
      for (auto& row : chunk_params) std::fill(row.begin(), row.end(), params / 2);
      std::fill(dev_expert.begin(), dev_expert.end(), expert);
      for (auto& row : chunk_expert) std::fill(row.begin(), row.end(), expert / 2);
    } else {
      if (pp > 1 && ClosedFormStageTotal(last) > ClosedFormStageTotal(pace)) pace = last;
      if (pp > 2 && ClosedFormStageTotal(mid) > ClosedFormStageTotal(pace)) pace = mid;
    }
    if (!dualpipe) {
      const ChunkWork chunk = Scaled(pace, 1.0 / static_cast<double>(v));
      std::fill(out.work.begin(), out.work.end(), chunk);
      const double params = std::max({first_params, last_params, mid_layers * c.layer_params});
      std::fill(dev_params.begin(), dev_params.end(), params);
      for (auto& row : chunk_params) std::fill(row.begin(), row.end(), params / static_cast<double>(v));
      // The routed experts of the stage whose parameters were taken, as the
      // closed form picks them (TrainingEstimator::Evaluate: expert_dev).
      const double first_expert = first_layers * c.expert_layer_params + (pp == 1 ? c.head_expert_params : 0);
      const double last_expert = pp == 1 ? first_expert : last_layers * c.expert_layer_params + c.head_expert_params;
      const double expert = params == first_params ? first_expert
                            : params == last_params ? last_expert : mid_layers * c.expert_layer_params;
      std::fill(dev_expert.begin(), dev_expert.end(), expert);
      for (auto& row : chunk_expert) std::fill(row.begin(), row.end(), expert / static_cast<double>(v));
    }
  }

  // --- data parallelism and the optimizer per device ------------------------------
  const auto& net = closed_.network();
  out.dp.assign(static_cast<size_t>(pp), parallelism::StageDp{});
  const DataParallelGroups& groups = c.dp_groups;
  auto time = [&net](Collective k, double bytes, const hardware::GroupPlacement& g) { return net.Time(k, bytes, g); };
  for (int64_t d = 0; d < pp; ++d) {
    parallelism::StageDp& s = out.dp[static_cast<size_t>(d)];
    const double params = dev_params[static_cast<size_t>(d)];
    const double expert = dev_expert[static_cast<size_t>(d)];
    const double dense = params - expert;
    const double grads = params * c.grad_bytes;
    if (groups.dense > 1 || (groups.expert > 1 && expert > 0)) {
      // As the closed form: the dense gradients over dp x cp, the routed
      // experts' over the expert-data-parallel group (DataParallelTime):
      // all-reduce (ZeRO-0), or reduce-scatter then all-gather of the
      // updated weights (ZeRO-1/2) (Rajbhandari et al. 2020).
      if (p.zero == 0) {
        s.grad_reduce = DataParallelTime(time, Collective::kAllReduce, groups, dense, expert, c.grad_bytes);
      } else if (p.zero <= 2) {
        s.grad_reduce = DataParallelTime(time, Collective::kReduceScatter, groups, dense, expert, c.grad_bytes);
        s.param_gather = DataParallelTime(time, Collective::kAllGather, groups, dense, expert,
                                          ParamGatherBytesPerParam(p, c.weight_bytes));
      } else {
        for (int64_t k = 0; k < v; ++k) {
          ChunkWork& cw = out.work[static_cast<size_t>(d * v + k)];
          const double ce = chunk_expert[static_cast<size_t>(d)][static_cast<size_t>(k)];
          const double cd = chunk_params[static_cast<size_t>(d)][static_cast<size_t>(k)] - ce;
          cw.param_gather = DataParallelTime(time, Collective::kAllGather, groups, cd, ce, c.weight_bytes);
          cw.grad_reduce = DataParallelTime(time, Collective::kReduceScatter, groups, cd, ce,
                                            Zero3ReduceBytesPerParam(p, c.weight_bytes));
        }
      }
      s.buckets = p.dp_bucket > 0 ? std::max<int64_t>(1, static_cast<int64_t>(std::ceil(grads / p.dp_bucket))) : 1;
    }
    // ZeRO-1+ shards the optimizer states over each parameter's own group,
    // as the closed form (opt_params).
    const double opt_params = p.zero >= 1 ? dense / static_cast<double>(groups.dense) +
                                                expert / static_cast<double>(groups.expert)
                                          : params;
    // The whole gradient buffer zeroed, and scaled where it is reduced, as
    // the closed form (GradBufferBytesPerParam).
    const bool reduced = groups.dense > 1 || (groups.expert > 1 && expert > 0);
    const double grad_buffer =
        params * (reduced ? c.grad_buffer_scaled_bytes_per_param : c.grad_buffer_bytes_per_param);
    if (p.offload_optimizer) {
      // ZeRO-Offload (Ren et al. 2021): gradients to the host, weights back.
      s.offload = opt_params * (c.grad_bytes + c.weight_bytes) / HostLinkBandwidth(system_);
      if (grad_buffer > 0) s.optimizer = hardware::MemoryTime(system_.device, grad_buffer);
    } else {
      s.optimizer = hardware::MemoryTime(system_.device, opt_params * c.optimizer_bytes_per_param + grad_buffer);
    }
    // Activation offload to host memory (training.offload_activation_layers):
    // per microbatch, each offloaded layer's copy out beside a window of
    // forwards and back beside a window of backwards, what the compute leaves
    // uncovered (ActivationOffloadExposed, as the closed form), charged after
    // the stage's work as the optimizer offload.
    if (p.offload_activation_layers > 0) {
      const double layer_fwd = (1 - c.moe_fraction) * c.dense.fwd + c.moe_fraction * c.moe.fwd;
      const double layer_bwd = (1 - c.moe_fraction) * c.dense.bwd + c.moe_fraction * c.moe.bwd;
      s.offload += static_cast<double>(out.microbatches) *
                   ActivationOffloadExposed(p.offload_activation_layers,
                                            std::llround(dev_layers[static_cast<size_t>(d)]), c.act_offload_copy,
                                            layer_fwd, layer_bwd);
    }
  }
  if (stage_layers != nullptr) *stage_layers = dev_layers;
  return EventError::kNone;
}

EventEstimate EventEstimator::Run(const TrainingPlan& p, const parallelism::Workload& w,
                                  const EventOptions& options) const {
  EventEstimate r;
  r.closed_form = closed_.Run(p, w);
  r.estimate = r.closed_form;
  r.schedule = StepSchedule(p);
  const Infeasible why = r.closed_form.infeasible;
  if (why != Infeasible::kNone && why != Infeasible::kOutOfMemory) return r;

  const auto t0 = std::chrono::steady_clock::now();
  parallelism::StepSpec spec;
  r.error = Spec(p, w, options, spec, &r.stage_layers);
  if (r.error != EventError::kNone) return r;
  parallelism::StepGraph local;
  parallelism::StepGraph& graph = options.keep_timeline ? r.graph : local;
  r.step_error = parallelism::BuildStepGraph(spec, graph);
  if (r.step_error != parallelism::StepError::kNone) {
    r.error = r.step_error == parallelism::StepError::kDeadlock ? EventError::kDeadlock : EventError::kSchedule;
    return r;
  }
  base::Timeline local_t;
  base::Timeline& t = options.keep_timeline ? r.timeline : local_t;
  base::Simulator().Run(graph.graph, t);
  r.step = parallelism::Analyze(graph, t);
  r.simulate_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.step.complete) {
    r.error = EventError::kDeadlock;
    return r;
  }

  // The critical stage's time, by cause; the parts add up to the iteration.
  const parallelism::StageStats& st = r.step.stages[static_cast<size_t>(r.step.critical_stage)];
  const double m_d = static_cast<double>(spec.microbatches);
  // The exposed CP and EP time StageWork put inside the passes, split out of
  // forward and backward, and between CP and EP by their per-layer shares.
  // The embedding's and LM head's TP collectives ride in them too
  // (head_tp_comm): reported as TP, as the closed form does.
  double fwd_comm = 0, bwd_comm = 0, head_tp = 0;
  for (int64_t k = 0; k < spec.chunks; ++k) {
    const size_t i = static_cast<size_t>(r.step.critical_stage * spec.chunks + k);
    fwd_comm += m_d * spec.work[i].forward_comm;
    bwd_comm += m_d * spec.work[i].backward_comm;
    head_tp += m_d * spec.work[i].head_tp_comm;
  }
  const OperatorCosts c = closed_.Costs(p, w);
  const double cp_layer = c.cp_fwd + c.cp_bwd, ep_layer = c.moe_fraction * c.ep_layer;
  const double cp_share = cp_layer + ep_layer > 0 ? cp_layer / (cp_layer + ep_layer) : 0;
  TimeBreakdown& tb = r.estimate.time;
  tb.forward = st.forward - fwd_comm;
  tb.backward = st.backward - bwd_comm;
  tb.recompute = st.recompute;
  tb.tp_comm = st.wait_tp + head_tp;
  // A plan without CP or EP traffic has none to split; what the difference
  // leaves there is the rounding of head_tp summed in two orders (-1.7e-18 s
  // on a dense tp 4 plan), not time.
  const double cp_ep = cp_layer + ep_layer > 0 ? std::max(0.0, fwd_comm + bwd_comm - head_tp) : 0.0;
  tb.cp_comm = cp_ep * cp_share;
  tb.ep_comm = cp_ep * (1 - cp_share);
  tb.pp_bubble = st.wait_bubble;
  tb.pp_p2p = st.wait_p2p;
  tb.dp_comm = st.wait_dp;
  tb.optimizer = st.optimizer;
  tb.offload = st.wait_offload;
  // The DP and ZeRO-3 collectives the timeline hid behind compute slowed
  // that compute (OverlapExposed, parallel_comm.h): the simulator runs the
  // two streams side by side at full speed, so the lost c s/(1+s) of the
  // hidden part is added to the critical stage afterwards, as the closed
  // form charges it.
  double contention = 0;
  if (p.dp_overlap && c.overlap_slowdown > 0) {
    const auto crit = static_cast<size_t>(r.step.critical_stage);
    double dp_total = spec.dp[crit].grad_reduce + spec.dp[crit].param_gather;
    if (spec.zero3) {
      const double gathers = spec.zero3_gather_for_recompute ? Zero3GathersPerMicrobatch(p) : 2;
      for (int64_t k = 0; k < spec.chunks; ++k) {
        const ChunkWork& cw = spec.work[crit * static_cast<size_t>(spec.chunks) + static_cast<size_t>(k)];
        // Under a pipeline one gather and one reduce-scatter a step.
        dp_total += spec.zero3_once_per_step ? cw.param_gather + cw.grad_reduce
                                             : m_d * (gathers * cw.param_gather + cw.grad_reduce);
      }
    }
    contention = std::max(0.0, dp_total - st.wait_dp) * c.overlap_slowdown / (1 + c.overlap_slowdown);
    // Weights fetched a matrix at a time, only the next one prefetched
    // (training.zero3_matrix_prefetch; PrefetchOneAheadExposed,
    // parallel_comm.h): the timeline runs whole layers one ahead, which
    // prices each pass as OverlapExposed prices it; what the matrix-by-matrix
    // pairing exposes beyond that is added to the critical stage, as the
    // closed form charges it.
    if (spec.zero3 && !spec.zero3_once_per_step && p.zero3_matrix_prefetch && p.zero3_backward_prefetch) {
      const LayerWeightShares shares = DenseLayerWeightShares(model_);
      const double s = c.overlap_slowdown;
      auto beyond = [&](double comm, double compute, bool backward) {
        return PrefetchOneAheadExposed(shares, comm, compute, s, backward) - OverlapExposed(comm, compute, s);
      };
      const double rec_gathers = spec.zero3_gather_for_recompute ? Zero3GathersPerMicrobatch(p) - 2 : 0;
      for (int64_t k = 0; k < spec.chunks; ++k) {
        const ChunkWork& cw = spec.work[crit * static_cast<size_t>(spec.chunks) + static_cast<size_t>(k)];
        contention += m_d * (beyond(cw.param_gather, cw.forward, false) +
                             beyond(rec_gathers * cw.param_gather, cw.recompute, false) +
                             beyond(cw.param_gather + cw.grad_reduce, cw.backward, true));
      }
    }
  }
  tb.dp_comm += contention;
  const double iteration = r.step.iteration + contention;
  tb.total = iteration;

  // Every rate and total scales with the iteration time.
  TrainingEstimate& e = r.estimate;
  const double k = r.closed_form.iteration_s / iteration;
  e.iteration_s = iteration;
  e.mfu *= k;
  e.hfu *= k;
  e.tflops_per_device *= k;
  e.tokens_per_s *= k;
  e.energy_j /= k;
  e.cost_usd /= k;
  e.train_time_s /= k;
  e.train_device_hours /= k;
  e.train_energy_j /= k;
  e.train_cost_usd /= k;
  return r;
}

std::string ExplainEventError(const EventEstimate& e, const Scenario& s) {
  switch (e.error) {
    case EventError::kNone: return {};
    case EventError::kSchedule: return parallelism::StepErrorText(e.step_error);
    case EventError::kStraggler:
      return "training.straggler_stage " + std::to_string(s.training.straggler_stage) +
             " is not a pipeline stage (pp = " + std::to_string(s.training.pp) + ")";
    case EventError::kDeadlock: return "the simulated step did not finish (an internal error)";
  }
  return {};
}

}  // namespace orrery::engine
