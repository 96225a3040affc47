#include "core/api/bench.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

#include "core/base/event_queue.h"
#include "core/estimate/training_estimator.h"
#include "parallelism/step_graph.h"

namespace orrery {

namespace {

// This thread's CPU time in seconds (POSIX clock_gettime, CLOCK_THREAD_CPUTIME_ID).
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

BenchResult Bench(const BenchRequest& req) {
  BenchResult r;
  if (!(req.seconds > 0 && req.seconds <= 600)) {
    r.status = Status::kUsage;
    r.reason = "seconds must be in (0, 600]";
    return r;
  }
  ScenarioInput in = req.scenario;
  if (in.file.empty() && in.yaml.empty() && !in.loaded) in.file = "gpt3-175b-1024-a100";
  auto s = ResolveScenario(in, r.diagnostics);
  if (s) engine::CrossCheck(*s, r.diagnostics);
  if (!s || !r.diagnostics.ok()) {
    r.status = Status::kInvalidInput;
    return r;
  }
  r.scenario = in.file.empty() ? s->name : in.file;
  r.model = s->model.name;
  r.device = s->system.device.name;
  r.devices = hardware::DeviceCount(s->system);
  const engine::TrainingEstimator estimator(s->model, s->system);
  // Vary the plan the way a search does: microbatch size and recompute mode.
  parallelism::TrainingPlan plans[6];
  for (int i = 0; i < 6; ++i) {
    plans[i] = s->training;
    plans[i].micro_batch = 1 << (i % 2);
    plans[i].recompute = static_cast<parallelism::Recompute>(i % 3);
  }
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  auto limit = start + std::chrono::duration<double>(req.seconds / 2);
  double cpu0 = ThreadCpuSeconds();
  int64_t n = 0;
  double sink = 0;
  while (clock::now() < limit) {
    for (int k = 0; k < 1000; ++k) sink += estimator.Run(plans[(n + k) % 6], s->workload).iteration_s;
    n += 1000;
  }
  r.estimates = n;
  r.elapsed_s = std::chrono::duration<double>(clock::now() - start).count();
  r.cpu_s = ThreadCpuSeconds() - cpu0;
  r.mean_iteration_s = sink / static_cast<double>(n);
  // Prepare once (plans 0 and 1 hold both micro-batch sizes), run many.
  const engine::PreparedWorkload prepared[2] = {estimator.Prepare(plans[0], s->workload),
                                                estimator.Prepare(plans[1], s->workload)};
  for (int i = 0; i < 6; ++i) {
    // The prepared path must give the same doubles (an internal error otherwise).
    if (estimator.Run(plans[i], s->workload, prepared[i % 2]).iteration_s !=
        estimator.Run(plans[i], s->workload).iteration_s) {
      r.status = Status::kInvalidInput;
      r.reason = "internal error: a prepared estimate differs from the plain one; please report it";
      return r;
    }
  }
  start = clock::now();
  limit = start + std::chrono::duration<double>(req.seconds / 2);
  cpu0 = ThreadCpuSeconds();
  int64_t np = 0;
  double check = 0;
  while (clock::now() < limit) {
    for (int k = 0; k < 1000; ++k) {
      const int64_t i = (np + k) % 6;
      check += estimator.Run(plans[i], s->workload, prepared[i % 2]).iteration_s;
    }
    np += 1000;
  }
  r.prepared_estimates = np;
  r.prepared_elapsed_s = std::chrono::duration<double>(clock::now() - start).count();
  r.prepared_cpu_s = ThreadCpuSeconds() - cpu0;
  (void)check;
  return r;
}

EventBenchResult BenchEvent(const EventBenchRequest& req) {
  using parallelism::PipelineSchedule;
  EventBenchResult r;
  const PipelineSchedule all[] = {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB,
                                  PipelineSchedule::kInterleaved, PipelineSchedule::kZeroBubbleH1,
                                  PipelineSchedule::kVMin, PipelineSchedule::kVHalf,
                                  PipelineSchedule::kVZeroBubble, PipelineSchedule::kDualPipe};
  PipelineSchedule sched = PipelineSchedule::kInterleaved;
  bool known = false;
  std::vector<std::string> names;
  for (const auto s : all) {
    names.push_back(parallelism::PipelineScheduleName(s));
    if (req.schedule == names.back()) {
      sched = s;
      known = true;
    }
  }
  if (!known) {
    const std::string hint = base::DidYouMean(req.schedule, names);
    r.status = Status::kUsage;
    r.reason = "schedule '" + req.schedule + "': not a schedule" + (hint.empty() ? "" : "; " + hint);
    return r;
  }
  if (req.stages < 1 || req.stages > 4096 || req.microbatches < 1 || req.microbatches > 1 << 20 ||
      req.interleave < 1 || req.interleave > 64 || req.repeat < 1 || req.repeat > 100) {
    r.status = Status::kUsage;
    r.reason = "need 1 <= stages <= 4096, 1 <= microbatches <= 1048576, 1 <= interleave <= 64, "
               "1 <= repeat <= 100";
    return r;
  }
  parallelism::StepSpec spec;
  spec.stages = req.stages;
  spec.microbatches = req.microbatches;
  spec.schedule = sched;
  spec.chunks = sched == PipelineSchedule::kGpipe || sched == PipelineSchedule::kOneFOneB ||
                        sched == PipelineSchedule::kZeroBubbleH1
                    ? 1
                    : (sched == PipelineSchedule::kInterleaved ? req.interleave : 2);
  // DualPipe's two chunks are whole stages, one for each direction.
  const double v = sched == PipelineSchedule::kDualPipe ? 1.0 : static_cast<double>(spec.chunks);
  parallelism::ChunkWork w;
  w.forward = 10e-3 / v;
  w.backward = 20e-3 / v;
  w.backward_weight = 10e-3 / v;
  w.activation_bytes = 1e9 / v;
  spec.work.assign(static_cast<size_t>(spec.stages * spec.chunks), w);
  parallelism::StageDp dp;
  dp.grad_reduce = 100e-3;
  dp.buckets = 4;
  dp.optimizer = 5e-3;
  spec.dp.assign(static_cast<size_t>(spec.stages), dp);
  spec.p2p = 50e-6;

  using clock = std::chrono::steady_clock;
  r.wall_s = 1e300;
  parallelism::StepResult result;
  base::Simulator sim;
  base::Timeline timeline;
  for (int64_t k = 0; k < req.repeat; ++k) {
    const double cpu0 = ThreadCpuSeconds();
    const auto t0 = clock::now();
    parallelism::StepGraph g;
    const parallelism::StepError e = parallelism::BuildStepGraph(spec, g);
    if (e != parallelism::StepError::kNone) {
      r.status = Status::kInvalidInput;
      r.reason = parallelism::StepErrorText(e);
      return r;
    }
    const auto t1 = clock::now();
    sim.Run(g.graph, timeline);
    const auto t2 = clock::now();
    result = parallelism::Analyze(g, timeline);
    const auto t3 = clock::now();
    const double cpu = ThreadCpuSeconds() - cpu0;
    r.dependencies = g.graph.dependency_count();
    const double build = std::chrono::duration<double>(t1 - t0).count();
    const double simulate = std::chrono::duration<double>(t2 - t1).count();
    const double analyze = std::chrono::duration<double>(t3 - t2).count();
    if (build + simulate + analyze < r.wall_s) {
      r.wall_s = build + simulate + analyze;
      r.build_s = build;
      r.simulate_s = simulate;
      r.analyze_s = analyze;
      r.cpu_s = cpu;
    }
  }
  if (!result.complete) {
    r.status = Status::kInvalidInput;
    r.reason = "the simulated step did not finish (an internal error)";
    return r;
  }
  r.schedule = names[static_cast<size_t>(std::find(std::begin(all), std::end(all), sched) - std::begin(all))];
  r.stages = spec.stages;
  r.microbatches = spec.microbatches;
  r.chunks = spec.chunks;
  r.repeat = req.repeat;
  r.tasks = static_cast<uint64_t>(result.tasks);
  r.events = static_cast<uint64_t>(result.events);
  r.simulated_iteration_s = result.iteration;
  r.bubble_fraction = result.bubble_fraction;
  return r;
}

}  // namespace orrery
