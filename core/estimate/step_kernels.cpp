#include "core/estimate/step_kernels.h"

#include <algorithm>

#include "hardware/device_model.h"

namespace orrery::engine {

namespace {

// The quantize kernels alone (cast, transpose, scales; the current-scaling
// amax pass) around one FP8 GEMM: what a linear layer and a grouped expert
// GEMM share.
PassTimes Fp8QuantizeTimes(const hardware::DeviceSpec& d, const models::Op& op, parallelism::Fp8Recipe recipe) {
  const double per = Fp8QuantizeBytesPerElement(recipe, Fp8GemmTakesAnyLayout(d));
  const double in = op.m * op.k, grad = op.m * op.n;
  PassTimes t;
  t.fwd = hardware::MemoryTime(d, per * in);
  t.bwd = hardware::MemoryTime(d, per * grad);
  if (recipe == parallelism::Fp8Recipe::kCurrent || recipe == parallelism::Fp8Recipe::kNvfp4) {
    t.fwd += hardware::MemoryTime(d, kFp8CurrentAmaxBytesPerElement * in);
    t.bwd += hardware::MemoryTime(d, kFp8CurrentAmaxBytesPerElement * grad);
  }
  return t;
}

}  // namespace

PassTimes Fp8MxSwizzleTimes(const hardware::DeviceSpec& d, const models::Op& op, parallelism::Fp8Recipe recipe) {
  PassTimes t;
  if (recipe != parallelism::Fp8Recipe::kMxfp8 && recipe != parallelism::Fp8Recipe::kNvfp4) return t;
  // Bytes of one swizzle: the scales of one operand copy (one per 32
  // elements; NVFP4's one per 16, which TE's GEMM swizzles the same way),
  // read and written.
  const double block = recipe == parallelism::Fp8Recipe::kNvfp4 ? 16.0 : 32.0;
  const auto swizzle = [&](double elements) {
    return hardware::MemoryTime(d, kFp8MxSwizzleBytesPerScale * elements / block);
  };
  const double input = op.m * op.k, weight = op.k * op.n, grad = op.m * op.n;
  t.fwd = swizzle(input) + swizzle(weight);                         // forward GEMM
  t.bwd = swizzle(grad) + swizzle(weight) + swizzle(input) + swizzle(grad);  // dgrad, wgrad
  return t;
}

PassTimes Fp8LinearCastTimes(const hardware::DeviceSpec& d, const models::Op& op, parallelism::Fp8Recipe recipe) {
  PassTimes t = Fp8QuantizeTimes(d, op, recipe);
  const PassTimes swizzle = Fp8MxSwizzleTimes(d, op, recipe);
  t.fwd += swizzle.fwd;
  t.bwd += swizzle.bwd;
  return t;
}

PassTimes Fp8GroupedCastTimes(const hardware::DeviceSpec& d, const models::Op& op, parallelism::Fp8Recipe recipe,
                              double local_experts) {
  const double splits = recipe == parallelism::Fp8Recipe::kDelayed ? 1.0 : std::max(1.0, local_experts);
  models::Op one = op;
  one.m = op.m / splits;
  PassTimes t = Fp8QuantizeTimes(d, one, recipe);
  t.fwd *= splits;
  t.bwd *= splits;
  return t;
}

PassTimes VocabParallelCrossEntropyTimes(const hardware::DeviceSpec& d, double tokens, double vocab_shard) {
  const double logits = tokens * vocab_shard;
  // The kernels move 4, 6 or 8 bytes per logit (step_kernels.h): each size
  // is priced once (MemoryTime is a pure function of its arguments) and
  // summed in the kernels' order.
  const double k4 = hardware::MemoryTime(d, 4.0 * logits);
  const double k6 = hardware::MemoryTime(d, 6.0 * logits);
  const double k8 = hardware::MemoryTime(d, 8.0 * logits);
  PassTimes t;
  // Forward kernels, bytes per logit 6, 4, 8, 8, 4, 8.
  for (const double k : {k6, k4, k8, k8, k4, k8}) t.fwd += k;
  // Backward kernels: 8, 6.
  for (const double k : {k8, k6}) t.bwd += k;
  return t;
}

PassTimes LossTimes(const hardware::DeviceSpec& d, double tokens, double vocab_shard,
                    parallelism::LossKernel kernel) {
  const double logits = tokens * vocab_shard;
  PassTimes t;
  switch (kernel) {
    case parallelism::LossKernel::kMegatronFp32:
      return VocabParallelCrossEntropyTimes(d, tokens, vocab_shard);
    case parallelism::LossKernel::kTorchFp32:
      // Forward kernels 6, 8; backward 4, 12, 6 bytes per logit (step_kernels.h).
      for (const double b : {6.0, 8.0}) t.fwd += hardware::MemoryTime(d, b * logits);
      for (const double b : {4.0, 12.0, 6.0}) t.bwd += hardware::MemoryTime(d, b * logits);
      return t;
    case parallelism::LossKernel::kFusedBf16:
      t.fwd = hardware::MemoryTime(d, kFusedBf16CrossEntropyFwdBytesPerLogit * logits);
      t.bwd = hardware::MemoryTime(d, kFusedBf16CrossEntropyBwdBytesPerLogit * logits);
      return t;
  }
  return t;
}

}  // namespace orrery::engine
