// orrery infer: KV cache sizes, the inference estimator, the serving
// simulator, speculative decoding, the CLI, and validation against measured
// inference runs (issue 7 acceptance).

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_common.h"
#include "core/estimate/inference_estimator.h"
#include "core/validation/inference_validation.h"
#include "core/estimate/serving_sim.h"
#include "hardware/device_model.h"
#include "models/kv_cache.h"
#include "models/transformer.h"
#include "tests/support/count_allocations.h"
#include "tests/support/presets.h"

namespace orrery::engine {
namespace {

using hardware::DataType;
using parallelism::InferenceDeployment;

const std::string kConfigs = ORRERY_TEST_CONFIG_DIR;
const std::string kRuns = std::string(ORRERY_TEST_VALIDATION_DIR) + "/inference_runs.csv";

using test::LoadScenario;
using test::Model;

// One DGX H100 node with its H100 profile.
hardware::SystemSpec H100Node() { return test::System("dgx-h100-superpod", 1); }

InferenceDeployment Bf16(int64_t tp) {
  InferenceDeployment d;
  d.tp = tp;
  d.weights = d.activations = d.kv_cache = DataType::kBf16;
  return d;
}

// --- KV cache ---------------------------------------------------------------

// Llama 2 70B: 80 layers, 8 KV heads (GQA) of 128: 2 x 80 x 8 x 128 = 163,840
// elements, 327,680 bytes per token in fp16 (320 KiB).
TEST(KvCache, Llama2_70bGqaBytesPerToken) {
  const auto m = Model("llama2-70b");
  EXPECT_DOUBLE_EQ(models::KvBytesPerToken(m, 2), 327680.0);
  EXPECT_DOUBLE_EQ(models::KvBytesPerToken(m, 1), 163840.0);  // fp8
  // TP 8: one KV head per GPU, 2 x 80 x 1 x 128 x 2 = 40,960 bytes; TP 16
  // replicates that head (8 heads cannot split 16 ways).
  EXPECT_DOUBLE_EQ(models::KvBytesPerTokenPerDevice(m, 2, 8, 1), 40960.0);
  EXPECT_DOUBLE_EQ(models::KvBytesPerTokenPerDevice(m, 2, 16, 1), 40960.0);
  // PP 2: 40 layers per stage.
  EXPECT_DOUBLE_EQ(models::KvBytesPerTokenPerDevice(m, 2, 8, 2), 20480.0);
}

// Llama 2 7B: MHA, 32 layers x 32 heads x 128: 2 x 32 x 32 x 128 x 2 bytes =
// 524,288 bytes per token (512 KiB); as MQA (one KV head) 32 times less.
TEST(KvCache, Llama2_7bMhaAndMqa) {
  auto m = Model("llama2-7b");
  EXPECT_DOUBLE_EQ(models::KvBytesPerToken(m, 2), 524288.0);
  m.kv_heads = 1;
  EXPECT_DOUBLE_EQ(models::KvBytesPerToken(m, 2), 16384.0);
}

// DeepSeek-V2 MLA (arXiv 2405.04434, Table 1 and Sec. 3.1.2): d_c = 512,
// d_h^R = 64, 60 layers: (512 + 64) x 60 = 34,560 elements per token, the
// paper's 4.5 d_h l with d_h = 128; 69,120 bytes in bf16, the same on every
// tensor-parallel rank.
TEST(KvCache, MultiHeadLatentAttention) {
  models::ModelSpec m;
  m.layers = 60;
  m.hidden = 5120;
  m.heads = 128;
  m.head_dim = 128;
  m.kv_lora_rank = 512;
  m.rope_head_dim = 64;
  EXPECT_DOUBLE_EQ(models::KvElementsPerTokenPerLayer(m), 4.5 * 128);
  EXPECT_DOUBLE_EQ(models::KvBytesPerToken(m, 2), 69120.0);
  EXPECT_DOUBLE_EQ(models::KvBytesPerTokenPerDevice(m, 2, 8, 1), 69120.0);
}

// --- the estimator ------------------------------------------------------------

// FLOPs of a prefill pass, worked by hand for Llama 2 7B, one 128-token
// prompt on one GPU: GEMM weights per layer 4096 x (12288 + 4096 + 22016 +
// 11008) = 202,375,168, so 2 x 202,375,168 x 32 x 128 = 1,657,857,376,256;
// the LM head for the last token 2 x 4096 x 32000 = 262,144,000; attention
// over 128 x 129 / 2 = 8256 causal pairs, 4 x 128 FLOP per pair and head, 32
// heads, 32 layers = 4,328,521,728.
TEST(Estimator, PrefillFlopsByHand) {
  const auto m = Model("llama2-7b");
  const auto sys = H100Node();
  const InferenceEstimator est(m, sys);
  const PassTime p = est.Pass(Bf16(1), IterationShape::Prefill(1, 128));
  EXPECT_DOUBLE_EQ(p.flops, 1657857376256.0 + 262144000.0 + 4328521728.0);
  EXPECT_NEAR(p.total, p.gemm + p.attention + p.elementwise + p.tp_comm + p.pp_comm + p.offload,
              1e-15);
}

// Issue 7 acceptance: a decode step of a 70B model at batch 1 on 8 H100 is
// bounded below by its weight bytes over the aggregate HBM bandwidth:
// 68.98e9 x 2 bytes / (8 x 3.35 TB/s) = 5.15 ms.
TEST(Estimator, DecodeStepAboveWeightStreamingBound) {
  const auto m = Model("llama2-70b");
  const auto sys = H100Node();
  const InferenceEstimator est(m, sys);
  const double weights = models::ParameterCount(m, 4096) * 2;
  const double bound = weights / (8 * 3.35e12);
  EXPECT_NEAR(bound, 5.148e-3, 0.01e-3);
  const PassTime step = est.Pass(Bf16(8), IterationShape::Decode(1, 128));
  EXPECT_GT(step.total, bound);
  // Every weight byte is read once: per-GPU weights times 8.
  EXPECT_NEAR(step.weight_bytes / weights, 1.0, 0.01);
  // The GEMMs alone cannot beat the best bandwidth the profile allows: 0.83
  // of 3.35 TB/s per GPU.
  EXPECT_GT(step.gemm, weights / (8 * 3.35e12 * 0.83) * 0.99);
  std::cout << "[ measured ] 70B decode step, batch 1, 8 x H100 bf16: " << step.total * 1e3
            << " ms (GEMM " << step.gemm * 1e3 << ", attention " << step.attention * 1e3
            << ", element-wise " << step.elementwise * 1e3 << ", TP all-reduce "
            << step.tp_comm * 1e3 << "; bound " << bound * 1e3 << " ms)\n";
}

TEST(Estimator, StaticFiguresAddUp) {
  const Scenario s = LoadScenario("llama2-70b-h100-infer");
  const InferenceEstimator est(s.model, s.system);
  const InferenceEstimate e = est.Run(*s.inference);
  ASSERT_TRUE(e.feasible()) << ExplainInfeasible(e, s);
  const auto& d = *s.inference;
  EXPECT_DOUBLE_EQ(e.ttft_s, e.prefill.total);
  EXPECT_DOUBLE_EQ(e.e2e_s, e.ttft_s + static_cast<double>(d.output - 1) * e.tpot_s);
  EXPECT_DOUBLE_EQ(e.output_tokens_per_s,
                   static_cast<double>(d.batch * d.output) / e.e2e_s);
  EXPECT_DOUBLE_EQ(e.output_tokens_per_s_per_device, e.output_tokens_per_s / 4);
  // KV cache: 64 sequences x 2176 tokens x 163,840 / 4 bytes (fp8, TP 4).
  EXPECT_DOUBLE_EQ(e.memory.kv_cache, 64.0 * 2176 * 163840 / 4);
  // max_batch is the largest batch whose memory fits.
  InferenceDeployment more = d;
  more.batch = e.max_batch;
  EXPECT_TRUE(est.Run(more).feasible());
  more.batch = e.max_batch + 1;
  EXPECT_EQ(est.Run(more).infeasible, InferenceInfeasible::kOutOfMemory);
}

// Issue 18: a GEMM input narrower than 16 bits is quantized first (read at
// 2 bytes, written at the narrow size), fused into the kernel that makes it:
// memory traffic, no launch. Llama-2-70B at TP 4, a 1,024-token prefill;
// per token and layer the device's GEMM inputs are qkv_proj k = h = 8,192,
// out_proj k = 64 x 128 / 4 = 2,048, mlp_up k = 8,192, mlp_down k = 28,672 /
// 4 = 7,168: 25,600 elements. FP8: 2 + 1 = 3 bytes each, 76,800 B. At 3 TB/s
// x 0.75 the 80 layers take 80 x 1,024 x 76,800 / 2.25e12 = 2.7962027 ms more
// element-wise time than with 16-bit inputs; NVFP4 (4.5 bits with its scales,
// 2.5625 B each) 80 x 1,024 x 25,600 x 2.5625 / 2.25e12 = 2.3884231 ms.
TEST(Pass, NarrowGemmInputsPayTheirQuantize) {
  Scenario s = LoadScenario("llama2-70b-h100-infer");
  s.system.device.memory_bandwidth = 3e12;
  s.system.device.memory_efficiency = {{1}, {0.75}};
  s.system.device.peak_fp4 = 4 * s.system.device.peak_bf16;
  const InferenceEstimator est(s.model, s.system);
  InferenceDeployment d = *s.inference;
  d.tp = 4;
  d.pp = 1;
  const IterationShape prefill = IterationShape::Prefill(1, 1024);
  d.weights = d.activations = hardware::DataType::kBf16;
  const double wide = est.Pass(d, prefill).elementwise;
  d.weights = d.activations = hardware::DataType::kFp8;
  EXPECT_NEAR(est.Pass(d, prefill).elementwise - wide, 2.7962027e-3, 1e-9);
  d.weights = d.activations = hardware::DataType::kFp4;
  EXPECT_NEAR(est.Pass(d, prefill).elementwise - wide, 2.3884231e-3, 1e-9);
}

// Issue 18: INT4 weight-only (W4A16, AWQ/GPTQ on Marlin kernels). Llama 2 7B,
// one decode step at batch 1 on an H100 profile made ideal (GEMM and memory
// efficiency 1, no kernel overhead) so that the step can be worked by hand.
// Per layer the GEMMs hold 4096 x (12288 + 4096 + 22016) + 11008 x 4096 =
// 202,375,168 weights at 0.5 + 2/128 = 0.515625 bytes (int4 plus a 16-bit
// scale per 128) = 104,349,696 B, and read and write (4096 + 12288) +
// (4096 + 4096) + (4096 + 22016) + (11008 + 4096) = 65,792 16-bit activations
// = 131,584 B. The LM head stays 16-bit: 4096 x 32000 x 2 + (4096 + 32000) x 2
// = 262,216,192 B. Every GEMM is memory-bound (the largest, mlp_up, computes
// 2 x 90.2 M FLOP in 0.09 us and dequantizes 90.2 M weights in 1.35 us at
// 66.9 TFLOP/s, against 13.9 us of bytes), so the step's GEMM time is
// (32 x (104,349,696 + 131,584) + 262,216,192) / 3.35e12 = 1.0763036 ms,
// against (32 x (404,750,336 + 131,584) + 262,216,192) / 3.35e12 = 3.9458023
// ms in bf16: 3.67x, near the 4x Marlin reaches at small batches (Frantar
// et al. 2024, arXiv 2408.11743, abstract: "close to maximum (4x)" up to
// batch 16-32).
TEST(Pass, Int4WeightOnlyDecodeStepByHand) {
  const auto m = Model("llama2-7b");
  auto sys = H100Node();
  sys.device.gemm_efficiency = {{1}, {1}};
  sys.device.memory_efficiency = {{1}, {1}};
  sys.device.kernel_overhead = 0;
  ASSERT_DOUBLE_EQ(sys.device.peak_fp32, 66.9e12);
  ASSERT_DOUBLE_EQ(sys.device.memory_bandwidth, 3.35e12);
  const InferenceEstimator est(m, sys);
  InferenceDeployment d = Bf16(1);
  const IterationShape step = IterationShape::Decode(1, 128);
  EXPECT_NEAR(est.Pass(d, step).gemm, 3.9458023e-3, 1e-9);
  d.weights = DataType::kInt4;
  const PassTime p = est.Pass(d, step);
  EXPECT_NEAR(p.gemm, 1.0763036e-3, 1e-9);
  EXPECT_DOUBLE_EQ(p.weight_bytes, 32 * 104349696.0 + 4096.0 * 32000 * 2);
}

// The compute-bound side: a 4,096-token prefill runs at the 16-bit tensor
// rate and dequantizes every weight once per 64-row slice, 4096 / 64 = 64
// times, two half-precision operations each at twice the 66.9 TFLOP/s FP32
// rate: 32 layers x 202,375,168 weights x 64 / 66.9e12 = 6.1952817 ms more
// GEMM time than bf16 (each layer GEMM is compute-bound in both: qkv_proj
// computes 2 x 4096 x 50.3 M FLOP = 417 us at 989.4 TFLOP/s against 70 us of
// bytes; the LM head, one row per sequence, is the same 16-bit GEMM in both).
// That is 11.6 % over the 53.6 ms of tensor time, the "plus dequant" of a
// W4A16 prefill. Weights in memory: the 32 layers' 202,383,360 parameters
// (GEMMs plus two 4096 RMSNorm vectors) at 0.515625 instead of 2 bytes,
// 32 x 202,383,360 x 1.484375 = 9,613,209,600 B less; embedding and head
// stay 16-bit.
TEST(Pass, Int4WeightOnlyPrefillPaysDequant) {
  const auto m = Model("llama2-7b");
  auto sys = H100Node();
  sys.device.gemm_efficiency = {{1}, {1}};
  sys.device.memory_efficiency = {{1}, {1}};
  sys.device.kernel_overhead = 0;
  const InferenceEstimator est(m, sys);
  InferenceDeployment d = Bf16(1);
  const IterationShape prefill = IterationShape::Prefill(1, 4096);
  const double wide = est.Pass(d, prefill).gemm;
  const double wide_weights = est.Memory(d, 1, 4096, 4096, 1).weights;
  d.weights = DataType::kInt4;
  EXPECT_NEAR(est.Pass(d, prefill).gemm - wide, 6.1952817e-3, 1e-9);
  EXPECT_NEAR(wide_weights - est.Memory(d, 1, 4096, 4096, 1).weights, 9613209600.0, 1.0);
  // FP8 is not weight-only (the GEMM runs in FP8): no dequant term.
  d.weights = d.activations = DataType::kFp8;
  const PassTime fp8 = est.Pass(d, prefill);
  EXPECT_LT(fp8.gemm, wide);
}

// Issue 18 asked for tile and wave quantization (NVIDIA, "Matrix
// Multiplication Background User's Guide", Sec. "Tile Quantization" and
// "Wave Quantization") on GEMMs with few rows, the 128-token prefills. The
// cuBLASLt GEMMs this repository measured on an H200 (hardware/calibration/
// measurements/h200/cuda_full_run1.json, bf16 TN, median of 20) say the
// existing roofline -- the FLOP-size efficiency curve against the byte
// time, whichever is longer -- already holds for 128-row GEMMs: errors of
// -1.4, +1.5, +4.4, -3.4, -6.7 and -2.0 % on the six shapes below. A
// fixed 128 x 128 tile in waves of 132 SMs, taken relative to the square
// GEMM of the same FLOP count the curve was measured on, predicts 45.0 us
// for 128 x 4096 x 4096 (+199 %), 61.6 us for 128 x 8192 x 8192 (+52 %) and
// 182 us for 128 x 8192 x 28672 (+43 %), and doubles the mean error over
// the file's 67 bf16 GEMMs of 16 rows or more (5.5 % to 10.9 %; 256 x 128
// tiles 24.5 %): cuBLASLt picks tiles and split-K so that its last wave is
// not idle. So no tile term is added, and this holds the fit.
TEST(Pass, FewRowGemmsMatchTheH200Probe) {
  base::Diagnostics diags;
  hardware::DeviceSpec dev;
  ASSERT_TRUE(LoadDevicePreset("h200", PresetStore(kConfigs), {}, "device", dev, diags))
      << diags.ToString();
  struct Measured {
    double m, n, k, bytes, seconds;
  };
  const Measured runs[] = {{128, 4096, 4096, 35651584, 15.0535e-6},
                           {128, 12288, 4096, 104857600, 30.1800e-6},
                           {128, 12288, 12288, 308281344, 78.4560e-6},
                           {128, 8192, 8192, 138412032, 40.4862e-6},
                           {128, 28672, 8192, 479199232, 133.7817e-6},
                           {128, 8192, 28672, 479199232, 127.3696e-6}};
  for (const Measured& r : runs) {
    const double t = hardware::GemmTime(dev, DataType::kBf16, 2 * r.m * r.n * r.k, r.bytes);
    EXPECT_NEAR(t / r.seconds, 1.0, 0.08) << r.m << " x " << r.n << " x " << r.k;
  }
}

TEST(Estimator, DoesNotFitIsAResultWithAReason) {
  const auto m = Model("llama2-70b");
  const auto sys = H100Node();
  const InferenceEstimator est(m, sys);
  const InferenceEstimate e = est.Run(Bf16(1));
  EXPECT_EQ(e.infeasible, InferenceInfeasible::kOutOfMemory);
  Scenario s;
  s.system = sys;
  s.inference = Bf16(1);
  const std::string why = ExplainInfeasible(e, s);
  EXPECT_NE(why.find("138 GB"), std::string::npos) << why;
  EXPECT_NE(why.find("but 90 % of the device is 72 GB"), std::string::npos) << why;
  // TP 3 does not divide 64 heads: a result too, not an exception.
  EXPECT_EQ(est.Run(Bf16(3)).infeasible, InferenceInfeasible::kSplit);
}

// Offloaded layer weights cross PCIe every pass: a decode step of Llama 2 7B
// with all of them in host memory moves 32 x 202,383,360 parameters (GEMM
// weights and two RMSNorm scales per layer) x 2 bytes = 12.95 GB over the
// DGX H100's 50 GB/s host link: 0.259 s, which hides the compute.
TEST(Estimator, OffloadedWeightsStreamOverPcie) {
  const auto m = Model("llama2-7b");
  const auto sys = H100Node();
  const InferenceEstimator est(m, sys);
  InferenceDeployment d = Bf16(1);
  d.offload_weights = 1;
  const PassTime step = est.Pass(d, IterationShape::Decode(1, 128));
  const double pcie = 32.0 * 202383360 * 2 / 50e9;
  EXPECT_GE(step.total, 0.99 * pcie);
  EXPECT_LT(step.total, 1.05 * pcie);
  EXPECT_GT(step.offload, 0.9 * pcie);
}

// Mixtral 8x7B decoding one token: top-2 of 8 experts, so 8 (1 - (6/8)^1) =
// 2 experts' weights are read per layer, not 8: 2 x 3 x 4096 x 14336 bytes x
// 2 (fp16) = 704,643,072 of the 2.8 GB of expert weights. With 64 tokens
// every expert is used (1 - 0.75^64 > 0.999).
TEST(Estimator, MoeDecodeReadsOnlyRoutedExperts) {
  const auto m = Model("mixtral-8x7b");
  const auto sys = H100Node();
  const InferenceEstimator est(m, sys);
  InferenceDeployment d = Bf16(1);
  const PassTime one = est.Pass(d, IterationShape::Decode(1, 128));
  // Per layer: attention GEMMs 4096 x (4096 + 2 x 1024) + 4096 x 4096, the
  // router 4096 x 8, and the used experts; plus the LM head 4096 x 32000.
  const double attention = 4096.0 * 6144 + 4096.0 * 4096;
  const double router = 4096.0 * 8;
  const double expert = 3.0 * 4096 * 14336;
  const double head = 4096.0 * 32000;
  EXPECT_NEAR(one.weight_bytes, 2 * (32 * (attention + router + 2 * expert) + head), 1.0);
  const PassTime many = est.Pass(d, IterationShape::Decode(64, 128));
  const double used = 8 * (1 - std::pow(0.75, 64));
  EXPECT_NEAR(many.weight_bytes, 2 * (32 * (attention + router + used * expert) + head), 1.0);
}

// Pipeline stages run one after the other: a pass over pp = 2 stages takes
// the one-stage pass plus the send of the activations between them.
TEST(Estimator, PipelineStagesAddTheirSend) {
  const auto m = Model("llama2-7b");
  const auto sys = H100Node();
  const InferenceEstimator est(m, sys);
  InferenceDeployment d = Bf16(1);
  const PassTime one = est.Pass(d, IterationShape::Decode(8, 256));
  d.pp = 2;
  const PassTime two = est.Pass(d, IterationShape::Decode(8, 256));
  EXPECT_GT(two.pp_comm, 0);
  EXPECT_NEAR(two.total, one.total + two.pp_comm, 1e-12);
  // One send of 8 tokens x 4096 x 2 bytes between the two GPUs.
  const hardware::AlphaBetaNetwork net(sys);
  EXPECT_DOUBLE_EQ(two.pp_comm, net.Time(hardware::Collective::kSendRecv, 8 * 4096 * 2,
                                         net.Place(2, 1)));
  // Each stage holds half the layers' KV and weights.
  EXPECT_NEAR(est.KvBytesPerTokenPerDevice(d), 524288.0 / 2, 1e-9);
}

TEST(Estimator, RunAndPassDoNotAllocate) {
  const Scenario s = LoadScenario("llama2-70b-h100-infer");
  const InferenceEstimator est(s.model, s.system);
  InferenceDeployment d[3] = {*s.inference, *s.inference, *s.inference};
  d[1].speculate = 4;
  d[2].offload_kv = 0.5;
  double sink = 0;
  const long before = test::AllocationCount();
  for (int i = 0; i < 300; ++i) {
    sink += est.Run(d[i % 3]).e2e_s;
    sink += est.Pass(d[i % 3], IterationShape::Prefill(3, 100, 50)).total;
  }
  EXPECT_EQ(test::AllocationCount() - before, 0);
  EXPECT_GT(sink, 0);
}

// --- speculative decoding ------------------------------------------------------

// Leviathan et al. 2023, Eq. 1: (1 - a^(k+1)) / (1 - a).
TEST(Speculative, ExpectedTokensPerStep) {
  EXPECT_NEAR(SpeculativeTokensPerStep(4, 0.8), (1 - 0.32768) / 0.2, 1e-12);  // 3.3616
  EXPECT_DOUBLE_EQ(SpeculativeTokensPerStep(0, 0.8), 1.0);
  EXPECT_DOUBLE_EQ(SpeculativeTokensPerStep(3, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(SpeculativeTokensPerStep(5, 0.0), 1.0);
}

TEST(Speculative, TimePerTokenChargesTheDraft) {
  const Scenario s = LoadScenario("llama2-70b-spec-h100-infer");
  ASSERT_TRUE(s.draft_model.has_value());
  const InferenceEstimator est(s.model, s.system, &*s.draft_model);
  const auto& d = *s.inference;
  const InferenceEstimate spec = est.Run(d);
  InferenceDeployment plain = d;
  plain.speculate = 0;
  const InferenceEstimate base = est.Run(plain);
  // TPOT = (verify k+1 tokens + k draft steps) / E, each part from Pass().
  const double mid = static_cast<double>(d.input) + static_cast<double>(d.output) / 2;
  const double verify = est.Pass(d, IterationShape::Prefill(1, 5, mid)).total;
  const double draft = est.DraftPass(d, IterationShape::Decode(1, mid)).total;
  EXPECT_NEAR(spec.tpot_s, (verify + 4 * draft) / 3.3616, 1e-12);
  EXPECT_LT(spec.tpot_s, base.tpot_s);  // a = 0.8 pays at batch 1
  EXPECT_GT(draft, 0.05 * base.tpot_s);  // and the 7B draft is not free
  // At a = 0 every step yields one token: speculation only costs.
  InferenceDeployment bad = d;
  bad.acceptance = 0;
  EXPECT_GT(est.Run(bad).tpot_s, base.tpot_s);
  std::cout << "[ measured ] 70B TP8 batch 1: TPOT " << base.tpot_s * 1e3 << " ms plain, "
            << spec.tpot_s * 1e3 << " ms speculative (k 4, a 0.8, 7B draft)\n";
}

// --- serving simulation ----------------------------------------------------------

struct Served {
  models::ModelSpec model = Model("llama2-7b");
  hardware::SystemSpec system = H100Node();
  InferenceEstimator est{model, system};
  InferenceDeployment d = [] {
    InferenceDeployment x = Bf16(1);
    x.input = 512;
    x.output = 64;
    x.max_batch = 32;
    x.requests = 100;
    return x;
  }();
};

// Issue 18: a deployment with more devices than tp x pp serves independent
// replicas. llama2-70b-h100-infer is one DGX H100 (8 devices) at tp 4: two
// replicas, requests dealt round robin in arrival order; each replica's
// outcomes are exactly a lone replica's on its half of the stream.
TEST(Serving, ReplicasShareTheStreamRoundRobin) {
  Scenario s = LoadScenario("llama2-70b-h100-infer");
  const InferenceDeployment& d = *s.inference;
  const InferenceEstimator est(s.model, s.system);
  ASSERT_EQ(ServingReplicas(s.system, d), 2);  // 8 devices / (tp 4 x pp 1)
  const std::vector<Request> all = PoissonRequests(d, 4.0);
  const ServingResult both = SimulateService(est, d, all);
  ASSERT_TRUE(both.feasible) << both.reason;
  ASSERT_EQ(both.requests.size(), all.size());
  std::vector<Request> even;
  for (size_t i = 0; i < all.size(); i += 2) even.push_back(all[i]);  // arrivals are in order
  const ServingResult one = SimulateServing(est, d, even);
  ASSERT_TRUE(one.feasible) << one.reason;
  // SimulateReplicas lists replica 0's outcomes first.
  for (size_t i = 0; i < one.requests.size(); ++i) {
    EXPECT_EQ(both.requests[i].arrival_s, one.requests[i].arrival_s);
    EXPECT_EQ(both.requests[i].finish_s, one.requests[i].finish_s);
  }

  // Capacity: each replica sees every other arrival of a Poisson stream, an
  // Erlang-2 stream at half the rate, more regular than Poisson (squared
  // coefficient of variation 1/2 instead of 1), so by Kingman's formula it
  // queues less than a lone replica at half the rate: two replicas sustain
  // at least twice one replica's rate (within the 0.5 % bisection).
  Scenario half = s;
  half.system.devices_per_node = 4;  // one replica
  InferenceDeployment m = d;
  m.rate_seeds = 2;
  m.requests = 200;
  const InferenceEstimator est_half(half.model, half.system);
  ASSERT_EQ(ServingReplicas(half.system, m), 1);
  const RateSearch r1 = MaxRateMeetingSlo(est_half, m);
  const RateSearch r2 = MaxRateMeetingSlo(est, m);
  ASSERT_TRUE(r1.found) << r1.reason;
  ASSERT_TRUE(r2.found) << r2.reason;
  EXPECT_GE(r2.max_rate, 1.98 * r1.max_rate) << r1.max_rate << " vs " << r2.max_rate;
}

// Issue 7 acceptance: at low load every request finds the replica idle, so
// its TTFT is the static prefill of one prompt.
TEST(Serving, TtftAtLowLoadIsTheStaticPrefill) {
  Served s;
  const double prefill = s.est.Pass(s.d, IterationShape::Prefill(1, 512)).total;
  for (auto sched : {parallelism::Scheduler::kContinuous, parallelism::Scheduler::kChunked,
                     parallelism::Scheduler::kStatic}) {
    s.d.scheduler = sched;
    const ServingResult r = SimulateServing(s.est, s.d, PoissonRequests(s.d, 0.01));
    ASSERT_TRUE(r.feasible) << r.reason;
    EXPECT_NEAR(r.ttft_s.p50 / prefill, 1.0, 1e-9);
    EXPECT_NEAR(r.ttft_s.p99 / prefill, 1.0, 1e-9);
    // ... and every token after it is a batch-1 decode step.
    const double step = s.est.Pass(s.d, IterationShape::Decode(1, 512 + 32)).total;
    EXPECT_NEAR(r.tpot_s.p50 / step, 1.0, 0.01);
  }
}

// Chunked prefill at low load: a 512-token prompt with a 128-token budget
// is four passes of 128 new tokens after 0, 128, 256 and 384 cached ones.
TEST(Serving, ChunkedPrefillTtftIsTheSumOfItsChunks) {
  Served s;
  s.d.scheduler = parallelism::Scheduler::kChunked;
  s.d.max_batch_tokens = 128;
  double chunks = 0;
  for (double cached : {0.0, 128.0, 256.0, 384.0})
    chunks += s.est.Pass(s.d, IterationShape::Prefill(1, 128, cached)).total;
  const ServingResult r = SimulateServing(s.est, s.d, PoissonRequests(s.d, 0.01));
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_NEAR(r.ttft_s.p50 / chunks, 1.0, 1e-9);
  EXPECT_GT(chunks, s.est.Pass(s.d, IterationShape::Prefill(1, 512)).total);
}

// Speculative decoding in the stream: at low load a request's TPOT is the
// static estimate's (verify + k draft steps) / E, E = 3.3616 for k 4, a 0.8.
TEST(Serving, SpeculativeDecodingAtLowLoadMatchesTheStaticEstimate) {
  Served s;
  s.d.output = 257;
  s.d.speculate = 4;
  s.d.acceptance = 0.8;
  s.d.draft_cost = 0.1;
  s.d.requests = 20;
  const ServingResult r = SimulateServing(s.est, s.d, PoissonRequests(s.d, 0.01));
  ASSERT_TRUE(r.feasible) << r.reason;
  InferenceDeployment one = s.d;
  one.batch = 1;
  const double tpot = s.est.Run(one).tpot_s;
  EXPECT_NEAR(r.tpot_s.p50 / tpot, 1.0, 0.03);
  one.speculate = 0;
  EXPECT_LT(r.tpot_s.p50, 0.5 * s.est.Run(one).tpot_s);
}

// Issue 7 acceptance: past capacity the queue grows without bound, and so
// does TTFT: doubling the requests doubles the last one's wait. Below
// capacity it stays put.
TEST(Serving, TtftGrowsWithoutBoundPastCapacity) {
  Served s;
  // Capacity: every request at once; the completion rate is what the
  // replica sustains.
  const ServingResult burst = SimulateServing(s.est, s.d, PoissonRequests(s.d, 1e9));
  const double capacity = burst.requests_per_s;
  ASSERT_GT(capacity, 0);
  auto last_ttft = [&](double rate, int64_t n) {
    s.d.requests = n;
    const ServingResult r = SimulateServing(s.est, s.d, PoissonRequests(s.d, rate));
    return r.requests.back().ttft();
  };
  const double over = last_ttft(2 * capacity, 400) / last_ttft(2 * capacity, 200);
  EXPECT_GT(over, 1.7);
  const double under = last_ttft(0.3 * capacity, 400) / last_ttft(0.3 * capacity, 200);
  EXPECT_LT(under, 1.5);
  std::cout << "[ measured ] capacity " << capacity << " req/s; last TTFT ratio 400/200 requests: "
            << over << " at 2x capacity, " << under << " at 0.3x\n";
}

// 60 requests of 512 + 512 tokens at once on 20 GB of an H100 (13.5 GB of
// Llama 2 7B's weights leave ~12k tokens of KV): the pool runs short.
void ShortOfKv(InferenceDeployment& d) {
  d.memory_fraction = 0.25;
  d.max_batch = 256;
  d.requests = 60;
  d.output = 512;
}

TEST(Serving, PagedKvPreemptsWhenBlocksRunOut) {
  Served s;
  ShortOfKv(s.d);
  const ServingResult r = SimulateServing(s.est, s.d, PoissonRequests(s.d, 1e9));
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_GT(r.preemptions, 0);
  for (const auto& q : r.requests) EXPECT_GT(q.finish_s, q.first_token_s);
  // Without paging nothing is preempted; requests wait for reserved space.
  s.d.paged_kv = false;
  const ServingResult reserved = SimulateServing(s.est, s.d, PoissonRequests(s.d, 1e9));
  EXPECT_EQ(reserved.preemptions, 0);
  EXPECT_LT(reserved.peak_running, r.peak_running);
}

TEST(Serving, MaxRateMeetsTheSloAndTheNextStepDoesNot) {
  Served s;
  s.d.requests = 80;
  s.d.slo_ttft = 0.2;
  s.d.slo_tpot = 0.02;
  // One device, one replica (on the 8-GPU node tp 1 serves 8 replicas and 80
  // requests never load them).
  s.system.devices_per_node = 1;
  const InferenceEstimator est(s.model, s.system);
  const RateSearch m = MaxRateMeetingSlo(est, s.d);
  ASSERT_TRUE(m.found) << m.reason;
  EXPECT_GE(m.at_max.slo_attainment, s.d.slo_attainment);
  const ServingResult above = SimulateServing(est, s.d, PoissonRequests(s.d, 1.5 * m.max_rate));
  EXPECT_LT(above.slo_attainment, s.d.slo_attainment);
}

TEST(Serving, TraceErrorsNameFileAndLine) {
  const std::string file = ::testing::TempDir() + "/trace.csv";
  std::ofstream(file) << "arrival_s,input,output\n0,128,16\n0.5,abc,16\n";
  base::Diagnostics d;
  EXPECT_FALSE(LoadTrace(file, d).has_value());
  EXPECT_NE(d.ToString().find(file + ":3:"), std::string::npos) << d.ToString();
  std::ofstream(file) << "arrival_s,input,output\n0,128,16\n0.5,256,8\n";
  base::Diagnostics ok;
  const auto t = LoadTrace(file, ok);
  ASSERT_TRUE(t.has_value()) << ok.ToString();
  EXPECT_EQ(t->size(), 2u);
}

// --- scenarios and the command line ------------------------------------------------

struct VerbResult {
  int code;
  std::string out, err;
};
VerbResult Infer(cli::Args args) {
  setenv("ORRERY_CONFIG_DIR", kConfigs.c_str(), 1);
  std::ostringstream out, err;
  const int code = cli::RunInfer(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(Cli, StaticJsonAndExitCodes) {
  const VerbResult r = Infer({"llama2-70b-h100-infer", "--batch", "8", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["workload"]["batch"], 8);
  EXPECT_GT(j["ttft_s"].get<double>(), 0);
  EXPECT_EQ(Infer({"--help"}).code, 0);
  EXPECT_NE(Infer({"--help"}).out.find("Examples:"), std::string::npos);
  EXPECT_EQ(Infer({"llama2-70b-h100-infer", "--bogus"}).code, 2);
  EXPECT_EQ(Infer({"llama2-70b-h100-infer", "--format", "xml"}).code, 2);
  const VerbResult bad = Infer({"llama2-70b-h100-infer", "--set", "inference.kv_cache=fp9"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("inference.kv_cache"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("did you mean 'fp8'"), std::string::npos) << bad.err;
  const VerbResult tp = Infer({"llama2-70b-h100-infer", "--set", "inference.tp=16"});
  EXPECT_EQ(tp.code, 1);
  EXPECT_NE(tp.err.find("exceeds the system's 8 devices"), std::string::npos) << tp.err;
}

TEST(Cli, ServeAndMaxRateModes) {
  const VerbResult r = Infer({"llama2-70b-h100-infer", "--serve", "--requests", "40"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("TTFT"), std::string::npos) << r.out;
  // The percentile header stands over its columns: "mean" ends in column 20,
  // where the first value (right-aligned after the 8-wide label) ends; it had
  // ended six columns to the left.
  const size_t head = r.out.find("mean");
  const size_t row = r.out.find("  TTFT");
  ASSERT_NE(head, std::string::npos);
  ASSERT_NE(row, std::string::npos);
  EXPECT_EQ(head + 4 - (r.out.rfind('\n', head) + 1), 20u) << r.out;
  EXPECT_EQ(r.out[row + 19], 's') << r.out;  // "ms" or "s" of the mean TTFT
  EXPECT_EQ(r.out[row + 20], ' ') << r.out;
  const VerbResult csv =
      Infer({"llama2-70b-h100-infer", "--serve", "--requests", "40", "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find("result.ttft_s.p99"), std::string::npos) << csv.out;
  EXPECT_EQ(Infer({"llama2-70b-h100-infer", "--serve", "--max-rate"}).code, 2);
}

// Issue 18: disaggregated serving from the command line. Llama 2 70B with
// an FP8 KV cache and fixed 2,048-token prompts sends 80 layers x 2 x 8 KV
// heads x 128 x 1 B = 163,840 B per token, x 2,048 = 335,544,320 B per
// request from the prefill pool to the decode pool.
TEST(Cli, DisaggregatedServeAndBestSplit) {
  const VerbResult r = Infer({"llama2-70b-h100-infer", "--serve", "--disagg", "--requests", "40",
                              "--set", "inference.lengths=fixed", "--set",
                              "inference.prefill_tp=2", "--set", "inference.prefill_replicas=2",
                              "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["disaggregated"]["kv_bytes_per_request"].get<double>(), 335544320.0);
  EXPECT_EQ(j["disaggregated"]["devices"], 8);  // 2 x tp2 prefill + 1 x tp4 decode
  EXPECT_EQ(j["disaggregated"]["kv_tier"], "nvlink");
  EXPECT_EQ(j["result"]["requests"], 40);
  const VerbResult text = Infer({"llama2-70b-h100-infer", "--serve", "--disagg", "--requests", "40"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("KV handoff"), std::string::npos) << text.out;
  // --disagg is a serving option; --max-rate searches colocated layouts only.
  EXPECT_EQ(Infer({"llama2-70b-h100-infer", "--disagg"}).code, 2);
  EXPECT_EQ(Infer({"llama2-70b-h100-infer", "--serve", "--best-split"}).code, 2);
  const VerbResult mr = Infer({"llama2-70b-h100-infer", "--max-rate", "--set",
                               "inference.disaggregate=true"});
  EXPECT_NE(mr.code, 0);
  EXPECT_NE(mr.out.find("--best-split"), std::string::npos) << mr.out;
  const VerbResult split = Infer({"llama2-70b-h100-infer", "--best-split", "--requests", "60",
                                  "--format", "json"});
  ASSERT_EQ(split.code, 0) << split.err;
  const auto sj = nlohmann::json::parse(split.out);
  EXPECT_EQ(sj["mode"], "split");
  EXPECT_EQ(sj["gpus"], 8);
  ASSERT_GT(sj["candidates"].size(), 1u);
  EXPECT_LE(sj["candidates"][0]["devices"].get<int>(), 8);
}

// Issue 18: a masked-MHA decode kernel (one thread block per sequence and
// query head, TensorRT-LLM before XQA) loads a GQA cache once per query head.
// Llama 2 70B at TP 4 in fp8: 64 / 4 = 16 query heads and 8 / 4 = 2 KV heads
// per device, a group of 8. One sequence decoding after 4,095 cached tokens
// reads 4,096 tokens x 2 heads x 2 (K, V) x 128 x 1 B = 2,097,152 B per layer
// and device; x 80 layers x 4 devices = 671,088,640 B shared, 8 x that =
// 5,368,709,120 B per query head. Llama 2 7B (MHA) reads the same either way.
TEST(Pass, GqaCacheReadPerQueryHeadWithoutSharedKv) {
  const auto sys = H100Node();
  const auto m70 = Model("llama2-70b");
  const InferenceEstimator e70(m70, sys);
  InferenceDeployment d = Bf16(4);
  d.weights = d.activations = d.kv_cache = DataType::kFp8;
  const IterationShape one = IterationShape::Decode(1, 4095);
  const PassTime shared = e70.Pass(d, one);
  EXPECT_DOUBLE_EQ(shared.kv_bytes, 671088640.0);
  d.gqa_shared_kv = false;
  const PassTime per_head = e70.Pass(d, one);
  EXPECT_DOUBLE_EQ(per_head.kv_bytes, 5368709120.0);
  EXPECT_GT(per_head.attention, shared.attention);
  EXPECT_EQ(per_head.gemm, shared.gemm);  // only attention changes
  // Prefill (the fused context kernel) is not affected.
  EXPECT_EQ(e70.Pass(d, IterationShape::Prefill(1, 512)).total,
            [&] {
              InferenceDeployment s = d;
              s.gqa_shared_kv = true;
              return e70.Pass(s, IterationShape::Prefill(1, 512)).total;
            }());
  const auto m7 = Model("llama2-7b");
  const InferenceEstimator e7(m7, sys);
  InferenceDeployment d7 = Bf16(1);
  const double mha = e7.Pass(d7, one).kv_bytes;
  d7.gqa_shared_kv = false;
  EXPECT_EQ(e7.Pass(d7, one).kv_bytes, mha);
}

// Local layers in the cache (models::KvHeldTokens, LocalKeys,
// LocalKeysSum): a sliding-window layer keeps the last w tokens, a chunked
// layer its current chunk (vLLM's hybrid KV cache manager).
//   Gemma 3 27B (w 1024 on 52 of 62 layers) at 32,768 tokens holds
//     (10 x 32768 + 52 x 1024) / 62 = 380,928 / 62 = 6,144 tokens of every
//     layer's cache; at 512 tokens all 512.
//   A window of 4 over positions 1..10 attends 1, 2, 3, 4, 4, ..., 4: 34
//     keys; chunks of 4: 1, 2, 3, 4, 1, 2, 3, 4, 1, 2: 23; position 8193 of
//     an 8192-token chunk attends 1 key, 20,000 attends 20000 - 16384 = 3616.
TEST(KvCache, LocalLayersHoldTheirWindowOrChunk) {
  const auto gemma = Model("gemma3-27b");
  EXPECT_DOUBLE_EQ(models::KvHeldTokens(gemma, 32768), 6144.0);
  EXPECT_DOUBLE_EQ(models::KvHeldTokens(gemma, 512), 512.0);
  EXPECT_DOUBLE_EQ(models::KvHeldTokens(Model("llama3-8b"), 32768), 32768.0);
  models::ModelSpec m = Model("llama3-8b");
  EXPECT_DOUBLE_EQ(models::LocalKeysSum(m, 10), 55.0);
  m.sliding_window = 4;
  m.sliding_window_layers = 32;
  EXPECT_DOUBLE_EQ(models::LocalKeysSum(m, 10), 34.0);
  EXPECT_DOUBLE_EQ(models::LocalKeys(m, 3), 3.0);
  EXPECT_DOUBLE_EQ(models::LocalKeys(m, 9), 4.0);
  m.sliding_window = 0;
  m.sliding_window_layers = 0;
  m.attention_chunk = 4;
  m.attention_chunk_layers = 24;
  EXPECT_DOUBLE_EQ(models::LocalKeysSum(m, 10), 23.0);
  EXPECT_DOUBLE_EQ(models::KvHeldTokens(m, 10), 0.25 * 10 + 0.75 * 4);
  m.attention_chunk = 8192;
  EXPECT_DOUBLE_EQ(models::LocalKeys(m, 8192), 8192.0);
  EXPECT_DOUBLE_EQ(models::LocalKeys(m, 8193), 1.0);
  EXPECT_DOUBLE_EQ(models::LocalKeys(m, 20000), 3616.0);
}

// Gemma 3 27B on one DGX H100 at tp 8, batch 4, 31,744 tokens in and 1,024
// out (32,768 a sequence), against the same shape without its windows:
// - the cache: 2 x 62 layers x 2 KV heads a device x 128 x 2 B = 63,488 B a
//   token and device; 4 x 6,144 x 63,488 = 1,560,281,088 B held where every
//   layer's whole context would be 4 x 32,768 x 63,488 = 8,321,499,136 B;
// - a decode step reads a layer's mean keys: every step is past the window,
//   so (10 x 32,256 + 52 x 1,024) / 62 = 375,808 / 62 where 32,256 (the mean
//   context in + out / 2) were read, the KV bytes in the ratio of the keys
//   plus the new token's;
// - a prefill's local pairs: 1024 x 1025 / 2 + (31,744 - 1024) x 1024 =
//   31,982,080; a chunk of 100 after 2,000 cached: 100 x 1024 pairs, reading
//   1024 + 100 keys;
// - the longest context at this batch: the tokens held, grown past the
//   window at 10/62 a token: 1024 + (held - 1024) x 62 / 10.
// Every layer windowed (Mistral 7B v0.1's 4096 on all 32): no memory limit.
TEST(Estimator, LocalLayersCacheAndReadTheirWindow) {
  const auto sys = H100Node();
  const auto gemma = Model("gemma3-27b");
  models::ModelSpec full = gemma;
  full.sliding_window = 0;
  full.sliding_window_layers = 0;
  InferenceDeployment d = Bf16(8);
  d.batch = 4;
  d.input = 31744;
  d.output = 1024;
  const InferenceEstimate local = InferenceEstimator(gemma, sys).Run(d);
  const InferenceEstimate whole = InferenceEstimator(full, sys).Run(d);
  EXPECT_DOUBLE_EQ(models::KvBytesPerTokenPerDevice(gemma, 2, 8, 1), 63488.0);
  EXPECT_DOUBLE_EQ(local.memory.kv_cache, 1560281088.0);
  EXPECT_DOUBLE_EQ(whole.memory.kv_cache, 8321499136.0);
  EXPECT_NEAR(local.decode.kv_bytes / whole.decode.kv_bytes, (375808.0 / 62 + 1) / (32256.0 + 1), 1e-12);
  EXPECT_LT(local.decode.attention, whole.decode.attention);
  EXPECT_EQ(local.decode.gemm, whole.decode.gemm);
  const IterationShape prompt = IterationShape::Prefill(1, 31744, 0, &gemma);
  EXPECT_DOUBLE_EQ(prompt.prefill_pairs_local, 31982080.0);
  EXPECT_DOUBLE_EQ(prompt.prefill_pairs, 31744.0 * 31745 / 2);
  const IterationShape chunk = IterationShape::Prefill(1, 100, 2000, &gemma);
  EXPECT_DOUBLE_EQ(chunk.prefill_pairs_local, 102400.0);
  EXPECT_DOUBLE_EQ(chunk.prefill_context_local, 1124.0);
  EXPECT_DOUBLE_EQ(IterationShape::Prefill(1, 100, 2000).prefill_pairs_local, 100.0 * 2000 + 5050);
  EXPECT_LT(local.prefill.attention, whole.prefill.attention);
  ASSERT_GT(whole.max_context, 1024);
  EXPECT_NEAR(static_cast<double>(local.max_context), 1024 + (whole.max_context - 1024) * 6.2, 7.0);
  models::ModelSpec mistral = Model("llama3-8b");
  mistral.sliding_window = 4096;
  mistral.sliding_window_layers = 32;
  EXPECT_EQ(InferenceEstimator(mistral, sys).Run(Bf16(1)).max_context, -1);
}

// The serving simulator allocates a sequence's blocks for the tokens it
// holds: Llama 2 7B with a 256-token window on half its layers holds
// 0.5 x 1024 + 0.5 x 256 = 640 tokens a request of 512 + 512, so the same
// pool (the capacity in tokens of every layer's cache is unchanged) runs
// more requests at once; a request longer than the pool in tokens but not
// in held tokens is served.
TEST(Serving, LocalLayersAdmitMoreRequests) {
  Served s;
  ShortOfKv(s.d);
  const ServingResult whole = SimulateServing(s.est, s.d, PoissonRequests(s.d, 1e9));
  ASSERT_TRUE(whole.feasible) << whole.reason;
  models::ModelSpec windowed = s.model;
  windowed.sliding_window = 256;
  windowed.sliding_window_layers = 16;
  EXPECT_DOUBLE_EQ(models::KvHeldTokens(windowed, 1024), 640.0);
  const InferenceEstimator est(windowed, s.system);
  const ServingResult local = SimulateServing(est, s.d, PoissonRequests(s.d, 1e9));
  ASSERT_TRUE(local.feasible) << local.reason;
  EXPECT_DOUBLE_EQ(local.kv_capacity_tokens, whole.kv_capacity_tokens);
  EXPECT_GT(local.peak_running, whole.peak_running);
  EXPECT_LT(local.preemptions, whole.preemptions);
  // A prompt of 1.5x the pool: too long with every layer's cache, and held
  // as 0.75 x the pool + 128 with the window.
  InferenceDeployment big = s.d;
  big.requests = 1;
  big.input = static_cast<int64_t>(1.5 * whole.kv_capacity_tokens);
  big.output = 1;
  EXPECT_FALSE(SimulateServing(s.est, big, PoissonRequests(big, 1.0)).feasible);
  EXPECT_TRUE(SimulateServing(est, big, PoissonRequests(big, 1.0)).feasible);
}

// Issue 18: the max-rate answer is printed at the digits it was checked at.
TEST(Serving, RateFloorsToThreeDigitsAndStudentT) {
  // 15.3912 -> 153 hundred-thousandths... three digits: 15.3, read back as
  // the same double a parser gives for "15.3".
  EXPECT_EQ(FloorToThreeDigits(15.3912), std::strtod("15.3", nullptr));
  EXPECT_EQ(FloorToThreeDigits(1234.5), 1230.0);
  EXPECT_EQ(FloorToThreeDigits(0.0123456), std::strtod("0.0123", nullptr));
  EXPECT_EQ(FloorToThreeDigits(15.3), std::strtod("15.3", nullptr));  // already three digits
  // Fisher and Yates Table III, P = 0.05 two-sided: df 2 -> 4.303, df 4 ->
  // 2.776, df 30 -> 2.042; beyond, the normal 1.960.
  EXPECT_DOUBLE_EQ(StudentT975(2), 4.303);
  EXPECT_DOUBLE_EQ(StudentT975(4), 2.776);
  EXPECT_DOUBLE_EQ(StudentT975(30), 2.042);
  EXPECT_DOUBLE_EQ(StudentT975(200), 1.960);
  EXPECT_EQ(StudentT975(0), 0.0);
}

// Issue 18: `infer --max-rate` prints a rate that passes its own check:
// `--serve --rate R` meets the SLO at the printed R on every seed it was
// searched over, and R lies at or below both the lower end of the 95 %
// interval and the smallest per-seed capacity.
TEST(Cli, MaxRatePassesItsOwnServeCheck) {
  const cli::Args common = {"llama2-70b-h100-infer", "--requests", "120"};
  cli::Args max_rate = common;
  for (const char* a : {"--max-rate", "--format", "json"}) max_rate.push_back(a);
  const VerbResult r = Infer(max_rate);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["found"].get<bool>()) << r.out;
  const double rate = j["max_rate_requests_per_s"].get<double>();
  const auto seeds = j["seed_rates_requests_per_s"].get<std::vector<double>>();
  ASSERT_EQ(seeds.size(), 5u);  // inference.rate_seeds default
  // The interval by hand from the per-seed rates: mean +- 2.776 sd / sqrt(5).
  double mean = 0;
  for (double x : seeds) mean += x / 5;
  double ss = 0;
  for (double x : seeds) ss += (x - mean) * (x - mean);
  const double half = 2.776 * std::sqrt(ss / 4) / std::sqrt(5.0);
  EXPECT_NEAR(j["ci95_requests_per_s"][0].get<double>(), mean - half, 1e-9 * mean);
  EXPECT_NEAR(j["ci95_requests_per_s"][1].get<double>(), mean + half, 1e-9 * mean);
  EXPECT_LE(rate, mean - half);
  for (double x : seeds) EXPECT_LE(rate, x);
  // The text prints that rate in a form --rate reads back to the same double.
  const VerbResult text = Infer(cli::Args{"llama2-70b-h100-infer", "--requests", "120", "--max-rate"});
  ASSERT_EQ(text.code, 0) << text.err;
  const std::string head = "highest rate meeting the SLO: ";
  const size_t at = text.out.find(head);
  ASSERT_NE(at, std::string::npos) << text.out;
  const std::string printed = text.out.substr(at + head.size(), text.out.find(' ', at + head.size()) - at - head.size());
  EXPECT_EQ(std::strtod(printed.c_str(), nullptr), rate) << printed;
  for (int seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(seed);
    cli::Args serve = common;
    for (const std::string& a : {std::string("--serve"), std::string("--rate"), printed,
                                 std::string("--set"), "inference.seed=" + std::to_string(seed),
                                 std::string("--format"), std::string("json")})
      serve.push_back(a);
    const VerbResult s = Infer(serve);
    ASSERT_EQ(s.code, 0) << s.err;
    const auto sj = nlohmann::json::parse(s.out);
    EXPECT_GE(sj["result"]["slo_attainment"].get<double>(), 0.9) << s.out;
  }
}

// Issue 18: model.max_seq is enforced. A model with an 8 K context (a
// Llama-3-8B config.json, max_position_embeddings 8192) refuses a 32 K
// prompt with the key, the value and the rule; 8064 + 128 = 8192 tokens fit.
TEST(Cli, ModelContextWindowRefusesLongerPrompt) {
  const std::string file = ::testing::TempDir() + "/llama3_8b_config.json";
  std::ofstream(file) << R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
    "vocab_size": 128256, "max_position_embeddings": 8192, "hidden_act": "silu"})";
  const VerbResult over = Infer({"llama2-70b-h100-infer", "--model-config", file, "--input",
                                 "32768", "--output", "128"});
  EXPECT_EQ(over.code, 1) << over.out;
  EXPECT_NE(over.err.find("inference.input"), std::string::npos) << over.err;
  EXPECT_NE(over.err.find("32768 + 128 = 32896 tokens"), std::string::npos) << over.err;
  EXPECT_NE(over.err.find("model.max_seq 8192"), std::string::npos) << over.err;
  const VerbResult fits = Infer({"llama2-70b-h100-infer", "--model-config", file, "--input",
                                 "8064", "--output", "128"});
  EXPECT_EQ(fits.code, 0) << fits.err;
}

TEST(Scenario, InferenceOnlyFileNeedsNoTraining) {
  base::Diagnostics d;
  const std::string file = kConfigs + "/scenarios/llama2-70b-h100-infer.yaml";
  EXPECT_TRUE(CheckFile(file, PresetStore(kConfigs), d).has_value()) << d.ToString();
  const Scenario s = LoadScenario("llama2-70b-h100-infer");
  EXPECT_FALSE(s.has_training);
  setenv("ORRERY_CONFIG_DIR", kConfigs.c_str(), 1);
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunEstimate({"llama2-70b-h100-infer"}, out, err), 1);
  EXPECT_NE(err.str().find("no training section"), std::string::npos) << err.str();
  // --set inference.* on a training scenario adds the section.
  Scenario t = LoadScenario("gpt3-175b-a100");
  base::Diagnostics o;
  EXPECT_TRUE(ApplyOverride(t, "inference.tp=8", o)) << o.ToString();
  ASSERT_TRUE(t.inference.has_value());
  EXPECT_EQ(t.inference->tp, 8);
  EXPECT_TRUE(t.has_training);
}

TEST(Scenario, InferenceKeyErrorsNameFileLineAndSuggestion) {
  const std::string file = ::testing::TempDir() + "/bad_infer.yaml";
  std::ofstream(file) << "scenario:\n  model: llama2-7b\n  system: dgx-h100-superpod\n"
                         "  inference:\n    tp: 2\n    kv_cahce: fp8\n    weights: fp2\n";
  base::Diagnostics d;
  EXPECT_FALSE(LoadScenarioFile(file, PresetStore(kConfigs), d).has_value());
  const std::string text = d.ToString();
  EXPECT_NE(text.find(file + ":6:5: error: scenario.inference.kv_cahce: unknown key in inference; "
                             "did you mean 'kv_cache'?"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(file + ":7:14: error: scenario.inference.weights"), std::string::npos)
      << text;
  EXPECT_NE(text.find("one of: bf16, fp16, fp8, int8, int4, fp4, mxfp4"), std::string::npos) << text;
}

// --- validation against measured inference runs --------------------------------------

ValidationReport Validate() {
  base::Diagnostics d;
  ValidationReport r = ValidateInferenceCsv(kRuns, PresetStore(kConfigs), d);
  EXPECT_TRUE(d.ok()) << d.ToString();
  return r;
}

bool StaticTrtLlm(const ValidationRow& row) {
  return row.source.find("TensorRT-LLM") != std::string::npos &&
         row.metric.rfind("output_tok_per_s", 0) == 0;
}

// A row decoded by a masked-MHA kernel over a GQA cache (TensorRT-LLM before
// XQA, or v0.8-v0.9 where XQA was not run): the harness prices its cache
// read once per query head (its assumption says so). The same kernel's
// query heads of one KV group run as neighbouring thread blocks, so most of
// those reads hit L2, which is not modelled: these rows' error is the size
// of that missing term and is held apart (validation/README.md, "The
// masked-MHA rows").
constexpr const char* kPerQueryHeadReads = "reads the KV cache once per query head";
// The first line of validation/inference_runs.csv added after the bounds
// below were set (issue 15 appended the TensorRT-LLM pages' other rows).
constexpr int kFirstLineAddedForIssue15 = 284;
bool PerQueryHeadReads(const ValidationRow& row) {
  return row.assumptions.find(kPerQueryHeadReads) != std::string::npos;
}

// Mean absolute error of `orrery validate --format json` rows that were
// predicted, less the masked-MHA GQA rows; infinity when none is.
double ModelledMapeOf(const nlohmann::json& rows) {
  double sum = 0;
  int n = 0;
  for (const auto& row : rows)
    if (row["skipped"].is_null() &&
        row["assumptions"].get<std::string>().find(kPerQueryHeadReads) == std::string::npos) {
      sum += std::abs(row["error_pct"].get<double>());
      ++n;
    }
  return n > 0 ? sum / n : std::numeric_limits<double>::infinity();
}

// Issue 7 acceptance: TensorRT-LLM static-batch throughput rows within 20 %
// mean absolute error; every covered inference row within 25 %. Issue 18's
// target for the static throughput is 10 %: held (9 %) on the rows whose
// decode kernel reads each KV head's cache once (XQA or MHA), 72 figures
// at 5.54 %; the masked-MHA GQA rows (49 figures, 20.95 %: Mistral 7B,
// Mixtral 8x7B and Falcon-180B without XQA, Llama 2 70B before v0.8) within
// issue 7's 25 %.
TEST(Validation, TensorRtLlmStaticBatchRows) {
  ValidationReport all = Validate();
  ValidationReport trt, masked;
  for (const auto& row : all.rows)
    if (row.error_pct && StaticTrtLlm(row)) (PerQueryHeadReads(row) ? masked : trt).rows.push_back(row);
  Summarise(trt);
  Summarise(masked);
  EXPECT_GE(trt.evaluated, 70);
  EXPECT_LE(trt.mape_pct, 9.0);
  EXPECT_GE(masked.evaluated, 40);
  EXPECT_LE(masked.mape_pct, 25.0);
  // The 43 figures the 9 % was set on, whatever their kernel: 8.88 %.
  ValidationReport before;
  for (const auto& row : all.rows)
    if (row.error_pct && StaticTrtLlm(row) && row.line < kFirstLineAddedForIssue15) before.rows.push_back(row);
  Summarise(before);
  EXPECT_EQ(before.evaluated, 43);
  EXPECT_LE(before.mape_pct, 9.0);
  std::cout << "[ measured ] TensorRT-LLM static-batch throughput: MAPE " << trt.mape_pct
            << " %, max " << trt.max_abs_error_pct << " %, " << trt.evaluated
            << " rows; masked-MHA GQA rows " << masked.mape_pct << " %, " << masked.evaluated
            << " rows\n";
  // With the batch-1 first-token latencies of the same static runs.
  ValidationReport with_ttft;
  for (const auto& row : all.rows)
    if (row.error_pct && row.source.find("TensorRT-LLM") != std::string::npos && !PerQueryHeadReads(row))
      with_ttft.rows.push_back(row);
  Summarise(with_ttft);
  EXPECT_LE(with_ttft.mape_pct, 9.0);  // 8.38 % over 325 figures
  std::cout << "[ measured ] TensorRT-LLM static runs, throughput and TTFT: MAPE "
            << with_ttft.mape_pct << " %, " << with_ttft.evaluated << " figures\n";
}

TEST(Validation, ValidateVerbReadsInferenceFiles) {
  setenv("ORRERY_CONFIG_DIR", kConfigs.c_str(), 1);
  std::ostringstream out, err;
  ASSERT_EQ(cli::RunValidate({kRuns, "--format", "json"}, out, err), 0) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_GE(j["evaluated"].get<int>(), 100);
  // The file less the masked-MHA GQA rows (TensorRtLlmStaticBatchRows):
  // 10.93 % over 445 figures (the whole file 12.35 % over 520).
  EXPECT_LE(ModelledMapeOf(j["rows"]), 12.0);
  // Issue 18: at most a tenth of the file skipped, each skip with its reason
  // (since the NeMo rows left the file none is).
  int skipped = 0;
  for (const auto& row : j["rows"])
    if (!row["skipped"].is_null()) {
      ++skipped;
      EXPECT_FALSE(row["skipped"].get<std::string>().empty()) << row.dump();
    }
  EXPECT_LE(10 * skipped, static_cast<int>(j["rows"].size()));
}

// The sanitizer pass's size of the three whole-file tests above and below
// (scripts/test.sh --sanitize leaves those out: under ASan each takes about
// seven minutes). Every tenth measured run, of every source and kind (static,
// max-load), through the same verb; the same tolerance.
TEST(Validation, EveryTenthInferenceRowThroughTheVerb) {
  std::ifstream in(kRuns);
  ASSERT_TRUE(in) << kRuns;
  const std::string sample = ::testing::TempDir() + "/inference_runs_every_tenth.csv";
  std::ofstream out_csv(sample);
  std::string line;
  int n = 0, kept = 0;
  while (std::getline(in, line)) {
    if (n == 0 || n % 10 == 1) {
      out_csv << line << "\n";
      if (n > 0) ++kept;
    }
    ++n;
  }
  out_csv.close();
  ASSERT_GE(kept, 25);  // 400 rows: rows 1, 11, ..., 391 are 40
  setenv("ORRERY_CONFIG_DIR", kConfigs.c_str(), 1);
  std::ostringstream out, err;
  ASSERT_EQ(cli::RunValidate({sample, "--format", "json"}, out, err), 0) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  // A row holds one to three measured figures; every row is predicted or
  // skipped with its reason, none is lost.
  std::set<int> lines;
  for (const auto& row : j["rows"]) {
    lines.insert(row["line"].get<int>());
    if (row["skipped"].is_null()) {
      EXPECT_TRUE(std::isfinite(row["predicted"].get<double>())) << row.dump();
    } else {
      EXPECT_FALSE(row["skipped"].get<std::string>().empty()) << row.dump();
    }
  }
  EXPECT_EQ(static_cast<int>(lines.size()), kept);
  EXPECT_GE(j["evaluated"].get<int>(), 20);
  // Less the masked-MHA GQA rows (TensorRtLlmStaticBatchRows), as the whole file.
  EXPECT_LE(ModelledMapeOf(j["rows"]), 12.5);
}

// Issue 18: lmdeploy's TurboMind context-decodes a prompt's first input - 1
// tokens and samples the first output token in the decode step that takes
// the last one; a one-token prompt has no context decoding
// (InternLM/lmdeploy src/turbomind/models/llama/LlamaBatch.cc,
// LlamaBatch::contextDecode). Its rows' first-token latency is that sum,
// and another engine's the whole prefill.
// A temporary measured-inference CSV `name`: the columns of
// validation/inference_runs.csv, then `rows`.
std::string InferenceCsv(const std::string& name, const std::string& rows) {
  const std::string csv = ::testing::TempDir() + "/" + name;
  std::ofstream out(csv);
  out << "source,model,params_b,gpu,num_gpus,tp,pp,precision,batch,input_len,output_len,"
         "measured_ttft_ms,measured_tpot_ms,measured_tokens_per_s,requests,measured_e2e_ms,"
         "measured_requests_per_s,notes\n"
      << rows;
  return csv;
}

// One Selene node with the A100 80GB profile: the system the validation
// harness prices a one-GPU A100 80GB row on.
hardware::SystemSpec SeleneNodeOfA100_80Gb() {
  hardware::SystemSpec sys = test::System("selene", 1);
  sys.device = test::Device("a100-80gb");
  return sys;
}

TEST(Validation, TurboMindFirstTokenIsContextMinusOnePlusADecodeStep) {
  const std::string csv = InferenceCsv(
      "turbomind_rows.csv",
      "lmdeploy (TurboMind),Llama-2-7B,6.7,A100 80GB,1,1,1,FP16,16,128,128,129,,,,,,\n"
      "lmdeploy (TurboMind),Llama-2-7B,6.7,A100 80GB,1,1,1,FP16,16,1,128,21,,,,,,\n"
      "another engine,Llama-2-7B,6.7,A100 80GB,1,1,1,FP16,16,128,128,129,,,,,,\n");
  base::Diagnostics diags;
  const ValidationReport r = ValidateInferenceCsv(csv, PresetStore(kConfigs), diags);
  ASSERT_TRUE(diags.ok()) << diags.ToString();
  ASSERT_EQ(r.rows.size(), 3u);
  const hardware::SystemSpec sys = SeleneNodeOfA100_80Gb();
  const auto m = Model("llama2-7b");
  const InferenceEstimator est(m, sys);
  InferenceDeployment d = Bf16(1);
  d.weights = d.activations = d.kv_cache = DataType::kFp16;
  d.batch = 16;
  const double context = est.Pass(d, IterationShape::Prefill(16, 127)).total;
  const double step = est.Pass(d, IterationShape::Decode(16, 128)).total;
  EXPECT_NEAR(r.rows[0].predicted, (context + step) * 1e3, 1e-9);
  EXPECT_NEAR(r.rows[1].predicted, est.Pass(d, IterationShape::Decode(16, 1)).total * 1e3, 1e-9);
  EXPECT_NEAR(r.rows[2].predicted, est.Pass(d, IterationShape::Prefill(16, 128)).total * 1e3,
              1e-9);
}

// Issue 18: a measured row's INT4 weight-only precision word (INT4, W4A16,
// AWQ, GPTQ) is int4 weights with 16-bit GEMM inputs and KV cache, the
// deployment Pass.Int4WeightOnly* work by hand; an unknown word is a skip
// with its reason.
TEST(Validation, Int4WeightOnlyPrecisionWords) {
  const std::string csv =
      InferenceCsv("int4_rows.csv",
                   "some engine,Llama-2-7B,6.7,A100 80GB,1,1,1,AWQ,1,128,128,,5,,,,,\n"
                   "some engine,Llama-2-7B,6.7,A100 80GB,1,1,1,W4A16,1,128,128,,5,,,,,\n"
                   "some engine,Llama-2-7B,6.7,A100 80GB,1,1,1,INT3,1,128,128,,5,,,,,\n");
  base::Diagnostics diags;
  const ValidationReport r = ValidateInferenceCsv(csv, PresetStore(kConfigs), diags);
  ASSERT_TRUE(diags.ok()) << diags.ToString();
  ASSERT_EQ(r.rows.size(), 3u);
  const hardware::SystemSpec sys = SeleneNodeOfA100_80Gb();
  const auto m = Model("llama2-7b");
  const InferenceEstimator est(m, sys);
  InferenceDeployment d = Bf16(1);
  d.weights = DataType::kInt4;
  d.activations = d.kv_cache = DataType::kFp16;
  const double tpot_ms = est.Pass(d, IterationShape::Decode(1, 128 + 64)).total * 1e3;
  EXPECT_NEAR(r.rows[0].predicted, tpot_ms, 1e-9);
  EXPECT_NEAR(r.rows[1].predicted, tpot_ms, 1e-9);
  EXPECT_NE(r.rows[2].skipped.find("'INT3' is not a modelled datatype"), std::string::npos)
      << r.rows[2].skipped;
}

// TensorRT-LLM v0.8 and v0.9 ran XQA only where a benchmark exported
// TRTLLM_ENABLE_XQA=1 and a precompiled kernel fitted the model (head size
// 128 or 256, 8 query heads per KV head); before v0.8 there was none, from
// the later pages on it is the default. The same Mistral 7B row (32 query
// heads over 8 KV heads) four ways, and Llama 2 70B and Falcon-180B with the
// export. A row without XQA is the estimator's deployment with
// gqa_shared_kv off: Mistral at TP 1 decoding 120 sequences past 128 + 64
// tokens reads its cache 32 / 8 = 4 times.
TEST(Validation, TensorRtLlmXqaOnlyWhereTheReleaseRanIt) {
  const std::string v09 = "TensorRT-LLM page 'All data was generated using version 0.9.0'";
  const std::string v020 = "TensorRT-LLM perf-overview.md v0.20";
  const std::string mistral = "Mistral-7B,7.24,H100 SXM 80GB HBM3,1,1,1,FP8,120,128,128,,,1,,,";
  const std::string csv = InferenceCsv(
      "xqa_rows.csv",
      v09 + "," + mistral + ",static; metric = out tok/s/GPU\n" +                               // 2
      v09 + "," + mistral + ",static; metric = out tok/s/GPU; TRTLLM_ENABLE_XQA=1\n" +          // 3
      v020 + "," + mistral + ",static; metric = out tok/s/GPU\n" +                              // 4
      "TensorRT-LLM v0.6.1," + mistral + ",static; metric = out tok/s/GPU\n" +                  // 5
      v09 + ",Llama-2-70B,69,H100 SXM 80GB HBM3,4,4,1,FP8,64,128,128,,,1,,,,"
            "static; metric = out tok/s/GPU; TRTLLM_ENABLE_XQA=1\n" +                           // 6
      v09 + ",Falcon-180B,180,H100 SXM 80GB HBM3,8,8,1,FP8,64,128,128,,,1,,,,"
            "static; metric = out tok/s/GPU; TRTLLM_ENABLE_XQA=1\n");                           // 7
  base::Diagnostics diags;
  const ValidationReport r = ValidateInferenceCsv(csv, PresetStore(kConfigs), diags);
  ASSERT_TRUE(diags.ok()) << diags.ToString();
  ASSERT_EQ(r.rows.size(), 6u);
  EXPECT_NE(r.rows[0].assumptions.find("v0.9, no XQA (opt-in then, TRTLLM_ENABLE_XQA=1 not set)"),
            std::string::npos) << r.rows[0].assumptions;
  EXPECT_NE(r.rows[1].assumptions.find("no precompiled kernel for 32 / 8 heads of 128"),
            std::string::npos) << r.rows[1].assumptions;
  EXPECT_EQ(r.rows[2].assumptions.find("once per query head"), std::string::npos)
      << r.rows[2].assumptions;
  EXPECT_NE(r.rows[3].assumptions.find("v0.6 (before XQA)"), std::string::npos)
      << r.rows[3].assumptions;
  EXPECT_EQ(r.rows[4].assumptions.find("once per query head"), std::string::npos)
      << r.rows[4].assumptions;
  EXPECT_NE(r.rows[5].assumptions.find("no precompiled kernel for 232 / 8 heads of 64"),
            std::string::npos) << r.rows[5].assumptions;
  // The v0.9 rows without XQA are the estimator's per-query-head reads, the
  // v0.20 row its shared reads.
  const hardware::SystemSpec sys = H100Node();
  const auto m = Model("mistral-7b");
  const InferenceEstimator est(m, sys);
  InferenceDeployment d = Bf16(1);
  d.weights = d.activations = d.kv_cache = DataType::kFp8;
  d.batch = 120;
  d.input = d.output = 128;
  d.memory_fraction = 1.0;
  const double shared = est.Run(d).output_tokens_per_s_per_device;
  d.gqa_shared_kv = false;
  const double per_head = est.Run(d).output_tokens_per_s_per_device;
  EXPECT_LT(per_head, shared);
  EXPECT_DOUBLE_EQ(r.rows[0].predicted, per_head);
  EXPECT_DOUBLE_EQ(r.rows[1].predicted, per_head);
  EXPECT_DOUBLE_EQ(r.rows[2].predicted, shared);
  EXPECT_DOUBLE_EQ(r.rows[3].predicted, per_head);
}

// A measured run past the model's trained context: TensorRT-LLM benchmarked
// GPT-J 6B (RoPE, 2,048 positions) at 2,048 + 128 tokens, so the row is
// predicted as run and says so; a learned position table (GPT-3 175B,
// 2,048 rows) cannot have run past it, so that row is skipped with the
// reason. A user's own request past either is still refused
// (Cli.ModelContextWindowRefusesLongerPrompt).
TEST(Validation, RopeRowsPastTheTrainedContextArePredictedAsRun) {
  const std::string csv = InferenceCsv(
      "context_rows.csv",
      "some engine,GPT-J-6B,6.05,H100 SXM 80GB HBM3,1,1,1,FP8,64,2048,128,,,1,,,,static; tok/s/GPU\n"
      "some engine,GPT-3 175B,175,H100 SXM 80GB HBM3,8,8,1,FP8,8,2048,128,,,1,,,,static; tok/s/GPU\n");
  base::Diagnostics diags;
  const ValidationReport r = ValidateInferenceCsv(csv, PresetStore(kConfigs), diags);
  ASSERT_TRUE(diags.ok()) << diags.ToString();
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_TRUE(r.rows[0].skipped.empty()) << r.rows[0].skipped;
  EXPECT_TRUE(r.rows[0].error_pct.has_value());
  EXPECT_NE(r.rows[0].assumptions.find("input + output (2176 tokens) past the model's trained "
                                       "context (max_seq 2048)"),
            std::string::npos) << r.rows[0].assumptions;
  EXPECT_NE(r.rows[1].skipped.find("exceeds the model's learned position table (max_seq 2048)"),
            std::string::npos) << r.rows[1].skipped;
}

// The L40S preset (NVIDIA L40S datasheet): the names measured runs write
// resolve to it, its reference system is eight of them on PCIe Gen4 x16
// (64 GB/s bidirectional = 32 GB/s a direction, no NVLink), and a batch-1
// decode of Llama 2 7B in fp8 streams its linear weights, 32 layers x
// (4 x 4096^2 + 3 x 4096 x 11008) = 6,476,005,376 B, and the LM head's
// 32,000 x 4096 = 131,072,000 B (the embedding reads one row), 6,607,077,376
// B at the card's 864 GB/s: at least 7.65 ms a token, and at the H200 probe's
// 0.83 of bandwidth (the profile borrows it) 9.21 ms of GEMM time.
TEST(Validation, L40sPresetAndItsPcieServer) {
  const PresetStore store(kConfigs);
  for (const char* name : {"L40S", "NVIDIA L40S", "L40S 48GB"}) {
    const auto p = store.Resolve(DocKind::kDevice, name);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_EQ(p->preset, "l40s") << name;
  }
  EXPECT_EQ(store.ReferenceSystem("l40s"), "l40s-server");
  const hardware::SystemSpec sys = test::System("l40s-server");
  EXPECT_EQ(sys.device_preset, "l40s");
  EXPECT_EQ(sys.devices_per_node, 8);
  ASSERT_FALSE(sys.network.empty());
  EXPECT_DOUBLE_EQ(sys.network[0].bandwidth, 32e9);
  EXPECT_DOUBLE_EQ(sys.device.peak_fp8, 733e12);
  EXPECT_DOUBLE_EQ(sys.device.memory_bandwidth, 864e9);
  const auto m = Model("llama2-7b");
  const InferenceEstimator est(m, sys);
  InferenceDeployment d = Bf16(1);
  d.weights = d.activations = d.kv_cache = DataType::kFp8;
  const PassTime step = est.Pass(d, IterationShape::Decode(1, 128));
  EXPECT_DOUBLE_EQ(step.weight_bytes, 6607077376.0);
  EXPECT_GT(step.total, 6607077376.0 / 864e9);
  // The GEMMs stream them between the profile's memory efficiencies (0.80
  // at 1 MiB, 0.83 from 1 GiB: one layer's matrices are 17-90 MB) with the
  // 4 us kernel floor on each of at most 5 x 32 + 1 = 161 GEMMs:
  // 9.21 ms <= GEMM time <= 6,607,077,376 / (864e9 x 0.80) + 161 x 4 us = 10.20 ms.
  EXPECT_GT(step.gemm, 6607077376.0 / (864e9 * 0.83));
  EXPECT_LT(step.gemm, 6607077376.0 / (864e9 * 0.80) + 161 * 4e-6);
}

// The MoE tables of the same TensorRT-LLM v1.0 page (Llama 4 Scout and
// Maverick, Qwen3-235B-A22B and Qwen3-30B-A3B at max load) are kept in a
// file of their own, validation/inference_runs_moe.csv: every row reads (the
// checkpoint names resolve to the presets, none is skipped), and their
// error, 41.92 % over 110 figures, is reported, not held: the runs state
// attention data parallelism and an expert-parallel degree the tables do not
// give, which the harness does not model (validation/README.md, "The MoE
// rows at max load").
TEST(Validation, MoeMaxLoadRowsAreReadAndReported) {
  base::Diagnostics d;
  const ValidationReport r = ValidateInferenceCsv(
      std::string(ORRERY_TEST_VALIDATION_DIR) + "/inference_runs_moe.csv", PresetStore(kConfigs), d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  EXPECT_EQ(r.evaluated, 110);
  EXPECT_EQ(r.skipped, 0);
  std::map<std::string, ValidationReport> presets;
  for (const auto& row : r.rows) {
    const size_t at = row.assumptions.find("read as preset ");
    ASSERT_NE(at, std::string::npos) << row.assumptions;
    const std::string preset = row.assumptions.substr(at + 15, row.assumptions.find(' ', at + 15) - at - 15);
    presets[preset + " on " + row.device].rows.push_back(row);
  }
  EXPECT_EQ(presets.size(), 12u);
  for (auto& [name, g] : presets) {
    Summarise(g);
    std::cout << "[ measured ] MoE max load, " << name << ": MAPE " << g.mape_pct << " %, speed bias "
              << g.speed_bias_pct << " % (" << g.evaluated << " figures)\n";
  }
}

TEST(Validation, AllCoveredInferenceRows) {
  ValidationReport r = Validate();
  ValidationReport modelled;  // less the masked-MHA GQA rows: 10.93 % over 445
  for (const auto& row : r.rows)
    if (!PerQueryHeadReads(row)) modelled.rows.push_back(row);
  Summarise(modelled);
  EXPECT_LE(modelled.mape_pct, 12.0);
  // The 362 figures the 12 % was set on: 11.70 %.
  ValidationReport before;
  for (const auto& row : r.rows)
    if (row.line < kFirstLineAddedForIssue15) before.rows.push_back(row);
  Summarise(before);
  EXPECT_EQ(before.evaluated, 362);
  EXPECT_LE(before.mape_pct, 12.0);
  // Issue 18's target for TensorRT-LLM max-load throughput is 10 %: 7.28 %
  // over 177 figures since FP4 GEMMs take their own curve and narrow GEMM
  // inputs pay their quantize.
  ValidationReport max_load;
  for (const auto& row : r.rows)
    if (row.metric.rfind("max_load_output_tok_per_s", 0) == 0) max_load.rows.push_back(row);
  Summarise(max_load);
  EXPECT_GE(max_load.evaluated, 170);
  EXPECT_LE(max_load.mape_pct, 8.0);
  std::cout << "[ measured ] TensorRT-LLM max-load throughput: MAPE " << max_load.mape_pct
            << " %, " << max_load.evaluated << " figures\n";
  std::map<std::string, ValidationReport> groups;
  for (const auto& row : r.rows) {
    groups[SourceGroup(row.source) + " / " + (row.metric.empty() ? "-" : row.metric)].rows.push_back(row);
  }
  for (auto& [name, g] : groups) {
    Summarise(g);
    std::cout << "[ measured ] " << name << ": MAPE " << g.mape_pct << " %, max "
              << g.max_abs_error_pct << " % (" << g.evaluated << " evaluated, " << g.skipped
              << " skipped)\n";
  }
  std::map<std::string, int> reasons;
  for (const auto& row : r.rows)
    if (!row.skipped.empty()) ++reasons[row.skipped];
  for (const auto& [why, n] : reasons) std::cout << "[ skipped  ] " << n << " rows: " << why << "\n";
  std::cout << "[ measured ] all covered inference rows: MAPE " << r.mape_pct << " %, max "
            << r.max_abs_error_pct << " %, " << r.evaluated << " evaluated, " << r.skipped
            << " skipped\n";
  EXPECT_GE(r.evaluated, 100);
}

// Issue 19: a pass through a PassCache gives the same doubles as a pass
// without, for prefill, decode and mixed shapes, on a hit and on a miss, on
// a dense and on a MoE model, and a deployment's entry is not reused for
// another deployment.
TEST(Serving, PassCacheGivesTheSamePassBitForBit) {
  for (const char* name : {"llama2-70b-h100-infer", "mixtral-8x7b-a100-infer"}) {
    SCOPED_TRACE(name);
    const Scenario s = LoadScenario(name);
    ASSERT_TRUE(s.inference.has_value());
    const InferenceDeployment& d = *s.inference;
    const InferenceEstimator est(s.model, s.system);
    const auto cache = std::make_unique<PassCache>();
    std::vector<IterationShape> shapes;
    for (double b : {1.0, 7.0, 64.0, 256.0}) shapes.push_back(IterationShape::Decode(b, 1000 * b));
    shapes.push_back(IterationShape::Prefill(4, 512));
    IterationShape mixed = IterationShape::Decode(60, 90000);
    mixed += IterationShape::Prefill(1, 300, 200);
    shapes.push_back(mixed);
    // The same counts with another context: a hit for the token work, new attention.
    shapes.push_back(IterationShape::Decode(64, 5));
    int checked = 0;
    for (int round = 0; round < 2; ++round) {  // misses first, then hits
      for (const IterationShape& it : shapes) {
        const PassTime a = est.Pass(d, it);
        const PassTime b = est.Pass(d, it, *cache);
        EXPECT_EQ(a.total, b.total);
        EXPECT_EQ(a.gemm, b.gemm);
        EXPECT_EQ(a.attention, b.attention);
        EXPECT_EQ(a.tp_comm, b.tp_comm);
        EXPECT_EQ(a.flops, b.flops);
        EXPECT_EQ(a.weight_bytes, b.weight_bytes);
        EXPECT_EQ(a.kv_bytes, b.kv_bytes);
        ++checked;
      }
    }
    EXPECT_EQ(checked, 14);
    // Another deployment (twice the tensor parallelism) through the same cache.
    InferenceDeployment other = d;
    other.tp = d.tp * 2;
    EXPECT_EQ(est.Pass(other, shapes[0], *cache).total, est.Pass(other, shapes[0]).total);
    EXPECT_NE(est.Pass(other, shapes[0]).total, est.Pass(d, shapes[0]).total);
  }
}

// Issue 19: SimulateServing remembers decode-only pass times by (sequences,
// summed context). The remembered time must be the estimator's own double:
// two lone requests of 512 + 64 tokens, the second arriving long after the
// first has finished (about 0.4 s), each take one prefill pass of 512
// tokens (which yields the first token) and 63 decode steps at contexts
// 513, 514, ..., 575 (cached + 1). The first request's steps fill the
// table, the second's read it; both finish times equal the passes summed
// in the same order from their arrivals (0 s and 10 s), bit for bit. (A
// table that returned a neighbouring context's time moves the second
// finish by far more than the 1.8e-15 s spacing of doubles near 10 s.)
TEST(Serving, RememberedDecodePassesAreTheEstimatorsOwn) {
  Served s;
  s.d.scheduler = parallelism::Scheduler::kContinuous;
  s.d.lengths = parallelism::LengthDistribution::kFixed;
  const std::vector<Request> two = {{0.0, 512, 64}, {10.0, 512, 64}};
  const ServingResult r = SimulateServing(s.est, s.d, two);
  ASSERT_TRUE(r.feasible) << r.reason;
  ASSERT_EQ(r.requests.size(), 2u);
  EXPECT_EQ(r.iterations, 2 * 64);
  for (int i = 0; i < 2; ++i) {
    double t = two[static_cast<size_t>(i)].arrival_s;
    t += s.est.Pass(s.d, IterationShape::Prefill(1, 512)).total;
    EXPECT_EQ(r.requests[static_cast<size_t>(i)].first_token_s, t);
    for (int context = 513; context <= 575; ++context)
      t += s.est.Pass(s.d, IterationShape::Decode(1, context)).total;
    EXPECT_EQ(r.requests[static_cast<size_t>(i)].finish_s, t) << "request " << i;
  }
  EXPECT_LT(r.requests[0].finish_s, 10.0);   // the replica was idle when the second came
}

}  // namespace
}  // namespace orrery::engine
