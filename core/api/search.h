#pragma once
// orrery::Search: the best training plans for a scenario's model on its
// system (core/search/search.h: the space, the pruning, the ranking).
//
//   orrery::SearchRequest req;
//   req.scenario = orrery::ScenarioInput::File("llama3-70b-h100");
//   req.top = 3;
//   orrery::SearchResult r = orrery::Search(req, control);
//   // r.status: kOk; kInfeasible when no plan fits (r.reason says why)

#include <cstdint>
#include <string>
#include <vector>

#include "core/api/common.h"
#include "core/goodput/goodput.h"
#include "core/hetero/hetero.h"
#include "core/search/search.h"
#include "core/search/sweep.h"

namespace orrery {

using engine::Objective;
// "time", "cost", "energy", "tokens-per-dollar"; false otherwise.
bool ParseObjectiveName(const std::string& text, Objective& out);

struct SearchRequest {
  ScenarioInput scenario;
  int top = 5;                          // plans kept, 1..1000
  Objective objective = Objective::kTime;
  int threads = 0;                      // 0 = every core
  std::string gpus;                     // "" = the system's; "N"; or "A-B" whole nodes
  bool round_batch = false;             // largest multiple of dp not above the global batch
  bool offload = true;                  // optimizer offload in the space
  bool context_parallel = true;         // CP in the space
  bool all_group_orders = true;         // every order of the groups on the network tiers
  int64_t max_micro_batch = 0;          // 0 = any
  bool uneven_stages = false;           // also pp that does not divide the layers
  engine::Comm* comm = nullptr;         // MPI ranks sharing the shapes; nullptr = this process
};

struct SearchPlan {
  engine::SearchCandidate candidate;    // knobs, score, estimate
  engine::Scenario scenario;            // the scenario this plan describes
  // Failures, checkpoints and stragglers of this plan on its system
  // (core/goodput); effective time when workload.train_tokens is given.
  goodput::Result goodput;
};

struct SearchResult : ResultBase {
  engine::Scenario scenario;            // as loaded and overridden
  Objective objective = Objective::kTime;
  std::vector<int64_t> device_counts;   // searched (empty: the system's)
  engine::SearchStats stats;
  std::vector<SearchPlan> top;          // best first
  std::string why_first;                // why #1 beats #2 (with two or more plans)
  // Where #1's expert- and context-parallel groups sit on the network and
  // why its CP scheme (engine::ParallelNotes); empty without EP or CP.
  std::vector<std::string> notes_first;
  // The event engine's check of the finalists (engine::SearchOptions::event_check).
  double event_tolerance = 0;
  std::vector<engine::EventDisagreement> disagreements;
  uint64_t event_rejected = 0;          // finalists the event engine could not run (dropped)
  // A system with device pools: the search is over the split of the
  // scenario's hetero.split kind (layers or batch shares; core/hetero), and
  // `top` is left empty.
  std::optional<hetero::SplitSearch> hetero;
  int ranks = 1;
  bool primary = true;                  // false on MPI ranks other than 0: nothing to present
};

// Status: kOk; kInfeasible with the reason when no plan fits; kInvalidInput
// for a bad scenario or an objective the system cannot price; kUsage for a
// malformed request field (top, threads, gpus); kCancelled with the best
// plans of the shapes done. Progress: shapes done of total ("shapes").
SearchResult Search(const SearchRequest& req, const Control& control = {});

// The unit of SearchCandidate::score as shown (tokens-per-dollar is shown
// as tokens per USD, the inverse of the ranked score).
const char* ScoreUnit(Objective o);
double ShownScore(Objective o, double score);

// A plan's knobs in one line, as `orrery search` prints them ("tp=8 pp=4 ...").
std::string PlanText(const engine::PlanKnobs& k);

}  // namespace orrery
