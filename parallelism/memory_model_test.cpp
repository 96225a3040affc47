#include "parallelism/memory_model.h"

#include <gtest/gtest.h>

namespace orrery::parallelism {
namespace {

models::ModelSpec Gpt3() {
  models::ModelSpec m;
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.vocab = 51200;
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

// Rajbhandari et al. 2020 (ZeRO), Fig. 1: 7.5 B parameters, 64-way data
// parallel, mixed-precision Adam (K = 12): 120 GB baseline, 31.4 GB with
// P_os (ZeRO-1), 16.6 GB with P_os+g (ZeRO-2), 1.9 GB with P_os+g+p (ZeRO-3).
TEST(ModelStateMemory, ZeroPaperFigure1) {
  const auto m = Gpt3();
  MemoryInputs in;
  in.params_on_device = 7.5e9;
  in.layers_on_device = 0;  // model states only
  in.dp = 64;
  in.seq = 2048;
  TrainingPlan p;
  const double expected[4] = {120e9, 31.4e9, 16.6e9, 1.875e9};
  for (int z = 0; z <= 3; ++z) {
    p.zero = z;
    const MemoryBreakdown b = DeviceMemory(m, p, in);
    EXPECT_NEAR(b.weights + b.gradients + b.optimizer, expected[z], 0.06e9) << "ZeRO-" << z;
  }
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

}  // namespace
}  // namespace orrery::parallelism
