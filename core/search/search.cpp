#include "core/search/search.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "core/base/format.h"
#include "hardware/device_model.h"
#include "core/estimate/event_estimator.h"
#include "core/estimate/parallel_comm.h"
#include "core/goodput/goodput.h"
#include "hardware/topology.h"
#include "models/transformer.h"
#include "parallelism/schedule.h"

namespace orrery::engine {

using parallelism::Recompute;

const char* ObjectiveName(Objective o) {
  switch (o) {
    case Objective::kTime: return "time";
    case Objective::kCost: return "cost";
    case Objective::kEnergy: return "energy";
    case Objective::kTokensPerDollar: return "tokens-per-dollar";
  }
  return "?";
}

bool ParseObjective(const std::string& text, Objective& out) {
  for (Objective o : {Objective::kTime, Objective::kCost, Objective::kEnergy,
                      Objective::kTokensPerDollar}) {
    if (text == ObjectiveName(o)) {
      out = o;
      return true;
    }
  }
  return false;
}

double ObjectiveScore(Objective o, const TrainingEstimate& e, int64_t global_batch,
                      int64_t seq_len) {
  const double tokens = static_cast<double>(global_batch) * static_cast<double>(seq_len);
  switch (o) {
    case Objective::kTime: return e.iteration_s / tokens;
    case Objective::kCost:
    case Objective::kTokensPerDollar: return e.cost_usd / tokens;
    case Objective::kEnergy: return e.energy_j / tokens;
  }
  return e.iteration_s / tokens;
}

ObjectiveWeights WeightsOf(Objective o, const hardware::SystemSpec& s, const parallelism::TrainingPlan& plan,
                           double parameters) {
  ObjectiveWeights w;
  if (o == Objective::kTime) return w;
  // Per second of work (work_s = 1: expected failures and checkpoints scale
  // with the work, so the ratios are those of any run).
  const goodput::Result g = goodput::Evaluate(goodput::MakeInputs(s, plan, parameters, 0, 1));
  const double n = static_cast<double>(hardware::DeviceCount(s));
  const double wall = g.goodput > 0 ? 1 / g.goodput : 1;
  if (o == Objective::kEnergy) {
    const double idle_w = hardware::IdlePower(s.device);
    const double idle = g.goodput > 0 ? g.idle_s : 0;  // restarts and stalls per second of work
    const double busy = wall - idle;
    const double busy_w = hardware::BusyPower(s.device);
    w.per_s = n * s.pue * (busy_w * busy + idle_w * idle);
    w.bubble = n * s.pue * (busy_w - idle_w) * busy;
  } else {
    w.per_s = n * s.price_per_device_hour * wall;
  }
  return w;
}

double WeightedScore(const ObjectiveWeights& w, const TrainingEstimate& e, double tokens) {
  return (e.iteration_s * w.per_s - e.time.pp_bubble * w.bubble) / tokens;
}

std::string ObjectiveProblem(Objective o, const hardware::SystemSpec& s) {
  if ((o == Objective::kCost || o == Objective::kTokensPerDollar) && !(s.price_per_device_hour > 0))
    return "objective '" + std::string(ObjectiveName(o)) + "' needs system.price_per_device_hour (the system '" +
           s.name + "' has none; add --set 'system.price_per_device_hour=2 USD/h')";
  if (o == Objective::kEnergy && !(s.device.tdp > 0))
    return "objective 'energy' needs system.device.tdp (the device '" + s.device.name + "' has none)";
  return {};
}

std::string ResizeSystem(hardware::SystemSpec& s, int64_t devices) {
  if (devices < 1) return "the device count must be at least 1";
  if (devices % s.devices_per_node == 0) {
    s.nodes = devices / s.devices_per_node;
  } else if (devices < s.devices_per_node && s.devices_per_node % devices == 0) {
    s.devices_per_node = devices;
    s.nodes = 1;
  } else {
    return std::to_string(devices) + " devices are not a whole number of " +
           std::to_string(s.devices_per_node) + "-device nodes";
  }
  // The fabric must hold them: the limits `orrery network` checks.
  base::Diagnostics d;
  hardware::CheckTopology(s, "system", {}, d);
  if (!d.ok()) return std::to_string(devices) + " devices do not fit the fabric: " + d.ToString();
  return {};
}

parallelism::TrainingPlan PlanOf(const Scenario& s, const PlanKnobs& k) {
  parallelism::TrainingPlan p = s.training;
  ApplyKnobs(k, p);
  return p;
}

namespace {

// Recompute modes a search probes (parallelism::Recompute: none, selective,
// full, op): the per-mode compute bounds are indexed by the mode.
constexpr int kRecomputeModes = static_cast<int>(parallelism::Recompute::kOp) + 1;

// Every knob, for the event memo's key.
std::string KnobsKey(const PlanKnobs& k) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
                " %" PRId64 " %" PRId64 " %" PRId64 " %d %d %d %d %d %" PRId64 " %s",
                k.devices, k.tp, k.pp, k.cp, k.ep, k.etp, k.dp, k.global_batch, k.micro_batch,
                k.interleave, static_cast<int>(k.recompute), k.sequence_parallel ? 1 : 0,
                k.tp_comm_overlap ? 1 : 0, k.dp_overlap ? 1 : 0, k.offload ? 1 : 0, k.zero,
                k.group_order.data());
  return buf;
}

}  // namespace

Scenario ScenarioOf(const Scenario& s, const PlanKnobs& k) {
  Scenario out = s;
  ResizeSystem(out.system, k.devices);
  ApplyKnobs(k, out.training);
  out.workload.global_batch = k.global_batch;
  return out;
}

void Reestimate(const Scenario& s, SearchCandidate& c) {
  const Scenario one = ScenarioOf(s, c.knobs);
  const TrainingEstimator est(one.model, one.system);
  c.estimate = est.Run(one.training, one.workload);
}

namespace {

// One device count: the resized scenario and its estimator.
struct DeviceContext {
  Scenario scenario;
  std::unique_ptr<TrainingEstimator> estimator;
  double scale = 1;  // objective per second of iteration
  double bubble_weight = 0;  // objective saved per second of pipeline bubble (idle power)
};

// Best first: the objective; on an exact tie of it (ZeRO-1 and ZeRO-2 when
// the gradient traffic of both hides alike), the plan that needs less memory
// per device, the one with headroom; then the enumeration order.
bool Better(const SearchCandidate& a, const SearchCandidate& b) {
  if (a.score != b.score) return a.score < b.score;
  const double ma = a.estimate.memory.total(), mb = b.estimate.memory.total();
  if (ma != mb) return ma < mb;
  return a.ordinal < b.ordinal;
}

// A shape of one device count, with its index in the whole enumeration.
struct ShapeTask {
  int context = 0;
  PlanShape shape;
  uint64_t index = 0;
};

// A block: the candidates of one shape that share micro_batch,
// sequence_parallel, interleave, zero stage, offload and recompute, and with
// them one lower bound on the objective. Blocks are the unit of work and of
// pruning.
struct Block {
  double bound = 0;      // no candidate of the block scores below it
  uint64_t ordinal = 0;  // ordinal of the block's first candidate
  uint32_t shape = 0;    // index into the shape list
  uint32_t count = 0;    // candidates (2 x 2 x 24 = 96 at most)
  uint32_t prepared = 0; // which (micro_batch, sequence_parallel) of its shape: blocks
                         // sharing it share one PreparedWorkload (PreparedCache)
  uint32_t slot = 0;     // position among the shape's blocks, those pruned by memory
                         // included (the same at every capacity: SearchMemo)
  int64_t micro_batch = 1, interleave = 1;
  int8_t sequence_parallel = 0, zero = 0, offload = 0, recompute = 0;
};

// A function object, not a function pointer, so that the sorts inline it.
struct BoundOrder {
  bool operator()(const Block& a, const Block& b) const {
    if (a.bound != b.bound) return a.bound < b.bound;
    return a.ordinal < b.ordinal;
  }
};

// What the probes of one shape leave for its blocks.
struct ShapeSetup {
  ShapeAxes axes;
  PlanKnobs knobs;                 // the shape's degrees, the rest at the probe's values
  parallelism::TrainingPlan plan;  // the scenario's plan with `knobs` applied
  parallelism::Workload workload;  // global batch rounded for the shape
  double tokens = 0;               // per iteration
  std::vector<Block> blocks;       // enumeration order; moved out by Order()
  SearchStats stats;               // candidates, shapes, divisibility, memory, probes
};

// The outcome of costing one block.
struct BlockResult {
  std::vector<SearchCandidate> top;  // its best, at most Keep()
  uint64_t evaluated = 0, out_of_memory = 0, refused = 0, feasible = 0;
  uint64_t pruned_memory = 0;  // the rest of a block whose first plan does not fit
  double min_total_bytes = 0;
};

}  // namespace

struct SearchMemo::Impl {
  // A block costed at some capacity. Its plans' memory checks (RunIfFits)
  // came out the same at every capacity C with lo <= C < hi (lo: the largest
  // memory that passed, hi: the smallest that did not), and so does the
  // result, but for the capacity its estimates carry.
  struct Outcome {
    double lo = 0, hi = 0;
    BlockResult result;
  };
  // The probes of one shape (Searcher::PrepareShape) and its blocks.
  struct Shape {
    bool states = false;            // states_bytes and step_s are filled
    double states_bytes[4][2] = {}; // weights + gradients + optimizer by (zero, offload)
    double step_s[4][2] = {};       // optimizer step + offload by (zero, offload)
    // by (micro_batch, sequence_parallel), then recompute (one slot per
    // parallelism::Recompute mode: none, selective, full, op)
    std::vector<std::array<double, kRecomputeModes>> fb;
    std::vector<std::vector<Outcome>> blocks;  // by Block::slot (one or two outcomes each)
  };
  std::vector<Shape> shapes;  // by shape index (the enumeration does not depend on the capacity)
  // By the finalist's knobs (KnobsKey).
  std::unordered_map<std::string, EventEstimate> events;
};

SearchMemo::SearchMemo() : impl_(std::make_unique<Impl>()) {}
SearchMemo::~SearchMemo() = default;

namespace {

// Inserts `c` into `top` (best first, at most `keep`). No allocation once
// `top` has reserved keep + 1.
void Insert(std::vector<SearchCandidate>& top, size_t keep, const SearchCandidate& c) {
  if (top.size() >= keep && !Better(c, top.back())) return;
  top.insert(std::upper_bound(top.begin(), top.end(), c, Better), c);
  if (top.size() > keep) top.pop_back();
}

// The search runs in two phases on every thread:
//   1. Prepare: each shape's probes (states memory per zero/offload, one
//      compute probe per micro_batch and sequence_parallel) give its blocks
//      and their bounds. Nothing here depends on what another thread found.
//   2. Evaluate: the blocks of all shapes, sorted by bound (ties by
//      ordinal), are costed best bound first. Block j is pruned when its
//      bound exceeds T_j, the Keep()-th best score of blocks 0 .. j-1; as
//      the bounds rise and T falls, the costed blocks are a prefix 0 .. c-1
//      and everything from the cut c on is pruned. Threads cost blocks
//      ahead of the committed prefix; results are committed in order under
//      a lock, which finds the cut exactly, so the counts (evaluated,
//      pruned, feasible) are the same for any thread count and any run.
//      Work a thread did past the cut is thrown away, never counted.
// Candidates of blocks past the cut score above T_c, the Keep()-th best of
// the prefix: the answer is the exact top Keep() of the whole space.
class Searcher {
 public:
  Searcher(const SearchOptions& o, const std::vector<std::unique_ptr<DeviceContext>>& contexts,
           const std::vector<ShapeTask>& shapes)
      : o_(o), contexts_(contexts), shapes_(shapes), setups_(shapes.size()),
        memo_(o.memo != nullptr && o.shards <= 1 ? &o.memo->impl() : nullptr) {
    top_.reserve(Keep() + 1);
    if (memo_ != nullptr && memo_->shapes.size() < shapes.size()) memo_->shapes.resize(shapes.size());
  }

  // Candidates kept: the top K and the event check's spares.
  size_t Keep() const {
    return static_cast<size_t>(o_.top + (o_.event_check ? std::max(0, o_.event_spare) : 0));
  }

  // Phase 1, on every thread.
  void Prepare() {
    for (;;) {
      const size_t i = next_shape_.fetch_add(1, std::memory_order_relaxed);
      if (i >= shapes_.size()) break;
      if (CancelRaised()) break;
      PrepareShape(i);
      prepared_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // Between the phases, on one thread: every block in one list, to be put
  // in bound order as far as the search gets (SortThrough).
  void Order() {
    size_t total = 0;
    for (const ShapeSetup& su : setups_) total += su.blocks.size();
    order_.reserve(total);
    for (ShapeSetup& su : setups_) {
      order_.insert(order_.end(), su.blocks.begin(), su.blocks.end());
      std::vector<Block>().swap(su.blocks);
    }
    results_ = std::vector<std::unique_ptr<BlockResult>>(order_.size());
    ready_ = std::vector<std::atomic<bool>>(order_.size());
  }

  // Phase 2, on every thread.
  void Evaluate() {
    std::vector<SearchCandidate> scratch;
    scratch.reserve(Keep() + 1);
    PreparedCache cache;  // this thread's: a workload's memo is not shared between threads
    for (;;) {
      if (stop_.load(std::memory_order_relaxed)) break;
      const size_t i = next_block_.fetch_add(1, std::memory_order_relaxed);
      if (i >= order_.size()) break;
      if (CancelRaised()) break;
      if (i >= sorted_.load(std::memory_order_acquire)) SortThrough(i);
      const Block& b = order_[i];
      // T only falls as blocks are committed, so a bound above today's
      // committed threshold is above T_i: block i and every later one are
      // past the cut.
      if (o_.prune_by_time && b.bound > threshold_.load(std::memory_order_relaxed)) {
        stop_.store(true, std::memory_order_relaxed);
        break;
      }
      auto r = std::make_unique<BlockResult>();
      EvaluateBlock(b, *r, cache);
      results_[i] = std::move(r);
      ready_[i].store(true, std::memory_order_release);
      Commit();
    }
  }

  // Commits the results ready in order, stopping at the cut.
  void Commit() {
    std::lock_guard<std::mutex> lock(commit_mu_);
    while (!cut_ && frontier_ < order_.size() && ready_[frontier_].load(std::memory_order_acquire)) {
      if (o_.prune_by_time && order_[frontier_].bound > Threshold()) {
        cut_ = true;
        stop_.store(true, std::memory_order_relaxed);
        break;
      }
      const BlockResult& r = *results_[frontier_];
      for (const SearchCandidate& c : r.top) Insert(top_, Keep(), c);
      committed_.evaluated += r.evaluated;
      committed_.out_of_memory += r.out_of_memory;
      committed_.refused += r.refused;
      committed_.feasible += r.feasible;
      committed_.pruned_memory += r.pruned_memory;
      if (r.min_total_bytes > 0 &&
          (committed_.min_total_bytes == 0 || r.min_total_bytes < committed_.min_total_bytes))
        committed_.min_total_bytes = r.min_total_bytes;
      results_[frontier_].reset();
      ++frontier_;
    }
    threshold_.store(Threshold(), std::memory_order_relaxed);
  }

  // After both phases: the best plans and the counts. Blocks not committed
  // are past the cut (or not reached when cancelled) and count as pruned by
  // the time bound.
  void Finish(std::vector<SearchCandidate>& top, SearchStats& stats) {
    Commit();
    stats = committed_;
    for (const ShapeSetup& su : setups_) {
      stats.candidates += su.stats.candidates;
      stats.shapes += su.stats.shapes;
      stats.pruned_divisibility += su.stats.pruned_divisibility;
      stats.pruned_schedule += su.stats.pruned_schedule;
      stats.pruned_memory += su.stats.pruned_memory;
      stats.probes += su.stats.probes;
      if (su.stats.min_states_bytes > 0 &&
          (stats.min_states_bytes == 0 || su.stats.min_states_bytes < stats.min_states_bytes))
        stats.min_states_bytes = su.stats.min_states_bytes;
    }
    for (size_t i = frontier_; i < order_.size(); ++i) stats.pruned_time += order_[i].count;
    top = top_;
  }

  // Progress in shapes: half for the probes, half for the blocks committed.
  uint64_t Progress() const {
    const uint64_t n = shapes_.size();
    if (order_.empty()) return prepared_.load(std::memory_order_relaxed) / 2;
    std::lock_guard<std::mutex> lock(commit_mu_);
    if (cut_) return n;
    return n / 2 + (n - n / 2) * frontier_ / order_.size();
  }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  bool CancelRaised() {
    if (o_.cancel == nullptr || !o_.cancel->load(std::memory_order_relaxed)) return false;
    cancelled_.store(true, std::memory_order_relaxed);
    stop_.store(true, std::memory_order_relaxed);
    return true;
  }

  // Puts blocks 0 .. i (and some after) in their final order. A search costs
  // a small prefix of the blocks, so they are ordered in chunks that double,
  // each the next smallest of the rest (nth_element), then sorted: the order
  // is the same as one full sort ((bound, ordinal) is unique), for much less.
  // Other threads meanwhile read blocks before sorted_ only.
  void SortThrough(size_t i) {
    std::lock_guard<std::mutex> lock(sort_mu_);
    size_t from = sorted_.load(std::memory_order_relaxed);
    while (from <= i) {
      const size_t to = std::min(order_.size(), from + std::max<size_t>(1024, from));
      const auto first = order_.begin() + static_cast<std::ptrdiff_t>(from);
      const auto mid = order_.begin() + static_cast<std::ptrdiff_t>(to);
      if (mid != order_.end()) std::nth_element(first, mid, order_.end(), BoundOrder{});
      std::sort(first, mid, BoundOrder{});
      from = to;
      sorted_.store(from, std::memory_order_release);
    }
  }

  double Threshold() const {
    return top_.size() >= Keep() ? top_.back().score : std::numeric_limits<double>::infinity();
  }

  void PrepareShape(size_t index) {
    ShapeSetup& su = setups_[index];
    const PlanShape& shape = shapes_[index].shape;
    const DeviceContext& ctx = *contexts_[static_cast<size_t>(shapes_[index].context)];
    const Scenario& s = ctx.scenario;
    const TrainingEstimator& est = *ctx.estimator;
    SearchStats& n = su.stats;
    su.axes = AxesFor(s.model, shape, o_.space);
    const ShapeAxes& axes = su.axes;
    const uint64_t all = axes.Candidates(shape.dp);
    n.candidates += all;
    ++n.shapes;
    if (DivisibilityProblem(s.model, s.workload, shape) != nullptr) {
      n.pruned_divisibility += all;
      return;
    }
    parallelism::Workload& w = su.workload;
    w = s.workload;
    w.global_batch = shape.global_batch;
    su.tokens = static_cast<double>(w.global_batch) * static_cast<double>(w.seq_len);
    const double capacity = s.system.device.memory_capacity;

    PlanKnobs& k = su.knobs;
    k.devices = shape.devices;
    k.tp = shape.tp;
    k.pp = shape.pp;
    k.cp = shape.cp;
    k.ep = shape.ep;
    k.etp = shape.etp;
    k.dp = shape.dp;
    k.global_batch = shape.global_batch;
    k.group_order = axes.orders.text[0];
    su.plan = s.training;
    ApplyKnobs(k, su.plan);
    // The scenario's end-stage layers or activation offload written for
    // another pp (parallelism::StageLayoutInvalid, OffloadLayersInvalid):
    // no plan of this shape runs, as the estimator would say of each.
    if (parallelism::StageLayoutInvalid(su.plan, s.model.layers) ||
        parallelism::OffloadLayersInvalid(su.plan, s.model.layers)) {
      n.pruned_divisibility += all;
      return;
    }
    // Context parallelism no scheme can run for this shape (engine::CpPlanRuns:
    // Ulysses' heads, or a materialised attention under ring or all-gather).
    if (!engine::CpPlanRuns(s.model, su.plan)) {
      n.pruned_divisibility += all;
      return;
    }
    parallelism::TrainingPlan plan = su.plan;

    // (2) weights + gradients + optimizer per device for each (zero,
    // offload): they do not depend on the microbatch or the flags. Nor does
    // the optimizer step (or its offload traffic), a term of the iteration
    // that the compute bound below leaves out: it is added to the bound.
    bool states_ok[4][2] = {};
    double step_s[4][2] = {};
    bool any_ok = false;
    // With a memo the probes of another capacity's search are taken as they
    // are (they do not read the capacity); the counts are those of probing.
    SearchMemo::Impl::Shape* memo = memo_ != nullptr ? &memo_->shapes[index] : nullptr;
    const bool states_known = memo != nullptr && memo->states;
    // The zero stage and offload are not part of a prepared workload
    // (PreparedWorkload::Matches): their probes share one.
    std::optional<PreparedWorkload> states_prepared;
    if (!states_known) states_prepared.emplace(est.Prepare(plan, w));
    for (int z = axes.zero_from; z < axes.zero_from + axes.zero; ++z) {
      for (int off = axes.offload_from; off < axes.offload_from + axes.offload; ++off) {
        plan.zero = z;
        plan.offload_optimizer = off == 1;
        ++n.probes;
        double states = 0;
        if (!states_known) {
          const TrainingEstimate e = est.Run(plan, w, *states_prepared);
          step_s[z][off] = e.time.optimizer + e.time.offload;
          states = e.memory.weights + e.memory.gradients + e.memory.optimizer;
          if (memo != nullptr) {
            memo->states_bytes[z][off] = states;
            memo->step_s[z][off] = step_s[z][off];
          }
        } else {
          step_s[z][off] = memo->step_s[z][off];
          states = memo->states_bytes[z][off];
        }
        if (n.min_states_bytes == 0 || states < n.min_states_bytes) n.min_states_bytes = states;
        states_ok[z][off] = states <= capacity;
        any_ok = any_ok || states_ok[z][off];
      }
    }
    if (memo != nullptr) memo->states = true;
    if (!any_ok) {
      n.pruned_memory += all;
      return;
    }

    const uint64_t base = shapes_[index].index << 32;
    uint64_t local = 0;
    PlanKnobs probe_k = k;
    uint32_t prepared_index = 0;
    uint32_t slot = 0;
    for (int64_t mb : axes.micro_batches) {
      const int64_t m = w.global_batch / (shape.dp * mb);
      for (int sp = axes.sequence_parallel_from; sp < axes.sequence_parallel_from + axes.sequence_parallel;
           ++sp, ++prepared_index) {
        // (3) the compute of one microbatch through one stage, for each
        // recompute mode (recompute is compute no other knob removes).
        probe_k.micro_batch = mb;
        probe_k.sequence_parallel = sp == 1;
        probe_k.interleave = 1;
        double fb[kRecomputeModes] = {};
        // Nor is recompute: the probes share one prepared workload.
        std::optional<PreparedWorkload> probe_prepared;
        const bool fb_known = memo != nullptr && memo->fb.size() > prepared_index;
        for (int rec = axes.recompute_from; rec < axes.recompute_from + axes.recomputes; ++rec) {
          probe_k.recompute = static_cast<Recompute>(rec);
          plan = su.plan;
          ApplyKnobs(probe_k, plan);
          if (fb_known) {
            ++n.probes;
            fb[rec] = memo->fb[prepared_index][static_cast<size_t>(rec)];
            continue;
          }
          if (!probe_prepared) probe_prepared.emplace(est.Prepare(plan, w));
          const TrainingEstimate probe = est.Run(plan, w, *probe_prepared);
          ++n.probes;
          // Tensor-parallel collectives cost at least what they cost with TP
          // innermost (the probe's order); they can hide behind compute only
          // when the TP group fits in the scale-up domain (TrainingEstimator).
          const double compute =
              (probe.time.forward + probe.time.backward + probe.time.recompute) / static_cast<double>(m);
          const double tp_comm = probe.time.tp_comm / static_cast<double>(m);
          const hardware::GroupPlacement tp_group = est.network().Place(plan.tp, 1);
          const bool tp_can_hide = tp_group.tiers > 0 && tp_group.per_domain[0] >= plan.tp;
          fb[rec] = compute + (tp_can_hide ? std::max(0.0, tp_comm - compute) : tp_comm);
        }
        if (memo != nullptr && !fb_known) memo->fb.push_back({fb[0], fb[1], fb[2], fb[3]});
        probe_k.recompute = Recompute::kNone;
        for (int64_t v : axes.interleaves) {
          probe_k.interleave = v;
          ApplyKnobs(probe_k, plan);
          // A microbatch count the schedule cannot run (interleaved 1F1B
          // with m not a multiple of pp, DualPipe with m odd or under 2 pp)
          // is refused by the estimator for every plan of these blocks: the
          // rule reads only m, pp, v and the schedule, fixed here.
          if (parallelism::InterleaveNeedsMultiple(plan, m) || parallelism::DualPipeShapeInvalid(plan, m)) {
            const uint64_t per_v = static_cast<uint64_t>(axes.recomputes) * static_cast<uint64_t>(axes.tp_overlap) *
                                   static_cast<uint64_t>(axes.orders.count);
            for (int z = axes.zero_from; z < axes.zero_from + axes.zero; ++z) {
              const uint64_t count = per_v * static_cast<uint64_t>(axes.DpOverlaps(shape.dp, z)) *
                                     static_cast<uint64_t>(axes.offload);
              n.pruned_schedule += count;
              local += count;
              slot += static_cast<uint32_t>(axes.recomputes * axes.offload);
            }
            continue;
          }
          const double bubble = parallelism::BubbleMicrobatches(plan);
          for (int z = axes.zero_from; z < axes.zero_from + axes.zero; ++z) {
            for (int off = axes.offload_from; off < axes.offload_from + axes.offload; ++off) {
              const uint64_t per_rec = static_cast<uint64_t>(axes.DpOverlaps(shape.dp, z)) *
                                       static_cast<uint64_t>(axes.tp_overlap) *
                                       static_cast<uint64_t>(axes.orders.count);
              if (!states_ok[z][off]) {
                n.pruned_memory += static_cast<uint64_t>(axes.recomputes) * per_rec;
                local += static_cast<uint64_t>(axes.recomputes) * per_rec;
                slot += static_cast<uint32_t>(axes.recomputes);
                continue;
              }
              for (int rec = axes.recompute_from; rec < axes.recompute_from + axes.recomputes; ++rec) {
                const double bound_s = fb[rec] * (static_cast<double>(m) + bubble) + step_s[z][off];
                Block b;
                // A hair below the bound, so that rounding never prunes a tie.
                // With idle power in bubbles the score is scale x T - w x
                // bubble. The estimator's bubble is at most u stage times (u =
                // the schedule's bubble in microbatches; ZB-H1's at most pp - 1,
                // DualPipe's at most pp - 2: (pp/2 - 1)(F&B + B) or (pp - 2) F)
                // and the rest of T at least m of them, so bubble <= T u /
                // (m + u) and the score >= (scale - w u / (m + u)) x bound.
                const double u = plan.schedule == parallelism::Schedule::kZeroBubbleH1
                                     ? static_cast<double>(plan.pp - 1)
                                 : plan.schedule == parallelism::Schedule::kDualPipe
                                     ? static_cast<double>(std::max<int64_t>(0, plan.pp - 2))
                                     : bubble;
                const double per_s =
                    ctx.bubble_weight > 0 ? ctx.scale - ctx.bubble_weight * u / (static_cast<double>(m) + u)
                                          : ctx.scale;
                b.bound = bound_s * per_s / su.tokens * (1 - 1e-12);
                b.ordinal = base | local;
                b.shape = static_cast<uint32_t>(index);
                b.count = static_cast<uint32_t>(per_rec);
                b.micro_batch = mb;
                b.interleave = v;
                b.sequence_parallel = static_cast<int8_t>(sp);
                b.zero = static_cast<int8_t>(z);
                b.offload = static_cast<int8_t>(off);
                b.recompute = static_cast<int8_t>(rec);
                b.prepared = prepared_index;
                b.slot = slot++;
                su.blocks.push_back(b);
                local += per_rec;
              }
            }
          }
        }
      }
    }
    if (memo != nullptr && memo->blocks.size() < slot) memo->blocks.resize(slot);
  }

  // One thread's prepared workloads by (shape, micro_batch and
  // sequence_parallel): the blocks that differ only in zero stage, offload,
  // interleave and recompute (up to 4 x 2 x 3 x interleaves of them) share
  // the operator costs, which are most of a plan's evaluation.
  using PreparedCache = std::unordered_map<uint64_t, PreparedWorkload>;

  // A block's result: from the memo when it holds one costed at a capacity
  // where every memory check of the block came out as it does here
  // (SearchMemo::Impl::Outcome), else costed (and kept in the memo).
  void EvaluateBlock(const Block& b, BlockResult& out, PreparedCache& cache) {
    if (memo_ == nullptr) {
      CostBlock(b, out, cache, nullptr);
      return;
    }
    const DeviceContext& ctx = *contexts_[static_cast<size_t>(shapes_[b.shape].context)];
    const double capacity = ctx.scenario.system.device.memory_capacity;
    std::vector<SearchMemo::Impl::Outcome>& outcomes = memo_->shapes[b.shape].blocks[b.slot];
    for (const SearchMemo::Impl::Outcome& o : outcomes) {
      if (o.lo <= capacity && capacity < o.hi) {
        out = o.result;
        for (SearchCandidate& c : out.top) c.estimate.memory_capacity = capacity;
        return;
      }
    }
    SearchMemo::Impl::Outcome o;
    o.hi = std::numeric_limits<double>::infinity();
    CostBlock(b, out, cache, &o);
    o.result = out;
    outcomes.push_back(std::move(o));
  }

  // Costs the plans of a block. With `fits`, widens its [lo, hi) to the
  // memory checks made: lo the largest memory that passed, hi the smallest
  // that did not (plans stopped before the check carry no memory).
  void CostBlock(const Block& b, BlockResult& out, PreparedCache& cache, SearchMemo::Impl::Outcome* fits) {
    const ShapeSetup& su = setups_[b.shape];
    const DeviceContext& ctx = *contexts_[static_cast<size_t>(shapes_[b.shape].context)];
    const TrainingEstimator& est = *ctx.estimator;
    const ShapeAxes& axes = su.axes;
    const int64_t dp = su.knobs.dp;
    out.top.reserve(Keep() + 1);
    PlanKnobs k = su.knobs;
    k.micro_batch = b.micro_batch;
    k.sequence_parallel = b.sequence_parallel == 1;
    k.interleave = b.interleave;
    k.zero = b.zero;
    k.offload = b.offload == 1;
    k.recompute = static_cast<Recompute>(b.recompute);
    parallelism::TrainingPlan plan = su.plan;
    ApplyKnobs(k, plan);
    // Every plan of the block has the same per-layer shape: its operator
    // costs are worked out once, and kept for the shape's other blocks.
    const uint64_t key = (static_cast<uint64_t>(b.shape) << 32) | b.prepared;
    auto found = cache.find(key);
    if (found == cache.end() || !found->second.Matches(plan, su.workload))
      found = cache.insert_or_assign(key, est.Prepare(plan, su.workload)).first;
    const PreparedWorkload& prepared = found->second;
    uint64_t ordinal = b.ordinal;
    // Inside the block only dp_overlap, tp_comm_overlap and the group order
    // vary: they are set on the plan directly (what ApplyKnobs(k, plan) would
    // do for them; the rest of the plan is the block's, applied above). The
    // group order is copied only when it changes (k.group_order, the
    // shape's first order, is already in the plan).
    int plan_order = 0;
    for (int dpo = axes.DpOverlapFrom(); dpo < axes.DpOverlapFrom() + axes.DpOverlaps(dp, b.zero); ++dpo) {
      k.dp_overlap = dpo == 0;
      plan.dp_overlap = k.dp_overlap;
      for (int tpo = axes.tp_overlap_from; tpo < axes.tp_overlap_from + axes.tp_overlap; ++tpo) {
        k.tp_comm_overlap = tpo == 1;
        plan.tp_comm_overlap = k.tp_comm_overlap;
        for (int oi = 0; oi < axes.orders.count; ++oi) {
          if (oi != plan_order) {
            k.group_order = axes.orders.text[static_cast<size_t>(oi)];
            plan.group_order.assign(k.group_order.data());
            plan_order = oi;
          }
          SearchCandidate c;
          c.estimate = est.RunIfFits(plan, su.workload, prepared);
          ++out.evaluated;
          if (fits != nullptr) {
            const Infeasible why = c.estimate.infeasible;
            const double total = c.estimate.memory.total();
            if (why == Infeasible::kOutOfMemory) fits->hi = std::min(fits->hi, total);
            else if (why == Infeasible::kNone || why == Infeasible::kInvalidResult) fits->lo = std::max(fits->lo, total);
          }
          c.ordinal = ordinal++;
          if (!c.estimate.feasible()) {
            const Infeasible why = c.estimate.infeasible;
            if (why != Infeasible::kOutOfMemory && why != Infeasible::kHostOutOfMemory) {
              ++out.refused;
              continue;
            }
            ++out.out_of_memory;
            const double total = c.estimate.memory.total();
            if (out.min_total_bytes == 0 || total < out.min_total_bytes) out.min_total_bytes = total;
            // Memory depends on none of the knobs varied inside a block
            // (dp_overlap, tp_comm_overlap, group_order:
            // parallelism/memory_model.h): if the block's first plan does
            // not fit, none of its plans does, with the same bytes.
            if (out.evaluated == 1 && why == Infeasible::kOutOfMemory) {
              out.pruned_memory = b.count - 1;
              return;
            }
            continue;
          }
          ++out.feasible;
          c.knobs = k;
          c.score = (c.estimate.iteration_s * ctx.scale - c.estimate.time.pp_bubble * ctx.bubble_weight) /
                    su.tokens;
          Insert(out.top, Keep(), c);
        }
      }
    }
  }

  const SearchOptions& o_;
  const std::vector<std::unique_ptr<DeviceContext>>& contexts_;
  const std::vector<ShapeTask>& shapes_;
  std::vector<ShapeSetup> setups_;
  std::vector<Block> order_;
  std::vector<std::unique_ptr<BlockResult>> results_;  // made by the thread that costs the block
  std::vector<std::atomic<bool>> ready_;                // results_[i] is there
  std::mutex sort_mu_;
  std::atomic<size_t> sorted_{0};                       // order_[0, sorted_) is in final order
  std::atomic<size_t> next_shape_{0}, prepared_{0}, next_block_{0};
  std::atomic<bool> stop_{false}, cancelled_{false};
  std::atomic<double> threshold_{std::numeric_limits<double>::infinity()};
  mutable std::mutex commit_mu_;
  size_t frontier_ = 0;  // blocks before it are committed
  bool cut_ = false;
  std::vector<SearchCandidate> top_;  // committed best, best first
  SearchStats committed_;             // evaluated, out_of_memory, refused, feasible, min_total_bytes
  SearchMemo::Impl* memo_;            // shared with the other capacities' searches, or null
};

void AddStats(SearchStats& a, const SearchStats& b) {
  a.candidates += b.candidates;
  a.pruned_divisibility += b.pruned_divisibility;
  a.pruned_schedule += b.pruned_schedule;
  a.pruned_memory += b.pruned_memory;
  a.pruned_time += b.pruned_time;
  a.evaluated += b.evaluated;
  a.probes += b.probes;
  a.out_of_memory += b.out_of_memory;
  a.refused += b.refused;
  a.feasible += b.feasible;
  a.shapes += b.shapes;
  auto min_nonzero = [](double x, double y) { return x == 0 ? y : (y == 0 ? x : std::min(x, y)); };
  a.min_states_bytes = min_nonzero(a.min_states_bytes, b.min_states_bytes);
  a.min_total_bytes = min_nonzero(a.min_total_bytes, b.min_total_bytes);
  a.capacity_bytes = std::max(a.capacity_bytes, b.capacity_bytes);
}

std::string WhyNone(const SearchStats& st, const std::string& first_division_problem) {
  const auto bytes = [](double b) { return base::FormatQuantity(b, base::Dimension::kBytes); };
  if (st.candidates == 0)
    return "no plan: no data-parallel degree divides the global batch (try --round-batch)";
  if (st.pruned_divisibility == st.candidates)
    return "no plan divides the model: " +
           (first_division_problem.empty() ? std::string("see orrery check") : first_division_problem);
  if (st.evaluated == 0 && st.pruned_memory == 0 && st.pruned_schedule > 0)
    return "no plan runs: every microbatch count breaks the pipeline schedule's rule (interleaved 1F1B "
           "needs the microbatches to be a multiple of pp, DualPipe an even pp and an even count of at "
           "least 2 pp; a larger global batch, a smaller micro batch or fewer stages gives more)";
  if (st.evaluated == 0 && st.pruned_memory > 0)
    return "no plan fits: minimum weights+gradients+optimizer per GPU " + bytes(st.min_states_bytes) +
           " > " + bytes(st.capacity_bytes);
  if (st.feasible == 0 && st.out_of_memory > 0)
    return "no plan fits: the smallest plan needs " + bytes(st.min_total_bytes) +
           " per GPU with activations > " + bytes(st.capacity_bytes);
  if (st.feasible == 0 && st.refused > 0)
    return "no plan runs: each of the " + std::to_string(st.refused) +
           " evaluated plans breaks a pipeline rule (the stages must hold the stated layout and offload; "
           "see orrery check on one of them)";
  return "no feasible plan";
}

}  // namespace

SearchResult Search(const Scenario& s, const SearchOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  SearchResult r;
  std::vector<std::unique_ptr<DeviceContext>> contexts;
  std::vector<int64_t> counts = o.device_counts;
  if (counts.empty()) counts.push_back(hardware::DeviceCount(s.system));
  std::vector<ShapeTask> shapes;
  const double parameters = models::ParameterCount(s.model, s.workload.seq_len);
  std::string first_problem;
  bool first_problem_plain = false;  // first_problem is a cp = 1 shape's
  std::string resize_problem;  // why a device count was left out
  // The scenario's pipeline split (the embedding and the loss as units)
  // decides which pp and interleave divide it.
  PlanSpaceOptions space = o.space;
  space.split_embedding_loss = s.training.pipeline_split_embedding_loss;
  space.first_stage_layers = s.training.first_stage_layers;
  space.last_stage_layers = s.training.last_stage_layers;
  space.schedule_takes_interleave = parallelism::TakesInterleave(s.training.schedule);
  for (int64_t n : counts) {
    auto ctx = std::make_unique<DeviceContext>();
    ctx->scenario = s;
    if (std::string why = ResizeSystem(ctx->scenario.system, n); !why.empty()) {
      if (resize_problem.empty()) resize_problem = std::move(why);
      continue;
    }
    const auto& sys = ctx->scenario.system;
    const ObjectiveWeights w = WeightsOf(o.objective, sys, s.training, parameters);
    ctx->scale = w.per_s;
    ctx->bubble_weight = w.bubble;
    ctx->estimator = std::make_unique<TrainingEstimator>(ctx->scenario.model, ctx->scenario.system);
    r.stats.capacity_bytes = sys.device.memory_capacity;
    const int ci = static_cast<int>(contexts.size());
    for (const PlanShape& sh : EnumerateShapes(s.model, s.workload, n, space)) {
      // The reason shown when nothing divides: the first shape without context
      // parallelism, whose problem is the model's own (a cp tried beside it
      // that does not divide the sequence says less).
      if (first_problem.empty() || (!first_problem_plain && sh.cp == 1)) {
        if (const char* why = DivisibilityProblem(s.model, s.workload, sh)) {
          first_problem = why;
          first_problem_plain = sh.cp == 1;
        }
      }
      shapes.push_back(ShapeTask{ci, sh, static_cast<uint64_t>(shapes.size())});
    }
    contexts.push_back(std::move(ctx));
  }
  // This process's shard of the shapes (multi-process runs).
  if (o.shards > 1) {
    std::vector<ShapeTask> mine;
    for (size_t i = 0; i < shapes.size(); ++i)
      if (static_cast<int>(i % static_cast<size_t>(o.shards)) == o.shard) mine.push_back(shapes[i]);
    shapes.swap(mine);
  }
  int threads = o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min<int>(threads, static_cast<int>(std::max<size_t>(1, shapes.size()))));
  if (o.memo != nullptr && o.shards <= 1) threads = 1;  // the memo is not locked
  // The workers read the space as laid out above (the scenario's split and
  // end-stage layers decide the interleaves, AxesFor).
  SearchOptions laid_out = o;
  laid_out.space = space;
  Searcher searcher(laid_out, contexts, shapes);
  // Runs `work` on `threads` threads; with a progress callback the calling
  // thread reports about every 100 ms while the others work.
  auto on_threads = [&](void (Searcher::*work)()) {
    std::atomic<int> running{threads};
    auto body = [&searcher, &running, work] {
      (searcher.*work)();
      running.fetch_sub(1, std::memory_order_release);
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(body);
    if (o.progress) {
      std::thread last(body);
      while (running.load(std::memory_order_acquire) > 0) {
        o.progress(searcher.Progress(), shapes.size());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      last.join();
    } else {
      body();
    }
    for (auto& th : pool) th.join();
  };
  on_threads(&Searcher::Prepare);
  searcher.Order();
  on_threads(&Searcher::Evaluate);
  SearchResult merged;
  searcher.Finish(merged.top, merged.stats);
  merged.stats.capacity_bytes = r.stats.capacity_bytes;
  if (o.progress) o.progress(shapes.size(), shapes.size());
  // This process knows why nothing fit (the first division problem, a device
  // count the fabric cannot hold) better than the merge does.
  if (merged.top.empty())
    merged.why_none = contexts.empty() && !resize_problem.empty() ? resize_problem
                                                                  : WhyNone(merged.stats, first_problem);
  if (o.event_check && o.shards <= 1) CheckWithEvents(s, o, merged);
  merged.stats.threads = threads;
  merged.stats.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  merged.cancelled = searcher.cancelled();
  return merged;
}

void CheckWithEvents(const Scenario& s, const SearchOptions& o, SearchResult& r) {
  // The finalists' simulations are independent: they run on o.threads
  // threads; their results are then taken in rank order, as on one.
  // With a memo, a finalist simulated by another capacity's search is taken
  // from it: the simulation does not read the capacity, and a finalist fits
  // both (only the estimates' memory_capacity differs).
  SearchMemo::Impl* memo = o.memo != nullptr && o.shards <= 1 ? &o.memo->impl() : nullptr;
  const double capacity = s.system.device.memory_capacity;
  std::vector<EventEstimate> simulated(r.top.size());
  std::vector<std::string> keys(memo != nullptr ? r.top.size() : 0);
  std::vector<size_t> todo;
  for (size_t i = 0; i < r.top.size(); ++i) {
    if (memo == nullptr) {
      todo.push_back(i);
      continue;
    }
    keys[i] = KnobsKey(r.top[i].knobs);
    const auto found = memo->events.find(keys[i]);
    if (found == memo->events.end()) {
      todo.push_back(i);
      continue;
    }
    simulated[i] = found->second;
    simulated[i].closed_form.memory_capacity = capacity;
    simulated[i].estimate.memory_capacity = capacity;
  }
  {
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t j; (j = next.fetch_add(1, std::memory_order_relaxed)) < todo.size();) {
        const size_t i = todo[j];
        const Scenario one = ScenarioOf(s, r.top[i].knobs);
        const EventEstimator est(one.model, one.system);
        simulated[i] = est.Run(one.training, one.workload);
      }
    };
    const int hw = static_cast<int>(std::thread::hardware_concurrency());
    const size_t threads = static_cast<size_t>(std::max(1, o.threads > 0 ? o.threads : hw));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < std::min(threads, todo.size()); ++t) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
  }
  if (memo != nullptr)
    for (size_t i : todo) memo->events.emplace(keys[i], simulated[i]);
  std::vector<SearchCandidate> kept;
  kept.reserve(r.top.size());
  for (size_t i = 0; i < r.top.size(); ++i) {
    SearchCandidate& c = r.top[i];
    const Scenario one = ScenarioOf(s, c.knobs);
    const EventEstimate& e = simulated[i];
    c.closed_form_s = e.closed_form.iteration_s;
    if (!e.simulated()) {
      ++r.event_rejected;
      std::string why = ExplainEventError(e, one);
      if (why.empty()) why = ExplainInfeasible(e.closed_form, one);
      if (why.empty()) why = "the event engine could not simulate it";
      r.disagreements.push_back(EventDisagreement{c.knobs, c.closed_form_s, 0, why});
      continue;
    }
    const double rel = e.estimate.iteration_s / e.closed_form.iteration_s - 1;
    if (std::abs(rel) > o.event_tolerance)
      r.disagreements.push_back(EventDisagreement{c.knobs, c.closed_form_s, e.estimate.iteration_s, {}});
    // Time and cost scale with the iteration at a fixed plan; energy also
    // depends on the simulated bubble.
    if (o.objective == Objective::kEnergy)
      c.score = WeightedScore(WeightsOf(o.objective, one.system, one.training,
                                        models::ParameterCount(one.model, one.workload.seq_len)),
                              e.estimate, static_cast<double>(one.workload.global_batch) *
                                              static_cast<double>(one.workload.seq_len));
    else
      c.score *= e.estimate.iteration_s / e.closed_form.iteration_s;
    c.estimate = e.estimate;
    c.event_checked = true;
    kept.push_back(c);
  }
  std::sort(kept.begin(), kept.end(), Better);
  if (kept.size() > static_cast<size_t>(std::max(0, o.top))) kept.resize(static_cast<size_t>(std::max(0, o.top)));
  r.top = std::move(kept);
  if (r.top.empty() && r.why_none.empty())
    r.why_none = "no plan the event engine can simulate among the closed form's best";
}

SearchResult MergeSearchResults(const std::vector<SearchResult>& parts, int top) {
  SearchResult r;
  std::string why;
  for (const SearchResult& p : parts) {
    r.top.insert(r.top.end(), p.top.begin(), p.top.end());
    AddStats(r.stats, p.stats);
    r.stats.threads = std::max(r.stats.threads, p.stats.threads);
    r.stats.wall_s = std::max(r.stats.wall_s, p.stats.wall_s);
    if (why.empty()) why = p.why_none;
  }
  std::sort(r.top.begin(), r.top.end(), Better);
  if (r.top.size() > static_cast<size_t>(std::max(0, top))) r.top.resize(static_cast<size_t>(std::max(0, top)));
  if (r.top.empty()) r.why_none = why.empty() ? WhyNone(r.stats, {}) : why;
  return r;
}

namespace {

struct Item {
  const char* name;
  double TimeBreakdown::*field;
  const char* adjective;  // "smaller bubble", ...
  const char* knobs;      // related knobs, space separated
};

constexpr Item kItems[] = {
    {"forward", &TimeBreakdown::forward, "faster forward compute", "micro_batch tp cp pp sequence_parallel"},
    {"backward", &TimeBreakdown::backward, "faster backward compute", "micro_batch tp cp pp sequence_parallel"},
    {"recompute", &TimeBreakdown::recompute, "less recompute", "recompute micro_batch"},
    {"tp_comm", &TimeBreakdown::tp_comm, "less TP communication",
     "tp sequence_parallel tp_comm_overlap group_order micro_batch"},
    {"cp_comm", &TimeBreakdown::cp_comm, "less CP communication", "cp group_order"},
    {"ep_comm", &TimeBreakdown::ep_comm, "less EP communication", "ep group_order"},
    {"pp_bubble", &TimeBreakdown::pp_bubble, "smaller bubble", "pp interleave micro_batch"},
    {"pp_p2p", &TimeBreakdown::pp_p2p, "less pipeline transfer", "pp interleave micro_batch group_order"},
    {"dp_comm", &TimeBreakdown::dp_comm, "less exposed DP communication",
     "dp zero dp_overlap group_order"},
    {"optimizer", &TimeBreakdown::optimizer, "shorter optimizer step", "zero offload dp"},
    {"offload", &TimeBreakdown::offload, "less offload traffic", "offload zero"},
};

std::string KnobValue(const PlanKnobs& k, const std::string& name) {
  if (name == "tp") return std::to_string(k.tp);
  if (name == "pp") return std::to_string(k.pp);
  if (name == "cp") return std::to_string(k.cp);
  if (name == "ep") return std::to_string(k.ep);
  if (name == "etp") return std::to_string(k.etp > 0 ? k.etp : k.tp);
  if (name == "dp") return std::to_string(k.dp);
  if (name == "micro_batch") return std::to_string(k.micro_batch);
  if (name == "interleave") return std::to_string(k.interleave);
  if (name == "recompute") return parallelism::RecomputeName(k.recompute);
  if (name == "sequence_parallel") return k.sequence_parallel ? "on" : "off";
  if (name == "tp_comm_overlap") return k.tp_comm_overlap ? "on" : "off";
  if (name == "dp_overlap") return k.dp_overlap ? "on" : "off";
  if (name == "offload") return k.offload ? "on" : "off";
  if (name == "zero") return std::to_string(k.zero);
  if (name == "group_order") return k.group_order.data();
  if (name == "devices") return std::to_string(k.devices);
  return {};
}

std::string Differences(const PlanKnobs& from, const PlanKnobs& to, const std::string& names) {
  std::string out;
  std::istringstream is(names);
  for (std::string n; is >> n;) {
    const std::string a = KnobValue(from, n), b = KnobValue(to, n);
    if (a == b) continue;
    if (!out.empty()) out += ", ";
    out += (n == "micro_batch" ? std::string("micro_batch") : n) + " " + a + " -> " + b;
  }
  return out;
}

}  // namespace

std::string WhyBetter(const SearchCandidate& a, const SearchCandidate& b) {
  const auto secs = [](double s) { return base::FormatQuantity(s, base::Dimension::kTime); };
  double best = 0;
  const Item* item = nullptr;
  for (const Item& it : kItems) {
    const double d = b.estimate.time.*it.field - a.estimate.time.*it.field;
    if (d > best) {
      best = d;
      item = &it;
    }
  }
  const std::string all =
      "devices tp pp cp ep dp micro_batch interleave recompute sequence_parallel zero dp_overlap "
      "tp_comm_overlap offload group_order";
  std::string line;
  if (item == nullptr) {
    const double ma = a.estimate.memory.total(), mb = b.estimate.memory.total();
    const bool same_time = a.estimate.time.total == b.estimate.time.total;
    line = same_time && ma < mb
               ? "the same iteration time with less memory per device (" + base::FormatBytes(ma) + " vs " +
                     base::FormatBytes(mb) + ")"
           : same_time && ma == mb
               ? "nothing: the same iteration time and memory per device (an equivalent plan, ranked by the "
                 "order of the search)"
               : "no breakdown item of #1 is larger than #2's";
    const std::string d = Differences(b.knobs, a.knobs, all);
    return d.empty() ? line : line + "; " + d;
  }
  line = std::string(item->adjective) + " (" + item->name + " " + secs(a.estimate.time.*item->field) +
         " vs " + secs(b.estimate.time.*item->field) + ")";
  std::string d = Differences(b.knobs, a.knobs, item->knobs);
  if (d.empty()) d = Differences(b.knobs, a.knobs, all);
  if (!d.empty()) line += ": " + d;
  if (b.estimate.time.total - a.estimate.time.total < 1e-3 * a.estimate.time.total)
    line += " (iterations within 0.1 %: practically a tie)";
  return line;
}

std::string CandidatesToText(const SearchResult& r) {
  std::ostringstream os;
  const SearchStats& s = r.stats;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
                " %" PRIu64 " %" PRIu64 " %" PRIu64 " %a %a %a %d %a %" PRIu64 "\n",
                s.candidates, s.pruned_divisibility, s.pruned_memory, s.pruned_time, s.evaluated,
                s.probes, s.out_of_memory, s.refused, s.feasible, s.shapes, s.min_states_bytes,
                s.min_total_bytes, s.capacity_bytes, s.threads, s.wall_s, s.pruned_schedule);
  os << buf;
  for (const SearchCandidate& c : r.top) {
    const PlanKnobs& k = c.knobs;
    std::snprintf(buf, sizeof buf,
                  "c %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
                  " %" PRId64 " %" PRId64 " %d %d %d %d %d %" PRId64 " %s %a %" PRIu64 " %" PRId64 "\n",
                  k.devices, k.tp, k.pp, k.cp, k.ep, k.dp, k.global_batch, k.micro_batch,
                  k.interleave, static_cast<int>(k.recompute), k.sequence_parallel ? 1 : 0,
                  k.tp_comm_overlap ? 1 : 0, k.dp_overlap ? 1 : 0, k.offload ? 1 : 0, k.zero,
                  k.group_order.data(), c.score, c.ordinal, k.etp);
    os << buf;
  }
  if (!r.why_none.empty()) os << "w " << r.why_none << "\n";
  return os.str();
}

bool CandidatesFromText(const std::string& text, SearchResult& out) {
  std::istringstream is(text);
  for (std::string line; std::getline(is, line);) {
    if (line.size() < 2) continue;
    if (line[0] == 'w') {
      out.why_none = line.substr(2);
      continue;
    }
    if (line[0] == 's') {
      SearchStats& s = out.stats;
      if (std::sscanf(line.c_str(),
                      "s %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                      " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %la %la %la %d %la %" SCNu64,
                      &s.candidates, &s.pruned_divisibility, &s.pruned_memory, &s.pruned_time,
                      &s.evaluated, &s.probes, &s.out_of_memory, &s.refused, &s.feasible, &s.shapes,
                      &s.min_states_bytes, &s.min_total_bytes, &s.capacity_bytes, &s.threads,
                      &s.wall_s, &s.pruned_schedule) != 16)
        return false;
      continue;
    }
    if (line[0] != 'c') return false;
    SearchCandidate c;
    PlanKnobs& k = c.knobs;
    int rec = 0, sp = 0, tpo = 0, dpo = 0, off = 0;
    char order[16] = {};
    if (std::sscanf(line.c_str(),
                    "c %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64
                    " %" SCNd64 " %" SCNd64 " %" SCNd64 " %d %d %d %d %d %" SCNd64 " %15s %la %" SCNu64
                    " %" SCNd64,
                    &k.devices, &k.tp, &k.pp, &k.cp, &k.ep, &k.dp, &k.global_batch, &k.micro_batch,
                    &k.interleave, &rec, &sp, &tpo, &dpo, &off, &k.zero, order, &c.score,
                    &c.ordinal, &k.etp) < 18 ||
        rec < 0 || rec > static_cast<int>(Recompute::kOp))
      return false;
    k.recompute = static_cast<Recompute>(rec);
    k.sequence_parallel = sp != 0;
    k.tp_comm_overlap = tpo != 0;
    k.dp_overlap = dpo != 0;
    k.offload = off != 0;
    std::copy(order, order + 16, k.group_order.begin());
    k.group_order[15] = 0;
    out.top.push_back(c);
  }
  return true;
}

}  // namespace orrery::engine
