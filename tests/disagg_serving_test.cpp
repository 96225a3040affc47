// Issue 18: disaggregated serving (DistServe, Zhong et al. OSDI 2024;
// Splitwise, Patel et al. ISCA 2024): prefill and decode pools, the KV
// handoff between them, and the split search against colocated serving.

#include <gtest/gtest.h>

#include "core/estimate/disagg_serving.h"
#include "core/estimate/scenario.h"
#include "tests/support/presets.h"

namespace orrery::engine {
namespace {

using test::Model;

// One DGX H100: 8 x H100 SXM on NVLink (450 GB/s per direction, 3.4 us),
// then NDR InfiniBand (400 Gb/s = 50 GB/s per GPU, 5 us).
hardware::SystemSpec DgxH100(int64_t nodes) { return test::System("dgx-h100-superpod", nodes); }

// Llama 3.1 8B: 32 layers, 8 KV heads of 128 (configs/models/llama3.1-8b.yaml).
//   BF16 KV per token 32 x 2 x 8 x 128 x 2 B = 131,072 B; 1,000 prompt tokens
//   131,072,000 B (the bytes DistServe Sec. 4.3 sends per request).
TEST(Disagg, KvTransferBytesOfAPrompt) {
  const models::ModelSpec m = Model("llama3.1-8b");
  EXPECT_DOUBLE_EQ(KvTransferBytes(m, hardware::DataType::kBf16, 1000), 131072000.0);
  // FP8 KV halves it: 65,536,000 B.
  EXPECT_DOUBLE_EQ(KvTransferBytes(m, hardware::DataType::kFp8, 1000), 65536000.0);
  // Local layers send only their window: Gemma 3 27B (62 layers, 16 KV heads
  // of 128: 507,904 B a token in BF16; w 1024 on 52) at 32,768 tokens holds
  // 6,144 tokens of every layer's cache, 3,120,562,176 B.
  EXPECT_DOUBLE_EQ(KvTransferBytes(Model("gemma3-27b"), hardware::DataType::kBf16, 32768), 3120562176.0);
}

// The tier: 8 devices fit the NVLink domain (tier 0); 16 need InfiniBand.
TEST(Disagg, KvLinkIsTheInnermostTierHoldingBothPools) {
  const hardware::SystemSpec s = DgxH100(2);
  EXPECT_EQ(ChooseKvLink(s, 8, -1).name, "nvlink");
  EXPECT_EQ(ChooseKvLink(s, 16, -1).name, "infiniband-ndr");
  EXPECT_EQ(ChooseKvLink(s, 8, 1).name, "infiniband-ndr");  // kv_tier forces it
  hardware::SystemSpec one = s;
  one.network.clear();
  EXPECT_EQ(ChooseKvLink(one, 1, -1).tier, -1);
  EXPECT_EQ(KvTransferSeconds(1e6, ChooseKvLink(one, 1, -1), 1), 0.0);
}

// 131,072,000 B over two NVLink streams: 65,536,000 B = 62.5 MiB each.
// NVLink efficiency (dgx-h100-superpod.yaml), log-interpolated between
// 16 MiB (0.56) and 64 MiB (0.649): t = ln(62.5/16) / ln(4) = 0.982892,
// 0.56 + 0.982892 x 0.089 = 0.647477.
//   3.4 us + 65,536,000 / (450e9 x 0.647477) = 3.4 us + 224.928 us = 228.328 us
// One InfiniBand stream: 131,072,000 B = 125 MiB, between 16 MiB (0.7) and
// 256 MiB (0.85): t = ln(125/16) / ln(16) = 0.741446, eff 0.811217.
//   5 us + 131,072,000 / (50e9 x 0.811217) = 5 us + 3,231.49 us = 3.23649 ms
TEST(Disagg, KvTransferTimeFromTheTier) {
  const hardware::SystemSpec s = DgxH100(2);
  EXPECT_NEAR(KvTransferSeconds(131072000.0, ChooseKvLink(s, 8, -1), 2), 228.328e-6, 0.01e-6);
  EXPECT_NEAR(KvTransferSeconds(131072000.0, ChooseKvLink(s, 16, -1), 1), 3.23649e-3, 0.01e-6);
}

parallelism::InferenceDeployment Deployment() {
  parallelism::InferenceDeployment d;
  d.tp = 1;
  d.scheduler = parallelism::Scheduler::kContinuous;
  d.disaggregate = true;
  d.prefill_tp = 2;
  d.decode_tp = 1;
  return d;
}

// One request through the pools, its times rebuilt from the estimator's
// passes: TTFT = the prefill pass on the tp-2 prefill replica; then the KV
// over NVLink in min(2, 1) = 1 stream (the decode replica has one device);
// then output - 1 = 2 decode steps on the tp-1 replica at
// contexts input + 1 and input + 2.
TEST(Disagg, OneRequestIsPrefillThenTransferThenDecodeSteps) {
  const models::ModelSpec m = Model("llama3.1-8b");
  const hardware::SystemSpec s = DgxH100(1);
  const InferenceEstimator est(m, s);
  parallelism::InferenceDeployment d = Deployment();
  const std::vector<Request> one = {{0.5, 1000, 3}};
  const DisaggResult r = SimulateDisaggregated(est, d, one);
  ASSERT_TRUE(r.feasible) << r.reason;
  parallelism::InferenceDeployment p = d, q = d;
  p.tp = 2;
  q.tp = 1;
  const double prefill = est.Pass(p, IterationShape::Prefill(1, 1000)).total;
  const double transfer = KvTransferSeconds(131072000.0, ChooseKvLink(s, 3, -1), 1);
  const double decode = est.Pass(q, IterationShape::Decode(1, 1001)).total +
                        est.Pass(q, IterationShape::Decode(1, 1002)).total;
  ASSERT_EQ(r.serving.requests.size(), 1u);
  const RequestOutcome& o = r.serving.requests[0];
  EXPECT_NEAR(o.ttft(), prefill, 1e-12);
  EXPECT_NEAR(o.finish_s - 0.5, prefill + transfer + decode, 1e-12);
  EXPECT_NEAR(r.transfer_s_mean, transfer, 1e-15);
  EXPECT_DOUBLE_EQ(r.kv_bytes_mean, 131072000.0);
  EXPECT_EQ(r.devices, 3);
  EXPECT_EQ(r.link.name, "nvlink");
}

// More pool devices than the system has is a result with a reason.
TEST(Disagg, PoolsBeyondTheSystemAreInfeasible) {
  const models::ModelSpec m = Model("llama3.1-8b");
  const hardware::SystemSpec s = DgxH100(1);
  const InferenceEstimator est(m, s);
  parallelism::InferenceDeployment d = Deployment();
  d.prefill_replicas = 4;  // 4 x 2 + 1 x 1 = 9 > 8
  const DisaggResult r = SimulateDisaggregated(est, d, {{0, 100, 10}});
  EXPECT_FALSE(r.feasible);
  EXPECT_NE(r.reason.find("9 devices"), std::string::npos) << r.reason;
}

// Colocated replicas split the stream round robin: two replicas serving
// two simultaneous requests give each the latency of a lone request.
TEST(Disagg, ColocatedReplicasShareTheStream) {
  const models::ModelSpec m = Model("llama3.1-8b");
  const hardware::SystemSpec s = DgxH100(1);
  const InferenceEstimator est(m, s);
  parallelism::InferenceDeployment d;
  const std::vector<Request> two = {{0, 1000, 10}, {0, 1000, 10}};
  const ServingResult lone = SimulateServing(est, d, {{0, 1000, 10}});
  const ServingResult both = SimulateReplicas(est, d, two, 2);
  const ServingResult shared = SimulateServing(est, d, two);
  ASSERT_TRUE(both.feasible);
  EXPECT_NEAR(both.e2e_s.max, lone.e2e_s.max, 1e-12);
  EXPECT_GT(shared.e2e_s.max, lone.e2e_s.max);
}

}  // namespace
}  // namespace orrery::engine

namespace orrery::engine {
namespace {

// Llama 3.1 8B in BF16 on one DGX H100 (8 GPUs), vLLM-style continuous
// batching (a prefill iteration runs new prompts alone and stalls the
// running decodes), SLO: TTFT 600 ms and TPOT 30 ms for 90 % of 400 Poisson
// requests.
parallelism::InferenceDeployment Workload(int64_t input, int64_t output, double rate) {
  parallelism::InferenceDeployment d;
  d.scheduler = parallelism::Scheduler::kContinuous;
  d.input = input;
  d.output = output;
  d.rate = rate;
  d.requests = 400;
  d.slo_ttft = 0.6;
  d.slo_tpot = 0.030;
  d.slo_attainment = 0.9;
  return d;
}

// Prefill-heavy (8,192-token prompts, 64 tokens out, 16 requests/s): a
// colocated replica stalls its decodes for a whole long prefill (~0.2 s on
// one H100) every time a prompt arrives, so TPOT misses its 30 ms bound
// unless more GPUs thin the load; separate pools remove that interference
// and size each phase on its own (DistServe, Zhong et al. 2024, Sec. 2.2:
// prefill-decoding interference, worse the longer the prompt). Decode-heavy
// (128-token prompts, 1,024 out): a prefill costs a few milliseconds, the
// interference is negligible, and a dedicated prefill pool would sit mostly
// idle, so colocation meets the SLO on fewer GPUs (Splitwise, Patel et al.
// 2024, Sec. 3: the token phase is memory-bound and leaves compute idle, the
// prompt phase is short for short prompts, so a prompt pool buys little).
TEST(Disagg, PrefillHeavyPrefersDisaggregationDecodeHeavyDoesNot) {
  const models::ModelSpec m = Model("llama3.1-8b");
  const hardware::SystemSpec s = DgxH100(1);
  const InferenceEstimator est(m, s);

  const SplitSearch prefill_heavy = BestSplit(est, Workload(8192, 64, 16), 8);
  ASSERT_TRUE(prefill_heavy.found) << prefill_heavy.reason;
  EXPECT_TRUE(prefill_heavy.prefers_disaggregation);
  ASSERT_GE(prefill_heavy.best_disaggregated, 0);
  ASSERT_GE(prefill_heavy.best_colocated, 0);
  const SplitCandidate& g = prefill_heavy.candidates[static_cast<size_t>(prefill_heavy.best_disaggregated)];
  const SplitCandidate& c = prefill_heavy.candidates[static_cast<size_t>(prefill_heavy.best_colocated)];
  EXPECT_GE(g.slo_attainment, 0.9);
  // The cause: decodes stalled behind prefills in the colocated layout.
  EXPECT_GT(c.tpot_p90_s, g.tpot_p90_s);
  EXPECT_TRUE(g.devices < c.devices || c.slo_attainment < 0.9)
      << "disaggregated " << g.devices << " devices, colocated " << c.devices << " at "
      << c.slo_attainment;

  const SplitSearch decode_heavy = BestSplit(est, Workload(128, 1024, 16), 8);
  ASSERT_TRUE(decode_heavy.found) << decode_heavy.reason;
  EXPECT_FALSE(decode_heavy.prefers_disaggregation);
  ASSERT_EQ(decode_heavy.best_colocated, 0);
  EXPECT_GE(decode_heavy.candidates[0].slo_attainment, 0.9);
  EXPECT_FALSE(decode_heavy.candidates[0].disaggregated);
}

}  // namespace
}  // namespace orrery::engine
