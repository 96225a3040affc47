// The training estimator against hand-worked formulas and measured runs.

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "core/estimate/event_estimator.h"
#include "core/estimate/parallel_comm.h"
#include "core/estimate/step_kernels.h"
#include "core/estimate/training_estimator.h"
#include "core/validation/validation.h"
#include "hardware/device_model.h"
#include "models/transformer.h"
#include "parallelism/schedule.h"
#include "tests/support/model_shapes.h"
#include "tests/support/presets.h"

namespace orrery::engine {
namespace {

const std::string kConfigs = ORRERY_TEST_CONFIG_DIR;
const std::string kRuns = std::string(ORRERY_TEST_VALIDATION_DIR) + "/training_runs.csv";

using test::LoadScenario;
using test::LoadScenarioWithModel;

// A device for by-hand kernel times: 1 TB/s of memory bandwidth achieved at a
// flat 80 % (0.8 TB/s at any size) and 2 us of launch overhead per kernel.
hardware::DeviceSpec FlatMemoryDevice() {
  hardware::DeviceSpec d;
  d.memory_bandwidth = 1e12;
  d.memory_efficiency = hardware::Curve{{1e6}, {0.8}, {}};
  d.kernel_overhead = 2e-6;
  return d;
}

// Llama 3 8B's fused QKV projection on one 8192-token microbatch: input
// 8192 x 4096, output 8192 x 6144 ((32 + 2 x 8) heads of 128).
models::Op Llama3_8bQkvGemm() {
  models::Op qkv;
  qkv.kind = models::OpKind::kGemm;
  qkv.m = 8192;
  qkv.n = 6144;
  qkv.k = 4096;
  return qkv;
}

// Narayanan et al. 2021 Eq. 3 with full recompute: the FLOPs the hardware
// executes, 96 B s L h^2 (1 + s/6h + V/16Lh).
TEST(Estimator, HardwareFlopsWithFullRecomputeEqualEq3) {
  Scenario s = LoadScenario("gpt3-175b-a100");
  s.training.recompute = parallelism::Recompute::kFull;
  s.training.sequence_parallel = false;
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate e = est.Run(s.training, s.workload);
  const double B = 64, sq = 2048, L = 96, h = 12288, V = 51200;
  const double eq3 = 96 * B * sq * L * h * h * (1 + sq / (6 * h) + V / (16 * L * h));
  EXPECT_NEAR(e.hardware_flops / eq3, 1.0, 1e-12);
  const double eq3_model = 72 * B * sq * L * h * h * (1 + sq / (6 * h) + V / (12 * L * h));
  EXPECT_NEAR(e.model_flops / eq3_model, 1.0, 1e-12);
  // MFU is model FLOPs over time and peak: 64 A100 at 312 TFLOP/s.
  EXPECT_NEAR(e.mfu, eq3_model / (e.iteration_s * 64 * 312e12), 1e-12);
}

// The MFU numerator is kept per thread for the last estimator and workload
// asked (TrainingEstimator::ModelFlops): it must follow the workload and
// never carry one estimator's model over to another's. Each figure is
// checked against Narayanan et al. 2021 Eq. 3 for its own batch B and layer
// count L (GPT-3 175B and the same model at 48 layers), the two estimators
// alternating on one thread and the workload changing between calls.
TEST(Estimator, ModelFlopsFollowTheWorkloadAndTheModel) {
  Scenario big = LoadScenario("gpt3-175b-a100");
  const TrainingEstimator est(big.model, big.system);
  models::ModelSpec small = big.model;
  small.layers = 48;  // half the layers: a different model, the same system
  const TrainingEstimator est_small(small, big.system);
  const double sq = 2048, h = 12288, V = 51200;
  const auto eq3 = [&](double B, double L) { return 72 * B * sq * L * h * h * (1 + sq / (6 * h) + V / (12 * L * h)); };
  for (int round = 0; round < 2; ++round) {
    big.workload.global_batch = 64;
    EXPECT_NEAR(est.Run(big.training, big.workload).model_flops / eq3(64, 96), 1.0, 1e-12);
    EXPECT_NEAR(est_small.Run(big.training, big.workload).model_flops / eq3(64, 48), 1.0, 1e-12);
    big.workload.global_batch = 128;
    EXPECT_NEAR(est.Run(big.training, big.workload).model_flops / eq3(128, 96), 1.0, 1e-12);
    EXPECT_NEAR(est.Run(big.training, big.workload).model_flops / eq3(128, 96), 1.0, 1e-12);  // a hit
    EXPECT_NEAR(est_small.Run(big.training, big.workload).model_flops / eq3(128, 48), 1.0, 1e-12);
  }
}

// Issue 15: recompute full with recompute_interval 2 (torchtitan's
// selective layer checkpointing) recomputes half the layers. GPT-3 175B on 64
// A100 (B 64, s 2048, L 96, h 12288, V 51200): the recomputed forward of all
// layers is Eq. 3 minus the model FLOPs (Narayanan et al. 2021 Eq. 3),
//   24 B s L h^2 (1 + s/6h) = 24 x 64 x 2048 x 96 x 12288^2 x 1.027778
//                           = 4.6866e16 FLOP,
// half of it, 2.3433e16, every 2nd layer; the model FLOPs
// 72 B s L h^2 (1 + s/6h + V/12Lh) = 1.41092e17 do not move, so the hardware
// executes 1.64524e17. 12 layers per stage (pp 8): 6 recompute, so the
// recompute time and the recomputed forward's TP collectives are half of
// full recompute's, and the forward and backward do not change.
TEST(Estimator, RecomputeIntervalRecomputesThatShareOfTheLayers) {
  Scenario s = LoadScenario("gpt3-175b-a100");
  s.training.sequence_parallel = false;
  const TrainingEstimator est(s.model, s.system);
  s.training.recompute = parallelism::Recompute::kNone;
  const TrainingEstimate none = est.Run(s.training, s.workload);
  s.training.recompute = parallelism::Recompute::kFull;
  const TrainingEstimate full = est.Run(s.training, s.workload);
  s.training.recompute_interval = 2;
  const TrainingEstimate half = est.Run(s.training, s.workload);
  const double B = 64, sq = 2048, L = 96, h = 12288, V = 51200;
  const double model = 72 * B * sq * L * h * h * (1 + sq / (6 * h) + V / (12 * L * h));
  const double recomputed_all = 24 * B * sq * L * h * h * (1 + sq / (6 * h));
  EXPECT_NEAR(recomputed_all, 4.6866e16, 1e12);
  EXPECT_NEAR(half.model_flops / model, 1.0, 1e-12);
  EXPECT_NEAR(half.hardware_flops, 1.64524e17, 1e12);
  EXPECT_NEAR(half.hardware_flops / (model + recomputed_all / 2), 1.0, 1e-12);
  EXPECT_NEAR(full.hardware_flops / (model + recomputed_all), 1.0, 1e-12);
  EXPECT_NEAR(none.hardware_flops / model, 1.0, 1e-12);
  EXPECT_GT(full.time.recompute, 0);
  EXPECT_NEAR(half.time.recompute, full.time.recompute / 2, 1e-12 * full.time.recompute);
  EXPECT_EQ(none.time.recompute, 0);
  EXPECT_NEAR(half.time.tp_comm, (none.time.tp_comm + full.time.tp_comm) / 2, 1e-12 * full.time.tp_comm);
  EXPECT_DOUBLE_EQ(half.time.forward, full.time.forward);
  EXPECT_DOUBLE_EQ(half.time.backward, full.time.backward);
  // Activation memory between the two: 6 of 12 layers keep everything.
  EXPECT_GT(half.memory.activations, full.memory.activations);
  EXPECT_LT(half.memory.activations, none.memory.activations);
}

// Issue 15: recompute op (torchtitan's op-level selective activation
// checkpointing: every second aten.mm of a block recomputed, models::
// LayerOps) on the shipped Llama 3 70B scenario (h 8192, 64 heads of 128, 8
// KV heads, SwiGLU 28672, L 80, s 8192, b 1, global batch 1024, tp 8). The
// recomputed matmuls of a layer and microbatch, all tp ranks together:
// wk 2 s h (8 x 128) + wo 2 s h h + w3 2 s h 28672 = 2 x 8192 x 8192 x 37888
//   = 5,085,241,278,464 FLOP;
// times 80 layers and 1024 microbatches: 4.16583e17 FLOP the hardware runs
// beyond the model FLOPs. The recomputed time lies between none's (0) and
// full recompute's, and so does the activation memory.
TEST(Estimator, OpLevelSacRecomputesEverySecondMatmul) {
  Scenario s = LoadScenario("llama3-70b-h100");
  const TrainingEstimator est(s.model, s.system);
  s.training.recompute = parallelism::Recompute::kNone;
  const TrainingEstimate none = est.Run(s.training, s.workload);
  s.training.recompute = parallelism::Recompute::kFull;
  const TrainingEstimate full = est.Run(s.training, s.workload);
  s.training.recompute = parallelism::Recompute::kOp;
  const TrainingEstimate op = est.Run(s.training, s.workload);
  const double per_layer = 2.0 * 8192 * 8192 * (1024 + 8192 + 28672);
  EXPECT_DOUBLE_EQ(per_layer, 5'085'241'278'464.0);
  EXPECT_NEAR(op.hardware_flops - op.model_flops, per_layer * 80 * 1024, 1e-9 * per_layer * 80 * 1024);
  EXPECT_NEAR(op.hardware_flops - op.model_flops, 4.16583e17, 1e12);
  EXPECT_DOUBLE_EQ(op.model_flops, none.model_flops);
  EXPECT_GT(op.time.recompute, 0);
  EXPECT_LT(op.time.recompute, full.time.recompute);
  EXPECT_DOUBLE_EQ(op.time.forward, none.time.forward);
  EXPECT_DOUBLE_EQ(op.time.backward, none.time.backward);
  EXPECT_LT(op.memory.activations, none.memory.activations);
  EXPECT_GT(op.memory.activations, full.memory.activations);
}

// training.elementwise: eager adds exactly the extra bytes LayerOps and
// HeadOps count, at the device's memory bandwidth. One Gemstone-256 layer
// (width 256, two 128-wide heads, one KV head, gated MLP of 1024, RoPE) on
// one GCD with a flat 80 % memory efficiency and no kernel overhead, one
// 2048-token sequence:
//   layer, per token: norms 2 x 256 x 36 B more, RoPE 384 x 20 B,
//   repeat_kv 2 x (128 + 256) x 2 B = 1536 B, activation 1024 x 2 x 2 B
//   more = 31,744 B; final norm 256 x 36 B = 9,216 B;
//   (31,744 + 9,216) x 2048 = 83,886,080 B / (1.6384 TB/s x 0.8) = 64.0 us
// more forward; backward twice each but repeat_kv's (a reduction moving what
// its copy moved), against the fused norms' one-pass backward (3 accesses
// an element, 2 B less than twice their forward): (2 x 40,960 - 1536 + 3 x
// 256 x 2) x 2048 B = 167,772,160 B, 128.0 us. The profile has no
// unvectorized_element_rate here: every byte at memory_efficiency.
TEST(Estimator, EagerElementwiseAddsItsBytesAtMemoryBandwidth) {
  Scenario s;
  base::Diagnostics d;
  ASSERT_TRUE(LoadSystemPreset("frontier", PresetStore(kConfigs), {}, "system", s.system, d)) << d.ToString();
  s.system.nodes = 1;
  s.system.devices_per_node = 1;
  s.system.device.kernel_overhead = 0;
  s.system.device.memory_efficiency = hardware::Curve{{1e6}, {0.8}, {}};
  models::ModelSpec& m = s.model;
  m = test::Llama(1, 256, 2, 1, 1024, 50304);
  m.name = "gemstone-256x1";
  m.head_dim = 128;
  parallelism::TrainingPlan p;
  p.tp = p.pp = p.dp = p.cp = 1;
  p.micro_batch = 1;
  // Fused kernels without Megatron-Core's RoPE kernel and packed-layout
  // copies (MegatronCoreRopeAndQkvCopiesAsTransformerEngineRunsThem).
  p.rope_kernel = p.packed_qkv_copies = false;
  parallelism::Workload w{.global_batch = 1, .seq_len = 2048};
  const TrainingEstimator est(m, s.system);
  const TrainingEstimate fused = est.Run(p, w);
  p.elementwise = parallelism::Elementwise::kEager;
  const TrainingEstimate eager = est.Run(p, w);
  ASSERT_GT(fused.iteration_s, 0);
  EXPECT_NEAR(eager.time.forward - fused.time.forward, 64.0e-6, 1e-12);
  EXPECT_NEAR(eager.time.backward - fused.time.backward, 128.0e-6, 1e-12);
  EXPECT_DOUBLE_EQ(eager.model_flops, fused.model_flops);

  // With an element rate of 100 G elements/s every non-vectorized pass of
  // this layer is element-bound (a norm's 768 elements a token take 7.68 ns
  // against its 5632 B's 4.30 ns): forward 3,584 elements a token (three
  // norms' 768, RoPE's 768, repeat_kv's 512) x 2048 = 73.40032 us replace
  // their 23,808 B a token x 2048 = 37.2 us; backward 3,840 elements (norms'
  // 1024, RoPE's 768) = 78.6432 us replace 28,416 B = 44.4 us.
  s.system.device.unvectorized_element_rate = 100e9;
  const TrainingEstimator rated(m, s.system);
  const TrainingEstimate slow = rated.Run(p, w);
  // (models::Op holds these counts in single precision: to 1e-10 s.)
  EXPECT_NEAR(slow.time.forward - eager.time.forward, 73.40032e-6 - 37.2e-6, 1e-10);
  EXPECT_NEAR(slow.time.backward - eager.time.backward, 78.6432e-6 - 44.4e-6, 1e-10);
  p.elementwise = parallelism::Elementwise::kFused;
  EXPECT_DOUBLE_EQ(rated.Run(p, w).iteration_s, fused.iteration_s);
}

// Issue 15: each GEMM of a linear layer is priced at its own reduction depth
// (hardware::GemmDepthFactor, a = (2048/2262) / (4096/4310) = 0.952697 at
// K = 2048, 1 from 4096 up): the forward reduces over K, the input gradient
// over N, the weight gradient over M (the tokens). One GPT layer, h = 2048,
// 2048 tokens, on a device of 100 TFLOP/s at a flat 0.5 (50 TFLOP/s) with
// memory far faster than the GEMMs need and no launch overhead; F = FLOP /
// 50e12:
//   qkv  2048 x 6144 x 2048: F = 1.03079 ms; depths 2048, 6144, 2048: F (2/a + 1)
//   out  2048 x 2048 x 2048: F = 0.34360 ms; depths 2048, 2048, 2048: F (3/a)
//   up   2048 x 8192 x 2048: F = 1.37439 ms; depths 2048, 8192, 2048: F (2/a + 1)
//   down 2048 x 2048 x 8192: F = 1.37439 ms; depths 8192, 2048, 2048: F (1 + 2/a)
// GEMM time 12.79601 ms (3 x sum F = 12.36951 ms at the curve alone); the
// weight gradients, all at K = 2048, sum F / a = 4.12317 / a = 4.32789 ms.
// Both engines take these costs (Costs() feeds the event engine).
// One GPT layer (h 2048, 16 heads, no dropout) on the hand-worked device
// with memory far faster than the GEMMs and no launch overhead, one
// 2048-token microbatch on one device in bf16: what the two tests below
// work by hand.
struct OneLayerCase {
  hardware::SystemSpec system = test::OneHandWorkedDevice();
  models::ModelSpec model = test::Gpt(1, 2048, 16);
  parallelism::TrainingPlan plan;
  parallelism::Workload workload{.global_batch = 1, .seq_len = 2048};
  OneLayerCase() {
    system.device.memory_bandwidth = 1e18;
    system.device.kernel_overhead = 0;
    plan.tp = plan.pp = plan.dp = plan.cp = 1;
    plan.micro_batch = 1;
    plan.precision = hardware::DataType::kBf16;
    plan.attention = parallelism::Attention::kFlash;
  }
};

TEST(Estimator, LinearGemmsArePricedAtTheirReductionDepth) {
  const OneLayerCase k;
  const parallelism::TrainingPlan& p = k.plan;
  const parallelism::Workload& w = k.workload;
  const TrainingEstimator est(k.model, k.system);
  const OperatorCosts c = est.Costs(p, w);
  EXPECT_NEAR(c.dense.gemm, 12.796013e-3, 1e-9);
  EXPECT_NEAR(c.dense.bwd_weight, 4.327892e-3, 1e-9);
}

// Full recompute stopping early (training.checkpoint_early_stop; PyTorch's
// non-reentrant checkpoint, default since PyTorch 2.1). The same one GPT
// layer (no dropout) on the hand-worked device, one microbatch, recompute
// full: the replay stops once the MLP down projection's input is saved, so
// neither that GEMM (forward F = 2 x 2048 x 2048 x 8192 / 50e12 = 1.37439 ms,
// depth 8192) nor the residual add after it (memory far faster: 0) runs
// again. The step is 1.37439 ms shorter, the hardware FLOPs 68.719 GFLOP
// fewer, in both engines. Under FP8 the down projection is Transformer
// Engine's own autograd function, which saves after its GEMM: only the add
// is skipped. With dropout after the down projection (its mask is saved)
// nothing is.
TEST(Estimator, FullRecomputeStoppingEarlySkipsTheDownProjectionAndTheAdd) {
  OneLayerCase k;
  Scenario s;
  s.system = k.system;
  s.system.device.peak_fp8 = 200e12;
  models::ModelSpec m = k.model;
  ASSERT_EQ(m.hidden_dropout, 0.0);
  parallelism::TrainingPlan p = k.plan;
  p.recompute = parallelism::Recompute::kFull;
  const parallelism::Workload w = k.workload;
  const double down_f = 2.0 * 2048 * 2048 * 8192 / 50e12;
  {
    const TrainingEstimator est(m, s.system);
    const EventEstimator ev(m, s.system);
    EXPECT_NEAR(est.Costs(p, w).dense.early_stop_fwd, down_f, 1e-10);  // the add: 3e-11 s
    const TrainingEstimate whole = est.Run(p, w);
    const double ev_whole = ev.Run(p, w).estimate.iteration_s;
    p.checkpoint_early_stop = true;
    const TrainingEstimate early = est.Run(p, w);
    ASSERT_TRUE(whole.feasible() && early.feasible());
    EXPECT_NEAR(whole.time.recompute - early.time.recompute, 1.37439e-3, 1e-8);
    EXPECT_NEAR(whole.iteration_s - early.iteration_s, 1.37439e-3, 1e-8);
    EXPECT_NEAR(whole.hardware_flops - early.hardware_flops, 68.719e9, 1e6);
    EXPECT_DOUBLE_EQ(early.model_flops, whole.model_flops);
    EXPECT_NEAR(ev_whole - ev.Run(p, w).estimate.iteration_s, 1.37439e-3, 1e-8);
  }
  {  // FP8: the GEMM runs again; only the add (0 here) is skipped.
    p.precision = hardware::DataType::kFp8;
    const TrainingEstimator est(m, s.system);
    p.checkpoint_early_stop = false;
    const double whole = est.Run(p, w).time.recompute;
    p.checkpoint_early_stop = true;
    EXPECT_NEAR(est.Run(p, w).time.recompute, whole, 1e-9);
    EXPECT_GT(whole, 1e-3);
    p.precision = hardware::DataType::kBf16;
  }
  {  // Dropout after the down projection: nothing is skipped.
    m.hidden_dropout = 0.1;
    const TrainingEstimator est(m, s.system);
    EXPECT_EQ(est.Costs(p, w).dense.early_stop_fwd, 0.0);
    p.checkpoint_early_stop = false;
    const double whole = est.Run(p, w).iteration_s;
    p.checkpoint_early_stop = true;
    EXPECT_EQ(est.Run(p, w).iteration_s, whole);
  }
  {  // Under tensor parallelism the projection's closing reduction goes with
     // it (tp 8, sequence parallel: one reduce-scatter of b s h a layer less
     // in the recompute, in both engines), and stays where the projection
     // stays: with dropout after it, nothing moves. (Not overlapped, so that
     // Costs() gives the collectives whole: TpExposedCollectives.)
    Scenario t = LoadScenario("llama3-70b-h100");
    t.training.recompute = parallelism::Recompute::kFull;
    t.training.tp_comm_overlap = false;
    ASSERT_EQ(t.training.tp, 8);
    auto rec = [&](bool early) {
      t.training.checkpoint_early_stop = early;
      return TrainingEstimator(t.model, t.system).Costs(t.training, t.workload).tp_rec;
    };
    const double whole = rec(false);
    const double rs = TrainingEstimator(t.model, t.system)
                          .network()
                          .Time(hardware::Collective::kReduceScatter, 8192.0 * 8192 * 2,
                                TrainingEstimator(t.model, t.system).network().Place(8, 1));
    EXPECT_NEAR(whole - rec(true), rs, 1e-12);
    t.model.hidden_dropout = 0.1;
    EXPECT_EQ(rec(true), rec(false));
    t.training.checkpoint_early_stop = false;
    const double ev_whole = EventEstimator(t.model, t.system).Run(t.training, t.workload).estimate.iteration_s;
    t.training.checkpoint_early_stop = true;
    EXPECT_EQ(EventEstimator(t.model, t.system).Run(t.training, t.workload).estimate.iteration_s, ev_whole);
  }
}

// Interleaved pipeline sends beside other chunks' computation
// (training.pp_comm_overlap; Megatron-Core overlap_p2p_comm, on in NeMo and
// Megatron-Bridge whenever vp > 1). The shipped Llama 3 70B scenario: pp 4
// at a stride of tp 8 x dp 16 = 128 (every stage in other nodes), v 5, 64
// microbatches. One transfer is one microbatch's activations over the tp
// ranks, 8192 x 8192 x 2 B / 8 = 16.78 MB point to point. Synchronous, the
// critical path holds 2 (v m + p - 1) = 646 of them. Overlapped, the first
// device's warm-up of 2 (p - 1) + (v - 1) p = 22 chunk forwards and its
// flush of as many backwards stay exposed with the fill and drain's
// 2 (p - 1): 2 (22 + 3) = 50; the other 2 (v m - 22) = 596 run beside a
// model chunk's forward or backward (each longer than a transfer here), so
// with no contention they add nothing and with the device's contention s
// one transfer x s / (1 + s) each (OverlapExposed). Nothing else moves, and
// at interleave 1 the flag changes nothing.
TEST(Estimator, InterleavedPipelineSendsOverlapOutsideTheFillAndTheFlush) {
  Scenario s = LoadScenario("llama3-70b-h100");
  ASSERT_EQ(s.training.pp, 4);
  ASSERT_EQ(s.training.interleave, 5);
  const double slowdown = s.system.device.overlap_slowdown;
  ASSERT_GT(slowdown, 0);
  s.system.device.overlap_slowdown = 0;
  const TrainingEstimator est(s.model, s.system);
  const double one = est.network().Time(hardware::Collective::kSendRecv, 8192.0 * 8192 * 2 / 8,
                                        est.network().Place(4, 128));
  s.training.pp_comm_overlap = false;
  const TrainingEstimate sync = est.Run(s.training, s.workload);
  s.training.pp_comm_overlap = true;
  const TrainingEstimate over = est.Run(s.training, s.workload);
  ASSERT_TRUE(sync.feasible() && over.feasible());
  ASSERT_EQ(sync.microbatches, 64);
  EXPECT_NEAR(sync.time.pp_p2p, 646 * one, 1e-9 * sync.time.pp_p2p);
  EXPECT_GT(sync.time.forward / (64 * 5), one);  // a chunk's forward outlasts a transfer
  EXPECT_NEAR(over.time.pp_p2p, 50 * one, 1e-9 * over.time.pp_p2p);
  EXPECT_DOUBLE_EQ(over.time.forward, sync.time.forward);
  EXPECT_DOUBLE_EQ(over.time.pp_bubble, sync.time.pp_bubble);
  EXPECT_NEAR(sync.iteration_s - over.iteration_s, 596 * one, 1e-9 * sync.iteration_s);
  {  // With contention.
    s.system.device.overlap_slowdown = slowdown;
    const TrainingEstimator slowed(s.model, s.system);
    EXPECT_NEAR(slowed.Run(s.training, s.workload).time.pp_p2p, 50 * one + 596 * one * slowdown / (1 + slowdown),
                1e-9 * sync.time.pp_p2p);
    s.system.device.overlap_slowdown = 0;
  }
  {  // Interleave 1: nothing to overlap with.
    s.training.interleave = 1;
    const double on = est.Run(s.training, s.workload).iteration_s;
    s.training.pp_comm_overlap = false;
    EXPECT_EQ(est.Run(s.training, s.workload).iteration_s, on);
    s.training.interleave = 5;
  }
  // The event engine: the sender no longer waits for its sends.
  const EventEstimator ev(s.model, s.system);
  s.training.pp_comm_overlap = false;
  const double ev_sync = ev.Run(s.training, s.workload).estimate.iteration_s;
  s.training.pp_comm_overlap = true;
  const double ev_over = ev.Run(s.training, s.workload).estimate.iteration_s;
  EXPECT_LT(ev_over, ev_sync - 300 * one);
}

// The MI250X GCD's GEMM curve is the A100's measured curve scaled by the two
// devices' maximum achievable matmul FLOPS from the same script
// (ml-engineering, "Maximum Achievable Matmul FLOPS comparison table", v1):
//   (147.0 / 191.5) / (267.9 / 312) = 0.76762 / 0.85865 = 0.89399;
//   A100 knots 0.45 0.59 0.75 0.77 0.79 0.80
//   -> 0.4023 0.5275 0.6705 0.6884 0.7062 0.7152, each written to three
// decimals (within 0.0005). A 1 TFLOP bf16 GEMM (compute-bound: its 6 GB of
// operands take 4.41 ms at 1.6384 TB/s x 0.83, under the compute time) then
// takes 1e12 / (191.5e12 x 0.715) + 4 us = 7.3034 ms + 0.004 ms = 7.3074 ms.
// The GCD keeps the package's cited overlap contention (0.189).
TEST(Estimator, Mi250xGcdGemmCurveIsTheA100CurveScaledByMeasuredMamf) {
  base::Diagnostics d;
  hardware::DeviceSpec gcd, a100, package;
  ASSERT_TRUE(LoadDevicePreset("mi250x-gcd", PresetStore(kConfigs), {}, "device", gcd, d)) << d.ToString();
  ASSERT_TRUE(LoadDevicePreset("a100-80gb", PresetStore(kConfigs), {}, "device", a100, d)) << d.ToString();
  ASSERT_TRUE(LoadDevicePreset("mi250x", PresetStore(kConfigs), {}, "device", package, d)) << d.ToString();
  const double ratio = (147.0 / 191.5) / (267.9 / 312.0);
  ASSERT_EQ(gcd.gemm_efficiency.x.size(), 6u);
  for (double flops : {4e9, 1e10, 2.5e10, 9e10, 2e11, 1e12}) {
    EXPECT_NEAR(gcd.gemm_efficiency.At(flops), ratio * a100.gemm_efficiency.At(flops), 0.0005) << flops;
    EXPECT_DOUBLE_EQ(package.gemm_efficiency.At(flops), gcd.gemm_efficiency.At(flops)) << flops;
  }
  EXPECT_NEAR(hardware::GemmTime(gcd, hardware::DataType::kBf16, 1e12, 6e9), 7.3074e-3, 1e-7);
  EXPECT_DOUBLE_EQ(gcd.overlap_slowdown, 0.189);
  EXPECT_DOUBLE_EQ(gcd.overlap_slowdown, package.overlap_slowdown);
}

// The MI250X FlashAttention fractions of peak are ROCm's FlashAttention
// (v2.0.4, Composable Kernel) measured on an MI250 GCD, bf16, batch 32, 16
// heads, head dim 128, sequence 512 (github.com/ROCm/flash-attention pulls 9
// and 14): forward 52.36, backward 30.25 TFLOP/s, over the MI250 GCD's peak
// 104 CUs x 1024 FLOP/clock x 1.7 GHz = 181.04 TFLOP/s:
//   52.36 / 181.04 = 0.2892 -> 0.289; 30.25 / 181.04 = 0.1671 -> 0.167.
// The package preset carries the same fractions (each GCD runs its own).
TEST(Estimator, Mi250xFlashAttentionFractionsAreTheMeasuredMi250Kernel) {
  base::Diagnostics d;
  hardware::DeviceSpec gcd, package;
  ASSERT_TRUE(LoadDevicePreset("mi250x-gcd", PresetStore(kConfigs), {}, "device", gcd, d)) << d.ToString();
  ASSERT_TRUE(LoadDevicePreset("mi250x", PresetStore(kConfigs), {}, "device", package, d)) << d.ToString();
  const double mi250_gcd_peak = 104 * 1024 * 1.7e9;
  EXPECT_NEAR(gcd.flash_attention_efficiency, 52.36e12 / mi250_gcd_peak, 0.0005);
  EXPECT_NEAR(gcd.flash_attention_bwd_efficiency, 30.25e12 / mi250_gcd_peak, 0.0005);
  EXPECT_DOUBLE_EQ(package.flash_attention_efficiency, gcd.flash_attention_efficiency);
  EXPECT_DOUBLE_EQ(package.flash_attention_bwd_efficiency, gcd.flash_attention_bwd_efficiency);
}

// Issue 15: the Blackwell presets' GEMM curves. From 100 GFLOP up, measured
// on a B200 (configs/devices/b200.yaml):
//   BF16, cuBLAS cubes (pytorch/ao PR #2427): FLOP / ((t - 4 us) x 2250e12)
//     4096^3: 137.44e9 / ( 93.4e-6 x 2250e12) = 0.6540
//     6144^3: 463.86e9 / (315.0e-6 x 2250e12) = 0.6545
//     8192^3: 1099.5e9 / (770.0e-6 x 2250e12) = 0.6346
//   each a burst (one warm-up and five timed calls) taken down to the rate a
//   B200 holds under its 1000 W cap: x 1237 / 1425 = x 0.8681 (flashinfer
//   PR #2899, BF16 attention on a B200, calls 70-79 against calls 0-9), e.g.
//   0.6540 x 0.8681 = 0.5677
//   FP8 per-tensor: the BF16 points x (13.054 / 6.764) / 2 = x 0.9650, the
//     FP8 / BF16 ratio of Transformer Engine's GEMM benchmark on Blackwell
//     (gemm_profiling.rst, PR #2863, --pre-quantize, per layer, less 12 x 4 us)
//   MXFP8: the FP8 points x 6.764 / 7.113 = x 0.9509 (the same run).
// Below 137.4 GFLOP, OpenXLA's cuBLAS table for sm_100 (openxla/xla,
// xla/backends/gpu/cost_model/matmul_interpolator_data.h, kDefaultMatmulPTable,
// key "sm_100", b = 1, each size 2 m n k of 2^31 .. 2^37 FLOP, every shape
// of m, n, k in 256 .. 4096 at or above the ridge, 2250 / 8 = 281 FLOP/byte
// for BF16, 4500 / 8 = 562 for FP8 with a BF16 output): the median per size
// of FLOP / ((t - 4 us) x peak), t = FLOP / the table's rate, e.g.
//   BF16 2048^3: 17.18e9 / 985.76e12 = 17.43 us; 17.18e9 / (13.43e-6 x 2250e12) = 0.5686
//     (the median of the ten 17.18 GFLOP shapes: 0.5703)
//   BF16 4096^3: 137.44e9 / 1416.87e12 = 97.00 us -> 0.6568 (the cube: 0.6540)
//   FP8  4096^3: 137.44e9 / 2764.98e12 = 49.71 us -> 0.6682
// each taken to the sustained clock by the same x 0.8681 (the table times
// isolated kernels: a burst), and FP8 by 0.631 / 0.6682 = 0.9443 onto the
// Transformer Engine ratio's level the large-GEMM points carry.
// The GB200's curves are the B200's times the GB200 / B200 MAMF fractions:
//   BF16 (1822.0 / 2500) / (1745.0 / 2250) = 0.7288 / 0.7756 = 0.9397
//   FP8  (3615.6 / 5000) / (3432.5 / 4500) = 0.7231 / 0.7628 = 0.9480
// each point written to three decimals (within 0.0007 of the product).
TEST(Issue15, BlackwellGemmCurvesFromBlackwellMeasurements) {
  base::Diagnostics d;
  hardware::DeviceSpec b200, gb200;
  ASSERT_TRUE(LoadDevicePreset("b200", PresetStore(kConfigs), {}, "device", b200, d)) << d.ToString();
  ASSERT_TRUE(LoadDevicePreset("gb200", PresetStore(kConfigs), {}, "device", gb200, d)) << d.ToString();
  const double fp8_ratio = (13.054 / 6.764) / 2, mx_ratio = 6.764 / 7.113;
  const double sustained = 1237.0 / 1425.0;
  const double gb_bf16 = (1822.0 / 2500) / (1745.0 / 2250), gb_fp8 = (3615.6 / 5000) / (3432.5 / 4500);
  const double measured_flops[] = {137.4e9, 463.9e9, 1.1e12};
  const double cube_bf16[] = {137.44e9 / (93.4e-6 * 2250e12) * sustained, 463.86e9 / (315.0e-6 * 2250e12) * sustained,
                              1099.5e9 / (770.0e-6 * 2250e12) * sustained};
  for (int i = 0; i < 3; ++i) {
    const double x = measured_flops[i];
    EXPECT_NEAR(b200.gemm_efficiency.At(x), cube_bf16[i], 7e-4) << x;
    EXPECT_NEAR(b200.gemm_efficiency_fp8.At(x), cube_bf16[i] * fp8_ratio, 7e-4) << x;
    EXPECT_NEAR(b200.gemm_efficiency_mxfp8.At(x), cube_bf16[i] * fp8_ratio * mx_ratio, 7e-4) << x;
    EXPECT_NEAR(gb200.gemm_efficiency.At(x), cube_bf16[i] * gb_bf16, 7e-4) << x;
    EXPECT_NEAR(gb200.gemm_efficiency_fp8.At(x), cube_bf16[i] * fp8_ratio * gb_fp8, 7e-4) << x;
    EXPECT_NEAR(gb200.gemm_efficiency_mxfp8.At(x), cube_bf16[i] * fp8_ratio * gb_fp8 * mx_ratio, 7e-4) << x;
  }
  const double flops[] = {4.295e9, 8.59e9, 17.18e9, 34.36e9, 68.72e9};
  const double xla_bf16[] = {0.3705, 0.4809, 0.5703, 0.6133, 0.6473};
  const double xla_fp8[] = {0.2675, 0.3769, 0.4929, 0.5586, 0.6475};
  const double fp8_level = 0.631 / 0.6682;
  for (int i = 0; i < 5; ++i) {
    const double b_bf16 = xla_bf16[i] * sustained;
    const double b_fp8 = xla_fp8[i] * fp8_level * sustained;
    EXPECT_NEAR(b200.gemm_efficiency.At(flops[i]), b_bf16, 7e-4) << flops[i];
    EXPECT_NEAR(b200.gemm_efficiency_fp8.At(flops[i]), b_fp8, 7e-4) << flops[i];
    EXPECT_NEAR(b200.gemm_efficiency_mxfp8.At(flops[i]), b_fp8 * mx_ratio, 7e-4) << flops[i];
    EXPECT_NEAR(gb200.gemm_efficiency.At(flops[i]), b_bf16 * gb_bf16, 7e-4) << flops[i];
    EXPECT_NEAR(gb200.gemm_efficiency_fp8.At(flops[i]), b_fp8 * gb_fp8, 7e-4) << flops[i];
  }
  // One source's shape on one clock: no curve falls between two points
  // below its 463.9 GFLOP plateau (the stitched curve did: BF16 0.647 at
  // 90 GFLOP, 0.568 at 137.4 GFLOP).
  for (const hardware::DeviceSpec* dev : {&b200, &gb200})
    for (const hardware::Curve* c : {&dev->gemm_efficiency, &dev->gemm_efficiency_fp8, &dev->gemm_efficiency_mxfp8})
      for (size_t i = 1; i < c->x.size() && c->x[i] <= 463.9e9; ++i) EXPECT_GE(c->y[i], c->y[i - 1]) << c->x[i];
}

// The B200's small GEMMs, by hand from the curve points above (4 us per
// kernel; the curve interpolates linearly in log FLOP):
//   BF16 2048^3 (17.18 GFLOP, a point): 17.18e9 / (2250e12 x 0.495) + 4 us
//     = 15.425365 + 4 = 19.425365 us (the table's 17.43 us burst kernel at
//     the sustained clock: 13.43 / 0.8681 + 4 = 19.47 us)
//   FP8, one Qwen3-30B-A3B expert GEMM at 2048 tokens (hidden 2048, expert
//     FFN 768): 2 x 2048 x 2048 x 768 = 6.44245e9 FLOP, between 4.295
//     (0.219) and 8.59 GFLOP (0.309): ln(6.44245 / 4.295) / ln 2 = 0.584952,
//     0.219 + 0.090 x 0.584952 = 0.271646; 6.44245e9 / (4500e12 x 0.271646)
//     + 4 us = 5.270307 + 4 = 9.270307 us (the stitched curve: 0.317, 8.52 us)
TEST(Issue15, B200SmallGemmsAtTheXlaTablesShape) {
  base::Diagnostics d;
  hardware::DeviceSpec b200;
  ASSERT_TRUE(LoadDevicePreset("b200", PresetStore(kConfigs), {}, "device", b200, d)) << d.ToString();
  EXPECT_NEAR(hardware::GemmTime(b200, hardware::DataType::kBf16, 17.18e9, 0), 19.425365e-6, 1e-11);
  EXPECT_NEAR(hardware::GemmTime(b200, hardware::DataType::kFp8, 2.0 * 2048 * 2048 * 768, 0), 9.270307e-6, 1e-11);
}

// A 1.1 TFLOP GEMM with 0.3 GB of operands (compute-bound: 0.3e9 / (8e12 x
// 0.83) = 45 us), 4 us per kernel, at the curves' 1.1 TFLOP points:
//   FP8   B200:  1.1e12 / (4500e12 x 0.532) + 4 us = 459.482 + 4 = 463.482 us
//         GB200: 1.1e12 / (5000e12 x 0.504) + 4 us = 436.508 + 4 = 440.508 us
//   BF16  B200:  1.1e12 / (2250e12 x 0.551) + 4 us = 887.276 + 4 = 891.276 us
//         GB200: 1.1e12 / (2500e12 x 0.518) + 4 us = 849.421 + 4 = 853.421 us
//   MXFP8 B200:  1.1e12 / (4500e12 x 0.506) + 4 us = 483.092 + 4 = 487.092 us
//         GB200: 1.1e12 / (5000e12 x 0.479) + 4 us = 459.290 + 4 = 463.290 us
// (sustained rates: the cubes x 1237 / 1425, flashinfer PR #2899). The GB200
// runs these 5.2 % / 4.4 % faster than the B200, as the measured
// MAMF (3615.6 / 3432.5 = 1.053, 1822.0 / 1745.0 = 1.044), not 11.1 % as the
// datasheet peaks (5000 / 4500); MXFP8 5.1 % slower than per-tensor FP8.
TEST(Issue15, Gb200GemmsFasterThanB200ByTheMeasuredMamfNotThePeak) {
  base::Diagnostics d;
  hardware::DeviceSpec b200, gb200;
  ASSERT_TRUE(LoadDevicePreset("b200", PresetStore(kConfigs), {}, "device", b200, d)) << d.ToString();
  ASSERT_TRUE(LoadDevicePreset("gb200", PresetStore(kConfigs), {}, "device", gb200, d)) << d.ToString();
  const auto fp8 = hardware::DataType::kFp8, bf16 = hardware::DataType::kBf16;
  EXPECT_NEAR(hardware::GemmTime(b200, fp8, 1.1e12, 3e8), 463.482e-6, 1e-9);
  EXPECT_NEAR(hardware::GemmTime(gb200, fp8, 1.1e12, 3e8), 440.508e-6, 1e-9);
  EXPECT_NEAR(hardware::GemmTime(b200, bf16, 1.1e12, 3e8), 891.276e-6, 1e-9);
  EXPECT_NEAR(hardware::GemmTime(gb200, bf16, 1.1e12, 3e8), 853.421e-6, 1e-9);
  EXPECT_NEAR(hardware::GemmTime(b200, fp8, 1.1e12, 3e8, 0.0, true), 487.092e-6, 1e-9);
  EXPECT_NEAR(hardware::GemmTime(gb200, fp8, 1.1e12, 3e8, 0.0, true), 463.290e-6, 1e-9);
}

TEST(Estimator, BubbleIsPMinusOneOverVMicrobatches) {
  Scenario s = LoadScenario("gpt3-175b-a100");  // p = 8, v = 3, m = 64
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate e = est.Run(s.training, s.workload);
  const double per_microbatch = (e.time.forward + e.time.backward + e.time.recompute +
                                 e.time.tp_comm + e.time.cp_comm + e.time.ep_comm) / 64;
  EXPECT_NEAR(e.time.pp_bubble / per_microbatch, 7.0 / 3.0, 1e-9);
  // Fraction of the ideal time: (p-1)/(v m) (Narayanan et al. 2021, Sec. 2.2.2).
  EXPECT_NEAR(e.time.pp_bubble / (per_microbatch * 64), 7.0 / (3 * 64), 1e-9);
  // The breakdown adds up.
  const auto& t = e.time;
  EXPECT_NEAR(t.total, t.forward + t.backward + t.recompute + t.tp_comm + t.cp_comm + t.ep_comm +
                           t.pp_bubble + t.pp_p2p + t.dp_comm + t.optimizer + t.offload, 1e-9);
}

// Issue 15: Llama 3 70B on 16,384 H100 (tp 4, pp 4, dp 1024, ZeRO-3), global
// batch 1024: one microbatch per replica. Interleaved 1F1B with v = 20 would
// be priced with a (p - 1)/(v m) = 15 % bubble; Megatron-LM runs
// interleaving only when m is a multiple of p, so the plan is infeasible
// with a reason. With v = 1 it is plain 1F1B: iteration (m + p - 1) T = 4 T,
// a bubble of 3 T (Narayanan et al. 2021, Sec. 2.2.1).
TEST(Estimator, InterleavingNeedsAMultipleOfPpMicrobatches) {
  Scenario s = LoadScenario("llama3-70b-h100");
  s.system.nodes = 2048;
  s.training.tp = 4;
  s.training.pp = 4;
  s.training.dp = 1024;
  s.training.zero = 3;
  s.training.interleave = 20;
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate e = est.Run(s.training, s.workload);
  EXPECT_EQ(e.microbatches, 1);
  EXPECT_EQ(e.infeasible, Infeasible::kInterleaveMicrobatches);
  EXPECT_EQ(ExplainInfeasible(e, s),
            "interleaved 1F1B needs the 1 microbatches per iteration to be a multiple of pp = 4 "
            "(Megatron-LM refuses other counts); change micro_batch or the global batch, or set "
            "training.interleave=1");
  s.training.interleave = 1;
  const TrainingEstimate one = est.Run(s.training, s.workload);
  ASSERT_TRUE(one.feasible());
  const double stage = one.time.forward + one.time.backward + one.time.recompute + one.time.tp_comm +
                       one.time.cp_comm + one.time.ep_comm;  // m = 1: one microbatch's stage time
  EXPECT_NEAR(one.time.pp_bubble, 3 * stage, 1e-12 * stage);
  // 8 microbatches (global batch 8192) are a multiple of 4: interleaving runs.
  s.workload.global_batch = 8192;
  s.training.interleave = 20;
  const TrainingEstimate eight = est.Run(s.training, s.workload);
  EXPECT_NE(eight.infeasible, Infeasible::kInterleaveMicrobatches);
  EXPECT_EQ(eight.microbatches, 8);
}

// GPipe ignores `interleave` (one chunk per device): its bubble is (p - 1) T
// whatever interleave says, as the event engine simulates it.
TEST(Estimator, GpipeBubbleIsPMinusOneStages) {
  Scenario s = LoadScenario("gpt3-175b-a100");  // p = 8, m = 64
  s.training.schedule = parallelism::Schedule::kGpipe;
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate e = est.Run(s.training, s.workload);
  const double per_microbatch = (e.time.forward + e.time.backward + e.time.recompute + e.time.tp_comm +
                                 e.time.cp_comm + e.time.ep_comm) / 64;
  EXPECT_NEAR(e.time.pp_bubble / per_microbatch, 7.0, 1e-9);
}

// ZB-H1 bubble, worked by hand from the schedule (Qi et al. 2024, Sec. 3.1)
// and matching the event engine's timelines (tests/event_engine_test.cpp):
//   p 4, m 8, F 1, B 2 (W 1): (p-1)(F+B') - (p-1) min(W,F) = 6 - 3 = 3;
//   p 4, m 2: only one delayed W fills the warm-up: 6 - 1 = 5;
//   p 8, m 8, F 1, B 2.2 (W 1.1): 7 x 2.1 - 7 x 1 = 7.7 (the B' chain of
//   the last microbatch is longer than F + B' - W = 1).
TEST(Schedule, ZeroBubbleH1BubbleByHand) {
  parallelism::TrainingPlan p;
  p.schedule = parallelism::Schedule::kZeroBubbleH1;
  p.pp = 4;
  EXPECT_DOUBLE_EQ(parallelism::PipelineBubble(p, 8, 3, 1, 1), 3);
  EXPECT_DOUBLE_EQ(parallelism::PipelineBubble(p, 2, 3, 1, 1), 5);
  EXPECT_DOUBLE_EQ(parallelism::PipelineBubble(p, 1, 3, 1, 1), 6);
  p.pp = 8;
  EXPECT_NEAR(parallelism::PipelineBubble(p, 8, 3.2, 1, 1.1), 7.7, 1e-12);
  // 1F1B: (p - 1) T for every m, also m < p.
  p.schedule = parallelism::Schedule::kOneFOneB;
  EXPECT_DOUBLE_EQ(parallelism::PipelineBubble(p, 3, 3, 1, 1), 21);
  p.interleave = 4;  // v = 4, m = 16: (p - 1) T / v
  EXPECT_DOUBLE_EQ(parallelism::PipelineBubble(p, 16, 4, 1, 1), 7);
  EXPECT_FALSE(parallelism::InterleaveNeedsMultiple(p, 16));
  EXPECT_TRUE(parallelism::InterleaveNeedsMultiple(p, 12));
  p.schedule = parallelism::Schedule::kVHalf;  // two chunks per device, no multiple needed
  EXPECT_EQ(parallelism::ScheduleChunks(p), 2);
  EXPECT_FALSE(parallelism::InterleaveNeedsMultiple(p, 12));
}

// DualPipe's bubble (DeepSeek-V3 Technical Report, Table 2), by hand:
//   p 16, stage 3 (F 1, B 2), W 0.5: (p/2 - 1)(F&B + B - 3W) = 7 x 3.5 = 24.5;
//   W 2: the table's 7 x (3 + 2 - 6) < 0 is below the fill (p - 2) F = 14.
TEST(Schedule, DualPipeBubbleByHand) {
  parallelism::TrainingPlan p;
  p.schedule = parallelism::Schedule::kDualPipe;
  p.pp = 16;
  EXPECT_DOUBLE_EQ(parallelism::PipelineBubble(p, 32, 3, 1, 0.5), 24.5);
  EXPECT_DOUBLE_EQ(parallelism::PipelineBubble(p, 32, 3, 1, 2), 14);
  EXPECT_EQ(parallelism::ScheduleChunks(p), 1);  // a microbatch runs one stage per device
  EXPECT_DOUBLE_EQ(parallelism::CriticalPathTransfers(p, 32), 30);
  // Shapes dualpipe.py refuses: odd m, m < 2p, odd p; with one stage it is no pipeline.
  EXPECT_FALSE(parallelism::DualPipeShapeInvalid(p, 32));
  EXPECT_TRUE(parallelism::DualPipeShapeInvalid(p, 33));
  EXPECT_TRUE(parallelism::DualPipeShapeInvalid(p, 30));
  p.pp = 3;
  EXPECT_TRUE(parallelism::DualPipeShapeInvalid(p, 32));
  p.pp = 1;
  EXPECT_FALSE(parallelism::DualPipeShapeInvalid(p, 3));
  EXPECT_FALSE(parallelism::OverlapsExpertComm(p));
  p.pp = 2;
  EXPECT_TRUE(parallelism::OverlapsExpertComm(p));  // the schedule is the overlap
}

// DualPipe's memory (Table 2: 2x the parameters, pp + 1 activations), on
// Llama 3 8B over pp 2 (16 layers a stage), ZeRO 0, 8 microbatches: each
// device holds both stages, so the whole model's bf16 weights,
// 2 x 8,030,261,248 B; its activations are pp + 1 = 3 stage-microbatches
// of 16 layers.
TEST(Estimator, DualPipeHoldsBothStagesAndOneMoreMicrobatch) {
  Scenario s = LoadScenario("llama3-8b-128k-h100");
  s.training = parallelism::TrainingPlan{};
  s.training.pp = 2;
  s.training.dp = 0;
  s.training.recompute = parallelism::Recompute::kFull;
  s.workload.seq_len = 4096;
  s.workload.global_batch = 256;
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate one = est.Run(s.training, s.workload);
  s.training.schedule = parallelism::Schedule::kDualPipe;
  const TrainingEstimate dual = est.Run(s.training, s.workload);
  ASSERT_EQ(one.microbatches, 8);
  // 2 x (32 x 218,112,000 layer + 2 x 525,336,576 embedding and head + 4,096 norm).
  EXPECT_DOUBLE_EQ(dual.memory.weights, 2.0 * 8030261248.0);
  // 1F1B's fullest device is the last stage (16 layers, the head, the final norm).
  EXPECT_DOUBLE_EQ(one.memory.weights, 2.0 * (16 * 218112000.0 + 525336576.0 + 4096.0));
  // Full recompute keeps each layer's input, 2 s h = 2 x 4096 x 4096 B
  // (Korthikanti et al. 2022, Sec. 5); 1F1B's last stage holds 1
  // microbatch of its 16 layers, DualPipe's end devices 3: 32 layers' more.
  EXPECT_DOUBLE_EQ(dual.memory.activations - one.memory.activations, 32 * 2.0 * 4096 * 4096);
  // 2 microbatches (global batch 64 over dp 32): fewer than 2 pp, a result with its reason.
  s.workload.global_batch = 64;
  const TrainingEstimate few = est.Run(s.training, s.workload);
  EXPECT_EQ(few.infeasible, Infeasible::kDualPipeShape);
  EXPECT_EQ(ExplainInfeasible(few, s),
            "DualPipe needs an even pp and an even number of microbatches, at least 2 x pp (here pp 2, 2 "
            "microbatches per iteration; deepseek-ai/DualPipe asserts the same); change pp, micro_batch or the "
            "global batch, or choose another training.schedule");
}

// Llama 2 7B's weights on the ZeRO-3 test plan (32 layers, the embedding
// and the untied head, 4096 tokens) and their bf16 all-gather and
// reduce-scatter over the 1,024 devices: what a ZeRO-3 microbatch moves.
struct Zero3Traffic {
  double params, ag, rs;
};
Zero3Traffic Llama2_7bZero3Traffic(const Scenario& s, const TrainingEstimator& est) {
  const double params = 32 * models::LayerParameters(s.model, false) +
                        models::EmbeddingParameters(s.model, 4096) + models::HeadParameters(s.model);
  const hardware::GroupPlacement g = est.network().Place(1024, 1);
  return {params, est.network().Time(hardware::Collective::kAllGather, params * 2, g),
          est.network().Time(hardware::Collective::kReduceScatter, params * 2, g)};
}

// Issue 15: Llama 2 7B on 1,024 A100 (dp 1024, ZeRO-3, global batch 1024 x
// 4096, one microbatch each). Per microbatch ZeRO-3 gathers the weights for
// the forward and the backward and reduce-scatters the gradients (Rajbhandari
// et al. 2020, Sec. 7.2.3). Without overlap all three stand between passes:
// dp_comm = 2 AG + RS. With prefetch, what the passes cannot cover,
// max(0, 2 AG + RS - compute), plus the first layer's gather (nothing before
// it) and the last layer's reduce-scatter (the optimizer waits for it):
// never zero.
TEST(Estimator, ZeroThreeCommunicationIsExposedAndFollowsDpOverlap) {
  Scenario s = test::Llama2_7bZero3On1024A100();
  s.training.recompute = parallelism::Recompute::kNone;
  const TrainingEstimator est(s.model, s.system);
  TrainingEstimate e = est.Run(s.training, s.workload);
  ASSERT_EQ(e.microbatches, 1);
  // Every weight is gathered: 32 layers, the embedding and the (untied) head.
  const Zero3Traffic z = Llama2_7bZero3Traffic(s, est);
  const double ag = z.ag, rs = z.rs;
  // The forward's gathers hide behind the forward, the backward's gather and
  // reduce-scatter behind the backward, each slowing the compute beside it
  // (A100 overlap_slowdown 0.189; OverlapExposed); the first and last
  // layer's worth stays exposed: one of 32 layers on the one stage.
  const double slow = s.system.device.overlap_slowdown;
  ASSERT_DOUBLE_EQ(slow, 0.189);
  EXPECT_NEAR(e.time.dp_comm,
              OverlapExposed(ag, e.time.forward, slow) + OverlapExposed(ag + rs, e.time.backward, slow) +
                  (ag + rs) / 32,
              1e-9 * e.time.dp_comm);
  EXPECT_GT(e.time.dp_comm, 0);
  s.training.dp_overlap = false;
  const TrainingEstimate flat = est.Run(s.training, s.workload);
  EXPECT_NEAR(flat.time.dp_comm, 2 * ag + rs, 1e-9 * flat.time.dp_comm);
  EXPECT_NE(flat.iteration_s, e.iteration_s);
}

// NeMo 2's FP8 recipe (bf16_with_fp8_mixed: fp8_params / fp8_param_gather)
// keeps the weights in FP8 and the distributed optimizer all-gathers the
// updated weights in FP8 (Megatron-Core --fp8-param-gather): 1 byte per
// parameter instead of BF16's 2 (ParamGatherBytesPerParam, parallel_comm.h).
// Llama 3 70B at tp 8, pp 1, dp 64 on 512 H100, ZeRO-1, no DP overlap, so
// dp_comm = RS(4P) + AG(gather bytes x P). P, the parameters on one device:
//   one layer  8,192 x (8,192 + 2 x 1,024) + 8,192^2 = 150,994,944 attention
//              + 3 x 8,192 x 28,672 = 704,643,072 MLP + 2 x 8,192 norms
//              = 855,654,400; 80 layers 68,452,352,000;
//   embedding  128,256 x 8,192 = 1,050,673,152; the untied head the same
//              plus the 8,192-wide final norm, 1,050,681,344;
//   70,553,706,496 / tp 8 = 8,819,213,312: a 17.64 GB BF16 gather, 8.82 GB in FP8.
// The gradient reduce-scatter and everything else stay as they were.
TEST(Estimator, Fp8ParamGatherHalvesTheDistributedOptimizerGather) {
  parallelism::TrainingPlan p;
  p.zero = 1;
  EXPECT_DOUBLE_EQ(ParamGatherBytesPerParam(p, 2), 2.0);  // bf16: the weights' datatype
  p.precision = hardware::DataType::kFp8;
  EXPECT_DOUBLE_EQ(ParamGatherBytesPerParam(p, 2), 2.0);  // fp8 GEMMs, BF16 weights (the default)
  p.fp8_param_gather = true;
  EXPECT_DOUBLE_EQ(ParamGatherBytesPerParam(p, 2), 1.0);
  p.zero = 3;
  EXPECT_DOUBLE_EQ(ParamGatherBytesPerParam(p, 2), 2.0);  // FSDP's FP8 gather not modelled
  p.zero = 1;
  p.precision = hardware::DataType::kBf16;
  EXPECT_DOUBLE_EQ(ParamGatherBytesPerParam(p, 2), 2.0);  // read only with fp8

  Scenario s = test::LoadScenario("llama3-70b-h100");
  s.training.pp = 1;
  s.training.interleave = 1;
  s.training.dp = 64;
  s.training.zero = 1;
  s.training.dp_overlap = false;
  s.training.precision = hardware::DataType::kFp8;
  s.workload.global_batch = 64;
  const double P = (80 * models::LayerParameters(s.model, false) + models::EmbeddingParameters(s.model, 8192) +
                    models::HeadParameters(s.model)) / 8;
  ASSERT_DOUBLE_EQ(P, 8819213312.0);
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate bf16_gather = est.Run(s.training, s.workload);
  s.training.fp8_param_gather = true;
  const TrainingEstimate fp8_gather = est.Run(s.training, s.workload);
  const hardware::GroupPlacement g = est.network().Place(64, 8);
  const double saved = est.network().Time(hardware::Collective::kAllGather, 2 * P, g) -
                       est.network().Time(hardware::Collective::kAllGather, P, g);
  EXPECT_GT(saved, 0);
  EXPECT_NEAR(bf16_gather.time.dp_comm - fp8_gather.time.dp_comm, saved, 1e-9 * saved);
  EXPECT_DOUBLE_EQ(fp8_gather.time.forward, bf16_gather.time.forward);
  EXPECT_DOUBLE_EQ(fp8_gather.time.backward, bf16_gather.time.backward);
  EXPECT_DOUBLE_EQ(fp8_gather.memory.total(), bf16_gather.memory.total());
  // The event engine prices the same gather.
  const EventEstimator ev(s.model, s.system);
  s.training.fp8_param_gather = false;
  const double ev_bf16 = ev.Run(s.training, s.workload).estimate.iteration_s;
  s.training.fp8_param_gather = true;
  const double ev_fp8 = ev.Run(s.training, s.workload).estimate.iteration_s;
  EXPECT_NEAR(ev_bf16 - ev_fp8, saved, 1e-6 * ev_bf16);
}

// Issue 15: ZeRO-3 as the framework runs it. Bytes one device moves per
// microbatch, for P parameters in bf16 (2 B):
//   DeepSpeed (re-gathers for the recomputed forward, reduces in bf16):
//     full recompute 3 x 2P + 2P = 8P, none 2 x 2P + 2P = 6P;
//   PyTorch FSDP as llm-foundry / torchtitan run it (no re-gather, fp32
//   reduce-scatter): 2 x 2P + 4P = 8P with or without recompute.
// Llama 2 7B, P = 32 x 202,383,360 + 2 x 131,072,000 + 4,096 = 6,738,415,616:
// 8P = 53.91 GB, 6P = 40.43 GB per microbatch. In the estimator, without
// overlap (dp_comm = gathers x AG(2P) + RS), one microbatch on 1,024 A100.
TEST(Estimator, ZeroThreeGathersAndReduceBytesFollowTheFramework) {
  parallelism::TrainingPlan p;
  p.zero = 3;
  p.recompute = parallelism::Recompute::kFull;
  const double P = 6738415616.0;
  auto bytes = [&](const parallelism::TrainingPlan& q) {
    return Zero3GathersPerMicrobatch(q) * 2 * P + Zero3ReduceBytesPerParam(q, 2) * P;
  };
  EXPECT_DOUBLE_EQ(Zero3GathersPerMicrobatch(p), 3);
  EXPECT_DOUBLE_EQ(bytes(p), 53907324928.0);  // 8P, DeepSpeed with full recompute
  p.recompute = parallelism::Recompute::kNone;
  EXPECT_DOUBLE_EQ(bytes(p), 40430493696.0);  // 6P
  p.zero3_recompute_gather = false;
  p.zero3_fp32_reduce = true;
  EXPECT_DOUBLE_EQ(Zero3ReduceBytesPerParam(p, 2), 4.0);
  EXPECT_DOUBLE_EQ(bytes(p), 53907324928.0);  // 8P, FSDP without recompute
  p.recompute = parallelism::Recompute::kFull;
  EXPECT_DOUBLE_EQ(Zero3GathersPerMicrobatch(p), 2);
  EXPECT_DOUBLE_EQ(bytes(p), 53907324928.0);  // 8P, FSDP with recompute: no third gather

  Scenario s = test::Llama2_7bZero3On1024A100();
  const double params = 32 * models::LayerParameters(s.model, false) +
                        models::EmbeddingParameters(s.model, 4096) + models::HeadParameters(s.model);
  ASSERT_DOUBLE_EQ(params, P);
  s.training.dp_overlap = false;
  const TrainingEstimator est(s.model, s.system);
  const hardware::GroupPlacement g = est.network().Place(1024, 1);
  const double ag = est.network().Time(hardware::Collective::kAllGather, P * 2, g);
  const double rs2 = est.network().Time(hardware::Collective::kReduceScatter, P * 2, g);
  const double rs4 = est.network().Time(hardware::Collective::kReduceScatter, P * 4, g);
  ASSERT_GT(rs4, rs2);
  s.training.recompute = parallelism::Recompute::kFull;
  EXPECT_NEAR(est.Run(s.training, s.workload).time.dp_comm, 3 * ag + rs2, 1e-9 * (3 * ag + rs2));
  s.training.zero3_recompute_gather = false;
  s.training.zero3_fp32_reduce = true;
  EXPECT_NEAR(est.Run(s.training, s.workload).time.dp_comm, 2 * ag + rs4, 1e-9 * (2 * ag + rs4));
  s.training.recompute = parallelism::Recompute::kNone;
  EXPECT_NEAR(est.Run(s.training, s.workload).time.dp_comm, 2 * ag + rs4, 1e-9 * (2 * ag + rs4));
}

// Issue 15: PyTorch FSDP1's BACKWARD_POST prefetch (Composer's default;
// training.zero3_backward_prefetch=false) issues a layer's backward gather
// only from the post-backward hook of the layer after it, so the gather
// waits exposed while the reduce-scatters still overlap. Llama 2 7B on one
// DGX A100 (dp 8, FSDP: no re-gather, fp32 reduce-scatter), no recompute,
// one microbatch: G = AG(2P) is the backward's one gather, R = RS(4P). While
// the backward outlasts the slowed traffic ((G + R)(1 + s) <= T_bwd) each
// side is the contention term of OverlapExposed, k = s/(1+s):
//   prefetch: (G + R) k,   BACKWARD_POST: G + R k,   difference G (1 - k) = G / (1 + s).
// The forward's gather and the step's first and last layer are the same on
// both sides.
TEST(Estimator, BackwardPostPrefetchExposesTheBackwardGather) {
  Scenario s = test::Llama2_7bFsdpOnOneDgxA100();
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate pre = est.Run(s.training, s.workload);
  s.training.zero3_backward_prefetch = false;
  const TrainingEstimate post = est.Run(s.training, s.workload);
  ASSERT_TRUE(pre.feasible() && post.feasible());
  const double P = 6738415616.0;
  const hardware::GroupPlacement g = est.network().Place(8, 1);
  const double ag = est.network().Time(hardware::Collective::kAllGather, 2 * P, g);
  const double rs4 = est.network().Time(hardware::Collective::kReduceScatter, 4 * P, g);
  const double sl = s.system.device.overlap_slowdown;
  ASSERT_GT(sl, 0);
  ASSERT_GT(ag, 0);
  ASSERT_LE((ag + rs4) * (1 + sl), pre.time.backward);  // both sides are contention-bound
  EXPECT_NEAR(post.time.dp_comm - pre.time.dp_comm, ag / (1 + sl), 1e-9 * ag);
  EXPECT_NEAR(post.iteration_s - pre.iteration_s, ag / (1 + sl), 1e-9 * ag);
}

// Issue 15: FSDP2 copies every gather out of its flat all-gather buffer into
// the parameters' own tensors on the compute stream (training.zero3_copy_out,
// Zero3CopyOutBytes): read and write the gathered bf16 weights once, before
// each forward and each backward. Llama 3 8B on 64 A100 (dp 64), by hand:
//   one layer  4,096 x (4,096 + 2 x 1,024) + 4,096^2 = 41,943,040 attention
//              + 3 x 4,096 x 14,336 = 176,160,768 MLP + 2 x 4,096 norms
//              = 218,112,000 parameters: 2 x 2 x 218,112,000 = 872,448,000 B;
//   embedding  128,256 x 4,096 = 525,336,576: 2,101,346,304 B; the untied LM
//              head the same plus the 4,096-wide final norm.
// A100 profile: 2.039 TB/s x the memory curve (0.8 at 1 MiB, 0.83 from 1 GiB,
// log-interpolated), + 4 us a kernel. 872,448,000 B: ln(832.03) / ln(1024) =
// 0.97005 of the way, 0.829102, 516.08 + 4 = 520.08 us; above 1 GiB 0.83:
// embedding 1,241.66 + 4 = 1,245.66 us. Per microbatch without recompute:
// forward and backward each 32 x 520.08 + 2 x 1,245.66 = 19,134 us, 38.27 ms
// in all. With full recompute and the gathers DeepSpeed makes again for the
// recomputed forward, 32 x 520.08 = 16.64 ms more in the recompute.
TEST(Estimator, Fsdp2CopiesEachGatherOutOnTheComputeStream) {
  // dp 64 on 8 DGX A100 nodes; dp_overlap off: the ZeRO-3 collectives then
  // do not depend on the compute.
  Scenario s = test::Llama3_8bZero3On64A100();
  ASSERT_DOUBLE_EQ(models::LayerParameters(s.model, false), 218112000.0);
  ASSERT_DOUBLE_EQ(models::EmbeddingParameters(s.model, 8192), 525336576.0);
  s.training.attention = parallelism::Attention::kFlash2;
  s.training.recompute = parallelism::Recompute::kNone;
  const TrainingEstimator est(s.model, s.system);
  const double layer = hardware::MemoryTime(s.system.device, 872448000.0);
  EXPECT_NEAR(layer, 520.08e-6, 0.01e-6);
  EXPECT_EQ(Zero3CopyOutBytes(s.training, 218112000.0, 2), 0.0);  // off by default
  const TrainingEstimate fsdp1 = est.Run(s.training, s.workload);
  s.training.zero3_copy_out = true;
  EXPECT_DOUBLE_EQ(Zero3CopyOutBytes(s.training, 218112000.0, 2), 872448000.0);
  const TrainingEstimate fsdp2 = est.Run(s.training, s.workload);
  ASSERT_TRUE(fsdp1.feasible() || fsdp1.infeasible == Infeasible::kOutOfMemory);
  EXPECT_NEAR(fsdp2.time.forward - fsdp1.time.forward, 19.134e-3, 0.001e-3);
  EXPECT_NEAR(fsdp2.time.backward - fsdp1.time.backward, 19.134e-3, 0.001e-3);
  EXPECT_NEAR(fsdp2.iteration_s - fsdp1.iteration_s, 38.268e-3, 0.001e-3);
  EXPECT_DOUBLE_EQ(fsdp2.time.dp_comm, fsdp1.time.dp_comm);
  // A gather made again for the recomputed forward is copied out again.
  s.training.recompute = parallelism::Recompute::kFull;
  s.training.zero3_recompute_gather = true;
  const TrainingEstimate regather = est.Run(s.training, s.workload);
  s.training.zero3_copy_out = false;
  const TrainingEstimate regather1 = est.Run(s.training, s.workload);
  EXPECT_NEAR(regather.time.recompute - regather1.time.recompute, 32 * 520.08e-6, 0.01e-3);
  // ZeRO-1 gathers nothing per layer: nothing to copy out.
  s.training.zero = 1;
  s.training.zero3_copy_out = true;
  const TrainingEstimate zero1 = est.Run(s.training, s.workload);
  s.training.zero3_copy_out = false;
  EXPECT_DOUBLE_EQ(est.Run(s.training, s.workload).iteration_s, zero1.iteration_s);
}

// ZeRO-3 shards the dense parameters over dp x cp (DenseDataParallel): with
// dp 1 and cp 8 the weights are still gathered over the 8 cp ranks, so FSDP2
// still copies each gather out, in the forward and in the backward alike.
// Llama 3 8B, tp 8 x cp 8 on the 64 A100, no recompute, FlashAttention
// (ring CP runs a fused attention).
TEST(Estimator, Fsdp2CopyOutFollowsTheCpShardedGather) {
  Scenario s = test::Llama3_8bZero3On64A100();
  s.training.attention = parallelism::Attention::kFlash;
  s.training.tp = 8;
  s.training.cp = 8;
  s.training.dp = 1;
  s.training.recompute = parallelism::Recompute::kNone;
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate fsdp1 = est.Run(s.training, s.workload);
  s.training.zero3_copy_out = true;
  const TrainingEstimate fsdp2 = est.Run(s.training, s.workload);
  ASSERT_TRUE(fsdp1.feasible() && fsdp2.feasible());
  const double fwd = fsdp2.time.forward - fsdp1.time.forward;
  EXPECT_GT(fwd, 0);
  EXPECT_NEAR(fsdp2.time.backward - fsdp1.time.backward, fwd, 1e-12);
  EXPECT_DOUBLE_EQ(fsdp2.time.recompute, fsdp1.time.recompute);
}

// Issue 15: DeepSpeed ZeRO-3 of 2021 gathers one weight matrix ahead
// (PrefetchOneAheadExposed). A GPT layer (MHA, MLP 4h) holds its weights as
// QKV 3h^2 : projection h^2 : fc1 4h^2 : fc2 4h^2 = 3 : 1 : 4 : 4 of 12.
// By hand, in twelfths of the pass (c = T = 12, s = 0):
//   forward, matrix k's gather beside matrix k-1's compute (cyclic):
//     QKV 3 beside fc2 4: 0; proj 1 beside QKV 3: 0; fc1 4 beside proj 1: 3;
//     fc2 4 beside fc1 4: 0 -> 3 exposed where the pooled pass exposes 0;
//   backward, matrix k's collectives beside matrix k+1's backward:
//     QKV 3 beside proj 1: 2; proj 1 beside fc1 4: 0; fc1 4 beside fc2 4: 0;
//     fc2 4 beside the next layer's QKV 3: 1 -> 3.
// With s = 0.25 (k = 0.2) each pair exposes max(c_k - T_k, 0.2 c_k), forward:
//   max(-1, 0.6) + max(-2, 0.2) + max(3, 0.8) + max(0, 0.8) = 4.6.
// Far from balance (c = 36, T = 12, s = 0) every pair is communication-bound:
//   (9-4) + (3-3) + (12-1) + (12-4) = 24 = c - T, as pooled.
// Equal shares give OverlapExposed itself: c = 10, T = 6, s = 0.25 is
//   4 x max(2.5 - 1.5, 0.5) = 4 = max(10 - 6, 2).
TEST(Estimator, MatrixByMatrixPrefetchExposesWhatASmallMatrixCannotHide) {
  models::ModelSpec gpt;
  gpt.layers = 2;
  gpt.hidden = 1024;
  gpt.heads = 16;
  gpt.vocab = 1000;
  const LayerWeightShares w = DenseLayerWeightShares(gpt);
  EXPECT_DOUBLE_EQ(w.w[0], 3.0 / 12);
  EXPECT_DOUBLE_EQ(w.w[1], 1.0 / 12);
  EXPECT_DOUBLE_EQ(w.w[2], 4.0 / 12);
  EXPECT_DOUBLE_EQ(w.w[3], 4.0 / 12);
  EXPECT_NEAR(PrefetchOneAheadExposed(w, 12, 12, 0, false), 3.0, 1e-12);
  EXPECT_NEAR(PrefetchOneAheadExposed(w, 12, 12, 0, true), 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(OverlapExposed(12, 12, 0), 0.0);
  EXPECT_NEAR(PrefetchOneAheadExposed(w, 12, 12, 0.25, false), 4.6, 1e-12);
  EXPECT_NEAR(PrefetchOneAheadExposed(w, 36, 12, 0, false), 24.0, 1e-12);
  EXPECT_NEAR(PrefetchOneAheadExposed(LayerWeightShares{}, 10, 6, 0.25, false), 4.0, 1e-12);
  EXPECT_DOUBLE_EQ(OverlapExposed(10, 6, 0.25), 4.0);
  // GQA and SwiGLU (Llama 2 70B's shape: h 8192, 64 heads of 128, 8 KV
  // heads, MLP 28672): QKV h (h + 2 x 1024) = 10240 h, projection 8192 h,
  // gate and up 57344 h, down 28672 h; of 104448 h in all.
  models::ModelSpec llama;
  llama.layers = 2;
  llama.hidden = 8192;
  llama.heads = 64;
  llama.kv_heads = 8;
  llama.ffn = 28672;
  llama.vocab = 32000;
  llama.activation = models::Activation::kSwiglu;
  const LayerWeightShares l = DenseLayerWeightShares(llama);
  EXPECT_DOUBLE_EQ(l.w[0], 10240.0 / 104448);
  EXPECT_DOUBLE_EQ(l.w[1], 8192.0 / 104448);
  EXPECT_DOUBLE_EQ(l.w[2], 57344.0 / 104448);
  EXPECT_DOUBLE_EQ(l.w[3], 28672.0 / 104448);
}

// In the estimator (training.zero3_matrix_prefetch): the ZeRO-3 plan of
// ZeroThreeCommunicationIsExposedAndFollowsDpOverlap, without recompute,
// pairs its forward gathers and its backward gathers and reduce-scatters
// matrix by matrix; the first layer's gather and the last layer's
// reduce-scatter stay as they were. The event engine adds the same excess
// over its layer-by-layer timeline.
TEST(Estimator, MatrixPrefetchPairsEachPassMatrixByMatrix) {
  Scenario s = test::Llama2_7bZero3On1024A100();
  s.training.recompute = parallelism::Recompute::kNone;
  s.training.zero3_matrix_prefetch = true;
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate e = est.Run(s.training, s.workload);
  ASSERT_EQ(e.microbatches, 1);
  const Zero3Traffic z = Llama2_7bZero3Traffic(s, est);
  const double ag = z.ag, rs = z.rs;
  const double slow = s.system.device.overlap_slowdown;
  const LayerWeightShares w = DenseLayerWeightShares(s.model);
  EXPECT_NEAR(e.time.dp_comm,
              PrefetchOneAheadExposed(w, ag, e.time.forward, slow, false) +
                  PrefetchOneAheadExposed(w, ag + rs, e.time.backward, slow, true) + (ag + rs) / 32,
              1e-9 * e.time.dp_comm);
  s.training.zero3_matrix_prefetch = false;
  const TrainingEstimate pooled = est.Run(s.training, s.workload);
  EXPECT_GT(e.time.dp_comm, pooled.time.dp_comm);
}

// Activation offload (training.offload_activation_layers; Megatron-Core
// --cpu-offloading through Transformer Engine's layer windows): N of L
// layers offloaded, q = L / N, r = L % N; the first copy runs beside
// q - 1 + (r > 0) layers, r - 1 copies beside q + 1, the rest beside q
// (windows summing to L - 1), on the copy engines (no slowdown); each adds
// max(0, copy - window x compute) in the forward and in the backward.
// By hand, forward 4 s and backward 8 s a layer:
//   N 3, L 4 (q 1, r 1: windows 1, 1, 1), copy 5 s: 3 x ((5 - 4) + 0) = 3 s;
//     copy 10 s: 3 x ((10 - 4) + (10 - 8)) = 24 s; copy 2 s: hidden, 0 s.
//   N 3, L 8 (q 2, r 2: windows 2, 3, 2), copy 10 s: the two windows of 2
//     expose 10 - 8 = 2 s forward, 0 backward; the window of 3 (12 s) none:
//     4 s.
//   N 2, L 6 (q 3, r 0: windows 2, 3), copy 10 s: 2 s; N 2, L 7 (q 3, r 1:
//     windows 3, 3), copy 13 s: 2 x (13 - 12) = 2 s.
//   Nothing offloaded, or every layer (the last must stay): 0.
TEST(Estimator, ActivationOffloadExposesWhatItsWindowDoesNotCover) {
  EXPECT_DOUBLE_EQ(ActivationOffloadExposed(3, 4, 5, 4, 8), 3);
  EXPECT_DOUBLE_EQ(ActivationOffloadExposed(3, 4, 10, 4, 8), 24);
  EXPECT_DOUBLE_EQ(ActivationOffloadExposed(3, 4, 2, 4, 8), 0);
  EXPECT_DOUBLE_EQ(ActivationOffloadExposed(3, 8, 10, 4, 8), 4);
  EXPECT_DOUBLE_EQ(ActivationOffloadExposed(2, 6, 10, 4, 8), 2);
  EXPECT_DOUBLE_EQ(ActivationOffloadExposed(2, 7, 13, 4, 8), 2);
  EXPECT_DOUBLE_EQ(ActivationOffloadExposed(0, 8, 10, 4, 8), 0);
  EXPECT_DOUBLE_EQ(ActivationOffloadExposed(8, 8, 10, 4, 8), 0);
}

// Soft-capping keeps its tanh's output for the backward (tanh_backward reads
// it; the division and the product by the cap keep nothing): Llama 3 8B's
// 32 heads at 8192 tokens, b = 1, tp 1, materialised attention without
// recompute keep 2 x 32 x 8192^2 = 4,294,967,296 B more a layer with the
// attention capped; the capped final logits 2 x 8192 x 128,256 =
// 2,101,346,304 B more on the last stage, held with the loss's.
TEST(Estimator, SoftCapsKeepTheirTanhOutputs) {
  Scenario s = test::Llama3_8bZero3On64A100();
  s.training.recompute = parallelism::Recompute::kNone;
  s.training.attention = parallelism::Attention::kMaterialized;
  const double kept = parallelism::LayerActivationBytes(s.model, s.training, 1, 8192);
  const TrainingEstimate plain = TrainingEstimator(s.model, s.system).Run(s.training, s.workload);
  s.model.attention_softcap = 50;
  EXPECT_DOUBLE_EQ(parallelism::LayerActivationBytes(s.model, s.training, 1, 8192) - kept, 4294967296.0);
  s.model.attention_softcap = 0;
  s.model.final_logit_softcap = 30;
  const TrainingEstimate capped = TrainingEstimator(s.model, s.system).Run(s.training, s.workload);
  EXPECT_DOUBLE_EQ(capped.memory.temporary - plain.memory.temporary, 2101346304.0);
  EXPECT_GT(capped.iteration_s, plain.iteration_s);  // three passes over the logits each way
}

// In the estimator: Llama 3 8B on 64 A100 (tp 1, pp 1, one microbatch of
// 8,192 tokens, no recompute, flash attention, no dropout) keeps 34 sbh =
// 34 x 8192 x 4096 = 1,140,850,688 B a layer (parallelism/
// memory_model_test.cpp works out the same layer). Offloading 31 of the 32
// layers takes exactly 31 x 1,140,850,688 = 35,366,371,328 B off the device;
// each copy takes 1,140,850,688 B / 25 GB/s (a host link set here) =
// 45.634 ms, and with q = 1, r = 1 every window is one layer, so the step
// grows by 31 x (max(0, c - f) + max(0, c - b)) for the layer's forward f
// and backward b.
TEST(Estimator, ActivationOffloadMovesMemoryToTheHostAndPaysTheCopies) {
  Scenario s = test::Llama3_8bZero3On64A100();
  s.training.recompute = parallelism::Recompute::kNone;
  s.training.attention = parallelism::Attention::kFlash;
  s.system.host_bandwidth = 25e9;
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate kept = est.Run(s.training, s.workload);
  ASSERT_EQ(kept.microbatches, 1);
  ASSERT_DOUBLE_EQ(parallelism::LayerActivationBytes(s.model, s.training, 1, 8192), 1140850688.0);
  s.training.offload_activation_layers = 31;
  const TrainingEstimate off = est.Run(s.training, s.workload);
  EXPECT_NEAR(kept.memory.activations - off.memory.activations, 35366371328.0, 1.0);
  EXPECT_NEAR(off.memory.host_activations, 35366371328.0, 1.0);
  const OperatorCosts c = est.Costs(s.training, s.workload);
  EXPECT_NEAR(c.act_offload_copy, 45.634e-3, 0.001e-3);
  const double exposed = 31 * (std::max(0.0, c.act_offload_copy - c.dense.fwd) +
                               std::max(0.0, c.act_offload_copy - c.dense.bwd));
  ASSERT_GT(exposed, 0);
  EXPECT_NEAR(off.time.offload - kept.time.offload, exposed, 1e-9 * exposed);
  EXPECT_NEAR(off.iteration_s - kept.iteration_s, exposed, 1e-9 * off.iteration_s);
}

// Issue 15: an overlapped collective of c seconds beside T seconds of compute
// slowed by s exposes max(c - T, c s/(1+s)). By hand, s = 0.25 (k = 0.2):
//   c = 2,  T = 10: hidden, the compute loses 2 x 0.2 = 0.4 s;
//   c = 10, T = 2:  the collective outlasts the (slowed, 2.5 s) compute: 8 s;
//   c = 5,  T = 4:  the boundary c = T (1+s): both give 1 s;
//   s = 0 is the old max(0, c - T).
TEST(Estimator, OverlappedCollectiveSlowsTheComputeBesideIt) {
  EXPECT_DOUBLE_EQ(OverlapExposed(2, 10, 0.25), 0.4);
  EXPECT_DOUBLE_EQ(OverlapExposed(10, 2, 0.25), 8.0);
  EXPECT_DOUBLE_EQ(OverlapExposed(5, 4, 0.25), 1.0);
  EXPECT_DOUBLE_EQ(OverlapExposed(2, 10, 0), 0.0);
  EXPECT_DOUBLE_EQ(OverlapExposed(12, 10, 0), 2.0);
}

// Issue 15: under TP overlap each collective hides behind its own GEMM only
// (TpExposedCollectives: Transformer Engine's userbuffer pairs), and the
// forward reduce-scatter split with its output projection leaves its last
// chunk exposed: 4 chunks in BF16 (the pipeline method), one a rank under
// FP8 (ring exchange). Llama 3 70B on 512 H100, tp 8 with sequence
// parallelism, micro batch 1 x 8192 tokens: every collective moves b s h =
// 8192 x 8192 bf16 elements over the node (0.43 ms; the QKV projection's
// forward GEMM takes 0.26 ms at the preset's rates, so the device's peaks
// are quartered to make every GEMM the longer). By hand, with no contention
// (overlap_slowdown 0) and every GEMM longer than its collective, a layer's
// forward exposes the two reduce-scatters' last chunks, rs / 4 each, its
// backward nothing; under FP8 rs / 8 each. With GEMMs 1,000 times faster
// (peak_bf16) every collective outlasts its GEMM and a block's forward exposes
// ag - T_in + rs / 4 + 3/4 (rs - T_out); a collective never hides behind
// another block's GEMM.
TEST(Estimator, TpCollectivesHideBehindTheirOwnGemmOnly) {
  Scenario sc = LoadScenario("llama3-70b-h100");
  ASSERT_TRUE(sc.training.tp_comm_overlap);
  ASSERT_TRUE(sc.training.sequence_parallel);
  ASSERT_EQ(sc.training.tp, 8);
  sc.system.device.overlap_slowdown = 0;
  auto costs = [&](const Scenario& x) { return TrainingEstimator(x.model, x.system).Costs(x.training, x.workload); };
  auto collective = [&](const Scenario& x, hardware::Collective k) {
    const TrainingEstimator est(x.model, x.system);
    return est.network().Time(k, 8192.0 * 8192 * 2, est.network().Place(8, 1));
  };
  const double ag = collective(sc, hardware::Collective::kAllGather);
  const double rs = collective(sc, hardware::Collective::kReduceScatter);
  {
    Scenario slow = sc;
    slow.system.device.peak_bf16 /= 4;
    slow.system.device.peak_fp8 /= 4;
    const OperatorCosts c = costs(slow);
    for (const TpBlockGemms* b : {&c.dense.tp_attention, &c.dense.tp_mlp}) {
      ASSERT_GT(b->in_fwd, ag);
      ASSERT_GT(b->in_dgrad, ag);
      ASSERT_GT(b->in_wgrad, rs);
      ASSERT_GT(b->out_fwd, rs);
      ASSERT_GT(b->out_dgrad, ag);
    }
    EXPECT_NEAR(c.tp_fwd, 2 * rs / 4, 1e-12);
    EXPECT_EQ(c.tp_bwd, 0.0);
    slow.training.precision = hardware::DataType::kFp8;
    const OperatorCosts f = costs(slow);
    ASSERT_GT(f.dense.tp_attention.in_fwd, ag);
    ASSERT_GT(f.dense.tp_attention.out_fwd, rs);
    EXPECT_NEAR(f.tp_fwd, 2 * rs / 8, 1e-12);
    slow.training.precision = hardware::DataType::kBf16;
    slow.training.tp_comm_overlap = false;
    EXPECT_NEAR(costs(slow).tp_fwd, 2 * (ag + rs), 1e-12);  // TpLayerCollectives: none hidden
  }
  sc.system.device.peak_bf16 *= 1e3;
  const double slow_ag = collective(sc, hardware::Collective::kAllGather);
  const double slow_rs = collective(sc, hardware::Collective::kReduceScatter);
  ASSERT_EQ(slow_ag, ag);
  const OperatorCosts c = costs(sc);
  double fwd = 0, bwd = 0;
  for (const TpBlockGemms* b : {&c.dense.tp_attention, &c.dense.tp_mlp}) {
    ASSERT_GT(slow_ag, b->in_fwd + b->in_dgrad + b->out_dgrad);
    ASSERT_GT(slow_rs, b->out_fwd + b->in_wgrad);
    fwd += slow_ag - b->in_fwd + slow_rs / 4 + 0.75 * (slow_rs - b->out_fwd);
    bwd += (slow_ag - b->out_dgrad) + (slow_ag - b->in_dgrad) + (slow_rs - b->in_wgrad);
  }
  EXPECT_NEAR(c.tp_fwd, fwd, 1e-9 * fwd);
  EXPECT_NEAR(c.tp_bwd, bwd, 1e-9 * bwd);
}

// Issue 15: under per-tensor FP8 with sequence parallelism the layers'
// all-gathers move the quantized activations (training.fp8_tp_gather).
// Llama 3 70B at tp 8, 8,192 tokens a microbatch, no overlap, by hand with
// the network's own collective times: ag2 / ag1 the all-gather of the
// 8192 x 8192 activations at 2 / 1 B an element, rs their reduce-scatter,
// amax a 4-byte all-reduce. A dense layer, forward: two input gathers and
// two reduce-scatters; backward: two output-gradient gathers, two
// reduce-scatters and two re-gathers of the saved inputs.
TEST(Estimator, Fp8TpGathersMoveOneByteAnElement) {
  Scenario sc = LoadScenario("llama3-70b-h100");
  ASSERT_TRUE(sc.training.sequence_parallel);
  ASSERT_EQ(sc.training.tp, 8);
  ASSERT_EQ(sc.model.hidden, 8192);
  ASSERT_EQ(sc.training.micro_batch * sc.workload.seq_len, 8192);
  sc.training.tp_comm_overlap = false;
  sc.training.precision = hardware::DataType::kFp8;
  sc.training.fp8_recipe = parallelism::Fp8Recipe::kDelayed;
  const TrainingEstimator est(sc.model, sc.system);
  const auto g = est.network().Place(8, 1);
  const double elements = 8192.0 * 8192;
  const double ag2 = est.network().Time(hardware::Collective::kAllGather, 2 * elements, g);
  const double ag1 = est.network().Time(hardware::Collective::kAllGather, elements, g);
  const double rs = est.network().Time(hardware::Collective::kReduceScatter, 2 * elements, g);
  const double amax = est.network().Time(hardware::Collective::kAllReduce, 4.0, g);
  ASSERT_LT(ag1, ag2);
  ASSERT_GT(amax, 0.0);
  auto costs = [&](parallelism::Fp8Recipe r, parallelism::Fp8TpGather mode) {
    Scenario x = sc;
    x.training.fp8_recipe = r;
    x.training.fp8_tp_gather = mode;
    return est.Costs(x.training, x.workload);
  };
  using parallelism::Fp8Recipe;
  using parallelism::Fp8TpGather;
  const OperatorCosts all = costs(Fp8Recipe::kDelayed, Fp8TpGather::kAll);
  EXPECT_NEAR(all.tp_fwd, 2 * (ag1 + rs), 1e-12);
  EXPECT_NEAR(all.tp_bwd, 2 * (ag1 + rs) + 2 * ag1, 1e-12);
  const OperatorCosts none = costs(Fp8Recipe::kDelayed, Fp8TpGather::kNone);
  EXPECT_NEAR(none.tp_fwd, 2 * (ag2 + rs), 1e-12);
  EXPECT_NEAR(none.tp_bwd, 2 * (ag2 + rs) + 2 * ag2, 1e-12);
  // torchao's float8 tensor parallelism: the forward inputs only.
  const OperatorCosts input = costs(Fp8Recipe::kDelayed, Fp8TpGather::kInput);
  EXPECT_NEAR(input.tp_fwd, 2 * (ag1 + rs), 1e-12);
  EXPECT_NEAR(input.tp_bwd, none.tp_bwd, 1e-12);
  // Current scaling: each quantized gather waits for its amax all-reduce.
  const OperatorCosts current = costs(Fp8Recipe::kCurrent, Fp8TpGather::kAll);
  EXPECT_NEAR(current.tp_fwd, 2 * (amax + ag1 + rs), 1e-12);
  EXPECT_NEAR(current.tp_bwd, 2 * (amax + ag1 + rs) + 2 * ag1, 1e-12);
  // A block-scaled recipe gathers in bf16 here.
  EXPECT_NEAR(costs(Fp8Recipe::kBlockwise, Fp8TpGather::kAll).tp_fwd, none.tp_fwd, 1e-12);
  // So does bf16, whatever the key says.
  Scenario b = sc;
  b.training.precision = hardware::DataType::kBf16;
  EXPECT_NEAR(est.Costs(b.training, b.workload).tp_fwd, none.tp_fwd, 1e-12);
  // A recomputed forward gathers as the forward.
  Scenario r = sc;
  r.training.recompute = parallelism::Recompute::kFull;
  EXPECT_NEAR(est.Costs(r.training, r.workload).tp_rec, 2 * (ag1 + rs), 1e-12);
  // And the step is shorter for it.
  Scenario n = sc;
  n.training.fp8_tp_gather = Fp8TpGather::kNone;
  EXPECT_LT(est.Run(sc.training, sc.workload).iteration_s, est.Run(n.training, n.workload).iteration_s);
}

// Issue 15: PyTorch DTensor's sequence parallelism (torchtitan) keeps the
// gathered input of its column-parallel projections for their weight
// gradients, so its backward has no second all-gather
// (training.sp_input_regather false). Llama 3 70B at tp 8, 8,192 tokens, no
// overlap: Megatron's backward 2 (ag + rs) + 2 ag a layer, DTensor's
// 2 (ag + rs); the forward and a recomputed forward are the same.
TEST(Estimator, DTensorSequenceParallelGathersTheInputOnce) {
  Scenario sc = LoadScenario("llama3-70b-h100");
  ASSERT_TRUE(sc.training.sequence_parallel);
  sc.training.tp_comm_overlap = false;
  sc.training.recompute = parallelism::Recompute::kFull;
  const TrainingEstimator est(sc.model, sc.system);
  const auto g = est.network().Place(8, 1);
  const double ag = est.network().Time(hardware::Collective::kAllGather, 2 * 8192.0 * 8192, g);
  const double rs = est.network().Time(hardware::Collective::kReduceScatter, 2 * 8192.0 * 8192, g);
  const OperatorCosts megatron = est.Costs(sc.training, sc.workload);
  EXPECT_NEAR(megatron.tp_bwd, 2 * (ag + rs) + 2 * ag, 1e-12);
  Scenario d = sc;
  d.training.sp_input_regather = false;
  const OperatorCosts dtensor = est.Costs(d.training, d.workload);
  EXPECT_NEAR(dtensor.tp_bwd, 2 * (ag + rs), 1e-12);
  EXPECT_NEAR(dtensor.tp_fwd, megatron.tp_fwd, 1e-15);
  EXPECT_NEAR(dtensor.tp_rec, megatron.tp_rec, 1e-15);
  EXPECT_LT(est.Run(d.training, d.workload).iteration_s, est.Run(sc.training, sc.workload).iteration_s);
}

// Issue 15: no device knob may do nothing. Each key of the device schema is
// changed (halved; a zero default set to a value; the enum switched) and some
// prediction of Llama 3 70B on 512 H100 must move: iteration time, memory,
// capacity, energy or cost, over the plan in bf16, fp8, fp16, tf32 and fp32,
// each with the flash and the flash2 attention kernels, and with eager
// element-wise kernels.
// A power cap of 560 W is set throughout so that idle_power (which places
// the cap's clock) is seen. Keys that feed no training estimate are listed
// with the verb that reads them.
TEST(Estimator, EveryDeviceKeyMovesAPredictionOrIsListed) {
  const std::map<std::string, std::string> listed = {
      {"name", "shown in reports"},
      {"citation", "shown in reports"},
      {"price", "purchase price: capex in the cost model (orrery report), not the hourly rental estimates use"},
      {"l2_cache", "calibrate: memory records below 2x the cache are dropped as cache-resident"},
      {"peak_int8", "int8 weights in orrery infer"},
      {"peak_fp4", "fp4 weights in orrery infer (Blackwell)"},
  };
  Scenario sc = LoadScenario("llama3-70b-h100");
  sc.system.device.power_cap = 560;
  const hardware::DataType precisions[] = {hardware::DataType::kBf16, hardware::DataType::kFp8,
                                           hardware::DataType::kFp16, hardware::DataType::kTf32,
                                           hardware::DataType::kFp32};
  auto predictions = [&](const hardware::SystemSpec& sys) {
    std::vector<double> out;
    const TrainingEstimator est(sc.model, sys);
    for (hardware::DataType dt : precisions) {
      // Both fused attention kernels: flash2_attention_* are read by flash2 plans.
      for (parallelism::Attention a : {parallelism::Attention::kFlash, parallelism::Attention::kFlash2}) {
        parallelism::TrainingPlan p = sc.training;
        p.precision = dt;
        p.attention = a;
        const TrainingEstimate e = est.Run(p, sc.workload);
        out.insert(out.end(), {e.iteration_s, e.memory.total(), e.memory_capacity, e.energy_j, e.cost_usd});
      }
    }
    // And as PyTorch eager code runs it (unvectorized_element_rate is read
    // by eager element-wise kernels only).
    parallelism::TrainingPlan p = sc.training;
    p.elementwise = parallelism::Elementwise::kEager;
    out.push_back(est.Run(p, sc.workload).iteration_s);
    return out;
  };
  const std::vector<double> base = predictions(sc.system);
  int moved = 0;
  for (const auto& field : hardware::DeviceSchema().fields()) {
    const std::string& key = field.info.key;
    hardware::SystemSpec sys = sc.system;
    base::ParamValue v = field.load(sys.device);
    if (field.info.type == base::ParamType::kString) {
      v.text += " (changed)";
    } else if (field.info.type == base::ParamType::kEnum) {
      v.number = v.number == 0 ? 1 : 0;
    } else {
      // Zero defaults: an idle power of 100 W, an FP16 peak of twice BF16's.
      const bool power = field.info.dim == base::Dimension::kPower;
      v.number = v.number > 0 ? 0.5 * v.number : power ? 100.0 : 2 * sys.device.peak_bf16;
    }
    field.store(sys.device, v);
    const bool moves = predictions(sys) != base;
    if (listed.count(key) > 0) {
      EXPECT_FALSE(moves) << "system.device." << key << " moves a prediction: take it off the list";
    } else {
      EXPECT_TRUE(moves) << "system.device." << key << " changes no prediction: wire it or list it with a reason";
      moved += moves ? 1 : 0;
    }
  }
  EXPECT_GE(moved, 15);
}

// Issue 15/17: a power cap on Llama 3 70B's H100s (TDP 700 W, idle 30 % =
// 210 W). At 455 W the clock is cbrt(245/490) = 0.7937 of full: every GEMM
// and attention kernel takes 1/0.7937 = 1.26 x as long, element-wise kernels
// do not, so the forward pass grows by less than 1.26 x but by more than
// 1.2 x (the GEMMs are most of it); the energy is drawn at the cap.
TEST(Estimator, PowerCapSlowsComputeAndBoundsTheEnergy) {
  Scenario sc = LoadScenario("llama3-70b-h100");
  const TrainingEstimator full(sc.model, sc.system);
  const TrainingEstimate a = full.Run(sc.training, sc.workload);
  sc.system.device.power_cap = 455;
  const TrainingEstimator capped(sc.model, sc.system);
  const TrainingEstimate b = capped.Run(sc.training, sc.workload);
  const double growth = b.time.forward / a.time.forward;
  EXPECT_LT(growth, 1 / 0.7937005259840998);
  EXPECT_GT(growth, 1.2);
  // 512 devices x 455 W x iteration x PUE.
  EXPECT_NEAR(b.energy_j, 512 * 455.0 * b.iteration_s * sc.system.pue, 1e-9 * b.energy_j);
  EXPECT_NEAR(a.energy_j, 512 * 700.0 * a.iteration_s * sc.system.pue, 1e-9 * a.energy_j);
}

// An FP8 plan runs its linear-layer GEMMs at the FP8 peak but its
// dot-product attention in BF16 (Transformer Engine's fp8_dpa defaults to
// off): at 32K tokens the attention core of Llama 3 8B costs the same in
// both plans, while the layer's GEMMs get faster. The H100's FP8 peak is
// twice its BF16 peak (1,979 vs 989 TFLOP/s dense), so the GEMM time falls
// by more than a third but never below half.
TEST(Estimator, Fp8PlansKeepAttentionInBf16) {
  Scenario s = LoadScenarioWithModel("llama3-70b-h100", "llama3-8b");
  s.workload.seq_len = 32768;
  s.workload.global_batch = 64;
  s.training.tp = 8;
  s.training.pp = 1;
  s.training.dp = 0;
  s.training.micro_batch = 1;
  s.training.recompute = parallelism::Recompute::kNone;
  const TrainingEstimator est(s.model, s.system);
  s.training.precision = hardware::DataType::kBf16;
  const OperatorCosts bf16 = est.Costs(s.training, s.workload);
  s.training.precision = hardware::DataType::kFp8;
  const OperatorCosts fp8 = est.Costs(s.training, s.workload);
  EXPECT_GT(bf16.dense.attention_fwd, 0);
  EXPECT_DOUBLE_EQ(fp8.dense.attention_fwd, bf16.dense.attention_fwd);
  EXPECT_LT(fp8.dense.gemm, bf16.dense.gemm * 2 / 3);
  EXPECT_GT(fp8.dense.gemm, bf16.dense.gemm / 2);
}

// Issue 15: Transformer Engine's cast-transpose around an FP8 linear layer
// (step_kernels.h), by hand, on a device with 1 TB/s at a flat 80 % and
// 2 us per kernel. Llama 3 8B's QKV projection on one 8192-token
// microbatch: input 8192 x 4096, output 8192 x 6144 ((32 + 2 x 8) x 128).
//   forward:  4 B x 8192 x 4096 = 134,217,728 B / 0.8 TB/s = 167.77216 us + 2 us
//   backward: 4 B x 8192 x 6144 = 201,326,592 B / 0.8 TB/s = 251.65824 us + 2 us
TEST(StepKernels, Fp8CastTransposeByHand) {
  const hardware::DeviceSpec d = FlatMemoryDevice();
  const models::Op qkv = Llama3_8bQkvGemm();
  const PassTimes t = Fp8LinearCastTimes(d, qkv, parallelism::Fp8Recipe::kDelayed);
  EXPECT_NEAR(t.fwd, 169.77216e-6, 1e-15);
  EXPECT_NEAR(t.bwd, 253.65824e-6, 1e-15);
}

// The same QKV linear layer (input 8192 x 4096 = 33,554,432 elements,
// output gradient 8192 x 6144 = 50,331,648) under each FP8 recipe
// (step_kernels.h), on the same TN-only device (fp8_any_layout false:
// Hopper-like; 0.8 TB/s achieved, 2 us a kernel):
//   delayed   4 B/element in one kernel: 169.77216 / 253.65824 us (above);
//             no bytes beyond the cast-transpose.
//   current   + an amax kernel reading 2 B/element:
//             fwd 67,108,864 B / 0.8 TB/s = 83.88608 us + 2 us -> 255.65824 us
//             bwd 100,663,296 B / 0.8 TB/s = 125.82912 us + 2 us -> 381.48736 us
//             (167,772,160 B more than delayed for the layer)
//   blockwise 4 + 2 x 4/128 = 4.0625 B/element in one kernel:
//             fwd 136,314,880 B / 0.8 TB/s = 170.3936 us + 2 us = 172.3936 us
//             bwd 204,472,320 B / 0.8 TB/s = 255.5904 us + 2 us = 257.5904 us
//             (83,886,080 / 16 = 5,242,880 B more than delayed)
//   mxfp8     4 + 2 x 1/32 = 4.0625 B/element: the same quantize bytes as
//             blockwise (one 4-byte scale per 128 elements = one 1-byte scale
//             per 32); its scale swizzles are worked in Fp8BlackwellCastsByHand.
TEST(StepKernels, Fp8RecipeCastsByHand) {
  const hardware::DeviceSpec d = FlatMemoryDevice();
  const models::Op qkv = Llama3_8bQkvGemm();
  ASSERT_FALSE(Fp8GemmTakesAnyLayout(d));
  EXPECT_EQ(Fp8QuantizeBytesPerElement(parallelism::Fp8Recipe::kDelayed, false), 4.0);
  EXPECT_EQ(Fp8QuantizeBytesPerElement(parallelism::Fp8Recipe::kCurrent, false), 4.0);
  EXPECT_EQ(kFp8CurrentAmaxBytesPerElement, 2.0);
  EXPECT_EQ(Fp8QuantizeBytesPerElement(parallelism::Fp8Recipe::kBlockwise, false), 4.0625);
  EXPECT_EQ(Fp8QuantizeBytesPerElement(parallelism::Fp8Recipe::kMxfp8, false), 4.0625);
  const PassTimes cs = Fp8LinearCastTimes(d, qkv, parallelism::Fp8Recipe::kCurrent);
  EXPECT_NEAR(cs.fwd, 255.65824e-6, 1e-15);
  EXPECT_NEAR(cs.bwd, 381.48736e-6, 1e-15);
  const PassTimes b = Fp8LinearCastTimes(d, qkv, parallelism::Fp8Recipe::kBlockwise);
  EXPECT_NEAR(b.fwd, 172.3936e-6, 1e-15);
  EXPECT_NEAR(b.bwd, 257.5904e-6, 1e-15);
  const PassTimes none = Fp8MxSwizzleTimes(d, qkv, parallelism::Fp8Recipe::kCurrent);
  EXPECT_EQ(none.fwd, 0.0);
  EXPECT_EQ(none.bwd, 0.0);
}

// Issue 15: the same QKV linear layer on a Blackwell-like device (FP8 GEMMs
// in any layout: fp8_any_layout, Fp8GemmTakesAnyLayout; same 0.8 TB/s and
// 2 us a kernel). Elements: input 8192 x 4096 = 33,554,432, output gradient
// 8192 x 6144 = 50,331,648, weight 4096 x 6144 = 25,165,824.
//   delayed   row-wise copy only, 3 B/element:
//             fwd 100,663,296 B / 0.8 TB/s = 125.82912 us + 2 us = 127.82912 us
//             bwd 150,994,944 B / 0.8 TB/s = 188.74368 us + 2 us = 190.74368 us
//   current   + the amax kernel (2 B/element, as on the TN device):
//             fwd 127.82912 + 85.88608 = 213.71520 us
//             bwd 190.74368 + 127.82912 = 318.57280 us
//   mxfp8     quantize, both MX copies, 4.0625 B/element: 172.3936 / 257.5904 us
//             (as on the TN device), plus six scale swizzles, each reading and
//             writing 1 B per 32 elements of one operand:
//               input  33,554,432 / 32 x 2 = 2,097,152 B -> 2.62144 + 2 = 4.62144 us
//               weight 25,165,824 / 32 x 2 = 1,572,864 B -> 1.96608 + 2 = 3.96608 us
//               grad   50,331,648 / 32 x 2 = 3,145,728 B -> 3.93216 + 2 = 5.93216 us
//             fwd (input, weight) 8.58752 us -> 180.98112 us
//             bwd (grad, weight; input, grad) 20.45184 us -> 278.04224 us
// Bytes for the layer: delayed 251,658,240; current 419,430,400; mxfp8
// 340,787,200 + 13,631,488 of swizzles = 354,418,688.
TEST(StepKernels, Fp8BlackwellCastsByHand) {
  hardware::DeviceSpec d = FlatMemoryDevice();
  d.fp8_any_layout = true;
  const models::Op qkv = Llama3_8bQkvGemm();
  ASSERT_TRUE(Fp8GemmTakesAnyLayout(d));
  EXPECT_EQ(Fp8QuantizeBytesPerElement(parallelism::Fp8Recipe::kDelayed, true), 3.0);
  EXPECT_EQ(Fp8QuantizeBytesPerElement(parallelism::Fp8Recipe::kCurrent, true), 3.0);
  EXPECT_EQ(Fp8QuantizeBytesPerElement(parallelism::Fp8Recipe::kMxfp8, true), 4.0625);
  EXPECT_EQ(Fp8QuantizeBytesPerElement(parallelism::Fp8Recipe::kBlockwise, true), 4.0625);
  const PassTimes delayed = Fp8LinearCastTimes(d, qkv, parallelism::Fp8Recipe::kDelayed);
  EXPECT_NEAR(delayed.fwd, 127.82912e-6, 1e-15);
  EXPECT_NEAR(delayed.bwd, 190.74368e-6, 1e-15);
  const PassTimes cs = Fp8LinearCastTimes(d, qkv, parallelism::Fp8Recipe::kCurrent);
  EXPECT_NEAR(cs.fwd, 213.7152e-6, 1e-15);
  EXPECT_NEAR(cs.bwd, 318.5728e-6, 1e-15);
  const PassTimes swizzle = Fp8MxSwizzleTimes(d, qkv, parallelism::Fp8Recipe::kMxfp8);
  EXPECT_NEAR(swizzle.fwd, 8.58752e-6, 1e-15);
  EXPECT_NEAR(swizzle.bwd, 20.45184e-6, 1e-15);
  const PassTimes mx = Fp8LinearCastTimes(d, qkv, parallelism::Fp8Recipe::kMxfp8);
  EXPECT_NEAR(mx.fwd, 180.98112e-6, 1e-15);
  EXPECT_NEAR(mx.bwd, 278.04224e-6, 1e-15);
}

// NVFP4 (Transformer Engine's NVFP4BlockScaling) on the same layer and
// device: an amax kernel (2 B/element), then one quantize kernel writing
// both FP4 copies with an E4M3 scale per 16 elements, 2 + 2 x (0.5 + 1/16)
// = 3.125 B/element, and six scale swizzles of 1 B per 16 elements each way:
//   fwd  quantize 104,857,600 B -> 131.072 + 2 = 133.072 us
//        amax      67,108,864 B ->  83.88608 + 2 = 85.88608 us
//        swizzles input 4,194,304 B -> 7.24288 us, weight 3,145,728 B ->
//        5.93216 us
//        = 232.13312 us
//   bwd  quantize 157,286,400 B -> 196.608 + 2 = 198.608 us
//        amax     100,663,296 B -> 125.82912 + 2 = 127.82912 us
//        swizzles grad 6,291,456 B -> 9.86432 us (twice), weight 5.93216,
//        input 7.24288 us = 32.90368 us
//        = 359.3408 us
// The linear GEMM runs in FP4; the attention and the router stay BF16.
TEST(StepKernels, Nvfp4CastsByHand) {
  hardware::DeviceSpec d = FlatMemoryDevice();
  d.fp8_any_layout = true;
  const models::Op qkv = Llama3_8bQkvGemm();
  EXPECT_EQ(Fp8QuantizeBytesPerElement(parallelism::Fp8Recipe::kNvfp4, true), 3.125);
  EXPECT_EQ(Fp8QuantizeBytesPerElement(parallelism::Fp8Recipe::kNvfp4, false), 3.125);
  const PassTimes t = Fp8LinearCastTimes(d, qkv, parallelism::Fp8Recipe::kNvfp4);
  EXPECT_NEAR(t.fwd, 232.13312e-6, 1e-15);
  EXPECT_NEAR(t.bwd, 359.3408e-6, 1e-15);
  EXPECT_EQ(TrainingGemmDataType(qkv, hardware::DataType::kFp8, parallelism::Fp8Recipe::kNvfp4),
            hardware::DataType::kFp4);
  EXPECT_EQ(TrainingGemmDataType(qkv, hardware::DataType::kFp8, parallelism::Fp8Recipe::kMxfp8),
            hardware::DataType::kFp8);
  models::Op core = qkv, router = qkv;
  core.attention_core = true;
  router.router = true;
  EXPECT_EQ(TrainingGemmDataType(core, hardware::DataType::kFp8, parallelism::Fp8Recipe::kNvfp4),
            hardware::DataType::kBf16);
  EXPECT_EQ(TrainingGemmDataType(router, hardware::DataType::kFp8, parallelism::Fp8Recipe::kNvfp4),
            hardware::DataType::kBf16);
}

// Issue 16: the casts around a grouped expert GEMM (Fp8GroupedCastTimes,
// step_kernels.h), by hand on the same device (0.8 TB/s achieved, 2 us a
// kernel). Qwen3-30B-A3B's fc1 (expert_up) at micro batch 1 x 4096 tokens,
// tp 1, ep 8, balanced: Q = 4096 x 8 = 32,768 rows, K = 2048 (hidden),
// N = 2 x 768 = 1536 (gate and up); 128 / 8 = 16 local experts of 2,048 rows.
//   delayed   one fused kernel over all rows (nvte_multi_cast_transpose):
//             fwd 4 B x 32,768 x 2048 = 268,435,456 B / 0.8 TB/s
//                 = 335.54432 us + 2 us = 337.54432 us
//             bwd 4 B x 32,768 x 1536 = 201,326,592 B -> 251.65824 + 2 = 253.65824 us
//   mxfp8     16 kernels of 2,048 rows, 4.0625 B/element:
//             fwd 4.0625 x 2048 x 2048 = 17,039,360 B -> 21.2992 + 2 us, x 16 = 372.7872 us
//             bwd 4.0625 x 2048 x 1536 = 12,779,520 B -> 15.9744 + 2 us, x 16 = 287.5904 us
//   current   16 x (cast 4 B/element + amax 2 B/element, a kernel each):
//             fwd 16,777,216 B -> 22.97152 us, 8,388,608 B -> 12.48576 us;
//                 x 16 = 567.31648 us
//             bwd 12,582,912 B -> 17.72864 us, 6,291,456 B -> 9.86432 us;
//                 x 16 = 441.48736 us
// One local expert is the linear layer's cast (Fp8LinearCastTimes).
TEST(StepKernels, Fp8GroupedExpertCastsByHand) {
  const hardware::DeviceSpec d = FlatMemoryDevice();
  models::Op fc1;
  fc1.kind = models::OpKind::kGemm;
  fc1.expert = true;
  fc1.m = 32768;
  fc1.n = 1536;
  fc1.k = 2048;
  const PassTimes delayed = Fp8GroupedCastTimes(d, fc1, parallelism::Fp8Recipe::kDelayed, 16);
  EXPECT_NEAR(delayed.fwd, 337.54432e-6, 1e-15);
  EXPECT_NEAR(delayed.bwd, 253.65824e-6, 1e-15);
  const PassTimes mx = Fp8GroupedCastTimes(d, fc1, parallelism::Fp8Recipe::kMxfp8, 16);
  EXPECT_NEAR(mx.fwd, 372.7872e-6, 1e-14);
  EXPECT_NEAR(mx.bwd, 287.5904e-6, 1e-14);
  const PassTimes cs = Fp8GroupedCastTimes(d, fc1, parallelism::Fp8Recipe::kCurrent, 16);
  EXPECT_NEAR(cs.fwd, 567.31648e-6, 1e-14);
  EXPECT_NEAR(cs.bwd, 441.48736e-6, 1e-14);
  const PassTimes one = Fp8GroupedCastTimes(d, fc1, parallelism::Fp8Recipe::kCurrent, 1);
  EXPECT_DOUBLE_EQ(one.fwd, Fp8LinearCastTimes(d, fc1, parallelism::Fp8Recipe::kCurrent).fwd);
  EXPECT_DOUBLE_EQ(one.bwd, Fp8LinearCastTimes(d, fc1, parallelism::Fp8Recipe::kCurrent).bwd);
}

// Megatron-Core's fp32 vocabulary-parallel cross entropy (step_kernels.h),
// by hand on the same device: 8192 tokens, Llama 3's 128,256-word vocabulary
// over tp 8 = 16,032 logits per token, 131,334,144 logits.
//   forward:  38 B each = 4,990,697,472 B / 0.8 TB/s = 6.23837184 ms + 6 x 2 us
//   backward: 14 B each = 1,838,678,016 B / 0.8 TB/s = 2.29834752 ms + 2 x 2 us
TEST(StepKernels, VocabParallelCrossEntropyByHand) {
  const hardware::DeviceSpec d = FlatMemoryDevice();
  const PassTimes t = VocabParallelCrossEntropyTimes(d, 8192, 128256.0 / 8);
  EXPECT_NEAR(t.fwd, 6.25037184e-3, 1e-14);
  EXPECT_NEAR(t.bwd, 2.30234752e-3, 1e-14);
}

// The loss as each framework's kernels move it (LossTimes, step_kernels.h),
// by hand on the same device and the same 131,334,144 logits:
//   torch_fp32 (torchtitan, litgpt under autocast): forward the cast (6 B)
//     and log_softmax (8 B), 14 B = 1,838,678,016 B / 0.8 TB/s
//     = 2.29834752 ms + 2 x 2 us; backward nll_loss's gradient (4 B),
//     log_softmax's (12 B), the cast's (6 B), 22 B = 2,889,351,168 B
//     = 3.61168896 ms + 3 x 2 us.
//   fused_bf16 (flash-attn's cross entropy, llm-foundry): forward 2 B =
//     262,668,288 B = 0.32833536 ms + 2 us; backward 4 B = 525,336,576 B
//     = 0.65667072 ms + 2 us.
//   megatron_fp32 is VocabParallelCrossEntropyTimes above.
TEST(StepKernels, LossPerFrameworkByHand) {
  const hardware::DeviceSpec d = FlatMemoryDevice();
  const double shard = 128256.0 / 8;
  const PassTimes torch = LossTimes(d, 8192, shard, parallelism::LossKernel::kTorchFp32);
  EXPECT_NEAR(torch.fwd, 2.30234752e-3, 1e-14);
  EXPECT_NEAR(torch.bwd, 3.61768896e-3, 1e-14);
  const PassTimes fused = LossTimes(d, 8192, shard, parallelism::LossKernel::kFusedBf16);
  EXPECT_NEAR(fused.fwd, 0.33033536e-3, 1e-14);
  EXPECT_NEAR(fused.bwd, 0.65867072e-3, 1e-14);
  const PassTimes megatron = LossTimes(d, 8192, shard, parallelism::LossKernel::kMegatronFp32);
  EXPECT_DOUBLE_EQ(megatron.fwd, VocabParallelCrossEntropyTimes(d, 8192, shard).fwd);
  EXPECT_DOUBLE_EQ(megatron.bwd, VocabParallelCrossEntropyTimes(d, 8192, shard).bwd);
  // The breakdown's bytes per logit: 38 + 14, 14 + 22, 2 + 4.
  EXPECT_DOUBLE_EQ(LossFwdBytesPerLogit(parallelism::LossKernel::kMegatronFp32) +
                       LossBwdBytesPerLogit(parallelism::LossKernel::kMegatronFp32),
                   52.0);
  EXPECT_DOUBLE_EQ(LossFwdBytesPerLogit(parallelism::LossKernel::kTorchFp32) +
                       LossBwdBytesPerLogit(parallelism::LossKernel::kTorchFp32),
                   36.0);
  EXPECT_DOUBLE_EQ(LossFwdBytesPerLogit(parallelism::LossKernel::kFusedBf16) +
                       LossBwdBytesPerLogit(parallelism::LossKernel::kFusedBf16),
                   6.0);
}

// Llama 3 8B on the llama3-70b-h100 scenario's H100 with a flat 80 % memory
// efficiency (2.68 TB/s) and no kernel overhead, 8192-token sequences: the
// device the two tests below work its memory-bound kernels on by hand.
Scenario Llama3_8bAtFlatMemory(int64_t global_batch) {
  Scenario s = LoadScenarioWithModel("llama3-70b-h100", "llama3-8b");
  s.system.device.memory_efficiency = hardware::Curve{{1e6}, {0.8}, {}};
  s.system.device.kernel_overhead = 0;
  s.workload.seq_len = 8192;
  s.workload.global_batch = global_batch;
  return s;
}

// Issue 15: what an FP8 Megatron-Core step spends beyond its GEMMs, wired
// into the estimator. Llama 3 8B, one 8192-token microbatch on one H100
// (tp 1) with a flat 80 % memory efficiency (2.68 TB/s) and no kernel
// overhead:
// - each FP8 linear layer casts its input forward and its output gradient
//   backward (4 B per element): inputs 8192 x (4096 QKV + 4096 out_proj +
//   4096 mlp_up + 14336 mlp_down) = 218,103,808 elements, 872,415,232 B,
//   325.5 us; outputs 8192 x (6144 + 4096 + 28672 + 4096) = 352,321,536
//   elements, 1,409,286,144 B, 525.9 us. The BF16 plan has neither.
// - the LM head stays in BF16 (Megatron-Core's output layer is not a TE
//   module): the FP8 plan's head costs what the BF16 plan's does, and its
//   memory-bound part is the final RMSNorm (8192 x 4096 x 4 B =
//   134,217,728 B forward, one pass of 3 accesses an element backward,
//   201,326,592 B) and the fp32 cross entropy over
//   8192 x 128,256 = 1,050,673,152 logits (38 B each forward, 14 B backward).
TEST(Estimator, Fp8CastsAndBf16LossAsMegatronCoreRunsThem) {
  Scenario s = Llama3_8bAtFlatMemory(64);
  ASSERT_EQ(s.model.vocab, 128256);
  s.training.tp = 1;
  s.training.pp = 1;
  s.training.cp = 1;
  s.training.dp = 0;
  s.training.micro_batch = 1;
  s.training.sequence_parallel = false;
  s.training.recompute = parallelism::Recompute::kNone;
  const TrainingEstimator est(s.model, s.system);
  s.training.precision = hardware::DataType::kBf16;
  const OperatorCosts bf16 = est.Costs(s.training, s.workload);
  s.training.precision = hardware::DataType::kFp8;
  const OperatorCosts fp8 = est.Costs(s.training, s.workload);
  const double bw = 3.35e12 * 0.8;
  // A layer's time beside its GEMMs (fwd = GEMMs / 3 of `gemm` + the rest).
  auto beside_fwd = [](const LayerCosts& l) { return l.fwd - l.gemm / 3; };
  auto beside_bwd = [](const LayerCosts& l) { return l.bwd - 2 * l.gemm / 3; };
  EXPECT_NEAR(beside_fwd(fp8.dense) - beside_fwd(bf16.dense), 872415232.0 / bw, 1e-12);
  EXPECT_NEAR(beside_bwd(fp8.dense) - beside_bwd(bf16.dense), 1409286144.0 / bw, 1e-12);
  EXPECT_DOUBLE_EQ(fp8.head.fwd, bf16.head.fwd);
  EXPECT_DOUBLE_EQ(fp8.head.bwd, bf16.head.bwd);
  const double logits = 8192.0 * 128256;
  EXPECT_NEAR(beside_fwd(bf16.head), (134217728.0 + 38 * logits) / bw, 1e-12);
  EXPECT_NEAR(beside_bwd(bf16.head), (201326592.0 + 14 * logits) / bw, 1e-12);
}

// Megatron-Core's attention with Transformer Engine around the fused QKV
// projection, wired into both engines. Llama 3 8B (32 query and 8 KV heads
// of 128), one 8192-token microbatch on one H100 with a flat 80 % memory
// efficiency (2.68 TB/s) and no kernel overhead, a layer in bf16:
// - RoPE in TE's kernels (training.rope_kernel): 8192 x 40 x 128 =
//   41,943,040 query and key elements read and written, 167,772,160 B
//   forward and as much backward;
// - the packed layout's copies (training.packed_qkv_copies, both on by
//   default), forward only:
//   the queries 8192 x 4096 x 4 B = 134,217,728 B, the values 8192 x 1024 x
//   4 B = 33,554,432 B;
// - the split's concatenation (TE's SplitAlongDim, torch.cat), backward
//   only: the projection's output 8192 x 6144 x 2 B read and written,
//   201,326,592 B.
// A layer moves 335,544,320 B more forward (125.203 us) and 369,098,752 B
// more backward (137.724 us); over 32 layers 4.006 + 4.407 = 8.414 ms more
// a step, in the closed form and the event engine. Under selective
// recompute the values' copy runs again with the attention core: 12.52 us
// a layer, 0.401 ms a step.
TEST(Estimator, MegatronCoreRopeAndQkvCopiesAsTransformerEngineRunsThem) {
  Scenario s = Llama3_8bAtFlatMemory(1);
  s.system.nodes = 1;
  s.system.devices_per_node = 1;
  parallelism::TrainingPlan& p = s.training;
  p.tp = p.pp = p.cp = p.dp = 1;
  p.micro_batch = 1;
  p.sequence_parallel = false;
  p.recompute = parallelism::Recompute::kNone;
  p.precision = hardware::DataType::kBf16;
  const TrainingEstimator est(s.model, s.system);
  ASSERT_TRUE(p.rope_kernel && p.packed_qkv_copies);
  const parallelism::TrainingPlan te = p;
  p.rope_kernel = p.packed_qkv_copies = false;
  const OperatorCosts plain = est.Costs(p, s.workload);
  const OperatorCosts more = est.Costs(te, s.workload);
  const double bw = 3.35e12 * 0.8;
  EXPECT_NEAR(more.dense.fwd - plain.dense.fwd, 335544320.0 / bw, 1e-12);
  EXPECT_NEAR(more.dense.bwd - plain.dense.bwd, 369098752.0 / bw, 1e-12);
  EXPECT_NEAR(more.dense.attention_fwd - plain.dense.attention_fwd, 33554432.0 / bw, 1e-12);
  EXPECT_NEAR(32 * (335544320.0 + 369098752.0) / bw, 8.414e-3, 0.001e-3);
  EXPECT_NEAR(est.Run(te, s.workload).iteration_s - est.Run(p, s.workload).iteration_s,
              32 * (335544320.0 + 369098752.0) / bw, 1e-9);
  const EventEstimator ev(s.model, s.system);
  EXPECT_NEAR(ev.Run(te, s.workload).estimate.iteration_s - ev.Run(p, s.workload).estimate.iteration_s,
              32 * (335544320.0 + 369098752.0) / bw, 1e-9);
  parallelism::TrainingPlan te_selective = te;
  p.recompute = te_selective.recompute = parallelism::Recompute::kSelective;
  EXPECT_NEAR(est.Run(te_selective, s.workload).iteration_s - est.Run(p, s.workload).iteration_s,
              32 * (335544320.0 + 369098752.0 + 33554432.0) / bw, 1e-9);
  EXPECT_NEAR(32 * 33554432.0 / bw, 0.401e-3, 0.001e-3);
}

// system.device.scaleup_bandwidth caps the scale-up tier: a 1 GiB all-reduce
// over the 8 NVLink GPUs costs a + b / k with the device's links at k times
// the tier's 450 GB/s (k = 1, 1/2, 1/4; latency a, bandwidth part b), so the
// step from 1/2 to 1/4 is twice the step from 1 to 1/2; the estimate moves.
TEST(Estimator, ScaleupBandwidthCapsTheInnermostTier) {
  Scenario s = LoadScenario("llama3-70b-h100");
  double t[3] = {};
  double iteration[3] = {};
  for (int i = 0; i < 3; ++i) {
    s.system.device.scaleup_bandwidth = 450e9 / static_cast<double>(1 << i);
    const TrainingEstimator est(s.model, s.system);
    const hardware::GroupPlacement g = est.network().Place(8, 1);
    t[i] = est.network().Time(hardware::Collective::kAllReduce, 1 << 30, g);
    iteration[i] = est.Run(s.training, s.workload).iteration_s;
  }
  EXPECT_NEAR(t[2] - t[1], 2 * (t[1] - t[0]), 1e-9 * t[2]);
  EXPECT_GT(t[1], t[0]);
  EXPECT_GT(iteration[2], iteration[0]);
  s.system.device.scaleup_bandwidth = 0;  // no cap: the tier's own 450 GB/s
  const TrainingEstimator uncapped(s.model, s.system);
  EXPECT_DOUBLE_EQ(uncapped.Run(s.training, s.workload).iteration_s, iteration[0]);
}

TEST(Estimator, PlanThatDoesNotFitIsAResultWithAReason) {
  Scenario s = LoadScenario("gpt3-175b-a100");
  s.system.nodes = 1;
  s.training.pp = 1;
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate e = est.Run(s.training, s.workload);
  EXPECT_EQ(e.infeasible, Infeasible::kOutOfMemory);
  // 174.6 B parameters over 8 GPUs at 16 bytes each is 349 GB per GPU.
  EXPECT_GT(e.memory.total(), 300e9);
  const std::string why = ExplainInfeasible(e, s);
  EXPECT_NE(why.find("but the device has 80 GB"), std::string::npos) << why;
  // Wrong device count is a result too, not an exception.
  s.training.tp = 3;
  EXPECT_EQ(est.Run(s.training, s.workload).infeasible, Infeasible::kDeviceCount);
}

TEST(Estimator, MoreBandwidthNeverSlowsAStep) {
  Scenario s = LoadScenario("gpt3-175b-1024-a100");
  const TrainingEstimator base_est(s.model, s.system);
  const double t0 = base_est.Run(s.training, s.workload).iteration_s;
  Scenario fast = s;
  fast.system.network[1].bandwidth *= 2;
  const TrainingEstimator fast_est(fast.model, fast.system);
  EXPECT_LE(fast_est.Run(fast.training, fast.workload).iteration_s, t0);
}

ValidationReport Validate() {
  base::Diagnostics d;
  ValidationReport r = ValidateTrainingCsv(kRuns, PresetStore(kConfigs), d);
  EXPECT_TRUE(d.ok()) << d.ToString();
  return r;
}

// The 22B model of Korthikanti et al. 2022 (Table 3: 48 layers, hidden
// 6144, 64 heads, sequence 2048, micro batch 4, tp 8) on one Selene node,
// as Table 4 ran it: Megatron-LM of 2022, materialised attention, bf16.
struct Korthikanti22bLayer {
  models::ModelSpec model = test::Model("megatron-22b");
  hardware::SystemSpec system = test::System("selene", 1);
  parallelism::TrainingPlan plan = test::Korthikanti22bPlan();
  parallelism::Workload workload{.global_batch = 4, .seq_len = 2048};
};

// A backward-only term on the 22B node: `flagged`, k.plan with one flag set,
// costs `per_microbatch` seconds more backward (the single microbatch's) and
// nothing more forward, in the closed form and the event engine; the hand
// figure `hand_s` to a microsecond.
void ExpectBackwardOnlyCost(const Korthikanti22bLayer& k, const parallelism::TrainingPlan& flagged,
                            double per_microbatch, double hand_s) {
  const TrainingEstimator est(k.model, k.system);
  const TrainingEstimate base = est.Run(k.plan, k.workload);
  const TrainingEstimate more = est.Run(flagged, k.workload);
  EXPECT_NEAR(more.time.backward - base.time.backward, per_microbatch, 1e-12);
  EXPECT_NEAR(more.iteration_s - base.iteration_s, hand_s, 0.001e-3);
  EXPECT_DOUBLE_EQ(more.time.forward, base.time.forward);
  const EventEstimator ev(k.model, k.system);
  EXPECT_NEAR(ev.Run(flagged, k.workload).estimate.iteration_s - ev.Run(k.plan, k.workload).estimate.iteration_s,
              per_microbatch, 1e-9);
}

// Bias gradients reduced in kernels of their own (training.separate_bias_grad:
// PyTorch autograd, Megatron-LM's own layers) read each biased linear
// layer's output gradient once more in the backward. The 22B node (tp 8, no
// sequence parallelism, one microbatch of 4 x 2048 = 8,192 tokens, 2 B):
// QKV 8,192 x 2,304 x 2 = 37,748,736 B, the output projection and the MLP's
// down projection 8,192 x 6,144 x 2 = 100,663,296 B each (their biases are
// added to the reduced, whole-width output), the up projection 8,192 x 3,072
// x 2 = 50,331,648 B. On the A100 80GB (2.039 TB/s at the memory curve's
// log-interpolated efficiency between 0.80 at 1 MiB and 0.83 at 1 GiB, and a
// 4 us launch): 26.702 + 64.224 + 34.223 + 64.224 = 189.372 us a layer,
// 48 layers: 9.090 ms more backward per microbatch, in the closed form and
// the event engine alike. Megatron-22B has biases; without them, nothing.
TEST(Estimator, SeparateBiasGradientsReadEachOutputGradientOnceMore) {
  Korthikanti22bLayer k;
  const hardware::DeviceSpec& dev = k.system.device;
  const double layer = hardware::MemoryTime(dev, 37748736.0) + 2 * hardware::MemoryTime(dev, 100663296.0) +
                       hardware::MemoryTime(dev, 50331648.0);
  EXPECT_NEAR(layer, 189.372e-6, 0.001e-6);
  parallelism::TrainingPlan p = k.plan;
  p.separate_bias_grad = true;
  ExpectBackwardOnlyCost(k, p, 48 * layer, 9.090e-3);
  models::ModelSpec unbiased = k.model;
  unbiased.bias = false;
  const TrainingEstimator est_unbiased(unbiased, k.system);
  EXPECT_DOUBLE_EQ(est_unbiased.Run(p, k.workload).iteration_s, est_unbiased.Run(k.plan, k.workload).iteration_s);
}

// The causal MFU counts the attention scores at the half a causal kernel
// runs: its ratio to the MFU is 1 - (s / 12h) / (1 + s / 6h + V / 12Lh)
// (Narayanan et al. 2021 Eq. 3's terms, the scores' s / 6h halved). The 22B
// node at s 2048, h 6144, V 51200, L 48: 1 - 0.027778 / 1.070023 = 0.974040;
// the same model at s 32,768 (one sequence): 1 - 0.444444 / 1.903356 =
// 0.766494, and it is the MFU's figure that the full count lifts.
TEST(Estimator, CausalMfuCountsHalfTheAttentionScores) {
  Korthikanti22bLayer k;
  const TrainingEstimator est(k.model, k.system);
  const TrainingEstimate e = est.Run(k.plan, k.workload);
  ASSERT_GT(e.iteration_s, 0);
  EXPECT_NEAR(e.mfu_causal / e.mfu, 0.974040, 1e-6);
  parallelism::Workload longer{.global_batch = 1, .seq_len = 32768};
  parallelism::TrainingPlan p = k.plan;
  p.micro_batch = 1;
  const TrainingEstimate l = est.Run(p, longer);
  ASSERT_GT(l.iteration_s, 0);
  EXPECT_NEAR(l.mfu_causal / l.mfu, 0.766494, 1e-6);
  const EventEstimator ev(k.model, k.system);
  const TrainingEstimate v = ev.Run(k.plan, k.workload).estimate;
  EXPECT_NEAR(v.mfu_causal / v.mfu, 0.974040, 1e-6);
}

// Q, K and V split by views off the fused projection
// (training.qkv_split_cat, as Megatron-LM's split_tensor_along_last_dim):
// the backward concatenates their gradients into the projection's output
// gradient, reading 8,192 x 2,304 x 2 = 37,748,736 B and writing as much on
// the 22B node (tp 8, one microbatch of 4 x 2048 tokens): 75,497,472 B at
// 2.039 TB/s x 0.81851 (the memory curve's log-interpolated efficiency
// between 0.80 at 1 MiB and 0.83 at 1 GiB) plus a 4 us launch, 49.237 us a
// layer, 2.363 ms over 48 layers, backward only, in both engines.
TEST(Estimator, FusedQkvSplitConcatenatesTheGradientsInTheBackward) {
  Korthikanti22bLayer k;
  const double layer = hardware::MemoryTime(k.system.device, 75497472.0);
  EXPECT_NEAR(layer, 49.237e-6, 0.001e-6);
  parallelism::TrainingPlan p = k.plan;
  p.qkv_split_cat = true;
  ExpectBackwardOnlyCost(k, p, 48 * layer, 2.363e-3);
}

// A norm's weight gradient in a kernel of its own
// (training.norm_weight_grad_kernel, PyTorch's LayerNorm backward): on the
// 22B node each norm runs on 8,192 tokens x 6,144 = 50,331,648 elements in
// bf16; its one-pass backward moves 3e either way (301,989,888 B, 183.630
// us at the A100's memory curve and 4 us launch) and the weight-gradient
// kernel 2e more (201,326,592 B, 124.009 us): two a layer and the final
// norm, 97 x 124.009 us = 12.029 ms a microbatch, backward only, in both
// engines.
TEST(Estimator, NormWeightGradientKernelReadsTheGradientAndInputAgain) {
  Korthikanti22bLayer k;
  const hardware::DeviceSpec& dev = k.system.device;
  EXPECT_NEAR(hardware::MemoryTime(dev, 301989888.0), 183.630e-6, 0.001e-6);
  const double norm = hardware::MemoryTime(dev, 201326592.0);
  EXPECT_NEAR(norm, 124.009e-6, 0.001e-6);
  parallelism::TrainingPlan p = k.plan;
  p.norm_weight_grad_kernel = true;
  ExpectBackwardOnlyCost(k, p, 97 * norm, 12.029e-3);
}

// PyTorch FSDP1 concatenates each unit's parameter gradients into its flat
// gradient on the compute stream every microbatch (training.zero3_flat_grad:
// the split of the FlatParameter into the module's views is undone by a
// cat in the backward): 2 B read and 2 B written a parameter of the
// gathered stage in bf16. The 22B node under ZeRO-3: 2,759,282,688
// parameters x 4 B = 11.037 GB at 2.039 TB/s x 0.83 plus a 4 us launch,
// 6.526 ms a microbatch; four microbatches of 1 at micro batch 1.
TEST(Estimator, Fsdp1FlatGradientsAreConcatenatedEveryMicrobatch) {
  Korthikanti22bLayer k;
  const TrainingEstimator est(k.model, k.system);
  parallelism::TrainingPlan p = k.plan;
  p.zero = 3;
  EXPECT_DOUBLE_EQ(est.Costs(p, k.workload).grad_accumulation_bytes_per_param, 0.0);
  parallelism::TrainingPlan flat = p;
  flat.zero3_flat_grad = true;
  EXPECT_DOUBLE_EQ(est.Costs(flat, k.workload).grad_accumulation_bytes_per_param, 4.0);
  const double pass = hardware::MemoryTime(k.system.device, 2759282688.0 * 4.0);
  EXPECT_NEAR(pass, 6.526e-3, 0.001e-3);
  EXPECT_NEAR(est.Run(flat, k.workload).time.backward - est.Run(p, k.workload).time.backward, pass, 1e-12);
  p.micro_batch = flat.micro_batch = 1;
  EXPECT_NEAR(est.Run(flat, k.workload).time.backward - est.Run(p, k.workload).time.backward, 4 * pass, 1e-12);
  const EventEstimator ev(k.model, k.system);
  EXPECT_NEAR(ev.Run(flat, k.workload).estimate.iteration_s - ev.Run(p, k.workload).estimate.iteration_s, 4 * pass,
              1e-9);
  // Read only under ZeRO-3: ZeRO-1 keeps its buffer and fuses the add.
  flat.zero = 1;
  EXPECT_DOUBLE_EQ(est.Costs(flat, k.workload).grad_accumulation_bytes_per_param, 0.0);
}

// PyTorch's own optimizer step (training.optimizer_step = pytorch: Composer's
// DecoupledAdamW or torch.optim's foreach AdamW, each operation a pass over
// the parameter, and clip_grad_norm_ always rescaling): Adam with fp32
// moments, gradients and parameters moves 16 x 4 (each moment touched five
// times, the denominator's temporaries six) + 2 x 4 (the gradient read
// twice) + 2 x 4 (the parameter read and written) = 80 B, and the clipping
// 3 x 4 = 12 (the norm's read, the multiply's read and write): 92 B a
// parameter against the fused step's 38. bf16 moments: 16 x 2 + 8 + 8 + 12
// = 60. Without fp32 master weights (bf16 gradients and parameters): 64 +
// 4 + 4 + 6 = 78. SGD with momentum: 5 x 4 + 4 + 8 + 12 = 44. On the 22B
// node (2,759,282,688 parameters, ZeRO 0, dp 1, the fp32 buffer zeroed, 4 B
// more): 96 B a parameter at 2.039 TB/s x 0.83, 156.52 ms against 42 B's
// 68.48 ms.
TEST(Estimator, PytorchOptimizerStepPassesOverEachParameterPerOperation) {
  Korthikanti22bLayer k;
  const TrainingEstimator est(k.model, k.system);
  EXPECT_DOUBLE_EQ(est.Costs(k.plan, k.workload).optimizer_bytes_per_param, 38.0);
  parallelism::TrainingPlan p = k.plan;
  p.optimizer_step = parallelism::OptimizerStep::kPytorch;
  EXPECT_DOUBLE_EQ(est.Costs(p, k.workload).optimizer_bytes_per_param, 92.0);
  const double params = 2759282688.0;
  const hardware::DeviceSpec& dev = k.system.device;
  EXPECT_NEAR(est.Run(p, k.workload).time.optimizer, hardware::MemoryTime(dev, params * 96.0), 1e-9);
  EXPECT_NEAR(hardware::MemoryTime(dev, params * 96.0), 156.52e-3, 0.01e-3);
  EXPECT_NEAR(est.Run(k.plan, k.workload).time.optimizer, hardware::MemoryTime(dev, params * 42.0), 1e-9);
  EXPECT_NEAR(hardware::MemoryTime(dev, params * 42.0), 68.48e-3, 0.01e-3);
  const EventEstimator ev(k.model, k.system);
  EXPECT_NEAR(ev.Run(p, k.workload).estimate.iteration_s - ev.Run(k.plan, k.workload).estimate.iteration_s,
              hardware::MemoryTime(dev, params * 96.0) - hardware::MemoryTime(dev, params * 42.0), 1e-9);
  parallelism::TrainingPlan q = p;
  q.optimizer_moments = hardware::DataType::kBf16;
  EXPECT_DOUBLE_EQ(est.Costs(q, k.workload).optimizer_bytes_per_param, 60.0);
  q = p;
  q.fp32_master_weights = false;
  EXPECT_DOUBLE_EQ(est.Costs(q, k.workload).optimizer_bytes_per_param, 78.0);
  q = p;
  q.optimizer = parallelism::Optimizer::kSgd;
  EXPECT_DOUBLE_EQ(est.Costs(q, k.workload).optimizer_bytes_per_param, 44.0);
}

// Sequence parallelism's tensor-parallel collectives of one layer (Korthikanti
// et al. 2022, Sec. 4.2.2): each forward all-reduce becomes an all-gather and
// a reduce-scatter of the same b s h tensor, and the backward gathers once
// more the sequence shard each column-parallel GEMM kept of its input (QKV
// and the MLP's up projection in a dense layer) for its weight gradient
// ("we store only the Y_i^s part ... and perform an extra all-gather in the
// backward pass"). The tensor: b s h x 2 B = 4 x 2048 x 6144 x 2
// = 100,663,296 B. So, over the tp group of 8 on NVLink:
//   without SP  fwd = bwd = 2 AR
//   with SP     fwd = 2 (AG + RS), bwd = 2 (AG + RS) + 2 AG.
// A MoE layer has one such GEMM (QKV; its experts keep the dispatcher's
// gathered tokens): Mixtral 8x7B, every layer MoE, tp 2 with SP on b s h
// = 1 x 4096 x 4096 x 2 B = 33,554,432 B: bwd = 2 (AG + RS) + 1 AG.
TEST(Estimator, SequenceParallelBackwardGathersTheSequenceShardAgain) {
  Korthikanti22bLayer k;
  const TrainingEstimator est(k.model, k.system);
  const hardware::GroupPlacement g = est.network().Place(8, 1);
  const double bytes = 4.0 * 2048 * 6144 * 2;
  EXPECT_DOUBLE_EQ(bytes, 100663296.0);
  const double ar = est.network().Time(hardware::Collective::kAllReduce, bytes, g);
  const double ag = est.network().Time(hardware::Collective::kAllGather, bytes, g);
  const double rs = est.network().Time(hardware::Collective::kReduceScatter, bytes, g);
  const OperatorCosts tp = est.Costs(k.plan, k.workload);
  EXPECT_NEAR(tp.tp_fwd, 2 * ar, 1e-15);
  EXPECT_NEAR(tp.tp_bwd, 2 * ar, 1e-15);
  k.plan.sequence_parallel = true;
  const OperatorCosts sp = est.Costs(k.plan, k.workload);
  EXPECT_NEAR(sp.tp_fwd, 2 * (ag + rs), 1e-15);
  EXPECT_NEAR(sp.tp_bwd, 2 * (ag + rs) + 2 * ag, 1e-15);
  // Full recompute runs the forward's collectives once more, not the gathers
  // of the backward.
  k.plan.recompute = parallelism::Recompute::kFull;
  EXPECT_NEAR(est.Costs(k.plan, k.workload).tp_rec, 2 * (ag + rs), 1e-15);

  const models::ModelSpec mixtral = test::Model("mixtral-8x7b");
  const hardware::SystemSpec node = test::System("selene", 1);
  parallelism::TrainingPlan p;
  p.tp = 2;
  p.dp = 4;
  p.pp = p.cp = p.ep = 1;
  p.micro_batch = 1;
  p.sequence_parallel = true;
  p.precision = hardware::DataType::kBf16;
  const parallelism::Workload w{.global_batch = 4, .seq_len = 4096};
  const TrainingEstimator moe_est(mixtral, node);
  const OperatorCosts c = moe_est.Costs(p, w);
  ASSERT_DOUBLE_EQ(c.moe_fraction, 1.0);
  const hardware::GroupPlacement g2 = moe_est.network().Place(2, 1);
  const double moe_bytes = 1.0 * 4096 * 4096 * 2;
  EXPECT_DOUBLE_EQ(moe_bytes, 33554432.0);
  const double ag2 = moe_est.network().Time(hardware::Collective::kAllGather, moe_bytes, g2);
  const double rs2 = moe_est.network().Time(hardware::Collective::kReduceScatter, moe_bytes, g2);
  EXPECT_NEAR(c.tp_fwd, 2 * (ag2 + rs2), 1e-15);
  EXPECT_NEAR(c.tp_bwd, 2 * (ag2 + rs2) + ag2, 1e-15);
}

// The tensor-parallel collectives outside the layers (TpHeadCollectives), one
// microbatch of the 22B set-up (Korthikanti22bLayer: tp 8 on one NVLink
// node, b s = 4 x 2048 tokens, h 6144, bf16). The b s h tensor is
// 4 x 2048 x 6144 x 2 B = 100,663,296 B; the loss's three fp32 values a
// token 4 x 2048 x 4 B = 32,768 B each.
//   without SP  embedding: fwd AR;        head: fwd 3 AR(loss), bwd AR
//   with SP     embedding: fwd RS, bwd AG; head: fwd AG + 3 AR(loss),
//                                                bwd AG + RS
// Run() adds them once per microbatch to the 48 layers' collectives.
TEST(Estimator, EmbeddingHeadAndLossCollectivesOverTensorParallelGroup) {
  Korthikanti22bLayer k;
  const TrainingEstimator est(k.model, k.system);
  const hardware::GroupPlacement g = est.network().Place(8, 1);
  const double bytes = 4.0 * 2048 * 6144 * 2, loss_bytes = 4.0 * 2048 * 4;
  EXPECT_DOUBLE_EQ(bytes, 100663296.0);
  EXPECT_DOUBLE_EQ(loss_bytes, 32768.0);
  const auto time = [&](hardware::Collective c, double b) { return est.network().Time(c, b, g); };
  const double ar = time(hardware::Collective::kAllReduce, bytes);
  const double ag = time(hardware::Collective::kAllGather, bytes);
  const double rs = time(hardware::Collective::kReduceScatter, bytes);
  const double loss = 3 * time(hardware::Collective::kAllReduce, loss_bytes);
  const OperatorCosts c = est.Costs(k.plan, k.workload);
  EXPECT_NEAR(c.tp_embed_fwd, ar, 1e-15);
  EXPECT_DOUBLE_EQ(c.tp_embed_bwd, 0.0);
  EXPECT_NEAR(c.tp_head_fwd, loss, 1e-15);
  EXPECT_NEAR(c.tp_head_bwd, ar, 1e-15);
  const TrainingEstimate e = est.Run(k.plan, k.workload);
  EXPECT_NEAR(e.time.tp_comm, 48 * (c.tp_fwd + c.tp_bwd) + 2 * ar + loss, 1e-12);
  k.plan.sequence_parallel = true;
  const OperatorCosts sp = est.Costs(k.plan, k.workload);
  EXPECT_NEAR(sp.tp_embed_fwd, rs, 1e-15);
  EXPECT_NEAR(sp.tp_embed_bwd, ag, 1e-15);
  EXPECT_NEAR(sp.tp_head_fwd, ag + loss, 1e-15);
  EXPECT_NEAR(sp.tp_head_bwd, ag + rs, 1e-15);
  const TrainingEstimate e_sp = est.Run(k.plan, k.workload);
  EXPECT_NEAR(e_sp.time.tp_comm, 48 * (sp.tp_fwd + sp.tp_bwd) + 3 * ag + 2 * rs + loss, 1e-12);
  // No tensor parallelism, nothing to reduce.
  k.plan.tp = 1;
  k.plan.sequence_parallel = false;
  const OperatorCosts one = est.Costs(k.plan, k.workload);
  EXPECT_DOUBLE_EQ(one.tp_embed_fwd + one.tp_embed_bwd + one.tp_head_fwd + one.tp_head_bwd, 0.0);
}

// The optimizer step's memory passes, the 22B set-up (tp 8, dp 1, ZeRO 0,
// bf16: weights 2 B, gradients reduced in fp32, 4 B). Per parameter on the
// device: Adam's update reads the fp32 master, gradient and two moments
// (16 B) and writes master and moments (12 B); the bf16 copy reads the
// master again and writes 2 B (6 B); clipping's L2 norm reads the gradient
// (4 B): 38 B. The gradient buffer is zeroed (4 B) every step: 42 B of
// every parameter the device holds (48 layers and the embedding, the LM
// head tied to it). On two nodes (dp 2) the buffer is also scaled by 1/2
// before the all-reduce, read and written (8 B): 50 B. ZeRO-3 keeps no
// buffer: 38 B of its shard.
TEST(Estimator, OptimizerStepPassesOverMasterAndGradientBuffer) {
  Korthikanti22bLayer k;
  const TrainingEstimator est(k.model, k.system);
  const OperatorCosts c = est.Costs(k.plan, k.workload);
  const double params = 48 * c.layer_params + c.embed_params;
  EXPECT_DOUBLE_EQ(c.optimizer_bytes_per_param, 38.0);
  EXPECT_DOUBLE_EQ(c.grad_buffer_bytes_per_param, 4.0);
  EXPECT_DOUBLE_EQ(c.grad_buffer_scaled_bytes_per_param, 12.0);
  const hardware::DeviceSpec& dev = k.system.device;
  const TrainingEstimate e = est.Run(k.plan, k.workload);
  EXPECT_NEAR(e.time.optimizer, hardware::MemoryTime(dev, params * 42.0), 1e-9);

  const hardware::SystemSpec two = test::System("selene", 2);
  const TrainingEstimator est2(k.model, two);
  parallelism::TrainingPlan p = k.plan;
  p.dp = 2;
  const parallelism::Workload w{.global_batch = 8, .seq_len = 2048};
  EXPECT_NEAR(est2.Run(p, w).time.optimizer, hardware::MemoryTime(two.device, params * 50.0), 1e-9);
  p.zero = 3;
  EXPECT_DOUBLE_EQ(est2.Costs(p, w).grad_buffer_scaled_bytes_per_param, 0.0);
  EXPECT_NEAR(est2.Run(p, w).time.optimizer, hardware::MemoryTime(two.device, params / 2 * 38.0), 1e-9);
}

// Megatron-LM before gradient-accumulation fusion (training.
// grad_accumulation_fusion = false; GradAccumulationBytesPerParam): every
// microbatch's backward writes each weight gradient as a bf16 tensor and a
// hook adds it into the fp32 buffer: 2 + 4 B read, 4 B written, 10 B a
// parameter (fp16 with an fp16 buffer: 2 + 2 + 2 = 6 B). The 22B node
// (tp 8): per device 48 layers of (12 h^2 + 13 h) / 8 = 56,633,088 and the
// embedding (51,200 + 2,048 positions) x 6,144 / 8 = 40,894,464 (the LM head
// tied to it): 2,759,282,688 parameters, 27.59 GB a microbatch; the A100
// 80GB's memory at 2.039 TB/s x 0.83 (configs/devices, from 1 GiB up):
// 27.59e9 / 1.692e12 = 16.30 ms and a 4 us launch, once per microbatch, in the backward and in
// its weight-gradient part. Global batch 4 at micro batch 4 is one
// microbatch; at micro batch 1 four. Megatron-LM's division of the buffer
// by dp at dp 1 (training.grad_scale_at_dp1) reads and writes it once more
// every step: 8 B, the step's 42 B a parameter -> 50 B (as at dp 2),
// 22.07 GB more, 13.04 ms.
TEST(Estimator, UnfusedGradientAccumulationPassesOverTheParametersEveryMicrobatch) {
  Korthikanti22bLayer k;
  const TrainingEstimator est(k.model, k.system);
  const OperatorCosts fused = est.Costs(k.plan, k.workload);
  const double params = 48 * fused.layer_params + fused.embed_params;
  EXPECT_NEAR(params, 2759282688.0, 1.0);
  EXPECT_DOUBLE_EQ(fused.grad_accumulation_bytes_per_param, 0.0);
  const hardware::DeviceSpec& dev = k.system.device;
  const TrainingEstimate base = est.Run(k.plan, k.workload);

  parallelism::TrainingPlan p = k.plan;
  p.grad_accumulation_fusion = false;
  EXPECT_DOUBLE_EQ(est.Costs(p, k.workload).grad_accumulation_bytes_per_param, 10.0);
  const TrainingEstimate unfused = est.Run(p, k.workload);
  const double pass = hardware::MemoryTime(dev, params * 10.0);
  EXPECT_NEAR(pass, 16.308e-3, 0.001e-3);
  EXPECT_NEAR(unfused.time.backward - base.time.backward, pass, 1e-12);
  EXPECT_NEAR(unfused.iteration_s - base.iteration_s, pass, 1e-12);
  // Four microbatches: four passes.
  p.micro_batch = 1;
  parallelism::TrainingPlan p_fused = k.plan;
  p_fused.micro_batch = 1;
  EXPECT_NEAR(est.Run(p, k.workload).time.backward - est.Run(p_fused, k.workload).time.backward, 4 * pass, 1e-12);
  // fp16 with fp16 gradients: 6 B.
  p.precision = hardware::DataType::kFp16;
  EXPECT_DOUBLE_EQ(est.Costs(p, k.workload).grad_accumulation_bytes_per_param, 6.0);
  // PyTorch AMP on fp32 parameters (training.autocast_fp32_weights): the
  // weight cast forward (4 + 2), the gradient's cast back (2 + 4) and the
  // add into .grad (4 + 4 + 4), 24 B whatever the precision or the fusion
  // flag. Of them the gradient's cast back to fp32 (6 B, one element a
  // parameter) runs ATen's non-vectorized dtype-converting kernel
  // (GradAccumulationUnvecBytesPerParam), at the A100's 185 G elements/s
  // (configs/devices/a100-80gb.yaml): the other 18 B x 2,759,282,688 at
  // 1.692 TB/s = 29.348 ms, the cast max(6 B x params / 1.692 TB/s =
  // 9.783 ms, params / 185e9 = 14.915 ms) = 14.915 ms, and a 4 us launch:
  // 44.267 ms a microbatch, where all 24 B at the memory's rate would be
  // 39.134 ms.
  // Eager code (a plain PyTorch loop) against the same plan without AMP.
  p.precision = hardware::DataType::kBf16;
  p.micro_batch = 4;
  p.elementwise = parallelism::Elementwise::kEager;
  parallelism::TrainingPlan eager = k.plan;
  eager.elementwise = parallelism::Elementwise::kEager;
  p.autocast_fp32_weights = true;
  EXPECT_DOUBLE_EQ(est.Costs(p, k.workload).grad_accumulation_bytes_per_param, 24.0);
  EXPECT_DOUBLE_EQ(est.Costs(p, k.workload).grad_accumulation_unvec_bytes_per_param, 6.0);
  p.grad_accumulation_fusion = true;
  EXPECT_DOUBLE_EQ(est.Costs(p, k.workload).grad_accumulation_bytes_per_param, 24.0);
  EXPECT_NEAR(hardware::MemoryTime(dev, params * 24.0), 39.134e-3, 0.001e-3);
  const double amp_pass = hardware::ElementwiseTime(dev, params * 24.0, params * 6.0, params);
  EXPECT_NEAR(amp_pass, 44.267e-3, 0.001e-3);
  EXPECT_NEAR(est.Run(p, k.workload).iteration_s - est.Run(eager, k.workload).iteration_s, amp_pass, 1e-12);
  // The event engine prices the same pass (AddGradAccumulation).
  const EventEstimator ev(k.model, k.system);
  EXPECT_NEAR(ev.Run(p, k.workload).estimate.iteration_s - ev.Run(eager, k.workload).estimate.iteration_s,
              amp_pass, 1e-9);
  // On a device without an element rate all 24 B go at the memory's rate.
  hardware::SystemSpec no_rate = k.system;
  no_rate.device.unvectorized_element_rate = 0;
  const TrainingEstimator est_no_rate(k.model, no_rate);
  EXPECT_NEAR(est_no_rate.Run(p, k.workload).iteration_s - est_no_rate.Run(eager, k.workload).iteration_s,
              hardware::MemoryTime(no_rate.device, params * 24.0), 1e-12);
  // Blocks through torch.compile (fused element-wise kernels): Inductor
  // casts in its own kernels, all 24 B at the memory's rate.
  p.elementwise = parallelism::Elementwise::kFused;
  EXPECT_DOUBLE_EQ(est.Costs(p, k.workload).grad_accumulation_unvec_bytes_per_param, 0.0);
  EXPECT_NEAR(est.Run(p, k.workload).iteration_s - base.iteration_s, hardware::MemoryTime(dev, params * 24.0),
              1e-12);
  // ZeRO-3 keeps no buffer to add into.
  p.elementwise = parallelism::Elementwise::kEager;
  p.zero = 3;
  EXPECT_DOUBLE_EQ(est.Costs(p, k.workload).grad_accumulation_bytes_per_param, 0.0);
  EXPECT_DOUBLE_EQ(est.Costs(p, k.workload).grad_accumulation_unvec_bytes_per_param, 0.0);

  // The division at dp 1: 8 B more in the step, 50 B; 13.04 ms more.
  parallelism::TrainingPlan q = k.plan;
  q.grad_scale_at_dp1 = true;
  EXPECT_DOUBLE_EQ(est.Costs(q, k.workload).grad_buffer_bytes_per_param, 12.0);
  const TrainingEstimate scaled = est.Run(q, k.workload);
  EXPECT_NEAR(scaled.time.optimizer, hardware::MemoryTime(dev, params * 50.0), 1e-9);
  EXPECT_NEAR(scaled.time.optimizer - base.time.optimizer, 13.043e-3, 0.001e-3);

  // Megatron-LM's NaN check (training.grad_nan_check: an L2 norm of every
  // gradient bucket before its reduction, megatron/core/distributed/
  // param_and_grad_buffer.py) reads the fp32 buffer once more every step,
  // at dp 1 as well: 4 B, 42 -> 46 B a parameter, 11.037 GB at 1.692 TB/s,
  // 6.522 ms; with the division at dp 1 too, 54 B.
  parallelism::TrainingPlan n = k.plan;
  n.grad_nan_check = true;
  EXPECT_DOUBLE_EQ(est.Costs(n, k.workload).grad_buffer_bytes_per_param, 8.0);
  EXPECT_DOUBLE_EQ(est.Costs(n, k.workload).grad_buffer_scaled_bytes_per_param, 16.0);
  const TrainingEstimate checked = est.Run(n, k.workload);
  EXPECT_NEAR(checked.time.optimizer, hardware::MemoryTime(dev, params * 46.0), 1e-9);
  EXPECT_NEAR(checked.time.optimizer - base.time.optimizer, 6.522e-3, 0.001e-3);
  EXPECT_NEAR(checked.iteration_s - base.iteration_s, 6.522e-3, 0.001e-3);
  n.grad_scale_at_dp1 = true;
  EXPECT_NEAR(est.Run(n, k.workload).time.optimizer, hardware::MemoryTime(dev, params * 54.0), 1e-9);
  // ZeRO-3 keeps no buffer to check.
  n.zero = 3;
  EXPECT_DOUBLE_EQ(est.Costs(n, k.workload).grad_buffer_bytes_per_param, 0.0);
}

// Full recompute under autocast (RecomputeRecastBytesPerParam): torch.utils.
// checkpoint reruns each layer's forward in a fresh autocast region, whose
// weight cache is empty, so every recomputed layer casts its fp32 weights to
// bf16 once more, 4 read + 2 written a parameter, in the recompute. The 22B
// node (tp 8, one microbatch): 48 layers x 56,633,088 parameters x 6 B =
// 16.310 GB at 2.039 TB/s x 0.83 = 9.638 ms and a 4 us launch, 9.642 ms; the
// embedding and the tied LM head are not recomputed. Against the same plan
// without autocast the step also has the gradient pass of the test above
// (44.267 ms). Selective recompute (the attention core, no weights) and
// ZeRO-3 (its gathers cast) recast nothing; compiled code recasts too.
TEST(Estimator, FullRecomputeUnderAutocastCastsTheLayersWeightsAgain) {
  Korthikanti22bLayer k;
  const TrainingEstimator est(k.model, k.system);
  const EventEstimator ev(k.model, k.system);
  const hardware::DeviceSpec& dev = k.system.device;
  parallelism::TrainingPlan plain = k.plan;
  plain.elementwise = parallelism::Elementwise::kEager;
  plain.recompute = parallelism::Recompute::kFull;
  parallelism::TrainingPlan amp = plain;
  amp.autocast_fp32_weights = true;
  const OperatorCosts c = est.Costs(amp, k.workload);
  EXPECT_DOUBLE_EQ(c.recompute_recast_bytes_per_param, 6.0);
  EXPECT_NEAR(48 * c.layer_params, 48 * 56633088.0, 1.0);
  const double recast = hardware::MemoryTime(dev, 48 * c.layer_params * 6.0);
  EXPECT_NEAR(recast, 9.642e-3, 0.001e-3);
  const double params = 48 * c.layer_params + c.embed_params;
  const double amp_pass = hardware::ElementwiseTime(dev, params * 24.0, params * 6.0, params);
  EXPECT_NEAR(amp_pass, 44.267e-3, 0.001e-3);
  const TrainingEstimate with = est.Run(amp, k.workload), without = est.Run(plain, k.workload);
  EXPECT_NEAR(with.time.recompute - without.time.recompute, recast, 1e-12);
  EXPECT_NEAR(with.iteration_s - without.iteration_s, recast + amp_pass, 1e-12);
  EXPECT_NEAR(ev.Run(amp, k.workload).estimate.iteration_s - ev.Run(plain, k.workload).estimate.iteration_s,
              recast + amp_pass, 1e-9);
  // Compiled blocks recast as well (all 24 B of the gradient pass at the
  // memory's rate there).
  parallelism::TrainingPlan fused = amp;
  fused.elementwise = parallelism::Elementwise::kFused;
  EXPECT_DOUBLE_EQ(est.Costs(fused, k.workload).recompute_recast_bytes_per_param, 6.0);
  // Selective recompute reruns the attention core only; no recompute, none.
  parallelism::TrainingPlan selective = amp;
  selective.recompute = parallelism::Recompute::kSelective;
  EXPECT_DOUBLE_EQ(est.Costs(selective, k.workload).recompute_recast_bytes_per_param, 0.0);
  parallelism::TrainingPlan selective_plain = plain;
  selective_plain.recompute = parallelism::Recompute::kSelective;
  EXPECT_NEAR(est.Run(selective, k.workload).time.recompute, est.Run(selective_plain, k.workload).time.recompute,
              1e-12);
  parallelism::TrainingPlan none = amp;
  none.recompute = parallelism::Recompute::kNone;
  EXPECT_DOUBLE_EQ(est.Costs(none, k.workload).recompute_recast_bytes_per_param, 0.0);
  parallelism::TrainingPlan zero3 = amp;
  zero3.zero = 3;
  EXPECT_DOUBLE_EQ(est.Costs(zero3, k.workload).recompute_recast_bytes_per_param, 0.0);
}

// The plan's loss kernels (training.loss_kernel) reach the head's costs and
// the step: the 22B node (tp 8, one microbatch of 4 x 2048 = 8192 tokens,
// vocabulary 51,200 / 8 = 6,400 logits a token) with the fused bf16 loss
// spends what LossTimes says less than with Megatron-Core's fp32 one, in the
// head's forward and backward and in the step (one microbatch, dp 1:
// nothing overlaps the head).
TEST(Estimator, LossKernelOfThePlanPricesTheHeadsLoss) {
  Korthikanti22bLayer k;
  const TrainingEstimator est(k.model, k.system);
  const hardware::DeviceSpec& dev = k.system.device;
  parallelism::TrainingPlan fused = k.plan;
  fused.loss_kernel = parallelism::LossKernel::kFusedBf16;
  const OperatorCosts a = est.Costs(k.plan, k.workload);
  const OperatorCosts b = est.Costs(fused, k.workload);
  const PassTimes fp32 = LossTimes(dev, 8192, 6400, parallelism::LossKernel::kMegatronFp32);
  const PassTimes bf16 = LossTimes(dev, 8192, 6400, parallelism::LossKernel::kFusedBf16);
  EXPECT_NEAR(a.head.fwd - b.head.fwd, fp32.fwd - bf16.fwd, 1e-15);
  EXPECT_NEAR(a.head.bwd - b.head.bwd, fp32.bwd - bf16.bwd, 1e-15);
  EXPECT_GT(fp32.fwd + fp32.bwd - bf16.fwd - bf16.bwd, 0.5e-3);
  EXPECT_NEAR(est.Run(k.plan, k.workload).iteration_s - est.Run(fused, k.workload).iteration_s,
              fp32.fwd + fp32.bwd - bf16.fwd - bf16.bwd, 1e-12);
}

// Korthikanti et al. 2022, Sec. 6.2, Table 4: the forward and backward of one
// transformer layer of the 22B model (the set-up of Korthikanti22bLayer), in
// ms, measured:
//   configuration             forward  backward
//   baseline, no recompute      7.7      11.9
//   sequence parallelism        7.2      11.8
//   full recompute              7.7      19.5
//   selective recompute         7.7      13.2
//   selective + sequence        7.2      13.1
// The estimator's layer, one microbatch on one device (Run()'s terms, no
// TP overlap): forward = the layer's operators + its forward collectives;
// backward = its backward operators + backward collectives + what the
// backward runs again (selective: the attention core, QK^T, softmax,
// dropout, attention over V; full: the whole forward with its
// collectives). Held within the errors it reaches (docs/korthikanti-layer.md):
// every forward within 1.5 % (largest +0.7 %), every backward within 7.5 %
// (largest +7.0 %, baseline: the paper overlaps the backward all-reduce with
// the weight-gradient GEMMs, which the estimator does not price). Two
// differences pin the terms themselves: sequence parallelism's backward is
// 0.1 ms faster than the baseline's, measured (11.8 vs 11.9: the
// LayerNorm/dropout work on s/t tokens saved, the extra all-gathers paid),
// held within 0.1 ms; selective recompute adds 1.3 ms (13.2 - 11.9), held
// within 20 % (the estimator's attention core: 1.08 ms, -17 %).
TEST(Estimator, KorthikantiTable4OneLayerOf22b) {
  struct Row {
    const char* name;
    bool sp;
    parallelism::Recompute recompute;
    double fwd_ms, bwd_ms;
  };
  using parallelism::Recompute;
  const Row rows[] = {{"baseline no recompute", false, Recompute::kNone, 7.7, 11.9},
                      {"sequence parallelism", true, Recompute::kNone, 7.2, 11.8},
                      {"baseline with recompute", false, Recompute::kFull, 7.7, 19.5},
                      {"selective recompute", false, Recompute::kSelective, 7.7, 13.2},
                      {"selective + sequence", true, Recompute::kSelective, 7.2, 13.1}};
  Korthikanti22bLayer k;
  const TrainingEstimator est(k.model, k.system);
  double fwd[5], bwd[5];
  for (int i = 0; i < 5; ++i) {
    k.plan.sequence_parallel = rows[i].sp;
    k.plan.recompute = rows[i].recompute;
    const OperatorCosts c = est.Costs(k.plan, k.workload);
    ASSERT_DOUBLE_EQ(c.moe_fraction, 0.0);
    double rerun = 0;
    if (rows[i].recompute == Recompute::kSelective) rerun = c.dense.attention_fwd;
    if (rows[i].recompute == Recompute::kFull) rerun = c.dense.fwd + c.tp_rec;
    fwd[i] = 1e3 * (c.dense.fwd + c.tp_fwd);
    bwd[i] = 1e3 * (c.dense.bwd + c.tp_bwd + rerun);
    std::cout << "[ measured ] Table 4 " << rows[i].name << ": forward " << fwd[i] << " ms (" << rows[i].fwd_ms
              << "), backward " << bwd[i] << " ms (" << rows[i].bwd_ms << ")\n";
    EXPECT_NEAR(fwd[i] / rows[i].fwd_ms, 1.0, 0.015) << rows[i].name;
    EXPECT_NEAR(bwd[i] / rows[i].bwd_ms, 1.0, 0.075) << rows[i].name;
  }
  EXPECT_NEAR(bwd[1] - bwd[0], 11.8 - 11.9, 0.1);
  EXPECT_NEAR((bwd[3] - bwd[0]) / (13.2 - 11.9), 1.0, 0.2);
  // The whole layer is what the step repeats 48 times: the Table 5 row of
  // selective + sequence (1.10 s) is then 48 x 20.3 ms = 974 ms of layers.
  // Check the estimator's layer against that at the forward and backward's
  // tolerances together.
  EXPECT_NEAR((fwd[4] + bwd[4]) / (7.2 + 13.1), 1.0, 0.05);
}

// Issue 3 acceptance: Korthikanti et al. 2022 Table 5, eight rows: mean
// absolute error <= 5 %, every row within 10 % (Calculon: 3.65 %, 8.87 %).
TEST(Validation, KorthikantiTable5) {
  ValidationReport all = Validate();
  ValidationReport k;
  for (const auto& row : all.rows)
    if (row.source.rfind("Korthikanti", 0) == 0) k.rows.push_back(row);
  Summarise(k);
  ASSERT_EQ(k.evaluated, 8);
  EXPECT_LE(k.mape_pct, 5.0);
  EXPECT_LE(k.max_abs_error_pct, 10.0);
  std::cout << "[ measured ] Korthikanti Table 5: MAPE " << k.mape_pct << " %, max "
            << k.max_abs_error_pct << " %\n";
}

// Issue 3 acceptance: every training row the model covers, MAPE <= 10 %,
// with one A100 and one H100 profile for all rows. Skipped rows are listed.
// Since issue 15 the rows' unstated plan fields are the fastest plan the
// search finds (no longer micro batch 1 and no recompute): the mean of the 40
// rows issues 3 and 16 were written against (Korthikanti, Narayanan, the
// Megatron-LM README, the Megatron-Bridge DeepSeek-V3 row) rose from 8.34 %
// to 13.53 %, and the overlap contention term brought them to the 11.71 %
// held here; the targets per source are in
// core/validation/validation_test.cpp. Issue 15 also added 252 out-of-sample
// rows (NeMo and Megatron-Bridge tables, NeMo long-sequence tables, MosaicML
// llm-foundry, torchtitan, Llama 3 405B's Table 4, Gemstones on Frontier);
// their figures are not tuned for, so the whole file is held at its
// measured MAPE: 32.36 % when they were added, 27.90 % after the contention
// term and BF16 attention in FP8 plans, 26.48 % once MoE parallel folding
// (etp) let 4 formerly skipped Qwen3-235B-A22B rows be predicted (one of
// them, on GB200, at +182 %), llm-foundry's FlashAttention-2 kernels were
// priced as such and the 405B row's embedding/loss pipeline split ran;
// 23.82 % once GPU counts that do not fill 72-GPU NVL72 racks were placed
// in 64-GPU segments, one per rack (the GB200 MoE rows' EP on NVLink);
// 23.61 % with the MoE dispatcher's permute/unpermute traffic, 23.56 % with
// grouped expert GEMMs at per-expert efficiency; together they moved the
// DeepSeek-V3 H100 row of the 40 below from +14.9 to +24.8 % (their MAPE
// 11.71 -> 11.95 %; core/validation/validation_test.cpp says why).
// then 22.50 % (with the MoE terms above) once the Gemstone rows stated
// Gemma's architecture (the kv_heads/activation/norm/position/
// tied_embeddings/bias columns) and ran litgpt's eager element-wise kernels;
// 20.67 % (the 40 rows 11.78 %) with the FP8 casts, the LM head in BF16 under
// FP8 and Megatron-Core's fp32 cross entropy (core/estimate/step_kernels.h),
// 20.37 % once FP8 plans keep their linear layers' inputs in 1 byte.
TEST(Validation, AllTrainingRows) {
  ValidationReport r = Validate();
  // 297, the three short-sequence H200 steps, the 27 GB300, B300 and
  // GPT-OSS rows of the Megatron-Bridge tables (lines 302-328) and
  // torchtitan's 18 H100 rows (lines 329-346), the four NVFP4 rows of the
  // Megatron-Bridge 26.02 table (lines 347-350).
  EXPECT_EQ(r.rows.size(), 349u);
  ValidationReport tuned;
  for (const auto& row : r.rows)
    for (const char* s : {"Korthikanti", "Narayanan", "NVIDIA/Megatron-LM README",
                          "NVIDIA Megatron-Bridge 2025"})
      if (row.source.rfind(s, 0) == 0) tuned.rows.push_back(row);
  Summarise(tuned);
  // 39 dense rows and (issue 16) one DeepSeek-V3 row run from its preset.
  EXPECT_EQ(tuned.rows.size(), 40u);
  // The 40 rows: 11.95 -> 11.78 % with the step's FP8 casts, BF16 LM head
  // and fp32 loss (step_kernels.h); the DeepSeek-V3 H100 row running its
  // recipe's MLA up-projection recompute (training.recompute_mla_up_proj)
  // instead of full recompute and the recipe's etp = 1 (+24.8 -> +4.1 % on
  // the branch that added them) brings them to 11.23 %; 11.78 % once the
  // materialised attention's softmax and dropout backward move what their
  // kernels move (models/transformer.cpp), faster on the pre-2023 rows;
  // 12.39 % once interleaved plans reduce gradients chunk by chunk; 12.45 %
  // once the DeepSeek-V3 row's grouped expert GEMMs pay their FP8 casts
  // (Fp8GroupedCastTimes, step_kernels.h; the row +17.7 -> +20.2 %);
  // 11.81 % (without the casts) once each GEMM runs at its reduction depth
  // (hardware::GemmDepthFactor); 11.59 % with both and the layers left over
  // by an uneven pipeline split on the middle stages (parallelism::
  // EvenSplitLayers; core/validation/validation_test.cpp has the history).
  // 11.59 % with FlashAttention's length factors; 10.80 % with DeepSpeed
  // ZeRO-3's matrix-by-matrix prefetch (training.zero3_matrix_prefetch: the
  // Narayanan Table 2 ZeRO-3 rows; docs/overlap.md).
  // 10.34 % with sequence parallelism's extra backward all-gather
  // (Korthikanti et al. 2022 Sec. 4.2.2; Korthikanti 2.95 -> 1.76 %,
  // README 24.07 -> 23.06 %; docs/korthikanti-layer.md).
  // 9.72 % with what a step spends outside its layers: the embedding's,
  // LM head's and loss's TP collectives, the optimizer's second read of the
  // master and the gradient buffer's zeroing and scaling
  // (docs/korthikanti-layer.md, "Outside the layers").
  // 9.53 % (9.5316 %) with the DeepSeek-V3 H100 row's pipeline layout from
  // its recipe (validation_test.cpp; docs/moe-long-context.md).
  // This stop's changes merged: 7.99 % (7.9898 %).
  // Lowered to 7.93 % (7.9271 %): the Megatron-LM README rows' output layer
  // untied from the embedding, as the README table's model sizes count it
  // (docs/hopper-dense.md section 9).
  // Lowered to 7.81 % (7.8132 %) by Megatron-LM of 2024's NaN check of the
  // gradient buffer (training.grad_nan_check) on the README rows.
  // Raised to 7.99 % (7.9820 %) by collectives across tiers priced pipelined,
  // as NCCL runs them (hardware/network.cpp; validation_test.cpp says more).
  EXPECT_LE(tuned.mape_pct, 7.99);
  EXPECT_GE(tuned.evaluated, 33);
  // The file: 22.50 -> 22.52 %: token-dropping rows at capacity factor 1.0
  // and the dropless host-launch bound (validation_test.cpp,
  // PerSourceErrors...); 22.48 % with the MI250X GCD's cited GEMM curve and
  // overlap contention (the 22 Gemstone rows 54.27 -> 53.73 %); 20.33 % with
  // the step's FP8 casts, BF16 LM head, fp32 loss and FP8 activations in 1
  // byte (memory_model.cpp); then PyTorch FSDP's ZeRO-3 as llm-foundry and
  // torchtitan run it (no re-gather for the recomputed forward, fp32
  // reduce-scatter) and the DeepSeek-V3 row's recipe: 20.13 %.
  // 22.50 -> 22.52 %: token-dropping rows at capacity factor 1.0 and the
  // dropless host-launch bound (validation_test.cpp, PerSourceErrors...);
  // 22.41 % with PyTorch FSDP's ZeRO-3 as llm-foundry and torchtitan run it
  // (no re-gather for the recomputed forward, fp32 reduce-scatter);
  // 17.66 % once the llm-foundry rows ran the Triton FlashAttention kernel
  // their benchmark used (attention: triton; their 124 rows 21.24 -> 10.40 %),
  // 17.61 % with that kernel's head dimension padded to a power of two
  // (mpt-30b, head 112; llm-foundry 10.29 %).
  // All of the above together: 15.44 %. Then 15.12 % with the B200 and
  // GB200 FP8 GEMM curve (gemm_efficiency_fp8, b200.yaml), the
  // Megatron-Bridge DeepSeek-V3 B200/GB200 rows on their recipes'
  // mla_up_proj recompute and the 26.02 Qwen3-235B H100 row on its recipe's
  // all-to-all overlap, the torchtitan rows' selective layer checkpointing
  // as every 2nd layer recomputed (recompute layers/2), the materialised
  // attention's backward at its kernels' traffic and models that do not
  // drop keeping no dropout masks (validation_test.cpp,
  // PerSourceErrorsOnTheShippedRows, says which rows each moved). Then
  // 15.11 % with the torchtitan "selective op" rows as recompute op
  // (lines 121, 125, 126: -24.2 / -27.2 / -6.2 -> -17.1 / -18.8 / -19.7 %).
  // 15.08 % with each FP8 row's scaling recipe priced (training.fp8_recipe:
  // the current-scaling rows' amax pass, +2 B per quantized element).
  // Both: 15.08 %. Then 15.03 % with the B200 and GB200 GEMM curves scaled
  // by their measured maximum achievable matmul FLOPS (Issue15 tests above),
  // and with the llm-foundry rows on Composer's FSDP1 BACKWARD_POST prefetch
  // (training.zero3_backward_prefetch=false).
  // And 14.97 % with the cp ranks in the dense data-
  // parallel group (ContextParallelRanksShareTheDataParallelGroup): the
  // Llama 3.1 405B cp 2 rows fit without full recompute. Then 15.11 % with
  // interleaved plans reducing their gradients chunk by chunk
  // (InterleavedChunksReduceTheirGradientsEarly; validation_test.cpp says
  // which rows moved). 15.28 % with Megatron rows counting the embedding
  // and the loss as pipeline layers where that is faster (the recipes'
  // account_for_*_in_pipeline_split; validation_test.cpp).
  // And 14.83 % with the torchtitan rows on PyTorch eager
  // element-wise kernels (compile = false in their train configs; their 8
  // rows 15.77 -> 7.00 %, docs/torchtitan-fsdp2.md); 14.79 % with FSDP2's
  // copy-out of every gather on the compute stream (training.zero3_copy_out;
  // torchtitan 7.00 -> 5.39 %).
  // All four branches together: 14.25 %. Then 14.03 % with the grouped
  // expert GEMMs' FP8 casts (Fp8GroupedCastTimes; the MoE rows 25.34 ->
  // 23.26 %, validation_test.cpp); 13.64 % with GEMMs at their reduction
  // depth and an uneven pipeline split's left-over layers on the middle
  // stages as well. 13.63 % with the dropless MoE layers' Transformer
  // Engine module calls on the host (docs/moe-long-context.md). Raised to
  // 13.68 % by issue 15's FP8 casts on Blackwell
  // (step_kernels.h: per-tensor FP8 written row-wise only on B200/GB200,
  // MXFP8's scale swizzles): the per-tensor FP8 rows there, most predicted
  // fast, faster (validation_test.cpp says which moved); 13.68 % with both.
  // 13.73 % (284 rows) with one more row, nothing repriced: the
  // frontier-torchtitan README's Llama 3 8B on 64 MI250X GCDs, -27.9 % with
  // its stated LayerNorm as one kernel (validation_test.cpp;
  // docs/frontier-gemstones.md). 13.15 % with the MI250X GCD profile's
  // figures from published MI250(X) kernel measurements (issue 15:
  // FlashAttention 0.289 / 0.167 of peak, the GEMM curve by measured maximum
  // achievable matmul FLOPS): the 23 MI250X rows, all fast, slower.
  // 13.45 % with FlashAttention's length factors alone; 12.87 % with both.
  // 12.45 % with the B200/GB200 GEMM curves from Blackwell kernel
  // measurements and MXFP8 GEMMs on their own curve (configs/devices/
  // b200.yaml): every B200/GB200 FP8 row slower, most were fast.
  // 12.33 % with DeepSpeed ZeRO-3's matrix-by-matrix prefetch as well (the
  // six Narayanan Table 2 ZeRO-3 rows; docs/overlap.md).
  // Raised to 12.37 % by the Megatron-Bridge recipes' stated recompute
  // (docs/fp8-training.md, "What the recipes state"): four GB200 FSDP Llama
  // rows run no recompute and offload activations to Grace memory, which is
  // not priced, so they are predicted fast (validation_test.cpp).
  // Lowered to 11.55 % by the Blackwell GEMM curves at the B200's sustained
  // clock (the B200 cubes were bursts; x 1237 / 1425, flashinfer PR #2899,
  // configs/devices/b200.yaml): the B200/GB200 rows, most fast, slower.
  // 12.28 % with sequence parallelism's extra backward all-gather
  // (Korthikanti et al. 2022 Sec. 4.2.2; validation_test.cpp says which
  // sources moved).
  // Lowered to 12.24 % by the dropless MoE rows' host time per kernel
  // launch measured per host CPU (TransformerEngine issue 2053; 37.08 us on
  // GB200's Grace, 13.48 us on a DGX's Xeon; validation_test.cpp).
  // The three merged (stop 31): 11.34 %.
  // Lowered to 11.27 % (11.2658 %): the 25.09 Qwen3 token-dropping rows 104,
  // 106 and 107 run FP8 current scaling, their release's recipe
  // (validation_test.cpp; docs/moe-long-context.md).
  // 11.20 % with what a step spends outside its layers (validation_test.cpp
  // says which sources moved).
  // All of this stop merged: 11.13 %.
  // Lowered to 11.09 % (11.0881 %) by the Blackwell GEMM curves below
  // 137 GFLOP from OpenXLA's sm_100 cuBLAS table (validation_test.cpp).
  // Raised to 11.17 % (11.1610 %) by the DeepSeek-V3 rows' MTP ("w/o MTP",
  // 11.00 % alone) and their recipe's pipeline layout, which takes the B200
  // pp 16 rows from on the mark to fast (validation_test.cpp says which
  // rows moved and why; docs/moe-long-context.md).
  // 10.91 % with Megatron-LM of 2021's unfused weight-gradient accumulation
  // and its division of the gradient buffer by dp at dp 1
  // (validation_test.cpp says which sources moved).
  // This stop's changes merged: 10.94 % (10.9439 %).
  // Raised to 11.00 % (10.9902 %): llm-foundry's PURE rows reduce-scatter
  // in bf16, the datatype Composer's mixed_precision PURE sets and their
  // table states (column reduce_dtype); they move faster, most of them
  // fast already (validation_test.cpp; docs/hopper-dense.md section 8).
  // 10.94 % (10.9350 %) with the README rows' untied output layer; 10.92 %
  // (10.9190 %) with their NaN check of the gradient buffer.
  // Both merged: 10.98 % (10.9654 %).
  // 10.89 % (10.8891 %) with the NeMo 24.07 / 25.02 rows' recipes
  // (docs/fp8-training.md, "The NeMo 24.07 and 25.02 recipes").
  // All three merged: 10.92 % (10.9106 %).
  // 10.78 % (10.7690 %) with the FlashAttention-2 backward's causal length
  // factor (llm-foundry 6.86 -> 6.54 %; docs/llm-foundry.md).
  // 10.77 % (10.7598 %) with the fused (cuDNN) backward's causal length
  // factor (docs/hopper-dense.md section 10).
  // Raised to 11.61 % (11.6036 %): the loss priced as each framework's
  // kernels move it (docs/loss-path.md): llm-foundry's fused bf16 cross
  // entropy (6 B per logit) and torchtitan's and litgpt's fp32 PyTorch one
  // (36 B) in place of Megatron-Core's 52 B; those rows, fast already, move
  // faster (core/validation/validation_test.cpp gives the figures).
  // Merged over both causal backward factors: 11.48 % (11.4743 %).
  // Raised to 11.50 % (11.4988 %): the Megatron-Bridge rows' and NeMo
  // 25.02's Llama 3 8B row's gradients reduced in bf16 as their recipes set
  // it (grad_reduce_in_fp32 = False; core/validation/validation_test.cpp
  // gives the figures).
  // Lowered to 11.47 % (11.4631 %) with the four H200 training steps this
  // repository measured (validation/gpu_step/README.md), 8.93 % mean.
  // Lowered to 11.39 % (11.3864 %): fused attention's head-dimension factor
  // (hardware::AttentionHeadDimFactor; core/validation/validation_test.cpp
  // gives the rows it moved).
  // Lowered to 11.35 % (11.3463 %): PyTorch AMP's weight casts on the four
  // H200 steps (training.autocast_fp32_weights).
  // Lowered to 11.31 % (11.3004 %): eager code's non-vectorized
  // element-wise kernels at the device's element rate (H200 measured, A100
  // from PyTorch PR #195542), and no attention-output copy.
  // Lowered to 11.30 % (11.2984 %): eager code's saved tensors in the
  // memory model move Gemstone-512x16's searched plan.
  // Lowered to 11.21 % (11.2006 %) with three more H200 steps measured as a
  // held-out check (validation/gpu_step/h200/short_seq), -0.9 / -1.0 / +3.5 %.
  // Lowered to 11.19 % (11.1880 %): eager autocast's weight-gradient upcast
  // at the element rate (the plain-PyTorch H200 steps).
  // Raised to 11.38 % (11.3779 %): the Llama 3 405B rows priced at the
  // interleaved schedule they state, not at interleave 1 (+29.9 / +25.5 /
  // +19.3 %), after the checkpointed H200 step's weight recast (11.1893 %).
  // Raised to 11.59 % (11.5868 %): those rows at the interleave the paper
  // states, one layer a model chunk (interleave 8 with the embedding and the
  // loss as stages; all three now fit in 80 GB): +33.4 / +34.7 / +67.4 %.
  // Lowered to 11.55 % (11.5441 %): the 128K row at the all-gather context
  // parallelism it states (the cp_scheme column), +67.4 -> +55.0 %.
  // Raised to 11.59 % (11.5839 %): full recompute stopping early where the
  // row's PyTorch does (training.checkpoint_early_stop; torchtitan and this
  // repository's H200 steps): H200 checkpointed +5.26 -> +1.89 %,
  // torchtitan's four full-recompute rows 2-5 points faster.
  // Raised to 12.06 % (12.0512 %) by collectives across tiers priced
  // pipelined, as NCCL runs them (hardware/network.cpp): multi-node
  // data-parallel traffic costs about half what the phases in sequence did;
  // the rows were predicted fast already (validation_test.cpp says more).
  EXPECT_LE(r.mape_pct, 12.06);
  for (const auto& row : r.rows)
    if (!row.skipped.empty()) std::cout << "[ skipped  ] line " << row.line << ": " << row.skipped << "\n";
  std::cout << "[ measured ] issue 3 rows: MAPE " << tuned.mape_pct << " %, max "
            << tuned.max_abs_error_pct << " %, " << tuned.evaluated << " evaluated\n";
  std::cout << "[ measured ] all rows: MAPE " << r.mape_pct << " %, max " << r.max_abs_error_pct
            << " %, " << r.evaluated << " evaluated, " << r.skipped << " skipped\n";
}

TEST(Validation, RowsItCannotModelAreSkippedWithAReason) {
  const std::string csv = std::string(ORRERY_TEST_SOURCE_DIR) + "/tests/data/odd_runs.csv";
  base::Diagnostics d;
  ValidationReport r = ValidateTrainingCsv(csv, PresetStore(kConfigs), d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].skipped, "no device preset for GPU 'V100-SXM2-32GB'");
  EXPECT_EQ(r.rows[1].skipped, "no measured iteration time, TFLOP/s or MFU");
  EXPECT_EQ(r.rows[2].skipped.rfind("plan does not fit the row's GPUs", 0), 0u) << r.rows[2].skipped;
  EXPECT_EQ(r.evaluated, 0);
  EXPECT_EQ(r.skipped, 3);
  // A file without the required columns is an error naming the column.
  base::Diagnostics d2;
  ValidateTrainingCsv(std::string(ORRERY_TEST_SOURCE_DIR) + "/tests/data/misspelled_key.yaml",
                      PresetStore(kConfigs), d2);
  EXPECT_FALSE(d2.ok());
}

}  // namespace
}  // namespace orrery::engine

namespace orrery::engine {
namespace {

// The FlashAttention-2 kernels (attention: flash2) run at the profile's
// flash2_attention_* efficiencies. Llama 3 70B, tp 8, sequence 8192, micro
// batch 1: 8 query heads of 128 per device, forward attention 2 b s^2 h (dqk
// + dv) = 2 x 8192^2 x 8 x 256 = 2.749e11 FLOP, half of it causal:
// 1.374e11 FLOP. Compute-bound (the Q/K/V/O traffic, 37.7 MB, takes ~14 us
// at 3.35 TB/s): on an H100 at 989.4 TFLOP/s x 0.55 (cuDNN) x its length
// factor at 8192 tokens 1.021 (Shah et al. 2024, Fig. 5, causal: 529 / 518
// TFLOP/s against 4k) 247.4 us, x 0.33 (FlashAttention-2) x 1.044 (333 /
// 319) 403.2 us, each + the 4 us kernel overhead.
TEST(Estimator, FlashAttention2KernelsRunAtTheirOwnEfficiency) {
  Scenario s = LoadScenario("llama3-70b-h100");
  // The kernel alone: without the values' copy that Transformer Engine's
  // layout check makes inside the attention module (packed_qkv_copies).
  s.training.packed_qkv_copies = false;
  const TrainingEstimator est(s.model, s.system);
  const double causal_flops = 0.5 * 2 * 8192.0 * 8192.0 * 8 * 256;
  const double peak = 989.4e12;
  ASSERT_EQ(s.training.attention, parallelism::Attention::kFlash);
  const double cudnn = est.Prepare(s.training, s.workload).dense.attention_fwd;
  EXPECT_NEAR(cudnn, causal_flops / (peak * 0.55 * 1.021) + 4e-6, 1e-9 * cudnn);
  s.training.attention = parallelism::Attention::kFlash2;
  const double fa2 = est.Prepare(s.training, s.workload).dense.attention_fwd;
  EXPECT_NEAR(fa2, causal_flops / (peak * 0.33 * 1.044) + 4e-6, 1e-9 * fa2);
  EXPECT_NEAR(fa2 * 1e6, 407.2, 0.1);
  // A profile without flash2 figures (A100: FlashAttention-2 is the fused
  // kernel its flash_attention_* describe) prices both alike.
  Scenario a = LoadScenario("gpt3-175b-a100");
  a.training.attention = parallelism::Attention::kFlash;
  const TrainingEstimator est_a(a.model, a.system);
  const double flash_a = est_a.Run(a.training, a.workload).iteration_s;
  a.training.attention = parallelism::Attention::kFlash2;
  EXPECT_EQ(est_a.Run(a.training, a.workload).iteration_s, flash_a);
}

// The Triton FlashAttention kernel (attention: triton, llm-foundry's
// attn_impl: triton) runs at FlashAttention-2's efficiency / 1.4 forward and
// / 2 backward (Dao 2023, Sec. 4.1). The shape of the test above (Llama 3
// 70B, tp 8, sequence 8192, micro batch 1; causal forward 1.374e11 FLOP):
// forward 1.374e11 / (989.4e12 x 0.33 x 1.044 / 1.4) = 564.5 us + 4 us =
// 568.5 us (1.044: FlashAttention-2's length factor at 8192 tokens).
// Backward 2.5 x 1.374e11 FLOP at 0.27 x 1.065 / 2 instead of 0.27 x 1.065
// (the causal backward's factor at 8192 tokens, configs/devices/h100-sxm.yaml:
// Fig. 6's 318 / 310 = 1.026 times Fig. 5's causal / non-causal forward at
// 8k over 4k, 0.900 / 0.867 = 1.038): twice the FlashAttention-2 time,
// i.e. longer by 2.5 x 1.374e11 / (989.4e12 x 0.27 x 1.065) = 1.2077 ms
// (the kernel overhead cancels; compute-bound as above).
TEST(Estimator, TritonAttentionRunsBelowFlashAttention2) {
  Scenario s = LoadScenario("llama3-70b-h100");
  // The kernel alone: without the values' copy that Transformer Engine's
  // layout check makes inside the attention module (packed_qkv_copies).
  s.training.packed_qkv_copies = false;
  const TrainingEstimator est(s.model, s.system);
  const double causal_flops = 0.5 * 2 * 8192.0 * 8192.0 * 8 * 256;
  const double peak = 989.4e12;
  s.training.attention = parallelism::Attention::kFlash2;
  const OpTimes fa2 = est.Prepare(s.training, s.workload).dense;
  s.training.attention = parallelism::Attention::kTriton;
  const OpTimes triton = est.Prepare(s.training, s.workload).dense;
  EXPECT_NEAR(triton.attention_fwd, causal_flops / (peak * 0.33 * 1.044 / 1.4) + 4e-6,
              1e-9 * triton.attention_fwd);
  EXPECT_NEAR(triton.attention_fwd * 1e6, 568.5, 0.1);
  EXPECT_NEAR(triton.fwd - fa2.fwd, triton.attention_fwd - fa2.attention_fwd, 1e-12);
  EXPECT_NEAR(triton.bwd - fa2.bwd, 2.5 * causal_flops / (peak * 0.27 * 1.065), 1e-9);
  EXPECT_NEAR((triton.bwd - fa2.bwd) * 1e3, 1.2077, 1e-4);
}

// The Triton kernel pads the head dimension to the next power of two
// (flash_attn_triton.py: BLOCK_HEADDIM = max(next_power_of_2(d), 16)).
// MPT-30B's shape (hidden 7168, 64 heads: head dim 112) in the scenario
// above: tp 8 leaves 8 heads a device, causal forward 0.5 x 2 x 8192^2 x 8 x
// (112 + 112) = 1.2025e11 FLOP, computed as if 128: x 128 / 112 = 1.3744e11
// FLOP, at 989.4e12 x 0.33 x 1.044 / 1.4 = 564.5 us + 4 us = 568.5 us, the
// same time as the head of 128 above (1.044: the length factor at 8192
// tokens), and at the padded head's efficiency (128: no head-dimension
// factor). FlashAttention-2 pads nothing and runs at the factor of a head of
// 112 (hardware::AttentionHeadDimFactor: 0.890 + 0.110 x 48 / 64 = 0.9725):
// 1.2025e11 / (989.4e12 x 0.33 x 1.044 x 0.9725) = 362.8 us + 4 us.
TEST(Estimator, TritonAttentionPadsTheHeadDimension) {
  Scenario s = LoadScenario("llama3-70b-h100");
  // The kernel alone: without the values' copy that Transformer Engine's
  // layout check makes inside the attention module (packed_qkv_copies).
  s.training.packed_qkv_copies = false;
  s.model.hidden = 7168;
  s.model.heads = 64;
  const TrainingEstimator est(s.model, s.system);
  const double causal_flops = 0.5 * 2 * 8192.0 * 8192.0 * 8 * 224;
  const double peak = 989.4e12;
  s.training.attention = parallelism::Attention::kTriton;
  const double triton = est.Prepare(s.training, s.workload).dense.attention_fwd;
  EXPECT_NEAR(triton, causal_flops * 128 / 112 / (peak * 0.33 * 1.044 / 1.4) + 4e-6, 1e-9 * triton);
  EXPECT_NEAR(triton * 1e6, 568.5, 0.1);
  s.training.attention = parallelism::Attention::kFlash2;
  const double fa2 = est.Prepare(s.training, s.workload).dense.attention_fwd;
  EXPECT_NEAR(fa2, causal_flops / (peak * 0.33 * 1.044 * 0.9725) + 4e-6, 1e-9 * fa2);
  EXPECT_NEAR(fa2 * 1e6, 366.8, 0.1);
}

// Megatron-Core counts the embedding and the loss as a layer each when asked
// (--account-for-embedding-in-pipeline-split, --account-for-loss-in-
// pipeline-split): Llama 3.1 405B's 126 layers then split as pp 16 x
// interleave 8 = 128 units, which plain layers cannot (126 < 128). Worked by
// hand: 128 units / 16 stages = 8 a stage; the first stage's units are the
// embedding and 7 layers, the last's 7 layers and the loss, each of the 14
// middle stages 8 layers: 7 + 14 x 8 + 7 = 126.
TEST(Estimator, EmbeddingAndLossCountAsPipelineLayers) {
  Scenario s = LoadScenario("llama3-70b-h100");
  s.model.layers = 126;
  s.training.pp = 16;
  s.training.dp = 4;  // tp 8 x pp 16 x dp 4 = 512 GPUs; 1024 / 4 = 256 microbatches, a multiple of 16
  s.training.interleave = 8;
  const TrainingEstimator est(s.model, s.system);
  EXPECT_EQ(est.Run(s.training, s.workload).infeasible, Infeasible::kLayerSplit);
  s.training.pipeline_split_embedding_loss = true;
  EXPECT_EQ(parallelism::PipelineSplitUnits(s.training, 126), 128);
  EXPECT_EQ(parallelism::FirstStageLayers(s.training, 126), 7);
  EXPECT_EQ(parallelism::LastStageLayers(s.training, 126), 7);
  const TrainingEstimate split = est.Run(s.training, s.workload);
  ASSERT_TRUE(split.feasible()) << static_cast<int>(split.infeasible);
  // Below 126 virtual stages (interleave 2), the same plan with the stage
  // counts written out costs the same, bit for bit.
  s.training.interleave = 2;
  const TrainingEstimate derived = est.Run(s.training, s.workload);
  ASSERT_TRUE(derived.feasible());
  s.training.pipeline_split_embedding_loss = false;
  s.training.first_stage_layers = 7;
  s.training.last_stage_layers = 7;
  EXPECT_EQ(est.Run(s.training, s.workload).iteration_s, derived.iteration_s);
  // The even split gives the 126 - 16 x 7 = 14 layers left over to the 14
  // middle stages, none to the ends (parallelism::EvenSplitLayers): 7 + 14 x
  // 8 + 7 again, the same time bit for bit. 80 layers over pp 6 leave 2
  // over: 13 on the first and last stages, 14 on the fullest middle one.
  s.training.first_stage_layers = 0;
  s.training.last_stage_layers = 0;
  s.training.pipeline_split_embedding_loss = false;
  const parallelism::EvenStageLayers even = parallelism::StageLayers(s.training, 126);
  EXPECT_EQ(even.first, 7);
  EXPECT_EQ(even.mid, 8);
  EXPECT_EQ(even.last, 7);
  EXPECT_EQ(est.Run(s.training, s.workload).iteration_s, derived.iteration_s);
  const parallelism::EvenStageLayers six = parallelism::EvenSplitLayers(80, 6);
  EXPECT_EQ(six.first, 13);
  EXPECT_EQ(six.mid, 14);
  EXPECT_EQ(six.last, 13);
  // pp 2 has no middle stage: 7 = 2 x 3 + 1 puts the one left over on the
  // last (3 + 4); pp 3: 7 = 3 x 2 + 1 on the middle one (2, 3, 2).
  EXPECT_EQ(parallelism::EvenSplitLayers(7, 2).first, 3);
  EXPECT_EQ(parallelism::EvenSplitLayers(7, 2).last, 4);
  EXPECT_EQ(parallelism::EvenSplitLayers(7, 3).mid, 3);
  EXPECT_EQ(parallelism::EvenSplitLayers(7, 3).last, 2);
  // Device by device (EvenSplitLayersOn, what the event engine places):
  // 80 = 6 x 13 + 2 over pp 6 gives the 2 to devices 1 and 2: 13, 14, 14,
  // 13, 13, 13; 11 = 4 x 2 + 3 over pp 4 serves both middle devices and
  // then the last: 2, 3, 3, 3 (sum 11).
  const int64_t want80[] = {13, 14, 14, 13, 13, 13};
  for (int64_t d = 0; d < 6; ++d) EXPECT_EQ(parallelism::EvenSplitLayersOn(80, 6, d), want80[d]) << d;
  const int64_t want11[] = {2, 3, 3, 3};
  for (int64_t d = 0; d < 4; ++d) EXPECT_EQ(parallelism::EvenSplitLayersOn(11, 4, d), want11[d]) << d;
  EXPECT_EQ(parallelism::EvenSplitLayersOn(11, 1, 0), 11);
  // Stated counts win over the derived ones.
  s.training.pipeline_split_embedding_loss = true;
  s.training.first_stage_layers = 6;
  EXPECT_EQ(parallelism::FirstStageLayers(s.training, 126), 6);
  EXPECT_EQ(parallelism::LastStageLayers(s.training, 126), 7);
  // Without a pipeline there is nothing to split: 126 units, no change.
  s.training.pp = 1;
  EXPECT_EQ(parallelism::PipelineSplitUnits(s.training, 126), 126);
}

// Context-parallel ranks hold the same weights and sum the gradients of
// their own tokens: Megatron-Core reduces the dense gradients and shards the
// distributed optimizer over dp x cp (megatron/core/distributed/
// distributed_data_parallel.py, intra_dp_cp_group). Llama 3 70B, tp 8 x pp 4
// on 512 H100: the first stage holds 20 layers and the embedding, 2.2705 G
// parameters a device (its bf16 weights, 4.5409 GB, are 2 bytes each), so
// ZeRO-1's fp32 master weight and two moments (12 bytes) over a group of 16
// are 4.5409 GB / 2 x 12 / 16 = 1.7029 GB, whether the 16 are dp 16 or
// dp 8 x cp 2 (dp 8 alone would give twice that).
TEST(Estimator, ContextParallelRanksShareTheDataParallelGroup) {
  Scenario s = LoadScenario("llama3-70b-h100");
  const TrainingEstimator est(s.model, s.system);
  s.training.cp = 1;
  s.training.dp = 16;
  const TrainingEstimate dp16 = est.Run(s.training, s.workload);
  s.training.cp = 2;
  s.training.dp = 8;
  const TrainingEstimate dp8cp2 = est.Run(s.training, s.workload);
  ASSERT_TRUE(dp16.feasible());
  ASSERT_TRUE(dp8cp2.feasible());
  EXPECT_NEAR(dp8cp2.memory.weights, 4.5409e9, 1e5);
  EXPECT_NEAR(dp8cp2.memory.optimizer, dp8cp2.memory.weights / 2 * 12 / 16, 1.0);
  EXPECT_NEAR(dp8cp2.memory.optimizer, 1.7029e9, 1e5);
  EXPECT_DOUBLE_EQ(dp8cp2.memory.optimizer, dp16.memory.optimizer);
  // With dp 1 the two cp ranks still reduce their gradients together: the
  // data-parallel term is not zero (it was before cp joined the group).
  s.system.nodes = 8;  // tp 8 x pp 4 x cp 2 = 64 GPUs, dp 1
  s.training.dp = 1;
  s.workload.global_batch = 64;
  const TrainingEstimate dp1cp2 = TrainingEstimator(s.model, s.system).Run(s.training, s.workload);
  ASSERT_TRUE(dp1cp2.feasible());
  EXPECT_GT(dp1cp2.time.dp_comm, 0.0);
  EXPECT_NEAR(dp1cp2.memory.optimizer, dp8cp2.memory.optimizer * 8, 1.0);
}

// Interleaved 1F1B reduces gradients chunk by chunk (Megatron-Core
// schedules.py: a chunk's grad_sync_func once its last microbatch is through
// the backward) and gathers chunk k+1's parameters beside chunk k's
// forwards. With one bucket a device (dp_bucket above the gradients), v = 1
// exposes the whole reduce-scatter C and all-gather G: the last bucket is
// all of it. With v = 5 only the last chunk's C/5 and the first chunk's G/5
// wait; the other 4/5 run beside the cool-down backwards and the warm-up
// forwards (windows of b (1 + (v-1) p) = 17 chunk passes, longer than the
// collectives here) and cost only the contention they cause, x s/(1+s)
// (OverlapExposed, s the device's overlap_slowdown):
//   dp(v = 5) = (C + G) (1/5 + 4/5 s/(1+s)).
TEST(Estimator, InterleavedChunksReduceTheirGradientsEarly) {
  Scenario s = LoadScenario("llama3-70b-h100");  // tp 8, pp 4, dp 16, ZeRO-1, 80 layers
  s.training.dp_bucket = 1e15;
  const TrainingEstimator est(s.model, s.system);
  s.training.interleave = 1;
  s.training.schedule = parallelism::Schedule::kOneFOneB;
  const TrainingEstimate one = est.Run(s.training, s.workload);
  s.training.interleave = 5;
  s.training.schedule = parallelism::Schedule::kInterleaved;
  const TrainingEstimate five = est.Run(s.training, s.workload);
  ASSERT_TRUE(one.feasible());
  ASSERT_TRUE(five.feasible());
  const double sl = s.system.device.overlap_slowdown;
  ASSERT_GT(sl, 0.0);
  EXPECT_NEAR(five.time.dp_comm, one.time.dp_comm * (0.2 + 0.8 * sl / (1 + sl)), 1e-9 * one.time.dp_comm);
  // Without overlap every byte waits, interleaved or not.
  s.training.dp_overlap = false;
  const double exposed = est.Run(s.training, s.workload).time.dp_comm;
  EXPECT_NEAR(exposed, one.time.dp_comm, 1e-9 * exposed);
}

// Uneven pipeline split: the slowest stage paces the pipeline, and the stage
// holding the LM head pays for it.
TEST(Estimator, UnevenStagesPaceThePipeline) {
  Scenario s = LoadScenario("gpt3-175b-a100");
  s.training.pp = 2;
  s.training.interleave = 1;
  s.system.nodes = 2;  // tp 8 x pp 2 = 16 GPUs, dp 1
  const TrainingEstimator est(s.model, s.system);
  const TrainingEstimate even = est.Run(s.training, s.workload);
  s.training.first_stage_layers = 40;
  s.training.last_stage_layers = 56;
  const TrainingEstimate heavy_last = est.Run(s.training, s.workload);
  s.training.first_stage_layers = 56;
  s.training.last_stage_layers = 40;
  const TrainingEstimate heavy_first = est.Run(s.training, s.workload);
  // 56 layers + LM head > 56 layers + embedding > 48 layers + LM head.
  EXPECT_GT(heavy_last.time.forward, heavy_first.time.forward);
  EXPECT_GT(heavy_first.time.forward, even.time.forward);
  // 8 more layers on the pacing stage: the forward grows by about 8/48.
  EXPECT_NEAR(heavy_first.time.forward / even.time.forward, 56.0 / 48.0, 0.02);
  // The first stage holds the most microbatches: loading it raises the peak.
  EXPECT_GT(heavy_first.memory.activations, even.memory.activations);
}

}  // namespace
}  // namespace orrery::engine

namespace orrery::engine {
namespace {

// Issues 15 and 16: the shipped H100 profile prices a FlashAttention-2
// forward by its sequence length: 0.33 x the length factor (Shah et al.
// 2024, arXiv 2407.08608, Fig. 5, causal, head dim 128: 298 TFLOP/s at 2k
// tokens, 333 at 8k, over 319 at 4k: 0.934 and 1.044). One causal attention
// of 16 heads of 128, batch 1, the FLOP flash-attn's benchmark counts
// (4 b s^2 h d / 2):
//   2048 tokens: 4 x 2048^2 x 16 x 128 / 2 = 17,179,869,184 FLOP,
//                / (989.4e12 x 0.33 x 0.934) = 56.336 us, + 4 us = 60.336 us
//   8192 tokens: 16x the FLOP, 274,877,906,944, / (989.4e12 x 0.33 x 1.044)
//                = 806.406 us, + 4 us = 810.406 us
// Its traffic, Q, K, V and O in BF16 (2048 x 16 x 128 x 4 x 2 B = 33.5 MB,
// 4x that at 8k), takes about 12.5 us (50 us) at 3.35 TB/s x 0.8, under the
// compute. Without the factor (0.33 at both lengths): 56.6 and 845.9 us.
TEST(AttentionCurve, H100FlashAttention2ForwardAtTwoLengths) {
  const hardware::DeviceSpec h100 = test::Device("h100-sxm");
  const double bytes = 2048.0 * 16 * 128 * 4 * 2;
  EXPECT_NEAR(hardware::FlashAttentionTime(h100, hardware::DataType::kBf16, 17179869184.0, bytes, false,
                                           hardware::AttentionKernel::kFlash2, 2048),
              60.336e-6, 0.001e-6);
  EXPECT_NEAR(hardware::FlashAttentionTime(h100, hardware::DataType::kBf16, 274877906944.0, 4 * bytes, false,
                                           hardware::AttentionKernel::kFlash2, 8192),
              810.406e-6, 0.001e-6);
}

// Issue 15: the FlashAttention-2 backward's length factor under a causal
// mask (configs/devices/h100-sxm.yaml): Fig. 6's non-causal factor of Shah et
// al. 2024 (arXiv 2407.08608) times Fig. 5's causal / non-causal forward
// ratio over its value at 4k, 0.690 x 0.713 = 0.492 at 512 tokens and
// 1.039 x 1.045 = 1.085 at 16k, held beyond. One causal backward of 16
// heads of 128, batch 1, 2.5x the forward FLOP flash-attn's benchmark counts:
//   512 tokens:   2.5 x 4 x 512^2 x 16 x 128 / 2 = 2,684,354,560 FLOP
//     FlashAttention-2: / (989.4e12 x 0.27 x 0.492) = 20.424 us, + 4 us = 24.424 us
//     Triton (FlashAttention-2's backward efficiency / 2, Dao 2023 Sec. 4.1):
//                       40.848 us + 4 us = 44.848 us (33.126 us with the
//                       non-causal factor 0.690)
//   65536 tokens: 2.5 x 4 x 65536^2 x 16 x 128 / 2 = 43,980,465,111,040 FLOP,
//     Triton at the 16k factor: / (989.4e12 x 0.27 x 1.085 / 2) = 303,476.04 us
//                       + 4 us (316,911.94 us + 4 us at the non-causal 1.039)
// The traffic, Q, K, V, O and their gradients in BF16 (512 x 16 x 128 x 4 x
// 2 B x 2 = 16.8 MB: 6.3 us at 3.35 TB/s x 0.8; 128x that at 64k, 801 us),
// stays under the compute.
TEST(AttentionCurve, H100FlashAttention2CausalBackwardAtShortAndLongLengths) {
  const hardware::DeviceSpec h100 = test::Device("h100-sxm");
  const double bytes = 512.0 * 16 * 128 * 4 * 2 * 2;
  EXPECT_NEAR(hardware::FlashAttentionTime(h100, hardware::DataType::kBf16, 2684354560.0, bytes, true,
                                           hardware::AttentionKernel::kFlash2, 512),
              24.424e-6, 0.001e-6);
  EXPECT_NEAR(hardware::FlashAttentionTime(h100, hardware::DataType::kBf16, 2684354560.0, bytes, true,
                                           hardware::AttentionKernel::kTriton, 512),
              44.848e-6, 0.001e-6);
  EXPECT_NEAR(hardware::FlashAttentionTime(h100, hardware::DataType::kBf16, 43980465111040.0, 128 * bytes, true,
                                           hardware::AttentionKernel::kTriton, 65536),
              303480.04e-6, 0.01e-6);
}

// Issue 15: the fused (cuDNN) backward's length factor under a causal mask
// (configs/devices/h100-sxm.yaml), derived as FlashAttention-2's above:
// Fig. 6's non-causal cuDNN factor of Shah et al. 2024 (arXiv 2407.08608)
// times Fig. 5's cuDNN causal / non-causal forward ratio over its value at
// 4k, 0.611 x 0.745 = 0.455 at 512 tokens ((305 / 499) x ((315 / 497) /
// (518 / 609))) and 1.034 x 1.065 = 1.101 at 16k ((516 / 499) x ((539 /
// 595) / (518 / 609))), held beyond. The same causal backward of 16 heads
// of 128, batch 1, at flash_attention_bwd_efficiency 0.45:
//   512 tokens:   2,684,354,560 FLOP / (989.4e12 x 0.45 x 0.455)
//                 = 13.251 us, + 4 us = 17.251 us (13.868 us with the
//                 non-causal factor 0.611)
//   65536 tokens: 43,980,465,111,040 FLOP / (989.4e12 x 0.45 x 1.101)
//                 = 89,719.755 us, + 4 us = 89,723.755 us (95,537.318 us
//                 at the non-causal 1.034)
// The traffic (6.2 us at 512 tokens, 772 us at 64k, at 3.35 TB/s x the
// memory curve's 0.81 / 0.83) stays under the compute.
TEST(AttentionCurve, H100FusedCausalBackwardAtShortAndLongLengths) {
  const hardware::DeviceSpec h100 = test::Device("h100-sxm");
  const double bytes = 512.0 * 16 * 128 * 4 * 2 * 2;
  EXPECT_NEAR(hardware::FlashAttentionTime(h100, hardware::DataType::kBf16, 2684354560.0, bytes, true,
                                           hardware::AttentionKernel::kFused, 512),
              17.2509e-6, 0.0001e-6);
  EXPECT_NEAR(hardware::FlashAttentionTime(h100, hardware::DataType::kBf16, 43980465111040.0, 128 * bytes, true,
                                           hardware::AttentionKernel::kFused, 65536),
              89723.755e-6, 0.001e-6);
}

}  // namespace
}  // namespace orrery::engine
