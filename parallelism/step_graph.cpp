#include "parallelism/step_graph.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <utility>

namespace orrery::parallelism {

const char* PipelineScheduleName(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kGpipe: return "gpipe";
    case PipelineSchedule::kOneFOneB: return "1f1b";
    case PipelineSchedule::kInterleaved: return "interleaved";
    case PipelineSchedule::kZeroBubbleH1: return "zb-h1";
    case PipelineSchedule::kVMin: return "v-min";
    case PipelineSchedule::kVHalf: return "v-half";
    case PipelineSchedule::kVZeroBubble: return "v-zb";
    case PipelineSchedule::kDualPipe: return "dualpipe";
  }
  return "?";
}

bool SplitsBackward(PipelineSchedule s) {
  return s == PipelineSchedule::kZeroBubbleH1 || s == PipelineSchedule::kVMin ||
         s == PipelineSchedule::kVHalf || s == PipelineSchedule::kVZeroBubble;
}

namespace {
bool IsVShape(PipelineSchedule s) {
  return s == PipelineSchedule::kVMin || s == PipelineSchedule::kVHalf ||
         s == PipelineSchedule::kVZeroBubble;
}
// Virtual stage g on device g going out and 2p-1-g coming back: the
// V-shapes (one microbatch both ways) and DualPipe (each direction its own
// microbatches).
bool Mirrored(PipelineSchedule s) { return IsVShape(s) || s == PipelineSchedule::kDualPipe; }
}  // namespace

const char* TaskKindName(TaskKind k) {
  switch (k) {
    case TaskKind::kForward: return "F";
    case TaskKind::kBackward:
    case TaskKind::kBackwardInput: return "B";
    case TaskKind::kBackwardWeight: return "W";
    case TaskKind::kRecompute: return "R";
    case TaskKind::kTpComm: return "TP";
    case TaskKind::kSend: return "send";
    case TaskKind::kGradReduce: return "grad reduce";
    case TaskKind::kParamGather: return "param gather";
    case TaskKind::kOptimizer: return "optimizer";
    case TaskKind::kOffload: return "offload";
    case TaskKind::kJoin: return "join";
  }
  return "?";
}

const char* StreamName(StreamKind s) {
  switch (s) {
    case StreamKind::kCompute: return "compute";
    case StreamKind::kTp: return "tp";
    case StreamKind::kPp: return "pp";
    case StreamKind::kDp: return "dp";
  }
  return "?";
}

const char* StepErrorText(StepError e) {
  switch (e) {
    case StepError::kNone: return "";
    case StepError::kBadShape: return "the pipeline needs at least one stage, microbatch and chunk";
    case StepError::kInterleaveMultiple:
      return "the interleaved schedule needs the microbatches per iteration to be a multiple of pp "
             "(Megatron-LM's rule)";
    case StepError::kDualPipeShape:
      return "DualPipe places 2 stages on each device (chunks 2) and needs an even number of stages and an "
             "even number of microbatches, at least twice the stages";
    case StepError::kVShapeChunks:
      return "the V-shape schedules place exactly 2 model chunks on each device (interleave 2)";
    case StepError::kDeadlock: return "the schedule deadlocks (an internal error)";
  }
  return "";
}

int64_t VShapeCap(PipelineSchedule s, int64_t p) {
  // Activation memory of the paper's schedules in microbatches of a 1F1B
  // stage, rounded down as the paper's table does (Qi et al. 2024, Table 1):
  // V-Min (p+4)/3, V-Half (p+2)/2, V-ZB p. One microbatch of a stage is two
  // chunk-microbatches.
  int64_t stage_units = p;
  if (s == PipelineSchedule::kVMin) stage_units = (p + 4) / 3;
  else if (s == PipelineSchedule::kVHalf) stage_units = (p + 2) / 2;
  return std::max<int64_t>(2, 2 * stage_units);
}

// --- the V-shape greedy --------------------------------------------------------
//
// List scheduling on nominal durations: whenever a device is free it runs the
// first ready pass of: B of its second chunk, F of its second chunk, B of its
// first chunk, F of its first chunk, the oldest pending W. An F may start only
// while the chunk-microbatches held (F started, W not finished) stay within
// `cap`; an F of the first chunk also leaves one place free for the second
// chunk, whose passes are the only way memory is ever released (without that
// reserve the device can fill up with first-chunk work and deadlock).
std::vector<std::vector<PassRef>> VShapeOrder(int64_t p, int64_t m, int64_t cap,
                                              const std::vector<ChunkWork>& work) {
  const int64_t S = 2 * p;
  const double kNotYet = std::numeric_limits<double>::infinity();
  std::vector<double> f_done(static_cast<size_t>(S * m), kNotYet), b_done(f_done);
  auto at = [m](int64_t g, int64_t j) { return static_cast<size_t>(g * m + j); };
  auto vstage = [p](int64_t d, int c) { return c == 0 ? d : 2 * p - 1 - d; };
  struct Device {
    int64_t next_f[2] = {0, 0}, next_b[2] = {0, 0};
    std::deque<std::pair<int32_t, int32_t>> pending_w;  // (virtual stage, microbatch)
    int64_t held = 0;
    bool busy = false;
    PassRef running{TaskKind::kForward, 0, 0};
  };
  std::vector<Device> dev(static_cast<size_t>(p));
  std::vector<std::vector<PassRef>> order(static_cast<size_t>(p));
  for (auto& o : order) o.reserve(static_cast<size_t>(6 * m));
  auto cost = [&](int64_t d, int c, TaskKind k) {
    const ChunkWork& w = work[static_cast<size_t>(d * 2 + c)];
    if (k == TaskKind::kForward) return w.forward;
    if (k == TaskKind::kBackwardWeight) return w.backward_weight;
    return w.backward - w.backward_weight + w.recompute;
  };
  base::EventQueue events;
  double now = 0;
  int64_t left = 3 * S * m;
  auto dispatch = [&](int64_t d) {
    Device& v = dev[static_cast<size_t>(d)];
    if (v.busy) return;
    PassRef pick{TaskKind::kForward, -1, -1};
    int pick_chunk = 0;
    // In priority order: B of the second chunk, F of the second chunk, B of
    // the first, F of the first (F within the memory limit).
    for (int step = 0; step < 4 && pick.virtual_stage < 0; ++step) {
      const int c = step == 0 || step == 1 ? 1 : 0;
      const bool backward = step == 0 || step == 2;
      const int64_t g = vstage(d, c);
      if (backward) {
        const int64_t j = v.next_b[c];
        if (j < m && f_done[at(g, j)] <= now && (g == S - 1 || b_done[at(g + 1, j)] <= now))
          pick = {TaskKind::kBackwardInput, static_cast<int32_t>(g), static_cast<int32_t>(j)};
      } else {
        const int64_t j = v.next_f[c];
        if (j < m && v.held + 1 + (c == 0 ? 1 : 0) <= cap && (g == 0 || f_done[at(g - 1, j)] <= now))
          pick = {TaskKind::kForward, static_cast<int32_t>(g), static_cast<int32_t>(j)};
      }
      pick_chunk = c;
    }
    if (pick.virtual_stage < 0 && !v.pending_w.empty()) {
      const auto [g, j] = v.pending_w.front();
      pick = {TaskKind::kBackwardWeight, g, j};
      pick_chunk = g < p ? 0 : 1;
    }
    if (pick.virtual_stage < 0) return;
    if (pick.kind == TaskKind::kForward) {
      ++v.next_f[pick_chunk];
      ++v.held;
    } else if (pick.kind == TaskKind::kBackwardInput) {
      ++v.next_b[pick_chunk];
    } else {
      v.pending_w.pop_front();
    }
    v.busy = true;
    v.running = pick;
    order[static_cast<size_t>(d)].push_back(pick);
    events.Push(now + cost(d, pick_chunk, pick.kind), static_cast<int32_t>(d));
  };
  for (int64_t d = 0; d < p; ++d) dispatch(d);
  std::vector<int32_t> finished;
  while (!events.empty() && left > 0) {
    // Finish every pass that ends now before any device chooses again.
    now = events.top().time;
    finished.clear();
    while (!events.empty() && events.top().time == now) finished.push_back(events.Pop().payload);
    for (int32_t d : finished) {
      Device& v = dev[static_cast<size_t>(d)];
      const PassRef r = v.running;
      v.busy = false;
      --left;
      if (r.kind == TaskKind::kForward) f_done[at(r.virtual_stage, r.microbatch)] = now;
      else if (r.kind == TaskKind::kBackwardInput) {
        b_done[at(r.virtual_stage, r.microbatch)] = now;
        v.pending_w.emplace_back(r.virtual_stage, r.microbatch);
      } else {
        --v.held;
      }
    }
    for (int64_t d = 0; d < p; ++d) dispatch(d);
  }
  return order;
}

namespace {

// Per-device pass sequences of the static schedules.
using Sequences = std::vector<std::vector<PassRef>>;

PassRef Pass(TaskKind k, int64_t g, int64_t j) {
  return PassRef{k, static_cast<int32_t>(g), static_cast<int32_t>(j)};
}

Sequences StaticOrder(const StepSpec& s) {
  const int64_t p = s.stages, m = s.microbatches, v = s.chunks;
  Sequences seq(static_cast<size_t>(p));
  for (int64_t d = 0; d < p; ++d) {
    auto& o = seq[static_cast<size_t>(d)];
    o.reserve(static_cast<size_t>(3 * m * v));
    PipelineSchedule kind = s.schedule;
    if (kind == PipelineSchedule::kInterleaved && v == 1) kind = PipelineSchedule::kOneFOneB;
    switch (kind) {
      case PipelineSchedule::kGpipe:
        for (int64_t c = 0; c < v; ++c)
          for (int64_t j = 0; j < m; ++j) o.push_back(Pass(TaskKind::kForward, c * p + d, j));
        for (int64_t c = v - 1; c >= 0; --c)
          for (int64_t j = 0; j < m; ++j) o.push_back(Pass(TaskKind::kBackward, c * p + d, j));
        break;
      case PipelineSchedule::kOneFOneB: {
        const int64_t w = std::min(p - 1 - d, m);
        for (int64_t j = 0; j < w; ++j) o.push_back(Pass(TaskKind::kForward, d, j));
        for (int64_t k = 0; k < m - w; ++k) {
          o.push_back(Pass(TaskKind::kForward, d, w + k));
          o.push_back(Pass(TaskKind::kBackward, d, k));
        }
        for (int64_t k = m - w; k < m; ++k) o.push_back(Pass(TaskKind::kBackward, d, k));
        break;
      }
      case PipelineSchedule::kInterleaved: {
        // Megatron-LM's interleaved order: the k-th forward runs chunk
        // (k / p) mod v of microbatch (k / (p v)) p + k mod p; backwards run
        // the chunks in reverse.
        const int64_t total = m * v;
        auto chunk_f = [&](int64_t k) { return (k / p) % v; };
        auto mb = [&](int64_t k) { return (k / (p * v)) * p + k % p; };
        const int64_t w = m == p ? total : std::min(2 * (p - d - 1) + (v - 1) * p, total);
        for (int64_t k = 0; k < w; ++k) o.push_back(Pass(TaskKind::kForward, chunk_f(k) * p + d, mb(k)));
        for (int64_t k = 0; k < total - w; ++k) {
          o.push_back(Pass(TaskKind::kForward, chunk_f(w + k) * p + d, mb(w + k)));
          o.push_back(Pass(TaskKind::kBackward, (v - 1 - chunk_f(k)) * p + d, mb(k)));
        }
        for (int64_t k = total - w; k < total; ++k)
          o.push_back(Pass(TaskKind::kBackward, (v - 1 - chunk_f(k)) * p + d, mb(k)));
        break;
      }
      case PipelineSchedule::kZeroBubbleH1: {
        // 1F1B warm-up; then F, B, and the W of the microbatch `d` places
        // back, so that every stage holds p microbatches (Qi et al. 2024).
        const int64_t w = std::min(p - 1 - d, m);
        for (int64_t j = 0; j < w; ++j) o.push_back(Pass(TaskKind::kForward, d, j));
        int64_t next_w = 0;
        for (int64_t k = 0; k < m; ++k) {
          if (w + k < m) o.push_back(Pass(TaskKind::kForward, d, w + k));
          o.push_back(Pass(TaskKind::kBackwardInput, d, k));
          if (k - d >= 0) o.push_back(Pass(TaskKind::kBackwardWeight, d, next_w++));
        }
        while (next_w < m) o.push_back(Pass(TaskKind::kBackwardWeight, d, next_w++));
        break;
      }
      default:
        break;
    }
  }
  return seq;
}

}  // namespace

std::vector<std::vector<PassRef>> DualPipeOrder(int64_t p, int64_t m) {
  Sequences seq(static_cast<size_t>(p));
  const int64_t half_ranks = p / 2, half_m = m / 2;
  for (int64_t d = 0; d < p; ++d) {
    auto& o = seq[static_cast<size_t>(d)];
    o.reserve(static_cast<size_t>(3 * m));
    const int64_t h = std::min(d, p - 1 - d);
    // Phase 0 is the direction that enters at this device's end of the
    // pipeline (dualpipe.py: phase ^= is_in_second_half).
    const bool second = d >= half_ranks;
    const int64_t out_vs = d, back_vs = 2 * p - 1 - d;  // direction 0, direction 1
    const int64_t vs[2] = {second ? back_vs : out_vs, second ? out_vs : back_vs};
    const int64_t first_mb[2] = {second ? half_m : 0, second ? 0 : half_m};
    int64_t next_f[2] = {0, 0}, next_b[2] = {0, 0};
    std::deque<std::pair<int64_t, int64_t>> deferred_w;  // WeightGradStore's queue
    auto f = [&](int ph, bool fused = false) {
      o.push_back(Pass(TaskKind::kForward, vs[ph], first_mb[ph] + next_f[ph]++));
      o.back().fused = fused;
    };
    auto b = [&](int ph, bool zero_bubble) {
      const int64_t j = first_mb[ph] + next_b[ph]++;
      if (!zero_bubble) {
        o.push_back(Pass(TaskKind::kBackward, vs[ph], j));
        return;
      }
      o.push_back(Pass(TaskKind::kBackwardInput, vs[ph], j));
      deferred_w.emplace_back(vs[ph], j);
    };
    auto w = [&] {
      const auto [g, j] = deferred_w.front();
      deferred_w.pop_front();
      o.push_back(Pass(TaskKind::kBackwardWeight, g, j));
    };
    const int64_t outer = half_ranks - h - 1;
    for (int64_t i = 0; i < 2 * outer; ++i) f(0);  // 1: nF0
    for (int64_t i = 0; i < h + 1; ++i) {           // 2: nF0F1
      f(0);
      f(1);
    }
    for (int64_t i = 0; i < outer; ++i) {  // 3: nB1W1F1, zero bubble
      b(1, true);
      w();
      f(1);
    }
    // 4: nF0B1F1B0, the overlapped pairs; the middle devices run their first
    // pair apart ("to further reduce bubble size").
    const bool middle = d == half_ranks - 1 || d == half_ranks;
    for (int64_t i = 0; i < half_m - p + h + 1; ++i) {
      f(0, !(i == 0 && middle));
      b(1, false);
      f(1, true);
      b(0, false);
    }
    for (int64_t i = 0; i < outer; ++i) {  // 5: nB1F1B0
      b(1, false);
      f(1, true);
      b(0, false);
    }
    bool zero_bubble = false;  // 6: nB1B0, zero bubble from the middle on
    for (int64_t i = 0; i < h + 1; ++i) {
      if (i == (h + 1) / 2 && h % 2 == 1) zero_bubble = true;
      b(1, zero_bubble);
      if (i == (h + 1) / 2 && h % 2 == 0) zero_bubble = true;
      b(0, zero_bubble);
    }
    for (int64_t i = 0; i < outer; ++i) {  // 7: nWB0
      w();
      b(0, true);
    }
    while (!deferred_w.empty()) w();  // 8: nW (h + 1 of them)
  }
  return seq;
}

namespace {

struct Builder {
  const StepSpec& s;
  StepGraph& g;
  int64_t p, m, v, S;
  bool split;
  bool vshape;  // virtual stages placed as a V (Mirrored)
  bool dualpipe;
  // Per (virtual stage, microbatch): the task that receives the pass's
  // cross-device inputs, and the task its consumers wait for (the send when
  // the consumer is on another device).
  std::vector<int32_t> f_entry, f_out, b_entry, b_out;
  // DualPipe's fused pairs: (forward cell, backward virtual stage, backward
  // microbatch); Wire() makes the forward wait for the backward's input.
  struct Fused {
    size_t forward;
    int64_t vs, j;
  };
  std::vector<Fused> fused;

  Builder(const StepSpec& spec, StepGraph& out)
      : s(spec), g(out), p(spec.stages), m(spec.microbatches), v(spec.chunks),
        S(spec.stages * spec.chunks), split(SplitsBackward(spec.schedule)),
        vshape(Mirrored(spec.schedule)), dualpipe(spec.schedule == PipelineSchedule::kDualPipe) {}

  int64_t DeviceOf(int64_t vs) const {
    if (vshape) return vs < p ? vs : 2 * p - 1 - vs;
    return vs % p;
  }
  int64_t ChunkOf(int64_t vs) const {
    if (vshape) return vs < p ? 0 : 1;
    return vs / p;
  }
  size_t At(int64_t vs, int64_t j) const { return static_cast<size_t>(vs * m + j); }
  // The first microbatch a virtual stage runs: DualPipe's coming-back
  // direction starts at m/2.
  int64_t FirstMicrobatch(int64_t vs) const { return dualpipe && vs >= p ? m / 2 : 0; }
  int32_t Resource(int64_t d, StreamKind k) const {
    return static_cast<int32_t>(d * kStreamsPerStage + static_cast<int>(k));
  }
  int32_t Add(int64_t d, StreamKind stream, TaskKind kind, double duration, int64_t chunk,
              int64_t mb, bool on_resource = true) {
    const int32_t id = g.graph.AddTask(on_resource ? Resource(d, stream) : base::kNoResource,
                                       std::max(0.0, duration));
    g.info.push_back(TaskInfo{kind, stream, static_cast<int32_t>(d), static_cast<int32_t>(chunk),
                              static_cast<int32_t>(mb), -1});
    return id;
  }
  int32_t Bucket(int32_t task, int64_t b) {
    g.info[static_cast<size_t>(task)].bucket = static_cast<int32_t>(b);
    return task;
  }
  double Slow(int64_t d) const {
    return s.slowdown.empty() ? 1.0 : std::max(1.0, s.slowdown[static_cast<size_t>(d)]);
  }
  const ChunkWork& Work(int64_t d, int64_t c) const {
    return s.work[static_cast<size_t>(d * v + c)];
  }

  void Device(int64_t d, const std::vector<PassRef>& seq);
  void Wire();
};

void Builder::Device(int64_t d, const std::vector<PassRef>& order) {
  const double slow = Slow(d);
  const bool has_dp = !s.dp.empty();
  const StageDp dp = has_dp ? s.dp[static_cast<size_t>(d)] : StageDp{};
  const bool buckets_overlap = s.dp_overlap && !s.zero3;
  const int64_t buckets_per_chunk =
      std::max<int64_t>(1, (std::max<int64_t>(1, dp.buckets) + v - 1) / v);
  const double bucket_reduce = dp.grad_reduce / static_cast<double>(buckets_per_chunk * v);
  const double bucket_gather = dp.param_gather / static_cast<double>(buckets_per_chunk * v);

  // The recomputation runs as its own pass just before each backward.
  std::vector<PassRef> seq;
  seq.reserve(order.size() * 2);
  for (const PassRef& r : order) {
    if ((r.kind == TaskKind::kBackward || r.kind == TaskKind::kBackwardInput) &&
        Work(d, ChunkOf(r.virtual_stage)).recompute > 0)
      seq.push_back(PassRef{TaskKind::kRecompute, r.virtual_stage, r.microbatch});
    seq.push_back(r);
  }

  std::vector<int32_t> block;        // the next compute task waits for these
  // A fused forward (PassRef::fused) whose output waits for the next backward.
  struct PendingOut {
    int64_t vs = -1, j = -1, c = 0;
  } pending;
  std::vector<int32_t> reduces;      // gradient buckets of this device
  int32_t prev1 = -1;                // done task of the previous pass
  int32_t rec_entry = -1;            // entry of the recomputation before this backward

  // ZeRO-1/2 parameter all-gather of the previous step, bucket by bucket,
  // overlapping the first forward of each chunk.
  std::vector<std::vector<int32_t>> gather(static_cast<size_t>(v));
  if (has_dp && dp.param_gather > 0 && buckets_overlap)
    for (int64_t c = 0; c < v; ++c)
      for (int64_t b = 0; b < buckets_per_chunk; ++b)
        gather[static_cast<size_t>(c)].push_back(Bucket(
            Add(d, StreamKind::kDp, TaskKind::kParamGather, bucket_gather, c, -1), b));

  // ZeRO-3: every pass but W gathers its chunk's weights first (W needs the
  // saved inputs and the output gradient, not the weights); with full
  // recompute the recomputation gathers them again.
  // Once per step (zero3_once_per_step) only the chunk's first forward
  // gathers: every chunk's forwards run in microbatch order, 0 first.
  auto needs_gather = [&](const PassRef& r) {
    if (!s.zero3 || r.kind == TaskKind::kBackwardWeight) return false;
    if (s.zero3_once_per_step) return r.kind == TaskKind::kForward && r.microbatch == FirstMicrobatch(r.virtual_stage);
    return r.kind != TaskKind::kRecompute || s.zero3_gather_for_recompute;
  };
  std::vector<int32_t> z3_gather(seq.size(), -1), z3_gather_rest(seq.size(), -1);
  size_t next_gather = 0;
  // With overlap, ZeRO-3 passes run unit by unit (ChunkWork::zero3_units):
  // the pass waits for its first unit's gather, its last unit for the rest
  // of the gathers, and the reduce-scatter of every unit but the last runs
  // behind the pass. For uniform units this prices the per-unit pipeline
  // exactly: n units of compute c and gather g take g + max((n-1) c, (n-1) g) + c,
  // as n gathers prefetched one ahead do; the reduce-scatters end
  // max(n c, c + (n-1) r) + r after the backward starts.
  auto z3_units = [&](int64_t c) -> int64_t {
    if (!s.zero3 || !s.dp_overlap) return 1;
    return std::max<int64_t>(1, std::llround(Work(d, c).zero3_units));
  };
  // Creates the gather of the first pass after `k` that needs one; it may
  // start once `wait_for` is done (two weight buffers: prefetch depth one).
  // Without backward prefetch (FSDP1 BACKWARD_POST) the gather of a
  // backward-side pass is issued only by the pass just before it, once that
  // pass is done (`wait_post`): it waits until then.
  auto create_gather = [&](size_t k, int32_t wait_for, int32_t wait_post) {
    while (next_gather < seq.size() && (next_gather < k || !needs_gather(seq[next_gather])))
      ++next_gather;
    if (next_gather >= seq.size()) return;
    const PassRef& r = seq[next_gather];
    if (!s.zero3_backward_prefetch && r.kind != TaskKind::kForward) {
      if (next_gather != k) return;  // issued later, by the pass before it
      wait_for = wait_post;
    }
    const int64_t c = ChunkOf(r.virtual_stage);
    // BACKWARD_POST issues each unit's gather from the post-backward hook of
    // the unit after it, so the units' gathers and computations alternate:
    // as long as the whole gather before the pass.
    const bool post = !s.zero3_backward_prefetch && r.kind != TaskKind::kForward;
    const double units = post ? 1.0 : static_cast<double>(z3_units(c));
    const double whole = Work(d, c).param_gather;
    const int32_t t = Add(d, StreamKind::kDp, TaskKind::kParamGather, whole / units, c, r.microbatch);
    if (wait_for >= 0) g.graph.AddDependency(wait_for, t);
    z3_gather[next_gather] = t;
    if (units > 1)  // the other units' gathers, next on the stream
      z3_gather_rest[next_gather] =
          Add(d, StreamKind::kDp, TaskKind::kParamGather, whole * (units - 1) / units, c, r.microbatch);
    ++next_gather;
  };
  if (s.zero3) create_gather(0, -1, -1);

  // Emits `count` compute pieces of one pass; returns (first, last).
  auto pieces = [&](TaskKind kind, double duration, int64_t c, int64_t j, int64_t count) {
    int32_t first = -1, last = -1;
    for (int64_t i = 0; i < count; ++i) {
      const int32_t t = Add(d, StreamKind::kCompute, kind, duration / static_cast<double>(count), c, j);
      if (i == 0) {
        first = t;
        for (int32_t b : block) g.graph.AddDependency(b, t);
        block.clear();
      }
      last = t;
    }
    return std::make_pair(first, last);
  };

  // One pass with its TP collective. Returns (entry, done, first piece).
  struct Emitted {
    int32_t entry, done, first_piece;
  };
  auto pass = [&](TaskKind kind, double compute, double tp, int64_t c, int64_t j, int64_t count,
                  double inner_comm = 0) {
    compute = compute * slow + inner_comm;
    const auto [first, last] = pieces(kind, compute, c, j, count);
    if (tp > 0) {
      const int32_t comm = Add(d, StreamKind::kTp, TaskKind::kTpComm, tp, c, j);
      g.graph.AddDependency(last, comm);
      block.push_back(comm);
      return Emitted{first, comm, first};
    }
    return Emitted{first, last, first};
  };
  auto reduce_buckets = [&](int32_t first_piece, int64_t c, int64_t count) {
    // Bucket i reduces once piece i has produced its gradients.
    for (int64_t i = 0; i < count; ++i) {
      const int32_t t = Bucket(Add(d, StreamKind::kDp, TaskKind::kGradReduce, bucket_reduce, c, -1), i);
      g.graph.AddDependency(first_piece + static_cast<int32_t>(i), t);
      reduces.push_back(t);
    }
  };

  // The last backward pass of each chunk produces its final gradients.
  std::vector<size_t> last_grad(static_cast<size_t>(v), seq.size());
  for (size_t k = 0; k < seq.size(); ++k) {
    const TaskKind kind = seq[k].kind;
    if (kind == TaskKind::kBackward || kind == TaskKind::kBackwardWeight)
      last_grad[static_cast<size_t>(ChunkOf(seq[k].virtual_stage))] = k;
  }

  for (size_t k = 0; k < seq.size(); ++k) {
    const PassRef r = seq[k];
    const int64_t vs = r.virtual_stage, j = r.microbatch, c = ChunkOf(vs);
    const ChunkWork& w = Work(d, c);
    if (z3_gather[k] >= 0) block.push_back(z3_gather[k]);
    const bool bucketed = has_dp && buckets_overlap && dp.grad_reduce > 0 && k == last_grad[static_cast<size_t>(c)];
    // ZeRO-3 (never bucketed): one compute piece per unit.
    const int64_t units = z3_units(c);
    Emitted e{};
    switch (r.kind) {
      case TaskKind::kForward: {
        const auto& gb = gather[static_cast<size_t>(c)];
        const bool first_mb = j == FirstMicrobatch(vs);
        const bool gated = first_mb && !gb.empty();
        // The once-per-step copy-out runs with the first microbatch's forward.
        const double copy_out = s.zero3_once_per_step && first_mb ? w.zero3_copy_out : 0;
        e = pass(r.kind, w.forward + copy_out, w.tp_forward, c, j, gated ? buckets_per_chunk : units,
                 w.forward_comm);
        if (gated)  // piece i waits for gather bucket i
          for (size_t i = 0; i < gb.size(); ++i)
            g.graph.AddDependency(gb[i], e.first_piece + static_cast<int32_t>(i));
        break;
      }
      case TaskKind::kRecompute:
        e = pass(r.kind, w.recompute, w.tp_recompute, c, j, units);
        rec_entry = e.entry;
        break;
      case TaskKind::kBackward:
        e = pass(r.kind, w.backward, w.tp_backward, c, j, bucketed ? buckets_per_chunk : units,
                 w.backward_comm);
        if (bucketed) reduce_buckets(e.first_piece, c, buckets_per_chunk);
        break;
      case TaskKind::kBackwardInput:
        e = pass(r.kind, w.backward - w.backward_weight, w.tp_backward, c, j, units,
                 w.backward_comm);
        break;
      case TaskKind::kBackwardWeight:
        e = pass(r.kind, w.backward_weight, 0, c, j, bucketed ? buckets_per_chunk : units);
        if (bucketed) reduce_buckets(e.first_piece, c, buckets_per_chunk);
        break;
      default:
        break;
    }
    // The last unit's compute waits for the other units' gathers.
    if (z3_gather_rest[k] >= 0)
      g.graph.AddDependency(z3_gather_rest[k], e.first_piece + static_cast<int32_t>(units - 1));
    if (s.zero3) {
      // Prefetch the next gather while this pass runs (once the previous pass
      // has released its buffer), then reduce-scatter this pass's gradients.
      // Without overlap (dp_overlap off) the next gather waits for this
      // pass and the next pass for this pass's reduce-scatter: a gather for a
      // later pass is issued only once the passes before it are done (a
      // backward whose recomputation needs no gather of its own waits for
      // its weights after the recomputation, as the closed form charges it).
      if (s.dp_overlap || (k + 1 < seq.size() && needs_gather(seq[k + 1])))
        create_gather(k + 1, s.dp_overlap ? prev1 : e.done, e.done);
      if (s.zero3_once_per_step) {
        // One reduce-scatter of the whole chunk after its last backward; the
        // next compute waits for it (perform_reduce_grad's final callback).
        if (k == last_grad[static_cast<size_t>(c)]) {
          const int32_t t = Add(d, StreamKind::kDp, TaskKind::kGradReduce, w.grad_reduce, c, -1);
          g.graph.AddDependency(e.done, t);
          reduces.push_back(t);
          block.push_back(t);
        }
      } else if (r.kind == TaskKind::kBackward || r.kind == TaskKind::kBackwardWeight) {
        const double units_d = static_cast<double>(units);
        if (units > 1) {
          // Every unit's gradients but the last unit's, once the first is done.
          const int32_t t = Add(d, StreamKind::kDp, TaskKind::kGradReduce, w.grad_reduce * (units_d - 1) / units_d,
                                c, j);
          g.graph.AddDependency(e.first_piece, t);
          reduces.push_back(t);
        }
        const int32_t t = Add(d, StreamKind::kDp, TaskKind::kGradReduce, w.grad_reduce / units_d, c, j);
        g.graph.AddDependency(e.done, t);
        reduces.push_back(t);
        if (!s.dp_overlap) block.push_back(t);
      }
    }
    prev1 = e.done;

    // Where the consumers look, and the send to another device.
    const bool fwd = r.kind == TaskKind::kForward;
    const bool bwd = r.kind == TaskKind::kBackward || r.kind == TaskKind::kBackwardInput;
    if (fwd) f_entry[At(vs, j)] = e.entry;
    if (bwd) {
      b_entry[At(vs, j)] = rec_entry >= 0 ? rec_entry : e.entry;
      rec_entry = -1;
    }
    // The output of a pass (its send, when the consumer is on another
    // device), once `done` is.
    auto emit_out = [&](bool forward, int64_t g_vs, int64_t g_j, int64_t g_c, int32_t done) {
      int32_t out = done;
      const int64_t to = forward ? g_vs + 1 : g_vs - 1;
      if (to >= 0 && to < S && DeviceOf(to) != d && s.p2p > 0) {
        out = Add(d, StreamKind::kPp, TaskKind::kSend, s.p2p, g_c, g_j);
        g.graph.AddDependency(done, out);
        if (!s.p2p_overlap) block.push_back(out);  // synchronous p2p: the sender waits for it
      }
      (forward ? f_out : b_out)[At(g_vs, g_j)] = out;
    };
    if (bwd && pending.vs >= 0) {
      // The fused pair is done: its forward's output leaves now.
      fused.push_back(Fused{At(pending.vs, pending.j), vs, j});
      emit_out(true, pending.vs, pending.j, pending.c, e.done);
      pending = PendingOut{};
    }
    if (fwd && r.fused) pending = PendingOut{vs, j, c};
    else if (fwd || bwd) emit_out(fwd, vs, j, c, e.done);
  }

  // Gradient reduction without overlap: after the last pass.
  if (has_dp && dp.grad_reduce > 0 && !buckets_overlap && !s.zero3) {
    const int32_t t = Add(d, StreamKind::kDp, TaskKind::kGradReduce, dp.grad_reduce, 0, -1);
    if (prev1 >= 0) g.graph.AddDependency(prev1, t);
    reduces.push_back(t);
  }
  // The optimizer step (or the offloaded one) once every gradient is
  // reduced. The offload task holds ZeRO-Offload's host step and what the
  // activation copies to host memory leave exposed; a device optimizer step
  // beside the latter follows it.
  const auto closing = [&](TaskKind kind, double seconds) {
    const int32_t t = Add(d, StreamKind::kCompute, kind, seconds, 0, -1);
    for (int32_t b : block) g.graph.AddDependency(b, t);
    block.clear();
    for (int32_t rd : reduces) g.graph.AddDependency(rd, t);
    if (prev1 >= 0) g.graph.AddDependency(prev1, t);
    prev1 = t;
  };
  if (has_dp && dp.offload > 0) closing(TaskKind::kOffload, dp.offload);
  if (has_dp && dp.optimizer > 0) closing(TaskKind::kOptimizer, dp.optimizer * slow);
  // ZeRO-1/2 without overlap: gather the updated weights at the end.
  if (has_dp && dp.param_gather > 0 && !buckets_overlap && !s.zero3) {
    const int32_t t = Add(d, StreamKind::kDp, TaskKind::kParamGather, dp.param_gather, 0, -1);
    if (prev1 >= 0) g.graph.AddDependency(prev1, t);
  }
}

void Builder::Wire() {
  for (int64_t vs = 0; vs < S; ++vs)
    for (int64_t j = 0; j < m; ++j) {
      // A microbatch runs virtual stages lo..hi: all of them, or under
      // DualPipe its direction's p.
      int64_t lo = 0, hi = S - 1;
      if (dualpipe) {
        const bool back = j >= m / 2;
        if ((vs >= p) != back) continue;
        lo = back ? p : 0;
        hi = lo + p - 1;
      }
      const size_t i = At(vs, j);
      if (vs > lo) g.graph.AddDependency(f_out[At(vs - 1, j)], f_entry[i]);
      if (vs < hi) g.graph.AddDependency(b_out[At(vs + 1, j)], b_entry[i]);
      else g.graph.AddDependency(f_out[i], b_entry[i]);
    }
  // A fused pair starts once both its inputs are in (dualpipe.py commits
  // both receives before _forward_backward_chunk): the forward waits for
  // the backward's too. A backward on the last virtual stage of its
  // direction takes its own forward's output, already done before.
  for (const Fused& f : fused) {
    const bool back = f.j >= m / 2;
    const int64_t hi = back ? S - 1 : p - 1;
    if (f.vs < hi) g.graph.AddDependency(b_out[At(f.vs + 1, f.j)], f_entry[f.forward]);
  }
}

}  // namespace

StepError BuildStepGraph(const StepSpec& s, StepGraph& out) {
  out = StepGraph{};
  if (s.stages < 1 || s.microbatches < 1 || s.chunks < 1 ||
      s.work.size() != static_cast<size_t>(s.stages * s.chunks) ||
      (!s.dp.empty() && s.dp.size() != static_cast<size_t>(s.stages)) ||
      (!s.slowdown.empty() && s.slowdown.size() != static_cast<size_t>(s.stages)))
    return StepError::kBadShape;
  if (s.schedule == PipelineSchedule::kInterleaved && s.chunks > 1 && s.microbatches % s.stages != 0)
    return StepError::kInterleaveMultiple;
  if (IsVShape(s.schedule) && s.chunks != 2) return StepError::kVShapeChunks;
  if (s.schedule == PipelineSchedule::kDualPipe &&
      (s.chunks != 2 || s.stages % 2 != 0 || s.microbatches % 2 != 0 || s.microbatches < 2 * s.stages))
    return StepError::kDualPipeShape;

  out.stages = s.stages;
  out.microbatches = s.microbatches;
  out.chunks = s.chunks;
  out.schedule = s.schedule;
  out.activation_bytes.resize(s.work.size());
  for (size_t i = 0; i < s.work.size(); ++i) out.activation_bytes[i] = s.work[i].activation_bytes;

  Sequences seq;
  if (IsVShape(s.schedule)) {
    std::vector<ChunkWork> nominal = s.work;
    if (!s.slowdown.empty())
      for (int64_t d = 0; d < s.stages; ++d)
        for (int c = 0; c < 2; ++c) {
          ChunkWork& w = nominal[static_cast<size_t>(d * 2 + c)];
          const double f = std::max(1.0, s.slowdown[static_cast<size_t>(d)]);
          w.forward *= f;
          w.backward *= f;
          w.backward_weight *= f;
          w.recompute *= f;
        }
    // What a pass holds its compute stream for: exposed TP collectives and
    // in-pass communication too.
    for (ChunkWork& w : nominal) {
      w.forward += w.forward_comm + w.tp_forward;
      w.backward += w.backward_comm + w.tp_backward;
      w.recompute += w.tp_recompute;
    }
    seq = VShapeOrder(s.stages, s.microbatches, VShapeCap(s.schedule, s.stages), nominal);
    size_t total = 0;
    for (const auto& o : seq) total += o.size();
    if (total != static_cast<size_t>(6 * s.stages * s.microbatches)) return StepError::kDeadlock;
  } else if (s.schedule == PipelineSchedule::kDualPipe) {
    seq = DualPipeOrder(s.stages, s.microbatches);
  } else {
    seq = StaticOrder(s);
  }

  Builder b(s, out);
  const size_t cells = static_cast<size_t>(b.S * s.microbatches);
  b.f_entry.assign(cells, -1);
  b.f_out.assign(cells, -1);
  b.b_entry.assign(cells, -1);
  b.b_out.assign(cells, -1);
  size_t passes = 0;
  for (const auto& o : seq) passes += o.size();
  const size_t est = passes * (s.p2p > 0 ? 2 : 1) + passes / 2;
  out.graph.Reserve(est, 3 * est);
  out.info.reserve(est);
  for (int64_t d = 0; d < s.stages; ++d)
    for (int k = 0; k < kStreamsPerStage; ++k) out.graph.AddResource();
  for (int64_t d = 0; d < s.stages; ++d) b.Device(d, seq[static_cast<size_t>(d)]);
  b.Wire();
  return StepError::kNone;
}

// --- analysis ------------------------------------------------------------------

StepResult Analyze(const StepGraph& g, const base::Timeline& t) {
  StepResult r;
  r.complete = t.complete;
  r.iteration = t.makespan;
  r.tasks = static_cast<int64_t>(g.graph.task_count());
  r.events = t.events;
  const int64_t p = g.stages;
  r.stages.assign(static_cast<size_t>(p), StageStats{});
  if (!t.complete) return r;
  const size_t n = g.graph.task_count();

  // Dependencies of each task, as compressed rows.
  std::vector<int32_t> first(n + 1, 0), preds(g.graph.dependency_count());
  g.graph.ForEachDependency([&](int32_t, int32_t after) { ++first[static_cast<size_t>(after) + 1]; });
  for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  {
    std::vector<int32_t> cursor(first.begin(), first.end() - 1);
    g.graph.ForEachDependency([&](int32_t before, int32_t after) {
      preds[static_cast<size_t>(cursor[static_cast<size_t>(after)]++)] = before;
    });
  }

  // Charges a wait of the compute stream, [from, to), to the communication
  // tasks that ran during it (first come, first charged; a helper task of no
  // work stands for its own dependencies), the rest to pipeline bubble.
  struct Blocker {
    double start, finish;
    double StageStats::*slot;
  };
  std::vector<Blocker> blockers;
  auto consider = [&](int32_t b) {
    const size_t bi = static_cast<size_t>(b);
    double StageStats::*slot = nullptr;
    switch (g.info[bi].kind) {
      case TaskKind::kTpComm: slot = &StageStats::wait_tp; break;
      case TaskKind::kSend: slot = &StageStats::wait_p2p; break;
      case TaskKind::kGradReduce:
      case TaskKind::kParamGather: slot = &StageStats::wait_dp; break;
      default: break;
    }
    if (slot != nullptr) blockers.push_back(Blocker{t.start[bi], t.finish[bi], slot});
  };
  auto consider_deps = [&](size_t task) {
    for (int32_t k = first[task]; k < first[task + 1]; ++k) {
      const int32_t b = preds[static_cast<size_t>(k)];
      if (g.info[static_cast<size_t>(b)].kind == TaskKind::kJoin) {
        for (int32_t q = first[static_cast<size_t>(b)]; q < first[static_cast<size_t>(b) + 1]; ++q)
          consider(preds[static_cast<size_t>(q)]);
      } else {
        consider(b);
      }
    }
  };
  auto charge = [&](StageStats& st, double from, double to) {
    const double gap = to - from;
    blockers.erase(std::remove_if(blockers.begin(), blockers.end(),
                                  [&](const Blocker& b) { return b.finish <= from || b.start >= to; }),
                   blockers.end());
    if (gap <= 0) {
      blockers.clear();
      return;
    }
    std::sort(blockers.begin(), blockers.end(),
              [](const Blocker& a, const Blocker& b) { return a.start < b.start; });
    double cursor = from, charged = 0;
    for (const Blocker& b : blockers) {
      const double lo = std::max(cursor, b.start), hi = std::min(to, b.finish);
      if (hi > lo) {
        st.*(b.slot) += hi - lo;
        charged += hi - lo;
        cursor = hi;
      }
    }
    st.wait_bubble += gap - charged;
    blockers.clear();
  };

  std::vector<double> compute_end(static_cast<size_t>(p), 0.0);
  for (size_t i = 0; i < n; ++i) {
    const TaskInfo& info = g.info[i];
    StageStats& st = r.stages[static_cast<size_t>(info.stage)];
    st.end = std::max(st.end, t.finish[i]);
    if (info.stream != StreamKind::kCompute || g.graph.resource(static_cast<int32_t>(i)) == base::kNoResource)
      continue;
    // Compute tasks of a stage are added in program order: gaps are waits.
    const double dur = t.finish[i] - t.start[i];
    double& prev_end = compute_end[static_cast<size_t>(info.stage)];
    consider_deps(i);
    charge(st, prev_end, t.start[i]);
    prev_end = t.finish[i];
    st.busy += dur;
    switch (info.kind) {
      case TaskKind::kForward: st.forward += dur; break;
      case TaskKind::kBackward:
      case TaskKind::kBackwardInput:
      case TaskKind::kBackwardWeight: st.backward += dur; break;
      case TaskKind::kRecompute: st.recompute += dur; break;
      case TaskKind::kOptimizer: st.optimizer += dur; break;
      case TaskKind::kOffload: st.wait_offload += dur; st.busy -= dur; break;
      default: break;
    }
  }
  // The tail of each stage: after its last compute task until the iteration
  // ends, charged to its own communication still running then.
  std::vector<std::vector<int32_t>> tail(static_cast<size_t>(p));
  for (size_t i = 0; i < n; ++i) {
    const TaskInfo& info = g.info[i];
    if (info.stream != StreamKind::kCompute && t.finish[i] > compute_end[static_cast<size_t>(info.stage)])
      tail[static_cast<size_t>(info.stage)].push_back(static_cast<int32_t>(i));
  }
  for (int64_t d = 0; d < p; ++d) {
    for (int32_t b : tail[static_cast<size_t>(d)]) consider(b);
    charge(r.stages[static_cast<size_t>(d)], compute_end[static_cast<size_t>(d)], r.iteration);
  }
  double bubble = 0;
  for (int64_t d = 0; d < p; ++d) {
    StageStats& st = r.stages[static_cast<size_t>(d)];
    st.idle = r.iteration - st.busy;
    bubble += st.wait_bubble;
    if (st.end > r.stages[static_cast<size_t>(r.critical_stage)].end) r.critical_stage = static_cast<int32_t>(d);
  }
  r.bubble_fraction = r.iteration > 0 ? bubble / (static_cast<double>(p) * r.iteration) : 0;

  // Activations held: from the start of a chunk-microbatch's forward to the end
  // of its last backward pass (W when split).
  const int64_t m = g.microbatches, v = g.chunks;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> from(static_cast<size_t>(p * v * m), inf), to(from.size(), -inf);
  for (size_t i = 0; i < n; ++i) {
    const TaskInfo& info = g.info[i];
    if (info.stream != StreamKind::kCompute || info.microbatch < 0) continue;
    const size_t cell = static_cast<size_t>((info.stage * v + info.chunk) * m + info.microbatch);
    if (info.kind == TaskKind::kForward) from[cell] = std::min(from[cell], t.start[i]);
    const bool last_pass = info.kind == TaskKind::kBackwardWeight ||
                           (info.kind == TaskKind::kBackward);
    if (last_pass) to[cell] = std::max(to[cell], t.finish[i]);
  }
  std::vector<std::pair<double, double>> ev, merged;  // (time, +bytes or -bytes); count via sign
  ev.reserve(static_cast<size_t>(2 * v * m));
  merged.reserve(ev.capacity());
  std::vector<size_t> runs, next_runs;
  const auto before = [](const std::pair<double, double>& a, const std::pair<double, double>& b) {
    return a.first < b.first || (a.first == b.first && a.second < b.second);
  };
  for (int64_t d = 0; d < p; ++d) {
    // The acquisitions of one chunk, then its releases, each in microbatch
    // order: every schedule runs a chunk's microbatches in order, so each
    // such run is already in time order and merging the runs sorts the
    // whole. Elements the order cannot tell apart are equal pairs, so the
    // result is the one std::sort gives; a run out of order falls back to it.
    ev.clear();
    runs.assign(1, 0);
    for (int64_t c = 0; c < v; ++c) {
      const double bytes = g.activation_bytes[static_cast<size_t>(d * v + c)];
      for (int pass = 0; pass < 2; ++pass) {
        for (int64_t j = 0; j < m; ++j) {
          const size_t cell = static_cast<size_t>((d * v + c) * m + j);
          if (from[cell] == inf) continue;
          // Encode the count in the integer part and bytes as a second key:
          // releases sort before acquisitions at equal times.
          if (pass == 0) ev.emplace_back(from[cell], bytes + 1);
          else ev.emplace_back(to[cell], -(bytes + 1));
        }
        runs.push_back(ev.size());
      }
    }
    bool in_order = true;
    for (size_t k = 0; k + 1 < runs.size() && in_order; ++k)
      in_order = std::is_sorted(ev.begin() + static_cast<std::ptrdiff_t>(runs[k]),
                                ev.begin() + static_cast<std::ptrdiff_t>(runs[k + 1]), before);
    if (!in_order) {
      std::sort(ev.begin(), ev.end(), before);
    } else {
      // Merge neighbouring runs until one is left.
      while (runs.size() > 2) {
        merged.resize(ev.size());
        next_runs.assign(1, 0);
        for (size_t k = 0; k + 1 < runs.size(); k += 2) {
          const auto a = ev.begin() + static_cast<std::ptrdiff_t>(runs[k]);
          const auto b = ev.begin() + static_cast<std::ptrdiff_t>(runs[k + 1]);
          const auto e = k + 2 < runs.size() ? ev.begin() + static_cast<std::ptrdiff_t>(runs[k + 2]) : b;
          std::merge(a, b, b, e, merged.begin() + static_cast<std::ptrdiff_t>(runs[k]), before);
          next_runs.push_back(k + 2 < runs.size() ? runs[k + 2] : runs[k + 1]);
        }
        ev.swap(merged);
        runs.swap(next_runs);
      }
    }
    int64_t held = 0, peak = 0;
    double bytes = 0, peak_bytes = 0;
    for (const auto& [time, delta] : ev) {
      (void)time;
      held += delta > 0 ? 1 : -1;
      bytes += delta > 0 ? delta - 1 : delta + 1;
      peak = std::max(peak, held);
      peak_bytes = std::max(peak_bytes, bytes);
    }
    r.stages[static_cast<size_t>(d)].peak_in_flight = peak;
    r.stages[static_cast<size_t>(d)].peak_activation_bytes = peak_bytes;
  }
  return r;
}

}  // namespace orrery::parallelism
