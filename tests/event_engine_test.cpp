// The event-driven engine: the discrete-event core, the pipeline schedules
// against hand-worked timelines, the estimator against the closed form, and
// the Chrome trace.

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "core/base/event_queue.h"
#include "core/estimate/chrome_trace.h"
#include "core/estimate/event_estimator.h"
#include "parallelism/step_graph.h"
#include "tests/support/presets.h"

namespace orrery {
namespace {

using parallelism::ChunkWork;
using parallelism::PipelineSchedule;
using parallelism::StepGraph;
using parallelism::StepResult;
using parallelism::StepSpec;

// --- the discrete-event core ------------------------------------------------------

TEST(EventQueue, EqualTimesComeOutFirstInFirstOut) {
  base::EventQueue q;
  q.Push(2.0, 7);
  q.Push(1.0, 3);
  q.Push(2.0, 5);
  q.Push(1.0, 4);
  EXPECT_EQ(q.Pop().payload, 3);
  EXPECT_EQ(q.Pop().payload, 4);
  EXPECT_EQ(q.Pop().payload, 7);
  EXPECT_EQ(q.Pop().payload, 5);
  EXPECT_TRUE(q.empty());
}

// Two streams. A(2) then B(3) on stream 0; C(1) on stream 1 needs A; D(1) on
// stream 1 needs B. By hand: A 0-2, B 2-5, C 2-3, D 5-6.
TEST(TaskGraph, StreamsRunInProgramOrderAfterTheirDependencies) {
  base::TaskGraph g;
  const int32_t s0 = g.AddResource(), s1 = g.AddResource();
  const int32_t a = g.AddTask(s0, 2), b = g.AddTask(s0, 3), c = g.AddTask(s1, 1), d = g.AddTask(s1, 1);
  g.AddDependency(a, c);
  g.AddDependency(b, d);
  const base::Timeline t = base::Simulator().Run(g);
  ASSERT_TRUE(t.complete);
  EXPECT_DOUBLE_EQ(t.start[static_cast<size_t>(b)], 2);
  EXPECT_DOUBLE_EQ(t.start[static_cast<size_t>(c)], 2);
  EXPECT_DOUBLE_EQ(t.finish[static_cast<size_t>(d)], 6);
  EXPECT_DOUBLE_EQ(t.makespan, 6);
  EXPECT_EQ(t.events, 4);
}

// A program-order stream does not run a later ready task before an earlier
// blocked one; a priority resource runs whichever ready task ranks first.
TEST(TaskGraph, ProgramOrderBlocksPriorityPicks) {
  for (const auto disc : {base::Discipline::kProgramOrder, base::Discipline::kPriority}) {
    base::TaskGraph g;
    const int32_t link = g.AddResource(), s = g.AddResource(disc);
    const int32_t wait = g.AddTask(link, 4);         // 0-4
    const int32_t x = g.AddTask(s, 1, /*priority=*/2);  // needs `wait`
    const int32_t y = g.AddTask(s, 1, /*priority=*/1);  // ready at 0
    g.AddDependency(wait, x);
    const base::Timeline t = base::Simulator().Run(g);
    ASSERT_TRUE(t.complete);
    if (disc == base::Discipline::kProgramOrder) {
      EXPECT_DOUBLE_EQ(t.start[static_cast<size_t>(x)], 4);
      EXPECT_DOUBLE_EQ(t.start[static_cast<size_t>(y)], 5);
    } else {
      EXPECT_DOUBLE_EQ(t.start[static_cast<size_t>(y)], 0);
      EXPECT_DOUBLE_EQ(t.start[static_cast<size_t>(x)], 4);
    }
  }
}

TEST(TaskGraph, PriorityTiesGoToTheLowerTaskId) {
  base::TaskGraph g;
  const int32_t r = g.AddResource(base::Discipline::kPriority);
  const int32_t a = g.AddTask(r, 1, 5), b = g.AddTask(r, 1, 5), c = g.AddTask(r, 1, 0);
  const base::Timeline t = base::Simulator().Run(g);
  EXPECT_DOUBLE_EQ(t.start[static_cast<size_t>(c)], 0);
  EXPECT_DOUBLE_EQ(t.start[static_cast<size_t>(a)], 1);
  EXPECT_DOUBLE_EQ(t.start[static_cast<size_t>(b)], 2);
}

TEST(TaskGraph, ADelayWithoutResourceRunsBesideEverything) {
  base::TaskGraph g;
  const int32_t r = g.AddResource();
  const int32_t a = g.AddTask(r, 1), wire = g.AddTask(base::kNoResource, 0.5), b = g.AddTask(r, 1);
  g.AddDependency(a, wire);
  g.AddDependency(wire, b);
  const base::Timeline t = base::Simulator().Run(g);
  EXPECT_DOUBLE_EQ(t.start[static_cast<size_t>(b)], 1.5);
}

// Stream 0 runs A then B; stream 1 runs C then D; A needs D and C needs B:
// neither stream can start. The simulator reports it instead of hanging.
TEST(TaskGraph, ACycleIsReportedAsIncomplete) {
  base::TaskGraph g;
  const int32_t s0 = g.AddResource(), s1 = g.AddResource();
  const int32_t a = g.AddTask(s0, 1), b = g.AddTask(s0, 1), c = g.AddTask(s1, 1), d = g.AddTask(s1, 1);
  g.AddDependency(d, a);
  g.AddDependency(b, c);
  const base::Timeline t = base::Simulator().Run(g);
  EXPECT_FALSE(t.complete);
  EXPECT_GE(t.stuck, 0);
  EXPECT_EQ(t.events, 0);
}

// --- pipeline schedules, hand-worked ------------------------------------------------

// p stages, m microbatches, v chunks; one chunk's F, B (whole backward) and
// the W part of B, in units of time.
StepSpec Uniform(PipelineSchedule s, int64_t p, int64_t m, int64_t v, double f, double b, double w) {
  StepSpec spec;
  spec.stages = p;
  spec.microbatches = m;
  spec.chunks = v;
  spec.schedule = s;
  ChunkWork cw;
  cw.forward = f;
  cw.backward = b;
  cw.backward_weight = w;
  cw.activation_bytes = 1;
  spec.work.assign(static_cast<size_t>(p * v), cw);
  return spec;
}

StepResult Simulate(const StepSpec& spec, StepGraph* keep = nullptr) {
  StepGraph g;
  EXPECT_EQ(parallelism::BuildStepGraph(spec, g), parallelism::StepError::kNone);
  const base::Timeline t = base::Simulator().Run(g.graph);
  EXPECT_TRUE(t.complete);
  StepResult r = parallelism::Analyze(g, t);
  if (keep != nullptr) *keep = std::move(g);
  return r;
}

// p = 4, m = 8, F = 1, B = 2 per stage. GPipe and 1F1B both take
// (m + p - 1)(F + B) = 33; each stage is busy m (F + B) = 24 and idle
// (p - 1)(F + B) = 9: bubble fraction (p - 1)/(m + p - 1) = 3/11
// (Narayanan et al. 2021, Sec. 2.2.1). GPipe holds all 8 microbatches on
// every stage; 1F1B holds p - s on stage s.
TEST(Schedules, GpipeAnd1F1BTake33Units) {
  for (const auto s : {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB}) {
    const StepResult r = Simulate(Uniform(s, 4, 8, 1, 1, 2, 0));
    EXPECT_DOUBLE_EQ(r.iteration, 33);
    EXPECT_NEAR(r.bubble_fraction, 3.0 / 11.0, 1e-12);
    for (int d = 0; d < 4; ++d) {
      EXPECT_DOUBLE_EQ(r.stages[static_cast<size_t>(d)].busy, 24);
      EXPECT_DOUBLE_EQ(r.stages[static_cast<size_t>(d)].idle, 9);
      EXPECT_DOUBLE_EQ(r.stages[static_cast<size_t>(d)].wait_bubble, 9);
      EXPECT_EQ(r.stages[static_cast<size_t>(d)].peak_in_flight,
                s == PipelineSchedule::kGpipe ? 8 : 4 - d);
    }
    // F + B per microbatch: 2 tasks per stage per microbatch.
    EXPECT_EQ(r.tasks, 4 * 8 * 2);
  }
}

// Interleaved, v = 2: each chunk F = 0.5, B = 1. Iteration
// m (F + B) + (p - 1)(F + B)/v = 24 + 4.5 = 28.5 (Narayanan et al. 2021,
// Sec. 2.2.2). Stage 0 warms up with 2(p - 1) + (v - 1) p = 10 chunk
// forwards and starts the 11th before its first backward: 11 chunk-
// microbatches = 5.5 stage microbatches = p (1 + (p - 1)/(p v)), the
// factor of Korthikanti et al. 2022, Sec. 4.2.3.
TEST(Schedules, InterleavedTakes28AndAHalfUnits) {
  const StepResult r = Simulate(Uniform(PipelineSchedule::kInterleaved, 4, 8, 2, 0.5, 1, 0));
  EXPECT_DOUBLE_EQ(r.iteration, 28.5);
  EXPECT_NEAR(r.bubble_fraction, 4.5 / 28.5, 1e-12);
  EXPECT_EQ(r.stages[0].peak_in_flight, 11);
  // v = 3: 24 + 3 = 27.
  EXPECT_DOUBLE_EQ(Simulate(Uniform(PipelineSchedule::kInterleaved, 4, 8, 3, 1.0 / 3, 2.0 / 3, 0)).iteration, 27);
}

// ZB-H1 with F = B = W = 1 (Qi et al. 2024, Sec. 3.1): bubble
// (p - 1)(F + B - W) = 3 against 1F1B's (p - 1)(F + B + W) = 9, so the
// iteration is 3m + 3 = 27; every stage holds p = 4 microbatches.
TEST(Schedules, ZeroBubbleH1HasAThirdOfTheBubble) {
  const StepResult zb = Simulate(Uniform(PipelineSchedule::kZeroBubbleH1, 4, 8, 1, 1, 2, 1));
  EXPECT_DOUBLE_EQ(zb.iteration, 27);
  for (int d = 0; d < 4; ++d) {
    EXPECT_DOUBLE_EQ(zb.stages[static_cast<size_t>(d)].idle, 3);
    EXPECT_EQ(zb.stages[static_cast<size_t>(d)].peak_in_flight, 4);
  }
  const StepResult one = Simulate(Uniform(PipelineSchedule::kOneFOneB, 4, 8, 1, 1, 2, 1));
  EXPECT_DOUBLE_EQ(one.iteration, 33);
}

// V-shape, one microbatch, unit F, B and W per chunk: the forward runs down
// the V through 2p = 8 chunks, the backward back up through 8, and device 0
// ends with the W of the first chunk: 4p + 1 = 17. Every other W fits in the
// idle time between.
TEST(Schedules, VShapeOneMicrobatchIsTheVPlusOneW) {
  for (const auto s : {PipelineSchedule::kVMin, PipelineSchedule::kVHalf, PipelineSchedule::kVZeroBubble}) {
    const StepResult r = Simulate(Uniform(s, 4, 1, 2, 1, 2, 1));
    EXPECT_DOUBLE_EQ(r.iteration, 17) << parallelism::PipelineScheduleName(s);
  }
}

// p = 4, m = 8, unit F, B, W per chunk (a stage does 6 units per
// microbatch). The memory limits are the paper's (Qi et al. 2024, Table 1):
// V-Min (p+4)/3 = 2, V-Half (p+2)/2 = 3, V-ZB p = 4 stage microbatches, i.e.
// 4, 6 and 8 chunk-microbatches. More memory buys less bubble; V-ZB beats
// ZB-H1 (6m + (p-1)(2+2-2) = 54) at the same memory, and V-Half beats 1F1B
// ((m+p-1) 6 = 66) with less.
TEST(Schedules, VShapeTradesMemoryForBubble) {
  double prev = 1e300;
  for (const auto s : {PipelineSchedule::kVMin, PipelineSchedule::kVHalf, PipelineSchedule::kVZeroBubble}) {
    const StepResult r = Simulate(Uniform(s, 4, 8, 2, 1, 2, 1));
    const int64_t cap = parallelism::VShapeCap(s, 4);
    EXPECT_EQ(cap, s == PipelineSchedule::kVMin ? 4 : s == PipelineSchedule::kVHalf ? 6 : 8);
    for (const auto& st : r.stages) EXPECT_LE(st.peak_in_flight, cap);
    EXPECT_EQ(r.stages[0].peak_in_flight, cap);
    EXPECT_GE(r.iteration, 48);  // never below the work of one stage
    EXPECT_LT(r.iteration, prev);
    prev = r.iteration;
    if (s == PipelineSchedule::kVHalf) {
      EXPECT_LT(r.iteration, 66);
    }
    if (s == PipelineSchedule::kVZeroBubble) {
      EXPECT_LT(r.iteration, 54);
    }
  }
  EXPECT_DOUBLE_EQ(Simulate(Uniform(PipelineSchedule::kZeroBubbleH1, 4, 8, 1, 2, 4, 2)).iteration, 54);
}

TEST(Schedules, InterleavedNeedsMultipleOfStagesAndVNeedsTwoChunks) {
  StepGraph g;
  EXPECT_EQ(parallelism::BuildStepGraph(Uniform(PipelineSchedule::kInterleaved, 4, 6, 2, 1, 2, 0), g),
            parallelism::StepError::kInterleaveMultiple);
  EXPECT_EQ(parallelism::BuildStepGraph(Uniform(PipelineSchedule::kVHalf, 4, 8, 1, 1, 2, 1), g),
            parallelism::StepError::kVShapeChunks);
}

// Point-to-point: p = 2, m = 1, F = 1, B = 2, one transfer d = 0.25 each way.
// F0 (1), send (d), F1 (1), B1 (2), send (d), B0 (2): 6 + 2d = 6.5. Each
// stage is busy 3 and waits 3.5: 2d for the two sends, 3 for the other
// stage's passes (stage 1 before its forward and after its backward).
TEST(Schedules, PointToPointSendsAreOnThePath) {
  StepSpec spec = Uniform(PipelineSchedule::kOneFOneB, 2, 1, 1, 1, 2, 0);
  spec.p2p = 0.25;
  const StepResult r = Simulate(spec);
  EXPECT_DOUBLE_EQ(r.iteration, 6.5);
  for (int d = 0; d < 2; ++d) {
    EXPECT_DOUBLE_EQ(r.stages[static_cast<size_t>(d)].busy, 3);
    EXPECT_DOUBLE_EQ(r.stages[static_cast<size_t>(d)].wait_p2p, 0.5);
    EXPECT_DOUBLE_EQ(r.stages[static_cast<size_t>(d)].wait_bubble, 3);
  }
}

// A straggler: stage 2 of 4 runs 1.5x slower (F = 1.5, B = 3 against 1 and
// 2). By hand: stage 2 starts at 2 (F of stages 0, 1), runs F0 and F1 to 5,
// waits for stage 3's F0 + B0 (3.5 to 6.5): 1.5 idle; from then on the other
// stages keep it fed, so it is busy 8 x 4.5 = 36 and ends at 39.5; B7 then
// crosses stages 1 and 0 (2 + 2): 43.5, against 33 without the straggler.
TEST(Schedules, AStragglerPacesThePipeline) {
  StepSpec spec = Uniform(PipelineSchedule::kOneFOneB, 4, 8, 1, 1, 2, 0);
  spec.slowdown = {1, 1, 1.5, 1};
  const StepResult r = Simulate(spec);
  EXPECT_DOUBLE_EQ(r.stages[2].busy, 36);
  EXPECT_DOUBLE_EQ(r.stages[2].idle, r.iteration - 36);
  EXPECT_DOUBLE_EQ(r.iteration, 43.5);
  EXPECT_EQ(r.critical_stage, 0);
}

// --- the Chrome trace -------------------------------------------------------------

// The 4-stage 1F1B run above (m = 8, F = 1 s, B = 2 s) as a trace: valid JSON
// in the trace-event format, one complete event per pass (4 x 8 x 2 = 64),
// named tracks, and stage 0's compute track in 1F1B order: 3 warm-up
// forwards, then F3 B0 F4 B1 ... B7, with B0 starting at 10 s (F0 through
// the four stages, then B0 back through stages 3, 2, 1: 4 + 3 x 2).
TEST(ChromeTrace, FourStage1F1BIsValidAndInOrder) {
  StepGraph g;
  const StepResult r = Simulate(Uniform(PipelineSchedule::kOneFOneB, 4, 8, 1, 1, 2, 0), &g);
  const base::Timeline t = base::Simulator().Run(g.graph);
  std::ostringstream os;
  engine::WriteChromeTrace(g, t, "1f1b \"test\"", os);
  const auto j = nlohmann::json::parse(os.str());  // throws on invalid JSON
  ASSERT_TRUE(j.contains("traceEvents"));
  EXPECT_EQ(j["otherData"]["title"], "1f1b \"test\"");
  int complete = 0;
  std::vector<std::string> stage0;
  double last_ts = -1;
  std::vector<std::string> threads;
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name"));
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 0)
      threads.push_back(e["args"]["name"]);
    if (e["ph"] != "X") continue;
    ++complete;
    ASSERT_TRUE(e.contains("ts") && e.contains("dur") && e.contains("tid") && e.contains("cat"));
    if (e["pid"] == 0 && e["tid"] == 0) {
      stage0.push_back(e["name"]);
      EXPECT_GE(e["ts"].get<double>(), last_ts);
      last_ts = e["ts"].get<double>() + e["dur"].get<double>();
      if (e["name"] == "B mb0") {
        EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 10e6);
      }
    }
  }
  EXPECT_EQ(complete, 64);
  EXPECT_EQ(complete, r.tasks);
  EXPECT_EQ(threads, (std::vector<std::string>{"compute", "tp", "pp", "dp"}));
  const std::vector<std::string> expect = {
      "F mb0", "F mb1", "F mb2", "F mb3", "B mb0", "F mb4", "B mb1", "F mb5", "B mb2",
      "F mb6", "B mb3", "F mb7", "B mb4", "B mb5", "B mb6", "B mb7"};
  EXPECT_EQ(stage0, expect);
}

// --- the estimator against the closed form -----------------------------------------

using test::LoadScenario;

// With every stage as costly as the closed form's pace-setting stage and no
// overlap to simulate (DP reduction after the backward, TP collectives
// exposed, ZeRO 0-2), the simulated iteration is the closed form's
// m (t_f + t_b) + bubble + p2p + DP + optimizer. Over a generated set of
// plans of three scenarios (tp, pp, interleave, micro-batch, recompute,
// sequence parallelism, ZeRO stage, dp, schedule 1F1B/interleaved, GPipe
// or ZB-H1, m below and above p) the two agree within 0.5 %.
// The generated plans of the test below, each priced by both engines with
// `pp_overlap` for training.pp_comm_overlap; `tolerance` bounds |event /
// closed - 1| and the pipeline's bubble plus transfers.
void CompareOnUniformStages(bool pp_overlap, double tolerance) {
  struct Case {
    const char* scenario;
    std::vector<int64_t> tps, pps;
  };
  const Case cases[] = {
      {"gpt3-175b-a100", {2, 4, 8}, {2, 4, 8}},
      {"gpt3-175b-1024-a100", {4, 8}, {4, 8, 16}},
      {"llama3-70b-h100", {2, 4, 8}, {2, 4, 8}},
  };
  int compared = 0;
  double worst = 0;
  std::string worst_plan;
  uint64_t rng = 12345;  // a fixed linear congruential sequence picks the knobs
  auto next = [&rng](uint64_t n) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((rng >> 33) % n);
  };
  for (const Case& c : cases) {
    const engine::Scenario s = LoadScenario(c.scenario);
    const engine::EventEstimator est(s.model, s.system);
    for (int k = 0; k < 80; ++k) {
      parallelism::TrainingPlan p = s.training;
      p.tp = c.tps[static_cast<size_t>(next(c.tps.size()))];
      p.pp = c.pps[static_cast<size_t>(next(c.pps.size()))];
      p.dp = 0;
      p.interleave = 1 + next(3);
      p.micro_batch = 1 + next(2);
      p.recompute = static_cast<parallelism::Recompute>(next(3));
      p.sequence_parallel = next(2) == 1 && p.tp > 1;
      p.zero = next(3);
      // 1F1B (interleaved when v > 1), GPipe and ZB-H1; a small global
      // batch now and then gives fewer microbatches than stages.
      const parallelism::Schedule kinds[] = {parallelism::Schedule::kOneFOneB, parallelism::Schedule::kGpipe,
                                             parallelism::Schedule::kZeroBubbleH1};
      p.schedule = kinds[static_cast<size_t>(next(3))];
      parallelism::Workload w = s.workload;
      if (next(3) == 0) w.global_batch = std::max<int64_t>(1, w.global_batch / 16);
      p.dp_overlap = false;
      p.tp_comm_overlap = false;
      p.pp_comm_overlap = pp_overlap;
      engine::EventOptions o;
      o.uniform_stages = true;
      const engine::EventEstimate e = est.Run(p, w, o);
      // The closed form refuses what the event engine cannot run.
      if (e.closed_form.infeasible == engine::Infeasible::kInterleaveMicrobatches) {
        EXPECT_FALSE(e.simulated());
      }
      if (!e.simulated()) continue;  // infeasible split
      ++compared;
      const double rel = std::abs(e.estimate.iteration_s / e.closed_form.iteration_s - 1);
      if (rel > worst) {
        worst = rel;
        worst_plan = std::string(c.scenario) + " tp " + std::to_string(p.tp) + " pp " + std::to_string(p.pp) +
                     " v " + std::to_string(p.interleave) + " b " + std::to_string(p.micro_batch) +
                     " zero " + std::to_string(p.zero);
      }
      EXPECT_LT(rel, tolerance) << c.scenario << " tp " << p.tp << " pp " << p.pp << " v " << p.interleave
                            << " event " << e.estimate.iteration_s << " closed " << e.closed_form.iteration_s;
      // The simulated bubble is the closed form's (p - 1)/v of a stage.
      EXPECT_NEAR(e.estimate.time.pp_bubble + e.estimate.time.pp_p2p,
                  e.closed_form.time.pp_bubble + e.closed_form.time.pp_p2p,
                  tolerance * e.closed_form.iteration_s);
    }
  }
  EXPECT_GE(compared, 80);
  std::cout << "compared " << compared << " plans; worst |event/closed - 1| = " << worst << " (" << worst_plan
            << ")\n";
}

TEST(EventEstimator, AgreesWithTheClosedFormOnUniformStages) { CompareOnUniformStages(false, 0.005); }

// Interleaved sends overlapped (training.pp_comm_overlap): the
// closed form exposes the first device's warm-up and flush transfers and the
// fill and drain's (TrainingEstimator, the pipeline section); the event
// engine lets every device's sends run beside its next passes and exposes
// only what a receiver waits for, a little less: within 1 % (0.56 % at
// worst over the 193 plans), inside the 2 % search reports as a
// disagreement between the engines.
TEST(EventEstimator, AgreesWithTheClosedFormOnUniformStagesWithOverlappedSends) {
  CompareOnUniformStages(true, 0.01);
}

// Issue 15: recompute_interval 2 (every 2nd layer recomputed). GPT-3 175B
// on 64 A100 (tp 8, pp 8, 12 layers a stage, interleave 1, DP reduction and
// TP collectives exposed): with uniform stages the event engine and the
// closed form agree within 0.5 % as for every other plan, and both charge
// half of full recompute's recompute time (6 of 12 layers a stage).
TEST(EventEstimator, RecomputeIntervalAgreesWithTheClosedForm) {
  engine::Scenario s = LoadScenario("gpt3-175b-a100");
  s.training.interleave = 1;
  s.training.schedule = parallelism::Schedule::kOneFOneB;
  s.training.dp_overlap = false;
  s.training.tp_comm_overlap = false;
  s.training.recompute = parallelism::Recompute::kFull;
  const engine::EventEstimator est(s.model, s.system);
  engine::EventOptions o;
  o.uniform_stages = true;
  const engine::EventEstimate full = est.Run(s.training, s.workload, o);
  s.training.recompute_interval = 2;
  const engine::EventEstimate half = est.Run(s.training, s.workload, o);
  ASSERT_TRUE(full.simulated());
  ASSERT_TRUE(half.simulated());
  EXPECT_NEAR(half.estimate.iteration_s / half.closed_form.iteration_s, 1.0, 0.005);
  EXPECT_NEAR(half.estimate.time.recompute, half.closed_form.time.recompute,
              0.005 * half.closed_form.time.recompute);
  EXPECT_NEAR(half.closed_form.time.recompute, full.closed_form.time.recompute / 2,
              1e-12 * full.closed_form.time.recompute);
  EXPECT_NEAR(half.estimate.time.recompute, full.estimate.time.recompute / 2,
              0.005 * full.estimate.time.recompute);
  EXPECT_LT(half.estimate.iteration_s, full.estimate.iteration_s);
}

// Issue 15: recompute op (torchtitan's op-level selective activation
// checkpointing) on GPT-3 175B, 64 A100 (tp 8 without sequence parallelism,
// pp 8, 12 layers a stage, interleave 1, DP reduction and TP collectives
// exposed): every layer reruns its unsaved operators (GeLU MLP: the QKV
// GEMM's K share, the output projection, the MLP's down projection, the
// attention core's bmm and softmax, norms and residuals) and its two TP
// all-reduces; the event engine and the closed form agree within 0.5 % as
// for every other plan, and the recompute costs less than full recompute's.
TEST(EventEstimator, OpLevelSacAgreesWithTheClosedForm) {
  engine::Scenario s = LoadScenario("gpt3-175b-a100");
  s.training.interleave = 1;
  s.training.schedule = parallelism::Schedule::kOneFOneB;
  s.training.dp_overlap = false;
  s.training.tp_comm_overlap = false;
  s.training.sequence_parallel = false;
  const engine::EventEstimator est(s.model, s.system);
  engine::EventOptions o;
  o.uniform_stages = true;
  s.training.recompute = parallelism::Recompute::kFull;
  const engine::EventEstimate full = est.Run(s.training, s.workload, o);
  s.training.recompute = parallelism::Recompute::kOp;
  const engine::EventEstimate op = est.Run(s.training, s.workload, o);
  ASSERT_TRUE(op.simulated());
  EXPECT_NEAR(op.estimate.iteration_s / op.closed_form.iteration_s, 1.0, 0.005);
  EXPECT_GT(op.closed_form.time.recompute, 0);
  EXPECT_NEAR(op.estimate.time.recompute, op.closed_form.time.recompute, 0.005 * op.closed_form.time.recompute);
  EXPECT_LT(op.closed_form.time.recompute, full.closed_form.time.recompute);
  EXPECT_LT(op.estimate.iteration_s, full.estimate.iteration_s);
}

// Issue 15: the FP8 recipe's casts (step_kernels.h) are per-operator terms
// both engines take from the same Times(): Llama 3 70B on H100 in FP8, with
// uniform stages, agrees within 0.5 % under every recipe, and both order
// the recipes the same way: current scaling's amax pass (+2 B per element)
// costs more than the scale bytes of blockwise (+1/16 B), which cost more
// than delayed scaling (none).
TEST(EventEstimator, Fp8RecipesAgreeWithTheClosedForm) {
  engine::Scenario s = LoadScenario("llama3-70b-h100");
  s.training.precision = hardware::DataType::kFp8;
  s.training.dp_overlap = false;
  s.training.tp_comm_overlap = false;
  // The casts alone: every recipe's tensor-parallel gathers in bf16
  // (per-tensor recipes would gather 1 B an element: fp8_tp_gather).
  s.training.fp8_tp_gather = parallelism::Fp8TpGather::kNone;
  const engine::EventEstimator est(s.model, s.system);
  engine::EventOptions o;
  o.uniform_stages = true;
  double event[3] = {}, closed[3] = {};
  const parallelism::Fp8Recipe recipes[3] = {parallelism::Fp8Recipe::kDelayed, parallelism::Fp8Recipe::kBlockwise,
                                             parallelism::Fp8Recipe::kCurrent};
  for (int i = 0; i < 3; ++i) {
    s.training.fp8_recipe = recipes[i];
    const engine::EventEstimate e = est.Run(s.training, s.workload, o);
    ASSERT_TRUE(e.simulated());
    event[i] = e.estimate.iteration_s;
    closed[i] = e.closed_form.iteration_s;
    EXPECT_NEAR(event[i] / closed[i], 1.0, 0.005) << i;
  }
  EXPECT_LT(closed[0], closed[1]);
  EXPECT_LT(closed[1], closed[2]);
  EXPECT_LT(event[0], event[1]);
  EXPECT_LT(event[1], event[2]);
}

// What the closed form cannot see. GPT-3 175B on 64 A100 (tp 8, pp 8, v 1):
// the real stages (embedding on the first, LM head on the last only) are
// faster than every stage paying for the head; a straggler slows the
// iteration by at least its extra work per microbatch times m, and the
// closed form does not move.
TEST(EventEstimator, SeesImbalanceAndStragglers) {
  engine::Scenario s = LoadScenario("gpt3-175b-a100");
  s.training.interleave = 1;
  const engine::EventEstimator est(s.model, s.system);
  const engine::EventEstimate base = est.Run(s.training, s.workload);
  ASSERT_TRUE(base.simulated());
  EXPECT_LT(base.estimate.iteration_s, base.closed_form.iteration_s);
  EXPECT_EQ(base.stage_layers, std::vector<double>(8, 12.0));
  // The time breakdown adds up to the simulated iteration.
  const auto& t = base.estimate.time;
  EXPECT_NEAR(t.forward + t.backward + t.recompute + t.tp_comm + t.cp_comm + t.ep_comm + t.pp_bubble +
                  t.pp_p2p + t.dp_comm + t.optimizer + t.offload,
              base.estimate.iteration_s, 1e-9 * base.estimate.iteration_s);

  s.training.straggler_stage = 3;
  s.training.straggler_slowdown = 1.25;
  const engine::EventEstimate slow = est.Run(s.training, s.workload);
  ASSERT_TRUE(slow.simulated());
  EXPECT_DOUBLE_EQ(slow.closed_form.iteration_s, base.closed_form.iteration_s);
  // Stage 3 computes 25 % longer (its passes and its optimizer step); the
  // pipeline runs at its pace: the iteration grows, by less than the extra
  // work (part of it fills stage 3's own bubble), and no faster than stage 3
  // can finish its work and its exposed TP collectives.
  const auto& st3 = base.step.stages[3];
  const double extra = 0.25 * (st3.forward + st3.backward + st3.recompute + st3.optimizer);
  EXPECT_NEAR(slow.step.stages[3].busy, st3.busy + extra, 1e-9 * st3.busy);
  EXPECT_GT(slow.estimate.iteration_s, base.estimate.iteration_s);
  EXPECT_LT(slow.estimate.iteration_s, base.estimate.iteration_s + extra);
  EXPECT_GT(slow.estimate.iteration_s, slow.step.stages[3].busy + slow.step.stages[3].wait_tp);

  s.training.straggler_stage = 8;  // not a stage
  EXPECT_EQ(est.Run(s.training, s.workload).error, engine::EventError::kStraggler);
}

// 96 layers over 7 stages: 13 + 14 x 5 + 13 = 96, the remainder on the
// middle stages; the closed form charges ceil(96/7) = 14 everywhere.
TEST(EventEstimator, SplitsLayersUnevenly) {
  engine::Scenario s = LoadScenario("gpt3-175b-a100");
  s.training.interleave = 1;
  s.training.pp = 7;
  s.system.nodes = 7;  // 56 devices: tp 8 x pp 7
  const engine::EventEstimator est(s.model, s.system);
  parallelism::StepSpec spec;
  std::vector<double> layers;
  ASSERT_EQ(est.Spec(s.training, s.workload, {}, spec, &layers), engine::EventError::kNone);
  EXPECT_EQ(layers, (std::vector<double>{13, 14, 14, 14, 14, 14, 13}));
  EXPECT_EQ(spec.microbatches, 64);
}

// Embedding and loss counted as pipeline layers (Megatron-Core
// --account-for-embedding-in-pipeline-split / -loss-): 126 layers over pp 16
// with interleave 8 are 128 units, 8 a device: 7 layers beside the embedding
// on the first device, 7 beside the loss on the last, 8 on each other one.
TEST(EventEstimator, CountsEmbeddingAndLossAsPipelineLayers) {
  engine::Scenario s = LoadScenario("llama3-70b-h100");
  s.model.layers = 126;
  s.training.pp = 16;
  s.training.dp = 4;
  s.training.interleave = 8;
  s.training.pipeline_split_embedding_loss = true;
  const engine::EventEstimator est(s.model, s.system);
  parallelism::StepSpec spec;
  std::vector<double> layers;
  ASSERT_EQ(est.Spec(s.training, s.workload, {}, spec, &layers), engine::EventError::kNone);
  std::vector<double> want(16, 8.0);
  want.front() = 7;
  want.back() = 7;
  EXPECT_EQ(layers, want);
}

// Data-parallel overlap: with ZeRO-1 and dp = 16, the gradient buckets reduce
// during the last backward and the parameter gathers during the first
// forward; without overlap both come after the compute. The overlapped step
// is shorter, by at most the two collectives.
TEST(EventEstimator, OverlapsDataParallelBuckets) {
  engine::Scenario s = LoadScenario("gpt3-175b-1024-a100");
  s.training.zero = 1;
  const engine::EventEstimator est(s.model, s.system);
  s.training.dp_overlap = false;
  const engine::EventEstimate flat = est.Run(s.training, s.workload);
  s.training.dp_overlap = true;
  const engine::EventEstimate over = est.Run(s.training, s.workload);
  ASSERT_TRUE(flat.simulated() && over.simulated());
  EXPECT_GT(flat.estimate.time.dp_comm, 0);
  EXPECT_LT(over.estimate.iteration_s, flat.estimate.iteration_s);
  EXPECT_LE(over.estimate.time.dp_comm, flat.estimate.time.dp_comm);
  // Overlap cannot save more than the collectives it hides.
  EXPECT_LE(flat.estimate.iteration_s - over.estimate.iteration_s, flat.estimate.time.dp_comm);
}

// Issue 15: the event engine prices ZeRO-3 as the closed form does
// (Zero3GathersPerMicrobatch, Zero3ReduceBytesPerParam). Llama 2 7B on 1,024
// A100, dp 1024, full recompute, one microbatch, no overlap, so every
// collective stands between passes: DeepSpeed-style ZeRO-3 runs 3 gathers
// and a bf16 reduce-scatter, PyTorch FSDP (no re-gather, fp32 reduce) 2 and
// an fp32 one; the steps differ by AG(2P) + RS(2P) - RS(4P), P the 6.738 G
// parameters (tests/estimate_test.cpp works out the bytes).
TEST(EventEstimator, PricesZeroThreeAsTheFrameworkRunsIt) {
  engine::Scenario s = test::Llama2_7bZero3On1024A100();
  s.training.recompute = parallelism::Recompute::kFull;
  s.training.dp_overlap = false;
  const engine::EventEstimator est(s.model, s.system);
  const engine::EventEstimate deepspeed = est.Run(s.training, s.workload);
  s.training.zero3_recompute_gather = false;
  s.training.zero3_fp32_reduce = true;
  const engine::EventEstimate fsdp = est.Run(s.training, s.workload);
  ASSERT_TRUE(deepspeed.simulated() && fsdp.simulated());
  const double P = 6738415616.0;
  const engine::TrainingEstimator closed(s.model, s.system);
  const hardware::GroupPlacement g = closed.network().Place(1024, 1);
  const double ag = closed.network().Time(hardware::Collective::kAllGather, 2 * P, g);
  const double rs2 = closed.network().Time(hardware::Collective::kReduceScatter, 2 * P, g);
  const double rs4 = closed.network().Time(hardware::Collective::kReduceScatter, 4 * P, g);
  EXPECT_NEAR(deepspeed.estimate.iteration_s - fsdp.estimate.iteration_s, ag + rs2 - rs4,
              1e-6 * deepspeed.estimate.iteration_s);
}

// Issue 15: the event engine prices FSDP1's BACKWARD_POST as the closed form
// does. One DGX A100, Llama 2 7B, dp 8, FSDP, no recompute, one microbatch:
// with prefetch the backward's gather G = AG(2P) runs beside the forward;
// without, it is issued when the forward is done and the backward waits for
// it. The hidden traffic, slowed compute k = s/(1+s) of it, shrinks by G, so
// the step grows by G - G k = G / (1 + s) (tests/estimate_test.cpp,
// BackwardPostPrefetchExposesTheBackwardGather, for the closed form).
TEST(EventEstimator, BackwardPostPrefetchExposesTheBackwardGather) {
  engine::Scenario s = test::Llama2_7bFsdpOnOneDgxA100();
  const engine::EventEstimator est(s.model, s.system);
  const engine::EventEstimate pre = est.Run(s.training, s.workload);
  s.training.zero3_backward_prefetch = false;
  const engine::EventEstimate post = est.Run(s.training, s.workload);
  ASSERT_TRUE(pre.simulated() && post.simulated());
  const double P = 6738415616.0;
  const engine::TrainingEstimator closed(s.model, s.system);
  const hardware::GroupPlacement g = closed.network().Place(8, 1);
  const double ag = closed.network().Time(hardware::Collective::kAllGather, 2 * P, g);
  ASSERT_GT(ag, 0);
  const double sl = s.system.device.overlap_slowdown;
  EXPECT_NEAR(post.estimate.iteration_s - pre.estimate.iteration_s, ag / (1 + sl), 1e-6 * ag);
}

// Issue 15: weights gathered a matrix at a time with one prefetched
// (training.zero3_matrix_prefetch, DeepSpeed ZeRO-3 of 2021;
// PrefetchOneAheadExposed, core/estimate/parallel_comm.h). The event engine's
// timeline runs whole layers one ahead and adds what the matrix-by-matrix
// pairing exposes beyond each pass's OverlapExposed, as the closed form
// does: on Llama 2 7B over 1,024 A100 (ZeRO-3, one microbatch, no recompute)
// both estimators move by the same seconds, and by more than nothing.
TEST(EventEstimator, MatrixPrefetchExposesWhatTheClosedFormExposes) {
  engine::Scenario s = test::Llama2_7bZero3On1024A100();
  s.training.recompute = parallelism::Recompute::kNone;
  const engine::EventEstimator est(s.model, s.system);
  const engine::TrainingEstimator closed(s.model, s.system);
  const engine::EventEstimate layer = est.Run(s.training, s.workload);
  const double closed_layer = closed.Run(s.training, s.workload).iteration_s;
  s.training.zero3_matrix_prefetch = true;
  const engine::EventEstimate matrix = est.Run(s.training, s.workload);
  const double closed_matrix = closed.Run(s.training, s.workload).iteration_s;
  ASSERT_TRUE(layer.simulated() && matrix.simulated());
  ASSERT_GT(closed_matrix - closed_layer, 0);
  EXPECT_NEAR(matrix.estimate.iteration_s - layer.estimate.iteration_s, closed_matrix - closed_layer,
              0.01 * (closed_matrix - closed_layer));
}

// Activation offload (training.offload_activation_layers): the event engine
// charges each stage what its offloaded layers' copies leave uncovered
// (ActivationOffloadExposed), as the closed form does; on Llama 3 8B over 64
// A100 with 31 of 32 layers offloaded (tests/estimate_test.cpp,
// ActivationOffloadMovesMemoryToTheHostAndPaysTheCopies, works out the
// copies) both engines move by the same seconds, and by more than nothing.
TEST(EventEstimator, ActivationOffloadCostsWhatTheClosedFormCharges) {
  engine::Scenario s = test::Llama3_8bZero3On64A100();
  s.training.recompute = parallelism::Recompute::kNone;
  s.training.attention = parallelism::Attention::kFlash;
  s.system.host_bandwidth = 25e9;
  const engine::EventEstimator est(s.model, s.system);
  const engine::TrainingEstimator closed(s.model, s.system);
  const engine::EventEstimate kept = est.Run(s.training, s.workload);
  const double closed_kept = closed.Run(s.training, s.workload).iteration_s;
  s.training.offload_activation_layers = 31;
  const engine::EventEstimate off = est.Run(s.training, s.workload);
  const double closed_off = closed.Run(s.training, s.workload).iteration_s;
  ASSERT_TRUE(kept.simulated() && off.simulated());
  ASSERT_GT(closed_off - closed_kept, 0);
  EXPECT_NEAR(off.estimate.iteration_s - kept.estimate.iteration_s, closed_off - closed_kept,
              1e-9 * closed_off);
}

// Megatron-LM before gradient-accumulation fusion (training.
// grad_accumulation_fusion = false) adds every weight gradient into the fp32
// buffer in a pass of its own each microbatch, in the event engine as in the
// closed form (GradAccumulationBytesPerParam). The 22B node (tp 8, one
// microbatch of 4): 2,759,282,688 parameters x (2 + 4 + 4) B at the A100
// 80GB's 2.039 TB/s x 0.83 and a 4 us launch, 16.308 ms more in both
// (tests/estimate_test.cpp works it out). Megatron-LM's division of the
// buffer by dp at dp 1 (training.grad_scale_at_dp1), 8 B a parameter once
// a step: 13.043 ms in both. Under a pipeline (GPT-3 175B, tp 8, pp 8, 64
// microbatches of 1) each stage's backward grows by its own pass over its
// parameters; the two engines move alike.
TEST(EventEstimator, UnfusedGradientAccumulationAsTheClosedForm) {
  const models::ModelSpec model = test::Model("megatron-22b");
  const hardware::SystemSpec node = test::System("selene", 1);
  parallelism::TrainingPlan p = test::Korthikanti22bPlan();
  const parallelism::Workload w{.global_batch = 4, .seq_len = 2048};
  const engine::EventEstimator est(model, node);
  const engine::TrainingEstimator closed(model, node);
  const engine::EventEstimate fused = est.Run(p, w);
  const double closed_fused = closed.Run(p, w).iteration_s;
  parallelism::TrainingPlan u = p;
  u.grad_accumulation_fusion = false;
  const engine::EventEstimate unfused = est.Run(u, w);
  const double closed_unfused = closed.Run(u, w).iteration_s;
  ASSERT_TRUE(fused.simulated() && unfused.simulated());
  EXPECT_NEAR(closed_unfused - closed_fused, 16.308e-3, 0.001e-3);
  EXPECT_NEAR(unfused.estimate.iteration_s - fused.estimate.iteration_s, closed_unfused - closed_fused, 1e-9);
  parallelism::TrainingPlan q = p;
  q.grad_scale_at_dp1 = true;
  const engine::EventEstimate scaled = est.Run(q, w);
  ASSERT_TRUE(scaled.simulated());
  EXPECT_NEAR(closed.Run(q, w).iteration_s - closed_fused, 13.043e-3, 0.001e-3);
  EXPECT_NEAR(scaled.estimate.iteration_s - fused.estimate.iteration_s, 13.043e-3, 0.001e-3);
  // The NaN check's read of the fp32 buffer (training.grad_nan_check), 4 B
  // a parameter once a step: 6.522 ms in both (tests/estimate_test.cpp).
  parallelism::TrainingPlan n = p;
  n.grad_nan_check = true;
  const engine::EventEstimate checked = est.Run(n, w);
  ASSERT_TRUE(checked.simulated());
  EXPECT_NEAR(closed.Run(n, w).iteration_s - closed_fused, 6.522e-3, 0.001e-3);
  EXPECT_NEAR(checked.estimate.iteration_s - fused.estimate.iteration_s, 6.522e-3, 0.001e-3);
  // The plan's loss kernels (training.loss_kernel): the event engine's head
  // carries the same loss as the closed form's (AddLoss), so a fused bf16
  // loss shortens both steps alike.
  parallelism::TrainingPlan l = p;
  l.loss_kernel = parallelism::LossKernel::kFusedBf16;
  const engine::EventEstimate lighter = est.Run(l, w);
  ASSERT_TRUE(lighter.simulated());
  const double closed_lighter = closed.Run(l, w).iteration_s;
  EXPECT_GT(closed_fused - closed_lighter, 0.5e-3);
  EXPECT_NEAR(fused.estimate.iteration_s - lighter.estimate.iteration_s, closed_fused - closed_lighter, 1e-9);

  const models::ModelSpec gpt3 = test::Model("gpt3-175b");
  const hardware::SystemSpec eight = test::System("selene", 8);
  p.pp = 8;
  p.micro_batch = 1;
  const parallelism::Workload w64{.global_batch = 64, .seq_len = 2048};
  const engine::EventEstimator est8(gpt3, eight);
  const engine::TrainingEstimator closed8(gpt3, eight);
  u = p;
  u.grad_accumulation_fusion = false;
  engine::EventOptions uniform;
  uniform.uniform_stages = true;
  const engine::EventEstimate f8 = est8.Run(p, w64, uniform), u8 = est8.Run(u, w64, uniform);
  ASSERT_TRUE(f8.simulated() && u8.simulated());
  const double closed_delta = closed8.Run(u, w64).iteration_s - closed8.Run(p, w64).iteration_s;
  EXPECT_GT(closed_delta, 0);
  EXPECT_NEAR(u8.estimate.iteration_s - f8.estimate.iteration_s, closed_delta, 1e-9 * closed_delta);
  // Each stage its own pass (the first with the embedding, the last with
  // the LM head, the middle ones lighter): within 0.5 % of the closed
  // form's, which paces every stage as its slowest.
  const engine::EventEstimate f8s = est8.Run(p, w64), u8s = est8.Run(u, w64);
  ASSERT_TRUE(f8s.simulated() && u8s.simulated());
  EXPECT_NEAR(u8s.estimate.iteration_s - f8s.estimate.iteration_s, closed_delta, 5e-3 * closed_delta);
}

// Issue 15: FSDP2's copy-out of each gather (training.zero3_copy_out) runs on
// the compute stream in the event engine as in the closed form: Llama 3 8B on
// 64 A100, dp 64, one microbatch, no overlap, every layer recomputed with
// its weights gathered (and copied out) a third time. The two engines add the
// same seconds: 2 x (32 layers + embedding + head) copies plus 32 for the
// recompute (tests/estimate_test.cpp, Fsdp2CopiesEachGatherOutOnTheComputeStream,
// works out 520.08 us a layer and 1,245.66 us for the embedding or the head:
// 38.27 + 16.64 = 54.91 ms).
TEST(EventEstimator, CopiesFsdp2GathersOutAsTheClosedForm) {
  engine::Scenario s = test::Llama3_8bZero3On64A100();
  s.training.recompute = parallelism::Recompute::kFull;
  const engine::EventEstimator est(s.model, s.system);
  const engine::TrainingEstimator closed(s.model, s.system);
  const engine::EventEstimate without = est.Run(s.training, s.workload);
  const double closed_without = closed.Run(s.training, s.workload).iteration_s;
  s.training.zero3_copy_out = true;
  const engine::EventEstimate with = est.Run(s.training, s.workload);
  const double closed_with = closed.Run(s.training, s.workload).iteration_s;
  ASSERT_TRUE(without.simulated() && with.simulated());
  EXPECT_NEAR(closed_with - closed_without, 54.91e-3, 0.01e-3);
  EXPECT_NEAR(with.estimate.iteration_s - without.estimate.iteration_s, closed_with - closed_without,
              1e-9 * closed_with);
}

// ZeRO-3 under a pipeline as torchtitan runs FSDP2 with PyTorch pipelining
// (engine::Zero3GathersOncePerStep, core/estimate/parallel_comm.h): each
// chunk's weights gathered once a step and its gradients reduce-scattered
// once, after its last backward. Llama 2 7B on 1,024 A100, tp 1, pp 4,
// dp 256, no DP overlap. The fullest stage is the last: 8 layers of
// 4 x 4,096^2 + 3 x 4,096 x 11,008 + 2 x 4,096 = 202,383,360 parameters,
// the final norm (4,096) and the LM head (32,000 x 4,096 = 131,072,000):
// P = 1,619,066,880 + 4,096 + 131,072,000 = 1,750,142,976. Its exposed DP
// time is one all-gather of 2P bytes and one reduce-scatter of 2P bytes
// (bf16, no fp32 reduce) over the 256 replicas (stride 1), whatever the
// microbatch count: global batch 1,024 (m = 4) and 2,048 (m = 8) give the
// same seconds; the per-microbatch pricing charged m (2 AG + RS). In the
// event engine's graph each stage has one gather and one reduce-scatter
// per chunk: 1 each at v = 1; with interleave 2 and overlap, 2 reduce-
// scatters and 2 gathers, each split into its first unit and the rest
// (4 gather tasks), all of them for microbatch 0.
TEST(EventEstimator, Zero3UnderAPipelineGathersAndReduceScattersOncePerStep) {
  engine::Scenario s = test::Llama2_7bZero3On1024A100();
  s.training.pp = 4;
  s.training.dp = 256;
  s.training.dp_overlap = false;
  const engine::TrainingEstimator closed(s.model, s.system);
  const double P = 1750142976.0;
  const hardware::GroupPlacement g = closed.network().Place(256, 1);
  const double ag = closed.network().Time(hardware::Collective::kAllGather, 2 * P, g);
  const double rs = closed.network().Time(hardware::Collective::kReduceScatter, 2 * P, g);
  ASSERT_GT(ag, 0);
  const engine::TrainingEstimate m4 = closed.Run(s.training, s.workload);
  s.workload.global_batch = 2048;
  const engine::TrainingEstimate m8 = closed.Run(s.training, s.workload);
  EXPECT_NEAR(m4.time.dp_comm, ag + rs, 1e-9 * (ag + rs));
  EXPECT_NEAR(m8.time.dp_comm, ag + rs, 1e-9 * (ag + rs));

  auto count = [&](const engine::Scenario& sc, int64_t chunks, int64_t gathers_per_chunk) {
    const engine::EventEstimator est(sc.model, sc.system);
    engine::EventOptions o;
    o.keep_timeline = true;
    const engine::EventEstimate e = est.Run(sc.training, sc.workload, o);
    ASSERT_TRUE(e.simulated()) << ExplainEventError(e, sc);
    std::vector<int64_t> gathers(4, 0), reduces(4, 0);
    for (const parallelism::TaskInfo& t : e.graph.info) {
      if (t.kind == parallelism::TaskKind::kParamGather) {
        ++gathers[static_cast<size_t>(t.stage)];
        EXPECT_EQ(t.microbatch, 0);
      }
      if (t.kind == parallelism::TaskKind::kGradReduce) ++reduces[static_cast<size_t>(t.stage)];
    }
    for (size_t d = 0; d < 4; ++d) {
      EXPECT_EQ(gathers[d], chunks * gathers_per_chunk) << "stage " << d;
      EXPECT_EQ(reduces[d], chunks) << "stage " << d;
    }
  };
  count(s, 1, 1);
  s.training.interleave = 2;
  s.training.dp_overlap = true;
  count(s, 2, 2);
}

// Issue 15: `search` re-scores its finalists with the event engine and flags
// any that disagrees with the closed form by more than 2 %, so on dense plans
// the two must price the same physics with every stage as it really is
// (no EventOptions::uniform_stages) and with overlap on. A fixed grid of 110
// dense plans: Llama 2 7B on 1,024 A100 (tp 1/2, ZeRO 1 or 3 with
// DeepSpeed-style, FSDP, FSDP1 BACKWARD_POST and FSDP2 copy-out gathers,
// each recompute, DP overlap on and off), Llama 3 70B on H100 (tp 4/8,
// pp 2-8 including 3, 6 and 7 which leave layers over, interleave 1 or the
// most that divides, ZeRO 1 or 3, each recompute, TP overlap on and off),
// and GPT-3 175B on 1,024 A100 as shipped and with ZeRO 3.
// ZeRO-3 with pp > 1 is held to 2 % too. It was an exception while the
// event engine gathered and reduce-scattered a chunk's weights every pass
// of every microbatch on the one DP stream (the queued gathers stalled the
// pipeline and showed as bubble) and the closed form hid each microbatch's
// traffic behind its own passes: 19 of the 31 beyond 2 %, up to 22 %. Both
// now price what torchtitan's FSDP2 under PyTorch pipelining does, one
// gather a chunk a step kept unsharded and one exposed reduce-scatter after
// the chunk's last backward (engine::Zero3GathersOncePerStep,
// core/estimate/parallel_comm.h): the worst of the 31 is 0.66 %.
// Before the end stages were split alike (parallelism::StageLayers) and the
// event engine gathered layer by layer (ChunkWork::zero3_units), 34 of the
// 79 other plans disagreed: the 24 Llama 2 7B ZeRO-3 plans with overlap by
// 20-49 % (selective recompute, tp 1: 0.889 s closed vs 1.112 s event), the
// 10 Llama 3 70B ZeRO-1 plans with pp 6 or 7 by 6-8 % (tp 8 pp 6: 19.80 s
// vs 18.43 s). After: the worst of the 110 is 0.66 %.
TEST(EventEstimator, AgreesWithTheClosedFormOnDensePlans) {
  struct Plan {
    std::string name;
    engine::Scenario s;
  };
  std::vector<Plan> plans;
  const char* kRecompute[] = {"none", "selective", "full"};
  // Llama 2 7B on 1,024 A100, one 4,096-token sequence per GPU.
  for (int64_t tp : {1, 2})
    for (int zero : {1, 3})
      for (int rec = 0; rec < 3; ++rec)
        for (int flavour = 0; flavour < (zero == 3 ? 4 : 1); ++flavour)
          for (bool overlap : {true, false}) {
            if (flavour > 1 && !overlap) continue;
            engine::Scenario s = test::Llama2_7bZero3On1024A100();
            s.training.tp = tp;
            s.training.dp = 1024 / tp;
            s.training.zero = zero;
            s.training.recompute = static_cast<parallelism::Recompute>(rec);
            s.training.dp_overlap = overlap;
            // 0 DeepSpeed (re-gather, bf16 reduce), 1 FSDP (fp32 reduce, no
            // re-gather), 2 FSDP1 BACKWARD_POST, 3 FSDP2 copy-out.
            if (flavour >= 1) {
              s.training.zero3_recompute_gather = false;
              s.training.zero3_fp32_reduce = true;
            }
            s.training.zero3_backward_prefetch = flavour != 2;
            s.training.zero3_copy_out = flavour == 3;
            s.workload.global_batch = 1024 / tp;
            plans.push_back({"llama2-7b tp " + std::to_string(tp) + " zero " + std::to_string(zero) + " " +
                                 kRecompute[rec] + " flavour " + std::to_string(flavour) +
                                 (overlap ? " overlap" : " no-overlap"),
                             s});
          }
  // Llama 3 70B on DGX H100: tp x pp x dp 8 nodes' worth per pp step.
  for (int64_t pp : {2, 3, 4, 6, 7, 8})
    for (int64_t tp : {4, 8})
      for (int zero : {1, 3})
        for (int rec = 0; rec < 3; rec += (tp == 4 ? 2 : 1)) {
          engine::Scenario s = LoadScenario("llama3-70b-h100");
          const int64_t dp = 8;
          s.system.nodes = tp * pp * dp / 8;
          s.training.tp = tp;
          s.training.pp = pp;
          s.training.dp = dp;
          s.training.zero = zero;
          s.training.recompute = static_cast<parallelism::Recompute>(rec);
          s.training.tp_comm_overlap = rec != 1;
          int64_t v = 1;  // the most chunks that divide each stage's layers evenly, up to 5
          for (int64_t k = 5; k > 1 && v == 1; --k)
            if (s.model.layers % (pp * k) == 0) v = k;
          s.training.interleave = v;
          plans.push_back({"llama3-70b tp " + std::to_string(tp) + " pp " + std::to_string(pp) + " v " +
                               std::to_string(v) + " zero " + std::to_string(zero) + " " + kRecompute[rec],
                           s});
        }
  for (int zero : {1, 3}) {
    engine::Scenario s = LoadScenario("gpt3-175b-1024-a100");
    s.training.zero = zero;
    plans.push_back({"gpt3-175b-1024-a100 zero " + std::to_string(zero), s});
  }

  int compared = 0, zero3_pp = 0, zero3_pp_oom = 0;
  double worst = 0, worst_zero3_pp = 0;
  std::string worst_plan;
  for (const Plan& plan : plans) {
    const engine::EventEstimator est(plan.s.model, plan.s.system);
    const engine::EventEstimate e = est.Run(plan.s.training, plan.s.workload);
    if (!e.closed_form.feasible() && e.closed_form.infeasible != engine::Infeasible::kOutOfMemory) continue;
    ASSERT_TRUE(e.simulated()) << plan.name << ": " << ExplainEventError(e, plan.s);
    const double rel = e.estimate.iteration_s / e.closed_form.iteration_s - 1;
    if (plan.s.training.zero >= 3 && plan.s.training.pp > 1) {
      ++zero3_pp;
      zero3_pp_oom += !e.closed_form.feasible();
      worst_zero3_pp = std::max(worst_zero3_pp, std::abs(rel));
    }
    ++compared;
    if (std::abs(rel) > worst) {
      worst = std::abs(rel);
      worst_plan = plan.name;
    }
    const engine::TimeBreakdown& a = e.closed_form.time;
    const engine::TimeBreakdown& b = e.estimate.time;
    EXPECT_LT(std::abs(rel), 0.02) << plan.name << ": closed " << e.closed_form.iteration_s << " s, event "
                                   << e.estimate.iteration_s << " s; closed/event fwd " << a.forward << "/"
                                   << b.forward << " bwd " << a.backward << "/" << b.backward << " rec "
                                   << a.recompute << "/" << b.recompute << " tp " << a.tp_comm << "/" << b.tp_comm
                                   << " bubble " << a.pp_bubble << "/" << b.pp_bubble << " p2p " << a.pp_p2p
                                   << "/" << b.pp_p2p << " dp " << a.dp_comm << "/" << b.dp_comm << " opt "
                                   << a.optimizer << "/" << b.optimizer;
  }
  EXPECT_EQ(compared, 110);
  EXPECT_EQ(zero3_pp, 31);
  std::cout << "compared " << compared << " dense plans; worst |event/closed - 1| = " << worst << " ("
            << worst_plan << "); worst of the " << zero3_pp << " ZeRO-3 ones with pp > 1: " << worst_zero3_pp
            << " (" << zero3_pp_oom << " out of memory)\n";
}

// The estimator's trace: every task with work is one complete event.
TEST(EventEstimator, TraceHasEveryTask) {
  engine::Scenario s = LoadScenario("gpt3-175b-a100");
  s.training.interleave = 1;
  s.training.pp = 4;
  s.system.nodes = 4;
  const engine::EventEstimator est(s.model, s.system);
  engine::EventOptions o;
  o.keep_timeline = true;
  const engine::EventEstimate e = est.Run(s.training, s.workload, o);
  ASSERT_TRUE(e.simulated());
  std::ostringstream os;
  engine::WriteChromeTrace(e.graph, e.timeline, s.name, os);
  const auto j = nlohmann::json::parse(os.str());
  int64_t complete = 0, with_work = 0;
  for (const auto& ev : j["traceEvents"]) complete += ev["ph"] == "X";
  for (size_t i = 0; i < e.graph.info.size(); ++i)
    with_work += e.graph.info[i].kind != parallelism::TaskKind::kJoin &&
                 e.graph.graph.resource(static_cast<int32_t>(i)) != base::kNoResource;
  EXPECT_EQ(complete, with_work);
  // 4 stages x 32 microbatches x (F, R, B) + TP after each + sends + optimizer.
  EXPECT_GT(complete, 4 * 32 * 3);
}

// A dense plan has no CP or EP traffic, so its breakdown has none: the
// embedding's and the LM head's TP collectives ride inside the passes'
// communication and are taken back out as TP, and what is left (a
// difference of sums taken in two orders) is not split into CP and EP.
// Llama 3 70B on 512 H100, tp 4 with sequence parallelism, dp 128: before,
// the event engine reported -1.7e-18 s of EP communication, which `search`
// printed as "ep -0.000000001735 ns".
TEST(EventEngine, ADensePlanReportsNoCpOrEpCommunication) {
  const models::ModelSpec m = test::Model("llama3-70b");
  const hardware::SystemSpec sys = test::System("dgx-h100-superpod", 64);
  parallelism::TrainingPlan p;
  p.tp = 4;
  p.pp = 1;
  p.dp = 128;
  p.micro_batch = 1;
  p.sequence_parallel = true;
  p.tp_comm_overlap = true;
  p.zero = 2;
  const parallelism::Workload w{.global_batch = 1024, .seq_len = 8192};
  const engine::EventEstimator est(m, sys);
  const engine::EventEstimate r = est.Run(p, w);
  ASSERT_TRUE(r.simulated());
  EXPECT_GT(r.estimate.time.tp_comm, 0.0);
  EXPECT_EQ(r.estimate.time.cp_comm, 0.0);
  EXPECT_EQ(r.estimate.time.ep_comm, 0.0);
}

// DualPipe, p = 8, m = 20 (10 each way), F = 1, B = 2 (W = 1) per stage:
// the replay of dualpipe.py's order gives DeepSeek-V3 Table 2's bubble
// (p/2 - 1)(F&B + B - 3W) = 3 (3 + 2 - 3) = 6, so 20 x 3 + 6 = 66, and
// every device holds p + 1 = 9 stage-microbatches at its peak (Table 2's
// activation column), 1F1B's first stage 8.
TEST(Schedules, DualPipeHasTable2sBubbleAndActivations) {
  const StepResult r = Simulate(Uniform(PipelineSchedule::kDualPipe, 8, 20, 2, 1, 2, 1));
  EXPECT_DOUBLE_EQ(r.iteration, 66);
  for (const auto& st : r.stages) EXPECT_EQ(st.peak_in_flight, 9);
  // Against 1F1B's (m + p - 1)(F + B) = 81 and ZB-H1's 3m + (p - 1)(F + B - 2W) = 67.
  EXPECT_DOUBLE_EQ(Simulate(Uniform(PipelineSchedule::kOneFOneB, 8, 20, 1, 1, 2, 1)).iteration, 81);
  EXPECT_DOUBLE_EQ(Simulate(Uniform(PipelineSchedule::kZeroBubbleH1, 8, 20, 1, 1, 2, 1)).iteration, 67);
  // W > F: the table's term, 3 (1 + 6 - 6) = 3, falls under the forwards
  // filling from both ends, (p - 2) F = 6: 20 x 4 + 6 = 86.
  EXPECT_DOUBLE_EQ(Simulate(Uniform(PipelineSchedule::kDualPipe, 8, 20, 2, 1, 3, 2)).iteration, 86);
}

// Each device runs m / 2 forwards and backwards of each direction, every
// zero-bubble backward's W once; device 0 (h = 0, p = 4) starts with
// 2 (p/2 - 1) = 2 forwards of its own direction, then the pair F0 F1, whose
// F1 is microbatch m/2 = 4 on virtual stage 2p - 1 = 7 (the other
// direction's last stage, with the LM head).
TEST(Schedules, DualPipeOrderIsTheEightSteps) {
  const auto seq = parallelism::DualPipeOrder(4, 8);
  ASSERT_EQ(seq.size(), 4u);
  for (size_t d = 0; d < 4; ++d) {
    int f = 0, b_full = 0, b_input = 0, w = 0;
    for (const auto& r : seq[d]) {
      f += r.kind == parallelism::TaskKind::kForward;
      b_full += r.kind == parallelism::TaskKind::kBackward;
      b_input += r.kind == parallelism::TaskKind::kBackwardInput;
      w += r.kind == parallelism::TaskKind::kBackwardWeight;
    }
    EXPECT_EQ(f, 8);
    EXPECT_EQ(b_full + b_input, 8);
    EXPECT_EQ(w, b_input);
  }
  const auto& d0 = seq[0];
  EXPECT_EQ(d0[0].virtual_stage, 0);
  EXPECT_EQ(d0[1].microbatch, 1);
  EXPECT_EQ(d0[2].virtual_stage, 0);
  EXPECT_EQ(d0[2].microbatch, 2);
  EXPECT_EQ(d0[3].virtual_stage, 7);
  EXPECT_EQ(d0[3].microbatch, 4);
  // Device 3 (second half) enters the other direction first: virtual stage 2p - 1 - 3 = 4.
  EXPECT_EQ(seq[3][0].virtual_stage, 4);
  EXPECT_EQ(seq[3][0].microbatch, 4);
}

TEST(Schedules, DualPipeNeedsEvenStagesAndTwiceTheMicrobatches) {
  StepGraph g;
  for (const auto& [p, m, v] : {std::tuple<int64_t, int64_t, int64_t>{3, 12, 2}, {4, 9, 2}, {4, 6, 2}, {4, 8, 1}})
    EXPECT_EQ(parallelism::BuildStepGraph(Uniform(PipelineSchedule::kDualPipe, p, m, v, 1, 2, 1), g),
              parallelism::StepError::kDualPipeShape)
        << p << " " << m << " " << v;
}

// DualPipe through both engines: DeepSeek-V3 on 576 H100
// (deepseek-v3-dgx-h100, ep 8), pp 2 to 8, uniform stages. The closed form
// takes Table 2's bubble; the replay of dualpipe.py's order is that at
// W = F and up to one forward less below it (Schedules.
// DualPipeHasTable2sBubbleAndActivations). Measured: -0.12 %, +0.80 % and
// +0.18 % at pp 2, 4 and 8; within 1 %, inside the 2 % search reports.
TEST(EventEstimator, DualPipeAgreesWithTheClosedForm) {
  const engine::Scenario s = LoadScenario("deepseek-v3-dgx-h100");
  const engine::EventEstimator est(s.model, s.system);
  int compared = 0;
  for (int64_t pp : {2, 4, 8}) {
    parallelism::TrainingPlan p = s.training;
    p.schedule = parallelism::Schedule::kDualPipe;
    p.pp = pp;
    p.dp = 0;
    engine::EventOptions o;
    o.uniform_stages = true;
    const engine::EventEstimate e = est.Run(p, s.workload, o);
    ASSERT_TRUE(e.simulated()) << pp;
    ++compared;
    const double rel = e.estimate.iteration_s / e.closed_form.iteration_s - 1;
    EXPECT_LT(std::abs(rel), 0.01) << "pp " << pp << " event " << e.estimate.iteration_s << " closed "
                                   << e.closed_form.iteration_s;
    EXPECT_EQ(e.step.stages[0].peak_in_flight, pp + 1);
  }
  EXPECT_EQ(compared, 3);
}

}  // namespace
}  // namespace orrery
