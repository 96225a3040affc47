// Plan search: the space it enumerates (counted by hand), pruning that never
// changes the answer, thread-count independence, and the infeasible message.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "core/estimate/event_estimator.h"
#include "core/search/search.h"
#include "models/transformer.h"
#include "tests/support/model_shapes.h"
#include "tests/support/presets.h"

namespace orrery::engine {
namespace {

const std::string kConfigs = ORRERY_TEST_CONFIG_DIR;

using test::LoadScenario;

TEST(PlanSpace, Divisors) {
  EXPECT_EQ(Divisors(12), (std::vector<int64_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(Divisors(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(Divisors(4096).size(), 13u);  // 2^0 .. 2^12
}

TEST(PlanSpace, GroupOrdersArePermutationsOfTheGroupsLargerThanOne) {
  PlanShape s;
  s.tp = 8;
  s.dp = 4;
  s.pp = 2;
  const GroupOrders g = OrdersFor(s, true);
  ASSERT_EQ(g.count, 6);  // 3! orders of tp, dp, pp; cp (size 1) last
  EXPECT_STREQ(g.text[0].data(), "tp,dp,ep,pp,cp");
  EXPECT_STREQ(g.text[5].data(), "pp,dp,ep,tp,cp");
  s.dp = 1;
  s.pp = 1;
  EXPECT_EQ(OrdersFor(s, true).count, 1);
  EXPECT_STREQ(OrdersFor(s, false).text[0].data(), "tp,cp,ep,dp,pp");
}

// A stated order (PlanSpaceOptions::group_order, a measured run's; Llama 3's
// [TP, CP, PP, DP]) is the one order enumerated, with or without
// all_group_orders, and the candidates are those of one order.
TEST(PlanSpace, AStatedGroupOrderIsTheOnlyOneEnumerated) {
  const models::ModelSpec m = test::Gpt(8, 1024, 8);
  PlanShape s;
  s.devices = 64;
  s.tp = 8;
  s.dp = 4;
  s.pp = 2;
  s.global_batch = 8;
  PlanSpaceOptions o;
  EXPECT_EQ(AxesFor(m, s, o).orders.count, 6);
  o.group_order = "tp,cp,ep,pp,dp";
  const ShapeAxes a = AxesFor(m, s, o);
  ASSERT_EQ(a.orders.count, 1);
  EXPECT_STREQ(a.orders.text[0].data(), "tp,cp,ep,pp,dp");
  o.all_group_orders = false;
  EXPECT_STREQ(AxesFor(m, s, o).orders.text[0].data(), "tp,cp,ep,pp,dp");
  PlanSpaceOptions all;
  EXPECT_EQ(AxesFor(m, s, all).Candidates(s.dp), 6 * a.Candidates(s.dp));
}

// Two devices, a 2-layer model, global batch 2, no offload. By hand:
//   tp1 pp1 dp2: micro_batch {1}; zero 0,1,2 x dp_overlap 2 + zero 3 = 7;
//                recompute 3                                   -> 21
//   tp1 pp2 dp1: micro_batch {1,2}; interleave {1}; recompute 3 ->  6
//   tp2 pp1 dp1: micro_batch {1,2}; sp 2; tp overlap 2; rec 3   -> 24
//   cp2:         micro_batch {1,2}; recompute 3                 ->  6
// = 57 candidates (51 without context parallelism).
TEST(PlanSpace, CandidateCountWorkedByHand) {
  models::ModelSpec m;
  m.layers = 2;
  m.hidden = 64;
  m.heads = 4;
  m.vocab = 128;
  parallelism::Workload w{.global_batch = 2, .seq_len = 16};
  PlanSpaceOptions o;
  o.offload = false;
  EXPECT_EQ(CountCandidates(m, EnumerateShapes(m, w, 2, o), o), 57u);
  o.context_parallel = false;
  EXPECT_EQ(CountCandidates(m, EnumerateShapes(m, w, 2, o), o), 51u);
  o.offload = true;  // doubles every plan
  EXPECT_EQ(CountCandidates(m, EnumerateShapes(m, w, 2, o), o), 102u);
}

void ExpectSameTop(const SearchResult& a, const SearchResult& b) {
  ASSERT_EQ(a.top.size(), b.top.size());
  for (size_t i = 0; i < a.top.size(); ++i) {
    EXPECT_EQ(a.top[i].ordinal, b.top[i].ordinal) << i;
    EXPECT_EQ(a.top[i].score, b.top[i].score) << i;
    EXPECT_EQ(DescribeKnobs(a.top[i].knobs), DescribeKnobs(b.top[i].knobs)) << i;
  }
}

// The top 8 plans of one search of `s` for `objective` on one thread (one
// group order, no offload), pruned by the time bound and not.
struct PrunedAndFull {
  SearchResult pruned, full;
};
PrunedAndFull SearchWithAndWithoutTheTimeBound(const Scenario& s,
                                               Objective objective = SearchOptions{}.objective) {
  SearchOptions o;
  o.top = 8;
  o.threads = 1;
  o.objective = objective;
  o.space.all_group_orders = false;
  o.space.offload = false;
  PrunedAndFull r;
  r.pruned = Search(s, o);
  o.prune_by_time = false;
  r.full = Search(s, o);
  return r;
}

TEST(Search, TimeBoundNeverChangesTheAnswer) {
  const Scenario s = LoadScenario("gpt3-175b-a100");  // 64 A100, batch 64
  const auto [pruned, full] = SearchWithAndWithoutTheTimeBound(s);
  ASSERT_EQ(full.top.size(), 8u);
  EXPECT_GT(pruned.stats.pruned_time, 0u);
  EXPECT_EQ(full.stats.pruned_time, 0u);
  ExpectSameTop(pruned, full);
  // Every candidate is accounted for exactly once.
  for (const SearchResult* r : {&pruned, &full}) {
    const SearchStats& st = r->stats;
    EXPECT_EQ(st.candidates, st.pruned_divisibility + st.pruned_schedule + st.pruned_memory + st.pruned_time + st.evaluated);
    EXPECT_EQ(st.evaluated, st.feasible + st.out_of_memory + st.refused);
  }
  // Ranked best first, and the best is what the event engine says for its
  // plan, with the closed form's figure kept beside it.
  for (size_t i = 1; i < full.top.size(); ++i) EXPECT_LE(full.top[i - 1].score, full.top[i].score);
  const Scenario best = ScenarioOf(s, full.top[0].knobs);
  const EventEstimator est(best.model, best.system);
  const EventEstimate e = est.Run(best.training, best.workload);
  ASSERT_TRUE(e.simulated());
  EXPECT_TRUE(full.top[0].event_checked);
  EXPECT_EQ(e.estimate.iteration_s, full.top[0].estimate.iteration_s);
  EXPECT_EQ(e.closed_form.iteration_s, full.top[0].closed_form_s);
}

// A microbatch count the schedule cannot run is refused by the estimator
// whatever the rest of the plan (parallelism::InterleaveNeedsMultiple,
// DualPipeShapeInvalid read only m, pp, the interleave and the schedule), so
// the search sets such blocks aside whole before costing them. GPT-3 175B
// on 64 A100 at batch 64 under DualPipe: with the time bound off every
// other plan is evaluated, and none of them is refused, so the pruning
// caught every plan the rule would refuse; those it kept run (m even and at
// least 2 pp wherever the plan pipelines). Interleaved 1F1B likewise.
TEST(Search, BlocksWhoseMicrobatchesTheScheduleCannotRunAreSetAsideWhole) {
  for (const parallelism::Schedule schedule :
       {parallelism::Schedule::kDualPipe, parallelism::Schedule::kOneFOneB}) {
    Scenario s = LoadScenario("gpt3-175b-a100");
    s.training.schedule = schedule;
    const auto [pruned, full] = SearchWithAndWithoutTheTimeBound(s);
    ASSERT_FALSE(full.top.empty());
    for (const SearchResult* r : {&pruned, &full}) {
      const SearchStats& st = r->stats;
      EXPECT_GT(st.pruned_schedule, 0u);
      EXPECT_EQ(st.refused, 0u);
      EXPECT_EQ(st.candidates,
                st.pruned_divisibility + st.pruned_schedule + st.pruned_memory + st.pruned_time + st.evaluated);
    }
    EXPECT_EQ(pruned.stats.pruned_schedule, full.stats.pruned_schedule);
    ExpectSameTop(pruned, full);
    for (const SearchCandidate& c : full.top) {
      const int64_t m = c.knobs.global_batch / (c.knobs.dp * c.knobs.micro_batch);
      if (schedule == parallelism::Schedule::kDualPipe && c.knobs.pp > 1) {
        EXPECT_EQ(c.knobs.pp % 2, 0) << DescribeKnobs(c.knobs);
        EXPECT_EQ(m % 2, 0) << DescribeKnobs(c.knobs);
        EXPECT_GE(m, 2 * c.knobs.pp) << DescribeKnobs(c.knobs);
      }
      if (c.knobs.interleave > 1) {
        EXPECT_EQ(m % c.knobs.pp, 0) << DescribeKnobs(c.knobs);
      }
      EXPECT_TRUE(c.estimate.feasible()) << DescribeKnobs(c.knobs);
    }
  }
}

TEST(Search, OneAndTwoThreadsGiveTheSameRows) {
  const Scenario s = LoadScenario("gpt3-175b-a100");
  SearchOptions o;
  o.top = 10;
  o.threads = 1;
  const SearchResult one = Search(s, o);
  o.threads = 2;
  const SearchResult two = Search(s, o);
  EXPECT_EQ(two.stats.threads, 2);
  EXPECT_EQ(one.stats.candidates, two.stats.candidates);
  ExpectSameTop(one, two);
}

TEST(Search, ShardsMergeToTheSingleProcessAnswer) {
  const Scenario s = LoadScenario("gpt3-175b-a100");
  SearchOptions o;
  o.top = 5;
  o.threads = 1;
  o.space.all_group_orders = false;
  const SearchResult whole = Search(s, o);
  std::vector<SearchResult> parts;
  o.shards = 3;
  for (int r = 0; r < 3; ++r) {
    o.shard = r;
    SearchResult part;
    // Through the text form, as MPI ranks send it.
    ASSERT_TRUE(CandidatesFromText(CandidatesToText(Search(s, o)), part));
    parts.push_back(part);
  }
  SearchResult merged = MergeSearchResults(parts, 5 + o.event_spare);
  for (auto& c : merged.top) Reestimate(s, c);
  CheckWithEvents(s, o, merged);
  EXPECT_EQ(merged.stats.candidates, whole.stats.candidates);
  ExpectSameTop(merged, whole);
  EXPECT_EQ(merged.top[0].estimate.iteration_s, whole.top[0].estimate.iteration_s);
}

// Issue 15: Llama 3 70B on 16,384 H100 at global batch 1024. Every plan
// search returns has been replayed by the event engine, and a finalist it
// cannot run (interleaved 1F1B with m not a multiple of pp) is dropped and
// reported, never ranked.
TEST(Search, FinalistsAreCheckedByTheEventEngine) {
  Scenario s = LoadScenario("llama3-70b-h100");
  s.system.nodes = 2048;
  // The preset's two-level radix-64 fat tree holds 2,048 GPUs (search
  // refuses more, as `orrery network` does); three levels hold 65,536.
  s.system.network.back().levels = 3;
  s.training.dp = 0;
  SearchOptions o;
  o.top = 3;
  o.threads = 2;
  o.space.all_group_orders = false;
  o.space.offload = false;
  const SearchResult r = Search(s, o);
  ASSERT_FALSE(r.top.empty()) << r.why_none;
  for (const SearchCandidate& c : r.top) {
    EXPECT_TRUE(c.event_checked);
    const int64_t m = c.knobs.global_batch / (c.knobs.dp * c.knobs.micro_batch);
    if (c.knobs.interleave > 1) {
      EXPECT_EQ(m % c.knobs.pp, 0) << DescribeKnobs(c.knobs);
    }
  }
  // A candidate the event engine rejects, handed in by hand: tp 4, pp 4,
  // dp 1024, interleave 20, one microbatch.
  SearchResult hand;
  SearchCandidate bad;
  bad.knobs = r.top[0].knobs;
  bad.knobs.tp = 4;
  bad.knobs.pp = 4;
  bad.knobs.cp = 1;
  bad.knobs.ep = 1;
  bad.knobs.dp = 1024;
  bad.knobs.micro_batch = 1;
  bad.knobs.interleave = 20;
  hand.top.push_back(bad);
  Reestimate(s, hand.top[0]);
  CheckWithEvents(s, o, hand);
  EXPECT_TRUE(hand.top.empty());
  EXPECT_EQ(hand.event_rejected, 1u);
  ASSERT_EQ(hand.disagreements.size(), 1u);
  EXPECT_NE(hand.disagreements[0].why.find("multiple of pp = 4"), std::string::npos) << hand.disagreements[0].why;
}

// GPT-3 175B cannot be trained on one 8-GPU node of 80 GB: the least model
// state per GPU is weights + gradients with the optimizer offloaded, spread
// over all 8 GPUs: (2 + 2) bytes x P / 8 = 0.5 P = 87.3 GB (P = 174.6 B).
TEST(Search, NoFeasiblePlanSaysWhyAndExitsTwo) {
  Scenario s = LoadScenario("gpt3-175b-a100");
  SearchOptions o;
  o.device_counts = {8};
  o.threads = 1;
  const SearchResult r = Search(s, o);
  ASSERT_TRUE(r.top.empty());
  const double p = models::ParameterCount(s.model, s.workload.seq_len);
  EXPECT_NEAR(r.stats.min_states_bytes / (0.5 * p), 1.0, 1e-3);
  EXPECT_NE(r.why_none.find("no plan fits: minimum weights+gradients+optimizer per GPU 87.3"), std::string::npos)
      << r.why_none;
  EXPECT_NE(r.why_none.find("> 80 GB"), std::string::npos) << r.why_none;

  std::ostringstream out, err;
  const int rc = cli::RunSearch({std::string(kConfigs) + "/scenarios/gpt3-175b-a100.yaml", "--gpus", "8", "-q"},
                                out, err);
  EXPECT_EQ(rc, cli::kExitInfeasible);  // not a usage error: the answer is "none fits"
  EXPECT_NE(err.str().find("no plan fits"), std::string::npos) << err.str();
  // The counts with thousands separators, as the table prints them.
  EXPECT_NE(err.str().find("(113,442 candidates: 0 do not divide the model, 113,442 overflow memory"),
            std::string::npos)
      << err.str();
}

TEST(Search, WhyTheBestBeatsTheNext) {
  SearchCandidate a, b;
  a.knobs.pp = 4;
  b.knobs.pp = 8;
  a.estimate.time.forward = b.estimate.time.forward = 10;
  a.estimate.time.pp_bubble = 1.5;
  b.estimate.time.pp_bubble = 3.5;
  a.estimate.time.dp_comm = 0.5;
  b.estimate.time.dp_comm = 0.25;
  EXPECT_EQ(WhyBetter(a, b), "smaller bubble (pp_bubble 1.5 s vs 3.5 s): pp 8 -> 4");
  // Equal in every part, time and memory: equivalent plans, said so.
  SearchCandidate c = a, e = a;
  std::snprintf(c.knobs.group_order.data(), c.knobs.group_order.size(), "%s", "tp,dp,ep,pp,cp");
  std::snprintf(e.knobs.group_order.data(), e.knobs.group_order.size(), "%s", "tp,pp,dp,ep,cp");
  EXPECT_EQ(WhyBetter(c, e),
            "nothing: the same iteration time and memory per device (an equivalent plan, ranked by the order "
            "of the search); group_order tp,pp,dp,ep,cp -> tp,dp,ep,pp,cp");
}

// An exact tie of the objective goes to the plan with less memory per
// device. Llama 3.1 8B at 131,072 tokens on 64 H100 (tp 2, cp 8, dp 4): ZeRO-1
// and ZeRO-2 take the same time, their gradient traffic hidden alike, and
// ZeRO-2 keeps 1/dp of the 16 GB of bf16 gradients: 50.75 GB against 66.31
// (the enumeration order had put ZeRO-1 first, "no breakdown item larger").
TEST(Search, AnExactTieGoesToThePlanWithLessMemory) {
  const Scenario s = LoadScenario("llama3-8b-128k-h100");
  SearchOptions o;
  o.top = 3;
  o.threads = 1;
  o.space.offload = false;
  o.space.all_group_orders = false;
  const SearchResult r = engine::Search(s, o);
  ASSERT_GE(r.top.size(), 2u);
  const SearchCandidate& a = r.top[0];
  const SearchCandidate& b = r.top[1];
  ASSERT_EQ(a.score, b.score);  // the tie this test is about
  EXPECT_EQ(a.knobs.zero, 2);
  EXPECT_EQ(b.knobs.zero, 1);
  EXPECT_LT(a.estimate.memory.total(), b.estimate.memory.total());
  EXPECT_EQ(WhyBetter(a, b),
            "the same iteration time with less memory per device (50.75 GB vs 66.31 GB); zero 1 -> 2");
  for (size_t i = 1; i < r.top.size(); ++i) {
    if (r.top[i].score == r.top[i - 1].score) {
      EXPECT_LE(r.top[i - 1].estimate.memory.total(), r.top[i].estimate.memory.total()) << i;
    }
  }
}

// `search --format csv` writes a header and a row per plan. It had written
// one empty line: the rows were read from ToJson(r)["top"] in a range-for,
// a reference into a document destroyed before the loop ran.
TEST(Search, CsvHasAHeaderAndARowPerPlan) {
  std::ostringstream out, err;
  ASSERT_EQ(cli::RunSearch({std::string(kConfigs) + "/scenarios/llama3-70b-h100.yaml", "--set", "system.nodes=16",
                            "--top", "2", "--threads", "1", "--default-order", "--no-offload", "-q", "--format",
                            "csv"},
                           out, err),
            cli::kExitOk)
      << err.str();
  std::istringstream lines(out.str());
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 3u) << out.str();
  EXPECT_EQ(rows[0].rfind("rank,", 0), 0u) << rows[0];
  EXPECT_NE(rows[0].find(",plan.tp,"), std::string::npos) << rows[0];
  EXPECT_NE(rows[0].find(",plan.schedule,"), std::string::npos) << rows[0];
  EXPECT_EQ(rows[1].rfind("1,", 0), 0u) << rows[1];
  EXPECT_EQ(rows[2].rfind("2,", 0), 0u) << rows[2];
}

TEST(Search, CliUsageErrors) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunSearch({"gpt3-175b-a100", "--objective", "tme"}, out, err), cli::kExitUsage);
  EXPECT_NE(err.str().find("did you mean 'time'"), std::string::npos) << err.str();
  EXPECT_EQ(cli::RunSearch({"gpt3-175b-a100", "--gpus", "9-3"}, out, err), cli::kExitUsage);
  EXPECT_EQ(cli::RunSearch({"--help"}, out, err), cli::kExitOk);
  EXPECT_NE(out.str().find("Examples:"), std::string::npos);
}

// The benchmark of issue 6: Megatron 1T on 4096 A100-80GB, global batch the
// largest multiple of dp not above 3072. The wall time is reported by
// `orrery search` (README); here the accounting and the answer's validity.
TEST(Search, MegatronOneTrillionOn4096A100) {
  const Scenario s = LoadScenario(kConfigs + "/sweeps/megatron-1t-4096-a100.yaml");
  SearchOptions o;
  o.top = 3;
  o.threads = 2;
  o.space.round_batch = true;
  const SearchResult r = Search(s, o);
  ASSERT_EQ(r.top.size(), 3u);
  const SearchStats& st = r.stats;
  EXPECT_EQ(st.candidates, st.pruned_divisibility + st.pruned_schedule + st.pruned_memory + st.pruned_time + st.evaluated);
  EXPECT_GT(st.candidates, 10'000'000u);
  EXPECT_LT(st.evaluated, st.candidates / 10);  // the bounds do the work
  for (const auto& c : r.top) {
    EXPECT_TRUE(c.estimate.feasible());
    EXPECT_EQ(c.knobs.global_batch % c.knobs.dp, 0);
    EXPECT_LE(c.knobs.global_batch, 3072);
    EXPECT_GT(c.knobs.global_batch, 3072 - c.knobs.dp);
  }
}

// Issue 19: the blocks are costed best bound first and committed in that
// order, so what is evaluated and pruned is a fixed prefix of the space:
// the counts are the same for any thread count and on every run (before,
// two threads gave 3,374,526 to 3,375,534 evaluated on Megatron 1T).
TEST(Search, CountsAreTheSameForAnyThreadCountAndRun) {
  const Scenario s = LoadScenario("gpt3-175b-a100");  // 64 A100, every group order
  SearchOptions o;
  o.top = 5;
  o.threads = 1;
  const SearchResult one = Search(s, o);
  const SearchStats& a = one.stats;
  EXPECT_GT(a.pruned_time, 0u);
  EXPECT_EQ(a.candidates, a.pruned_divisibility + a.pruned_schedule + a.pruned_memory + a.pruned_time + a.evaluated);
  EXPECT_EQ(a.evaluated, a.feasible + a.out_of_memory + a.refused);
  for (int threads : {2, 3, 2, 4}) {
    SCOPED_TRACE(threads);
    o.threads = threads;
    const SearchResult r = Search(s, o);
    const SearchStats& b = r.stats;
    EXPECT_EQ(b.candidates, a.candidates);
    EXPECT_EQ(b.pruned_divisibility, a.pruned_divisibility);
    EXPECT_EQ(b.pruned_schedule, a.pruned_schedule);
    EXPECT_EQ(b.pruned_memory, a.pruned_memory);
    EXPECT_EQ(b.pruned_time, a.pruned_time);
    EXPECT_EQ(b.evaluated, a.evaluated);
    EXPECT_EQ(b.probes, a.probes);
    EXPECT_EQ(b.feasible, a.feasible);
    EXPECT_EQ(b.out_of_memory, a.out_of_memory);
    EXPECT_EQ(b.refused, a.refused);
    EXPECT_EQ(b.min_total_bytes, a.min_total_bytes);
    ExpectSameTop(one, r);
  }
}

// Prepare once, run many: Run() against a prepared workload gives the same
// doubles as Run() alone, for every flag a search varies within a block; a
// workload prepared for another micro-batch is not used.
TEST(Search, PreparedRunIsBitIdenticalToRun) {
  const Scenario s = LoadScenario("gpt3-175b-1024-a100");
  const TrainingEstimator est(s.model, s.system);
  parallelism::TrainingPlan p = s.training;
  const PreparedWorkload prepared = est.Prepare(p, s.workload);
  ASSERT_TRUE(prepared.Matches(p, s.workload));
  int compared = 0;
  for (int rec = 0; rec < 3; ++rec) {
    for (int zero = 0; zero < 4; ++zero) {
      for (const char* order : {"tp,cp,ep,dp,pp", "tp,pp,dp,cp,ep", "dp,tp,pp,cp,ep"}) {
        for (bool overlap : {false, true}) {
          p.recompute = static_cast<parallelism::Recompute>(rec);
          p.zero = zero;
          p.group_order = order;
          p.dp_overlap = overlap;
          p.tp_comm_overlap = !overlap;
          p.offload_optimizer = zero == 2;
          const TrainingEstimate a = est.Run(p, s.workload);
          const TrainingEstimate b = est.Run(p, s.workload, prepared);
          EXPECT_EQ(a.infeasible, b.infeasible);
          EXPECT_EQ(a.iteration_s, b.iteration_s) << rec << " " << zero << " " << order;
          EXPECT_EQ(a.time.recompute, b.time.recompute);
          EXPECT_EQ(a.time.dp_comm, b.time.dp_comm);
          EXPECT_EQ(a.memory.total(), b.memory.total());
          EXPECT_EQ(a.hardware_flops, b.hardware_flops);
          EXPECT_EQ(a.mfu, b.mfu);
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 3 * 4 * 3 * 2);
  // Another micro-batch: the prepared work does not match and is redone.
  p.micro_batch = 2;
  EXPECT_FALSE(prepared.Matches(p, s.workload));
  EXPECT_EQ(est.Run(p, s.workload, prepared).iteration_s, est.Run(p, s.workload).iteration_s);
  EXPECT_NE(est.Run(p, s.workload).iteration_s, est.Run(s.training, s.workload).iteration_s);
  // Another loss kernel (the head's loss is priced in the prepared work): no
  // match either, and Run() redoes it rather than reusing the stale head.
  parallelism::TrainingPlan fused = s.training;
  fused.loss_kernel = parallelism::LossKernel::kFusedBf16;
  EXPECT_FALSE(prepared.Matches(fused, s.workload));
  EXPECT_EQ(est.Run(fused, s.workload, prepared).iteration_s, est.Run(fused, s.workload).iteration_s);
  EXPECT_LT(est.Run(fused, s.workload).iteration_s, est.Run(s.training, s.workload).iteration_s);
}

// RunIfFits, the search's call for a block's plans, learns memory before
// any time term. A plan that fits gets Run()'s doubles; one that does not
// comes back kOutOfMemory with Run()'s memory breakdown and no time at all
// (iteration 0 s: the time terms were never computed). GPT-3 175B on 1024
// A100-80GB: pp 1 holds 175e9 / 8 = 21.9e9 parameters per device, 16 bytes
// each with mixed-precision Adam and no ZeRO = 350 GB, far over 80 GB; pp 16
// with full recompute fits; the grid below must give both kinds.
TEST(Search, RunIfFitsMatchesRunAndStopsAtMemory) {
  const Scenario s = LoadScenario("gpt3-175b-1024-a100");
  const TrainingEstimator est(s.model, s.system);
  parallelism::TrainingPlan p = s.training;
  p.dp = 0;  // devices / (tp x pp)
  p.interleave = 1;
  int fits = 0, out_of_memory = 0;
  for (int64_t pp : {1, 4, 8, 16}) {
    for (int64_t first : {0, 10}) {
      for (int64_t mb : {1, 2, 4}) {
        p.pp = pp;
        p.first_stage_layers = pp > 1 ? first : 0;
        p.micro_batch = mb;
        const PreparedWorkload prepared = est.Prepare(p, s.workload);
        for (int rec = 0; rec < 3; ++rec) {
          for (int zero = 0; zero < 2; ++zero) {
            p.recompute = static_cast<parallelism::Recompute>(rec);
            p.zero = zero;
            const TrainingEstimate a = est.Run(p, s.workload, prepared);
            const TrainingEstimate b = est.RunIfFits(p, s.workload, prepared);
            const std::string where = "pp " + std::to_string(pp) + " first " + std::to_string(first) +
                                      " mb " + std::to_string(mb) + " rec " + std::to_string(rec) +
                                      " zero " + std::to_string(zero);
            ASSERT_EQ(a.infeasible, b.infeasible) << where;
            EXPECT_EQ(a.memory.weights, b.memory.weights) << where;
            EXPECT_EQ(a.memory.gradients, b.memory.gradients) << where;
            EXPECT_EQ(a.memory.optimizer, b.memory.optimizer) << where;
            EXPECT_EQ(a.memory.activations, b.memory.activations) << where;
            EXPECT_EQ(a.memory.temporary, b.memory.temporary) << where;
            if (a.infeasible == Infeasible::kOutOfMemory) {
              ++out_of_memory;
              EXPECT_GT(a.iteration_s, 0) << where;  // Run() still times it
              EXPECT_EQ(b.iteration_s, 0) << where;
              EXPECT_EQ(b.time.total, 0) << where;
            } else if (a.infeasible == Infeasible::kNone) {
              ++fits;
              EXPECT_EQ(a.iteration_s, b.iteration_s) << where;
              EXPECT_EQ(a.time.dp_comm, b.time.dp_comm) << where;
              EXPECT_EQ(a.mfu, b.mfu) << where;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(fits, 0);
  EXPECT_GT(out_of_memory, 0);
}

// The prepared workload also remembers the context-parallel scheme choice
// (ChooseCpScheme) per group placement, in 4 slots: five group orders, each
// run twice, with the scheme chosen (auto) or fixed, must give the doubles of
// a plain Run(), on hits and on slots reused for another placement.
TEST(Search, PreparedRunWithContextParallelIsBitIdenticalToRun) {
  const Scenario s = LoadScenario("gpt3-175b-1024-a100");
  const TrainingEstimator est(s.model, s.system);
  parallelism::TrainingPlan p = s.training;
  p.cp = 2;
  p.dp = 8;  // 8 x 8 x 2 x 8 = 1024
  const PreparedWorkload prepared = est.Prepare(p, s.workload);
  ASSERT_TRUE(prepared.Matches(p, s.workload));
  int compared = 0;
  std::set<double> cp_times;  // the placements must matter, or the slots are not tested
  for (auto scheme : {parallelism::CpScheme::kAuto, parallelism::CpScheme::kRing, parallelism::CpScheme::kAllGather}) {
    for (int pass = 0; pass < 2; ++pass) {
      for (const char* order : {"tp,cp,ep,dp,pp", "tp,pp,dp,cp,ep", "dp,tp,pp,cp,ep", "tp,dp,cp,ep,pp",
                                "cp,tp,ep,dp,pp"}) {
        p.cp_scheme = scheme;
        p.group_order = order;
        const TrainingEstimate a = est.Run(p, s.workload);
        const TrainingEstimate b = est.Run(p, s.workload, prepared);
        ASSERT_EQ(a.infeasible, Infeasible::kNone) << order;
        EXPECT_GT(a.time.cp_comm, 0) << order;
        EXPECT_EQ(a.cp_scheme, b.cp_scheme) << order;
        EXPECT_EQ(a.time.cp_comm, b.time.cp_comm) << order;
        EXPECT_EQ(a.iteration_s, b.iteration_s) << order;
        cp_times.insert(a.time.cp_comm);
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 3 * 2 * 5);
  EXPECT_GE(cp_times.size(), 4u);
}

}  // namespace
}  // namespace orrery::engine

namespace orrery::engine {
namespace {

// Energy per token as search ranks it (issue 17): 8 devices of 700 W TDP and
// 70 W idle power, PUE 1.1, an iteration of 10 s of which 2 s are pipeline
// bubble, 1000 tokens. Nothing fails (device_mtbf 0 = never):
//   8 x 1.1 x (700 x 8 + 70 x 2) = 8.8 x 5740 = 50,512 J -> 50.512 J/token
// against 8.8 x 700 x 10 = 61,600 J with the devices at TDP throughout.
// With a job failure every 10 h (M = 36,000 s), a 10 min restart (R = 600 s)
// and an instant checkpoint (no store limits), goodput is e^(-R/M) (Daly's
// T(tau) = M e^(R/M) (e^(tau/M) - 1) with delta = 0, tau -> 0): per second
// of work the run takes e^(1/60) = 1.016806 s, of which F x R = e^(1/60) x
// 600 / 36,000 = 0.016947 s restarting (idle) and 0.999859 s busy:
//   8.8 x (5740 x 0.999859 + 70 x 10 x 0.016947) = 8.8 x 5751.05 = 50,609 J.
TEST(Search, EnergyObjectiveCountsIdlePowerInBubblesAndRestarts) {
  hardware::SystemSpec sys;
  sys.devices_per_node = 8;
  sys.nodes = 1;
  sys.device.tdp = 700;
  sys.device.idle_power = 70;
  sys.pue = 1.1;
  sys.reliability.device_mtbf = 0;
  sys.storage.node_bandwidth = 0;
  parallelism::TrainingPlan plan;
  TrainingEstimate e;
  e.iteration_s = 10;
  e.time.pp_bubble = 2;
  const ObjectiveWeights w = WeightsOf(Objective::kEnergy, sys, plan, 70e9);
  EXPECT_NEAR(WeightedScore(w, e, 1000), 50.512, 1e-9);
  // Without idle power (idle = TDP) it is the TDP-only figure, 61.6 J/token.
  sys.device.idle_power = 700;
  EXPECT_NEAR(WeightedScore(WeightsOf(Objective::kEnergy, sys, plan, 70e9), e, 1000), 61.6, 1e-9);
  sys.device.idle_power = 70;

  sys.reliability.job_mtbf = 36000;
  sys.reliability.restart_time = 600;
  const ObjectiveWeights f = WeightsOf(Objective::kEnergy, sys, plan, 70e9);
  const double wall = std::exp(1.0 / 60), idle = wall * 600 / 36000, busy = wall - idle;
  EXPECT_NEAR(busy, 0.999859, 1e-6);
  EXPECT_NEAR(idle, 0.016947, 1e-6);
  EXPECT_NEAR(WeightedScore(f, e, 1000), 8.8 * (5740 * busy + 70 * 10 * idle) / 1000, 1e-6);
  EXPECT_NEAR(WeightedScore(f, e, 1000), 50.609, 1e-3);
  // Cost pays the rent over the whole wall time: 8 x 3.6 USD/h (0.001 USD/s)
  // x 10 s x e^(1/60) / 1000 tokens.
  sys.price_per_device_hour = 0.001;
  const ObjectiveWeights c = WeightsOf(Objective::kCost, sys, plan, 70e9);
  // (Goodput is e^(-R/M) only in the limit tau -> 0; the optimiser's
  // smallest interval, 1 ms, leaves a relative 1e-3 / (2M) = 1.4e-8.)
  EXPECT_NEAR(WeightedScore(c, e, 1000), 8 * 0.001 * 10 * wall / 1000, 1e-7 * 8.13e-5);
}

// The time bound, turned into an energy bound with idle bubbles, still never
// prunes a plan that would rank.
TEST(Search, EnergyBoundNeverChangesTheAnswer) {
  const Scenario s = LoadScenario("gpt3-175b-a100");
  const auto [pruned, full] = SearchWithAndWithoutTheTimeBound(s, Objective::kEnergy);
  ASSERT_EQ(full.top.size(), 8u);
  EXPECT_GT(pruned.stats.pruned_time, 0u);
  ExpectSameTop(pruned, full);
}

// The three best plans on one thread, the default group order, no CP: the
// space the scenario-field tests below need.
SearchOptions SmallSearch() {
  SearchOptions o;
  o.top = 3;
  o.threads = 1;
  o.space.all_group_orders = false;
  o.space.context_parallel = false;
  return o;
}

// A scenario's fixed activation offload or end-stage layers hold for the pp
// they were written for; other pp are left out whole (pruned with the
// divisibility), not priced as if a stage could offload all its layers or
// drop some (parallelism::OffloadLayersInvalid, StageLayoutInvalid). The
// shipped Llama 3 70B scenario (80 layers) offloading 40: only pp 1 runs;
// before, pp 2 won with 0 B of activations and no copy exposed.
TEST(Search, AFixedOffloadOrLayoutLeavesOutThePpItDoesNotFit) {
  Scenario s = LoadScenario("llama3-70b-h100");
  ASSERT_EQ(s.model.layers, 80);
  s.training.offload_activation_layers = 40;
  const SearchOptions o = SmallSearch();
  const SearchResult r = Search(s, o);
  ASSERT_FALSE(r.top.empty());
  for (const SearchCandidate& c : r.top) {
    EXPECT_EQ(c.knobs.pp, 1);
    EXPECT_GT(c.estimate.memory.activations, 0.0);
  }
  s.training.offload_activation_layers = 0;
  s.training.first_stage_layers = 9;
  s.training.last_stage_layers = 9;
  const SearchResult laid = Search(s, o);
  ASSERT_FALSE(laid.top.empty());
  for (const SearchCandidate& c : laid.top) EXPECT_NE(c.knobs.pp, 2) << DescribeKnobs(c.knobs);
}

// A scenario that asks for a schedule whose chunks are fixed (ZB-H1 here;
// GPipe and the V-shapes alike) is searched on that schedule: interleave
// stays 1 and every finalist runs ZB-H1. Before, the search tried
// interleave 2..20 on the shipped Llama 3 70B scenario and returned
// interleave 5, which ApplyKnobs had switched to interleaved 1F1B, a
// schedule nobody asked for.
TEST(Search, KeepsAScheduleWhoseChunksAreFixed) {
  Scenario s = LoadScenario("llama3-70b-h100");
  s.training.schedule = parallelism::Schedule::kZeroBubbleH1;
  s.training.interleave = 1;
  const SearchOptions o = SmallSearch();
  const SearchResult r = Search(s, o);
  ASSERT_FALSE(r.top.empty());
  for (const SearchCandidate& c : r.top) {
    EXPECT_EQ(c.knobs.interleave, 1) << DescribeKnobs(c.knobs);
    Scenario one = s;
    ApplyKnobs(c.knobs, one.training);
    EXPECT_EQ(one.training.schedule, parallelism::Schedule::kZeroBubbleH1);
  }
  // 1F1B still moves to interleaved and back with the knob.
  parallelism::TrainingPlan p;
  PlanKnobs k;
  k.interleave = 4;
  ApplyKnobs(k, p);
  EXPECT_EQ(p.schedule, parallelism::Schedule::kInterleaved);
  k.interleave = 1;
  ApplyKnobs(k, p);
  EXPECT_EQ(p.schedule, parallelism::Schedule::kOneFOneB);
}

}  // namespace
}  // namespace orrery::engine
