// The closed-form estimator is the hot path of search: Run() must not
// allocate. This binary links tests/support/count_allocations.cpp, which
// replaces the global operator new to count calls.

#include <gtest/gtest.h>

#include "core/estimate/training_estimator.h"
#include "tests/support/count_allocations.h"

namespace orrery::engine {
namespace {

// The counter itself: one call of the global operator new counts once (a
// direct call, which the compiler may not elide as it may a new-expression),
// so a zero below means no allocation rather than a counter not linked.
TEST(HotPath, AllocationCounterCountsOperatorNew) {
  static void* volatile sink = nullptr;
  const long before = test::AllocationCount();
  sink = ::operator new(64);
  const long after = test::AllocationCount();
  ::operator delete(sink);
  EXPECT_EQ(after - before, 1);
}

TEST(HotPath, RunDoesNotAllocate) {
  base::Diagnostics d;
  auto s = LoadScenarioFile("gpt3-175b-1024-a100", PresetStore(ORRERY_TEST_CONFIG_DIR), d);
  ASSERT_TRUE(s) << d.ToString();
  const TrainingEstimator est(s->model, s->system);
  parallelism::TrainingPlan plans[4] = {s->training, s->training, s->training, s->training};
  plans[1].recompute = parallelism::Recompute::kFull;
  plans[2].zero = 3;
  plans[3].offload_activation_layers = 4;  // the activation offload's window pricing
  double sink = 0;
  const long before = test::AllocationCount();
  for (int i = 0; i < 300; ++i) sink += est.Run(plans[i % 4], s->workload).iteration_s;
  const long after = test::AllocationCount();
  EXPECT_EQ(after - before, 0);
  EXPECT_GT(sink, 0);
}

}  // namespace
}  // namespace orrery::engine
