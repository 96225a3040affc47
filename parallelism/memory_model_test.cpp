#include "parallelism/memory_model.h"

#include <gtest/gtest.h>

#include "tests/support/model_shapes.h"

namespace orrery::parallelism {
namespace {

models::ModelSpec Gpt3() {
  models::ModelSpec m = test::Gpt(96, 12288, 96);
  // Korthikanti et al. 2022 count the masks of Megatron-LM's GPT dropout.
  m.hidden_dropout = 0.1;
  m.attention_dropout = 0.1;
  return m;
}

TrainingPlan Plan(int64_t tp, bool sp, Recompute rc) {
  TrainingPlan p;
  p.tp = tp;
  p.sequence_parallel = sp;
  p.recompute = rc;
  p.attention = Attention::kMaterialized;
  return p;
}

// Korthikanti et al. 2022, Table 2, for one GPT-3 layer, s = 2048, b = 1:
// sbh = 2048 * 12288 = 25,165,824 and 5as/h = 5 * 96 * 2048 / 12288 = 80.
constexpr double kSbh = 2048.0 * 12288.0;

TEST(ActivationMemory, KorthikantiTable2) {
  const auto m = Gpt3();
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, Plan(1, false, Recompute::kNone), 1, 2048), kSbh * (34 + 80));
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, Plan(8, false, Recompute::kNone), 1, 2048),
                   kSbh * (10 + 24.0 / 8 + 80.0 / 8));
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, Plan(8, true, Recompute::kNone), 1, 2048), kSbh * (34 + 80) / 8);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, Plan(8, true, Recompute::kSelective), 1, 2048), kSbh * 34 / 8);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, Plan(8, false, Recompute::kFull), 1, 2048), 2 * kSbh);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, Plan(8, true, Recompute::kFull), 1, 2048), 2 * kSbh / 8);
  // FlashAttention keeps no s x s tensor: like selective recompute.
  TrainingPlan flash = Plan(8, true, Recompute::kNone);
  flash.attention = Attention::kFlash;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, flash, 1, 2048), kSbh * 34 / 8);
}

// Issue 15: a model that does not drop keeps no dropout masks. One GPT-3
// layer, no parallelism, materialised attention, s = 2048, b = 1: without
// hidden dropout the two 1-byte residual masks (2 sbh) go, 34 -> 32 sbh;
// without attention dropout the scores keep only the softmax output (2 of
// Korthikanti's 5 bytes per score), 5as/h = 80 -> 2as/h = 32 sbh.
// (34 + 80) sbh = 2,868,903,936 B; (32 + 32) sbh = 1,610,612,736 B.
TEST(ActivationMemory, NoDropoutNoMasks) {
  auto m = Gpt3();
  const TrainingPlan p = Plan(1, false, Recompute::kNone);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 1, 2048), 2868903936.0);
  m.hidden_dropout = 0;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 1, 2048), kSbh * (32 + 80));
  m.attention_dropout = 0;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 1, 2048), 1610612736.0);
  // FlashAttention keeps no scores either way: 32 sbh.
  TrainingPlan flash = p;
  flash.attention = Attention::kFlash;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, flash, 1, 2048), kSbh * 32);
}

// Issue 15: FP8 (Transformer Engine) keeps each linear layer's input for
// the weight gradient as its 1-byte FP8 copy. One GPT-3 layer with
// FlashAttention, tp 8 with SP, against Korthikanti's 34 sbh: the QKV and
// MLP inputs 2 + 2 -> 1 + 1 sbh (-2), the down projection's input 2 x 4h ->
// 1 x 4h (-4), plus the FP8 copy of the attention output beside the BF16
// one FlashAttention keeps (+1): 29 sbh / 8. Full recompute keeps only the
// layer input, as in BF16.
TEST(ActivationMemory, Fp8KeepsTheLinearInputsInOneByte) {
  const auto m = Gpt3();
  TrainingPlan p = Plan(8, true, Recompute::kNone);
  p.attention = Attention::kFlash;
  p.precision = hardware::DataType::kFp8;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 1, 2048), kSbh * 29 / 8);
  p.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 1, 2048), 2 * kSbh / 8);
}

// Issue 15: NVFP4 keeps each linear layer's input for the weight gradient
// as its column-wise NVFP4 copy, 0.5 + 1/16 = 0.5625 B an element
// (SavedQuantizedBytes). The GPT-3 layer above: the QKV and MLP inputs
// 2 + 2 -> 1.125 sbh (-2.875), the down projection's input 2 x 4h -> 2.25
// sbh (-5.75), the output projection's copy beside the BF16 attention output
// +0.5625: 34 - 2.875 - 5.75 + 0.5625 = 25.9375 sbh / 8.
TEST(ActivationMemory, Nvfp4KeepsTheLinearInputsInFourBitsAndAScale) {
  const auto m = Gpt3();
  TrainingPlan p = Plan(8, true, Recompute::kNone);
  p.attention = Attention::kFlash;
  p.precision = hardware::DataType::kFp8;
  p.fp8_recipe = Fp8Recipe::kNvfp4;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 1, 2048), kSbh * 25.9375 / 8);
  p.fp8_recipe = Fp8Recipe::kMxfp8;  // its scales not counted: FP8's 29 sbh
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 1, 2048), kSbh * 29 / 8);
}

// Issue 15: recompute full with recompute_interval 2 (torchtitan's
// selective layer checkpointing, every 2nd block) on the Korthikanti GPT-3
// layer above, tp 8 with SP, materialised attention: a recomputed layer keeps
// its input, 2 sbh / 8; the other keeps everything, (34 + 80) sbh / 8. Per
// layer on average (2 + 114) / 16 = 7.25 sbh; interval 1 is full recompute
// (0.25 sbh) and none 14.25 sbh. Four layers, one microbatch in flight, one
// layer's full activations while it is recomputed:
//   4 x 7.25 + 14.25 = 43.25 sbh   (full: 4 x 0.25 + 14.25 = 15.25 sbh,
//                                    none: 4 x 14.25 = 57 sbh).
TEST(ActivationMemory, EveryOtherLayerRecomputedKeepsHalfTheLayersWhole) {
  const auto m = Gpt3();
  TrainingPlan p = Plan(8, true, Recompute::kFull);
  p.recompute_interval = 2;
  EXPECT_NEAR(LayerActivationBytes(m, p, 1, 2048), kSbh * 7.25, 1e-12 * kSbh * 7.25);
  MemoryInputs in;
  in.layers_on_device = 4;
  in.seq = 2048;
  EXPECT_NEAR(DeviceMemory(m, p, in).activations, kSbh * 43.25, 1e-12 * kSbh * 43.25);
  p.recompute_interval = 1;
  EXPECT_NEAR(DeviceMemory(m, p, in).activations, kSbh * 15.25, 1e-12 * kSbh * 15.25);
  p.recompute = Recompute::kNone;
  p.recompute_interval = 2;  // read only with recompute full
  EXPECT_NEAR(DeviceMemory(m, p, in).activations, kSbh * 57, 1e-12 * kSbh * 57);
  // Every 4th layer: (2 + 3 x 114) / 32 sbh.
  p.recompute = Recompute::kFull;
  p.recompute_interval = 4;
  EXPECT_NEAR(LayerActivationBytes(m, p, 1, 2048), kSbh * (2 + 3 * 114) / 32, 1e-12 * kSbh);
}

// Activation offload (training.offload_activation_layers, Megatron-Core
// --cpu-offloading-num-layers): the offloaded layers' activations leave the
// device and nothing else moves. The GPT-3 layer at tp 8 with SP and
// materialised scores keeps (34 + 80) / 8 = 14.25 sbh; four layers, one
// microbatch in flight: 57 sbh. Offloading 3 of them leaves 1 x 14.25 sbh on
// the device and puts 3 x 14.25 = 42.75 sbh in host memory.
TEST(ActivationMemory, OffloadedLayersLeaveTheDevice) {
  const auto m = Gpt3();
  TrainingPlan p = Plan(8, true, Recompute::kNone);
  MemoryInputs in;
  in.layers_on_device = 4;
  in.seq = 2048;
  const MemoryBreakdown kept = DeviceMemory(m, p, in);
  EXPECT_NEAR(kept.activations, kSbh * 57, 1e-12 * kSbh * 57);
  EXPECT_DOUBLE_EQ(kept.host_activations, 0);
  p.offload_activation_layers = 3;
  const MemoryBreakdown off = DeviceMemory(m, p, in);
  EXPECT_NEAR(off.activations, kSbh * 14.25, 1e-12 * kSbh * 57);
  EXPECT_NEAR(off.host_activations, kSbh * 42.75, 1e-12 * kSbh * 57);
  EXPECT_NEAR(kept.total() - off.total(), kSbh * 42.75, 1e-12 * kSbh * 57);
  EXPECT_DOUBLE_EQ(off.weights, kept.weights);
  EXPECT_DOUBLE_EQ(off.temporary, kept.temporary);
}

// Issue 15: torchtitan's op-level selective activation checkpointing
// (recompute op) on one Llama 3 8B layer (h 4096, 32 heads of 128, 8 KV
// heads, SwiGLU 14336, no dropout), b 1, s 8192, tp 1, flash attention:
// sbh = 8192 x 4096 = 33,554,432. Kept, in bf16: the block's input 2 sbh,
// wq's output 2 sbh, wv's 0.5 sbh, the attention output 2 sbh and its fp32
// logsumexp 4 x 32 x 8192 = 1,048,576 B, w1's output 7 sbh, w2's 2 sbh:
//   15.5 sbh + 1,048,576 = 520,093,696 + 1,048,576 = 521,142,272 B
// (models::LayerOps' policy). Without recompute the layer keeps 8 sbh outside
// the TP region and (4 ad + 4 gd + 6 f) sb = 106,496 sb = 26 sbh inside:
// 34 sbh = 1,140,850,688 B. Four layers and one microbatch in flight keep
// 4 x 521,142,272 B, plus the layer in its backward pass holding what it
// recomputed, 1,140,850,688 - 521,142,272 = 619,708,416 B: 2,704,277,504 B.
TEST(ActivationMemory, OpLevelSacKeepsTheSavedMatmulAndAttentionOutputs) {
  const models::ModelSpec m = test::Llama(32, 4096, 32, 8, 14336, 128256);
  TrainingPlan p = Plan(1, false, Recompute::kNone);
  p.attention = Attention::kFlash;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 1, 8192), 1'140'850'688.0);
  p.recompute = Recompute::kOp;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 1, 8192), 521'142'272.0);
  MemoryInputs in;
  in.layers_on_device = 4;
  in.seq = 8192;
  EXPECT_DOUBLE_EQ(DeviceMemory(m, p, in).activations, 2'704'277'504.0);
}

// Rajbhandari et al. 2020 (ZeRO), Fig. 1: 7.5 B parameters, 64-way data
// parallel, mixed-precision Adam (K = 12) with 16-bit gradients (2Ψ): 120 GB
// baseline, 31.4 GB with P_os (ZeRO-1), 16.6 GB with P_os+g (ZeRO-2), 1.9 GB
// with P_os+g+p (ZeRO-3). The paper's gradients are the plan's with
// grad_reduce_fp32 off.
TEST(ModelStateMemory, ZeroPaperFigure1) {
  const auto m = Gpt3();
  MemoryInputs in;
  in.params_on_device = 7.5e9;
  in.layers_on_device = 0;  // model states only
  in.dp = 64;
  in.seq = 2048;
  TrainingPlan p;
  p.grad_reduce_fp32 = false;
  const double expected[4] = {120e9, 31.4e9, 16.6e9, 1.875e9};
  for (int z = 0; z <= 3; ++z) {
    p.zero = z;
    const MemoryBreakdown b = DeviceMemory(m, p, in);
    EXPECT_NEAR(b.weights + b.gradients + b.optimizer, expected[z], 0.06e9) << "ZeRO-" << z;
  }
}

// The same model with the default fp32 gradient buffer (bf16 training as
// Megatron-LM runs it, grad_reduce_fp32 on): Megatron-LM's own estimate,
// megatron/training/theoretical_memory_usage.py, counts 18 bytes per
// parameter, 6 + 12 / dp with the distributed optimizer (2 of bf16 weights,
// 4 of fp32 gradients, 12 of optimizer state):
//   ZeRO-0: 18 x 7.5e9 = 135e9;
//   ZeRO-1: (6 + 12 / 64) x 7.5e9 = 46.40625e9;
//   ZeRO-2: (2 + 16 / 64) x 7.5e9 = 16.875e9;
//   ZeRO-3: unchanged, (2 + 2 + 12) / 64 x 7.5e9 = 1.875e9 (its sharded
//   gradients follow zero3_fp32_reduce).
// fp16 training keeps fp16 gradients either way (the paper's figures).
TEST(ModelStateMemory, Fp32GradientBufferAsMegatronCountsIt) {
  const auto m = Gpt3();
  MemoryInputs in;
  in.params_on_device = 7.5e9;
  in.layers_on_device = 0;
  in.dp = 64;
  in.seq = 2048;
  TrainingPlan p;
  ASSERT_TRUE(p.grad_reduce_fp32);
  const double expected[4] = {135e9, 46.40625e9, 16.875e9, 1.875e9};
  for (int z = 0; z <= 3; ++z) {
    p.zero = z;
    const MemoryBreakdown b = DeviceMemory(m, p, in);
    EXPECT_NEAR(b.weights + b.gradients + b.optimizer, expected[z], 1.0) << "ZeRO-" << z;
  }
  p.zero = 1;
  p.precision = orrery::hardware::DataType::kFp16;
  EXPECT_NEAR(DeviceMemory(m, p, in).gradients, 2 * 7.5e9, 1.0);
}

// ZeRO-3 under a pipeline keeps the stage's weights and gradients unsharded
// through the step (torchtitan's reshard_after_forward = not pp_enabled,
// PyTorch pipelining's set_reshard_after_backward(False) until the last
// backward; engine::Zero3GathersOncePerStep). Ψ = 7.5e9 parameters on the
// stage, bf16, Adam, dp 64 (the ZeRO paper's Figure 1 model, 2Ψ + 2Ψ + 12Ψ):
//   pp 1: 16 Ψ / 64 = 1.875e9 bytes (ZeroPaperFigure1 above);
//   pp 2: + 2Ψ unsharded weights + 2Ψ unsharded bf16 gradients
//         = 1.875e9 + 15e9 + 15e9 = 31.875e9;
//   pp 2 with fp32 reduce: the gradients accumulate in fp32, 4Ψ = 30e9:
//         1.875e9 + 15e9 + 30e9 = 46.875e9.
TEST(ModelStateMemory, Zero3UnderAPipelineKeepsTheStageUnsharded) {
  const auto m = Gpt3();
  MemoryInputs in;
  in.params_on_device = 7.5e9;
  in.layers_on_device = 0;  // model states only
  in.dp = 64;
  in.seq = 2048;
  TrainingPlan p;
  p.zero = 3;
  auto states = [&] {
    const MemoryBreakdown b = DeviceMemory(m, p, in);
    return b.weights + b.gradients + b.optimizer;
  };
  EXPECT_NEAR(states(), 1.875e9, 1e-6 * 1.875e9);
  p.pp = 2;
  EXPECT_NEAR(states(), 31.875e9, 1e-6 * 31.875e9);
  EXPECT_NEAR(DeviceMemory(m, p, in).weights, 15e9 + 15e9 / 64, 1.0);
  p.zero3_fp32_reduce = true;
  EXPECT_NEAR(states(), 46.875e9, 1e-6 * 46.875e9);
  // ZeRO-1 under the same pipeline shards nothing more and keeps nothing
  // more: bf16 weights, the fp32 gradient buffer, the optimizer's shard.
  p.zero = 1;
  EXPECT_NEAR(states(), (2 + 4) * 7.5e9 + 12 * 7.5e9 / 64, 1e-6 * 46.4e9);
}

TEST(ActivationMemory, PipelineKeepsPMicrobatchesInFlight) {
  const auto m = Gpt3();
  MemoryInputs in;
  in.params_on_device = 0;
  in.layers_on_device = 12;
  in.dp = 1;
  in.microbatches = 64;
  in.seq = 2048;
  TrainingPlan p = Plan(8, true, Recompute::kSelective);
  p.pp = 8;
  const double one = LayerActivationBytes(m, p, 1, 2048);
  EXPECT_DOUBLE_EQ(DeviceMemory(m, p, in).activations, one * 12 * 8);
  // Interleaved with v = 3: x (1 + (p-1)/(p v)) = 1 + 7/24.
  p.interleave = 3;
  EXPECT_DOUBLE_EQ(DeviceMemory(m, p, in).activations, one * 12 * 8 * (1 + 7.0 / 24));
  // GPipe keeps every microbatch.
  p.interleave = 1;
  p.schedule = Schedule::kGpipe;
  EXPECT_DOUBLE_EQ(DeviceMemory(m, p, in).activations, one * 12 * 64);
}

// The terms every stage shares (StageActivationTerms), for GPT-3 at tp 8
// with sequence parallelism, s = 2048, b = 1, and one stage built from them.
// Eager code's saved tensors, one Llama 3.2 1B layer (h 2048, 32 query and
// 8 KV heads of 64, SwiGLU FFN 8192, no dropout) at b 2, s 4096, no TP:
// sb = 8192. Fused: outside 8 sbh = 134,217,728; inside sb (4 a d + 4 g d +
// 6 f) = 8192 x (8192 + 2048 + 49,152) = 486,539,264; 620,756,992 bytes.
// Eager adds the two RMSNorms' fp32 inputs (8 sbh = 134,217,728) and SDPA's
// repeated K and V (4 sb (32 - 8) 64 = 50,331,648): 805,306,368.
TEST(ActivationMemory, EagerCodeSavesItsFp32NormInputsAndRepeatedKv) {
  models::ModelSpec m = test::Llama(16, 2048, 32, 8, 8192, 128256);
  TrainingPlan p;
  p.micro_batch = 2;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 2, 4096), 620756992.0);
  p.elementwise = Elementwise::kEager;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 2, 4096), 805306368.0);
}

// Query and key norms (Qwen3) on the same layer save the queries and keys
// they normalise: 2 sb (a + g) d = 2 x 8192 x (32 + 8) x 64 = 41,943,040
// bytes more, 662,700,032 fused. Eager RMSNorms keep their fp32 upcast too,
// 4 sb (a + g) d = 83,886,080 more beside the eager layer's own:
// 805,306,368 + 41,943,040 + 83,886,080 = 931,135,488.
TEST(ActivationMemory, QkNormsSaveTheQueriesAndKeysTheyNormalise) {
  models::ModelSpec m = test::Llama(16, 2048, 32, 8, 8192, 128256);
  m.qk_norm = true;
  TrainingPlan p;
  p.micro_batch = 2;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 2, 4096), 662700032.0);
  p.elementwise = Elementwise::kEager;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 2, 4096), 931135488.0);
  // Split by TP like the rest of the attention's tensors: at tp 2 with
  // sequence parallelism the whole layer halves.
  p.elementwise = Elementwise::kFused;
  p.tp = 2;
  p.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, p, 2, 4096), 662700032.0 / 2);
}

TEST(ActivationMemory, StageTermsAreWorkedOutOnceForEveryStage) {
  const auto m = Gpt3();
  TrainingPlan p = Plan(8, true, Recompute::kSelective);
  p.pp = 8;
  ActivationTerms a = StageActivationTerms(m, p, 2048);
  // Korthikanti Table 2, selective with SP: sbh 34 / t = 25,165,824 * 34 / 8.
  EXPECT_DOUBLE_EQ(a.per_layer, 106954752.0);
  EXPECT_DOUBLE_EQ(a.recomputing_layer, 0.0);
  // fp32 logits: 4 s b V / t = 4 * 2048 * 51,200 / 8.
  EXPECT_DOUBLE_EQ(a.logits, 52428800.0);
  // PyTorch's cross entropy on fp32 logits holds three of them at the start
  // of its backward (log_softmax's saved output, nll_loss's gradient,
  // log_softmax's input gradient): 12 s b V / t.
  p.loss_kernel = LossKernel::kTorchFp32;
  EXPECT_DOUBLE_EQ(StageActivationTerms(m, p, 2048).logits, 3 * 52428800.0);
  p.loss_kernel = LossKernel::kMegatronFp32;

  // Full recompute keeps 2 sbh / t per layer (6,291,456) and, while a layer
  // is recomputed, its full activations without recompute (materialised
  // attention): sbh (34 + 80) / t = 358,612,992.
  p.recompute = Recompute::kFull;
  a = StageActivationTerms(m, p, 2048);
  EXPECT_DOUBLE_EQ(a.per_layer, 6291456.0);
  EXPECT_DOUBLE_EQ(a.recomputing_layer, 358612992.0);
  // The last of 8 stages, 12 layers: 1 microbatch in flight, so
  // 6,291,456 x 12 + 358,612,992 = 434,110,464 bytes, and the logits.
  MemoryInputs in;
  in.layers_on_device = 12;
  in.microbatches = 64;
  in.seq = 2048;
  in.stage = 7;
  in.last_stage = true;
  const MemoryBreakdown last = DeviceMemory(p, in, a);
  EXPECT_DOUBLE_EQ(last.activations, 434110464.0);
  EXPECT_DOUBLE_EQ(last.temporary, 52428800.0);
  // The same doubles as DeviceMemory working the terms out itself.
  const MemoryBreakdown whole = DeviceMemory(m, p, in);
  EXPECT_EQ(whole.activations, last.activations);
  EXPECT_EQ(whole.temporary, last.temporary);
}

}  // namespace
}  // namespace orrery::parallelism
