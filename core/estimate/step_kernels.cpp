#include "core/estimate/step_kernels.h"

#include "hardware/device_model.h"

namespace orrery::engine {

PassTimes Fp8LinearCastTimes(const hardware::DeviceSpec& d, const models::Op& op) {
  PassTimes t;
  t.fwd = hardware::MemoryTime(d, kFp8CastTransposeBytesPerElement * op.m * op.k);
  t.bwd = hardware::MemoryTime(d, kFp8CastTransposeBytesPerElement * op.m * op.n);
  return t;
}

PassTimes VocabParallelCrossEntropyTimes(const hardware::DeviceSpec& d, double tokens, double vocab_shard) {
  const double logits = tokens * vocab_shard;
  PassTimes t;
  // Forward kernels, bytes per logit (step_kernels.h).
  for (const double bytes : {6.0, 4.0, 8.0, 8.0, 4.0, 8.0}) t.fwd += hardware::MemoryTime(d, bytes * logits);
  // Backward kernels.
  for (const double bytes : {8.0, 6.0}) t.bwd += hardware::MemoryTime(d, bytes * logits);
  return t;
}

}  // namespace orrery::engine
