#pragma once
// The invariants every training estimate keeps, checked once by the library
// before any face (CLI, GUI, result store, validation) sees a result:
//   - times, memory, FLOPs, energy and cost are finite and not negative;
//   - MFU and HFU are fractions in [0, 1];
//   - the time breakdown adds up to the iteration time, and the iteration
//     time is positive when the plan ran (feasible or only short of memory).
// A violation is a defect of the estimator, never a number to print: Run()
// turns it into Infeasible::kInvalidResult, and ExplainInfeasible names the
// broken rule and the inputs that produced it.
//
// Allocation-free (a string literal or nullptr), so it runs on the hot path.

namespace orrery::engine {

struct TrainingEstimate;

// The first invariant `e` breaks, or nullptr when it keeps them all.
const char* TrainingInvariantViolation(const TrainingEstimate& e);

}  // namespace orrery::engine
