// The measured-runs harness (validation.h): one test per rule of the CSV's
// columns (validation/README.md), the search that fills a row's unstated
// plan fields, and the issue-15 accuracy targets per source on the shipped
// validation/training_runs.csv.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/estimate/step_kernels.h"
#include "core/estimate/training_estimator.h"
#include "core/search/search.h"
#include "core/validation/validation.h"
#include "hardware/device_model.h"
#include "models/transformer.h"
#include "tests/support/presets.h"

namespace orrery::engine {
namespace {

const std::string kConfigs = ORRERY_TEST_CONFIG_DIR;
const std::string kRuns = std::string(ORRERY_TEST_VALIDATION_DIR) + "/training_runs.csv";

// validation/training_runs.csv's first line read after the figures of
// ValidationTargets were set: the GB300, B300 and GPT-OSS rows of the
// Megatron-Bridge 25.11 and 26.02 performance tables (lines 302-328), then
// torchtitan's H100 tables (lines 329-346), then the NVFP4 rows of the
// Megatron-Bridge 26.02 table (lines 347-350).
constexpr int kFirstBlackwellUltraOrGptOssLine = 302;
constexpr int kFirstTorchtitanH100Line = 329;
constexpr int kFirstNvfp4Line = 347;
constexpr int kLastAddedLine = 350;

// The device families issue 15's Hopper/Blackwell target counts, and the
// models issue 16's MoE target counts.
bool OnHopperOrBlackwell(const ValidationRow& row) {
  static const std::set<std::string> kHopperBlackwell = {"h100-sxm", "h100-hbm2e", "h200",  "h200-measured",
                                                         "b200",     "gb200",         "b300", "gb300"};
  return kHopperBlackwell.count(row.device) > 0;
}
// One report's figures on the test's output, as `orrery validate` prints
// them: what a bound below holds, measured.
void PrintMeasured(const std::string& name, const ValidationReport& r) {
  std::cout << "[ measured ] " << name << ": MAPE " << r.mape_pct << " %, max " << r.max_abs_error_pct << " %, "
            << r.evaluated << " evaluated, " << r.skipped << " skipped\n";
}
bool IsMoeRow(const ValidationRow& row) {
  for (const char* family : {"Mixtral", "DeepSeek", "Qwen3", "gpt-oss"})
    if (row.model.rfind(family, 0) == 0) return true;
  return false;
}

const char* kHeader =
    "source,model,params_b,layers,hidden,heads,ffn,vocab,kv_heads,activation,norm,position,"
    "tied_embeddings,bias,seq,gpus,gpu,system,tp,pp,dp,cp,ep,"
    "global_batch,micro_batch,recompute,seq_parallel,interleave,schedule,precision,zero,"
    "dp_overlap,tp_overlap,ep_overlap,attention,framework,flops_metric,moe_routing,"
    "measured_iter_s,measured_tflops_per_gpu,measured_mfu,notes,mtp,first_stage_layers,last_stage_layers,"
    "reduce_dtype,fp8_param_gather,cp_scheme,group_order\n";

// Korthikanti et al. 2022 Table 5, Megatron-22B on 8 A100 with full
// recompute (the first row of validation/training_runs.csv), every plan
// field stated; `change` replaces cells by column.
std::string Row(const std::map<std::string, std::string>& change = {}) {
  std::map<std::string, std::string> cells = {
      {"source", "Korthikanti et al. 2022 Table 5"}, {"model", "Megatron-22B"},
      {"layers", "48"}, {"hidden", "6144"}, {"heads", "64"}, {"ffn", "24576"}, {"vocab", "51200"},
      {"seq", "2048"}, {"gpus", "8"}, {"gpu", "A100-SXM4-80GB (Selene)"}, {"tp", "8"}, {"pp", "1"},
      {"dp", "1"}, {"cp", "1"}, {"ep", "1"}, {"global_batch", "4"}, {"micro_batch", "4"},
      {"recompute", "full"}, {"seq_parallel", "no"}, {"interleave", "1"}, {"precision", "bf16"},
      {"zero", "0"}, {"dp_overlap", "no"}, {"tp_overlap", "no"}, {"attention", "materialized"},
      {"framework", "megatron-lm"}, {"measured_iter_s", "1.42"}};
  for (const auto& [k, v] : change) cells[k] = v;
  std::string header = kHeader, line, col;
  header.pop_back();
  for (size_t i = 0; i <= header.size(); ++i) {
    if (i == header.size() || header[i] == ',') {
      line += (line.empty() && col == "source" ? "" : ",") + cells[col];
      col.clear();
    } else {
      col += header[i];
    }
  }
  return line + "\n";
}

std::string TempCsv(const std::string& name, const std::string& rows) {
  const std::string path = (std::filesystem::path(testing::TempDir()) /
                            ("orrery_validation_" + std::to_string(getpid()) + "_" + name))
                               .string();
  std::ofstream(path, std::ios::binary) << kHeader << rows;
  return path;
}

ValidationReport ValidateFile(const std::string& file, base::Diagnostics& d) {
  return ValidateTrainingCsv(file, PresetStore(kConfigs), d);
}

// `orrery validate --row N`: one row by its line, predicted as in the whole
// file and with the scenario it was predicted with kept, so that the
// scenario alone gives the same figure again. Line 3 leaves the micro batch
// unstated (searched); line 2 is Korthikanti et al.'s Table 5 row, 1.42 s.
TEST(ValidationCsv, OneRowByLineKeepsTheScenarioItWasPredictedWith) {
  const std::string csv = TempCsv("by_line.csv", Row() + Row({{"micro_batch", ""}}));
  base::Diagnostics d;
  const ValidationReport all = ValidateFile(csv, d);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(all.rows.size(), 2u);
  for (const auto& r : all.rows) EXPECT_EQ(r.scenario, nullptr) << "kept only when a line is asked for";
  ASSERT_TRUE(all.rows[1].error_pct.has_value()) << all.rows[1].skipped;

  const ValidationReport one = ValidateTrainingCsv(csv, PresetStore(kConfigs), d, 3);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(one.rows.size(), 1u);
  const ValidationRow& r = one.rows.front();
  EXPECT_EQ(r.line, 3);
  EXPECT_DOUBLE_EQ(r.measured, 1.42);
  EXPECT_EQ(r.predicted, all.rows[1].predicted);
  EXPECT_EQ(r.assumptions, all.rows[1].assumptions);
  ASSERT_NE(r.scenario, nullptr);
  const Scenario& s = *r.scenario;
  // The search's choice is in the kept plan (gb 4 at dp 1: 1, 2 or 4).
  EXPECT_NE(r.assumptions.find("micro batch " + std::to_string(s.training.micro_batch)), std::string::npos)
      << r.assumptions;
  EXPECT_EQ(TrainingEstimator(s.model, s.system).Run(s.training, s.workload).iteration_s, r.predicted);
  EXPECT_EQ(PredictedMetric(TrainingEstimator(s.model, s.system).Run(s.training, s.workload), "iteration_s", 8),
            r.predicted);

  // What it was predicted with, for `orrery validate --by`: the row's
  // framework, bf16, full recompute, its device preset.
  EXPECT_EQ(FacetOf(r, "framework"), "megatron-lm");
  EXPECT_EQ(FacetOf(r, "precision"), "bf16");
  EXPECT_EQ(FacetOf(r, "recompute"), "full");
  EXPECT_EQ(FacetOf(r, "device"), "a100-80gb");
  EXPECT_EQ(FacetOf(r, "metric"), "iteration_s");
  EXPECT_EQ(FacetOf(r, "colour"), "");

  const ValidationReport none = ValidateTrainingCsv(csv, PresetStore(kConfigs), d, 7);
  EXPECT_TRUE(d.ok());
  EXPECT_TRUE(none.rows.empty());
  std::filesystem::remove(csv);
}

// The bias is the mean of predicted over measured speed, less 1, whatever
// each row's metric: a time measured 2 s and predicted 1 s runs twice as
// fast (+100 %), a throughput measured 100 and predicted 80 TFLOP/s 20 %
// slower (-20 %): +40 % over the two, beside a MAPE of (50 + 20) / 2 = 35 %.
// A skipped row counts in neither.
TEST(ValidationCsv, BiasIsTheMeanSpeedRatioWhateverTheMetric) {
  ValidationReport r;
  ValidationRow time;
  time.metric = "iteration_s";
  time.measured = 2;
  time.predicted = 1;
  time.error_pct = -50;
  ValidationRow rate;
  rate.metric = "model_tflops_per_gpu";
  rate.measured = 100;
  rate.predicted = 80;
  rate.error_pct = -20;
  ValidationRow skipped;
  skipped.skipped = "global batch missing";
  r.rows = {time, rate, skipped};
  Summarise(r);
  EXPECT_EQ(r.evaluated, 2);
  EXPECT_EQ(r.skipped, 1);
  EXPECT_DOUBLE_EQ(r.mape_pct, 35);
  EXPECT_DOUBLE_EQ(r.speed_bias_pct, 40);
  // Inference latencies are times, token rates are rates.
  EXPECT_TRUE(MetricIsTime("iteration_s"));
  EXPECT_TRUE(MetricIsTime("ttft_ms"));
  EXPECT_TRUE(MetricIsTime("tpot_ms"));
  EXPECT_FALSE(MetricIsTime("output_tok_per_s"));
  EXPECT_FALSE(MetricIsTime("max_load_output_tok_per_s"));
  EXPECT_FALSE(MetricIsTime("mfu"));
}

// Issue 16: a stated EP wider than DP x CP runs folded over the TP devices
// too (MoE parallel folding, arXiv 2504.14960) with etp 1, as
// Megatron-Bridge's Qwen3 recipes set it, instead of being skipped with "ep
// must divide dp x cp": Qwen3-235B-A22B on 256 H100 with tp 2, pp 8, dp 16
// and ep 32 (the Megatron-Bridge 25.11 row: 32 does not divide dp 16, and
// divides tp x dp = 32). The same row with ep 8 (which divides dp 16) keeps
// Megatron-Core's default etp = tp.
TEST(ValidationCsv, EpWiderThanDpTimesCpRunsFoldedWithEtpOne) {
  auto qwen = [](const std::string& ep, const std::string& source = "Megatron-Bridge 25.11 performance summary") {
    return Row({{"source", source}, {"model", "Qwen3-235B-A22B"},
                {"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""},
                {"seq", "4096"}, {"gpus", "256"}, {"gpu", "H100-SXM5-80GB"}, {"system", "DGX-H100"},
                {"tp", "2"}, {"pp", "8"}, {"dp", "16"}, {"cp", "1"}, {"ep", ep}, {"global_batch", "2048"},
                {"micro_batch", "1"}, {"interleave", "4"}, {"recompute", ""}, {"seq_parallel", ""},
                {"precision", "fp8"}, {"zero", "1"}, {"dp_overlap", ""}, {"tp_overlap", ""},
                {"attention", "flash"}, {"framework", "megatron-core"}, {"moe_routing", "force-balanced"},
                {"measured_iter_s", "20.8051"}});
  };
  base::Diagnostics d;
  const ValidationReport r =
      ValidateFile(TempCsv("folded.csv", qwen("32") + qwen("8", "NeMo 25.04 performance summary") + qwen("8")), d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].skipped, "");
  EXPECT_GT(r.rows[0].predicted, 0);
  EXPECT_NE(r.rows[0].assumptions.find("etp 1 (ep 32 fits only folded over tp x cp x dp)"), std::string::npos)
      << r.rows[0].assumptions;
  EXPECT_EQ(r.rows[1].skipped, "");
  EXPECT_EQ(r.rows[1].assumptions.find("etp"), std::string::npos) << r.rows[1].assumptions;
  // A Megatron-Bridge table's row ran a Megatron-Bridge recipe, whose MoE
  // configs set expert_tensor_parallel_size = 1 even where ep fits unfolded.
  EXPECT_EQ(r.rows[2].skipped, "");
  EXPECT_NE(r.rows[2].assumptions.find("etp 1 (the Megatron-Bridge MoE recipes' expert_tensor_parallel_size)"),
            std::string::npos)
      << r.rows[2].assumptions;
}

// A GPU count that does not fill whole scale-up domains is placed in equal
// segments, one per domain (Slurm --segment): 256 GB200 GPUs on 72-GPU
// NVL72 racks run as 4 segments of 64 (the largest divisor of 256 not above
// 72), 64 GPUs as one. EP 64 then stays inside one rack's NVLink.
TEST(ValidationCsv, GpusThatDoNotFillDomainsArePlacedInSegments) {
  auto ds = [](const std::string& gpus, const std::string& pp, const std::string& gbs) {
    return Row({{"source", "Megatron-Bridge 26.02 performance summary"}, {"model", "DeepSeek-V3"},
                {"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""},
                {"seq", "4096"}, {"gpus", gpus}, {"gpu", "GB200"}, {"system", ""},
                {"tp", "1"}, {"pp", pp}, {"dp", "64"}, {"cp", "1"}, {"ep", "64"}, {"global_batch", gbs},
                {"micro_batch", "1"}, {"interleave", ""}, {"recompute", ""}, {"seq_parallel", ""},
                {"precision", "fp8"}, {"zero", ""}, {"dp_overlap", ""}, {"tp_overlap", ""},
                {"attention", "flash"}, {"framework", "megatron-core"}, {"moe_routing", "force-balanced"},
                {"measured_iter_s", "16.5704"}});
  };
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(TempCsv("segments.csv", ds("256", "4", "4096")), d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].skipped, "");
  EXPECT_NE(r.rows[0].assumptions.find("placed as 4 segments of 64 GPUs, one per 72-GPU scale-up domain"),
            std::string::npos)
      << r.rows[0].assumptions;
}

// A job on part of one node uses as many of the domain's rails as it has
// GPUs: one H200 of an 8-GPU DGX node (validation/gpu_step, this
// repository's own measured steps) was refused ("rails must equal the
// devices of one domain": the rail count stayed 8 while the segment shrank
// to 1). It is predicted, with no data-parallel traffic: the step is the
// compute of 4 microbatches and the optimizer.
TEST(ValidationCsv, OneGpuOfANodeIsPredicted) {
  const std::string row =
      Row({{"source", "Orrery H200 training steps 2026"}, {"model", "Llama-3.2-1B"}, {"layers", "16"},
           {"hidden", "2048"}, {"heads", "32"}, {"ffn", "8192"}, {"vocab", "128256"}, {"kv_heads", "8"},
           {"activation", "swiglu"}, {"norm", "rmsnorm"}, {"position", "rope"}, {"tied_embeddings", "yes"},
           {"bias", "no"}, {"seq", "4096"}, {"gpus", "1"}, {"gpu", "H200"}, {"system", ""}, {"tp", "1"},
           {"pp", "1"}, {"dp", "1"}, {"cp", "1"}, {"ep", "1"}, {"global_batch", "8"}, {"micro_batch", "2"},
           {"interleave", "1"}, {"recompute", "none"}, {"seq_parallel", "no"}, {"precision", "bf16"},
           {"zero", "0"}, {"dp_overlap", "no"}, {"tp_overlap", "no"}, {"attention", "flash"},
           {"framework", "pytorch"}, {"measured_iter_s", "0.6979"}});
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(TempCsv("one_gpu.csv", row), d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].skipped, "");
  // 1.236 G parameters x 6 x 32,768 tokens is 243 TFLOP of GEMMs alone: at
  // the H200's 989.4 TFLOP/s peak no step is shorter than 0.25 s, and the
  // measured one took 0.70 s.
  EXPECT_GT(r.rows[0].predicted, 0.4);
  EXPECT_LT(r.rows[0].predicted, 1.0);
  EXPECT_NE(r.rows[0].assumptions.find("fp32 parameters under torch.autocast"), std::string::npos)
      << r.rows[0].assumptions;
  EXPECT_NE(r.rows[0].assumptions.find("eager element-wise kernels"), std::string::npos) << r.rows[0].assumptions;
}

// The mtp column sets the model's multi-token-prediction depth (the
// Megatron-Bridge 25.11 table's "DeepSeekV3 (w/o MTP)"), and
// first_stage_layers / last_stage_layers the decoder layers on the first and
// last pipeline device (the recipe's pipeline_model_parallel_layout). The
// DeepSeek-V3 row of 25.11 on 256 GB200 (pp 8 x vp 4, ep 32): without the
// MTP module the last device no longer runs its MoE block and second LM-head
// pass, so the step is shorter; pp 4 x vp 4 with the recipe's [embedding +
// 4], 14 x [4], [1 + MTP + loss] holds 16 layers on device 0 and 13 on
// device 3, where the even split (parallelism::EvenSplitLayers: 61 = 15 +
// 16 + 15 + 15) leaves 15 on the last device beside the LM head and MTP, so
// the step is shorter again. A word in either column is an error naming it.
// The fp8_param_gather column sets training.fp8_param_gather: NeMo 25.02's
// Nemotron-4 340B on 128 B200 (line 55's plan: tp 8, pp 4, dp 4, vp 12,
// ZeRO-1 with DP overlap, global batch 32, 8 microbatches) gathers its
// updated weights in FP8, half the BF16 all-gather's bytes, and too few
// microbatches hide the DP traffic: the step is shorter. A yes on a bf16
// row changes nothing; a word outside yes / no is an error naming the column.
TEST(ValidationCsv, Fp8ParamGatherColumnReachesTheScenario) {
  auto row = [](const std::string& precision, const std::string& gather) {
    return Row({{"source", "NVIDIA NeMo 25.02 performance summary"}, {"model", "Nemotron-340B"},
                {"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""},
                {"seq", "4096"}, {"gpus", "128"}, {"gpu", "B200"}, {"system", "DGX-B200"},
                {"tp", "8"}, {"pp", "4"}, {"dp", "4"}, {"cp", "1"}, {"ep", "1"}, {"global_batch", "32"},
                {"micro_batch", "1"}, {"interleave", "12"}, {"recompute", "none"}, {"seq_parallel", "yes"},
                {"precision", precision}, {"zero", "1"}, {"dp_overlap", "yes"}, {"tp_overlap", "yes"},
                {"attention", "flash"}, {"framework", "megatron-core"}, {"measured_iter_s", "1.701"},
                {"fp8_param_gather", gather}});
  };
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(
      TempCsv("fp8pg.csv", row("fp8", "") + row("fp8", "yes") + row("bf16", "") + row("bf16", "yes") +
                               row("fp8", "maybe")),
      d);
  ASSERT_EQ(r.rows.size(), 5u);
  for (size_t i = 0; i < 4; ++i) ASSERT_EQ(r.rows[i].skipped, "") << i;
  EXPECT_EQ(r.rows[0].assumptions.find("all-gathered in FP8"), std::string::npos) << r.rows[0].assumptions;
  EXPECT_NE(r.rows[1].assumptions.find("weights kept in FP8 and all-gathered in FP8"), std::string::npos)
      << r.rows[1].assumptions;
  EXPECT_LT(r.rows[1].predicted, r.rows[0].predicted);
  EXPECT_DOUBLE_EQ(r.rows[3].predicted, r.rows[2].predicted);
  EXPECT_NE(r.rows[4].skipped.find("fp8_param_gather"), std::string::npos) << r.rows[4].skipped;
}

// The cp_scheme column sets training.cp_scheme (Llama 3 405B's 128K stage
// states an all-gather of K/V, Grattafiori et al. 2024 Sec. 3.3.2): Llama 3
// 8B at 131,072 tokens on 16 B200 with cp 8, every other plan field stated.
// Each stated scheme is priced as stated and named in the assumptions; a
// blank one is the cheapest of the three (the estimator's auto), as a tuned
// run would pick; the schemes move different volumes, so they differ; a
// word outside ring / allgather / ulysses is an error naming the column.
TEST(ValidationCsv, CpSchemeColumnReachesTheScenario) {
  auto row = [](const std::string& scheme) {
    return Row({{"source", "NVIDIA NeMo long-sequence Llama 3 8B B200 table"}, {"model", "Llama-3-8B"},
                {"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""},
                {"seq", "131072"}, {"gpus", "16"}, {"gpu", "B200"}, {"system", "DGX-B200"},
                {"tp", "1"}, {"pp", "1"}, {"dp", "2"}, {"cp", "8"}, {"ep", "1"}, {"global_batch", "16"},
                {"micro_batch", "1"}, {"interleave", ""}, {"recompute", "full"}, {"seq_parallel", "no"},
                {"precision", "bf16"}, {"zero", "1"}, {"dp_overlap", "yes"}, {"tp_overlap", "no"},
                {"attention", "flash"}, {"framework", "megatron-core"}, {"measured_iter_s", "10"},
                {"cp_scheme", scheme}});
  };
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(
      TempCsv("cpscheme.csv", row("") + row("ring") + row("allgather") + row("ulysses") + row("p2p")), d);
  ASSERT_EQ(r.rows.size(), 5u);
  for (size_t i = 0; i < 4; ++i) ASSERT_EQ(r.rows[i].skipped, "") << i;
  EXPECT_EQ(r.rows[0].assumptions.find("context parallelism by"), std::string::npos) << r.rows[0].assumptions;
  EXPECT_NE(r.rows[1].assumptions.find("context parallelism by ring (stated)"), std::string::npos);
  EXPECT_NE(r.rows[2].assumptions.find("context parallelism by allgather (stated)"), std::string::npos);
  EXPECT_NE(r.rows[3].assumptions.find("context parallelism by ulysses (stated)"), std::string::npos);
  EXPECT_DOUBLE_EQ(r.rows[0].predicted,
                   std::min({r.rows[1].predicted, r.rows[2].predicted, r.rows[3].predicted}));
  EXPECT_NE(r.rows[1].predicted, r.rows[2].predicted);
  EXPECT_NE(r.rows[4].skipped.find("cp_scheme"), std::string::npos) << r.rows[4].skipped;
}

// The group_order column sets training.group_order (Llama 3 405B states
// [TP, CP, PP, DP], Grattafiori et al. 2024 Sec. 3.3.2) and holds the
// search to it. Its 8K row on its cluster (meta-roce-24k: pods of 3,072
// GPUs, 1:7 between pods): laid in Megatron's default order (blank), pp 16
// at a stride of 8 x 64 = 512 GPUs puts the 16 stages of a pipeline in
// three pods and sends activations between pods at a seventh of 400 Gb/s;
// laid as stated, a pipeline spans 128 consecutive GPUs, in one pod, and
// only data parallelism crosses pods. The stated order names itself in the
// assumptions and predicts the faster step; a list that is not the five
// groups once each is an error naming the column.
TEST(ValidationCsv, GroupOrderColumnReachesTheSearch) {
  auto row = [](const std::string& order) {
    return Row({{"source", "Grattafiori et al. 2024 'The Llama 3 Herd of Models' Table 4"},
                {"model", "Llama-3.1-405B"}, {"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""},
                {"vocab", ""}, {"seq", "8192"}, {"gpus", "8192"}, {"gpu", "H100-SXM5-80GB"},
                {"system", "meta-roce-24k"}, {"tp", "8"}, {"pp", "16"}, {"dp", "64"}, {"cp", "1"}, {"ep", ""},
                {"global_batch", "2048"}, {"micro_batch", ""}, {"recompute", "none"}, {"seq_parallel", ""},
                {"interleave", "8"}, {"schedule", "interleaved"}, {"precision", "bf16"},
                {"flops_metric", "model"}, {"measured_tflops_per_gpu", "430"}, {"first_stage_layers", "7"},
                {"last_stage_layers", "7"}, {"zero", ""}, {"dp_overlap", ""}, {"tp_overlap", ""},
                {"attention", ""}, {"framework", ""}, {"measured_iter_s", ""}, {"group_order", order}});
  };
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(
      TempCsv("grouporder.csv", row("") + row("\"tp,cp,ep,pp,dp\"") + row("\"tp,pp,dp\"")), d);
  ASSERT_EQ(r.rows.size(), 3u);
  for (size_t i = 0; i < 2; ++i) ASSERT_EQ(r.rows[i].skipped, "") << i;
  EXPECT_EQ(r.rows[0].assumptions.find("groups laid out"), std::string::npos) << r.rows[0].assumptions;
  EXPECT_NE(r.rows[1].assumptions.find("groups laid out tp,cp,ep,pp,dp, innermost first (stated)"),
            std::string::npos)
      << r.rows[1].assumptions;
  EXPECT_GT(r.rows[1].predicted, 1.1 * r.rows[0].predicted);  // TFLOP/s: pipeline sends inside a pod
  EXPECT_NE(r.rows[2].skipped.find("column 'group_order'"), std::string::npos) << r.rows[2].skipped;
}

TEST(ValidationCsv, MtpAndStageLayerColumnsReachTheScenario) {
  auto ds = [](const std::string& pp, const std::string& mtp, const std::string& first, const std::string& last) {
    return Row({{"source", "Megatron-Bridge 25.11 performance summary"}, {"model", "DeepSeek-V3"},
                {"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""},
                {"seq", "4096"}, {"gpus", "256"}, {"gpu", "GB200"}, {"system", ""},
                {"tp", "1"}, {"pp", pp}, {"dp", pp == "8" ? "32" : "64"}, {"cp", "1"},
                {"ep", pp == "8" ? "32" : "64"}, {"global_batch", "4096"}, {"micro_batch", "1"},
                {"interleave", "4"}, {"recompute", "mla_up_proj"}, {"seq_parallel", "no"},
                {"precision", "fp8-mx"}, {"zero", "1"}, {"dp_overlap", "yes"}, {"tp_overlap", "no"},
                {"attention", "flash"}, {"framework", "megatron-core"}, {"moe_routing", "force-balanced"},
                {"measured_iter_s", "16.3106"}, {"mtp", mtp}, {"first_stage_layers", first},
                {"last_stage_layers", last}});
  };
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(
      TempCsv("mtp.csv", ds("8", "", "", "") + ds("8", "0", "", "") + ds("4", "", "", "") +
                             ds("4", "", "16", "13") + ds("8", "one", "", "")),
      d);
  ASSERT_EQ(r.rows.size(), 5u);
  for (size_t i = 0; i < 4; ++i) ASSERT_EQ(r.rows[i].skipped, "") << i;
  EXPECT_EQ(r.rows[0].assumptions.find("MTP depth"), std::string::npos) << r.rows[0].assumptions;
  EXPECT_NE(r.rows[1].assumptions.find("MTP depth 0 (the source's; the preset's 1)"), std::string::npos)
      << r.rows[1].assumptions;
  EXPECT_LT(r.rows[1].predicted, r.rows[0].predicted);
  EXPECT_NE(r.rows[3].assumptions.find("pipeline layout as the row states it: 16 layers on the first device, 13 on the last"),
            std::string::npos)
      << r.rows[3].assumptions;
  EXPECT_LT(r.rows[3].predicted, r.rows[2].predicted);
  EXPECT_NE(r.rows[4].skipped.find("column 'mtp'"), std::string::npos) << r.rows[4].skipped;
}

// A row that states an interleaved pipeline schedule without its virtual
// stages (Llama 3 405B's pre-training on 8,192 H100, Grattafiori et al.
// 2024 Sec. 3.3.2 and Table 4: tp 8, pp 16, dp 64, no checkpointing, the
// end stages one layer lighter) is searched at interleave 2 or more, not at
// plain 1F1B's 1. Every such plan needs more than 80 GB in the memory model
// (Megatron's interleaved warm-up holds more microbatches than Llama 3's
// schedule, which the paper says fit), so the row is predicted at the
// fastest of them regardless of memory and flagged out of memory. Without
// the schedule the search keeps interleave 1, whose bubble (15 of 32
// microbatches) is what made the row look right.
TEST(ValidationCsv, AStatedInterleavedScheduleIsNeverPricedAsPlain1F1B) {
  auto meta = [](const std::string& schedule) {
    return Row({{"source", "Grattafiori et al. 2024 Table 4"}, {"model", "Llama-3.1-405B"}, {"layers", ""},
                {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""}, {"seq", "8192"}, {"gpus", "8192"},
                {"gpu", "H100-SXM5-80GB"}, {"tp", "8"}, {"pp", "16"}, {"dp", "64"}, {"cp", "1"}, {"ep", ""},
                {"global_batch", "2048"}, {"micro_batch", ""}, {"recompute", "none"}, {"seq_parallel", ""},
                {"interleave", ""}, {"schedule", schedule}, {"precision", "bf16"}, {"zero", ""},
                {"dp_overlap", ""}, {"tp_overlap", ""}, {"attention", ""}, {"framework", ""},
                {"flops_metric", "model"}, {"measured_iter_s", ""}, {"measured_tflops_per_gpu", "430"},
                {"first_stage_layers", "7"}, {"last_stage_layers", "7"}});
  };
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(TempCsv("interleaved.csv", meta("interleaved") + meta("")), d);
  ASSERT_EQ(r.rows.size(), 2u);
  for (size_t i = 0; i < 2; ++i) ASSERT_EQ(r.rows[i].skipped, "") << i;
  const std::string& a = r.rows[0].assumptions;
  EXPECT_NE(a.find("predicted with the fastest of them regardless of memory"), std::string::npos) << a;
  EXPECT_EQ(a.find("interleave 1,"), std::string::npos) << a;
  EXPECT_TRUE(a.find("interleave 2,") != std::string::npos || a.find("interleave 4,") != std::string::npos) << a;
  EXPECT_TRUE(r.rows[0].predicted_oom);
  const std::string& b = r.rows[1].assumptions;
  EXPECT_NE(b.find("interleave 1,"), std::string::npos) << b;
  EXPECT_FALSE(r.rows[1].predicted_oom);
  // Model TFLOP/s: the interleaved plan's smaller bubble is faster.
  EXPECT_GT(r.rows[0].predicted, r.rows[1].predicted * 1.15);
}

// Llama 3's stated layout is one layer a model chunk: with the first and
// last stages one layer lighter, "the first model chunk on the first stage
// has only the embedding, and the last model chunk on the last stage has
// only output projection and loss calculation" (Grattafiori et al. 2024,
// Sec. 3.3.2), so pp 16 runs 8 chunks a device, 128 virtual stages for 126
// layers plus the embedding and the loss. A row stating interleave 8 is
// read with the embedding and the loss as stages of their own whatever its
// framework (the row names none); before, only a Megatron row was, and this
// one was refused (pp x interleave 128 > 126 layers). At v = 8 the first
// device holds 1 + 15 / 128 of 1F1B's in-flight activations and the plan
// fits the 80 GB it ran in, where interleave 2 and 4 (the most a 126-layer
// split allows without those stages) do not.
TEST(ValidationCsv, Llama3sOneLayerChunksAreInterleave8AndFit) {
  const std::string row =
      Row({{"source", "Grattafiori et al. 2024 Table 4"}, {"model", "Llama-3.1-405B"}, {"layers", ""},
           {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""}, {"seq", "8192"}, {"gpus", "8192"},
           {"gpu", "H100-SXM5-80GB"}, {"tp", "8"}, {"pp", "16"}, {"dp", "64"}, {"cp", "1"}, {"ep", ""},
           {"global_batch", "2048"}, {"micro_batch", "1"}, {"recompute", "none"}, {"seq_parallel", "yes"},
           {"interleave", "8"}, {"schedule", "interleaved"}, {"precision", "bf16"}, {"zero", "2"},
           {"dp_overlap", "yes"}, {"tp_overlap", "yes"}, {"attention", ""}, {"framework", ""},
           {"flops_metric", "model"}, {"measured_iter_s", ""}, {"measured_tflops_per_gpu", "430"},
           {"first_stage_layers", "7"}, {"last_stage_layers", "7"}});
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(TempCsv("llama3_v8.csv", row), d);
  ASSERT_EQ(r.rows.size(), 1u);
  ASSERT_EQ(r.rows[0].skipped, "");
  const std::string& a = r.rows[0].assumptions;
  EXPECT_NE(a.find("embedding and loss counted as a pipeline layer each (pp x interleave 128 > 126 layers)"),
            std::string::npos)
      << a;
  EXPECT_FALSE(r.rows[0].predicted_oom) << a;
}

// A dropless MoE row's host time per kernel launch is its system preset's
// host.op_launch_time (hardware/system_spec.h), not a test of the GPU's
// name: GB200 rows (placed in gb200-nvl72) take Grace's 37.08 us, H100 rows
// in a DGX H100 the Xeon Platinum 8480C's 13.48 us, the same H100 device in
// a DGX GH200 that system's Grace, 33.17 us (TransformerEngine issue 2053's
// torch.nn.Linear forward CPU times, in the presets); a DGX B200, whose
// Xeon Platinum 8570 nobody measured, the stated default, 13.48 us.
TEST(ValidationCsv, DroplessHostTimeIsTheSystemPresetsHostFigure) {
  auto ds = [](const std::string& gpu, const std::string& system) {
    return Row({{"source", "Megatron-Bridge 26.02 performance summary"}, {"model", "DeepSeek-V3"},
                {"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""},
                {"seq", "4096"}, {"gpus", "256"}, {"gpu", gpu}, {"system", system},
                {"tp", "1"}, {"pp", "4"}, {"dp", "64"}, {"cp", "1"}, {"ep", "64"}, {"global_batch", "4096"},
                {"micro_batch", "1"}, {"interleave", ""}, {"recompute", ""}, {"seq_parallel", ""},
                {"precision", "fp8"}, {"zero", ""}, {"dp_overlap", ""}, {"tp_overlap", ""},
                {"attention", "flash"}, {"framework", "megatron-core"}, {"moe_routing", "force-balanced"},
                {"measured_iter_s", "16.5704"}});
  };
  base::Diagnostics d;
  const ValidationReport r =
      ValidateFile(TempCsv("host_cpu.csv", ds("GB200", "") + ds("H100-SXM5-80GB", "DGX-H100") +
                                               ds("H100-SXM5-80GB", "DGX GH200") + ds("B200", "DGX-B200")),
                   d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 4u);
  const std::string expected[] = {
      "dropless MoE: 37.08 us host time per kernel launch (NVIDIA Grace, 72 Arm Neoverse V2 cores: "
      "TransformerEngine issue 2053, torch.nn.Linear forward on GB200)",
      "dropless MoE: 13.48 us host time per kernel launch (Intel Xeon Platinum 8480C: "
      "TransformerEngine issue 2053, torch.nn.Linear forward on an H100 DGX)",
      "dropless MoE: 33.17 us host time per kernel launch (NVIDIA Grace, 72 Arm Neoverse V2 cores: "
      "TransformerEngine issue 2053, torch.nn.Linear forward on GH200)",
      "dropless MoE: 13.48 us host time per kernel launch (Intel Xeon Platinum 8570 not measured: "
      "the Xeon Platinum 8480C's from TransformerEngine issue 2053)"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.rows[i].skipped, "") << i;
    EXPECT_NE(r.rows[i].assumptions.find(expected[i]), std::string::npos) << i << ": " << r.rows[i].assumptions;
  }
}

// The header's columns, in order: what the `rows` branch writes against.
TEST(ValidationCsv, ShippedHeaderIsTheDocumentedOne) {
  std::ifstream in(kRuns);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first + "\n", kHeader);
}

// Rule: a column's value is read. flops_metric says what a measured TFLOP/s
// counts. With full recompute the hardware FLOPs are Narayanan et al. 2021
// Eq. 3, 96 B s L h^2 (1 + s/6h + V/16Lh), the model FLOPs 72 B s L h^2
// (1 + s/6h + V/12Lh); at one plan and one iteration time the two predicted
// TFLOP/s differ by their ratio. Megatron-22B (s 2048, h 6144, L 48, V 51200):
//   s/6h = 2048/36864 = 0.0555556;  V/16Lh = 51200/4718592 = 0.0108507;
//   V/12Lh = 51200/3538944 = 0.0144676;
//   ratio = 96 x 1.0664063 / (72 x 1.0700231) = 102.37500 / 77.04167 = 1.328824.
TEST(ValidationCsv, FlopsMetricColumnIsRead) {
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(
      TempCsv("metric.csv",
              Row({{"measured_iter_s", ""}, {"measured_tflops_per_gpu", "150"}, {"flops_metric", "hardware"}}) +
                  Row({{"measured_iter_s", ""}, {"measured_tflops_per_gpu", "150"}, {"flops_metric", "model"}}) +
                  Row({{"measured_iter_s", ""}, {"measured_tflops_per_gpu", "150"}})),
      d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].metric, "hardware_tflops_per_gpu");
  EXPECT_EQ(r.rows[1].metric, "model_tflops_per_gpu");
  ASSERT_TRUE(r.rows[0].error_pct && r.rows[1].error_pct);
  EXPECT_NEAR(r.rows[0].predicted / r.rows[1].predicted, 1.328824, 1e-5);
  // No metric stated: the figure cannot be compared, and nothing is read
  // out of the notes any more.
  EXPECT_FALSE(r.rows[2].error_pct);
  EXPECT_EQ(r.rows[2].skipped.rfind("measured TFLOP/s without flops_metric", 0), 0u) << r.rows[2].skipped;
}

// Rule: a word outside a column's vocabulary is a located error (file, line,
// column, value, the allowed words), and the row is skipped with it; so is a
// shape cell that contradicts the preset the model names.
TEST(ValidationCsv, BadValueIsALocatedErrorNamingTheAllowedWords) {
  base::Diagnostics d;
  const std::string file = TempCsv("bad.csv", Row({{"recompute", "partial"}}) +
                                                  Row({{"flops_metric", "hfu"}}) +
                                                  Row({{"hidden", "4096"}}));
  const ValidationReport r = ValidateFile(file, d);
  ASSERT_EQ(r.rows.size(), 3u);
  ASSERT_EQ(d.size(), 3u) << d.ToString();
  const std::string expected[] = {
      file + ":2: column 'recompute': got 'partial': must be one of none, selective, full, mla_up_proj, mla_up_proj+mlp, layernorm+moe_act, op (blank: not stated)",
      file + ":3: column 'flops_metric': got 'hfu': must be one of model, hardware (blank: not stated)",
      file + ":4: column 'hidden': got '4096': the model 'Megatron-22B' is preset 'megatron-22b', whose "
             "hidden is 6144 (leave the cell blank, or name a model no preset answers to)"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(d.items()[i].message, expected[i]);
    EXPECT_EQ(d.items()[i].where.line, static_cast<int>(i + 2));
    EXPECT_EQ(r.rows[i].skipped, "invalid cell: " + expected[i]);
    EXPECT_FALSE(r.rows[i].error_pct);
  }
}

// Rule (issue 15): `layers/N` is full recompute of every N-th layer
// (torchtitan's selective layer checkpointing; TrainingPlan::
// recompute_interval). The Megatron-22B row (tp 8, pp 1, dp 1, one
// microbatch, nothing overlapped) recomputes 24 of its 48 layers at
// layers/2, so its iteration is the mean of no recompute's and full
// recompute's: every term that recompute adds (the forward and its TP
// all-reduces) scales with the recomputed layers. N below 2 or not a whole
// number is a located error.
TEST(ValidationCsv, LayersOverNRecomputesEveryNthLayer) {
  base::Diagnostics d;
  const std::string file = TempCsv("layers.csv", Row({{"recompute", "none"}}) + Row({{"recompute", "full"}}) +
                                                     Row({{"recompute", "layers/2"}}) +
                                                     Row({{"recompute", "layers/1"}}) +
                                                     Row({{"recompute", "layers/x"}}));
  const ValidationReport r = ValidateFile(file, d);
  ASSERT_EQ(r.rows.size(), 5u);
  for (size_t i = 0; i < 3; ++i) ASSERT_TRUE(r.rows[i].error_pct) << r.rows[i].skipped;
  const double none = r.rows[0].predicted, full = r.rows[1].predicted, half = r.rows[2].predicted;
  EXPECT_GT(full, none);
  EXPECT_NEAR(half, (none + full) / 2, 1e-9 * full);
  ASSERT_EQ(d.size(), 2u) << d.ToString();
  EXPECT_EQ(d.items()[0].message, file + ":5: column 'recompute': got 'layers/1': layers/N needs a whole N "
                                         "from 2 to 1000000 (every N-th layer recomputed)");
  EXPECT_EQ(d.items()[1].message, file + ":6: column 'recompute': got 'layers/x': layers/N needs a whole N "
                                         "from 2 to 1000000 (every N-th layer recomputed)");
  EXPECT_FALSE(r.rows[3].error_pct);
  EXPECT_FALSE(r.rows[4].error_pct);
}

// A Llama-2-7B row that names the preset and leaves the shape blank: tp 1,
// dp 8, 64 sequences of 4,096 tokens, micro-batch 1, no recompute,
// overlapped data-parallel communication, with `attention`.
std::string Llama2_7bRow(const std::string& attention) {
  return Row({{"model", "Llama-2-7B"}, {"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""},
              {"vocab", ""}, {"seq", "4096"}, {"tp", "1"}, {"dp", "8"}, {"global_batch", "64"},
              {"micro_batch", "1"}, {"recompute", "none"}, {"attention", attention}, {"dp_overlap", "yes"},
              {"measured_iter_s", "1"}});
}

// The plan Llama2_7bRow() states, on the preset llama2-7b and one 8-GPU
// Selene node; the attention kernel is left to the test.
Scenario Llama2_7bRowScenario() {
  Scenario s;
  s.model = test::Model("llama2-7b");
  s.system = test::System("selene", 1);
  auto& p = s.training;
  p.tp = 1;
  p.pp = 1;
  p.dp = 8;
  p.micro_batch = 1;
  p.recompute = parallelism::Recompute::kNone;
  p.dp_overlap = true;
  p.zero = 0;
  // As the harness runs a Megatron-LM row of 2022 (Row()'s framework and
  // source): Q, K and V split off one fused projection, and neither
  // Transformer Engine's RoPE kernel nor its packed layout's copies.
  p.qkv_split_cat = true;
  p.rope_kernel = p.packed_qkv_copies = false;
  s.workload.global_batch = 64;
  s.workload.seq_len = 4096;
  return s;
}

// Counting the embedding and the loss as a pipeline layer each is a plan
// field no table states (Megatron-Bridge's Llama 3.1 405B recipe sets it);
// a Megatron row whose L + 2 units divide over its pp x interleave virtual
// stages is predicted both ways and keeps the faster. Llama 3.1 405B, pp 16
// x interleave 4: 128 units over 64 virtual stages. The split puts 7 layers
// and the embedding on the first stage, 7 and the LM head on the last, 8 on
// each middle one; the even split leaves its 126 - 16 x 7 = 14 layers over
// to the 14 middle stages (parallelism::EvenSplitLayers), the same 7 / 8 / 7,
// so the split is not faster and the Megatron row keeps the even split, as
// a row naming no framework does (the split is not offered to it): the same
// prediction, and the same as the Megatron row stating that layout
// (first_stage_layers = last_stage_layers = 7). (A DeepSpeed row would
// differ by its QKV split's backward concatenation and its attention
// without Transformer Engine's copies.) (With ceil(126/16) = 8 layers on
// the end stages, as the closed form priced the even split before, the
// split was faster.)
TEST(ValidationCsv, MegatronRowsMayCountEmbeddingAndLossAsLayers) {
  base::Diagnostics d;
  std::map<std::string, std::string> row = {
      {"source", "split test"}, {"model", "llama3-405b"}, {"layers", ""}, {"hidden", ""}, {"heads", ""},
      {"ffn", ""}, {"vocab", ""}, {"seq", "8192"}, {"gpus", "256"}, {"gpu", "GB200"}, {"tp", "4"},
      {"pp", "16"}, {"dp", "4"}, {"global_batch", "1536"}, {"micro_batch", "1"}, {"recompute", "full"},
      {"seq_parallel", "yes"}, {"interleave", "4"}, {"zero", "1"}, {"dp_overlap", "yes"},
      {"tp_overlap", "yes"}, {"attention", "flash"}, {"framework", "megatron-core"},
      {"measured_iter_s", "60"}};
  const std::string megatron = Row(row);
  row["first_stage_layers"] = row["last_stage_layers"] = "7";
  const std::string stated = Row(row);
  row.erase("first_stage_layers");
  row.erase("last_stage_layers");
  row["framework"] = "";
  const std::string file = TempCsv("split.csv", megatron + Row(row) + stated);
  const ValidationReport r = ValidateFile(file, d);
  ASSERT_EQ(r.rows.size(), 3u) << d.ToString();
  for (const auto& x : r.rows) ASSERT_TRUE(x.error_pct) << x.skipped;
  EXPECT_EQ(r.rows[0].assumptions.find("embedding and loss"), std::string::npos) << r.rows[0].assumptions;
  EXPECT_EQ(r.rows[1].assumptions.find("embedding and loss"), std::string::npos) << r.rows[1].assumptions;
  EXPECT_EQ(r.rows[0].predicted, r.rows[1].predicted);
  EXPECT_EQ(r.rows[0].predicted, r.rows[2].predicted);
}

// Rule: a row naming a preset may leave the shape blank; the preset's shape
// is used, the same prediction as with the shape spelled out.
TEST(ValidationCsv, PresetNamedRowWithBlankShapeRunsThePreset) {
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(
      TempCsv("preset.csv", Row() + Row({{"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""}})),
      d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 2u);
  ASSERT_TRUE(r.rows[0].error_pct && r.rows[1].error_pct) << r.rows[1].skipped;
  EXPECT_EQ(r.rows[0].predicted, r.rows[1].predicted);
  EXPECT_NE(r.rows[1].assumptions.find("model preset megatron-22b"), std::string::npos);
  // A dense Llama-style preset (SwiGLU, RMSNorm, rotary, no biases) runs as
  // itself, not as a GPT of its size: the prediction is the estimator's on
  // the preset llama2-7b with the row's plan on one 8-GPU Selene node.
  base::Diagnostics d2;
  const ValidationReport l = ValidateFile(TempCsv("llama.csv", Llama2_7bRow("flash")), d2);
  ASSERT_TRUE(d2.ok()) << d2.ToString();
  ASSERT_TRUE(l.rows[0].error_pct) << l.rows[0].skipped;
  EXPECT_NE(l.rows[0].assumptions.find("model preset llama2-7b"), std::string::npos);
  Scenario s = Llama2_7bRowScenario();
  auto& p = s.training;
  p.attention = parallelism::Attention::kFlash;
  const TrainingEstimate e = TrainingEstimator(s.model, s.system).Run(p, s.workload);
  ASSERT_GT(e.iteration_s, 0);
  EXPECT_DOUBLE_EQ(l.rows[0].predicted, e.iteration_s);
}

// Rule: attention `triton` (llm-foundry's attn_impl: triton) runs the plan
// with the Triton FlashAttention kernel (Attention::kTriton), a `flash2` row
// with FlashAttention-2, each as stated (nothing assumed about the kernel).
// The Triton kernel is slower (FlashAttention-2's efficiency / 1.4 forward,
// / 2 backward; Dao 2023, Sec. 4.1), so the same row predicts a longer step.
TEST(ValidationCsv, TritonAttentionRowsRunTheTritonKernel) {
  base::Diagnostics d;
  const ValidationReport r =
      ValidateFile(TempCsv("triton.csv", Llama2_7bRow("triton") + Llama2_7bRow("flash2")), d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 2u);
  ASSERT_TRUE(r.rows[0].error_pct && r.rows[1].error_pct) << r.rows[0].skipped << r.rows[1].skipped;
  for (const auto& row_result : r.rows) EXPECT_EQ(row_result.assumptions.find("FlashAttention"), std::string::npos);
  EXPECT_GT(r.rows[0].predicted, r.rows[1].predicted);
  Scenario s = Llama2_7bRowScenario();
  auto& p = s.training;
  p.attention = parallelism::Attention::kTriton;
  const TrainingEstimate triton = TrainingEstimator(s.model, s.system).Run(p, s.workload);
  p.attention = parallelism::Attention::kFlash2;
  const TrainingEstimate fa2 = TrainingEstimator(s.model, s.system).Run(p, s.workload);
  ASSERT_GT(triton.iteration_s, fa2.iteration_s);
  EXPECT_DOUBLE_EQ(r.rows[0].predicted, triton.iteration_s);
  EXPECT_DOUBLE_EQ(r.rows[1].predicted, fa2.iteration_s);
}

// Rule: the architecture columns (kv_heads, activation, norm, position,
// tied_embeddings, bias) replace the GPT defaults of a shape given by
// columns: Llama 2 7B's shape with its architecture spelled out predicts
// exactly what the preset llama2-7b does. A litgpt row runs the eager
// element-wise kernels (training.elementwise: eager) and says so: more
// memory traffic, a longer step.
TEST(ValidationCsv, ArchitectureColumnsReplaceTheGptDefaults) {
  const std::map<std::string, std::string> plan = {
      {"seq", "4096"}, {"tp", "1"}, {"dp", "8"}, {"global_batch", "64"}, {"micro_batch", "1"},
      {"recompute", "none"}, {"attention", "flash"}, {"dp_overlap", "yes"}, {"measured_iter_s", "1"}};
  auto with = [&](std::map<std::string, std::string> cells) {
    for (const auto& kv : plan) cells.insert(kv);
    return Row(cells);
  };
  const std::map<std::string, std::string> spelled = {
      {"model", "llama-shaped-7b"}, {"layers", "32"}, {"hidden", "4096"}, {"heads", "32"},
      {"ffn", "11008"}, {"vocab", "32000"}, {"kv_heads", "32"}, {"activation", "swiglu"},
      {"norm", "rmsnorm"}, {"position", "rope"}, {"tied_embeddings", "no"}, {"bias", "no"}};
  auto litgpt = spelled;
  litgpt["framework"] = "litgpt";
  auto gpt = spelled;
  for (const char* k : {"kv_heads", "activation", "norm", "position", "tied_embeddings", "bias"}) gpt[k] = "";
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(
      TempCsv("arch.csv", with({{"model", "Llama-2-7B"}, {"layers", ""}, {"hidden", ""}, {"heads", ""},
                                {"ffn", ""}, {"vocab", ""}}) +
                              with(spelled) + with(litgpt) + with(gpt)),
      d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 4u);
  for (const auto& row : r.rows) ASSERT_TRUE(row.error_pct) << row.skipped;
  EXPECT_DOUBLE_EQ(r.rows[1].predicted, r.rows[0].predicted);
  EXPECT_GT(r.rows[2].predicted, r.rows[1].predicted);
  EXPECT_NE(r.rows[2].assumptions.find("eager element-wise kernels (litgpt runs PyTorch eager code)"),
            std::string::npos);
  EXPECT_EQ(r.rows[1].assumptions.find("eager"), std::string::npos);
  // Without the columns the same shape is a GPT (an ungated MLP of 11008:
  // two matrices instead of three), a different and shorter step.
  EXPECT_LT(r.rows[3].predicted, r.rows[1].predicted);
  EXPECT_NE(r.rows[3].assumptions.find("GPT architecture"), std::string::npos);
}

// Rule: the loss kernels follow the row's framework (training.loss_kernel,
// docs/loss-path.md): llm-foundry's fused bf16 cross entropy, torchtitan's
// and litgpt's PyTorch cross entropy on fp32 logits, and Megatron-Core's
// vocabulary-parallel fp32 loss (the default) for the Megatron frameworks
// and a row that names none. Korthikanti's 22B row (every plan field
// stated, ZeRO 0, materialised attention) under llm-foundry differs from the
// same row under no framework in its loss: 4 x 2048 tokens x 51,200 / 8
// logits on the A100, LossTimes(fused_bf16) against LossTimes(megatron_fp32)
// (tests/estimate_test.cpp works both by hand), and in its bias gradients,
// which PyTorch reduces in kernels of its own (training.separate_bias_grad:
// 9.090 ms over the 48 layers, tests/estimate_test.cpp,
// SeparateBiasGradientsReadEachOutputGradientOnceMore); a row naming no
// framework is taken as Transformer Engine's, which reduces them in its
// GEMM's epilogue. And in its optimizer step: Composer's DecoupledAdamW as
// separate passes and FSDP's always-rescaling clip (training.optimizer_step
// = pytorch), 96 B a parameter with the zeroed buffer where the fused step
// moves 42 (PytorchOptimizerStepPassesOverEachParameterPerOperation), as
// torchtitan's foreach AdamW and clip do too. And in the backward's
// concatenation of the Q, K and V gradients split off MPT's fused
// projection (training.qkv_split_cat: 2.363 ms over the 48 layers,
// FusedQkvSplitConcatenatesTheGradientsInTheBackward), which litgpt and
// Megatron-LM of 2022 pay too and torchtitan's separate projections do not.
// And in PyTorch's LayerNorm backward, whose weight gradient is a kernel of
// its own (training.norm_weight_grad_kernel: 12.029 ms over the 97 norms,
// 124.0 us each, NormWeightGradientKernelReadsTheGradientAndInputAgain),
// which torchtitan's and litgpt's rows of this LayerNorm model pay too; the
// other two rows run the norm's one-pass backward (Transformer Engine; and
// apex's persistent kernel for Megatron-LM of 2022 at hidden 6,144).
TEST(ValidationCsv, LossKernelsFollowTheFramework) {
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(
      TempCsv("loss.csv", Row({{"framework", "llm-foundry"}}) + Row({{"framework", "torchtitan"}}) +
                              Row({{"framework", "litgpt"}}) + Row({{"framework", "megatron-lm"}}) +
                              Row({{"framework", ""}})),
      d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 5u);
  for (const auto& row : r.rows) ASSERT_TRUE(row.error_pct) << row.skipped;
  EXPECT_NE(r.rows[0].assumptions.find("fused bf16 cross entropy (llm-foundry loss_fn fused_crossentropy"),
            std::string::npos);
  EXPECT_NE(r.rows[1].assumptions.find("PyTorch cross entropy on fp32 logits (torchtitan"), std::string::npos);
  EXPECT_NE(r.rows[2].assumptions.find("PyTorch cross entropy on fp32 logits (litgpt"), std::string::npos);
  EXPECT_EQ(r.rows[3].assumptions.find("cross entropy"), std::string::npos);
  EXPECT_EQ(r.rows[4].assumptions.find("cross entropy"), std::string::npos);
  const hardware::DeviceSpec a100 = test::System("selene", 1).device;
  const engine::PassTimes fp32 = engine::LossTimes(a100, 8192, 6400, parallelism::LossKernel::kMegatronFp32);
  const engine::PassTimes bf16 = engine::LossTimes(a100, 8192, 6400, parallelism::LossKernel::kFusedBf16);
  const double bias_grads = 48 * (hardware::MemoryTime(a100, 37748736.0) + 2 * hardware::MemoryTime(a100, 100663296.0) +
                                  hardware::MemoryTime(a100, 50331648.0));
  EXPECT_NEAR(bias_grads, 9.090e-3, 0.001e-3);
  const double params = 2759282688.0;
  const double optimizer = hardware::MemoryTime(a100, params * 96.0) - hardware::MemoryTime(a100, params * 42.0);
  EXPECT_NEAR(optimizer, 88.04e-3, 0.01e-3);
  const double qkv_cat = 48 * hardware::MemoryTime(a100, 75497472.0);
  EXPECT_NEAR(qkv_cat, 2.363e-3, 0.001e-3);
  const double norm_grads = 97 * hardware::MemoryTime(a100, 201326592.0);
  EXPECT_NEAR(norm_grads, 12.029e-3, 0.001e-3);
  EXPECT_NEAR(r.rows[4].predicted - r.rows[0].predicted,
              fp32.fwd + fp32.bwd - bf16.fwd - bf16.bwd - bias_grads - optimizer - qkv_cat - norm_grads, 1e-12);
  for (size_t i : {0u, 1u})
    EXPECT_NE(r.rows[i].assumptions.find("PyTorch's optimizer step"), std::string::npos) << r.rows[i].assumptions;
  for (size_t i : {2u, 3u, 4u})
    EXPECT_EQ(r.rows[i].assumptions.find("PyTorch's optimizer step"), std::string::npos) << r.rows[i].assumptions;
  const std::string split = "Q, K and V split off one fused projection";
  for (size_t i : {0u, 2u, 3u})
    EXPECT_NE(r.rows[i].assumptions.find(split), std::string::npos) << r.rows[i].assumptions;
  for (size_t i : {1u, 4u})
    EXPECT_EQ(r.rows[i].assumptions.find(split), std::string::npos) << r.rows[i].assumptions;
  const std::string norm_kernel = "PyTorch's LayerNorm backward";
  for (size_t i : {0u, 1u, 2u})
    EXPECT_NE(r.rows[i].assumptions.find(norm_kernel), std::string::npos) << r.rows[i].assumptions;
  for (size_t i : {3u, 4u})
    EXPECT_EQ(r.rows[i].assumptions.find(norm_kernel), std::string::npos) << r.rows[i].assumptions;
  const std::string own_bias = "bias gradients reduced in kernels of their own";
  for (size_t i : {0u, 1u, 2u, 3u})
    EXPECT_NE(r.rows[i].assumptions.find(own_bias), std::string::npos) << r.rows[i].assumptions;
  EXPECT_EQ(r.rows[4].assumptions.find(own_bias), std::string::npos) << r.rows[4].assumptions;
}

// The Megatron-LM README 2024 rows state only `tied_embeddings no` among the
// architecture columns: their model sizes are the parameter counts with the
// output layer untied (GPT 1.7B: 24 (12 h^2 + 13 h) + 2 V h + 4096 h + 2 h =
// 1,753,862,144 at h 2048, V 131072; tied, 1,485,426,688 would be "1.5B").
// Such a row is still Megatron-LM's GPT, so it keeps the GPT dropout of
// megatron/training/arguments.py (0.1 / 0.1); before, stating the one column
// dropped the dropout too. The untied row carries V h = 268,435,456 more
// parameters (its own gradient, optimizer shard and DP traffic): slower.
TEST(ValidationCsv, UntiedGptRowKeepsGptDropout) {
  auto readme = [](const std::string& tied) {
    return Row({{"source", "NVIDIA/Megatron-LM README"}, {"model", "readme-shaped-1.7b"},
                {"layers", "24"}, {"hidden", "2048"}, {"heads", "16"}, {"ffn", ""}, {"vocab", "131072"},
                {"tied_embeddings", tied}, {"seq", "4096"}, {"gpus", "48"}, {"gpu", "H100-SXM5-80GB"},
                {"tp", "1"}, {"pp", "1"}, {"dp", "48"}, {"global_batch", "192"}, {"micro_batch", "4"},
                {"recompute", "none"}, {"zero", "1"}, {"dp_overlap", "yes"}, {"attention", "flash"},
                {"flops_metric", "model"}, {"measured_iter_s", ""}, {"measured_tflops_per_gpu", "408.8"}});
  };
  base::Diagnostics d;
  const ValidationReport r =
      ValidateFile(TempCsv("untied.csv", readme("") + readme("yes") + readme("no")), d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 3u);
  for (const auto& row : r.rows) {
    ASSERT_TRUE(row.error_pct) << row.skipped;
    EXPECT_NE(row.assumptions.find("dropout 0.1 on the residual branches and attention"), std::string::npos)
        << row.assumptions;
  }
  EXPECT_NE(r.rows[0].assumptions.find("biases, tied embeddings)"), std::string::npos) << r.rows[0].assumptions;
  EXPECT_NE(r.rows[2].assumptions.find("GPT architecture (GeLU, LayerNorm, learned positions, biases)"),
            std::string::npos)
      << r.rows[2].assumptions;
  EXPECT_DOUBLE_EQ(r.rows[1].predicted, r.rows[0].predicted);
  EXPECT_LT(r.rows[2].predicted, r.rows[1].predicted);

  models::ModelSpec m;
  m.layers = 24;
  m.hidden = 2048;
  m.heads = 16;
  m.vocab = 131072;
  m.max_seq = 4096;
  m.tied_embeddings = false;
  EXPECT_DOUBLE_EQ(models::ParameterCount(m, 4096), 1753862144.0);
  m.tied_embeddings = true;
  EXPECT_DOUBLE_EQ(models::ParameterCount(m, 4096), 1485426688.0);
}

// Rule: an unstated micro batch is the one the search finds fastest, among
// the plans consistent with every stated field (here only the micro batch
// is free: the divisors of 4 / dp 1 = {1, 2, 4}, three plans), and the row's
// assumptions say so.
TEST(ValidationCsv, UnstatedMicroBatchIsSearched) {
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(TempCsv("mb.csv", Row({{"micro_batch", ""}})), d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_TRUE(r.rows[0].error_pct) << r.rows[0].skipped;
  // The same row with each micro batch stated: the search's pick is the
  // fastest of the three.
  double best = 0;
  int64_t best_mb = 0;
  for (const int64_t mb : {1, 2, 4}) {
    base::Diagnostics di;
    const ValidationReport one = ValidateFile(TempCsv("mb" + std::to_string(mb) + ".csv",
                                             Row({{"micro_batch", std::to_string(mb)}})),
                                     di);
    ASSERT_TRUE(one.rows[0].error_pct) << one.rows[0].skipped;
    EXPECT_EQ(one.rows[0].assumptions.find("searched"), std::string::npos);  // nothing was free
    if (best_mb == 0 || one.rows[0].predicted < best) {
      best = one.rows[0].predicted;
      best_mb = mb;
    }
  }
  EXPECT_DOUBLE_EQ(r.rows[0].predicted, best);
  EXPECT_NE(r.rows[0].assumptions.find("searched (the fastest of the 3 plans consistent with the stated "
                                       "fields): micro batch " + std::to_string(best_mb)),
            std::string::npos)
      << r.rows[0].assumptions;
}

// Rule: a row lacking what cannot be searched (global batch, GPU count,
// device) is skipped with the reason; it is never predicted, so never
// counted as -100 % in the mean.
TEST(ValidationCsv, RowWithoutGlobalBatchIsSkippedWithTheReason) {
  base::Diagnostics d;
  const ValidationReport r =
      ValidateFile(TempCsv("missing.csv", Row({{"global_batch", ""}}) + Row({{"gpus", ""}}) + Row({{"gpu", ""}}) + Row()), d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0].skipped, "global batch missing (the step's work cannot be assumed)");
  EXPECT_EQ(r.rows[1].skipped, "gpus missing (the GPU count cannot be assumed)");
  EXPECT_EQ(r.rows[2].skipped, "gpu missing (the device cannot be assumed)");
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(r.rows[static_cast<size_t>(i)].error_pct);
  EXPECT_EQ(r.evaluated, 1);
  EXPECT_EQ(r.skipped, 3);
  // The mean is the one predicted row's error alone.
  ASSERT_TRUE(r.rows[3].error_pct);
  EXPECT_DOUBLE_EQ(r.mape_pct, std::fabs(*r.rows[3].error_pct));
}

// Rule: an unstated field is held where the row's framework allows only one
// value: llm-foundry trains with FSDP alone (ZeRO-3, tp = pp = 1). 8 A100:
// the search is left the micro batch only, the divisors of 64 / dp 8 = 8,
// {1, 2, 4, 8}, four plans (dp_overlap is not varied under ZeRO-3).
TEST(ValidationCsv, FrameworkHoldsWhatItAllowsOnly) {
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(
      TempCsv("foundry.csv",
              Row({{"source", "MosaicML llm-foundry 2023 throughput table"}, {"model", "Llama-2-7B"},
                   {"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""}, {"seq", "2048"},
                   {"tp", ""}, {"pp", ""}, {"dp", ""}, {"cp", ""}, {"ep", ""}, {"global_batch", "64"},
                   {"micro_batch", ""}, {"recompute", "none"}, {"seq_parallel", ""}, {"interleave", ""},
                   {"zero", ""}, {"dp_overlap", ""}, {"tp_overlap", ""}, {"attention", "flash"},
                   {"framework", "llm-foundry"}, {"measured_iter_s", "1"}})),
      d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_TRUE(r.rows[0].error_pct) << r.rows[0].skipped;
  const std::string& a = r.rows[0].assumptions;
  EXPECT_NE(a.find("ZeRO-3 (llm-foundry shards with FSDP)"), std::string::npos) << a;
  // And runs PyTorch FSDP as Composer configures it (parallel_comm.h,
  // Zero3GathersPerMicrobatch / Zero3ReduceBytesPerParam).
  EXPECT_NE(a.find("FSDP: recompute on the backward's gathered weights, gradients reduced in fp32"),
            std::string::npos)
      << a;
  EXPECT_NE(a.find("searched (the fastest of the 4 plans consistent with the stated fields): dp 8, "
                   "micro batch "),
            std::string::npos)
      << a;
}

// Rule: reduce_dtype states the datatype FSDP reduce-scatters gradients in.
// llm-foundry's PURE rows (Composer's mixed_precision PURE: reduce_dtype the
// run's precision, composer/trainer/dist_strategy.py prepare_fsdp_module)
// say bf16; a blank cell keeps the framework's fp32 (Composer's DEFAULT).
// Llama 2 7B under FSDP on one DGX A100 (dp 8), one microbatch, no
// recompute, the data-parallel traffic not overlapped: dp_comm is two
// all-gathers of 2P bytes and one reduce-scatter, of 4P bytes in fp32 and
// 2P in bf16 (tests/estimate_test.cpp,
// ZeroThreeGathersAndReduceBytesFollowTheFramework), P = 6,738,415,616, so
// the bf16 row is RS(4P) - RS(2P) faster (the other terms are the same).
TEST(ValidationCsv, ReduceDtypeColumnSetsTheFsdpReduceScatterDatatype) {
  auto row = [](const std::string& reduce) {
    return Row({{"source", "MosaicML llm-foundry throughput table"}, {"model", "Llama-2-7B"},
                {"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""}, {"seq", "4096"},
                {"gpu", "A100-SXM4-80GB"}, {"system", "dgx-a100-superpod"}, {"tp", "1"}, {"dp", "8"},
                {"global_batch", "8"}, {"micro_batch", "1"}, {"recompute", "none"}, {"zero", "3"},
                {"dp_overlap", "no"}, {"attention", "flash"}, {"framework", "llm-foundry"},
                {"measured_iter_s", "1"}, {"reduce_dtype", reduce}});
  };
  base::Diagnostics d;
  const std::string file = TempCsv("reduce.csv", row("") + row("bf16") + row("fp32") + row("fp64"));
  const ValidationReport r = ValidateFile(file, d);
  ASSERT_EQ(d.size(), 1u) << d.ToString();  // the fp64 cell, below
  ASSERT_EQ(r.rows.size(), 4u);
  for (size_t i = 0; i < 3; ++i) ASSERT_TRUE(r.rows[i].error_pct) << i << ": " << r.rows[i].skipped;
  EXPECT_NE(r.rows[0].assumptions.find("gradients reduced in fp32"), std::string::npos) << r.rows[0].assumptions;
  EXPECT_EQ(r.rows[1].assumptions.find("reduced in fp32"), std::string::npos) << r.rows[1].assumptions;
  EXPECT_EQ(r.rows[2].assumptions.find("reduced in fp32"), std::string::npos) << r.rows[2].assumptions;
  EXPECT_DOUBLE_EQ(r.rows[2].predicted, r.rows[0].predicted);

  const Scenario s = test::Llama2_7bFsdpOnOneDgxA100();
  const TrainingEstimator est(s.model, s.system);
  const hardware::GroupPlacement g = est.network().Place(8, 1);
  const double P = 6738415616.0;
  const double rs4 = est.network().Time(hardware::Collective::kReduceScatter, 4 * P, g);
  const double rs2 = est.network().Time(hardware::Collective::kReduceScatter, 2 * P, g);
  ASSERT_GT(rs4, rs2);
  EXPECT_NEAR(r.rows[0].predicted - r.rows[1].predicted, rs4 - rs2, 1e-9 * r.rows[0].predicted);

  EXPECT_EQ(r.rows[3].skipped, "invalid cell: " + file +
                                   ":5: column 'reduce_dtype': got 'fp64': must be one of fp32, bf16, fp16 "
                                   "(blank: not stated)");
}

// Rule: a Megatron-LM row from before 2022 runs the weight-gradient
// accumulation unfused (training.grad_accumulation_fusion = false: apex's
// fused wgrad kernel appeared in 2022, after Narayanan et al.'s runs; the
// release of Korthikanti et al.'s 2022 features turned the fusion on) and,
// before 2024, divides its gradient buffer by dp even at dp 1
// (training.grad_scale_at_dp1); a 2024 Megatron-LM row and a Megatron-Core
// row do neither. A Megatron-LM row of 2024 on checks the buffer for a NaN
// before reducing it (training.grad_nan_check, --check-for-nan-in-loss-and-
// grad on by default), which the Megatron-Core (NeMo) row does not. The 22B
// node (one microbatch, dp 1): dated 2021 the row runs 16.308 ms
// (2,759,282,688 parameters x 10 B) + 13.043 ms (x 8 B) slower than the
// Megatron-Core row, dated 2022 13.043 ms, dated 2024 6.522 ms (x 4 B), at
// the A100 80GB's 1.692 TB/s (tests/estimate_test.cpp,
// UnfusedGradientAccumulationPassesOverTheParametersEveryMicrobatch). The
// rows before 2024 also reduce their bias gradients in kernels of their own,
// Megatron-LM's layers before Transformer Engine (training.
// separate_bias_grad): 9.090 ms more (SeparateBiasGradientsReadEachOutput-
// GradientOnceMore); the 2024 row and the Megatron-Core row do it in the
// GEMM's epilogue. They also concatenate the Q, K and V gradients split off
// the fused projection (training.qkv_split_cat, 2.363 ms; FusedQkvSplit-
// ConcatenatesTheGradientsInTheBackward), which the 2024 row and the
// Megatron-Core row, run with Transformer Engine, are not taken to. The
// 2021 row runs Megatron's non-persistent LayerNorm, whose backward reads
// the gradient and the input again for the weight's (training.
// norm_weight_grad_kernel: 12.029 ms over the 97 norms,
// LossKernelsFollowTheFramework); from 2022 the persistent kernel's one
// pass, as Transformer Engine's.
TEST(ValidationCsv, MegatronLmOf2021AccumulatesGradientsUnfused) {
  base::Diagnostics d;
  const ValidationReport r = ValidateFile(
      TempCsv("gradacc.csv", Row({{"source", "Narayanan et al. 2021"}}) + Row() +
                                 Row({{"source", "NVIDIA/Megatron-LM README (2024-07)"}}) +
                                 Row({{"source", "NVIDIA NeMo performance summary"},
                                      {"framework", "megatron-core"}})),
      d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(r.rows.size(), 4u);
  for (const auto& row : r.rows) ASSERT_TRUE(row.error_pct) << row.skipped;
  const std::string unfused = "unfused weight-gradient accumulation";
  const std::string divided = "gradient buffer divided by dp even at dp 1";
  auto has = [&](size_t i, const std::string& what) {
    return r.rows[i].assumptions.find(what) != std::string::npos;
  };
  EXPECT_TRUE(has(0, unfused) && has(0, divided)) << r.rows[0].assumptions;
  EXPECT_TRUE(!has(1, unfused) && has(1, divided)) << r.rows[1].assumptions;
  for (size_t i : {2u, 3u}) EXPECT_TRUE(!has(i, unfused) && !has(i, divided)) << r.rows[i].assumptions;
  const std::string nan_check = "a NaN check of the gradient buffer";
  EXPECT_TRUE(has(2, nan_check)) << r.rows[2].assumptions;
  for (size_t i : {0u, 1u, 3u}) EXPECT_FALSE(has(i, nan_check)) << r.rows[i].assumptions;
  const std::string own_bias = "bias gradients reduced in kernels of their own";
  for (size_t i : {0u, 1u}) EXPECT_TRUE(has(i, own_bias)) << r.rows[i].assumptions;
  for (size_t i : {2u, 3u}) EXPECT_FALSE(has(i, own_bias)) << r.rows[i].assumptions;
  const std::string two_pass_ln = "Megatron's non-persistent fused LayerNorm";
  EXPECT_TRUE(has(0, two_pass_ln)) << r.rows[0].assumptions;
  for (size_t i : {1u, 2u, 3u}) EXPECT_FALSE(has(i, two_pass_ln)) << r.rows[i].assumptions;
  EXPECT_NEAR(r.rows[0].predicted - r.rows[3].predicted,
              16.308e-3 + 13.043e-3 + 9.090e-3 + 2.363e-3 + 12.029e-3, 0.002e-3);
  EXPECT_NEAR(r.rows[1].predicted - r.rows[3].predicted, 13.043e-3 + 9.090e-3 + 2.363e-3, 0.001e-3);
  EXPECT_NEAR(r.rows[2].predicted - r.rows[3].predicted, 6.522e-3, 0.001e-3);
}

// FixedKnobs (core/search/plan_space.h): a held knob is the only value
// enumerated. Two devices, a 2-layer model, global batch 2, no offload
// (the space of search_test's CandidateCountWorkedByHand, 57 plans):
//   tp 1, pp 1, cp 1 held -> dp 2, micro batch {1}:
//     zero 0,1,2 x dp_overlap 2 + zero 3 = 7, recompute 3       -> 21
//   + zero held at 1: 1 x dp_overlap 2 x recompute 3              ->  6
//   + recompute held too                                          ->  2
//   zero free up to 1 (zero_max), dp_overlap held: 2 x 1 x 3      ->  6
TEST(ValidationSearch, FixedKnobsNarrowTheSpace) {
  models::ModelSpec m;
  m.layers = 2;
  m.hidden = 64;
  m.heads = 4;
  m.vocab = 128;
  parallelism::Workload w;
  w.global_batch = 2;
  w.seq_len = 16;
  PlanSpaceOptions o;
  o.offload = false;
  o.all_group_orders = false;
  o.fixed.tp = 1;
  o.fixed.pp = 1;
  o.fixed.cp = 1;
  EXPECT_EQ(CountCandidates(m, EnumerateShapes(m, w, 2, o), o), 21u);
  o.fixed.zero = 1;
  EXPECT_EQ(CountCandidates(m, EnumerateShapes(m, w, 2, o), o), 6u);
  o.fixed.recompute = static_cast<int>(parallelism::Recompute::kFull);
  EXPECT_EQ(CountCandidates(m, EnumerateShapes(m, w, 2, o), o), 2u);
  o.fixed.zero = -1;
  o.fixed.zero_max = 1;
  o.fixed.recompute = -1;
  o.fixed.dp_overlap = 0;
  EXPECT_EQ(CountCandidates(m, EnumerateShapes(m, w, 2, o), o), 6u);
}

// ... and the search returns a plan with every held knob at its value.
TEST(ValidationSearch, SearchKeepsTheHeldKnobs) {
  base::Diagnostics d;
  auto s = LoadScenarioFile("gpt3-175b-a100", PresetStore(kConfigs), d);
  ASSERT_TRUE(s.has_value()) << d.ToString();
  SearchOptions o;
  o.top = 3;
  o.threads = 1;
  o.space.offload = false;
  o.space.all_group_orders = false;
  o.space.fixed.tp = 8;
  o.space.fixed.pp = 8;
  o.space.fixed.recompute = static_cast<int>(parallelism::Recompute::kSelective);
  o.space.fixed.sequence_parallel = 1;
  o.space.fixed.zero = 1;
  o.space.fixed.dp_overlap = 0;
  o.space.fixed.tp_comm_overlap = 0;
  const SearchResult r = Search(*s, o);
  ASSERT_FALSE(r.top.empty()) << r.why_none;
  for (const auto& c : r.top) {
    EXPECT_EQ(c.knobs.tp, 8);
    EXPECT_EQ(c.knobs.pp, 8);
    EXPECT_EQ(c.knobs.recompute, parallelism::Recompute::kSelective);
    EXPECT_TRUE(c.knobs.sequence_parallel);
    EXPECT_EQ(c.knobs.zero, 1);
    EXPECT_FALSE(c.knobs.dp_overlap);
    EXPECT_FALSE(c.knobs.tp_comm_overlap);
  }
}

// Issue 15's targets on the shipped rows, per source: all covered rows
// <= 6 % mean absolute error and none beyond 20 %; Hopper/Blackwell rows
// <= 8 %; Korthikanti et al. 2022 Table 5 <= 2.5 %. A target not met yet is
// held at the figure measured when unstated plan fields became searched
// (the fastest consistent plan is more optimistic than the old defaults:
// micro batch 1, no recompute), so that it can only improve; the comment
// says which. `orrery validate` prints the same figures.
TEST(ValidationTargets, PerSourceErrorsOnTheShippedRows) {
  base::Diagnostics d;
  const ValidationReport whole = ValidateFile(kRuns, d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  auto subset = [](const ValidationReport& of, auto keep) {
    ValidationReport r;
    for (const auto& row : of.rows)
      if (keep(row)) r.rows.push_back(row);
    Summarise(r);
    return r;
  };
  // The rows every figure below was set on: lines 2-301. The later rows
  // (the Megatron-Bridge tables' GB300, B300 and GPT-OSS rows, torchtitan's
  // H100 tables) are held in LaterRowsAreReadAndReported, and with these in
  // the whole file there.
  const ValidationReport file =
      subset(whole, [](const ValidationRow& row) { return row.line < kFirstBlackwellUltraOrGptOssLine; });
  auto prefixed = [](const ValidationRow& row, std::initializer_list<const char*> prefixes) {
    for (const char* p : prefixes)
      if (row.source.rfind(p, 0) == 0) return true;
    return false;
  };
  // The 40 rows the issue's targets were written against; issue 15's
  // out-of-sample rows (NeMo and Megatron-Bridge tables, llm-foundry,
  // torchtitan, Llama 3 405B, Gemstones) are held below at their measured
  // figures and do not enter these.
  const ValidationReport all = subset(file, [&](const ValidationRow& row) {
    return prefixed(row, {"Korthikanti", "Narayanan", "NVIDIA/Megatron-LM README", "NVIDIA Megatron-Bridge 2025"});
  });
  auto from = [&](const char* prefix) {
    return subset(all, [&](const ValidationRow& row) { return prefixed(row, {prefix}); });
  };
  auto on_hb = [](const ValidationRow& row) { return OnHopperOrBlackwell(row); };
  auto moe = [](const ValidationRow& row) { return IsMoeRow(row); };
  const ValidationReport korthikanti = from("Korthikanti"), narayanan = from("Narayanan"),
                         readme = from("NVIDIA/Megatron-LM README"),
                         bridge = from("NVIDIA Megatron-Bridge 2025"), hb = subset(all, on_hb),
                         file_hb = subset(file, on_hb), file_moe = subset(file, moe);
  for (const auto& [name, r] : std::map<std::string, const ValidationReport*>{
           {"all", &all}, {"Korthikanti", &korthikanti}, {"Narayanan", &narayanan},
           {"Megatron-LM README", &readme}, {"Megatron-Bridge", &bridge}, {"Hopper/Blackwell", &hb},
           {"whole file", &file}, {"whole file Hopper/Blackwell", &file_hb}, {"whole file MoE", &file_moe}})
    PrintMeasured(name, *r);
  // Every one of the 40 rows is predicted (none lacks what cannot be searched).
  EXPECT_EQ(all.skipped, 0);
  ASSERT_EQ(all.rows.size(), 40u);
  // Issue 15's rows, out of sample, held at their measured figures: 292 rows,
  // 9 skipped with a reason (no published global batch); whole file 25.43 %
  // (26.48 % before the Gemstone rows stated Gemma's architecture and ran
  // litgpt's eager element-wise kernels: their 22 rows 67.83 -> 54.27 %),
  // Hopper/Blackwell 28.80 % (target 8 %), MoE 56.15 % (issue 16 target 12 %).
  // Before: 27.90 / 31.41 / 56.30 % with 14 skipped. Moved by MoE parallel
  // folding (etp: 4 Qwen3-235B-A22B rows with EP larger than DP x CP now run,
  // at -12.0, +11.9, +14.7 % on DGX H100 and +182 % on GB200, where EP 64 does
  // not tile a 72-GPU rack, docs/moe-long-context.md), the FlashAttention-2
  // kernels llm-foundry runs (its 124 rows 25.43 -> 21.46 %), and Llama 3.1
  // 405B's pp 16 x interleave 8 over 126 layers with the embedding and loss
  // counted as layers (+10.2 %); 32.36 / 38.67 / 59.27 % before the
  // contention and clipping terms and BF16 attention in FP8 plans.
  // Then 23.82 / 24.12 / 31.07 %: GPU counts that do not fill 72-GPU NVL72
  // racks placed in 64-GPU segments, one per rack (Slurm --segment), so that
  // EP 32/64 stays on NVLink: the GB200 MoE rows 89.1 -> 26.4 %.
  // Then 23.61 / 23.75 / 29.10 %: the dispatcher's permute and unpermute
  // of the expert rows (ExpertPermuteBytes), forward and backward; then
  // 23.56 / 23.67 / 28.65 %: grouped expert GEMMs at each expert's problem
  // size (ExpertGemmTime). Then 23.58 / 23.70 / 28.83 %, up: the 8
  // token-dropping rows run at capacity factor 1.0 (not stated in their
  // tables), losing the busiest expert's 4 % surplus (-1.2 to -2.6 points
  // each, all under-predicted already), while dropless routing's host-launch
  // bound moves the two B200 Qwen3-30B-A3B rows -73.4 -> -70.1 and -72.3 ->
  // -68.8 % (docs/moe-long-context.md, "Dropless routing waits on the host").
  // 293 rows since issue 15's frontier-torchtitan row (Llama 3 8B on 64
  // MI250X GCDs, below); 297 with this repository's own four H200 training
  // steps (validation/gpu_step); 300 with its three short-sequence steps.
  ASSERT_EQ(file.rows.size(), 300u);
  EXPECT_EQ(file.skipped, 9);
  // Then 22.52 / 23.70 / 28.83 % with the Gemstone rows' architecture
  // columns and litgpt's eager element-wise kernels (below; 22.50 % for the
  // file before the capacity-factor and host-launch change above).
  // Then 22.48 % with the MI250X GCD's cited GEMM curve and contention
  // (the Gemstone rows below).
  // Then 20.67 / 21.25 / 27.42 % with what a Megatron-Core step spends
  // beyond its GEMMs (core/estimate/step_kernels.h): Transformer Engine's
  // FP8 cast-transposes around the non-expert linear layers (file 22.52 ->
  // 21.88 %), the LM head in BF16 under FP8 (-> 21.67 %) and the fp32
  // vocabulary-parallel cross entropy (-> 20.67 %). Per source: NeMo 24.07
  // 14.57 -> 10.73 %, 25.02 17.95 -> 15.91 %, 25.04 22.08 -> 16.66 %;
  // Megatron-Bridge 25.09 22.86 -> 18.18 %, 25.11 22.65 -> 21.56 %, 26.02
  // 25.11 -> 25.77 % (its Llama 3 70B H100 row, over-predicted before, moves
  // +13.6 -> +27.8 %); NeMo long-sequence Llama 3 8B 14.72 -> 9.48 %.
  // Then 20.37 / 20.71 / 27.42 % with FP8 activations kept as TE keeps them
  // (the linear layers' inputs in 1 byte, parallelism/memory_model.cpp): the
  // three Llama 3 70B H100 rows (tp 4, pp 8) fit without recompute, as their
  // recipe runs, +29.1 / +27.8 / +27.8 -> +2.3 / +1.2 / +1.2 %, and the
  // 26.02 Llama 3.1 405B GB200 MXFP8 row +14.5 -> -8.4 %: Megatron-Bridge
  // 25.09 -> 16.77 %, 25.11 -> 20.24 %, 26.02 -> 23.44 %.
  // 20.33 % with the MI250X GCD's contention (the Gemstone rows below).
  // Then 22.41 / 23.58 / 28.83 %: llm-foundry and torchtitan rows run PyTorch
  // FSDP as those frameworks configure it (no weight gather for the
  // recomputed forward, gradients reduce-scattered in fp32; parallel_comm.h
  // Zero3GathersPerMicrobatch / Zero3ReduceBytesPerParam): llm-foundry
  // 21.46 -> 21.24 %, torchtitan 19.55 -> 18.82 %. The fp32 reduce-scatter
  // moves the rows without recompute (mpt-13b on 8-64 H100 at micro batch 2,
  // one microbatch: -30.0..-27.8 -> -28.4..-24.8 %); under full recompute the
  // dropped third gather and the doubled reduce-scatter move the same bytes.
  // Then 22.47 / 23.61 / 28.35 %: the DeepSeek-V3 H100 row runs its
  // recipe's recompute_modules mla_up_proj (training.recompute_mla_up_proj),
  // which fits in 80 GB (70.1 GB) where the harness had to assume full
  // recompute: +24.8 -> +10.4 % (docs/moe-long-context.md); then 22.45 /
  // 23.57 / 28.14 % with the recipe's etp = 1 (+10.4 -> +4.1 %).
  // Then 17.66 / 18.01 / 28.83 %: the llm-foundry rows state the Triton
  // FlashAttention kernel their benchmark ran (attn_impl: triton, the
  // default of scripts/train/benchmarking/submit_benchmarks.py), priced at
  // FlashAttention-2's efficiency / 1.4 forward and / 2 backward (Dao 2023,
  // Sec. 4.1): llm-foundry 21.24 -> 10.40 %, its error no longer growing with
  // the sequence (H100 at 32k-64k -34.8 / -33.6 -> +3.6 / +7.4 % mean, A100
  // 80GB at 65k -31.9 -> +5.0 %; at 2k H100 -23.6 -> -16.6 %). Then
  // 17.61 / 17.95 / 28.83 %: the Triton kernel pads the head dimension to a
  // power of two (MPT-30B's 112 computes as 128): llm-foundry 10.29 %, its
  // mpt-30b rows at 8192 tokens -26 / -27 -> -23 / -24 %.
  // All of the above together: 15.44 / 14.98 / 26.70 %.
  // Then, each on its own against 15.44 / 14.98 / 26.70 %:
  // - 15.26 / 14.66 / 26.27 %: the B200 and GB200 presets' FP8 GEMMs at the
  //   H200 probe's FP8 fractions (gemm_efficiency_fp8, 0.64 at 1 TFLOP)
  //   instead of the BF16 ones they fell back to (0.70): every FP8 row on
  //   those parts slows by 3-6 %. The dense rows predicted fast move toward
  //   their measurements (Llama 3 8B B200 -26.0 -> -22.6 %, Nemotron 15B
  //   B200 -30.5 -> -27.1 %, Llama 3 70B GB200 MXFP8 -26.3 -> -22.1 %);
  //   those predicted slow move away (Llama 3.1 405B GB200 +20.9 -> +28.1 %,
  //   Nemotron 340B B200 +26.4 -> +30.0 %): what remains is not in the GEMM
  //   rate (docs/fp8-training.md).
  // - 15.31 / 14.75 / 25.45 %: the seven Megatron-Bridge DeepSeek-V3 rows on
  //   B200 and GB200 run their recipes' recompute_modules mla_up_proj (every
  //   stored version of those recipes names it; none runs the full recompute
  //   the harness had searched its way to): DeepSeek-V3 rows 12.91 -> 10.67 %
  //   (GB200 +30.6 -> +14.9, B200 +20.7 -> +8.7 %; the 25.09 GB200
  //   token-dropping row -5.5 -> -19.0 %); the 26.02 Qwen3-235B H100 row runs
  //   its recipe's 1F1B all-to-all overlap without TP overlap
  //   (moe_a2a_overlap True, tp_comm_overlap False): +24.9 -> -5.5 %
  //   (docs/moe-long-context.md, "What the recipes say").
  // - 15.52 %, up: materialised attention's softmax and dropout backward
  //   charged at the traffic their kernels move (3e and 2e + 1 per score
  //   element, not twice the forward's 2e and 2e + 1; models/transformer.cpp),
  //   which makes the pre-2023 Megatron rows faster (Korthikanti 3.07 ->
  //   3.83 %, Narayanan 9.59 -> 10.31 %; docs/frontier-gemstones.md).
  // - 15.36 %: the two torchtitan rows whose table states "selective layer"
  //   activation checkpointing recompute every 2nd layer (recompute
  //   layers/2, training.recompute_interval 2: torchtitan's
  //   selective_ac_option default "2") instead of the search's no recompute:
  //   Llama 3 8B -25.84 -> -15.53 %, Llama 2 13B -26.66 -> -15.61 %;
  //   torchtitan 18.56 -> 15.89 %.
  // - 15.49 / 14.99 %, up: a model that does not drop (ModelSpec::
  //   hidden_dropout / attention_dropout 0: the Llama-style, MoE, MPT and
  //   Gemstone models) no longer writes or keeps dropout masks (2 sbh per
  //   layer). Its rows, most under-predicted already, move 0.1 to 0.9 points
  //   faster; where the freed memory lets the search drop recompute or
  //   ZeRO-3 a row moves more: NeMo 25.04 GB200 Llama 3 70B FSDP (line 61)
  //   +1.5 -> -22.8 %, Llama 3.1 405B on 8,192 H100 (line 128) -37.3 ->
  //   -6.7 %. The Megatron GPT rows keep their 0.1 dropout.
  // All of them together: 15.12 / 14.33 / 24.44 %.
  // - 15.11 / 14.33 / 24.44 %: the three torchtitan rows whose table states
  //   "selective op" activation checkpointing price it (recompute op,
  //   torchtitan's op-level SAC: wk, wo, w3 and the memory-bound operators
  //   recomputed, models::LayerOps) instead of the search's choice:
  //   Llama 3 8B (line 121) -24.2 -> -17.1 %, Llama 2 13B (line 125)
  //   -27.2 -> -18.8 %, Llama 2 70B (line 126) -6.2 -> -19.7 % (the search
  //   had priced full recompute there; op SAC costs less, and the row now
  //   sits with the other torchtitan rows, all 11 to 20 % fast).
  // - 15.08 / 14.27 / 24.32 %: each FP8 row runs the scaling recipe its
  // source states (precision fp8-cs / fp8-block / fp8-mx, training.fp8_recipe,
  // step_kernels.h). The 31 current-scaling rows pay an amax pass of 2 B per
  // quantized element and move 0.4-2.5 points slower: the dense ones
  // predicted fast toward their measurements (NeMo 25.04 GB200 GPT-3 175B
  // -9.0 -> -6.6 %, Llama 3 8B -10.0 -> -7.6 %, Megatron-Bridge Llama 3 8B
  // GB200 -14.7 -> -12.4 %, H100 -3.2 -> -0.8 %), those predicted slow away
  // (Llama 3.1 405B GB200 +27.9 -> +30.2 %, B200 +25.4 -> +27.5 %). The 19
  // MXFP8 rows and the blockwise DeepSeek-V3 H100 row write 1/16 B of scales
  // per element more: under 0.1 point each.
  // Both: 15.08 / 14.27 / 24.32 %.
  // Then 15.03 / 14.19 / 23.94 %: the B200 and GB200 GEMM curves are the H200
  // probe's scaled by each part's measured maximum achievable matmul FLOPS
  // (configs/devices/b200.yaml; B200 BF16 x 0.965, FP8 x 1.039; GB200 BF16
  // x 0.907, FP8 x 0.985). The GB200 rows slow by 0.4-5.4 points, toward
  // their measurements where predicted fast (Nemotron 15B line 63 -21.3 ->
  // -19.7 %, Llama 3 70B 61 -16.9 -> -15.9 %, Megatron-Bridge Llama 3 8B
  // FP8-MX 68/81 -18.6 / -18.9 -> -17.4 / -17.8 %); the B200 FP8 rows run
  // faster and the fast ones move away (Llama 3 8B line 51 -22.9 -> -24.2 %,
  // Nemotron 15B 54 -27.4 -> -28.5 %; docs/fp8-training.md).
  // - 14.37 / 13.50 / 24.32 %: the llm-foundry rows run Composer's default
  //   FSDP1 backward prefetch, BACKWARD_POST (training.zero3_backward_prefetch
  //   false): each layer's backward gather waits exposed. Only llm-foundry
  //   rows move, all slower: its 124 rows 9.23 -> 7.61 % (H100 10.48 -> 8.47,
  //   A100 40GB 9.55 -> 7.67, A100 80GB 6.10 -> 5.62 %); mpt-13b at micro
  //   batch 2 on 8-64 H100 -24.1..-20.5 -> -16.9..-6.7 % (docs/hopper-dense.md).
  // - 14.97 / 14.08 / 24.33 %: the dense data-parallel group is dp x cp
  //   (Megatron-Core reduces dense gradients and shards its distributed
  //   optimizer over intra_dp_cp_group; training_estimator.cpp,
  //   PlaceDenseDataParallel). The cp 2 Llama 3.1 405B rows (tp 4, pp 8,
  //   dp 2, interleave 8) had their optimizer states sharded over 2, not 4,
  //   needed 198 of 180 GB and searched their way to full recompute; they now
  //   fit without it, as the recipes run: B200 +27.5 / +26.9 / +18.0 / +17.9
  //   -> -4.2 / -4.6 / -11.2 / -11.3 % (lines 75, 88, 53, 89), Grattafiori's
  //   cp 16 row -12.4 -> -6.9 %; the GB200 ones overshoot, +6.5 / -9.2 ->
  //   -17.2 / -29.3 % (lines 62, 72; their FP8 GEMMs are priced faster than
  //   the B200's). The cp rows of NeMo 24.07 (Llama 3 8B / 70B, -18.9 / -10.8
  //   -> -19.0 / -12.0 %) and the long-sequence table move with the group.
  // - 15.11 / 14.32 / 24.33 %, up: the closed form reduces an interleaved
  //   plan's gradients chunk by chunk, as Megatron-Core's interleaved
  //   schedule and the event engine do (training_estimator.cpp, dp_overlap;
  //   Estimator.InterleavedChunksReduceTheirGradientsEarly): each chunk's
  //   reduce-scatter starts after its last backward and runs beside the
  //   cool-down's other chunks, the parameter all-gather beside the warm-up's
  //   forwards. On the Llama 3.1 405B B200 plan (line 75) the exposed DP term
  //   falls 0.79 -> 0.09 s (the event engine: 0.12 s). Rows stating their
  //   interleave: Nemotron-340B B200 / H100 +29.9 / +17.7 -> +10.7 / +12.8 %
  //   (lines 55, 47), GPT-3 175B H100 +2.1 -> 0.0 %, while the Llama rows
  //   already fast move further (Llama 3.1 405B B200 -4.2 -> -9.0 %, line 75;
  //   Llama 3 70B B200 -19.6 -> -21.0 %). The Megatron-LM README rows state
  //   no interleave, and the search now picks deep interleaving for them
  //   (GPT 119B: interleave 23), +21.3 / +19.7 / +14.1 / +17.2 -> +27.2 /
  //   +28.3 / +20.6 / +20.6 % (lines 37-40).
  // - 15.28 / 14.63 / 25.76 %: a Megatron row whose L + 2 units divide over
  //   its pp x interleave virtual stages is also predicted with the
  //   embedding and the loss counted as a layer each (Megatron-Bridge's
  //   Llama 3.1 405B and Qwen3-235B recipes set account_for_embedding/
  //   loss_in_pipeline_split) and keeps the faster
  //   (ValidationCsv.MegatronRowsMayCountEmbeddingAndLossAsLayers). The
  //   pp 16 x interleave 4 Llama 3.1 405B GB200 rows shed the full
  //   recompute they needed: +30.2 / +24.7 -> -7.8 / -11.5 % (lines 83, 98),
  //   the Qwen3-235B H100 row +22.3 -> +13.2 % (line 113). The last stage
  //   no longer holds a full share of layers beside the LM head, so every
  //   such row moves faster, and those already fast further: Llama 3.1 405B
  //   B200 / GB200 / H100 4.5 to 5.3 points (line 75 -9.0 -> -13.9 %), the
  //   Qwen3-235B B200 and GB200 rows 6 to 18 points (their full recompute
  //   goes too: line 111 -33.8 -> -47.7 %). The fast residue is the
  //   Blackwell FP8 GEMM and MoE pricing, not the pipeline.
  // - 14.83 / 14.27 / 24.32 %: the torchtitan rows run PyTorch eager
  //   element-wise kernels (training.elementwise: eager): the train configs
  //   of their period set compile = false and the unfused RMSNorm
  //   (docs/torchtitan-fsdp2.md); all 8 rows move 5.6-9.9 points toward
  //   their measurements (torchtitan below).
  // - 14.79 / 14.27 / 24.32 %: torchtitan's FSDP2 copies every gather out of
  //   its flat buffer on the compute stream (training.zero3_copy_out,
  //   Zero3CopyOutBytes): its 8 rows 1.4-2.8 points slower, nothing else moves.
  // All four branches together: 14.25 / 13.82 / 25.34 %.
  // The next stop's branches, each measured alone from that point:
  // - 14.03 / 13.43 / 23.26 %: the grouped expert GEMMs' FP8 casts
  //   (Fp8GroupedCastTimes, step_kernels.h; one quantize kernel per local
  //   expert outside delayed scaling): the 27 FP8 MoE rows slower, nothing
  //   else moves (Qwen3-30B-A3B 45.99 -> 41.76 %, Qwen3-235B-A22B 23.63 ->
  //   20.99 %, Mixtral 14.16 -> 12.15 %, DeepSeek-V3 9.61 -> 10.56 %, its
  //   B200 and GB200 rows already predicted slow moving further:
  //   docs/moe-long-context.md).
  // - 13.92 / 13.67 / 25.30 %: a linear layer's forward, input-gradient
  // and weight-gradient GEMMs each at their own reduction depth
  // (hardware::GemmDepthFactor, K / (K + 214) below K = 4096 from OpenXLA's
  // sm_90 cuBLAS table): narrow models and tensor-parallel shards (K = h / t)
  // run slower; nothing at K >= 4096 moves.
  // - 14.25 / 13.80 / 25.78 %: a pipeline's L mod pp layers left over go
  // to the middle stages, not onto the end stages that also run the
  // embedding and the LM head (parallelism::EvenSplitLayers, as the event
  // engine splits them). It moves the rows whose layers do not divide their
  // pp: the DeepSeek-V3 (61 layers) and Qwen3-235B (94) MoE rows, all
  // predicted faster (B200 +2.3 / -4.4 / +12.2 -> -10.5 / -16.3 / -1.6 %,
  // GB200 +21.4 -> +12.1 %, the H100 row +17.7 -> +6.9 %), and the three
  // Llama 3.1 405B rows (126 layers over pp 16: -6.7 / -24.6 / -6.9 ->
  // +0.9 / -18.5 / -2.9 %).
  // - the event engine reducing routed-expert gradients over the expert
  //   data-parallel group (as the closed form already did): nothing moves.
  // The three that move, together: 13.64 / 13.16 / 23.10 %.
  // The MoE router's gating GEMM in BF16 without FP8 casts (Megatron-Core's
  // router is not a Transformer Engine module) and the host bound's kernels
  // counted from the dispatcher's source (docs/moe-long-context.md, "The
  // router's datatype"): 13.64 / 13.16 / 23.08 % (Qwen3-30B-A3B 41.72 ->
  // 41.47 %, Qwen3-235B-A22B 22.20 -> 22.30 %, DeepSeek-V3 8.65 -> 8.67 %,
  // Mixtral 12.15 -> 12.28 %).
  // Transformer Engine's linear modules priced per forward call on the
  // dropless MoE layers' host (BF16 and FP8 delayed scaling, the recipes
  // with published figures; docs/moe-long-context.md, "Transformer Engine
  // modules on the host"): 13.63 / 13.15 / 23.03 %; only the 26.02
  // Qwen3-30B-A3B H100 row moves (-58.0 -> -56.3 %), the other BF16 and
  // delayed-scaling dropless rows stay device-bound.
  // Raised with issue 15's FP8 casts on Blackwell (step_kernels.h): TE
  // writes per-tensor FP8 operands row-wise only where FP8 GEMMs take any
  // layout (B200, GB200: 3 B per element, not 4), and MXFP8 swizzles the
  // scales of each operand before every GEMM (six kernels a layer). Every
  // delayed- and current-scaling row on B200/GB200, most predicted fast,
  // comes out faster; the MXFP8 rows slower, toward their measurements:
  // 13.64 / 13.16 / 23.08 -> 13.68 / 13.24 / 23.21 % alone, with the host
  // term above 13.68 / 13.23 / 23.16 %.
  // Raised 13.65 -> 13.69 (13.6385 -> 13.6755 %) by one more row, nothing
  // repriced: the frontier-torchtitan README's Llama 3 8B on 64 MI250X GCDs
  // (issue 15), the A100 torchtitan "selective op" set-up run on Frontier,
  // predicted -24.2 % where its A100 twin (line 121) is -5.1 %
  // (docs/frontier-gemstones.md). Then 13.6887 %, the row -27.9 %: it
  // states its LayerNorm, one kernel in eager code (models::
  // NormBytesPerElement), where the eager RMSNorm it had been priced as
  // makes six fp32 passes. All three: 13.73 / 13.23 / 23.16 % (284 rows).
  // Lowered to 13.16 (13.7285 -> 13.1540 %) with the MI250X GCD profile's
  // figures from published kernel measurements (issue 15, configs/devices/
  // mi250x-gcd.yaml): only the 23 MI250X rows move (below).
  // Then 13.45 / 12.74 / 23.16 %: FlashAttention's efficiency by sequence
  // length on the H100/H200 profiles (the *_length_factor curves, Shah et
  // al. 2024 Figs. 5-6): llm-foundry 7.38 -> 6.77 %, its H100 rows at 512
  // tokens -15.6 -> -12.1 % mean, at 32k +5.1 -> +1.7 %. Both: 12.87 /
  // 12.74 / 23.16 %.
  // Then 12.45 / 11.98 / 22.58 %: the B200 and GB200 GEMM curves from
  // Blackwell kernel measurements (configs/devices/b200.yaml: cuBLAS BF16
  // cubes on a B200 from 100 GFLOP up, FP8 by Transformer Engine's FP8 /
  // BF16 GEMM ratio on Blackwell; GB200 by MAMF) and MXFP8 GEMMs on their own
  // curve (gemm_efficiency_mxfp8, 0.951 of per-tensor FP8): every B200/GB200
  // FP8 row slower, 12.51 / 12.10 / 22.73 % with the curves alone
  // (docs/fp8-training.md says which rows moved).
  // Then 12.33 / 11.98 / 22.58 %: DeepSpeed ZeRO-3 of 2021 gathers one
  // weight matrix ahead (training.zero3_matrix_prefetch; docs/overlap.md):
  // only the six Narayanan et al. Table 2 ZeRO-3 rows move (12.87 -> 12.76 %
  // alone); Hopper/Blackwell and MoE rows are unchanged by it.
  // Raised to 12.37 / 12.05 / 22.58 % by the recipes' stated plan fields
  // (docs/fp8-training.md, "What the recipes state"): the Megatron-Bridge
  // Llama rows state the recompute and overlaps their recipes set, which the
  // search had already chosen for all but four. Those four (GB200 Llama 3
  // 70B FSDP lines 69 / 82 / 95, Llama 3.1 405B FSDP line 71) run no
  // recompute and offload 40 (95) layers' activations to Grace memory, which
  // is not priced: predicted with every activation on the device (the memory
  // model says it does not fit) and no offload transfers, +10.1 / +18.9 /
  // +9.5 / +9.2 -> -16.1 / -9.3 / -16.5 / -16.1 %, where the search had
  // priced full recompute in the offload's place.
  // Lowered to 11.55 / 10.60 / 21.75 %: the B200 cubes the Blackwell GEMM
  // curves stand on from 100 GFLOP up are bursts (one warm-up and five
  // timed calls), taken down to the rate a B200 holds under its 1000 W cap,
  // x 1237 / 1425 (flashinfer PR #2899; configs/devices/b200.yaml, GB200
  // through its MAMF ratio): every B200/GB200 row slower, the dense FP8
  // ones, most predicted fast, toward their measurements (docs/fp8-training.md,
  // "Blackwell GEMMs at the sustained clock").
  // Lowered to 12.29 / 11.96 / 22.58 % (12.3745 / 12.0525 / 22.5776 ->
  // 12.2802 / 11.9451 / 22.5723 %): with sequence parallelism the backward
  // pass gathers each column-parallel GEMM's sequence shard again for its
  // weight gradient (Korthikanti et al. 2022 Sec. 4.2.2; TpLayerCollectives,
  // training_estimator.cpp; docs/korthikanti-layer.md). Every SP plan is
  // slower by one all-gather per column-parallel GEMM (two per dense layer,
  // one per MoE layer); most of those rows were fast.
  // Lowered to 12.37 / 12.05 / 22.52 % (12.3674 / 12.0401 / 22.5112 %) by
  // the dropless forward's wait on the dispatcher's device-to-host sync
  // (SyncedForwardTime, core/estimate/parallel_comm.h; docs/moe-long-
  // context.md): the B200 Qwen3-30B-A3B MXFP8 rows 110 / 115, -63.6 / -62.1
  // -> -62.6 / -61.1 %.
  // Then 12.24 / 11.81 / 21.26 % (12.2350 / 11.8065 / 21.2576 %) with the
  // host time per kernel launch measured per host CPU (TransformerEngine
  // issue 2053: torch.nn.Linear's forward, 13.48 us on an H100 DGX's Xeon,
  // 37.08 us on GB200's Grace) in place of 10 us: the GB200 dropless
  // Qwen3 rows 108 / 114 / 117 -28.7 / -21.7 / -11.2 -> -17.0 / -8.9 /
  // -9.0 %, the B200 rows 110 / 115 -62.6 / -61.1 -> -57.5 / -55.7 %, H100
  // row 116 -56.3 -> -55.8 %.
  // The three together (sustained Blackwell GEMMs, the sequence-parallel
  // backward gather, the dropless forward's wait on the dispatcher's copy
  // with per-host launch times): 11.34 / 10.28 / 20.49 %.
  // Lowered to 11.27 / 10.16 / 19.83 % (11.2658 / 10.1557 / 19.8281 %):
  // the 25.09 Qwen3 token-dropping rows 104, 106 and 107 state FP8 per-tensor
  // current scaling, the only per-tensor FP8 recipe that release's Qwen3
  // recipe runs (fp8_recipe cs by default, presets *_FP8_CS and *_FP8_MX;
  // Megatron-Bridge scripts/performance/utils/helpers.py at 0fa501ac,
  // get_precision_config: cs, mx or sc), where they had been read as delayed
  // scaling: each local expert's split is quantized by kernels of its own
  // (Fp8GroupedCastTimes). Lines 104 / 106 / 107 -39.5 / -13.5 / -12.3 ->
  // -26.9 / -7.9 / -10.5 % (docs/moe-long-context.md, "The token-dropping
  // Qwen3 rows on the device").
  // Lowered to 11.20 / 10.09 / 20.45 % (11.1956 / 10.0878 / 20.4491 %) by
  // what a Megatron step spends outside its layers (docs/korthikanti-
  // layer.md, "Outside the layers"): the embedding's, the LM head's and the
  // loss's tensor-parallel collectives (TpHeadCollectives), the low-precision
  // copy's second read of the fp32 master (38 bytes a parameter for Adam,
  // OptimizerStepBytesPerParam) and the zeroing and 1/dp scaling of the
  // whole gradient buffer (GradBufferBytesPerParam): the Megatron-LM README
  // rows 23.06 -> 21.04 %, Narayanan 8.31 -> 8.03 %, Korthikanti 1.76 ->
  // 1.67 %.
  // This stop's terms together, the 25.09 Qwen3 rows' current scaling and
  // the costs outside the layers merged: 11.13 / 9.96 / 19.78 %.
  // Lowered to 11.09 / 9.90 / 19.43 % (11.0881 / 9.8982 / 19.4313 %) by the
  // B200 / GB200 GEMM curves below 137 GFLOP from OpenXLA's sm_100 cuBLAS
  // table at the sustained clock, in place of the H200 probe's shape
  // (configs/devices/b200.yaml; docs/fp8-training.md, "Blackwell GEMMs below
  // 137 GFLOP"): the token-dropping Qwen3 B200 rows 104 / 105 / 118 -26.8 /
  // -24.3 / -32.0 -> -23.5 / -21.1 / -28.9 %.
  // Raised to 11.17 / 10.03 / 20.13 % (11.1610 / 10.0268 / 20.1218 %) by
  // two facts the DeepSeek-V3 rows' sources state and the CSV now carries
  // (docs/moe-long-context.md, "DeepSeek-V3 on Blackwell: MTP and the
  // recipe's pipeline layout"). The 25.11 table's "(w/o MTP)" (column mtp)
  // alone lowers them to 11.00 % (MoE 19.0 %): line 85 +28.7 -> +2.9 %,
  // line 84 +4.7 -> -6.6 %. The recipe's pipeline layout (columns
  // first_stage_layers / last_stage_layers: 1 layer, not 3, beside the
  // MTP module and the LM head on the last of 16 stages) takes the B200
  // pp 16 rows from on the mark to fast (lines 76 / 90 / 101 +6.1 / -0.5 /
  // +17.2 -> -23.1 / -27.7 / -15.3 %) and the H100 row 41 +9.3 -> -1.8 %:
  // the even split had been putting two extra layers on the pace-setting
  // stage, hiding a per-layer cost the B200 rows pay that the estimator
  // does not price (the dropless host-bound layers, above).
  // Lowered to 10.91 % (10.9082 %): Megatron-LM of 2021 adds every weight
  // gradient into its fp32 buffer in a pass of its own each microbatch
  // (training.grad_accumulation_fusion = false), and Megatron-LM before
  // Megatron-Core divides that buffer by dp at dp 1 too
  // (training.grad_scale_at_dp1): Narayanan 8.03 -> 5.25 %, Korthikanti
  // 1.67 -> 1.61 % (docs/korthikanti-layer.md, "Outside the layers").
  // This stop's changes merged: 10.94 / 10.03 / 20.12 % (10.9439 / 10.0268 /
  // 20.1218 %).
  // Raised to 11.00 % (10.9902 %): llm-foundry's 36 PURE rows (the A100
  // 40GB table, the A100 80GB mpt-70b rows) reduce-scatter in bf16, as
  // Composer's mixed_precision PURE sets reduce_dtype (column reduce_dtype,
  // ReduceDtypeColumnSetsTheFsdpReduceScatterDatatype above), not in fp32:
  // a fact the table states, and it halves their reduce-scatter bytes, so
  // every one of them moves faster, and most of them were fast already
  // (llm-foundry 6.76 -> 6.86 %; line 239 -24.3 -> -25.7 %, line 211 +0.6
  // -> -1.2 %; docs/hopper-dense.md section 8). Hopper/Blackwell and MoE
  // do not move.
  // Lowered to 10.94 / 10.02 % (10.9350 / 10.0112 %): the Megatron-LM README
  // rows' output layer untied from the embedding, as the table's model sizes
  // count it (validation/training_runs.csv notes; docs/hopper-dense.md
  // section 9).
  // Lowered to 10.92 / 9.98 % (10.9190 / 9.9830 %): Megatron-LM of 2024's
  // NaN check of the gradient buffer before its reduction
  // (training.grad_nan_check), on the README rows.
  // Both merged: 10.98 / 9.99 % (10.9654 / 9.9830 %).
  // Lowered to 10.90 / 9.94 % (10.8891 / 9.9301 %) by the NeMo 24.07 / 25.02
  // rows' recipes (no recompute on the Nemotron-4 340B rows, FP8 weight
  // gathers on the 25.02 ones; docs/fp8-training.md, "The NeMo 24.07 and
  // 25.02 recipes"); MoE unchanged.
  // All three merged: 10.92 / 9.89 % (10.9106 / 9.8863 %).
  // Lowered to 10.78 / 9.65 % (10.7690 / 9.6366 %) by the FlashAttention-2
  // backward's causal length factor on the H100 / H200 profiles (Shah et al.
  // 2024 Figs. 5-6; docs/llm-foundry.md): llm-foundry 6.86 -> 6.54 %, no
  // other source moves; MoE unchanged.
  // Lowered to 10.77 / 9.63 % (10.7598 / 9.6204 %) by the fused (cuDNN)
  // backward's causal length factor on the same profiles (the same figures;
  // docs/hopper-dense.md section 10): Grattafiori 7.08 -> 6.61 %, the NeMo
  // and Megatron-Bridge tables below; MoE unchanged.
  // Raised to 11.61 / 10.65 % (11.6036 / 10.6393 %): the loss priced as each
  // framework's kernels move it (training.loss_kernel, docs/loss-path.md).
  // Every row had Megatron-Core's unfused fp32 loss, 52 B per logit;
  // llm-foundry's flash-attn fused cross entropy moves 6 B, torchtitan's and
  // litgpt's PyTorch cross entropy on fp32 logits 36 B. Those rows were
  // nearly all predicted fast already and move faster (llm-foundry 6.86 ->
  // 8.08 %, most on the small-width, short-sequence H100 / A100 rows:
  // mpt-350m line 209 -13.9 -> -26.8 %): the extra 46 B per logit they
  // carried stood in for some other cost, not found yet.
  // Merged over both causal backward factors: 11.48 / 10.42 %
  // (11.4743 / 10.4112 %).
  // Raised to 11.50 / 10.46 %, MoE 20.24 % (11.4988 / 10.4546 / 20.2384 %):
  // the gradients kept and reduced in the datatype the recipes state
  // (training.grad_reduce_fp32; reduce_dtype bf16 on the Megatron-Bridge
  // rows, whose set_*_common_configs set grad_reduce_in_fp32 = False, and on
  // NeMo 25.02's Llama 3 8B FP8 row). Half the bytes in the data-parallel
  // reduce-scatter: those rows, mostly predicted fast, move faster by 0.1-1
  // point (DeepSeek-V3 B200 line 90 -27.7 -> -28.7 %). The memory model's
  // gradient buffer now has the reduction's datatype too (fp32 by default,
  // Megatron-LM's 18 bytes per parameter).
  // Lowered to 11.47 / 10.42 % (11.4631 / 10.4175 %): four rows this
  // repository measured itself on one H200 (validation/gpu_step: whole
  // training steps of Llama 3.2 1B and 3B shapes in plain PyTorch, eager,
  // checkpointed and compiled), predicted 4.8-11.1 % fast, 8.93 % mean.
  // Lowered to 11.39 / 10.29 % (11.3864 / 10.2835 %): fused attention at
  // head dimension 64 runs at 0.70-0.90 of its speed at 128 (Shah et al.
  // 2024 Figs. 5-6; hardware::AttentionHeadDimFactor), linear between: the
  // mpt-350m H100 rows (head dimension 64, FlashAttention-2) -6.6 -> +2.9,
  // -9.7 -> -1.4, -22.5 -> -20.5 %, the H200 Llama 3.2 1B steps (64, cuDNN)
  // -9.7 -> -7.4, -4.8 -> -1.9, -10.0 -> -7.2 %. MPT-30B's head of 112 runs
  // the Triton kernel padded to 128, at 128's efficiency: unmoved.
  // Lowered to 11.35 / 10.22 % (11.3463 / 10.2135 %): PyTorch's automatic
  // mixed precision on fp32 parameters priced as it runs
  // (training.autocast_fp32_weights: each weight cast forward, its gradient
  // cast back and added into .grad, 24 B a parameter a microbatch, where
  // the unfused accumulation's 10 B stood): the four H200 steps -7.4 ->
  // -4.9, -1.9 -> -0.9, -11.1 -> -6.1, -7.2 -> -4.3 %, 6.91 -> 4.02 %.
  // Lowered to 11.31 / 10.19 % (11.3004 / 10.1863 %): eager code's
  // non-vectorized element-wise kernels (dtype-converting copies, broadcast
  // and strided operands: the RMSNorm's upcast and broadcast products, the
  // rotary embedding, repeat_kv) at the device's element rate
  // (unvectorized_element_rate: 338.4 G/s measured on the H200, 185 G/s on
  // an A100 from PyTorch PR #195542), and no copy of the attention output
  // (SDPA returns a view of a contiguous buffer): the H200 eager steps -4.9
  // -> -0.9, -0.9 -> +4.5, -6.1 -> -2.0 % (the compiled one unmoved),
  // torchtitan's A100 rows 1.0-1.8 points closer (5.50 -> 4.40 %).
  // Lowered to 11.30 % (11.2984 %): eager code's saved fp32 norm inputs and
  // repeated K/V in the memory model (parallelism::ActivationBytes) leave
  // Gemstone-512x16's fastest plan out of memory; the next one is -49.5 %,
  // not -50.1 %.
  // Lowered to 11.21 / 10.04 % (11.2006 / 10.0368 %): three more H200 steps
  // this repository measured (validation/gpu_step/h200/short_seq), after
  // the estimator's terms were set: Llama 3.2 1B at 1,024 and 512 tokens
  // (micro batch 8 and 16) and a 1536-wide, 24-layer model of MPT-760M's
  // width and depth at 2,048, predicted -0.9, -1.0 and +3.5 %.
  // Lowered to 11.19 / 10.02 % (11.1880 / 10.0150 %): in eager code
  // autocast's cast of each bf16 weight gradient back to fp32 runs PyTorch's
  // non-vectorized dtype-converting kernel, priced at the element rate
  // (GradAccumulationUnvecBytesPerParam); only the plain-PyTorch H200 steps
  // set autocast_fp32_weights, and the compiled one casts in Inductor's
  // kernels.
  // Raised to 11.38 / 10.35 % (11.3779 / 10.3439 %): the three Llama 3
  // 405B rows of Grattafiori et al. 2024 state an interleaved schedule
  // without its virtual stages, and the search had priced them at
  // interleave 1, whose 1F1B bubble (15 of 32, 15 of 16 microbatches) hid
  // an over-prediction; at interleave 2 or more, as stated, +0.1 / -19.2 /
  // -0.6 -> +29.9 / +25.5 / +19.3 % (two of them out of memory in the
  // model: ValidationCsv.AStatedInterleavedScheduleIsNeverPricedAsPlain1F1B).
  // With the checkpointed H200 step's weight recast (+4.90 -> +5.26 %)
  // before it: 11.1893 / 10.0171 %.
  // Raised to 11.59 / 10.71 % (11.5868 / 10.7057 %): the same three rows at
  // the virtual stages the paper states after all, one layer a model chunk
  // (its first chunk only the embedding, its last only the output and the
  // loss: interleave 8 over 126 layers + 2, Sec. 3.3.2;
  // ValidationCsv.Llama3sOneLayerChunksAreInterleave8AndFit). All three
  // now fit the 80 GB they ran in: +29.9 / +25.5 / +19.3 -> +33.4 / +34.7
  // / +67.4 % (the 128K row, its checkpointing unstated, no longer needs
  // full recompute to fit, and is searched without it).
  // Lowered to 11.55 / 10.64 % (11.5441 / 10.6317 %): the 128K row reads
  // the all-gather of K/V its source states (the cp_scheme column;
  // Grattafiori et al. 2024 Sec. 3.3.2), exposed where the ring the search
  // had picked hid behind attention: +67.4 -> +55.0 %.
  // Raised to 11.59 % and lowered to 10.62 % (11.5839 / 10.6117 %): full
  // recompute stopping early where the row's PyTorch does
  // (training.checkpoint_early_stop: torchtitan, this repository's own
  // steps, whose kernel counts show the down projection not rerun): the
  // checkpointed H200 step +5.26 -> +1.89 %, torchtitan's full-recompute
  // rows (lines 120, 122, 124, 127), well predicted while their recompute
  // ran a GEMM too many, -4.1 / -2.8 / -3.2 / -2.3 -> -6.4 / -7.9 / -5.4 /
  // -7.7 %, beside the same source's op-level rows (-4.6 to -9.6 %).
  // Lowered to 10.61 % (file 11.5808 / 10.6063 %): the three Llama 3 405B
  // rows on their cluster (the system column: meta-roce-24k, non-blocking
  // pods of 3,072 GPUs joined 1:7; Sec. 3.3.1) in the order of parallelism
  // they state (the group_order column: [TP, CP, PP, DP], Sec. 3.3.2), which
  // keeps every pipeline inside a pod and sends only data parallelism, mostly
  // hidden, across: +33.4 / +34.7 / +55.0 -> +33.3 / +34.3 / +54.6 %. (In
  // the default order, pp outermost, the pipelines would cross pods at a
  // seventh of the bandwidth and read +1.4 / +2.6 / +33.8 %: a right answer
  // for a layout the paper says it did not run.)
  // Raised to 12.06 % and 11.00 % (12.0512 / 10.9962 %) by collectives
  // across tiers priced as NCCL runs them, pipelined (the slowest tier's
  // bandwidth time plus every latency, hardware/network.cpp), not as phases
  // one after another: a 16-GPU DGX H100 all-reduce's bus bandwidth 216 ->
  // 327 GB/s. Every multi-node row with data-parallel traffic moves faster;
  // the rows were fast already. The llm-foundry mpt-13b rows at 8/16/32/64
  // GPUs, whose measured MFU is flat (39.6-40.0 %), now are too: -16.0 /
  // -10.8 / -7.2 / -6.0 -> -16.0 / -17.7 / -17.6 / -18.1 %.
  // Lowered to 11.59 % and 10.48 % (11.5851 / 10.4784 %) by two backward
  // kernels the frameworks run (docs/hopper-dense.md section 14): bias
  // gradients reduced in kernels of their own (training.separate_bias_grad:
  // llm-foundry, DeepSpeed, Megatron-LM before 2024) and FSDP1's flat
  // gradients concatenated on the compute stream (training.zero3_flat_grad:
  // llm-foundry). The mpt-13b rows -16.0 / -17.7 / -17.6 / -18.1 -> -13.1 /
  // -14.8 / -14.7 / -15.2 %; every moved row moved slower.
  // Lowered to 11.52 % and 10.40 % (11.5175 / 10.3973 %) by PyTorch's own
  // optimizer step on the llm-foundry rows (training.optimizer_step:
  // Composer's DecoupledAdamW as separate passes, FSDP's always-rescaling
  // clip, 92 B a parameter against 38): the mpt-13b rows -13.1 / -14.8 /
  // -14.7 / -15.2 -> -9.4 / -13.0 / -13.7 / -14.7 %.
  // Lowered to 11.32 % and 10.19 % (11.3138 / 10.1833 %) by the backward's
  // concatenation of the Q, K and V gradients split off one fused
  // projection (training.qkv_split_cat: llm-foundry, DeepSpeed, Megatron-LM
  // before 2024, litgpt; docs/hopper-dense.md section 15) and torchtitan's
  // foreach AdamW (training.optimizer_step = pytorch): llm-foundry 7.26 ->
  // 6.85 %, mpt-350m on 8 H100 (line 209) -17.45 -> -15.75 %.
  // Lowered to 11.25 % and 10.11 % (11.2496 / 10.1056 %) by PyTorch's
  // LayerNorm backward, whose weight gradient is a kernel of its own reading
  // the output gradient and the input again (training.
  // norm_weight_grad_kernel: llm-foundry's LPLayerNorm, torchtitan's
  // nn.LayerNorm on Frontier): llm-foundry 6.85 -> 6.70 %, line 209 -15.75
  // -> -15.08 %.
  // Lowered to 11.16 %, 9.96 % and 19.72 % (11.1533 / 9.9570 / 19.7141 %)
  // by what Megatron-Core's attention runs with Transformer Engine around
  // the fused QKV projection (RoPE's kernels, the packed layout's copies of
  // the queries and values, the split's concatenation: training.rope_kernel
  // and packed_qkv_copies, on by default), together with the norms'
  // one-pass backward at its 3 accesses an element (4 were priced;
  // Transformer Engine, apex's persistent FastLayerNorm) and the two-kernel
  // backward of Megatron's non-persistent LayerNorm of 2021 and
  // torch.compile's norms: the Megatron-Core rows 11.23 -> 10.94 %, the
  // three Grattafiori rows (no framework: the defaults) 41.08 -> 40.74 %.
  // The dropless Qwen3 rows, predicted far too fast (lines 110, 112, 115,
  // 116: -53 to -57 %), launch the new kernels under their host-launch
  // bound too and come 0.6-1.8 points closer.
  // Lowered to 11.12 %, 9.90 % and 19.39 % (11.1198 / 9.8990 / 19.3891 %)
  // by Qwen3's QK-norms (model key qk_norm: a norm over each head's queries
  // and one over its keys, whose new keys also make Transformer Engine copy
  // the values): all 17 Qwen3 rows run slower, 15 of them toward their
  // measurements (line 110 -56.54 -> -56.03 %, line 117 -3.09 -> -1.71 %);
  // lines 109 and 113, predicted slow, move 0.6-0.8 point further.
  // Lowered to 10.98 %, 9.65 % and 19.34 % (10.9740 / 9.6464 / 19.3394 %)
  // by TP collectives overlapped beside their own GEMM only, the forward
  // reduce-scatter's last chunk exposed (TpExposedCollectives): the H100
  // rows with tp 4-8 under FP8 or context parallelism, whose attention
  // projections are shorter than their collectives, run slower, toward their
  // measurements (Megatron-Bridge's Llama 3.1 405B lines 79, 93, 99: -11.3 /
  // -14.2 / -12.2 -> -6.8 / -9.9 / -7.7 %; the Megatron-LM README's GPT 70B
  // line 36 +24.1 -> +19.4 % in speed); rows already predicted slow move
  // further (Nemotron-340B on B200, line 55, +7.6 -> +11.3 %; Llama 3 70B on
  // H100, lines 78, 92, 96, +1.1 to +2.0 points).
  // Raised to 11.01 % and 9.71 % (11.0089 / 9.7069 %) by the tensor-parallel
  // all-gathers of per-tensor FP8 plans moving 1 B an element, as
  // Transformer Engine's modules gather (training.fp8_tp_gather; current
  // scaling's amax all-reduce before each): the H100 FP8 rows at tp 4-8,
  // already predicted fast, run faster (Megatron-Bridge's Llama 3.1 405B
  // lines 79, 93, 99: -6.9 / -9.9 / -7.7 -> -10.1 / -13.1 / -11.4 %; NeMo
  // 24.07's Nemotron-340B, line 47, -4.4 -> -7.2 %), rows predicted slow
  // come closer (Nemotron-340B on B200 and GB200, lines 55 and 64, +11.3 /
  // +2.6 -> +8.2 / -0.7 %; Llama 3 70B on H100, lines 78, 92, 96, 1.2-1.6
  // points).
  // Raised to 11.02 % (11.0105 %) by reading the four Megatron-Bridge
  // 26.02 Llama rows whose notes name their recipe preset's current-scaling
  // plan (_FP8_CS_V2) as fp8-cs, not the table's bare FP8 read as delayed
  // scaling: the two predicted fast come closer (lines 95, 99: -6.8 / -11.4
  // -> -5.4 / -8.8 %), the two predicted slow move further (lines 96, 98:
  // +2.8 / +7.2 -> +5.6 / +8.8 %).
  EXPECT_LE(file.mape_pct, 11.02);
  EXPECT_LE(file_hb.mape_pct, 9.71);
  EXPECT_LE(file_moe.mape_pct, 19.34);
  // This repository's own H200 steps (validation/gpu_step/README.md): the
  // four of the first run, 2.90 %, and the three short-sequence ones taken
  // later as a held-out check (-0.9 / -1.0 / +3.5 %): 2.43 % (2.4336 %) over
  // seven, none beyond the checkpointed step's +4.46 %. Then, with eager
  // autocast's weight-gradient upcast at the element rate, 1.91 % (1.9109 %):
  // +0.1 / +4.9 / +0.1 / -4.3 % (compiled: unmoved) and +0.2 / +0.1 /
  // +3.7 %; the checkpointed step, slow already (the GEMMs' clock, README
  // there), is the largest, +4.90 %. Then, with full recompute's second
  // cast of each recomputed layer's weights under autocast (the profile's
  // 210 more fp32 -> bf16 copies a microbatch; RecomputeRecastBytesPerParam),
  // that step +5.26 % and the seven 1.96 % (1.9625 %): a cost the step pays,
  // priced, moves it away from its measurement.
  // Lowered to 1.49 % (1.4811 %), the largest now the compiled step's
  // -4.26 %: the checkpointed step's recompute stops before the MLP's down
  // projection, as its profile's GEMM count shows (418 forward-layout GEMMs
  // where a whole-forward recompute makes 450; training.
  // checkpoint_early_stop): +5.26 -> +1.89 %.
  const ValidationReport own =
      subset(file, [&](const ValidationRow& row) { return prefixed(row, {"Orrery H200 training steps 2026"}); });
  EXPECT_EQ(own.evaluated, 7);
  EXPECT_LE(own.mape_pct, 1.49);
  EXPECT_LE(own.max_abs_error_pct, 4.27);
  // The NeMo and Megatron-Bridge performance tables (FP8 on H100, B200 and
  // GB200), at this stop's start 10.73 / 15.91 / 16.66 / 16.77 / 20.24 /
  // 23.44 / 9.49 % (docs/fp8-training.md says which rows moved and what is
  // left).
  // With the FP8 recipes priced (above), from 10.83 / 15.32 / 16.30 / 15.46 /
  // 19.97 / 20.72 / 7.76: NeMo 25.04 (all current scaling) 16.29 -> 15.16 %,
  // Megatron-Bridge 25.09 15.45 -> 15.22 %, 25.11 19.97 -> 20.15 % (its
  // current-scaling Llama 3.1 405B and 70B GB200 rows, predicted slow,
  // +27.9 -> +30.2 and +10.1 -> +12.1 %), 26.02 20.71 -> 20.70 %.
  // With the measured-MAMF GEMM curves (above): NeMo 25.04 (GB200) 15.16 ->
  // 14.41 %, Megatron-Bridge 25.09 15.22 -> 14.97 %, 25.11 20.15 -> 19.77 %,
  // 26.02 20.70 -> 20.53 %; up, the B200 tables: NeMo 25.02 15.31 -> 15.53 %,
  // the NeMo long-sequence Llama 3 8B table 7.75 -> 8.46 % (its short
  // sequences, predicted fast, faster still: 8K +17.4 -> +19.3 %).
  // The dense data-parallel group as dp x cp (above): NeMo 24.07 10.82 ->
  // 10.98 %, 25.02 15.31 -> 14.86 %, 25.04 15.16 -> 16.49 % (its GB200
  // Llama 3.1 405B row, +6.5 -> -17.2 %), Megatron-Bridge 25.09 15.22 ->
  // 15.03 %, 25.11 20.15 -> 18.68 %, 26.02 20.70 -> 20.69 %, long-sequence
  // 7.75 -> 7.84 %. Interleaved plans reducing chunk by chunk (above):
  // NeMo 24.07 10.98 -> 11.11 %, 25.02 14.86 -> 13.78 %, Megatron-Bridge
  // 25.09 15.03 -> 15.50 %, 25.11 18.68 -> 19.35 %, 26.02 20.69 -> 20.79 %.
  // The embedding and loss split where faster (above): NeMo 25.02 13.78 ->
  // 14.27 %, 25.04 16.49 -> 17.04 %, Megatron-Bridge 25.09 15.50 ->
  // 17.53 %, 25.11 19.35 -> 19.51 %, 26.02 20.79 -> 20.70 %.
  // All four branches together: NeMo 24.07 11.11 %, 25.02 15.02 %, 25.04
  // 15.95 %, Megatron-Bridge 25.09 17.51 %, 25.11 19.34 %, 26.02 20.24 %,
  // long-sequence 8.55 %. The grouped expert GEMMs' FP8 casts (above): NeMo
  // 25.02 15.02 -> 15.07 % (its Mixtral-8x7B B200 row, already slow, +3.3 ->
  // +4.9 %; its Mixtral-8x22B row -11.2 -> -9.9 %), 25.04 15.95 -> 14.89 %,
  // Megatron-Bridge 25.09 17.51 -> 16.10 %, 25.11 19.34 -> 18.72 %, 26.02
  // 20.24 -> 18.99 %. With GEMMs at their reduction depth (above): NeMo
  // 24.07 11.10 %, Megatron-Bridge 25.11 19.30 %, the rest within 0.01. The
  // layers left over to the middle stages (above): Megatron-Bridge 25.09
  // 18.16 %, 25.11 19.71 %, 26.02 20.54 %, up: their DeepSeek-V3 and
  // Qwen3-235B rows run faster, and most were fast already. All three
  // together: NeMo 24.07 11.10 %, 25.02 15.07 %, 25.04 14.89 %,
  // Megatron-Bridge 25.09 16.02 %, 25.11 19.07 %, 26.02 19.05 %,
  // long-sequence 8.55 %. The MoE router in BF16 with no FP8 casts and the
  // dispatcher's kernels in the host bound (above): NeMo 25.02 15.07 %,
  // 25.04 14.89 -> 14.96 %, Megatron-Bridge 25.09 16.02 -> 16.11 %, 25.11
  // 19.07 -> 18.99 %, 26.02 19.05 -> 18.97 %. Raised for 25.04 and 25.09:
  // their FP8 MoE rows (Mixtral on GB200, the token-dropping Qwen3 and
  // DeepSeek-V3 rows), already predicted fast, lose the router's FP8 casts,
  // which Megatron-Core never runs, and come out faster still. The
  // Transformer Engine modules on the dropless layers' host (above):
  // Megatron-Bridge 26.02 18.97 -> 18.85 %.
  // Issue 15's FP8 casts on Blackwell (above): NeMo 25.02 15.07 -> 15.39 %,
  // 25.04 14.96 -> 15.77 %, Megatron-Bridge 25.09 16.11 -> 16.31 %, the
  // long-sequence table 8.55 -> 9.08 % (raised: their per-tensor FP8 rows on
  // B200/GB200, predicted fast, lose the transposed copy TE does not write
  // there and come out faster); down, Megatron-Bridge 25.11 18.99 -> 18.96 %,
  // 26.02 18.97 -> 18.69 % (their MXFP8 rows, predicted fast, slower);
  // 18.57 % for 26.02 with the host term as well.
  // FlashAttention's efficiency by sequence length (cuDNN's factors on the
  // H100 profile, Shah et al. 2024 Figs. 5-6): NeMo 24.07 11.10 -> 11.05 %,
  // Megatron-Bridge 25.11 18.96 -> 18.90 %, 26.02 18.57 -> 18.53 %; up,
  // NeMo 25.02 15.39 -> 15.41 % (its GPT3-175B H100 row at 2k tokens, where
  // cuDNN runs at 0.93 of its 4k rate, -0.03 -> +0.20 %) and Megatron-Bridge
  // 25.09 16.31 -> 16.32 % (its Llama 3 8B H100 row at 8k, where cuDNN runs
  // faster than at 4k, -0.75 -> -1.49 %).
  // The Blackwell GEMM curves from Blackwell measurements and the MXFP8
  // curve (above; docs/fp8-training.md): NeMo 25.02 15.41 -> 13.62 %, 25.04
  // 15.77 -> 12.03 %, Megatron-Bridge 25.09 16.32 -> 15.18 %, 25.11 18.90 ->
  // 17.17 %, 26.02 18.53 -> 18.23 %, long-sequence 9.08 -> 7.22 % (its 8K
  // row +20.7 -> +15.7 %); MXFP8 priced 2.1 % slower than current scaling
  // on the Llama 3 8B plan (lines 67/68, 86/87), where it was 0.5 % faster.
  // The recipes' stated recompute and overlaps (above; docs/fp8-training.md,
  // "What the recipes state"): Megatron-Bridge 25.09 15.18 -> 15.86 % and
  // 26.02 18.23 -> 18.73 % (raised: their GB200 FSDP rows 69 / 71 / 95 run
  // no recompute with activations offloaded to Grace memory, not priced, and
  // come out fast), 25.11 17.17 -> 16.69 % (line 82, +18.9 -> -9.3 %).
  // The activation offload those four rows state, priced
  // (training.offload_activation_layers; docs/fp8-training.md, "Activation
  // offload priced"): the Llama 3 70B rows move by one exposed copy each
  // (line 69 -16.06 -> -15.95 %, 82 -9.34 -> -9.23 %, 95 -16.46 -> -16.35 %):
  // 26.02 18.73 -> 18.72 %, 25.11 16.69 % unchanged. Raised for 25.09,
  // 15.86 -> 15.93 %: line 71 (Llama 3.1 405B, tp 2) now fits its 186 GB
  // with 95 layers offloaded, so the harness searches its unstated sequence
  // parallelism instead of taking the first value of a plan that does not
  // fit, and sequence parallelism on is faster: -16.13 -> -17.47 %.
  // The Blackwell GEMM curves at the B200's sustained clock (above): NeMo
  // 25.02 13.62 -> 9.73 %, 25.04 12.03 -> 7.15 %, Megatron-Bridge 25.09
  // 15.93 -> 11.75 %, 25.11 16.69 -> 14.27 %, 26.02 18.72 -> 18.43 %,
  // long-sequence 7.22 -> 3.68 % (its 8K row +15.7 -> +6.4 %). The Llama 3 8B
  // current-scaling B200 rows, -7.6 / -5.6 %, come to +0.3 / +2.4 % (lines
  // 74 / 86; their H100 twins 77 / 91 are -1.5 / +1.1 %).
  // The extra backward all-gather of sequence parallelism (above): NeMo
  // 24.07 11.05 -> 10.81 %, 25.04 12.03 -> 11.72 %, Megatron-Bridge 25.09
  // 15.93 -> 15.83 %, 25.11 16.69 -> 16.61 %, 26.02 18.72 -> 18.68 %,
  // long-sequence 7.22 -> 7.18 %. Raised for NeMo 25.02, 13.63 -> 13.65
  // (13.62 -> 13.64 %): its two rows predicted slow, Nemotron-4 340B on
  // B200 (line 55, +11.2 -> +12.1 %) and GPT-3 175B on H100 (line 58, +0.2
  // -> +0.9 %), outweigh the four it brings closer (lines 50, 52, 53, 57);
  // the all-gather is in the code those rows ran (Transformer Engine's
  // LayerNormLinear and LayerNormMLP backward), so their other terms are
  // what is off.
  // The dropless forward's wait on the dispatcher's sync (above): Megatron-
  // Bridge 25.11 16.69 -> 16.64 %, 26.02 18.72 -> 18.65 %. The host time
  // per kernel launch by host CPU (above): 25.11 16.64 -> 15.80 %, 26.02
  // 18.65 -> 17.17 %. The three together: NeMo 24.07 / 25.02 / 25.04 10.81 /
  // 9.75 / 7.04 %, Megatron-Bridge 25.09 / 25.11 / 26.02 11.65 / 13.37 /
  // 17.02 %, long-sequence 3.64 %. The 25.09 Qwen3 rows' current scaling
  // (above): Megatron-Bridge 25.09 11.65 -> 10.60 % (10.6016 %).
  // What a step spends outside its layers (above): NeMo 24.07 / 25.02 /
  // 25.04 10.53 / 9.63 / 6.29 %, Megatron-Bridge 25.09 / 25.11 11.50 /
  // 13.36 %, long-sequence 3.58 %. Raised for Megatron-Bridge 26.02, 17.02
  // -> 17.08 %: its rows predicted slow move away (Llama 3.1 405B lines 97 /
  // 98 +18.0 / +6.1 -> +18.7 / +6.8 %, Llama 3 70B line 96 +1.3 -> +2.1 %),
  // almost all of it their LM head's and embedding's tensor-parallel
  // collectives, paid every microbatch on the pace-setting end stages
  // (alone: 17.02 -> 17.10 %), collectives the code those rows ran issues
  // (VocabParallelEmbedding, the output layer's ColumnParallelLinear); their
  // other terms are what is off. All of this stop's terms together: NeMo
  // 24.07 / 25.02 / 25.04 10.53 / 9.63 / 6.29 %, Megatron-Bridge 25.09 /
  // 25.11 / 26.02 10.45 / 13.36 / 17.08 %, long-sequence 3.58 %.
  // The Blackwell GEMM curves below 137 GFLOP from OpenXLA's sm_100 table
  // (above): NeMo 25.02 / 25.04 9.63 / 6.28 %, Megatron-Bridge 25.09 /
  // 25.11 10.45 -> 10.10 % / 13.36 -> 13.17 %, 26.02 17.08 % (17.0827).
  // The DeepSeek-V3 rows' MTP and pipeline layout (above): Megatron-Bridge
  // 26.02 17.08 -> 16.90 % (line 100 +5.6 -> -5.0 %, line 101 +17.2 ->
  // -15.3 %); raised for 25.09, 10.10 -> 11.47 % (lines 73 / 76 -7.6 / +6.1
  // -> -16.9 / -23.1 %) and 25.11, 13.17 -> 13.40 % (line 85 +28.7 -> +2.9 %,
  // 84 +4.7 -> -7.8 %, 90 -0.5 -> -27.7 %): the layout the recipe states
  // leaves one layer, not three, beside the MTP module and the LM head on
  // the last pp 16 stage, and the B200 rows' per-layer cost left unpriced
  // shows (docs/moe-long-context.md).
  // The NeMo 24.07 / 25.02 recipes (docs/fp8-training.md, "The NeMo 24.07
  // and 25.02 recipes"): 10.53 -> 9.59 % (line 47 +15.4 -> -7.9 % without
  // the full recompute the search had assumed) and 9.63 -> 8.73 % (line 55
  // +17.9 -> +7.2 %: no recompute, the updated weights gathered in FP8).
  // The fused (cuDNN) backward's length factor under a causal mask (Shah et
  // al. 2024 Figs. 5-6; docs/hopper-dense.md section 10): NeMo 24.07 9.59 ->
  // 9.55 %, Megatron-Bridge 25.11 13.40 -> 13.35 %, 26.02 16.90 -> 16.88 %.
  // Raised for NeMo 25.02, 8.73 -> 8.75 % (8.7545 %): its GPT-3 175B H100
  // row at 2k tokens (line 58), predicted slow, is slower by the backward's
  // causal penalty at 2k (0.932 -> 0.859), +1.67 -> +1.88 %, while the same
  // model's NeMo 24.07 rows (lines 42 / 43), predicted fast, come closer;
  // and for Megatron-Bridge 25.09, 11.47 -> 11.49 % (11.4862 %): its Llama 3
  // 8B H100 row at 8k (line 77), predicted fast, is faster by the factor at
  // 8k (1.038 -> 1.076), -1.47 -> -2.05 %. The factor is the published bars'
  // arithmetic for every row alike; the rows' other terms are what is off.
  // Raised by the recipes' bf16 gradient reduction (grad_reduce_in_fp32 =
  // False, the rows' reduce_dtype): NeMo 25.02 8.75 -> 8.78 % (8.7784 %;
  // its Llama 3 8B B200 row, line 51, -14.7 -> -14.9 %), Megatron-Bridge 25.09
  // 11.49 -> 11.65 % (11.6480 %), 25.11 13.35 -> 13.47 % (13.4678 %), 26.02
  // 16.88 -> 16.98 % (16.9722 %): rows predicted fast, faster by half their
  // gradient bytes.
  // Megatron-Bridge 26.02, 16.97 -> 16.94 % (16.9445 %), by the GB200
  // FP8-MX recipe's mlp recompute module (recompute mla_up_proj+mlp,
  // training.recompute_mlp: the three dense layers' MLP blocks run their
  // forward twice): line 100 -5.0 -> -4.6 %; the H100 recipe's row (line
  // 41) -1.8 -> -1.6 %.
  // Raised by the pipelined collectives across tiers (above): NeMo 24.07
  // 9.56 -> 9.61 % (9.6026 %), 25.02 8.78 -> 8.93 % (8.9230 %),
  // Megatron-Bridge 25.09 11.65 -> 11.73 % (11.7269 %), 25.11 13.47 ->
  // 13.49 % (13.4817 %): their data-parallel reductions cross nodes.
  // Moved by Megatron-Core's attention copies with Transformer Engine and
  // the norms' one-pass backward (above): NeMo 24.07 9.61 -> 9.18 %
  // (9.1700 %), 25.02 8.93 -> 8.66 % (8.6570 %), 25.04 6.29 -> 5.96 %
  // (5.9507 %), Megatron-Bridge 25.09 11.73 -> 11.21 % (11.2045 %), 26.02
  // 16.95 -> 16.56 % (16.5580 %), the long-sequence B200 rows 3.59 -> 3.12 %
  // (3.1171 %); raised for Megatron-Bridge 25.11, 13.49 -> 13.60 %
  // (13.5966 %): its Llama 3 8B and 70B rows, within a point or predicted
  // slow, are 0.7-1.3 points slower (lines 80, 82, 86, 87, 91, 92: -0.1 /
  // +0.3 / +2.5 / +1.0 / +0.5 / +4.2 -> +1.1 / +1.0 / +3.6 / +2.1 / +1.8 /
  // +4.9 %), Qwen3-235B on H100 (line 113) +17.2 -> +18.0 %, while its
  // dropless Qwen3-30B rows, predicted far too fast, come 0.7-1.3 points
  // closer (line 110 -57.2 -> -56.5 %).
  // Lowered by Qwen3's QK-norms (above): Megatron-Bridge 25.09 11.21 ->
  // 10.96 % (10.9567 %), 25.11 13.60 -> 13.55 % (13.5420 %), 26.02 16.56 ->
  // 16.28 % (16.2759 %).
  // Moved by TP collectives overlapped beside their own GEMM only
  // (TpExposedCollectives): NeMo 24.07 9.18 -> 8.00 % (7.9925 %), 25.09
  // 10.96 -> 10.65 % (10.6438 %), 25.11 13.55 -> 13.42 % (13.4168 %),
  // 26.02 16.28 -> 16.13 % (16.1284 %), the long-sequence B200 rows 3.12 ->
  // 2.85 % (2.8457 %); raised for NeMo 25.02, 8.66 -> 8.91 % (8.9025 %: its
  // Nemotron-340B B200 row, line 55, already predicted slow, +7.6 -> +11.3 %;
  // GPT3-175B on H100, line 58, +1.6 -> +2.6 %), and 25.04, 5.96 -> 5.99 %
  // (5.9804 %: Nemotron-340B on GB200, line 64, -2.5 -> +2.6 %).
  // Moved by per-tensor FP8 plans' tensor-parallel gathers at 1 B an
  // element (training.fp8_tp_gather, above): lowered for NeMo 25.02, 8.91 ->
  // 8.66 % (8.6569 %), and 25.04, 5.99 -> 5.76 % (5.7507 %), whose
  // Nemotron-340B rows were predicted slow; raised for NeMo 24.07, 8.00 ->
  // 8.99 % (8.9851 %: its H100 FP8 rows at tp 4-8, predicted fast, 0.8-2.8
  // points faster), Megatron-Bridge 25.09 10.65 -> 10.74 % (10.7321 %),
  // 25.11 13.42 -> 13.51 % (13.5033 %), 26.02 16.13 -> 16.24 % (16.2306 %:
  // the H100 Llama 3.1 405B rows; 16.27 %, 16.2628 %, once its four Llama
  // rows' _FP8_CS_ recipes are read as current scaling, above) and the
  // long-sequence B200 rows 2.85 ->
  // 3.03 % (3.0238 %: at tp 2-4, predicted 0.3-3.7 % fast, 0.1-0.7 points faster).
  for (const auto& [prefix, ceiling] : std::vector<std::pair<const char*, double>>{
           {"NVIDIA NeMo 24.07", 8.99},
           {"NVIDIA NeMo 25.02", 8.66},
           {"NVIDIA NeMo 25.04", 5.76},
           {"NVIDIA Megatron-Bridge 25.09", 10.74},
           {"NVIDIA Megatron-Bridge 25.11", 13.51},
           {"NVIDIA Megatron-Bridge 26.02", 16.27},
           {"NVIDIA NeMo long-sequence Llama 3 8B", 3.03}}) {
    const char* source = prefix;
    const ValidationReport r = subset(file, [&](const ValidationRow& row) { return prefixed(row, {source}); });
    EXPECT_GT(r.evaluated, 0) << source;
    EXPECT_LE(r.mape_pct, ceiling) << source;
  }
  // Every 25.09 Qwen3 row runs FP8 per-tensor current scaling: the release's
  // Qwen3 recipe (qwen3_llm_pretrain.py, the *_8GPUS version) defaults to
  // fp8_recipe cs, and Megatron-Bridge's get_precision_config (scripts/
  // performance/utils/helpers.py at 0fa501ac) has no delayed scaling. None
  // of the six may fall back to the harness's unstated-recipe default.
  int qwen3_2509 = 0;
  for (const auto& row : file.rows) {
    if (row.source.rfind("NVIDIA Megatron-Bridge 25.09", 0) != 0 || row.model.rfind("Qwen3", 0) != 0) continue;
    ++qwen3_2509;
    EXPECT_TRUE(row.skipped.empty()) << "line " << row.line;
    EXPECT_EQ(row.assumptions.find("fp8 delayed scaling"), std::string::npos) << "line " << row.line;
  }
  EXPECT_EQ(qwen3_2509, 6);
  // The seven Megatron-Bridge DeepSeek-V3 rows on B200 and GB200 state their
  // recipes' mla_up_proj recompute: each fits its device without the full
  // recompute the harness would otherwise search its way to.
  int deepseek_blackwell = 0;
  for (const auto& row : file.rows) {
    if (row.model != "DeepSeek-V3" || (row.device != "b200" && row.device != "gb200") ||
        !prefixed(row, {"NVIDIA Megatron-Bridge 2"}))
      continue;
    ++deepseek_blackwell;
    EXPECT_FALSE(row.predicted_oom) << "line " << row.line;
    EXPECT_EQ(row.assumptions.find("recompute full"), std::string::npos) << "line " << row.line << ": " << row.assumptions;
  }
  EXPECT_EQ(deepseek_blackwell, 7);
  // torchtitan: 18.56 % at this stop's start (selective layer checkpointing
  // priced as none), 16.03 % with every change above, 15.77 % with its
  // three "selective op" rows as recompute op (lines 121, 125, 126 above);
  // 7.00 % with eager element-wise kernels (compile = false; every row still
  // fast, -4.7 to -13.5 %: Llama 3 8B -15.7 / -17.1 -> -6.5 / -6.5 %, Llama 3
  // 70B -10.9 -> -5.1 %, Llama 2 13B -17.3 / -15.8 / -18.8 -> -7.3 / -5.4 /
  // -7.0 %, Llama 2 70B -19.7 / -10.9 -> -13.5 / -4.7 %); 5.39 % with
  // FSDP2's copy-out of each gather (-5.2 / -5.1, -3.8, -5.7 / -4.0 / -5.6,
  // -10.6 / -3.3 %). 5.38 % with the low-precision copy's second read of
  // the fp32 master in the optimizer step (OptimizerStepBytesPerParam).
  // Raised to 5.51 % (5.4999 %): torchtitan's loss is F.cross_entropy on
  // fp32 logits, 36 B per logit rather than Megatron-Core's 52 B
  // (docs/loss-path.md); the rows, fast already, move faster.
  // Lowered to 4.41 % (4.4003 %): the eager element-wise kernels PyTorch
  // runs non-vectorized at the A100's element rate (185 G/s, PyTorch PR
  // #195542; hardware::ElementwiseTime), each row 1.0-1.8 points slower:
  // Llama 3 8B -5.6 / -5.4 -> -4.1 / -3.6 %, Llama 2 70B -10.6 -> -9.6 %.
  // Raised to 6.28 % (6.2713 %): torchtitan's activation checkpointing is
  // PyTorch's non-reentrant checkpoint, which stops its replay before the
  // MLP's down projection (training.checkpoint_early_stop): the four
  // full-recompute rows (lines 120, 122, 124, 127) -4.1 / -2.8 / -3.2 /
  // -2.3 -> -6.4 / -7.9 / -5.4 / -7.7 %; what the source's rows have left in common is now a fast bias
  // in every recompute mode, not a GEMM the recompute priced too many.
  const ValidationReport torchtitan =
      subset(file, [&](const ValidationRow& row) { return prefixed(row, {"torchtitan"}); });
  ASSERT_EQ(torchtitan.evaluated, 8);
  // Raised to 8.50 % (8.4944 %) by the pipelined collectives across tiers
  // (above): FSDP2's gathers and reduce-scatters over 16 to 128 GPUs cross
  // nodes; every row was predicted fast and is faster (line 126 -9.6 ->
  // -13.4 %).
  EXPECT_LE(torchtitan.mape_pct, 8.50);
  // Gemstones (McLeish et al. 2025) on Frontier MI250X GCDs: 54.27 %, every
  // row still predicted fast (-40 to -64 %): 67.83 % as GPT-shaped models
  // with fused element-wise kernels, 63.44 % with Gemma's architecture
  // (gated MLP, GQA, RoPE) from the architecture columns, 54.27 % with
  // litgpt's eager norms, rotary embedding and activation
  // (training.elementwise: eager); 53.73 % (max -63.44 %) once the MI250X
  // GCD profile took its GEMM curve from a cited MI250X / A100 comparison
  // (0.878 x the A100 curve, configs/devices/mi250x-gcd.yaml: the same
  // plateau, 0.70, as the H200 curve it had borrowed) and the package's
  // cited overlap contention (overlap_slowdown 0.189, which the GCD profile
  // had dropped): the searched plans overlap the gradient reduction, and
  // the 2B rows' 4 GB of gradients now slow their backward.
  const ValidationReport gemstones =
      subset(file, [&](const ValidationRow& row) { return prefixed(row, {"McLeish et al. 2025"}); });
  ASSERT_EQ(gemstones.evaluated, 22);
  // Then 49.42 % with the fp32 cross entropy over their 50,304-word
  // vocabulary (step_kernels.h), large beside layers of width 256-3072.
  // Then 49.57 %: litgpt's layers drop nothing, so their residual adds write
  // no 1-byte masks (issue 15), a little less traffic for rows already fast.
  // Then 47.63 % with GEMMs at their reduction depth (widths 256-3072: every
  // forward GEMM but the MLP down projection reduces over K = h < 4096).
  // Then 49.72 %: the event engine gathers ZeRO-3 weights layer by layer
  // (parallelism::ChunkWork::zero3_units), and the plan search the harness
  // runs now picks ZeRO-3 for 15 of the rows, within 0.7 % of the ZeRO-1
  // plans it picked before (up to 0.7 % faster); all were fast already.
  // Both together: 47.78 %.
  // Then 41.01 % (max -53.21 %) with the GCD profile's figures from
  // published MI250(X) kernel measurements (issue 15, configs/devices/
  // mi250x-gcd.yaml): ROCm FlashAttention on an MI250 GCD at 0.289 / 0.167
  // of peak forward / backward (schema defaults 0.5 / 0.4 before) and the
  // GEMM curve scaled by measured maximum achievable matmul FLOPS (0.894 x
  // the A100 curve, plateau 0.715; 0.878 and 0.70 before). The curve alone
  // gives 48.28 % (it is 1-2 % faster); the attention 41.01 % with it.
  // 40.93 % with the optimizer step's second read of the fp32 master.
  // Raised to 42.97 % (42.9591 %): litgpt's loss is F.cross_entropy under
  // bf16-mixed autocast, fp32 logits, 36 B per logit rather than
  // Megatron-Core's 52 B (docs/loss-path.md); every row, fast already,
  // moves faster (Gemstone-768x3 -30.9 -> -36.8 %).
  // Lowered to 42.94 % (42.936 %): the memory of eager code's saved
  // tensors moves Gemstone-512x16 to a plan that fits (-50.1 -> -49.5 %).
  // Raised to 43.34 % (43.3353 %) by the pipelined collectives across
  // tiers (above): RCCL runs NCCL's rings; each row 0.1-0.9 points faster.
  EXPECT_LE(gemstones.mape_pct, 43.34);
  // The one other measured run on MI250X GCDs that states its set-up: the
  // frontier-torchtitan README's replication of torchtitan's Llama 3 8B
  // benchmark (FSDP2 over 64 GCDs, op-level selective checkpointing, local
  // batch 1, no torch.compile; 1333 tokens/s per GCD, 6.146 s a step):
  // predicted 4.66 s, -24.17 %, where the same set-up on 64 A100 (line 121)
  // is -5.1 %: the GCD profile itself runs fast on code the harness prices
  // well on the A100 (docs/frontier-gemstones.md). Then 4.43 s, -27.91 %,
  // with its stated LayerNorm priced as the one kernel torch.nn.LayerNorm
  // is (the A100 twin runs torchtitan's eager RMSNorm). Then 5.30 s,
  // -13.75 %, with the GCD profile's measured FlashAttention fractions and
  // MAMF-scaled GEMM curve (the curve alone: -28.96 %). Then -13.74 % with
  // the optimizer step's second read of the fp32 master. Raised to 13.95 %
  // (-13.94 %) with torchtitan's fp32 PyTorch cross entropy, 36 B per logit
  // rather than 52 B (docs/loss-path.md). Raised to 13.96 % (-13.955 %):
  // eager code makes no copy of the attention output (PyTorch's SDPA
  // returns a transposed view of a contiguous (batch, seq, heads, dv)
  // buffer; the H200 profile has none) and repeat_kv's backward is a
  // reduction moving its copy's bytes once, not twice. The GCD profile has
  // no unvectorized_element_rate (no measurement on an MI250X yet).
  const ValidationReport frontier_torchtitan =
      subset(file, [&](const ValidationRow& row) { return prefixed(row, {"frontier-torchtitan README"}); });
  ASSERT_EQ(frontier_torchtitan.evaluated, 1);
  // Raised to 15.92 % (15.9180 %) by the pipelined collectives across
  // tiers (above): its FSDP traffic crosses Frontier's nodes.
  EXPECT_LE(frontier_torchtitan.mape_pct, 15.92);
  ASSERT_EQ(korthikanti.evaluated, 8);
  ASSERT_EQ(narayanan.evaluated, 22);
  ASSERT_EQ(readme.evaluated, 9);
  ASSERT_EQ(bridge.evaluated, 1);
  ASSERT_EQ(hb.evaluated, 10);
  // Target 6 %: not met, measured 11.95 % (13.53 % before the overlap
  // contention term; the DeepSeek-V3 row's attention in BF16 added 0.18;
  // 11.71 before that row's expert permute/unpermute traffic, +0.22, and
  // its grouped expert GEMMs at per-expert efficiency, +0.03). Then 11.78 %
  // with the fp32 cross entropy, the FP8 casts and the BF16 LM head
  // (step_kernels.h); then 11.23 % once the DeepSeek-V3 row runs its recipe's
  // MLA up-projection recompute instead of full recompute and the recipe's
  // etp = 1 (docs/moe-long-context.md). Then 11.78 % with the materialised
  // attention's backward at its kernels' traffic (the Korthikanti and
  // Narayanan rows below, already fast and high, move further). Then
  // 12.39 %: interleaved plans reduce their gradients chunk by chunk (the
  // README rows, which state no interleave, are searched to deep
  // interleaving and move faster; above). Then, each alone: 12.45 % with the
  // DeepSeek-V3 row's grouped expert GEMMs paying their FP8 casts
  // (Fp8GroupedCastTimes), +17.7 -> +20.2 % (below); 11.81 % with GEMMs at
  // their reduction depth (hardware::GemmDepthFactor): the Korthikanti,
  // Narayanan and README rows, all predicted fast, move toward their
  // measurements; 12.12 % with the Megatron-Bridge DeepSeek-V3 H100 row (61
  // layers over pp 16) its layers left over on the middle stages, +17.7 ->
  // +6.9 % (above). All three: 11.59 %.
  // 11.59 % with FlashAttention's length factors (Megatron-LM README rows at
  // 2k-4k tokens).
  // 10.80 % with DeepSpeed ZeRO-3's matrix-by-matrix prefetch (the Narayanan
  // Table 2 ZeRO-3 rows at micro batch 4, +23.7 / +27.7 -> +4.7 / +9.9 %;
  // docs/overlap.md).
  // 10.34 % with sequence parallelism's extra backward all-gather
  // (Korthikanti et al. 2022 Sec. 4.2.2): the four Korthikanti SP rows and
  // the README rows, all fast, slower (docs/korthikanti-layer.md).
  // 9.72 % (10.3367 -> 9.7180 %) with what a step spends outside its
  // layers (above; docs/korthikanti-layer.md, "Outside the layers").
  // 9.54 % (9.5316 %) with the DeepSeek-V3 H100 row's pipeline layout from
  // its recipe, 'Et|(tt|)*30mL' (7 layers on device 0, 6 on device 7):
  // +9.3 -> -1.8 % (docs/moe-long-context.md).
  // 8.18 % (9.7180 -> 8.1762 %): Megatron-LM of 2021's unfused gradient
  // accumulation and the division by dp at dp 1 (Narayanan, Korthikanti
  // below).
  // Both merged: 7.99 % (7.9898 %).
  // Lowered to 7.93 % (7.9271 %): the README rows' untied output layer
  // (docs/hopper-dense.md section 9).
  // Lowered to 7.81 % (7.8132 %): Megatron-LM of 2024's NaN check of the
  // gradient buffer (training.grad_nan_check) on the README rows.
  // Raised to 7.99 % (7.9820 %) by the pipelined collectives across tiers
  // (above): the README's pp 1 rows reduce across nodes, fast already
  // (1.7B +25.5 -> +27.1 %).
  // Lowered to 7.86 % (7.8540 %) by the bias gradients Megatron-LM's own
  // layers reduce in kernels of their own (training.separate_bias_grad) on
  // the rows before 2024 (Narayanan, Korthikanti).
  // Lowered to 7.82 % (7.8149 %) by the concatenation of the Q, K and V
  // gradients split off Megatron-LM's fused projection (training.
  // qkv_split_cat) on the same rows.
  // Lowered to 7.79 % (7.7806 %) by the norms' backward as each framework
  // runs it (Narayanan's 2021 rows on Megatron's two-kernel LayerNorm,
  // Korthikanti's on the persistent one-pass kernel).
  // Lowered to 7.30 % (7.2960 %) by TP collectives overlapped beside their
  // own GEMM only (TpExposedCollectives): the README's H100 rows.
  EXPECT_LE(all.mape_pct, 7.30);
  // Target: no row beyond 20 %: not met, measured 31.10 % (the Megatron-LM
  // README GPT 1.7B row, 41.93 % before the fp32 cross entropy over its
  // 131,072-word vocabulary).
  // Then 29.70 % (the same row, its K = 2048 GEMMs at their depth).
  // Then 27.34 % (the same row, its 48-way gradient buffer zeroed and
  // scaled every step, and its head's collectives).
  // Then 27.51 % (27.5102 %): the same row's norms, Transformer Engine's,
  // run their backward in one pass (3 accesses an element, 4 were priced).
  EXPECT_LE(all.max_abs_error_pct, 27.52);
  // Target 2.5 %: not met, measured 3.07 % (every plan field stated: the
  // search changes none of these rows; 3.18 % before the fp32 cross
  // entropy, which each row was short of). Then 3.83 %: the materialised
  // attention's softmax and dropout backward at their kernels' traffic
  // (39 -> 32 bytes per score element) speeds every row up, and seven of
  // the eight were already fast (Megatron-22B at 1,024 GPUs -5.7 -> -8.2 %).
  // Then 2.95 %: each weight-gradient GEMM reduces over one microbatch's
  // 2,048 tokens and, under tensor parallelism 8, the output projection over
  // K = h / 8 (768-3200), priced at that depth (hardware::GemmDepthFactor);
  // every row moves 0.6-1.4 points slower, seven of eight toward their
  // measurements (Megatron-22B -0.8 -> 0.0 %, Megatron-1T -0.3 -> +0.8 %).
  // Met, 1.77 % (2.9463 -> 1.7622 %): sequence parallelism's backward
  // gathers each column-parallel GEMM's sequence shard again for its weight
  // gradient (Sec. 4.2.2, "an extra all-gather in the backward pass"), two
  // all-gathers per layer the SP rows did not pay: lines 3 / 5 / 7 / 9
  // -7.5 / -6.6 / -4.7 / -0.8 -> -3.0 / -3.4 / -2.7 / +1.0 %; the
  // full-recompute rows (no SP) do not move. Table 4 per layer:
  // docs/korthikanti-layer.md and tests/estimate_test.cpp
  // (KorthikantiTable4OneLayerOf22b).
  // 1.67 % (1.7622 -> 1.6690 %) with what a step spends outside its layers
  // (docs/korthikanti-layer.md, "Outside the layers"): every row about 15 ms
  // (22B) to 0.96 s (1T) slower, lines 2-9 +0.0 / -3.0 / -2.1 / -3.4 /
  // -1.1 / -2.7 / +0.8 / +1.0 -> +1.1 / -1.6 / -1.8 / -2.9 / -0.5 / -1.7 /
  // +1.5 / +2.3 %.
  // 1.61 % (1.6690 -> 1.6119 %): Megatron-LM's DistributedDataParallel of
  // 2021-2023 divides the gradient buffer by dp at dp 1 too
  // (training.grad_scale_at_dp1), 8 bytes a parameter once a step, 13.0 ms
  // on the 22B node (lines 2 / 3 +1.1 / -1.6 -> +2.0 / -0.4 %; the pipelined
  // rows move by under 0.1 point). Their weight-gradient accumulation is
  // taken as fused, as the release of their features (--sequence-parallel)
  // turned it on; priced unfused (16.3 ms a microbatch on the 22B) it would
  // be 6.19 %, lines 4-9 +4.3 to +12.5 % (docs/korthikanti-layer.md).
  // Lowered to 1.55 % (1.5438 %, bias +0.19 -> -0.13 %): Megatron-LM's
  // layers reduce their bias gradients in kernels of their own
  // (training.separate_bias_grad), 9.09 ms a microbatch on the 22B node.
  // Kept at 1.55 % (1.5438 -> 1.5443 %, bias -0.13 -> -0.25 %) with the
  // concatenation of the Q, K and V gradients split off the fused
  // projection (training.qkv_split_cat), 2.36 ms a microbatch on the 22B
  // node: lines 2-3 and 8-9 (+2.66 / -0.04 / +1.71 / +2.45 -> +2.83 /
  // +0.18 / +1.77 / +2.54 %) away from the measured times, lines 4-7
  // (GPT-3 and Turing-NLG, -1.27 to -0.24 -> -1.15 to -0.17 %) toward them.
  // 1.53 % (1.5275 %) with the norms' backward as Megatron-LM of 2022 ran
  // it, apex's persistent FastLayerNorm in one pass (3 accesses an element
  // where 4 were priced), every row faster: lines 2-3 and 8-9 +2.83 / +0.18
  // / +1.77 / +2.54 -> +2.42 / +0.11 / +1.58 / +2.50 %, lines 4-7 now -1.42
  // / -2.38 / -0.37 / -1.43 %.
  EXPECT_LE(korthikanti.mape_pct, 1.53);
  // Target 8 %: not met, measured 23.86 % (the nine Megatron-LM README rows
  // at 23.76 %, the Megatron-Bridge DeepSeek-V3 row at 24.79 %: its MLA
  // attention runs in BF16 as Transformer Engine's FP8 recipes do, 14.88 %
  // before its MoE layers' permute/unpermute traffic and grouped expert
  // GEMMs at per-expert efficiency, 1.9 s more than it hides. The row is over-predicted for other reasons: the harness must
  // assume full recompute (the memory model puts the recipe's selective
  // recompute at 91 GB of 80) and 11 s of its 31 s is EP 64 all-to-all over
  // InfiniBand; docs/moe-long-context.md). Then 23.56 %: the README rows
  // 23.76 -> 21.78 % with the fp32 cross entropy over their 131,072-word
  // vocabulary (GPT 1.7B +41.9 -> +31.1 %), while the DeepSeek-V3 row moved
  // 24.79 -> 39.62 %: +4.3 points from the FP8 casts of its MLA projections,
  // shared experts and dense layers, +7.2 from its LM head in BF16 and +3.4
  // from the cross entropy, both counted twice on its last stage (the head
  // and the MTP module's pass of it). Then 21.39 %: the row runs the
  // recipe's recompute_modules mla_up_proj, which the memory model fits in
  // 80 GB (the per-head Q, K and V after the up projections are not kept;
  // full recompute had to be assumed before), and the recipe's etp = 1 (the
  // Megatron-Bridge MoE recipes' expert_tensor_parallel_size): +17.8 %; the
  // EP 64 all-to-all over InfiniBand is still a third of its step. Then
  // 21.37 % (the row 17.70 %) with the Blackwell FP8 curve and the dropout
  // masks of models that drop only (the README rows keep theirs). Then the
  // row 17.73 %: its blockwise recipe's scales (fp8-block, 1/16 B per
  // quantized element more). Then 23.80 % (the README rows 21.78 ->
  // 24.48 %) with interleaved plans reducing chunk by chunk (above). Then
  // 24.05 % (the row 20.16 %): its routed experts' FP8 casts, 4 B per
  // element of the rows fc1 and fc2 read forward and of their output
  // gradients backward, blockwise scaling quantizing each of its 4 local
  // experts apart (Fp8GroupedCastTimes); a cost Transformer Engine's
  // GroupedLinear runs, on a row already predicted slow for the EP 64
  // all-to-all over InfiniBand. Alone, GEMMs at their reduction depth gave
  // 23.43 % (the README rows 24.07 %), and the layers left over on the
  // middle stages 22.72 % (the row 6.86 %). All three: 22.57 %, the README
  // rows 24.07 %, the row 9.06 %.
  // Then 21.66 %, the README rows 23.06 % (22.5567 / 24.0674 -> 21.6569 /
  // 23.0601 %) with sequence parallelism's extra backward all-gather
  // (Korthikanti et al. 2022 Sec. 4.2.2): the README rows, searched to SP
  // and all fast, slower; the DeepSeek-V3 row (tp 2) 8.96 -> 9.03 %, under
  // its ceiling.
  // Then 19.87 %, the README rows 21.04 % (19.8679 / 21.0443 %) with what a
  // step spends outside its layers (docs/korthikanti-layer.md): each README
  // row's whole fp32 gradient buffer zeroed and scaled by 1/48 every step,
  // its head's and embedding's collectives (GPT 7.1B +26.5 -> +23.5 %).
  // Raised for the DeepSeek-V3 row, 9.03 -> 9.28 % (predicted slow already):
  // its LM head's and embedding's collectives (tp 2, every microbatch, on
  // the end stages; 9.03 -> 9.23 % alone) and the passes over its gradient
  // buffer (9.23 -> 9.28 %), both in the code Megatron-Core runs; the EP 64
  // all-to-all over InfiniBand is what is off (above).
  // Lowered to 19.13 % (19.1223 %), the DeepSeek-V3 row 1.82 % (1.8238 %),
  // by its recipe's pipeline layout 'Et|(tt|)*30mL' (validation/
  // training_runs.csv columns first_stage_layers / last_stage_layers 7 / 6):
  // the last device holds 6 layers beside the MTP module and the LM head,
  // not the even split's 7 (docs/moe-long-context.md).
  // Lowered to 18.87 %, the README rows 20.77 % (18.8713 / 20.7654 %): the
  // README table's model sizes count the output layer untied from the input
  // embedding (GPT 1.7B: 1.75 G untied, 1.49 G tied), so those rows state
  // tied_embeddings no (docs/hopper-dense.md section 9); the pp 1 rows move
  // 0.4-0.9 points (1.7B +27.3 -> +26.4 %), the pp > 1 rows not at all.
  // Lowered to 18.42 %, the README rows 20.26 % (18.4159 / 20.2594 %):
  // Megatron-LM of 2024 takes the L2 norm of every gradient bucket before
  // reducing it, to catch a NaN (--check-for-nan-in-loss-and-grad, on by
  // default; training.grad_nan_check), one more read of the fp32 gradient
  // buffer every step: 4 B a parameter, 2.5 ms of the 1.7B row's step
  // (+26.4 -> +25.5 %), 0.8-0.9 points on the pp 1 rows, 0.1-0.5 on the
  // others.
  // Raised to 18.82 % and the README rows 20.73 % (18.8126 / 20.7244 %) by
  // the pipelined collectives across tiers (above).
  // Raised to 18.98 % and 20.90 % (18.9792 / 20.8998 %) by the norms'
  // one-pass backward (Transformer Engine's, 3 accesses an element where 4
  // were priced): these GPT rows were already predicted fast; their
  // attention (MHA, learned positions) copies nothing.
  // Lowered to 17.05 %, the README rows 18.78 % and the DeepSeek-V3 row
  // 1.40 % (17.0405 / 18.7784 / 1.3994 %) by TP collectives overlapped beside
  // their own GEMM only (TpExposedCollectives): GPT 32B to 462B at tp 2-8,
  // whose forward reduce-scatters leave their last chunk exposed (GPT 70B
  // +24.1 -> +19.4 %, 32B +11.3 -> +6.3 %).
  EXPECT_LE(hb.mape_pct, 17.05);
  EXPECT_LE(readme.mape_pct, 18.78);
  EXPECT_LE(bridge.mape_pct, 1.40);
  // No source target; measured 9.59 % (9.74 % before the fp32 cross entropy),
  // 10.31 % once the materialised attention's backward is charged its
  // kernels' traffic (the rows' TFLOP/s were already predicted high: GPT
  // 1.7B +7.1 -> +12.5 %).
  // Then 9.75 % with GEMMs at their reduction depth.
  // Then 8.31 %: DeepSpeed ZeRO-3 of 2021 pairs each weight matrix's gather
  // with the compute of the matrix before it (training.zero3_matrix_prefetch;
  // docs/overlap.md). Table 2's ZeRO-3 rows near balance, micro batch 4:
  // GPT 174.6B +23.7 -> +4.7 %, GPT 529.6B +27.7 -> +9.9 %; at micro batch 2
  // they move away, +1.1 -> -3.0 % and -10.1 -> -13.3 %; micro batch 1
  // unchanged (every pair communication-bound).
  // Then 8.03 % with the LM head's and embedding's collectives and the
  // optimizer step's passes (docs/korthikanti-layer.md, "Outside the
  // layers"): the Table 1 rows, predicted fast, slower.
  // Then 5.25 % (5.2489 %): Megatron-LM of April 2021 adds every weight
  // gradient into its fp32 buffer in a pass of its own each microbatch
  // (training.grad_accumulation_fusion = false; apex's fused kernel came in
  // 2022): the Megatron rows, predicted fast, slower (GPT 1008.0B +11.4 ->
  // +3.7 %, GPT 174.6B at dp 16 +11.5 -> +5.3 %); the DeepSpeed rows do not
  // move.
  // Raised to 5.38 % (5.3753 %) by the pipelined collectives across tiers
  // (above): the Megatron rows' data-parallel all-reduce (GPT 1.7B to 7.5B,
  // Table 1) crosses nodes.
  // Lowered to 5.17 % (5.1675 %) by the bias gradients reduced in kernels
  // of their own (training.separate_bias_grad), Megatron-LM's and
  // Megatron-DeepSpeed's alike.
  // Lowered to 5.10 % (5.0961 %) by the concatenation of the Q, K and V
  // gradients split off their fused projection (training.qkv_split_cat),
  // Megatron-LM's split_tensor_along_last_dim and Megatron-DeepSpeed's.
  // Lowered to 4.97 % (4.9642 %) by the two-kernel backward of Megatron's
  // non-persistent fused LayerNorm that the 2021 runs are taken to have run
  // (training.norm_weight_grad_kernel).
  EXPECT_LE(narayanan.mape_pct, 4.97);
}

// The rows read after ValidationTargets' figures were set, each predicted,
// none out of memory on the plan its source states, held at the figures
// measured when they were read, so that they can only improve
// (validation/README.md names what is left in each):
//   - the GB300, B300 and GPT-OSS rows of the Megatron-Bridge performance
//     tables (docs/performance-summary.md at df0289c1, the 25.11 and 26.02
//     containers; lines 302-328): 27 rows, 19.12 % (19.1178 %), max 47.47 %
//     (B300 Qwen3-235B-A22B, pp 8 x vp 4, ep 8, predicted fast); GB300 Llama
//     +5.8 to +28.3 % (slow: the preset's GB200 curves), GPT-OSS 5-40 % fast;
//   - torchtitan's H100 tables (docs/performance.md at eaea6f6a, Grand Teton
//     H100 96GB HBM2e at its 500 W limit; lines 329-346): 18 rows, 14.53 %
//     (14.5274 %), max 30.50 %; the ten of Tables 1, 3, 4 and 5 10.66 %
//     (nine fast by 3-15 %, the 70B 2D row without AsyncTP slow by 11.3 %),
//     the eight context-parallel ones of Tables 2 and 6 (32K to 256K tokens)
//     19.36 %, all fast, the longest most (-30.0 / -30.5 % at 256K);
//   the whole file (336 of 345 predicted) 11.12 -> 11.95 % (11.9451 %),
//   Hopper/Blackwell 9.90 -> 11.46 % (11.4587 %), MoE 19.39 -> 19.13 %
//   (19.1304 %).
TEST(ValidationTargets, LaterRowsAreReadAndReported) {
  base::Diagnostics d;
  const ValidationReport whole = ValidateFile(kRuns, d);
  ASSERT_TRUE(d.ok()) << d.ToString();
  auto subset = [&](auto keep) {
    ValidationReport r;
    for (const auto& row : whole.rows)
      if (keep(row)) r.rows.push_back(row);
    Summarise(r);
    return r;
  };
  auto lines = [](int first, int last) {
    return [first, last](const ValidationRow& row) { return row.line >= first && row.line <= last; };
  };
  const ValidationReport bridge = subset(lines(kFirstBlackwellUltraOrGptOssLine, kFirstTorchtitanH100Line - 1));
  const ValidationReport titan = subset(lines(kFirstTorchtitanH100Line, kFirstNvfp4Line - 1));
  const ValidationReport nvfp4 = subset(lines(kFirstNvfp4Line, kLastAddedLine));
  ASSERT_EQ(bridge.rows.size(), 27u);
  ASSERT_EQ(titan.rows.size(), 18u);
  ASSERT_EQ(nvfp4.rows.size(), 4u);
  for (const auto& row : nvfp4.rows) {
    EXPECT_EQ(row.precision, "nvfp4") << row.line;
    EXPECT_TRUE(row.device == "gb200" || row.device == "gb300") << row.line;
  }
  int gb300 = 0, b300 = 0, gpt_oss = 0;
  for (const ValidationReport* added : {&bridge, &titan, &nvfp4})
    for (const auto& row : added->rows) {
      EXPECT_EQ(row.skipped, "") << "line " << row.line;
      EXPECT_TRUE(row.error_pct.has_value()) << "line " << row.line;
      EXPECT_FALSE(row.predicted_oom) << "line " << row.line << ": " << row.assumptions;
      gb300 += row.device == "gb300";
      b300 += row.device == "b300";
      gpt_oss += row.model == "gpt-oss-120b";
    }
  EXPECT_EQ(gb300, 19);
  EXPECT_EQ(b300, 4);
  EXPECT_EQ(gpt_oss, 9);
  for (const auto& row : bridge.rows) EXPECT_EQ(row.source.rfind("NVIDIA Megatron-Bridge 2", 0), 0u) << row.line;
  for (const auto& row : titan.rows) {
    EXPECT_EQ(row.source.rfind("torchtitan H100 performance numbers", 0), 0u) << row.line;
    EXPECT_EQ(row.device, "h100-hbm2e") << row.line;
  }
  const ValidationReport hb = subset(OnHopperOrBlackwell), moe = subset(IsMoeRow);
  for (const auto& [name, r] : std::map<std::string, const ValidationReport*>{
           {"GB300, B300 and GPT-OSS rows", &bridge},
           {"torchtitan H100 rows", &titan},
           {"NVFP4 rows", &nvfp4},
           {"whole file", &whole},
           {"whole file Hopper/Blackwell", &hb},
           {"whole file MoE", &moe}})
    PrintMeasured(name, *r);
  // TP collectives overlapped beside their own GEMM only
  // (TpExposedCollectives) raised the GB300/B300/GPT-OSS rows 19.12 ->
  // 19.20 % (19.1947 %: the Llama 3.1 405B GB300 rows, already predicted
  // slow, 0.6-0.9 points further) and lowered torchtitan's H100 rows 14.53
  // -> 13.55 % (13.5474 %: the 70B AsyncTP row, line 336, -13.5 -> -4.2 %,
  // the 405B rows 0.4-2.2 points closer), the whole file 11.95 -> 11.78 %
  // (11.7725 %), Hopper/Blackwell 11.46 -> 11.19 % (11.1864 %), MoE 19.14
  // -> 19.11 % (19.1000 %).
  EXPECT_LE(bridge.mape_pct, 19.18);
  EXPECT_LE(bridge.max_abs_error_pct, 47.48);
  // The FP8 tensor-parallel gathers at 1 B an element (training.
  // fp8_tp_gather; torchtitan's float8 tensor parallelism gathers the
  // forward inputs only) raised torchtitan's H100 rows 13.55 -> 13.62 %
  // (13.6154 %): the 70B pair moves to either side of its measurements
  // (line 335 +11.3 -> +6.4 %, the AsyncTP line 336 -4.2 -> -7.3 %), the
  // 405B rows, predicted fast, 0.1-1.0 point faster (max line 346, -30.13 ->
  // -30.27 %); the whole file 11.76 -> 11.79 % (11.7885 %), Hopper/Blackwell
  // 11.18 -> 11.23 % (11.2223 %), MoE 19.10 -> 19.09 % (19.0911 %), the
  // GB300/B300/GPT-OSS rows 19.19 -> 19.18 % (19.1751 %).
  // Then torchtitan's tensor parallelism as PyTorch DTensor runs it, the
  // gathered input kept for the backward, no second all-gather
  // (training.sp_input_regather false): 13.62 -> 13.60 % (13.5979 %): the
  // 70B pair +6.4 / -7.3 -> +1.4 / -9.2 %, the 405B rows, predicted fast,
  // 0.1-0.7 point faster (max line 346, -30.27 -> -30.39 %); the whole file
  // 11.7885 -> 11.7889 %.
  EXPECT_LE(titan.mape_pct, 13.60);
  EXPECT_LE(titan.max_abs_error_pct, 30.39);
  // The four NVFP4 rows (Megatron-Bridge 26.02, Llama 3 70B and 3.1 405B on
  // GB300 and GB200, training.fp8_recipe nvfp4), read after NVFP4 was
  // priced and not before: 10.42 % (10.4172 %), max 29.41 % (the GB200 405B
  // row at pp 16 x vp 8, whose FP8-MX twin, line 97, is +19.7 %: the
  // pipeline sends priced in full); the others +5.0, +5.2 and -2.0 %. The
  // whole file 11.78 -> 11.76 % (11.7565 %) over 340, Hopper/Blackwell
  // 11.19 -> 11.18 % (11.1723 %).
  EXPECT_LE(nvfp4.mape_pct, 10.42);
  EXPECT_LE(nvfp4.max_abs_error_pct, 29.41);
  EXPECT_EQ(whole.evaluated, 340);
  EXPECT_EQ(whole.skipped, 9);
  EXPECT_LE(whole.mape_pct, 11.79);
  EXPECT_LE(hb.mape_pct, 11.23);
  EXPECT_LE(moe.mape_pct, 19.10);
}

// `torchtitan+compile` is torchtitan with its blocks compiled: the same
// FSDP2 step (gathers copied out, PyTorch's optimizer step and fp32 cross
// entropy, FlashAttention-2 through SDPA, recompute stopping early) with
// fused element-wise kernels, where `torchtitan` runs them eager; so on
// one plan the compiled step is the faster, and each is priced at exactly
// what the estimator gives its plan.
TEST(ValidationCsv, TorchtitanCompileKeepsTorchtitansStepWithFusedKernels) {
  auto titan = [](const std::string& framework) {
    return Row({{"source", "torchtitan H100 performance numbers"}, {"model", "Llama-3.1-8B"}, {"layers", ""},
                {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""}, {"seq", "8192"}, {"gpus", "8"},
                {"gpu", "H100 SXM 96GB HBM2e"}, {"tp", "1"}, {"pp", "1"}, {"dp", "8"}, {"cp", "1"}, {"ep", ""},
                {"global_batch", "16"}, {"micro_batch", "2"}, {"recompute", "op"}, {"seq_parallel", ""},
                {"interleave", ""}, {"precision", "bf16"}, {"zero", "3"}, {"dp_overlap", ""}, {"tp_overlap", ""},
                {"attention", ""}, {"framework", framework}, {"measured_iter_s", "2.46"}});
  };
  const std::string file = TempCsv("titan_compile.csv", titan("torchtitan") + titan("torchtitan+compile"));
  base::Diagnostics d;
  const ValidationReport eager = ValidateTrainingCsv(file, PresetStore(kConfigs), d, 2);
  const ValidationReport compiled = ValidateTrainingCsv(file, PresetStore(kConfigs), d, 3);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(eager.rows.size(), 1u);
  ASSERT_EQ(compiled.rows.size(), 1u);
  ASSERT_TRUE(eager.rows[0].scenario && compiled.rows[0].scenario);
  const parallelism::TrainingPlan& e = eager.rows[0].scenario->training;
  const parallelism::TrainingPlan& c = compiled.rows[0].scenario->training;
  EXPECT_EQ(e.elementwise, parallelism::Elementwise::kEager);
  EXPECT_EQ(c.elementwise, parallelism::Elementwise::kFused);
  for (const parallelism::TrainingPlan* p : {&e, &c}) {
    EXPECT_TRUE(p->zero3_copy_out);
    EXPECT_TRUE(p->checkpoint_early_stop);
    EXPECT_EQ(p->loss_kernel, parallelism::LossKernel::kTorchFp32);
    EXPECT_EQ(p->optimizer_step, parallelism::OptimizerStep::kPytorch);
    EXPECT_EQ(p->attention, parallelism::Attention::kFlash2);
  }
  // torch.compile's norm backward: the weight's gradient in a kernel of its own.
  EXPECT_TRUE(c.norm_weight_grad_kernel);
  const Scenario& s = *compiled.rows[0].scenario;
  EXPECT_EQ(compiled.rows[0].predicted, TrainingEstimator(s.model, s.system).Run(s.training, s.workload).iteration_s);
  EXPECT_LT(compiled.rows[0].predicted, eager.rows[0].predicted);
}

// A row's `layernorm+moe_act` is Megatron-Core's layernorm and moe_act
// recompute modules (the Megatron-Bridge GPT-OSS recipes'
// recompute_modules [layernorm, moe_act]): no attention or full recompute,
// both module flags on in the row's plan, and the step priced at exactly
// what the estimator gives that plan; `none` leaves both off and is faster
// (the modules' forward runs twice).
TEST(ValidationCsv, LayernormMoeActRecomputeModulesAreReadIntoThePlan) {
  auto oss = [](const std::string& recompute) {
    return Row({{"source", "Megatron-Bridge 26.02 performance summary"}, {"model", "gpt-oss-120b"},
                {"layers", ""}, {"hidden", ""}, {"heads", ""}, {"ffn", ""}, {"vocab", ""},
                {"seq", "4096"}, {"gpus", "64"}, {"gpu", "GB200"}, {"system", ""},
                {"tp", "1"}, {"pp", "1"}, {"dp", "64"}, {"cp", "1"}, {"ep", "64"}, {"global_batch", "1280"},
                {"micro_batch", "4"}, {"interleave", ""}, {"recompute", recompute}, {"seq_parallel", ""},
                {"precision", "bf16"}, {"zero", "1"}, {"dp_overlap", ""}, {"tp_overlap", ""},
                {"attention", ""}, {"framework", "megatron-core"}, {"moe_routing", "force-balanced"},
                {"measured_iter_s", "5.19"}});
  };
  const std::string file = TempCsv("oss_recompute.csv", oss("layernorm+moe_act") + oss("none"));
  base::Diagnostics d;
  const ValidationReport modules = ValidateTrainingCsv(file, PresetStore(kConfigs), d, 2);
  const ValidationReport none = ValidateTrainingCsv(file, PresetStore(kConfigs), d, 3);
  ASSERT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(modules.rows.size(), 1u);
  ASSERT_EQ(none.rows.size(), 1u);
  ASSERT_TRUE(modules.rows[0].scenario && none.rows[0].scenario);
  const Scenario& s = *modules.rows[0].scenario;
  EXPECT_TRUE(s.training.recompute_layernorm);
  EXPECT_TRUE(s.training.recompute_moe_act);
  EXPECT_EQ(s.training.recompute, parallelism::Recompute::kNone);
  EXPECT_FALSE(none.rows[0].scenario->training.recompute_layernorm);
  EXPECT_FALSE(none.rows[0].scenario->training.recompute_moe_act);
  const TrainingEstimate e = TrainingEstimator(s.model, s.system).Run(s.training, s.workload);
  EXPECT_EQ(modules.rows[0].predicted, e.iteration_s);
  EXPECT_GT(modules.rows[0].predicted, none.rows[0].predicted);
}

}  // namespace
}  // namespace orrery::engine
