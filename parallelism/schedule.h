#pragma once
// Closed-form pipeline schedules (per data-parallel replica).
//
// With p stages, m microbatches per iteration, v model chunks per device and
// t_f + t_b the time of one microbatch through one stage (all its chunks):
//   GPipe and 1F1B   bubble = (p - 1) * (t_f + t_b)          (Narayanan et al.
//                    2021, Sec. 2.2.1: bubble fraction (p-1)/m)
//   interleaved 1F1B bubble = (p - 1) / v * (t_f + t_b)      (Sec. 2.2.2:
//                    fraction (p-1)/(v m))
//   iteration        m * (t_f + t_b) + bubble

#include <cstdint>

#include "parallelism/plan_spec.h"

namespace orrery::parallelism {

// Bubble as a multiple of one microbatch's stage time (t_f + t_b).
inline double BubbleMicrobatches(const TrainingPlan& p) {
  const double pp = static_cast<double>(p.pp);
  if (p.pp <= 1) return 0;
  const double v = p.interleave > 1 ? static_cast<double>(p.interleave) : 1.0;
  return (pp - 1) / v;
}

// Point-to-point transfers on the critical path of one iteration: each of the
// v*m chunk-microbatches crosses a stage boundary forward and backward, and
// the warm-up/cool-down adds p - 1 of each.
inline double CriticalPathTransfers(const TrainingPlan& p, int64_t microbatches) {
  if (p.pp <= 1) return 0;
  const double v = p.interleave > 1 ? static_cast<double>(p.interleave) : 1.0;
  return 2 * (v * static_cast<double>(microbatches) + static_cast<double>(p.pp) - 1);
}

}  // namespace orrery::parallelism
