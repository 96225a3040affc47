// Test set-up shared by the test binaries: a preset or scenario by name from
// the project's configs/ (ORRERY_TEST_CONFIG_DIR, which orrery_add_test
// defines for every test binary). A name that does not load fails the
// calling test with the loader's own diagnostics and returns a default spec,
// so a later check fails too rather than crashing.
//
// Header only: a binary that includes it links what it calls (the loaders
// live in orrery_estimate, which every including binary links).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/estimate/scenario.h"

namespace orrery::test {

inline const std::string& ConfigDir() {
  static const std::string dir = ORRERY_TEST_CONFIG_DIR;
  return dir;
}

// configs/models/<name>.yaml (or an alias, or an hf: path).
inline models::ModelSpec Model(const std::string& name) {
  base::Diagnostics d;
  models::ModelSpec m;
  EXPECT_TRUE(engine::LoadModelPreset(name, engine::PresetStore(ConfigDir()), {}, "model", m, d))
      << d.ToString();
  return m;
}

// configs/systems/<name>.yaml, its device included.
inline hardware::SystemSpec System(const std::string& name) {
  base::Diagnostics d;
  hardware::SystemSpec s;
  EXPECT_TRUE(engine::LoadSystemPreset(name, engine::PresetStore(ConfigDir()), {}, "system", s, d))
      << d.ToString();
  return s;
}

// The same system cut or grown to `nodes` nodes.
inline hardware::SystemSpec System(const std::string& name, int64_t nodes) {
  hardware::SystemSpec s = System(name);
  s.nodes = nodes;
  return s;
}

// The plan of Korthikanti et al. 2022's Table 4 on one Selene node for
// their 22B model (Table 3: micro batch 4, tp 8): no pipeline, no data
// parallelism, Megatron-LM of 2022's materialised attention, bf16.
inline parallelism::TrainingPlan Korthikanti22bPlan() {
  parallelism::TrainingPlan plan;
  plan.tp = 8;
  plan.pp = plan.dp = plan.cp = 1;
  plan.micro_batch = 4;
  plan.zero = 0;
  plan.dp_overlap = false;
  plan.precision = hardware::DataType::kBf16;
  plan.attention = parallelism::Attention::kMaterialized;
  return plan;
}

// One device standing alone for arithmetic by hand: the frontier preset
// cut to one node of one device, its GEMMs at a flat half of a 100 TFLOP/s
// BF16 peak, no power cap, a max roofline. The caller sets the memory
// bandwidth, memory efficiency and kernel overhead its arithmetic uses.
inline hardware::SystemSpec OneHandWorkedDevice() {
  hardware::SystemSpec s = System("frontier", 1);
  s.devices_per_node = 1;
  hardware::DeviceSpec& dev = s.device;
  dev.peak_bf16 = 100e12;
  dev.gemm_efficiency = hardware::Curve{{1e9}, {0.5}, {}};
  dev.power_cap = 0;
  dev.roofline = hardware::Roofline::kMax;
  return s;
}

// configs/devices/<name>.yaml.
inline hardware::DeviceSpec Device(const std::string& name) {
  base::Diagnostics d;
  hardware::DeviceSpec dev;
  EXPECT_TRUE(engine::LoadDevicePreset(name, engine::PresetStore(ConfigDir()), {}, "device", dev, d))
      << d.ToString();
  return dev;
}

// A scenario file or configs/scenarios/<name>.yaml.
inline engine::Scenario LoadScenario(const std::string& name) {
  base::Diagnostics d;
  auto s = engine::LoadScenarioFile(name, engine::PresetStore(ConfigDir()), d);
  EXPECT_TRUE(s.has_value()) << d.ToString();
  return s.value_or(engine::Scenario{});
}

// A scenario with its model swapped for another preset (the system, plan and
// workload kept): one model on a scenario's hardware.
inline engine::Scenario LoadScenarioWithModel(const std::string& scenario, const std::string& model) {
  engine::Scenario s = LoadScenario(scenario);
  s.model = Model(model);
  return s;
}

// Scenarios that tests in more than one file price.

// Llama 2 7B under ZeRO-3 on the 1,024 A100 of gpt3-175b-1024-a100: pure
// data parallelism (tp 1, pp 1, dp 1024, no interleave, no sequence
// parallelism), one 4,096-token sequence per GPU (global batch 1024), the
// DeepSpeed and FSDP ZeRO-3 comparisons of the estimate and event-engine
// tests. Recompute and dp_overlap are left to each test.
inline engine::Scenario Llama2_7bZero3On1024A100() {
  engine::Scenario s = LoadScenarioWithModel("gpt3-175b-1024-a100", "llama2-7b");
  s.training.tp = 1;
  s.training.pp = 1;
  s.training.dp = 1024;
  s.training.interleave = 1;
  s.training.sequence_parallel = false;
  s.training.zero = 3;
  s.workload.global_batch = 1024;
  s.workload.seq_len = 4096;
  return s;
}

// Llama 2 7B under PyTorch FSDP (ZeRO-3, no re-gather for recompute, fp32
// reduce-scatter) on one DGX A100 of gpt3-175b-1024-a100: dp 8, no
// recompute, one 4,096-token sequence per GPU (global batch 8). The
// BACKWARD_POST prefetch tests of the closed form and the event engine.
inline engine::Scenario Llama2_7bFsdpOnOneDgxA100() {
  engine::Scenario s = LoadScenarioWithModel("gpt3-175b-1024-a100", "llama2-7b");
  s.system.nodes = 1;
  s.training.tp = 1;
  s.training.pp = 1;
  s.training.dp = 8;
  s.training.interleave = 1;
  s.training.sequence_parallel = false;
  s.training.zero = 3;
  s.training.recompute = parallelism::Recompute::kNone;
  s.training.zero3_recompute_gather = false;
  s.training.zero3_fp32_reduce = true;
  s.workload.global_batch = 8;
  s.workload.seq_len = 4096;
  return s;
}

// Llama 3 8B under ZeRO-3 on the 64 A100 of gpt3-175b-a100 (8 DGX A100
// nodes): dp 64, no interleave or sequence parallelism, data-parallel
// traffic not overlapped, one 8,192-token sequence per GPU (global batch
// 64). Recompute is left to each test. FSDP2's copy-out tests.
inline engine::Scenario Llama3_8bZero3On64A100() {
  engine::Scenario s = LoadScenarioWithModel("gpt3-175b-a100", "llama3-8b");
  s.training.tp = 1;
  s.training.pp = 1;
  s.training.dp = 64;
  s.training.interleave = 1;
  s.training.sequence_parallel = false;
  s.training.zero = 3;
  s.training.dp_overlap = false;
  s.workload.global_batch = 64;
  s.workload.seq_len = 8192;
  return s;
}

}  // namespace orrery::test
