#include "core/estimate/result_invariants.h"

#include <cmath>
#include <limits>

#include "core/estimate/training_estimator.h"

namespace orrery::engine {
namespace {

// Finite and not negative: NaN fails both comparisons, -inf the first,
// +inf the second.
bool NonNegative(double v) { return v >= 0 && v <= std::numeric_limits<double>::max(); }
bool Fraction(double v) { return v >= 0 && v <= 1; }

}  // namespace

const char* TrainingInvariantViolation(const TrainingEstimate& e) {
  // Plans rejected before costing (device count, splits, no network) carry
  // no numbers to check.
  if (e.infeasible != Infeasible::kNone && e.infeasible != Infeasible::kOutOfMemory) return nullptr;
  const TimeBreakdown& t = e.time;
  const double parts[] = {t.forward,   t.backward,  t.recompute, t.tp_comm,
                          t.cp_comm,   t.ep_comm,   t.pp_bubble, t.pp_p2p,
                          t.dp_comm,   t.optimizer, t.offload};
  double sum = 0;
  for (double p : parts) {
    if (!NonNegative(p)) return "a part of the time breakdown is negative or not finite";
    sum += p;
  }
  if (!std::isfinite(e.iteration_s) || e.iteration_s <= 0)
    return "the iteration time is not a positive finite number";
  if (!NonNegative(t.total)) return "the breakdown total is negative or not finite";
  // The parts are summed in one order by the estimator and another here:
  // allow rounding, nothing more.
  if (std::fabs(sum - t.total) > 1e-9 * t.total)
    return "the time breakdown does not add up to its total";
  const parallelism::MemoryBreakdown& m = e.memory;
  for (double b : {m.weights, m.gradients, m.optimizer, m.activations, m.temporary, e.memory_capacity})
    if (!NonNegative(b)) return "a memory figure is negative or not finite";
  for (double v : {e.model_flops, e.hardware_flops, e.tokens_per_s, e.tflops_per_device, e.energy_j,
                   e.cost_usd, e.train_time_s, e.train_device_hours, e.train_energy_j,
                   e.train_cost_usd})
    if (!NonNegative(v)) return "a FLOP, throughput, energy or cost figure is negative or not finite";
  if (e.hardware_flops < e.model_flops) return "hardware FLOPs are below model FLOPs";
  // MFU and HFU count attention's full s x s product, of which a causal
  // kernel runs half: at long sequences, where attention is most of the
  // FLOPs, they may pass 1, never 2. The causal MFU counts what runs.
  if (!Fraction(e.mfu_causal)) return "the causal MFU is outside [0, 1]";
  if (!(e.mfu >= e.mfu_causal && e.mfu <= 2 * e.mfu_causal) || !(e.hfu >= 0 && e.hfu <= 2))
    return "MFU or HFU is outside what the causal MFU allows";
  return nullptr;
}

}  // namespace orrery::engine
