#include "core/api/search.h"

#include <utility>

#include "core/base/format.h"
#include "core/estimate/parallel_notes.h"
#include "models/transformer.h"

namespace orrery {

namespace {

// "4096" or "512-4096": device counts to search. A range takes every whole
// number of nodes in it (and the sub-node counts that divide a node).
bool ParseGpus(const std::string& text, int64_t per_node, std::vector<int64_t>& out,
               std::string& err) {
  const size_t dash = text.find('-');
  auto num = [](const std::string& t, int64_t& v) {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos)
      return false;
    v = std::stoll(t);
    return v >= 1;
  };
  int64_t a = 0, b = 0;
  if (dash == std::string::npos) {
    if (!num(text, a)) {
      err = "gpus expects N or A-B with whole numbers >= 1, got '" + text + "'";
      return false;
    }
    out = {a};
    return true;
  }
  if (!num(text.substr(0, dash), a) || !num(text.substr(dash + 1), b) || b < a) {
    err = "gpus expects N or A-B with 1 <= A <= B, got '" + text + "'";
    return false;
  }
  for (int64_t n = a; n <= b && n < per_node; ++n)
    if (per_node % n == 0) out.push_back(n);
  for (int64_t nodes = (a + per_node - 1) / per_node; nodes * per_node <= b; ++nodes)
    if (nodes >= 1) out.push_back(nodes * per_node);
  if (out.empty()) {
    err = "gpus " + text + " holds no whole number of " + std::to_string(per_node) + "-device nodes";
    return false;
  }
  if (out.size() > 4096) {
    err = "gpus " + text + " spans " + std::to_string(out.size()) +
          " device counts; narrow it (at most 4096)";
    return false;
  }
  return true;
}

}  // namespace

bool ParseObjectiveName(const std::string& text, Objective& out) {
  return engine::ParseObjective(text, out);
}

const char* ScoreUnit(Objective o) {
  switch (o) {
    case Objective::kTime: return "s/token";
    case Objective::kCost: return "USD/token";
    case Objective::kEnergy: return "J/token";
    case Objective::kTokensPerDollar: return "tokens/USD";
  }
  return "";
}

double ShownScore(Objective o, double score) {
  return o == Objective::kTokensPerDollar ? (score > 0 ? 1 / score : 0) : score;
}

SearchResult Search(const SearchRequest& req, const Control& control) {
  SearchResult r;
  r.objective = req.objective;
  auto usage = [&](std::string why) {
    r.status = Status::kUsage;
    r.reason = std::move(why);
    return r;
  };
  if (req.top < 1 || req.top > 1000)
    return usage("top must be in [1, 1000], got " + std::to_string(req.top));
  if (req.threads < 0 || req.threads > 1024)
    return usage("threads must be in [0, 1024] (0 = every core), got " + std::to_string(req.threads));
  auto scenario = ResolveScenario(req.scenario, r.diagnostics);
  if (!scenario) {
    r.status = Status::kInvalidInput;
    return r;
  }
  r.scenario = std::move(*scenario);
  engine::SearchOptions o;
  o.top = req.top;
  o.objective = req.objective;
  o.threads = req.threads;
  o.space.round_batch = req.round_batch;
  o.space.offload = req.offload;
  o.space.context_parallel = req.context_parallel;
  o.space.all_group_orders = req.all_group_orders;
  o.space.max_micro_batch = req.max_micro_batch;
  o.space.uneven_stages = req.uneven_stages;
  if (!req.gpus.empty()) {
    std::string why;
    if (!ParseGpus(req.gpus, r.scenario.system.devices_per_node, o.device_counts, why))
      return usage(why);
  }
  r.device_counts = o.device_counts;
  if (const std::string why = engine::ObjectiveProblem(o.objective, r.scenario.system); !why.empty()) {
    r.status = Status::kInvalidInput;
    r.reason = why;
    return r;
  }
  if (!r.scenario.system.pools.empty()) {
    // A heterogeneous system: the splits over its pools (core/hetero).
    if (!req.gpus.empty()) return usage("--gpus resizes one device type; a system with pools is searched as given");
    const hetero::SplitObjective ho = o.objective == Objective::kTime     ? hetero::SplitObjective::kTime
                                      : o.objective == Objective::kEnergy ? hetero::SplitObjective::kEnergy
                                                                          : hetero::SplitObjective::kCost;
    r.hetero = hetero::SearchSplits(r.scenario, ho, req.top);
    if (r.hetero->top.empty()) {
      r.status = Status::kInfeasible;
      r.reason = r.hetero->why_none;
    }
    return r;
  }
  engine::LocalComm local;
  engine::Comm& comm = req.comm != nullptr ? *req.comm : local;
  o.shard = comm.rank();
  o.shards = comm.size();
  r.ranks = comm.size();
  r.primary = comm.rank() == 0;
  if (control.progress && r.primary)
    o.progress = [&control](uint64_t done, uint64_t total) { control.Report(done, total, "shapes"); };
  o.cancel = control.cancel;
  engine::SearchResult found = engine::Search(r.scenario, o);
  if (comm.size() > 1) {
    // Every rank sends its top K; rank 0 merges them and re-estimates.
    const std::vector<std::string> parts = comm.Gather(engine::CandidatesToText(found));
    if (!r.primary) return r;
    std::vector<engine::SearchResult> results(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!engine::CandidatesFromText(parts[i], results[i])) {
        r.status = Status::kInvalidInput;
        r.reason = "rank " + std::to_string(i) + " sent a result that does not parse";
        return r;
      }
    }
    const bool cancelled = found.cancelled;
    found = engine::MergeSearchResults(results, req.top + (o.event_check ? o.event_spare : 0));
    found.cancelled = cancelled;
    for (auto& c : found.top) engine::Reestimate(r.scenario, c);
    if (o.event_check) engine::CheckWithEvents(r.scenario, o, found);
  }
  r.event_tolerance = o.event_tolerance;
  r.disagreements = found.disagreements;
  r.event_rejected = found.event_rejected;
  r.stats = found.stats;
  const double params = models::ParameterCount(r.scenario.model, r.scenario.workload.seq_len);
  for (engine::SearchCandidate& c : found.top) {
    engine::Scenario one = engine::ScenarioOf(r.scenario, c.knobs);
    const goodput::Result g = goodput::Evaluate(goodput::MakeInputs(
        one.system, one.training, params, c.estimate.iteration_s, c.estimate.train_time_s));
    r.top.push_back({c, std::move(one), g});
  }
  if (r.top.size() > 1) r.why_first = engine::WhyBetter(r.top[0].candidate, r.top[1].candidate);
  if (!r.top.empty()) r.notes_first = engine::ParallelNotes(r.top[0].scenario, r.top[0].candidate.estimate);
  if (found.cancelled) {
    r.status = Status::kCancelled;
    r.reason = "cancelled; the plans are the best of the shapes searched so far";
  } else if (r.top.empty()) {
    r.status = Status::kInfeasible;
    using base::FormatGrouped;
    r.reason = found.why_none + " (" + FormatGrouped(r.stats.candidates) + " candidates: " +
               FormatGrouped(r.stats.pruned_divisibility) + " do not divide the model, " +
               FormatGrouped(r.stats.pruned_memory) + " overflow memory before activations, " +
               FormatGrouped(r.stats.out_of_memory) + " overflow with activations, " +
               FormatGrouped(r.stats.refused) + " break a pipeline rule" +
               (r.stats.pruned_schedule > 0
                    ? ", " + FormatGrouped(r.stats.pruned_schedule) + " have a microbatch count the schedule cannot run)"
                    : std::string(")"));
  }
  return r;
}

std::string PlanText(const engine::PlanKnobs& k) { return engine::DescribeKnobs(k); }

}  // namespace orrery
