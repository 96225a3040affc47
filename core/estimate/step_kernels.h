#pragma once
// Kernels a Megatron-Core training step runs beside the operators of
// models::LayerOps / HeadOps: the FP8 casts of Transformer Engine's linear
// layers and the fp32 vocabulary-parallel cross entropy. Pure functions of
// the device and the tensor sizes; no allocation (closed-form hot path).

#include "hardware/device_spec.h"
#include "models/transformer.h"

namespace orrery::engine {

// Bytes per element of Transformer Engine's fused cast-transpose of a BF16
// tensor into FP8 (transformer_engine/common/transpose/cast_transpose.cu,
// TE 1.x-2.x; TE user guide "Using FP8 with Transformer Engine"): Hopper's
// FP8 tensor-core GEMMs take only the TN layout, so a GEMM input is written
// twice in FP8, row-wise for the forward GEMM and column-wise (transposed)
// for the weight-gradient GEMM; the per-tensor amax of delayed scaling is
// reduced in the same kernel. Read 2 bytes, write 1 + 1.
inline constexpr double kFp8CastTransposeBytesPerElement = 4.0;

struct PassTimes {
  double fwd = 0;  // seconds in the forward pass, one microbatch
  double bwd = 0;  // seconds in the backward pass
};

// The casts around one FP8 linear GEMM (op: M x K input, K x N weight):
// forward, its M x K input cast and transposed
// (kFp8CastTransposeBytesPerElement); backward, the M x N output gradient
// cast and transposed for the data- and weight-gradient GEMMs (TE
// cast_transpose_dbias). The weights' own casts happen once per step
// (Megatron-Core passes is_first_microbatch to TE, which keeps the FP8
// weights for the other microbatches): 4 bytes per parameter per step,
// under 0.5 % of a step for every shipped row, and not counted.
PassTimes Fp8LinearCastTimes(const hardware::DeviceSpec& d, const models::Op& op);

// Megatron-Core's vocabulary-parallel cross entropy
// (megatron/core/tensor_parallel/cross_entropy.py, _VocabParallelCrossEntropy;
// the unfused path, TransformerConfig.cross_entropy_loss_fusion = False by
// default) over `tokens` x `vocab_shard` logits, as separate kernels, bytes
// per logit:
//   forward:  logits.float()           read 2, write 4     6
//             max over the vocabulary  read 4              4
//             logits -= max (in place) read 4, write 4     8
//             exp (in place)           read 4, write 4     8
//             sum of exp               read 4              4
//             softmax: div_ by the sum read 4, write 4     8   = 38
//   backward: grad.mul_(grad_output)   read 4, write 4     8
//             .float()'s backward      read 4, write 2     6   = 14
// (the per-token gather of the target logit and the all-reduces of one
// number per token are negligible). The logits GEMM itself is priced apart.
PassTimes VocabParallelCrossEntropyTimes(const hardware::DeviceSpec& d, double tokens, double vocab_shard);

}  // namespace orrery::engine
