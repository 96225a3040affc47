#pragma once
// Closed-form pipeline schedules (per data-parallel replica).
//
// With p stages, m microbatches per iteration, v model chunks per device and
// a stage's per-microbatch time T = F + B (F the forward, B the whole
// backward, of which W is the weight-gradient part):
//   GPipe and 1F1B   bubble = (p - 1) T, for every m >= 1 (Narayanan et al.
//                    2021, Sec. 2.2.1: iteration (m + p - 1) T, fraction
//                    (p - 1)/m; with m < p the warm-up is m forwards and the
//                    last microbatch still crosses all p stages twice)
//   interleaved 1F1B bubble = (p - 1) T / v (Sec. 2.2.2: fraction
//                    (p - 1)/(v m)); Megatron-LM runs it only when m is a
//                    multiple of p (megatron/core/pipeline_parallel/
//                    schedules.py refuses otherwise), so any other m is
//                    infeasible, not priced
//   ZB-H1            the backward split into B' = B - W and W, the W passes
//                    delayed to fill the 1F1B bubble (Qi et al. 2024, "Zero
//                    Bubble Pipeline Parallelism", ICLR, Sec. 3.1):
//                      bubble = (p - 1)(F + B') - (min(m, p) - 1) min(W, F)
//                    which is the paper's (p - 1)(F + B' - W) at m >= p and
//                    W <= F; the min() terms are where the event engine's
//                    ZB-H1 order (parallelism/step_graph.h) departs from
//                    the paper's equal-pass picture: the last microbatch's
//                    B' chain cannot be hidden (W > F), and with m < p only
//                    m - 1 delayed W passes exist to fill the warm-up
//   DualPipe         half the microbatches enter at each end of the pipeline
//                    (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report",
//                    Sec. 3.2.1, Fig. 5, Table 2): device d runs stage d of
//                    the one direction and stage p - 1 - d of the other, so
//                    it holds two stages' weights, and pairs one
//                    microbatch's forward chunk with another's backward so
//                    that each hides the other's all-to-alls and sends:
//                      bubble = (p/2 - 1)(F&B + B - 3W)
//                    with F&B the paired chunks' time (F + B once their
//                    communication is hidden), and at least (p - 2) F:
//                    the forwards filling from both ends to the middle,
//                    which W passes cannot fill. The event engine's replay
//                    of dualpipe.py's order (parallelism/step_graph.h)
//                    gives the table's figure at W = F, up to F less
//                    at W < F, and the fill once the table's term falls
//                    under it (p 8, F 1, B 3, W 2: 6, the table's 3).
//                    Needs p and m even
//                    and m >= 2p (deepseek-ai/DualPipe, dualpipe.py,
//                    step()'s asserts)
//   iteration        m T + bubble
// The V-shape schedules (Qi et al. 2024, NeurIPS) are built greedily by the
// event engine under a memory limit; their bubble has no closed form, so the
// closed form prices them as interleaved 1F1B with v = 2 (their chunks per
// device) and `orrery search` re-scores its finalists with the event engine.

#include <algorithm>
#include <cstdint>

#include "parallelism/plan_spec.h"

namespace orrery::parallelism {

// Chunks per device the schedule runs (v): interleave for interleaved 1F1B,
// 2 for the V-shapes, 1 otherwise.
inline int64_t ScheduleChunks(const TrainingPlan& p) {
  switch (p.schedule) {
    case Schedule::kGpipe:
    case Schedule::kZeroBubbleH1:
    case Schedule::kDualPipe: return 1;
    case Schedule::kVMin:
    case Schedule::kVHalf:
    case Schedule::kVZeroBubble: return 2;
    case Schedule::kOneFOneB:
    case Schedule::kInterleaved: break;
  }
  return p.interleave > 1 ? p.interleave : 1;
}

// Pipeline split units: the layers, plus the embedding and the loss when the
// plan counts them as one layer each (pipeline_split_embedding_loss;
// Megatron-Core --account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split, megatron/training/arguments.py).
// pp x chunks may not exceed it: every virtual stage holds at least one unit.
inline int64_t PipelineSplitUnits(const TrainingPlan& p, int64_t layers) {
  return layers + (p.pipeline_split_embedding_loss && p.pp > 1 ? 2 : 0);
}

// Layers on the first and on the last pipeline stage the plan asks for; 0 =
// the even split. Given counts win; otherwise, with the embedding and the
// loss counted as layers, those stages hold ceil((L + 2) / pp) units of which
// one is the embedding (first) or the loss (last): 126 layers over pp 16 give
// 128 units, 8 a stage, so 7 layers on the first and last stages and 8 on
// each of the 14 middle ones (7 + 7 + 14 x 8 = 126).
inline int64_t FirstStageLayers(const TrainingPlan& p, int64_t layers) {
  if (p.first_stage_layers > 0 || !p.pipeline_split_embedding_loss || p.pp <= 1) return p.first_stage_layers;
  return (PipelineSplitUnits(p, layers) + p.pp - 1) / p.pp - 1;
}
inline int64_t LastStageLayers(const TrainingPlan& p, int64_t layers) {
  if (p.last_stage_layers > 0 || !p.pipeline_split_embedding_loss || p.pp <= 1) return p.last_stage_layers;
  return (PipelineSplitUnits(p, layers) + p.pp - 1) / p.pp - 1;
}

// Whether the plan's end-stage counts (FirstStageLayers, LastStageLayers; an
// unset end ceil(L/pp)) leave the middle stages what they need: at pp = 2
// exactly nothing, above it at least one layer each. False when the plan
// sets neither or pp is 1. A searched pp that the scenario's counts were
// not written for must not price fewer layers than the model has.
inline bool StageLayoutInvalid(const TrainingPlan& p, int64_t layers) {
  if (p.pp <= 1) return false;
  const int64_t f = FirstStageLayers(p, layers), l = LastStageLayers(p, layers);
  if (f <= 0 && l <= 0) return false;
  const int64_t even = (layers + p.pp - 1) / p.pp;
  const int64_t rest = layers - (f > 0 ? f : even) - (l > 0 ? l : even);
  return p.pp == 2 ? rest != 0 : rest < p.pp - 2;
}

// Whether the plan offloads as many activation layers as a pipeline stage
// holds, or more (training.offload_activation_layers against L / pp):
// Transformer Engine's get_cpu_offload_context asserts fewer, since the last
// layer's backward starts at once with no time to bring anything back. The
// scenario check refuses it; a searched pp must not make it free.
inline bool OffloadLayersInvalid(const TrainingPlan& p, int64_t layers) {
  return p.offload_activation_layers > 0 && p.offload_activation_layers >= layers / std::max<int64_t>(1, p.pp);
}

// Layers on the first device, the fullest middle device and the last device
// when the plan sets no end-stage count (FirstStageLayers and
// LastStageLayers both 0): L over pp as evenly as whole numbers allow, the
// L mod pp layers left over going to the middle devices first, then to the
// last, never to the first (rest < pp), because the first device also runs
// the embedding and the last the LM head and the loss. That is the balance
// Megatron-Core's uneven split exists for (--decoder-first-pipeline-num-layers
// and --decoder-last-pipeline-num-layers, megatron/training/arguments.py:
// lighter end stages; its flexible-VPP design note, MR 2795, gives the last
// stage fewer layers "due to loss computation"). 80 layers over pp 6: 13
// each and 2 left over, so 13 first, 14 in the middle, 13 last. With pp 1
// the one device holds all L (first = last = L). The closed form prices the
// slowest of these three devices and the event engine splits the layers
// device by device in the same order (core/estimate/event_estimator.cpp).
// The V-shapes place two virtual stages per device and keep ceil(L/pp).
// EvenSplitLayersOn gives every device's count of that split: device 0 the
// floor, middle device d (1 <= d <= pp - 2) one more when d <= L mod pp,
// the last one more only when the middle devices are all served (L mod pp
// = pp - 1). The event engine places its layers with it device by device.
inline int64_t EvenSplitLayersOn(int64_t layers, int64_t pp, int64_t device) {
  if (pp <= 1) return layers;
  const int64_t whole = layers / pp, rest = layers % pp;
  if (device == 0) return whole;
  if (device == pp - 1) return whole + (rest > pp - 2 ? 1 : 0);
  return whole + (device <= rest ? 1 : 0);
}
struct EvenStageLayers {
  int64_t first = 0, mid = 0, last = 0;
};
// The fullest middle device is device 1.
inline EvenStageLayers EvenSplitLayers(int64_t layers, int64_t pp) {
  if (pp <= 1) return EvenStageLayers{layers, 0, layers};
  EvenStageLayers s;
  s.first = EvenSplitLayersOn(layers, pp, 0);
  s.mid = pp > 2 ? EvenSplitLayersOn(layers, pp, 1) : 0;
  s.last = EvenSplitLayersOn(layers, pp, pp - 1);
  return s;
}

// Layers on the first, the fullest middle and the last device as the plan
// places them: the end-stage counts it sets (FirstStageLayers,
// LastStageLayers; an unset end takes ceil(L/pp)) with the middle devices
// sharing the rest, or else EvenSplitLayers; the V-shapes ceil(L/pp) on
// every device. With pp 1 first = last = L, mid = 0. What the closed form
// prices and the event engine's uniform stages assume.
inline EvenStageLayers StageLayers(const TrainingPlan& p, int64_t layers) {
  if (p.pp <= 1) return EvenStageLayers{layers, 0, layers};
  const int64_t even = (layers + p.pp - 1) / p.pp;
  const int64_t first_set = FirstStageLayers(p, layers), last_set = LastStageLayers(p, layers);
  EvenStageLayers s;
  if (first_set > 0 || last_set > 0) {
    s.first = first_set > 0 ? first_set : even;
    s.last = last_set > 0 ? last_set : even;
    if (p.pp > 2) s.mid = (std::max<int64_t>(0, layers - s.first - s.last) + p.pp - 3) / (p.pp - 2);
    return s;
  }
  const bool vshape = p.schedule == Schedule::kVMin || p.schedule == Schedule::kVHalf ||
                      p.schedule == Schedule::kVZeroBubble;
  if (vshape) return EvenStageLayers{even, p.pp > 2 ? even : 0, even};
  return EvenSplitLayers(layers, p.pp);
}

// Whether the plan's pipeline sends run beside other chunks' computation
// (TrainingPlan::pp_comm_overlap): interleaved 1F1B only, as Megatron-Core
// overlaps them (NeMo's and Megatron-Bridge's configs set overlap_p2p_comm
// only when the virtual pipeline size is above 1).
inline bool OverlapsPipelineSends(const TrainingPlan& p) {
  return p.pp_comm_overlap && p.pp > 1 && TakesInterleave(p.schedule) && p.interleave > 1;
}

// Interleaved 1F1B (v > 1, not a V-shape) needs m a multiple of p.
inline bool InterleaveNeedsMultiple(const TrainingPlan& p, int64_t microbatches) {
  const bool interleaved = TakesInterleave(p.schedule) && p.interleave > 1 && p.pp > 1;
  return interleaved && microbatches % p.pp != 0;
}

// DualPipe under a pipeline (pp > 1; with one stage there is nothing to pair).
inline bool RunsDualPipe(const TrainingPlan& p) { return p.schedule == Schedule::kDualPipe && p.pp > 1; }

// DualPipe needs an even pp and an even m of at least 2 pp: each direction
// takes m / 2 microbatches, and its steady phase (step 4 of dualpipe.py,
// m/2 - p + 1 rounds on the outermost devices) must run at least once.
inline bool DualPipeShapeInvalid(const TrainingPlan& p, int64_t microbatches) {
  return RunsDualPipe(p) && (p.pp % 2 != 0 || microbatches % 2 != 0 || microbatches < 2 * p.pp);
}

// Whether the expert all-to-alls run beside other compute: asked for
// (ep_comm_overlap: Megatron-Core's 1F1B A2A overlap), or DualPipe, whose
// paired forward and backward chunks exist to hide them (DeepSeek-V3
// Sec. 3.2.1: "both all-to-all and PP communication can be fully hidden").
inline bool OverlapsExpertComm(const TrainingPlan& p) { return p.ep_comm_overlap || RunsDualPipe(p); }

// Bubble as a multiple of one microbatch's stage time, for the schedules
// whose bubble does not depend on the split of the backward (GPipe, 1F1B,
// interleaved, and the V-shapes as interleaved with v = 2). A lower bound
// for ZB-H1 and DualPipe is 0; use PipelineBubble for them.
inline double BubbleMicrobatches(const TrainingPlan& p) {
  if (p.pp <= 1) return 0;
  const double pp = static_cast<double>(p.pp);
  if (p.schedule == Schedule::kZeroBubbleH1 || p.schedule == Schedule::kDualPipe) return 0;
  return (pp - 1) / static_cast<double>(ScheduleChunks(p));
}

// Bubble in seconds: `stage` the per-microbatch time of the pace-setting
// stage, `forward` its forward part, `weight_grad` its weight-gradient part.
inline double PipelineBubble(const TrainingPlan& p, int64_t microbatches, double stage, double forward,
                             double weight_grad) {
  if (p.pp <= 1) return 0;
  const double pp = static_cast<double>(p.pp);
  if (p.schedule == Schedule::kDualPipe) {
    // F&B = stage (its communication already what the overlap leaves), B
    // the backward side of it.
    const double backward = stage - forward;
    return std::max((pp / 2 - 1) * (stage + backward - 3 * weight_grad), (pp - 2) * forward);
  }
  if (p.schedule != Schedule::kZeroBubbleH1) return BubbleMicrobatches(p) * stage;
  const double b_input = std::max(0.0, stage - forward - weight_grad);
  const double filled = static_cast<double>(std::min(microbatches, p.pp) - 1);
  return (pp - 1) * (forward + b_input) - filled * std::min(weight_grad, forward);
}

// Point-to-point transfers on the critical path of one iteration: each of the
// v*m chunk-microbatches crosses a stage boundary forward and backward, and
// the warm-up/cool-down adds p - 1 of each.
// DualPipe sends beside the paired chunk's compute: only the chain of the
// first microbatch to the far end and its gradient back, 2 (p - 1), waits.
inline double CriticalPathTransfers(const TrainingPlan& p, int64_t microbatches) {
  if (p.pp <= 1) return 0;
  if (p.schedule == Schedule::kDualPipe) return 2 * (static_cast<double>(p.pp) - 1);
  const double v = static_cast<double>(ScheduleChunks(p));
  return 2 * (v * static_cast<double>(microbatches) + static_cast<double>(p.pp) - 1);
}

}  // namespace orrery::parallelism
