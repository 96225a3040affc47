// Google Benchmark programs for the hot paths (issue 19); see README.md.

#include <benchmark/benchmark.h>

#include <string>

#include "core/api/bench.h"
#include "core/api/infer.h"
#include "core/api/search.h"
#include "core/estimate/training_estimator.h"

namespace orrery {
namespace {

const std::string kSource = ORRERY_BENCH_SOURCE_DIR;
const std::string kConfigs = kSource + "/configs";

engine::Scenario LoadOrDie(const std::string& name) {
  base::Diagnostics d;
  auto s = engine::LoadScenarioFile(name, engine::PresetStore(kConfigs), d);
  if (!s) {
    std::fprintf(stderr, "%s\n", d.ToString().c_str());
    std::abort();
  }
  return *s;
}

// Six plans the way `orrery bench` varies them: micro-batch 1 or 2, each
// recompute mode.
void SixPlans(const engine::Scenario& s, parallelism::TrainingPlan (&plans)[6]) {
  for (int i = 0; i < 6; ++i) {
    plans[i] = s.training;
    plans[i].micro_batch = 1 << (i % 2);
    plans[i].recompute = static_cast<parallelism::Recompute>(i % 3);
  }
}

void ClosedFormRun(benchmark::State& state) {
  const engine::Scenario s = LoadOrDie("gpt3-175b-1024-a100");
  const engine::TrainingEstimator est(s.model, s.system);
  parallelism::TrainingPlan plans[6];
  SixPlans(s, plans);
  int64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(est.Run(plans[i++ % 6], s.workload).iteration_s);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(ClosedFormRun)->Name("ClosedForm/run");

void ClosedFormPrepared(benchmark::State& state) {
  const engine::Scenario s = LoadOrDie("gpt3-175b-1024-a100");
  const engine::TrainingEstimator est(s.model, s.system);
  parallelism::TrainingPlan plans[6];
  SixPlans(s, plans);
  // One prepared workload per micro-batch size (plans 0 and 1 cover both).
  const engine::PreparedWorkload prepared[2] = {est.Prepare(plans[0], s.workload),
                                                est.Prepare(plans[1], s.workload)};
  int64_t i = 0;
  for (auto _ : state) {
    const int64_t k = i++ % 6;
    benchmark::DoNotOptimize(est.Run(plans[k], s.workload, prepared[k % 2]).iteration_s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(ClosedFormPrepared)->Name("ClosedForm/prepared");

void SearchMegatron(benchmark::State& state) {
  for (auto _ : state) {
    SearchRequest req;
    req.scenario = ScenarioInput::File(kConfigs + "/sweeps/megatron-1t-4096-a100.yaml");
    req.scenario.config_dir = kConfigs;
    req.round_batch = true;
    req.top = 3;
    req.threads = 2;
    const SearchResult r = Search(req);
    if (!r.ok()) state.SkipWithError(r.reason.c_str());
    state.counters["evaluated"] = static_cast<double>(r.stats.evaluated);
  }
}
BENCHMARK(SearchMegatron)->Name("Search/megatron_1t_4096")->Unit(benchmark::kMillisecond)->UseRealTime();

void Serving(benchmark::State& state) {
  for (auto _ : state) {
    InferRequest req;
    req.scenario = ScenarioInput::File("llama2-70b-h100-infer",
                                       {"inference.requests=" + std::to_string(state.range(0))});
    req.scenario.config_dir = kConfigs;
    req.mode = InferMode::kServe;
    const InferResult r = Infer(req);
    if (!r.ok()) state.SkipWithError(r.reason.c_str());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(Serving)->Name("Serving/llama2_70b")->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void EventEngine(benchmark::State& state) {
  for (auto _ : state) {
    EventBenchRequest req;
    req.repeat = 1;
    const EventBenchResult r = BenchEvent(req);
    if (!r.ok()) state.SkipWithError(r.reason.c_str());
    state.counters["events"] = static_cast<double>(r.events);
  }
}
BENCHMARK(EventEngine)->Name("EventEngine/interleaved_64x1024x2")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery

BENCHMARK_MAIN();
