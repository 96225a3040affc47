#pragma once
// orrery::Bench and orrery::BenchEvent: how fast the estimators run on one
// core — closed-form estimates per second over varying plans of a scenario,
// and the event engine's events per second on a synthetic pipeline step.
// Benchmarks, not checks: their numbers depend on the machine.

#include <cstdint>
#include <string>

#include "core/api/common.h"

namespace orrery {

struct BenchRequest {
  ScenarioInput scenario;  // default (empty): the gpt3-175b-1024-a100 preset
  double seconds = 2;      // (0, 600]
};

struct BenchResult : ResultBase {
  std::string scenario, model, device;
  int64_t devices = 0;
  int64_t estimates = 0;
  double elapsed_s = 0;
  double mean_iteration_s = 0;  // checksum: the mean iteration time estimated
  // The same plans run against a workload prepared once per micro-batch
  // (TrainingEstimator::Prepare), as a search runs a block of plans.
  int64_t prepared_estimates = 0;
  double prepared_elapsed_s = 0;
  // This thread's CPU time over each half: on a loaded machine the wall time
  // also counts the time other processes ran, the CPU time does not.
  double cpu_s = 0, prepared_cpu_s = 0;
};

// Times TrainingEstimator::Run on this thread over six plans (micro-batch 1
// or 2, each recompute mode): half of `seconds` each from scratch, half
// against prepared workloads.
BenchResult Bench(const BenchRequest& req);

struct EventBenchRequest {
  std::string schedule = "interleaved";  // gpipe | 1f1b | interleaved | zb-h1 | v-min | v-half | v-zb | dualpipe
  int64_t stages = 64, microbatches = 1024, interleave = 2, repeat = 3;
};

struct EventBenchResult : ResultBase {
  std::string schedule;
  int64_t stages = 0, microbatches = 0, chunks = 0, repeat = 0;
  uint64_t tasks = 0, dependencies = 0, events = 0;
  double build_s = 0, simulate_s = 0, analyze_s = 0, wall_s = 0;  // the best run
  // CPU time of this thread over the best run (build + simulate + analyse):
  // on a loaded machine wall time counts the time other processes ran.
  double cpu_s = 0;
  double simulated_iteration_s = 0, bubble_fraction = 0;
};

// Builds, simulates and analyses a P-stage step of M microbatches (F 10 ms,
// B 20 ms per stage split over the chunks, W half of B, 50 us sends, 4 DP
// buckets); the fastest of `repeat` runs. kUsage for out-of-range fields or
// an unknown schedule (with "did you mean").
EventBenchResult BenchEvent(const EventBenchRequest& req);

}  // namespace orrery
