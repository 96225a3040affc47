#pragma once
// Kernels a Megatron-Core training step runs beside the operators of
// models::LayerOps / HeadOps: the FP8 casts of Transformer Engine's linear
// layers and the fp32 vocabulary-parallel cross entropy. Pure functions of
// the device and the tensor sizes; no allocation (closed-form hot path).

#include "hardware/device_spec.h"
#include "models/transformer.h"
#include "parallelism/plan_spec.h"

namespace orrery::engine {

// Whether the device's FP8 GEMMs take their operands in any layout
// (hardware::DeviceSpec::fp8_any_layout). Hopper's FP8 tensor-core GEMMs
// take only the TN layout, so a per-tensor FP8 operand needed transposed (the
// input and the output gradient in the weight-gradient GEMM) is written a
// second time, transposed. Blackwell's (sm_100) take every layout:
// Transformer Engine then writes only the row-wise copy under delayed and
// current scaling (transformer_engine/pytorch/csrc/quantizer.cpp,
// Float8Quantizer::create_tensor and Float8CurrentScalingQuantizer::create_tensor:
// with_transpose = columnwise_usage && !nvte_is_non_tn_fp8_gemm_supported();
// transformer_engine/common/transformer_engine.cpp: supported for compute
// capability 10.0-11.x and from 13.0).
inline bool Fp8GemmTakesAnyLayout(const hardware::DeviceSpec& d) { return d.fp8_any_layout; }

// Bytes per element of Transformer Engine's fused cast-transpose of a BF16
// tensor into FP8 (transformer_engine/common/transpose/cast_transpose.cu,
// TE 1.x-2.x; TE user guide "Using FP8 with Transformer Engine") on a
// TN-only device: a GEMM input is written twice in FP8, row-wise for the
// forward GEMM and column-wise (transposed) for the weight-gradient GEMM; the
// per-tensor amax of delayed scaling is reduced in the same kernel. Read 2
// bytes, write 1 + 1.
inline constexpr double kFp8CastTransposeBytesPerElement = 4.0;
// The same cast where FP8 GEMMs take any layout (Fp8GemmTakesAnyLayout): the
// row-wise copy only, read 2 bytes, write 1.
inline constexpr double kFp8CastBytesPerElement = 3.0;

// What each FP8 recipe (parallelism::Fp8Recipe) adds to that cast, per
// quantized element:
//   delayed   the scale comes from an amax history of earlier steps
//             (TE DelayedScaling); the new amax is reduced inside the
//             cast-transpose: nothing more.
//   current   the scale comes from this tensor's own amax
//             (TE Float8CurrentScalingQuantizer::quantize_impl,
//             transformer_engine/pytorch/csrc/quantizer.cpp): nvte_compute_amax
//             reads the BF16 tensor once more before the cast, a kernel of its
//             own: 2 B read (kFp8CurrentAmaxBytesPerElement). Its all-reduce of
//             the amax over the tensor-parallel group (sequence-parallel
//             inputs, 4 bytes) is latency only and not priced.
//   blockwise one fp32 scale per 1x128 tile of activations and gradients
//             (DeepSeek-V3 technical report, arXiv 2412.19437, Sec. 3.3.1;
//             TE Float8BlockScaling), the block amax reduced in the quantize
//             kernel, for the row-wise and the transposed copy:
//             2 x 4 / 128 B written. TE's Float8BlockQuantizer writes both
//             copies on every device (on Blackwell the GEMM then converts
//             them to MXFP8: gemm.cpp, convert_block_scaling_to_mxfp8_tensor,
//             a scale-conversion kernel per operand, not priced: no blockwise
//             row runs on Blackwell).
//   mxfp8     one E8M0 scale byte per 32 elements (OCP Microscaling Formats
//             v1.0, Sec. 5.1, Table 1: MXFP8 k = 32, X = E8M0), and Blackwell's
//             block-scaled MMA scales along K, so the weight-gradient GEMM needs
//             its own column-wise MX copy with its own scales on every device
//             (TE MXFP8Quantizer, rowwise + columnwise usage, one kernel:
//             transformer_engine/common/util/cast_kernels.cuh,
//             cast_mxfp8_2D_kernel<..., ROWWISE_SCALING, COLWISE_SCALING>):
//             read 2, write 1 + 1 + 2 x 1 / 32 B.
//   nvfp4     Transformer Engine's NVFP4BlockScaling (transformer_engine/
//             common/recipe/__init__.py: "a 2-level block scaling strategy":
//             one E4M3 scale per 16 consecutive values and a per-tensor fp32
//             scale; the row-wise and the column-wise copy both quantized
//             from the high-precision tensor; the column-wise copies of the
//             input and the output gradient, which the weight gradient
//             reads, through a 16 x 16 random Hadamard transform; stochastic
//             rounding on the gradient; the weights in 16 x 16 blocks): an
//             amax pass over the BF16 tensor first (the per-tensor scale
//             needs it before the cast; kFp8CurrentAmaxBytesPerElement), then
//             one kernel reading 2 B and writing 2 x (0.5 + 1/16) B, the
//             transform and the rounding inside it (no extra traffic priced).
inline constexpr double kFp8CurrentAmaxBytesPerElement = 2.0;
inline constexpr double kFp8BlockwiseScaleBytesPerElement = 2.0 * 4.0 / 128.0;
inline constexpr double kFp8MxScaleBytesPerElement = 2.0 * 1.0 / 32.0;
inline constexpr double kNvfp4QuantizeBytesPerElement = 2.0 + 2.0 * (0.5 + 1.0 / 16.0);

// The bytes per element of the quantize kernel itself (cast, transpose,
// scales) under a recipe, on a device whose FP8 GEMMs take any layout
// (`any_layout`, Fp8GemmTakesAnyLayout) or only TN; the current-scaling amax
// pass is a second kernel (Fp8LinearCastTimes).
inline constexpr double Fp8QuantizeBytesPerElement(parallelism::Fp8Recipe r, bool any_layout) {
  switch (r) {
    case parallelism::Fp8Recipe::kBlockwise:
      return kFp8CastTransposeBytesPerElement + kFp8BlockwiseScaleBytesPerElement;
    case parallelism::Fp8Recipe::kMxfp8:
      return kFp8CastTransposeBytesPerElement + kFp8MxScaleBytesPerElement;
    case parallelism::Fp8Recipe::kNvfp4:
      return kNvfp4QuantizeBytesPerElement;
    case parallelism::Fp8Recipe::kDelayed:
    case parallelism::Fp8Recipe::kCurrent: break;
  }
  return any_layout ? kFp8CastBytesPerElement : kFp8CastTransposeBytesPerElement;
}

// MXFP8 scale swizzles. Blackwell's block-scaled MMA reads its E8M0 scales
// in a tiled (128 x 4) layout, not the row-major one TE's quantize kernel
// writes, so before every MXFP8 GEMM Transformer Engine swizzles the scales
// of each operand in a kernel of its own (transformer_engine/pytorch/csrc/
// extensions/gemm.cpp: swizzle_scaling_factors(A_tensor, transa) and
// (B_tensor, !transb), TE 2.x; nvte_swizzle_scaling_factors,
// transformer_engine/common/swizzle/swizzle.cu), into a new buffer each
// call, weights included. A swizzle reads and writes the scales of the one
// copy the GEMM uses, 1 byte per 32 elements each way. Per linear layer
// (input M x K, weight K x N, output gradient M x N):
//   forward GEMM   input row-wise (M K / 32), weight row-wise (K N / 32)
//   dgrad GEMM     output gradient row-wise (M N / 32), weight column-wise (K N / 32)
//   wgrad GEMM     input column-wise (M K / 32), output gradient column-wise (M N / 32)
// two kernels a GEMM, six a layer and microbatch, as TE ran them for every
// shipped MXFP8 row. TE PR #2486 (Jan 2026) lets a quantized tensor carry
// swizzled scales (MXFP8Quantizer optimize_for_gemm), swizzled by a kernel
// right after the quantize, so a weight's are swizzled once a step (four
// kernels a layer and microbatch); only TE PR #3338 (Aug 2026) writes them
// from the quantize kernel itself. A plan does not say which TE it ran, so
// the six are priced. Cross-check: TE PR #3519 measured the existing
// swizzle path at 2.9-11.1 us a tensor on a GB200 (64 x 64 to
// 16384 x 4128); priced, a 16384 x 4128 tensor's scales are
// 2 x 2,113,536 B / (0.81 x 8 TB/s) + 4 us = 4.7 us (b200.yaml's memory
// curve and kernel floor).
inline constexpr double kFp8MxSwizzleBytesPerScale = 2.0;  // read 1 + write 1

// The datatype a training GEMM of plan datatype `dt` runs in. Under FP8
// only Transformer Engine's linear layers quantize (fp8_autocast reaches TE
// modules only): the dot-product attention stays in BF16 (TE recipes default
// fp8_dpa = False and fp8_mha = False, transformer_engine.common.recipe, TE
// 2.x API reference), and so does the MoE router's gating GEMM, which
// Megatron-Core runs as its own autograd function in the input's datatype
// (megatron/core/transformer/moe/router.py, Router.gating: router_dtype =
// input.dtype unless moe_router_dtype is fp32/fp64; moe_utils.py,
// RouterGatingLinearFunction: torch.mm / te_general_gemm in router_dtype),
// and casts nothing to FP8 (models::Op::router).
inline hardware::DataType TrainingGemmDataType(const models::Op& op, hardware::DataType dt) {
  if (dt == hardware::DataType::kFp8 && (op.attention_core || op.router)) return hardware::DataType::kBf16;
  return dt;
}
// The same under the plan's recipe: NVFP4BlockScaling runs the linear
// layers' FP8 GEMMs in FP4 (E2M1) on the block-scaled tensor cores, at the
// device's FP4 rate and curve (hardware::GemmTime; TE's recipe keeps
// fp8_dpa and fp8_mha off: "Not applying quantization to attention for
// now").
inline hardware::DataType TrainingGemmDataType(const models::Op& op, hardware::DataType dt,
                                               parallelism::Fp8Recipe recipe) {
  const hardware::DataType g = TrainingGemmDataType(op, dt);
  return g == hardware::DataType::kFp8 && recipe == parallelism::Fp8Recipe::kNvfp4 ? hardware::DataType::kFp4 : g;
}

// An FP8 linear GEMM under the MXFP8 recipe: its operands carry one scale
// per 32 elements and it runs at the device's gemm_efficiency_mxfp8
// (hardware::GemmTime's `mxfp8`). Every FP8 GEMM but the router's, which
// stays in the input's datatype (TrainingGemmDataType).
inline bool Mxfp8LinearGemm(const models::Op& op, hardware::DataType dt, parallelism::Fp8Recipe recipe) {
  return dt == hardware::DataType::kFp8 && !op.router && recipe == parallelism::Fp8Recipe::kMxfp8;
}

struct PassTimes {
  double fwd = 0;  // seconds in the forward pass, one microbatch
  double bwd = 0;  // seconds in the backward pass
};

// Seconds of the MXFP8 scale swizzles around one linear layer's GEMMs (op:
// M x K input, K x N weight; kFp8MxSwizzleBytesPerScale): two kernels
// forward, four backward, each MemoryTime of its own bytes; zero under any
// other recipe.
PassTimes Fp8MxSwizzleTimes(const hardware::DeviceSpec& d, const models::Op& op, parallelism::Fp8Recipe recipe);

// The casts around one FP8 linear GEMM (op: M x K input, K x N weight)
// under `recipe`: forward, its M x K input quantized in the layouts the
// device's GEMMs need (Fp8QuantizeBytesPerElement, Fp8GemmTakesAnyLayout),
// after an amax pass over it under current scaling
// (kFp8CurrentAmaxBytesPerElement, its own kernel); backward, the M x N
// output gradient the same way for the data- and weight-gradient GEMMs (TE
// cast_transpose_dbias); under MXFP8, the scale swizzles before each of the
// three GEMMs (Fp8MxSwizzleTimes). The weights' own casts happen once per step
// (Megatron-Core passes is_first_microbatch to TE, which keeps the FP8
// weights for the other microbatches): 4 bytes per parameter per step,
// under 0.5 % of a step for every shipped row, and not counted.
PassTimes Fp8LinearCastTimes(const hardware::DeviceSpec& d, const models::Op& op, parallelism::Fp8Recipe recipe);

// The casts around one FP8 grouped expert GEMM of a MoE layer (op: the rows
// of all `local_experts` of the device, models::LayerOps' expert_up /
// expert_down). Transformer Engine's GroupedLinear quantizes its input
// forward (transformer_engine/pytorch/module/grouped_linear.py,
// _GroupedLinear.forward: tex.split_quantize(inp_view, m_splits,
// input_quantizers), row-wise and, for the weight gradient, column-wise) and
// its output gradient backward (the same split quantize of grad_output in
// _GroupedLinear.backward): the bytes per element of a linear layer's casts
// (Fp8LinearCastTimes without the MXFP8 scale swizzles: how TE's grouped
// GEMM swizzles its per-expert scales was not established, and they are not
// priced), over the Q rows the experts run. split_quantize runs
// one fused kernel for all splits only under delayed scaling
// (transformer_engine/pytorch/csrc/extensions/cast.cpp,
// multi_tensor_quantize_impl: nvte_multi_cast_transpose, "Currently only
// have fused kernel for FP8 delayed scaling"); under current scaling,
// blockwise and MXFP8 it quantizes each local expert's split by kernels of
// its own ("Quantize kernels individually"), so each of the E splits of Q / E
// rows pays its own kernel floor: E x Fp8LinearCastTimes of 1/E of the rows.
// (The current-scaling scale computation between amax and cast, one element,
// is not counted, as for a linear layer.)
PassTimes Fp8GroupedCastTimes(const hardware::DeviceSpec& d, const models::Op& op, parallelism::Fp8Recipe recipe,
                              double local_experts);

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
// The table's bytes per logit, forward and backward (what a per-operator
// breakdown shows beside the seconds).
inline constexpr double kVocabParallelCrossEntropyFwdBytesPerLogit = 6 + 4 + 8 + 8 + 4 + 8;
inline constexpr double kVocabParallelCrossEntropyBwdBytesPerLogit = 8 + 6;

// The training loss as a framework's kernels move it
// (parallelism::LossKernel), over `tokens` x `vocab_shard` logits, bytes per
// logit (docs/loss-path.md cites each framework's code):
//   kMegatronFp32: VocabParallelCrossEntropyTimes above, 38 forward, 14 backward.
//   kTorchFp32: F.cross_entropy (= log_softmax + nll_loss,
//     torch/nn/functional.py) on logits upcast to fp32, by an explicit
//     .float() (torchtitan) or by autocast, whose fp32 list holds
//     cross_entropy, log_softmax and nll_loss (PyTorch docs, amp.rst, "CUDA
//     Ops that can autocast to float32"):
//       forward:  cast bf16 -> fp32                read 2, write 4    6
//                 log_softmax (fp32 out)           read 4, write 4    8   = 14
//                 (nll_loss gathers one logit a token: negligible)
//       backward: nll_loss_backward: zero-filled
//                 fp32 grad, one -1/N a token       write 4            4
//                 _log_softmax_backward_data       read 4 + 4, write 4 12
//                 the cast's backward fp32 -> bf16 read 4, write 2     6   = 22
//   kFusedBf16: flash-attn's cross entropy (flash_attn/losses/cross_entropy.py:
//     the xentropy CUDA extension adapted from Apex in flash-attn 1.x, the
//     Triton kernel of flash_attn/ops/triton/cross_entropy.py in 2.x), on
//     the bf16 logits with fp32 arithmetic in registers:
//       forward:  read the logits, write one loss and one lse a token      2
//       backward: read the logits (and the lse), write their bf16 gradient
//                 (a new tensor: inplace_backward False by default)         4
// Each kernel is counted reading its input and writing its output once, as
// for Megatron-Core's table (a softmax over a row too long for shared memory
// may read it again from L2 or HBM; not counted).
PassTimes LossTimes(const hardware::DeviceSpec& d, double tokens, double vocab_shard, parallelism::LossKernel kernel);
inline constexpr double kTorchFp32CrossEntropyFwdBytesPerLogit = 6 + 8;
inline constexpr double kTorchFp32CrossEntropyBwdBytesPerLogit = 4 + 12 + 6;
inline constexpr double kFusedBf16CrossEntropyFwdBytesPerLogit = 2;
inline constexpr double kFusedBf16CrossEntropyBwdBytesPerLogit = 4;
// The bytes per logit of a path, forward and backward (for a per-operator
// breakdown beside the seconds).
inline constexpr double LossFwdBytesPerLogit(parallelism::LossKernel kernel) {
  return kernel == parallelism::LossKernel::kTorchFp32   ? kTorchFp32CrossEntropyFwdBytesPerLogit
         : kernel == parallelism::LossKernel::kFusedBf16 ? kFusedBf16CrossEntropyFwdBytesPerLogit
                                                         : kVocabParallelCrossEntropyFwdBytesPerLogit;
}
inline constexpr double LossBwdBytesPerLogit(parallelism::LossKernel kernel) {
  return kernel == parallelism::LossKernel::kTorchFp32   ? kTorchFp32CrossEntropyBwdBytesPerLogit
         : kernel == parallelism::LossKernel::kFusedBf16 ? kFusedBf16CrossEntropyBwdBytesPerLogit
                                                         : kVocabParallelCrossEntropyBwdBytesPerLogit;
}

}  // namespace orrery::engine
