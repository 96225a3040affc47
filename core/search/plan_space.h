#pragma once
// The plan space of `orrery search`: every way to split one training
// iteration of a model over a number of devices.
//
// A plan is enumerated in two levels. A *shape* fixes the parallel degrees
// (tp, pp, cp, ep, and dp = devices / (tp pp cp)); inside a shape the knobs
// are crossed:
//
//   micro_batch       every divisor of global_batch / dp
//   interleave v      every divisor of layers / pp (1 when pp = 1)
//   recompute         none, selective, full
//   sequence_parallel false, true            (tp > 1 only)
//   tp_comm_overlap   false, true            (tp > 1 only)
//   zero              0, 1, 2, 3             (dp > 1 only)
//   dp_overlap        true, false            (dp > 1 and zero < 3 only)
//   offload_optimizer false, true
//   group_order       every order of the groups larger than 1 (k! orders
//                     for k such groups): which group gets the innermost,
//                     fastest network tier
//
// Knobs that cannot change a plan (sequence parallelism without tp, ZeRO
// without dp, the order of groups of size 1) are not enumerated, so every
// candidate is a distinct plan. This is the space of Calculon (Isaev et al.
// 2023, SC23, Sec. 4: TP, PP, DP, interleaving, recompute, optimizer
// sharding, overlaps, offload, microbatch, network tier per dimension) plus
// CP and EP.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.h"
#include "parallelism/plan_spec.h"

namespace orrery::engine {

// Knobs a caller holds fixed (the stated fields of a measured run,
// core/validation): a fixed knob's value is the only one enumerated; the
// others stay free. 0 (degrees, micro batch, interleave) or -1 (the rest):
// free.
struct FixedKnobs {
  int64_t tp = 0, pp = 0, cp = 0, ep = 0, dp = 0, micro_batch = 0, interleave = 0;
  // A free interleave takes no value below this: 2 for a run that states an
  // interleaved schedule without its virtual stages (Llama 3's pre-training,
  // Grattafiori et al. 2024 Sec. 3.3.2).
  int64_t interleave_min = 1;
  int64_t etp = -1;            // -1 free; 0 = tp (unfolded); > 0 that etp
  int zero = -1;               // 0 .. 3
  int zero_max = 3;            // the largest stage a free zero takes
  int recompute = -1;          // parallelism::Recompute as int
  int sequence_parallel = -1;  // 0 off, 1 on
  int tp_comm_overlap = -1;
  int dp_overlap = -1;
  int offload = -1;
};

struct PlanSpaceOptions {
  // Calculon's convention: each plan trains the largest multiple of its dp
  // not above workload.global_batch, instead of requiring dp to divide it.
  bool round_batch = false;
  bool offload = true;           // include offload_optimizer = true
  bool context_parallel = true;  // include cp > 1
  bool all_group_orders = true;  // false: only the default order tp,cp,ep,dp,pp
  // Non-empty: the one order enumerated (training.group_order's words; a
  // measured run's stated order, core/validation), whatever all_group_orders says.
  std::string group_order;
  int64_t max_micro_batch = 0;   // 0 = no limit
  // Also pp that does not divide the layers: every stage gets ceil(L / pp)
  // layers but the last, which gets the rest (DeepSeek-V3's 61 layers over
  // 16 stages). Off by default: the classic space of Megatron-LM.
  bool uneven_stages = false;
  // The plan counts the embedding and the loss as one pipeline-split unit
  // each (TrainingPlan::pipeline_split_embedding_loss, Megatron-Core
  // --account-for-embedding/loss-in-pipeline-split): pp divides L + 2 units
  // and interleave the units per stage (parallelism::PipelineSplitUnits).
  bool split_embedding_loss = false;
  // The decoder layers the plan puts on its first and last pipeline device
  // (TrainingPlan::first_stage_layers / last_stage_layers; 0 = not set):
  // with either set, the middle devices share the rest and a free
  // interleave runs over the divisors of a middle device's layers.
  int64_t first_stage_layers = 0, last_stage_layers = 0;
  // The plan's schedule takes an interleave (1F1B and interleaved 1F1B);
  // GPipe, ZB-H1 and the V-shapes have their chunks fixed
  // (parallelism::ScheduleChunks), so interleave stays 1 and the search keeps
  // the schedule asked for (ApplyKnobs switches 1F1B and interleaved only).
  bool schedule_takes_interleave = true;
  FixedKnobs fixed;
};

// The parallel degrees of a family of plans.
struct PlanShape {
  int64_t devices = 0;
  int64_t tp = 1, pp = 1, cp = 1, ep = 1, dp = 1;
  int64_t etp = 0;           // expert tensor parallel; 0 = tp (TrainingPlan::etp)
  int64_t global_batch = 0;  // after rounding (0: dp does not divide the batch)
  bool uneven_stages = false;  // PlanSpaceOptions::uneven_stages
  bool split_embedding_loss = false;  // PlanSpaceOptions::split_embedding_loss
};

// Pipeline-split units of the shape's plans: the layers, plus the embedding
// and the loss when they count as one unit each and pp > 1
// (parallelism::PipelineSplitUnits).
int64_t SplitUnits(const models::ModelSpec& m, const PlanShape& s);

// Divisors of n in increasing order (n >= 1).
std::vector<int64_t> Divisors(int64_t n);

// Every shape for `devices`, in a fixed order (tp, then pp, then cp, then ep
// ascending, then etp: tp first, then 1). For MoE models with ep > 1 and
// tp > 1 both the unfolded layer (etp = tp, ep divides dp x cp) and the
// folded one (etp = 1, ep divides tp x cp x dp; MoE parallel folding, arXiv
// 2504.14960) are shapes. Shapes whose dp cannot split the batch are left out: they hold
// no candidates.
std::vector<PlanShape> EnumerateShapes(const models::ModelSpec& m, const parallelism::Workload& w,
                                       int64_t devices, const PlanSpaceOptions& o);

// Why every plan of a shape breaks a divisibility rule, or nullptr when they
// do not: tp must divide the heads, KV heads (or be divisible by them) and
// the MLP; cp the sequence; ep the experts and dp x cp; pp the layers.
const char* DivisibilityProblem(const models::ModelSpec& m, const parallelism::Workload& w,
                                const PlanShape& s);

// Group orders of the shape (strings for training.group_order): the
// permutations of the groups larger than 1, followed by the others.
struct GroupOrders {
  std::array<std::array<char, 16>, 24> text{};
  int count = 0;
};
GroupOrders OrdersFor(const PlanShape& s, bool all_orders);

// The knobs crossed inside one shape. Each flag axis runs over the values
// from .. from + count - 1 (a knob held fixed: count 1).
struct ShapeAxes {
  std::vector<int64_t> micro_batches;
  std::vector<int64_t> interleaves;
  int sequence_parallel = 1;  // 1 or 2 values
  int sequence_parallel_from = 0;
  int tp_overlap = 1;
  int tp_overlap_from = 0;
  int zero = 1;               // stages zero_from .. zero_from + zero - 1
  int zero_from = 0;
  int offload = 1;
  int offload_from = 0;
  int recomputes = 3;         // none, selective, full (op only when fixed)
  int recompute_from = 0;
  int dp_overlap_fixed = -1;  // FixedKnobs::dp_overlap
  GroupOrders orders;
  // Candidates for one (zero stage): dp_overlap has 2 values when zero < 3
  // and dp > 1 (unless held fixed).
  int DpOverlaps(int64_t dp, int zero_stage) const {
    return dp_overlap_fixed < 0 && dp > 1 && zero_stage < 3 ? 2 : 1;
  }
  // The first dp_overlap value: true (index 0) unless held false.
  int DpOverlapFrom() const { return dp_overlap_fixed == 0 ? 1 : 0; }
  // Plans per (micro_batch, sequence_parallel, interleave) block.
  uint64_t PerBlock(int64_t dp) const;
  uint64_t Candidates(int64_t dp) const;
};
ShapeAxes AxesFor(const models::ModelSpec& m, const PlanShape& s, const PlanSpaceOptions& o);

// Total candidates of a set of shapes.
uint64_t CountCandidates(const models::ModelSpec& m, const std::vector<PlanShape>& shapes,
                         const PlanSpaceOptions& o);

// The knobs of one candidate, compact (no strings), for ranking and storage.
struct PlanKnobs {
  int64_t devices = 0, tp = 1, pp = 1, cp = 1, ep = 1, dp = 1;
  int64_t etp = 0;  // 0 = tp
  int64_t global_batch = 0, micro_batch = 1, interleave = 1;
  parallelism::Recompute recompute = parallelism::Recompute::kNone;
  bool sequence_parallel = false, tp_comm_overlap = false, dp_overlap = true, offload = false;
  int64_t zero = 0;
  std::array<char, 16> group_order{};
};

// Writes the knobs into `plan` (whose other fields — precision, attention,
// optimizer, bucket — come from the scenario). Does not allocate: the group
// order fits std::string's small buffer.
void ApplyKnobs(const PlanKnobs& k, parallelism::TrainingPlan& plan);

// "tp=8 pp=16 cp=1 ep=1 dp=32 mb=1 v=2 recompute=selective sp=on ..."
std::string DescribeKnobs(const PlanKnobs& k);

}  // namespace orrery::engine
