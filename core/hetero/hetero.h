#pragma once
// Heterogeneous clusters: one training job over pools of different devices
// (hardware/system_spec.h DevicePool; the plan's `hetero:` section,
// parallelism/hetero_plan.h). A layer above the closed-form estimator: each
// pool is costed by engine::TrainingEstimator on a system of its own (the
// pool's device and node count, the system's network), and the pools'
// figures are combined here.
//
// Pipeline split (stages on different devices, uneven layer counts; the
// plan space of Metis, Um et al. 2024, "Metis: Fast Automatic Distributed
// Training on Heterogeneous GPUs", USENIX ATC, and of HetPipe, Park
// et al. 2020, USENIX ATC): the pipeline runs through the pools in order;
// pool g has S_g = devices_g / (tp cp dp) stages and L_g layers, spread as
// evenly as whole layers allow (the first L_g mod S_g stages take one more).
// Stage i takes, per microbatch,
//   t_i = l_i x t_layer(g) + [first stage] embedding + [last stage] head
//         + [not last] 2 x activation send (forward activation, backward gradient)
// where t_layer is one layer's forward, backward and recompute with its
// exposed TP/CP/EP collectives (TrainingEstimator::Costs). A send across a
// pool boundary goes over system.pool_bandwidth. With m microbatches the
// pipeline takes (Alpa, Zheng et al. 2022, OSDI, Sec. 5.1 Eq. 2)
//   T_pipe = sum_i t_i + (m - 1) max_i t_i
// (for S equal stages this is the familiar (m + S - 1) t of 1F1B; Narayanan
// et al. 2021, SC, Sec. 2.2): the slowest stage paces. The iteration adds
// the slowest pool's gradient synchronisation and optimizer step, as the
// estimator costs them for the pool's stages (its own run on L_g layers).
//
// Data split (DP groups on different devices with uneven batch shares;
// Whale, Jia et al. 2022, USENIX ATC, balances the batch by device
// speed; Metis searches the shares): pool g runs the whole model
// (the plan's tp, pp, cp; dp filling the pool) on B_g sequences, costed by
// the estimator as its own job; the pools then sum their gradients over
// system.pool_bandwidth with a ring all-reduce between the P pools, each
// device sending and receiving 2 (P - 1)/P of its gradient bytes G
// (Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce algorithms for
// clusters of workstations", JPDC 69(2)):
//   T = max_g T_g(B_g) + 2 (P - 1)/P x G / pool_bandwidth
// The slowest pool paces; the others wait.
//
// Energy: a device draws TDP while it computes or communicates and its idle
// power (device.idle_power, or 30 % of TDP) while it waits: in pipeline
// bubbles, for a slower pool, or for the slowest stage. Facility energy =
// PUE x sum over devices (TDP x busy + idle power x idle).
//
// Not modelled: interleaved stages across pools (interleave is set to 1),
// overlap of the cross-pool all-reduce with compute (it is exposed), and
// activation memory of a pool's stages deeper in the global pipeline (each
// pool's memory is checked as its own pipeline of S_g stages).

#include <cstdint>
#include <string>
#include <vector>

#include "core/estimate/scenario.h"
#include "core/estimate/training_estimator.h"

namespace orrery::hetero {

// Alpa Eq. 2: sum_i t_i + (m - 1) max_i t_i. 0 for no stages.
double PipelineTime(const std::vector<double>& stage_s, int64_t microbatches);

// One pool's part of a pipeline, per microbatch on one device.
struct StageCosts {
  int64_t stages = 1;
  double layer_s = 0;     // one layer: fwd + bwd + recompute + exposed TP/CP/EP collectives
  double embed_s = 0;     // embedding fwd + bwd (the pipeline's first stage)
  double head_s = 0;      // LM head and loss fwd + bwd (the pipeline's last stage)
  double send_s = 0;      // one activation send to the next stage inside the pool
  double boundary_s = 0;  // one activation send to the next pool (over pool_bandwidth)
};
// Stage times in pipeline order for `layers[g]` layers on pool g: pool g's
// l = layers[g] layers spread over its S stages, the first l mod S stages
// taking one more; each stage pays its layers, the embedding (first stage
// of all) or head (last of all), and 2 sends (activation forward, gradient
// back) to the next stage unless it is the last.
std::vector<double> StageTimes(const std::vector<StageCosts>& pools, const std::vector<int64_t>& layers,
                               std::vector<size_t>* stage_pool = nullptr);

// Pool g of a system as a homogeneous system: pool 0 is the system itself,
// pool g >= 1 is system.pools[g - 1] (its device, nodes, devices per node
// and price where given). The result has no pools.
hardware::SystemSpec PoolSystem(const hardware::SystemSpec& s, size_t g);
// Pools of a system: 1 + system.pools.size().
inline size_t PoolCount(const hardware::SystemSpec& s) { return 1 + s.pools.size(); }
// The pool's `name`, else its device preset's name, else its device's name.
std::string PoolName(const hardware::SystemSpec& s, size_t g);

// Watts of one device while it waits: hardware::IdlePower.
using hardware::IdlePower;

// Facility joules of `devices` devices over one iteration of `iteration_s`
// seconds, busy (at TDP) for `busy_s` of it and idle for the rest:
// PUE x devices x (TDP x busy + idle power x (iteration - busy)).
double FacilityEnergy(double devices, double tdp_w, double idle_w, double pue, double busy_s,
                      double iteration_s);

struct PoolResult {
  std::string name;       // pool name (the device's name when not given)
  std::string device;     // device name
  int64_t devices = 0;
  int64_t stages = 0;     // pipeline: stages on the pool; data: pp of each replica
  int64_t dp = 0;         // data-parallel degree inside the pool
  int64_t first_layer = 0, layers = 0;  // pipeline: layers [first_layer, first_layer + layers)
  int64_t batch = 0;      // data: sequences per iteration
  double stage_s = 0;     // pipeline: the pool's slowest stage per microbatch (fwd + bwd)
  double own_s = 0;       // data: the pool's iteration alone; pipeline: m x stage_s + sync
  double busy_s = 0;      // per device, averaged over the pool's devices
  double idle_s = 0;      // per device, averaged: iteration - busy
  double idle_fraction = 0;
  double energy_j = 0;    // facility, per iteration, idle power while idle
  engine::TrainingEstimate estimate;  // the estimator's run for the pool (its own layers / batch)
};

struct Result {
  bool feasible = false;
  std::string reason;     // why not, with the numbers
  parallelism::HeteroSplit split = parallelism::HeteroSplit::kPipeline;
  std::vector<int64_t> layers;  // pipeline: per pool
  std::vector<int64_t> batch;   // data: per pool
  std::vector<PoolResult> pools;
  int64_t microbatches = 0;     // pipeline: per iteration through the pipeline
  double iteration_s = 0;
  double pipeline_s = 0;        // pipeline: T_pipe (Alpa Eq. 2)
  double sync_s = 0;            // pipeline: slowest pool's gradient sync + optimizer
  double cross_pool_s = 0;      // data: the all-reduce between pools; pipeline: one boundary send
  double tokens_per_s = 0;
  double energy_j = 0;          // facility, idle power while waiting
  double energy_at_tdp_j = 0;   // the same with every device at TDP all the time (no idle power)
  double cost_usd = 0;          // per iteration, each pool at its price
};

// The plan's split: hetero.layers / hetero.batch, or the naive one when
// empty (layers by stage count, batch by device count). Infeasible results
// carry the reason (a pool whose devices the plan's groups do not divide, a
// batch share not a multiple of its dp x micro_batch, a pool out of memory).
Result Evaluate(const engine::Scenario& s);
// The same for a given split (layers for pipeline, batch shares for data).
Result EvaluateSplit(const engine::Scenario& s, parallelism::HeteroSplit split,
                     const std::vector<int64_t>& shares);

enum class SplitObjective { kTime, kEnergy, kCost };

struct SplitSearch {
  std::vector<Result> top;   // best first
  Result naive;              // the split a homogeneous planner would make
  int64_t splits = 0;        // splits enumerated
  bool truncated = false;    // stopped at kMaxSplits: the best of those enumerated
  int64_t feasible = 0;
  std::string why_none;      // when `top` is empty
};

// Every split of the scenario's hetero.split kind (each pool's layers at
// least its stage count; each batch share a multiple of its pool's dp x
// micro_batch), ranked by the objective (lower is better; ties by the
// enumeration order). Each pool is costed once per share it can take, so
// two pools cost O(layers) (or O(batch / step)) estimator runs. At most
// kMaxSplits splits are enumerated.
inline constexpr int64_t kMaxSplits = 2'000'000;
SplitSearch SearchSplits(const engine::Scenario& s, SplitObjective objective, int top);

}  // namespace orrery::hetero
