// Issue 15, "knobs that do nothing": every key of the model schema
// (models/model_spec.cpp) and of the system schema (hardware/system_spec.cpp:
// the system's own keys, each network tier's keys and its efficiency curves)
// is changed to a valid other value and must move a prediction, or be listed
// below with the verb that reads it. The tests walk the schemas' fields, so a
// key added later fails here until it is wired or listed.
//
// How a key is changed (OtherValues): an enum takes each of its other
// choices, a bool flips, a number is halved, doubled and set to its minimum
// (each kept when inside the key's range), a string gets a suffix (and a
// torus's "AxBxC" becomes "(A/2)x(2B)xC"), an efficiency curve is halved. A
// number at 0 (its "derive it" default) is left alone in that scenario: the
// scenarios below give every key a value in at least one of them. A change
// that breaks a check between keys (CheckModel, CheckSystem, CrossCheck) is
// not a valid value and is skipped.
//
// What a prediction is: the closed-form training estimate of each scenario's
// plans (feasibility, iteration time and each part of it, memory, FLOPs,
// energy, cost) and, where the scenario serves, the library estimate of
// `orrery infer` (time to first token, time per output token, memory, the
// largest batch that fits). An infeasible result is a prediction too.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/estimate/inference_estimator.h"
#include "core/estimate/training_estimator.h"
#include "hardware/system_spec.h"
#include "models/model_spec.h"
#include "tests/support/presets.h"

namespace orrery::engine {
namespace {

using test::LoadScenario;

// One base: a scenario, the training plans priced on it and optionally a
// serving deployment priced by the inference estimator.
struct Case {
  std::string what;
  Scenario sc;
  std::vector<parallelism::TrainingPlan> plans;
  std::optional<parallelism::InferenceDeployment> serve;
};

struct Outcome {
  std::vector<double> train;
  std::vector<double> infer;
};

Outcome Predict(const Case& c) {
  Outcome o;
  const TrainingEstimator est(c.sc.model, c.sc.system);
  for (const parallelism::TrainingPlan& p : c.plans) {
    const TrainingEstimate e = est.Run(p, c.sc.workload);
    const TimeBreakdown& t = e.time;
    o.train.insert(o.train.end(),
                   {static_cast<double>(e.infeasible), e.iteration_s, t.forward, t.backward,
                    t.recompute, t.tp_comm, t.cp_comm, t.ep_comm, t.pp_bubble, t.pp_p2p, t.dp_comm,
                    t.optimizer, t.offload, e.memory.total(), e.memory_capacity, e.model_flops,
                    e.hardware_flops, e.energy_j, e.cost_usd, e.train_time_s});
  }
  if (c.serve) {
    const InferenceEstimator inf(c.sc.model, c.sc.system);
    const InferenceEstimate e = inf.Run(*c.serve);
    o.infer = {static_cast<double>(e.infeasible), e.ttft_s, e.tpot_s, e.memory.total(),
               e.memory_capacity, static_cast<double>(e.max_batch)};
  }
  return o;
}

// The checks a loaded scenario passes: a changed key must pass them too.
bool Valid(const Case& c) {
  base::Diagnostics d;
  models::CheckModel(c.sc.model, "model", {}, d);
  hardware::CheckSystem(c.sc.system, "system", {}, d);
  for (const parallelism::TrainingPlan& p : c.plans) {
    Scenario s = c.sc;
    s.training = p;
    CrossCheck(s, d);
  }
  return d.ok();
}

// A torus's dimensions "AxBxC" laid out another way with the same chips in
// as many dimensions: the first halved, the second doubled ("16x16x16" ->
// "8x32x16"); empty when the text is not two or more numbers joined by x or
// the first is odd.
std::string ReshapeDims(const std::string& dims) {
  const size_t x = dims.find('x');
  if (x == std::string::npos || x == 0) return {};
  const size_t y = dims.find('x', x + 1);
  const std::string a = dims.substr(0, x);
  const std::string b = dims.substr(x + 1, y == std::string::npos ? std::string::npos : y - x - 1);
  const auto number = [](const std::string& t) {
    return !t.empty() && t.size() < 10 &&
           std::all_of(t.begin(), t.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  };
  if (!number(a) || !number(b) || std::stoll(a) % 2 != 0) return {};
  const std::string reshaped = std::to_string(std::stoll(a) / 2) + "x" + std::to_string(std::stoll(b) * 2);
  return y == std::string::npos ? reshaped : reshaped + dims.substr(y);
}

std::vector<base::ParamValue> OtherValues(const base::ParamInfo& info, const base::ParamValue& v) {
  std::vector<base::ParamValue> out;
  switch (info.type) {
    case base::ParamType::kString: {
      out.push_back({0, v.text + " (changed)"});
      const std::string reshaped = ReshapeDims(v.text);
      if (!reshaped.empty()) out.push_back({0, reshaped});
      break;
    }
    case base::ParamType::kEnum:
      for (size_t i = 0; i < info.choices.size(); ++i)
        if (static_cast<double>(i) != v.number) out.push_back({static_cast<double>(i), ""});
      break;
    case base::ParamType::kBool:
      out.push_back({v.number != 0 ? 0.0 : 1.0, ""});
      break;
    case base::ParamType::kInt:
    case base::ParamType::kReal:
    case base::ParamType::kQuantity: {
      if (v.number == 0) break;  // "derive it": another scenario gives the key a value
      const bool integer = info.type == base::ParamType::kInt;
      const double half = integer ? static_cast<double>(static_cast<int64_t>(v.number / 2)) : v.number / 2;
      for (double n : {half, 2 * v.number, info.min}) {
        const bool inside = n >= info.min && n <= info.max && !(info.min_exclusive && n == info.min);
        const bool fresh = std::none_of(out.begin(), out.end(), [&](const base::ParamValue& o) {
          return o.number == n;
        });
        if (inside && fresh && n != v.number) out.push_back({n, ""});
      }
      break;
    }
  }
  return out;
}

// What changing one key did, over every base where it had a valid other value.
struct Moves {
  bool changed = false;  // some base took some valid other value
  bool train = false;
  bool infer = false;
};

// Changes `field` in every spec `targets` finds in each base (a base may hold
// several: one per network tier), one at a time.
template <class Spec, class Targets>
Moves Audit(const base::Field<Spec>& field, const std::vector<Case>& cases,
            const std::vector<Outcome>& base, Targets targets) {
  Moves m;
  for (size_t i = 0; i < cases.size(); ++i) {
    Case probe = cases[i];
    const size_t n = targets(probe).size();
    for (size_t j = 0; j < n; ++j) {
      const base::ParamValue now = field.load(*targets(probe)[j]);
      for (const base::ParamValue& v : OtherValues(field.info, now)) {
        Case c = cases[i];
        field.store(*targets(c)[j], v);
        if (!Valid(c)) continue;
        m.changed = true;
        const Outcome o = Predict(c);
        m.train = m.train || o.train != base[i].train;
        m.infer = m.infer || o.infer != base[i].infer;
      }
    }
  }
  return m;
}

// A key that moves no training estimate: what reads it. `infer` marks the
// keys only `orrery infer` reads (its estimate must move).
struct Listing {
  bool infer = false;
  std::string why;
};

// Checks one key's moves against its listing (or its absence).
void Expect(const std::string& path, const Moves& m, const std::map<std::string, Listing>& listed,
            int& moved) {
  const auto it = listed.find(path.substr(path.rfind('.') + 1));
  if (!m.changed) {
    ADD_FAILURE() << path << ": no base scenario gives it a valid other value; give one a value";
    return;
  }
  if (it == listed.end()) {
    EXPECT_TRUE(m.train) << path << " changes no training estimate"
                         << (m.infer ? " (only orrery infer's)" : "")
                         << ": wire it or list it with what reads it";
    moved += m.train ? 1 : 0;
  } else if (it->second.infer) {
    EXPECT_FALSE(m.train) << path << " moves a training estimate: take it off the inference-only list";
    EXPECT_TRUE(m.infer) << path << " moves no estimate of orrery infer either: " << it->second.why;
  } else {
    EXPECT_FALSE(m.train || m.infer) << path << " moves a prediction: take it off the list ("
                                     << it->second.why << ")";
  }
}

// The serving deployment of llama2-70b-h100-infer: tp 4 on one
// DGX H100 with FP8 weights, GEMM inputs and KV cache; 64 prompts of 2048
// tokens, 128 generated each.
parallelism::InferenceDeployment Tp4Fp8Serving() {
  const Scenario s = LoadScenario("llama2-70b-h100-infer");
  EXPECT_TRUE(s.inference.has_value());
  return s.inference.value_or(parallelism::InferenceDeployment{});
}

// The bases. Each key needs one where it can matter: dense GPT with learned
// positions, biases, tied embeddings, dropout and materialised attention;
// Llama with GQA, RoPE and SwiGLU; DeepSeek-V3 with MoE, MLA, shared experts,
// node-limited routing and MTP, its experts spread over one node (ep 8) and
// over eight (ep 64), and at ep 64 with group-limited routing; the Llama
// plan with a sliding window on half its layers, and with attention chunks on three in four; and the
// Llama plan on each kind of scale-out fabric
// (fat tree at full and 2:1 bisection, rail-only, a TPU torus); and a
// small run whose offloaded optimizer nearly fills the host memory.
std::vector<Case> Bases() {
  std::vector<Case> cases;
  {  // GPT-3 175B on 64 A100 (tp 8, pp 8, materialised attention), optimizer also offloaded.
    Case c{"gpt3-175b-a100", LoadScenario("gpt3-175b-a100"), {}, std::nullopt};
    c.plans.push_back(c.sc.training);
    parallelism::TrainingPlan off = c.sc.training;
    off.offload_optimizer = true;
    c.plans.push_back(off);
    parallelism::InferenceDeployment d = Tp4Fp8Serving();
    d.tp = 8;
    d.weights = d.activations = d.kv_cache = hardware::DataType::kBf16;
    d.batch = 8;
    c.serve = d;
    cases.push_back(std::move(c));
  }
  const auto llama_on = [&](const std::string& what, const std::string& system, int64_t nodes) {
    Case c{what, LoadScenario("llama3-70b-h100"), {}, std::nullopt};
    if (!system.empty()) c.sc.system = test::System(system, nodes);
    c.sc.training.dp = 0;  // every device: the system's size may change
    c.plans.push_back(c.sc.training);
    return c;
  };
  {  // Llama 3 70B on 512 H100 (tp 8, pp 4, dp 16), also with its optimizer
     // offloaded to host memory and without sequence parallelism; served at
     // tp 4 in FP8. A rental price (2 USD per GPU-hour), a grid's carbon
     // intensity (0.37 kg/kWh, the US average of EPA eGRID2022) and a
     // bandwidth between device pools (50 GB/s) are stated so that those
     // keys have values to change.
    Case c = llama_on("llama3-70b-h100", "", 0);
    parallelism::TrainingPlan off = c.sc.training;
    off.offload_optimizer = true;
    c.plans.push_back(off);
    // Without sequence parallelism the tensor-parallel collectives are
    // all-reduces inside the NVLink domain, which NVLink SHARP reduces in the
    // switch (Megatron-LM's TP all-reduce, Shoeybi et al. 2019, Sec. 3).
    // Full recompute keeps its activations (three times the sequence-parallel
    // ones) beside the weights and their fp32 gradient buffer inside 80 GB.
    parallelism::TrainingPlan ar = c.sc.training;
    ar.sequence_parallel = false;
    ar.recompute = parallelism::Recompute::kFull;
    c.plans.push_back(ar);
    c.sc.system.price_per_device_hour = 2.0 / 3600;
    c.sc.system.grid_co2_kg_per_kwh = 0.37;
    c.sc.system.pool_bandwidth = 50e9;
    c.serve = Tp4Fp8Serving();
    cases.push_back(std::move(c));
  }
  {  // DeepSeek-V3 on 1,024 H100 (pp 16): ep 8 inside a node and ep 64 over 8 nodes.
    Case c{"deepseek-v3-dgx-h100", LoadScenario("deepseek-v3-dgx-h100"), {}, std::nullopt};
    // One shared expert as wide as a routed one, stated rather than derived,
    // so that the key has a value to change.
    c.sc.model.shared_expert_ffn = c.sc.model.expert_ffn;
    // 1,024 GPUs in 16 pipeline stages (dp 64), so that it fits in memory.
    c.sc.system.nodes = 128;
    c.sc.training.pp = 16;
    c.plans.push_back(c.sc.training);
    parallelism::TrainingPlan wide = c.sc.training;
    wide.ep = 64;
    c.plans.push_back(wide);
    parallelism::InferenceDeployment d = Tp4Fp8Serving();
    d.tp = 8;
    d.pp = 2;
    d.ep = 8;
    d.batch = 8;
    c.serve = d;
    cases.push_back(std::move(c));
  }
  {  // The Llama plan with a sliding window of 2048 tokens on half of the
     // 80 layers (Gemma 2's pattern), so that the window keys have values.
    Case c = llama_on("llama3-70b-sliding-window", "", 0);
    c.sc.model.sliding_window = 2048;
    c.sc.model.sliding_window_layers = 40;
    cases.push_back(std::move(c));
  }
  {  // The Llama plan with 2048-token attention chunks on three of every four
     // of the 80 layers (Llama 4's pattern), so that the chunk keys have values.
    Case c = llama_on("llama3-70b-chunked-attention", "", 0);
    c.sc.model.attention_chunk = 2048;
    c.sc.model.attention_chunk_layers = 60;
    cases.push_back(std::move(c));
  }
  {  // The Llama plan with Gemma 2's logit soft-caps (50 on the scores, 30
     // on the final logits) and its attention materialised, as NeMo runs a
     // capped attention, under full recompute so that its scores fit, so
     // that the cap keys have values (set to 0, each takes its passes away).
    Case c = llama_on("llama3-70b-soft-capped", "", 0);
    c.sc.model.attention_softcap = 50;
    c.sc.model.final_logit_softcap = 30;
    c.sc.training.attention = parallelism::Attention::kMaterialized;
    c.sc.training.recompute = parallelism::Recompute::kFull;
    c.plans = {c.sc.training};
    cases.push_back(std::move(c));
  }
  {  // DeepSeek-V3 at ep 64 over 8 nodes with its released config's
     // group-limited routing (n_group 8, topk_group 4) in place of the
     // preset's stated node limit, so that the group keys have values.
    Case c{"deepseek-v3-routing-groups", LoadScenario("deepseek-v3-dgx-h100"), {}, std::nullopt};
    c.sc.model.routing_node_limit = 0;
    c.sc.model.routing_groups = 8;
    c.sc.model.routing_group_limit = 4;
    c.sc.system.nodes = 128;
    c.sc.training.pp = 16;
    c.sc.training.ep = 64;
    c.plans.push_back(c.sc.training);
    cases.push_back(std::move(c));
  }
  {  // The Llama plan on a 2:1 oversubscribed fat tree. The scale-out
     // tier's per-hop latency is stated (no preset gives one) so that the
     // key has a value to change: 0.5 us, an order of an InfiniBand
     // switch's port-to-port latency.
    Case c = llama_on("llama3-70b-clos-2to1", "dgx-h100-clos-2to1", 64);
    c.sc.system.network.back().hop_latency = 0.5e-6;
    cases.push_back(std::move(c));
  }
  cases.push_back(llama_on("llama3-70b-rail-only", "dgx-h100-rail-only", 64));
  {  // The Llama plan on a TPU v4 pod's 16x16x16 torus: tp 4 inside a host,
     // pp 8, optimizer states sharded (ZeRO-1) and full recompute to fit 32 GB.
    Case c = llama_on("llama3-70b-tpu-v4", "tpu-v4-pod", 1024);
    c.plans[0].tp = 4;
    c.plans[0].pp = 8;
    c.plans[0].interleave = 1;
    c.plans[0].zero = 1;
    c.plans[0].recompute = parallelism::Recompute::kFull;
    cases.push_back(std::move(c));
  }
  {  // Llama 2 7B under FSDP on one DGX A100 with its optimizer offloaded
     // (ZeRO-Offload): the states need 80.9 GB of the node's host memory
     // (HostMemoryHoldsTheOffloadedOptimizerStates below), stated here as
     // 128 GB so that the limit is near: the presets' 2 TB never binds.
    Case c{"llama2-7b-offload-dgx-a100", test::Llama2_7bFsdpOnOneDgxA100(), {}, std::nullopt};
    c.sc.system.host_memory = 128e9;
    c.sc.training.offload_optimizer = true;
    c.plans.push_back(c.sc.training);
    cases.push_back(std::move(c));
  }
  return cases;
}

// The bases are valid and priced the same twice (a difference is the key's).
void CheckBases(const std::vector<Case>& cases, const std::vector<Outcome>& base) {
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_TRUE(Valid(cases[i])) << cases[i].what << " does not pass the scenario checks";
    const Outcome again = Predict(cases[i]);
    EXPECT_EQ(again.train, base[i].train) << cases[i].what;
    EXPECT_EQ(again.infer, base[i].infer) << cases[i].what;
    for (size_t k = 0; k < base[i].train.size(); k += 20) {
      EXPECT_EQ(base[i].train[k], 0) << cases[i].what << " plan " << k / 20 << " is infeasible";
    }
    if (!base[i].infer.empty()) {
      EXPECT_EQ(base[i].infer[0], 0) << cases[i].what << " serving";
    }
  }
}

TEST(KeyAudit, EveryModelKeyMovesAPredictionOrIsListed) {
  const std::map<std::string, Listing> listed = {
      {"name", {false, "shown in reports"}},
      {"citation", {false, "shown in reports"}},
      {"published_params", {false, "shown beside the computed count (orrery presets show, explain)"}},
  };
  const std::vector<Case> cases = Bases();
  std::vector<Outcome> base;
  for (const Case& c : cases) base.push_back(Predict(c));
  CheckBases(cases, base);
  int moved = 0;
  for (const auto& field : models::ModelSchema().fields()) {
    const Moves m = Audit(field, cases, base, [](Case& c) { return std::vector<models::ModelSpec*>{&c.sc.model}; });
    Expect("model." + field.info.key, m, listed, moved);
  }
  EXPECT_GE(moved, 28);
}

TEST(KeyAudit, EverySystemKeyMovesAPredictionOrIsListed) {
  const std::map<std::string, Listing> listed = {
      {"name", {false, "shown in reports"}},
      {"citation", {false, "shown in reports"}},
      {"grid_co2_kg_per_kwh", {false, "the carbon of a training run: orrery plan and goodput (core/goodput)"}},
      {"pool_bandwidth", {false, "read with device pools only (system.pools): the heterogeneous estimate, core/hetero"}},
  };
  const std::vector<Case> cases = Bases();
  std::vector<Outcome> base;
  for (const Case& c : cases) base.push_back(Predict(c));
  CheckBases(cases, base);
  int moved = 0;
  for (const auto& field : hardware::SystemSchema().fields()) {
    const Moves m = Audit(field, cases, base, [](Case& c) { return std::vector<hardware::SystemSpec*>{&c.sc.system}; });
    Expect("system." + field.info.key, m, listed, moved);
  }
  EXPECT_GE(moved, 6);
}

TEST(KeyAudit, EveryNetworkTierKeyMovesAPredictionOrIsListed) {
  const std::map<std::string, Listing> listed = {
      {"name", {false, "shown by orrery network and in reports"}},
      // The most levels the fabric may use: a fabric is wired with the fewest
      // (from 2) that connect its devices, so a valid change moves nothing;
      // a system that needs more is refused by CheckSystem (CheckTopology),
      // and orrery network shows the levels and switch count.
      {"levels", {false, "a limit on the fabric's size, checked by CheckTopology; levels shown by orrery network"}},
  };
  const std::vector<Case> cases = Bases();
  std::vector<Outcome> base;
  for (const Case& c : cases) base.push_back(Predict(c));
  CheckBases(cases, base);
  const auto tiers = [](Case& c) {
    std::vector<hardware::NetworkTier*> out;
    for (hardware::NetworkTier& t : c.sc.system.network) out.push_back(&t);
    return out;
  };
  int moved = 0;
  for (const auto& field : hardware::NetworkTierSchema().fields()) {
    const Moves m = Audit(field, cases, base, tiers);
    Expect("system.network[]." + field.info.key, m, listed, moved);
  }
  // The curves are parsed beside the schema (NetworkTierCurveKeys): each is
  // halved on every tier that has one.
  for (const std::string& key : hardware::NetworkTierCurveKeys()) {
    const auto curve = [&key](hardware::NetworkTier& t) -> hardware::Curve* {
      if (key == "efficiency") return &t.efficiency;
      if (key == "in_network_efficiency") return &t.in_network_efficiency;
      return nullptr;
    };
    Moves m;
    for (size_t i = 0; i < cases.size(); ++i) {
      for (size_t j = 0; j < cases[i].sc.system.network.size(); ++j) {
        Case c = cases[i];
        hardware::Curve* y = curve(c.sc.system.network[j]);
        ASSERT_NE(y, nullptr) << "system.network[]." << key << ": a curve key this test does not know; add it";
        if (y->empty()) continue;
        for (double& e : y->y) e /= 2;
        m.changed = true;
        const Outcome o = Predict(c);
        m.train = m.train || o.train != base[i].train;
        m.infer = m.infer || o.infer != base[i].infer;
      }
    }
    Expect("system.network[]." + key, m, listed, moved);
  }
  EXPECT_GE(moved, 15);
}

// The audit's finding: system.host_memory was read by no estimate. With
// offload_optimizer the optimizer states live in the node's CPU memory
// (ZeRO-Offload, Ren et al. 2021, Sec. 3), so they must fit there. Llama 2
// 7B under FSDP on one DGX A100 (8 GPUs, dp 8, ZeRO-3):
//   parameters  32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096)
//               + 2 x 32000 x 4096 (embedding, untied head) + 4096 (final norm)
//             = 6,476,267,520 + 262,144,000 + 4,096 = 6,738,415,616
//   per device  / 8 = 842,301,952 parameters x 12 B (fp32 master weight and
//               Adam's two fp32 moments) = 10,107,623,424 B
//   per node    x 8 = 80,860,987,392 B: 80 GB of host memory is too little,
//               81 GB holds it.
TEST(KeyAudit, HostMemoryHoldsTheOffloadedOptimizerStates) {
  Scenario s = test::Llama2_7bFsdpOnOneDgxA100();
  ASSERT_EQ(s.system.devices_per_node, 8);
  s.training.offload_optimizer = true;
  const auto run = [&s](double host_memory) {
    s.system.host_memory = host_memory;
    const TrainingEstimator est(s.model, s.system);
    return est.Run(s.training, s.workload);
  };
  const TrainingEstimate unchecked = run(0);
  EXPECT_TRUE(unchecked.feasible());
  EXPECT_EQ(unchecked.memory.optimizer, 0);
  EXPECT_NEAR(unchecked.memory.host_optimizer, 10107623424.0, 1e-3);
  const TrainingEstimate short_of = run(80e9);
  EXPECT_EQ(short_of.infeasible, Infeasible::kHostOutOfMemory);
  EXPECT_NE(ExplainInfeasible(short_of, s).find("system.host_memory"), std::string::npos)
      << ExplainInfeasible(short_of, s);
  // The same times: the verdict is on memory only.
  EXPECT_EQ(short_of.iteration_s, unchecked.iteration_s);
  EXPECT_TRUE(run(81e9).feasible());
  // Without offload the states stay on the devices; host memory is not asked.
  s.training.offload_optimizer = false;
  const TrainingEstimate on_device = run(80e9);
  EXPECT_TRUE(on_device.feasible());
  EXPECT_EQ(on_device.memory.host_optimizer, 0);
  EXPECT_NEAR(on_device.memory.optimizer, 10107623424.0, 1e-3);
}

}  // namespace
}  // namespace orrery::engine
