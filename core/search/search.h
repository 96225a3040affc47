#pragma once
// Plan search: the best ways to train a scenario's model on its system.
//
// Enumerates the plan space (plan_space.h), prunes what cannot win before
// costing it, ranks the rest with the closed-form estimator and keeps the
// top K. Pruning, cheapest first:
//   1. divisibility: a shape whose tp, cp, ep or pp cannot divide the model
//      is dropped whole, before any costing;
//   2. memory lower bound: weights + gradients + optimizer states per device
//      (Rajbhandari et al. 2020, Sec. 3.1; parallelism/memory_model.h) for
//      each (zero, offload) — activations only add to it;
//   3. time lower bound: for one (micro_batch, sequence_parallel) the
//      forward + backward compute of a stage, t_fb, is known from one probe
//      estimate; every plan of the block takes at least
//      t_fb (m + (p - 1) / v)                  (1F1B / interleaved, schedule.h)
//      since recompute, communication and the optimizer only add time. A
//      block whose bound is worse than the current K-th best is skipped.
// Everything else is estimated with TrainingEstimator::Run (allocation-free).
//
// The finalists are then re-scored with the event-driven engine
// (event_estimator.h), which replays the pipeline schedule instead of
// assuming its closed form: a plan the event engine cannot run is dropped,
// the rest are ranked by the simulated iteration, and a finalist whose two
// estimates differ by more than SearchOptions::event_tolerance is reported
// in SearchResult::disagreements. The closed form's optimism in some corner
// (a schedule it prices too kindly) therefore cannot put a plan first. The
// workers keep `top + event_spare` closed-form candidates so that dropped
// plans are replaced.
//
// Work runs in two phases (search.cpp, class Searcher). First every shape
// is probed (the memory and time bounds above) and cut into blocks: the
// candidates sharing micro_batch, sequence_parallel, interleave, zero stage
// and offload, whose bound also counts the optimizer step (or its offload),
// which no other knob of the block changes. Then the blocks of all shapes
// are costed best bound first; each is estimated with one prepared workload
// (TrainingEstimator::Prepare). Block j is pruned when its bound exceeds the
// K-th best score of blocks 0 .. j-1, so the costed blocks are a prefix of
// the order; threads cost blocks ahead, and results are committed in order,
// which finds the end of the prefix exactly. Candidates are ordered by
// (score, ordinal), the ordinal being the candidate's position in the fixed
// enumeration. The answer and every count (evaluated, pruned, feasible) are
// therefore the same for any thread count and on every run.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/search/plan_space.h"
#include "core/estimate/scenario.h"
#include "core/estimate/training_estimator.h"

namespace orrery::engine {

enum class Objective { kTime, kCost, kEnergy, kTokensPerDollar };

// What searches of one scenario at several device memory capacities share
// (a sweep's HBM axis), so that each plan is costed once for all of them.
// A plan's time does not depend on the capacity, only whether it fits: the
// closed form reads system.device.memory_capacity in its two memory checks
// alone (training_estimator.cpp), and no knob is chosen by memory. The memo
// keeps, by shape, the probes of the bounds; by block, its result with the
// range of capacities over which its memory checks come out the same; by
// finalist, the event engine's simulation. A search at
// capacity C takes each from the memo, redoing its memory check against C
// (SearchOptions::memo); what it finds, and every count, is what the same
// search without the memo finds. One memo serves searches that differ in
// the capacity alone, with the same SearchOptions, one at a time.
class SearchMemo {
 public:
  SearchMemo();
  ~SearchMemo();
  SearchMemo(const SearchMemo&) = delete;
  SearchMemo& operator=(const SearchMemo&) = delete;
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};
const char* ObjectiveName(Objective o);
// Parses "time", "cost", "energy", "tokens-per-dollar"; false otherwise.
bool ParseObjective(const std::string& text, Objective& out);

struct SearchOptions {
  int top = 5;
  Objective objective = Objective::kTime;
  int threads = 0;                      // 0 = every hardware thread
  PlanSpaceOptions space;
  std::vector<int64_t> device_counts;   // empty = the scenario's system
  bool prune_by_time = true;            // off only to test the bound
  // Re-score the finalists with the event engine (see above). Shards skip
  // it; the caller runs CheckWithEvents on the merged list.
  bool event_check = true;
  int event_spare = 8;                  // extra closed-form candidates kept for it
  double event_tolerance = 0.02;        // |event / closed - 1| reported above this
  // Shard for multi-process runs: shapes i with i % shards == shard.
  int shard = 0;
  int shards = 1;
  // Called from the calling thread about every 100 ms: progress in shapes
  // (done, total), the first half for probing the shapes, the second for
  // the blocks costed (it jumps to the end when the bound cuts the rest).
  std::function<void(uint64_t, uint64_t)> progress;
  // Borrowed; when raised, workers stop before their next shape and the
  // result holds the best plans of the shapes done (SearchResult::cancelled).
  const std::atomic<bool>* cancel = nullptr;
  // Borrowed; shared with searches of the same scenario at other memory
  // capacities (see SearchMemo). A search with a memo runs on one thread
  // and ignores it when sharded.
  SearchMemo* memo = nullptr;
};

struct SearchCandidate {
  PlanKnobs knobs;
  double score = 0;      // the objective, lower is better (see ObjectiveScore)
  uint64_t ordinal = 0;  // position in the enumeration (tie-break)
  TrainingEstimate estimate;      // after the event check: time simulated by the event engine
  double closed_form_s = 0;       // the closed form's iteration (s)
  bool event_checked = false;     // estimate.time comes from the event engine
};

// A finalist where the closed form and the event engine disagree.
struct EventDisagreement {
  PlanKnobs knobs;
  double closed_form_s = 0;
  double event_s = 0;             // 0 when the event engine rejected the plan
  std::string why;                // the event engine's reason when it rejected the plan
};

struct SearchStats {
  uint64_t candidates = 0;            // size of the enumerated space
  uint64_t pruned_divisibility = 0;
  // Whole blocks whose microbatch count the schedule cannot run: interleaved
  // 1F1B with m not a multiple of pp, DualPipe with m odd or under 2 pp
  // (parallelism/schedule.h), known before any estimate.
  uint64_t pruned_schedule = 0;
  uint64_t pruned_memory = 0;         // weights + gradients + optimizer over capacity, or the
                                      // rest of a block whose first plan does not fit
  uint64_t pruned_time = 0;           // time lower bound above the K-th best
  uint64_t evaluated = 0;             // full estimates of candidates
  uint64_t probes = 0;                // estimates made for the time bound
  uint64_t out_of_memory = 0;         // evaluated, did not fit with activations (or host memory)
  // Evaluated and refused for a reason other than memory: a stage layout or
  // an activation offload the stages cannot hold, a group with no network
  // tier (a microbatch count the schedule cannot run is pruned_schedule).
  uint64_t refused = 0;
  uint64_t feasible = 0;
  double min_states_bytes = 0;        // smallest weights+grads+optimizer seen (per device)
  double min_total_bytes = 0;         // smallest total memory among evaluated plans
  double capacity_bytes = 0;
  uint64_t shapes = 0;
  int threads = 1;
  double wall_s = 0;
};

struct SearchResult {
  std::vector<SearchCandidate> top;   // best first
  SearchStats stats;
  std::string why_none;               // when `top` is empty: why no plan fits
  bool cancelled = false;             // SearchOptions::cancel was raised
  std::vector<EventDisagreement> disagreements;  // from the event check
  uint64_t event_rejected = 0;        // finalists the event engine could not run
};

// Objective value of an estimate, lower is better: seconds, USD or joules
// per token trained (per token so that plans whose batch was rounded
// compare fairly; at a fixed batch it orders like the iteration time);
// tokens-per-dollar is ranked as USD per token.
double ObjectiveScore(Objective o, const TrainingEstimate& e, int64_t global_batch, int64_t seq_len);

// The energy and cost objectives as the search ranks them (issue 17): a
// plan's score is (per_s x iteration - bubble x pp_bubble) / tokens.
//   energy  devices draw TDP while they work and their idle power
//           (device.idle_power, or 30 % of TDP) in pipeline bubbles, and the
//           run pays for failures as core/goodput counts them: work redone
//           and straggler waits at TDP, restarts and checkpoint stalls at
//           idle power. Per second of useful work the run spends
//           B = 1/goodput - I busy seconds and I idle seconds (I = expected
//           restart and stall time per second of work), so
//             per_s  = N PUE (TDP B + P_idle I)
//             bubble = N PUE (TDP - P_idle) B
//   cost    the devices are rented for the whole wall time, restarts
//           included: per_s = N price / goodput, bubble = 0.
//   time    per_s = 1, bubble = 0 (the step itself).
// Goodput depends on the system, the device count and the checkpoint size
// (core/goodput), not on the step time, so it is one factor per device count.
struct ObjectiveWeights {
  double per_s = 1;
  double bubble = 0;
};
ObjectiveWeights WeightsOf(Objective o, const hardware::SystemSpec& s, const parallelism::TrainingPlan& plan,
                           double parameters);
// (per_s x iteration - bubble x pp_bubble) / tokens.
double WeightedScore(const ObjectiveWeights& w, const TrainingEstimate& e, double tokens);

// Checks that the objective can be computed for the system (cost needs a
// price, energy a TDP). Empty when fine, else the reason.
std::string ObjectiveProblem(Objective o, const hardware::SystemSpec& s);

// The scenario with its system resized to `devices` (nodes x devices per
// node; a count below one node makes one smaller node). Empty reason on
// success.
std::string ResizeSystem(hardware::SystemSpec& s, int64_t devices);

SearchResult Search(const Scenario& s, const SearchOptions& o);

// Re-scores `r.top` with the event engine: drops plans it rejects, records
// disagreements above o.event_tolerance, ranks by the simulated objective
// and keeps o.top. The candidates' estimates must be filled (Reestimate).
void CheckWithEvents(const Scenario& s, const SearchOptions& o, SearchResult& r);

// Merges shard results (top lists and counts), keeping the best `top`.
SearchResult MergeSearchResults(const std::vector<SearchResult>& parts, int top);

// Rebuilds the full plan of a candidate from the scenario's base plan.
parallelism::TrainingPlan PlanOf(const Scenario& s, const PlanKnobs& k);

// The scenario a candidate describes: system resized to its device count,
// its plan, its (possibly rounded) global batch.
Scenario ScenarioOf(const Scenario& s, const PlanKnobs& k);

// Fills `c.estimate` again from its knobs (after CandidatesFromText).
void Reestimate(const Scenario& s, SearchCandidate& c);

// One line on why `a` beats `b`: the breakdown item that differs most and
// the knobs behind it, e.g. "smaller pp_bubble (1.2 s vs 3.4 s): pp 8 -> 4".
std::string WhyBetter(const SearchCandidate& a, const SearchCandidate& b);

// Compact text form of candidates (knobs, score, ordinal), for shipping
// shard results between processes; parsed back by CandidatesFromText.
std::string CandidatesToText(const SearchResult& r);
bool CandidatesFromText(const std::string& text, SearchResult& out);

}  // namespace orrery::engine
