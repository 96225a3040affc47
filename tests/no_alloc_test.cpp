// The closed-form estimator is the hot path of search: Run() must not
// allocate. This binary replaces the global operator new to count calls.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "core/estimate/training_estimator.h"

namespace {
std::atomic<long> g_allocations{0};
}

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The other forms on the same malloc/free pair, so memory from the library's
// nothrow new is never freed across allocators (AddressSanitizer's
// alloc-dealloc-mismatch, issue 20).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace orrery::engine {
namespace {

TEST(HotPath, RunDoesNotAllocate) {
  base::Diagnostics d;
  auto s = LoadScenarioFile("gpt3-175b-1024-a100", PresetStore(ORRERY_TEST_CONFIG_DIR), d);
  ASSERT_TRUE(s) << d.ToString();
  const TrainingEstimator est(s->model, s->system);
  parallelism::TrainingPlan plans[3] = {s->training, s->training, s->training};
  plans[1].recompute = parallelism::Recompute::kFull;
  plans[2].zero = 3;
  double sink = 0;
  const long before = g_allocations.load();
  for (int i = 0; i < 300; ++i) sink += est.Run(plans[i % 3], s->workload).iteration_s;
  const long after = g_allocations.load();
  EXPECT_EQ(after - before, 0);
  EXPECT_GT(sink, 0);
}

}  // namespace
}  // namespace orrery::engine
