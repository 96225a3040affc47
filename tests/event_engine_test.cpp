// The event-driven engine: the discrete-event core, the pipeline schedules
// against hand-worked timelines, the estimator against the closed form, and
// the Chrome trace.

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "core/base/event_queue.h"
#include "parallelism/step_graph.h"

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

}  // namespace
}  // namespace orrery
