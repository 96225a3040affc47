// Issue 15, "audit every registry key": every key of the training plan
// (training.*) and workload (workload.*) schemas either moves a training
// prediction or is listed with the reason it does not. The tests walk the
// schemas' fields, so a key added later without an entry here fails them.
//
// Each key is changed, through the same `--set section.key=value` path a
// user takes (ApplyOverride), on a base where it can matter: a shipped
// scenario with a few fields set (a ZeRO-3 key on a ZeRO-3 plan, a
// pipeline key on a pipelined plan, an MoE key on an MoE model). Base and
// changed scenario must both pass the cross-spec check and be feasible in
// the closed form, so that a move is a priced difference, not a refusal.
// The entry states which estimators move: the closed form (iteration time,
// its breakdown, memory, MFU/HFU, energy, cost, train time) and the event
// engine (its simulated time and the figures that follow from it; its
// memory is the closed form's and is not compared). Both directions are
// asserted: an estimator said to move must move, one said not to must not.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/estimate/event_estimator.h"
#include "core/estimate/scenario.h"
#include "core/estimate/training_estimator.h"
#include "parallelism/memory_model.h"
#include "parallelism/plan_spec.h"
#include "tests/support/presets.h"

namespace orrery::engine {
namespace {

using test::LoadScenario;
using test::LoadScenarioWithModel;

// --- bases --------------------------------------------------------------------
// Each a shipped scenario with a few fields set.

// configs/scenarios/llama3-70b-h100.yaml as shipped: Llama 3 70B on 512 H100,
// tp 8, pp 4, dp 16, interleave 5, sequence parallel, ZeRO-1, TP overlap,
// global batch 1024 x 8192 tokens (64 microbatches, a multiple of pp).
Scenario Llama70b() { return LoadScenario("llama3-70b-h100"); }

// The same with dp = 0 (devices / (tp pp cp)), so that tp and pp can change
// on the same 512 devices.
Scenario Llama70bDpAuto() {
  Scenario s = Llama70b();
  s.training.dp = 0;
  return s;
}

// The same with dp = 0 and full recompute: at tp 4 the stage's weights,
// their fp32 gradient buffer and a 1F1B pipeline's activations without
// recompute no longer fit in 80 GB.
Scenario Llama70bDpAutoFullRecompute() {
  Scenario s = Llama70bDpAuto();
  s.training.recompute = parallelism::Recompute::kFull;
  return s;
}

// The same with full recompute (recompute_interval acts only then).
Scenario Llama70bFullRecompute() {
  Scenario s = Llama70b();
  s.training.recompute = parallelism::Recompute::kFull;
  return s;
}

// The same on 4 nodes (32 devices: tp 8, pp 4, dp 1), full recompute, global
// batch 64: nothing reduces over data parallelism (grad_scale_at_dp1 acts
// only then).
Scenario Llama70bDp1() {
  Scenario s = Llama70bFullRecompute();
  s.system.nodes = 4;
  s.training.dp = 0;
  s.workload.global_batch = 64;
  s.workload.train_tokens = 0;
  return s;
}

// The same in fp8 (fp8_recipe acts only then).
Scenario Llama70bFp8() {
  Scenario s = Llama70b();
  s.training.precision = hardware::DataType::kFp8;
  return s;
}

// The same in fp8 without DP overlap: the distributed optimizer's gather
// of the updated weights stands exposed (fp8_param_gather acts on it).
Scenario Llama70bFp8NoDpOverlap() {
  Scenario s = Llama70bFp8();
  s.training.dp_overlap = false;
  return s;
}

// Llama 3 70B on 384 H100 (48 nodes) at tp 8, pp 6, dp 8, plain 1F1B: 80
// layers do not split evenly over 6 stages (ceil 14), so the stage layer
// counts and counting the embedding and the loss as layers move the
// pace-setting stage; 128 microbatches.
Scenario Llama70bPp6() {
  Scenario s = Llama70b();
  s.system.nodes = 48;
  s.training.pp = 6;
  s.training.dp = 0;
  s.training.interleave = 1;
  return s;
}

// Llama 3 70B on 384 H100 at tp 8, pp 3, dp 16, plain 1F1B: 80 = 3 x 26 + 2
// layers; 64 microbatches.
Scenario Llama70bPp3() {
  Scenario s = Llama70bPp6();
  s.training.pp = 3;
  return s;
}

// Pp6 with a straggler's slowdown set but no stage chosen, and with a stage
// chosen but no slowdown: each straggler key then acts alone.
Scenario Llama70bPp6SlowdownSet() {
  Scenario s = Llama70bPp6();
  s.training.straggler_slowdown = 1.5;
  return s;
}
Scenario Llama70bPp6StragglerSet() {
  Scenario s = Llama70bPp6();
  s.training.straggler_stage = 2;
  return s;
}

// configs/scenarios/llama3-8b-128k-h100.yaml as shipped: Llama 3.1 8B at
// 128K tokens on 64 H100, tp 8, cp 8 (scheme auto), full recompute.
Scenario Llama8b128k() { return LoadScenario("llama3-8b-128k-h100"); }

// Llama 2 7B under ZeRO-3 on 1,024 A100 (tests/support/presets.h), dp
// overlap on (the default), selective recompute (the scenario's).
Scenario Zero3() { return test::Llama2_7bZero3On1024A100(); }

// The same with full recompute (zero3_recompute_gather acts only then).
Scenario Zero3FullRecompute() {
  Scenario s = Zero3();
  s.training.recompute = parallelism::Recompute::kFull;
  return s;
}

// Mixtral 8x7B on 64 H100 of llama3-70b-h100's system: tp 2, pp 1, dp 32,
// ep 8 (edp 64 / (8 x 2) = 4), dropless, global batch 256 x 4096 tokens.
Scenario Mixtral() {
  Scenario s = LoadScenarioWithModel("llama3-70b-h100", "mixtral-8x7b");
  s.system.nodes = 8;
  s.training.tp = 2;
  s.training.pp = 1;
  s.training.dp = 0;
  s.training.interleave = 1;
  s.training.ep = 8;
  s.workload.global_batch = 256;
  s.workload.seq_len = 4096;
  s.workload.train_tokens = 0;
  return s;
}

// Qwen3-30B-A3B (128 experts of 768, top 8) on the same 64 H100: tp 1,
// ep 8, so 16 local experts a device, and 512-token sequences: a layer's
// forward is 56 kernels (MoeLayerKernels: 9 operators, 2 x 16 expert
// GEMMs, 15 of the router and the dispatcher), which a host launching each
// in 10 us (PyTorch eager) gives 560 us, while the device runs them in
// about 0.2 ms.
Scenario Qwen3Moe() {
  Scenario s = Mixtral();
  s.model = test::Model("qwen3-30b-a3b");
  s.training.tp = 1;
  s.training.sequence_parallel = false;
  s.workload.seq_len = 512;
  return s;
}

// DeepSeek-V3 (multi-head latent attention) on 1,024 H100 of
// deepseek-v3-dgx-h100.yaml's system: the plan of tests/moe_cp_test.cpp's
// Issue16.MlaUpProjRecomputeKeepsOnlyTheLatentsAndTheAttentionOutput, but
// in bf16 and plain 1F1B so that it fits without the up projections'
// recompute (76.9 GB of 80): tp 2, pp 8, dp 64, ep 64, sequence
// parallel, ZeRO-1, no recompute (recompute_mla_up_proj acts only below
// full recompute), global batch 8192 x 4096 tokens (128 microbatches).
Scenario DeepSeekV3() {
  Scenario s = LoadScenario("deepseek-v3-dgx-h100");
  s.system.nodes = 128;
  s.training.tp = 2;
  s.training.pp = 8;
  s.training.dp = 0;
  s.training.ep = 64;
  s.training.interleave = 1;
  s.training.sequence_parallel = true;
  s.training.zero = 1;
  s.training.recompute = parallelism::Recompute::kNone;
  s.workload.global_batch = 8192;
  return s;
}

// configs/scenarios/gpt3-175b-a100.yaml as shipped: GPT-3 175B, whose
// linear layers carry biases, on 64 A100 (Korthikanti et al. 2022 Table 5's
// plan: tp 8, pp 8, interleave 3, sequence parallel, selective recompute).
Scenario Gpt3() { return LoadScenario("gpt3-175b-a100"); }

const std::map<std::string, std::function<Scenario()>>& Bases() {
  static const std::map<std::string, std::function<Scenario()>> bases = {
      {"llama70b", Llama70b},
      {"llama70b-dp-auto", Llama70bDpAuto},
      {"llama70b-dp-auto-full-recompute", Llama70bDpAutoFullRecompute},
      {"llama70b-full-recompute", Llama70bFullRecompute},
      {"llama70b-dp1", Llama70bDp1},
      {"llama70b-fp8", Llama70bFp8},
      {"llama70b-fp8-no-dp-overlap", Llama70bFp8NoDpOverlap},
      {"llama70b-pp6", Llama70bPp6},
      {"llama70b-pp3", Llama70bPp3},
      {"llama70b-pp6-slowdown-set", Llama70bPp6SlowdownSet},
      {"llama70b-pp6-straggler-set", Llama70bPp6StragglerSet},
      {"llama8b-128k", Llama8b128k},
      {"zero3", Zero3},
      {"zero3-full-recompute", Zero3FullRecompute},
      {"mixtral", Mixtral},
      {"qwen3-moe", Qwen3Moe},
      {"deepseek-v3", DeepSeekV3},
      {"gpt3", Gpt3},
  };
  return bases;
}

// --- what is compared -------------------------------------------------------

struct Figure {
  const char* name;
  double value;
};
using Figures = std::vector<Figure>;

void AddTimes(const TimeBreakdown& t, Figures& out) {
  out.insert(out.end(), {{"time.forward", t.forward},
                         {"time.backward", t.backward},
                         {"time.recompute", t.recompute},
                         {"time.tp_comm", t.tp_comm},
                         {"time.cp_comm", t.cp_comm},
                         {"time.ep_comm", t.ep_comm},
                         {"time.pp_bubble", t.pp_bubble},
                         {"time.pp_p2p", t.pp_p2p},
                         {"time.dp_comm", t.dp_comm},
                         {"time.optimizer", t.optimizer},
                         {"time.offload", t.offload}});
}

Figures ClosedFormFigures(const TrainingEstimate& e) {
  Figures f = {{"infeasible", static_cast<double>(e.infeasible)},
               {"iteration_s", e.iteration_s},
               {"memory", e.memory.total()},
               {"microbatches", static_cast<double>(e.microbatches)},
               {"model_flops", e.model_flops},
               {"hardware_flops", e.hardware_flops},
               {"mfu", e.mfu},
               {"hfu", e.hfu},
               {"energy_j", e.energy_j},
               {"cost_usd", e.cost_usd},
               {"train_time_s", e.train_time_s}};
  AddTimes(e.time, f);
  return f;
}

// The event engine's own figures: whether it simulated, its iteration and
// breakdown, and the rates and totals scaled from its iteration.
Figures EventFigures(const EventEstimate& e) {
  Figures f = {{"error", static_cast<double>(e.error)},
               {"iteration_s", e.estimate.iteration_s},
               {"mfu", e.estimate.mfu},
               {"train_time_s", e.estimate.train_time_s}};
  AddTimes(e.estimate.time, f);
  return f;
}

// "name a -> b" for each figure that differs by more than a part in 1e9
// (rounding from a changed order of sums is not a move); empty when none does.
std::string Moved(const Figures& a, const Figures& b) {
  std::ostringstream out;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (std::fabs(a[i].value - b[i].value) > 1e-9 * std::max(std::fabs(a[i].value), std::fabs(b[i].value)))
      out << " " << a[i].name << " " << a[i].value << " -> " << b[i].value << ";";
  return out.str();
}

// --- the audit --------------------------------------------------------------

// Which estimators a key moves. kNothing: listed, with the reason.
enum class Moves { kNothing, kClosedForm, kEventOnly, kBoth };

struct Entry {
  std::string base;   // a name in Bases()
  std::string value;  // a valid other value, as written after --set key=
  Moves moves = Moves::kBoth;
  std::string why;    // unless kBoth: why one estimator, or neither, moves
};

// Changes `section.key` to the entry's value on its base and checks that
// what moves is what the entry says.
void AuditKey(const std::string& section, const std::string& key, const Entry& entry) {
  const std::string path = section + "." + key;
  SCOPED_TRACE(path + "=" + entry.value + " on base " + entry.base);
  const auto base_it = Bases().find(entry.base);
  ASSERT_NE(base_it, Bases().end()) << "no base named " << entry.base;
  const Scenario base = base_it->second();
  base::Diagnostics diags;
  CrossCheck(base, diags);
  ASSERT_TRUE(diags.ok()) << diags.ToString();
  Scenario changed = base;
  ASSERT_TRUE(ApplyOverride(changed, path + "=" + entry.value, diags)) << diags.ToString();
  CrossCheck(changed, diags);
  ASSERT_TRUE(diags.ok()) << diags.ToString();

  // Only the plan or the workload changed: one estimator pair serves both.
  const TrainingEstimator closed(base.model, base.system);
  const TrainingEstimate c0 = closed.Run(base.training, base.workload);
  const TrainingEstimate c1 = closed.Run(changed.training, changed.workload);
  ASSERT_TRUE(c0.feasible()) << "the base is infeasible (" << static_cast<int>(c0.infeasible) << ")";
  ASSERT_TRUE(c1.feasible()) << "the changed plan is infeasible (" << static_cast<int>(c1.infeasible) << ")";
  const EventEstimator event(base.model, base.system);
  const EventEstimate e0 = event.Run(base.training, base.workload);
  const EventEstimate e1 = event.Run(changed.training, changed.workload);
  ASSERT_TRUE(e0.simulated()) << "the event engine does not simulate the base: " << ExplainEventError(e0, base);
  ASSERT_TRUE(e1.simulated()) << "the event engine does not simulate the changed plan: "
                              << ExplainEventError(e1, changed);

  const std::string closed_moved = Moved(ClosedFormFigures(c0), ClosedFormFigures(c1));
  const std::string event_moved = Moved(EventFigures(e0), EventFigures(e1));
  const bool want_closed = entry.moves == Moves::kClosedForm || entry.moves == Moves::kBoth;
  const bool want_event = entry.moves == Moves::kEventOnly || entry.moves == Moves::kBoth;
  if (entry.moves == Moves::kNothing) {
    EXPECT_TRUE(closed_moved.empty() && event_moved.empty())
        << path << " is listed (" << entry.why << ") but moves a prediction: take it off the list."
        << " closed form:" << closed_moved << " event engine:" << event_moved;
    return;
  }
  if (want_closed)
    EXPECT_FALSE(closed_moved.empty()) << path << " changes no closed-form prediction: wire it or list it";
  else
    EXPECT_TRUE(closed_moved.empty()) << path << " is said to move the event engine only, but the closed form moves:"
                                      << closed_moved;
  if (want_event)
    EXPECT_FALSE(event_moved.empty()) << path << " changes no event-engine prediction";
  else
    EXPECT_TRUE(event_moved.empty()) << path << " is said not to move the event engine, but it does:" << event_moved;
}

// Walks the schema's fields, auditing each key with its entries (a key may
// have more than one base); a key without an entry and an entry without a
// key both fail.
template <class Spec>
void AuditSchema(const base::Schema<Spec>& schema, const std::multimap<std::string, Entry>& entries) {
  size_t found = 0;
  for (const auto& field : schema.fields()) {
    const std::string& key = field.info.key;
    const auto [first, last] = entries.equal_range(key);
    if (first == last) {
      ADD_FAILURE() << schema.name() << "." << key
                    << " has no entry: add a base where it can matter and a value that must move a "
                       "prediction, or list it with the reason it moves none";
      continue;
    }
    for (auto it = first; it != last; ++it, ++found) AuditKey(schema.name(), key, it->second);
  }
  EXPECT_EQ(found, entries.size()) << "an entry names a key the " << schema.name() << " schema does not hold";
}

// Every training.* key. Bases and values are chosen where the key acts; the
// `why` of an entry that does not move both estimators names what reads it.
TEST(PlanKeyAudit, EveryTrainingKeyMovesAPredictionOrIsListed) {
  const std::multimap<std::string, Entry> entries = {
      // Parallel degrees and their schemes.
      {"tp", {"llama70b-dp-auto-full-recompute", "4"}},
      {"pp", {"llama70b-dp-auto", "8"}},
      {"dp",
       {"llama70b", "0", Moves::kNothing,
        "a cross-check, not a choice: 0 means devices / (tp x pp x cp), which is the only other value "
        "the cross-check accepts (tp x pp x cp x dp must equal the device count), so both price one plan"}},
      {"cp", {"llama8b-128k", "4"}},
      // auto runs ring for this plan (the least exposed time): allgather
      // is the other choice the cross-check accepts (ulysses needs the 4
      // heads a tp rank holds to be a multiple of cp 8).
      {"cp_scheme", {"llama8b-128k", "allgather"}},
      {"ep", {"mixtral", "4"}},
      {"etp", {"mixtral", "1"}},
      {"expert_imbalance", {"mixtral", "0.2"}},
      {"ep_comm_overlap", {"mixtral", "true"}},
      {"expert_capacity_factor", {"mixtral", "1"}},
      {"host_kernel_launch", {"qwen3-moe", "10 us"}},
      // 4 Transformer Engine module calls a layer forward (QKV, output
      // projection, the experts' fc1 and fc2) at 1 ms, and their 32 grouped
      // splits at 100 us, each outlast the device's 0.2 ms forward.
      {"host_te_module", {"qwen3-moe", "1 ms"}},
      {"host_te_split", {"qwen3-moe", "100 us"}},
      {"sequence_parallel", {"llama70b-full-recompute", "false"}},
      // Pipeline.
      {"interleave", {"llama70b", "2"}},
      {"first_stage_layers", {"llama70b-pp6", "16"}},
      {"last_stage_layers", {"llama70b-pp6", "16"}},
      // Both estimators split an even split's L mod pp layers over to the
      // middle stages first (parallelism::EvenSplitLayers). Counting the
      // embedding and the loss as layers gives the first and last stages
      // ceil((L + 2) / pp) - 1: at pp 6, 13, what the even split gives
      // already (13 / 14 / 13), so pp 3 is audited: 27 / 26 / 27 against
      // the even split's 26 / 27 / 27, which moves both.
      {"pipeline_split_embedding_loss", {"llama70b-pp3", "true"}},
      {"schedule", {"llama70b-pp6", "zb-h1"}},
      {"straggler_stage",
       {"llama70b-pp6-slowdown-set", "2", Moves::kEventOnly,
        "the closed form paces every stage alike; the event engine slows that stage"}},
      {"straggler_slowdown",
       {"llama70b-pp6-straggler-set", "1.5", Moves::kEventOnly,
        "the closed form paces every stage alike; the event engine slows the straggler stage"}},
      {"micro_batch", {"llama70b", "2"}},
      // Recompute.
      {"recompute", {"llama70b", "selective"}},
      {"recompute_interval", {"llama70b-full-recompute", "2"}},
      {"checkpoint_early_stop", {"llama70b-full-recompute", "true"}},
      {"recompute_mla_up_proj", {"deepseek-v3", "true"}},
      {"recompute_mlp", {"llama70b", "true"}},
      {"recompute_layernorm", {"deepseek-v3", "true"}},
      {"recompute_moe_act", {"deepseek-v3", "true"}},
      // 19 of a stage's 20 layers: every copy beside one layer's compute.
      {"offload_activation_layers", {"llama70b", "19"}},
      // Kernels and datatypes.
      {"attention", {"llama70b", "flash2"}},
      {"elementwise", {"llama70b", "eager"}},
      {"loss_kernel", {"llama70b", "fused_bf16"}},
      {"precision", {"llama70b", "fp8"}},
      {"fp8_recipe", {"llama70b-fp8", "current"}},
      {"fp8_param_gather", {"llama70b-fp8-no-dp-overlap", "true"}},
      {"fp8_tp_gather", {"llama70b-fp8", "none"}},
      {"sp_input_regather", {"gpt3", "false"}},
      // Data parallelism, ZeRO and the optimizer.
      {"zero", {"llama70b", "0"}},
      {"dp_overlap", {"zero3", "false"}},
      {"dp_collective", {"zero3", "flat"}},
      {"zero3_recompute_gather", {"zero3-full-recompute", "false"}},
      {"grad_reduce_fp32", {"llama70b", "false"}},
      {"zero3_fp32_reduce", {"zero3", "true"}},
      {"zero3_backward_prefetch", {"zero3", "false"}},
      {"zero3_matrix_prefetch", {"zero3", "true"}},
      {"zero3_copy_out", {"zero3", "true"}},
      {"zero3_flat_grad", {"zero3", "true"}},
      {"tp_comm_overlap", {"llama70b", "false"}},
      {"pp_comm_overlap", {"llama70b", "true"}},
      {"dp_bucket", {"llama70b", "1 GB"}},
      {"fp32_master_weights", {"llama70b", "false"}},
      {"grad_accumulation_fusion", {"llama70b", "false"}},
      {"autocast_fp32_weights", {"llama70b", "true"}},
      {"grad_scale_at_dp1", {"llama70b-dp1", "true"}},
      {"grad_nan_check", {"llama70b", "true"}},
      // Llama has no biases: GPT-3's.
      {"separate_bias_grad", {"gpt3", "true"}},
      // Llama's split is concatenated already (packed_qkv_copies): GPT-3's
      // packed MHA attention without RoPE copies nothing.
      {"qkv_split_cat", {"gpt3", "true"}},
      {"norm_weight_grad_kernel", {"llama70b", "true"}},
      {"rope_kernel", {"llama70b", "false"}},
      {"packed_qkv_copies", {"llama70b", "false"}},
      {"optimizer", {"llama70b", "sgd"}},
      {"optimizer_moments", {"llama70b", "bf16"}},
      {"optimizer_step", {"llama70b", "pytorch"}},
      {"offload_optimizer", {"llama70b", "true"}},
      {"group_order", {"llama70b", "dp,tp,cp,ep,pp"}},
  };
  AuditSchema(parallelism::TrainingPlanSchema(), entries);
  // dp's listing holds: on 512 devices at tp 8, pp 4, any dp but 16 (or 0)
  // is refused before anything is priced.
  Scenario s = Llama70b();
  base::Diagnostics diags;
  ASSERT_TRUE(ApplyOverride(s, "training.dp=8", diags));
  CrossCheck(s, diags);
  EXPECT_NE(diags.ToString().find("tp x pp x cp x dp must equal the device count (512"), std::string::npos)
      << diags.ToString();
}

// Every workload.* key, on the shipped Llama 3 70B scenario.
TEST(PlanKeyAudit, EveryWorkloadKeyMovesAPredictionOrIsListed) {
  const std::multimap<std::string, Entry> entries = {
      {"global_batch", {"llama70b", "512"}},
      {"seq_len", {"llama70b", "4096"}},
      // The event engine scales the closed form's train time by its own
      // iteration: its train time moves with the tokens too.
      {"train_tokens", {"llama70b", "1e12"}},
  };
  AuditSchema(parallelism::WorkloadSchema(), entries);
}

// The finding of the audit above: without fp32 master weights the optimizer
// step moved the same bytes as with them. Adam with a master copy (see
// OptimizerStepBytesPerParam, training_estimator.cpp): reads the fp32 master
// weight, gradient and two moments (16 B), writes them and the bf16 copy
// (14 B), and clipping reads the gradient again (4 B): 34 B per parameter.
// Without a master copy it reads and writes the 2-byte weights instead of
// the 4-byte master twice plus the 2-byte copy: 34 - (4 + 4 + 2) + (2 + 2) =
// 28 B. SGD with momentum: 26 -> 20 B. On a device whose memory runs at a
// flat 80 % (MemoryTime = bytes / (0.8 x bandwidth) + kernel overhead) the
// step's time less the overhead scales by those bytes: 34/28 and 26/20. The
// optimizer states kept shrink from 12 B (two moments and the master) to
// 8 B a parameter (parallelism/memory_model.cpp). fp32 plans keep no
// separate master copy either way: nothing moves.
// training.offload_activation_layers is refused where Transformer Engine
// refuses it: as many layers as the stage holds (80 layers over pp 4 = 20; the
// last layer keeps its activations), and on a system with no host link.
TEST(PlanKeyAudit, ActivationOffloadNeedsALayerKeptAndAHostLink) {
  Scenario s = Llama70b();
  s.training.offload_activation_layers = 20;
  base::Diagnostics d;
  CrossCheck(s, d);
  ASSERT_EQ(d.size(), 1u) << d.ToString();
  EXPECT_EQ(d.items()[0].path, "training.offload_activation_layers");
  EXPECT_NE(d.items()[0].message.find("must be below the layers of a pipeline stage (20)"), std::string::npos)
      << d.items()[0].message;
  s.training.offload_activation_layers = 19;
  s.system.host_bandwidth = 0;
  base::Diagnostics none;
  CrossCheck(s, none);
  ASSERT_EQ(none.size(), 1u) << none.ToString();
  EXPECT_NE(none.items()[0].message.find("needs system.host_bandwidth > 0"), std::string::npos)
      << none.items()[0].message;
}

// With an fp32 master the step moves 12 + w bytes of it per parameter (read
// and written by the update, read again by the w-byte copy, which writes w);
// without one it reads and writes the w-byte weights, 2 w: in bf16
// 12 + 2 - 4 = 10 bytes less, Adam 38 -> 28, SGD 30 -> 20. The gradient
// buffer's zeroing and scaling (GradBufferBytesPerParam) is the same in
// both and cancels in the difference; the optimizer's shard per device is
// its memory over the 12 (Adam) or 8 (SGD) bytes a parameter of states and
// master.
TEST(PlanKeyAudit, NoMasterWeightsOptimizerStepMovesTenBytesAParameterLess) {
  Scenario sc = Llama70b();
  sc.system.device.memory_efficiency = hardware::Curve{{1e6}, {0.8}, {}};
  const double bw = 0.8 * sc.system.device.memory_bandwidth;
  const TrainingEstimator est(sc.model, sc.system);
  for (const auto& [optimizer, with, without] :
       {std::tuple{parallelism::Optimizer::kAdam, 38.0, 28.0}, std::tuple{parallelism::Optimizer::kSgd, 30.0, 20.0}}) {
    parallelism::TrainingPlan p = sc.training;
    p.optimizer = optimizer;
    const TrainingEstimate master = est.Run(p, sc.workload);
    p.fp32_master_weights = false;
    const TrainingEstimate plain = est.Run(p, sc.workload);
    ASSERT_TRUE(master.feasible() && plain.feasible());
    const double states = optimizer == parallelism::Optimizer::kAdam ? 8.0 : 4.0;
    const double opt_params = master.memory.optimizer / (states + 4);
    EXPECT_NEAR((master.time.optimizer - plain.time.optimizer) * bw / opt_params, with - without, 1e-4);
    EXPECT_NEAR(master.memory.optimizer / plain.memory.optimizer, (states + 4) / states, 1e-12);
  }
  parallelism::TrainingPlan fp32 = sc.training;
  fp32.precision = hardware::DataType::kFp32;
  const TrainingEstimate master = est.Run(fp32, sc.workload);
  fp32.fp32_master_weights = false;
  EXPECT_DOUBLE_EQ(est.Run(fp32, sc.workload).time.optimizer, master.time.optimizer);
}

// BF16 moments (training.optimizer_moments; DeepSeek-V3, arXiv 2412.19437,
// Sec. 3.3.3): Adam's two moments take 2 x 2 bytes a parameter instead of
// 2 x 4, so its states with the fp32 master are 8 bytes instead of 12 (SGD's
// one moment: 6 instead of 8), and the step reads and writes each moment
// once: 2 x 2 x 2 = 8 bytes a parameter less for Adam (38 -> 30), 4 for SGD
// (30 -> 26).
TEST(PlanKeyAudit, Bf16MomentsHalveTheMomentsBytes) {
  Scenario sc = Llama70b();
  sc.system.device.memory_efficiency = hardware::Curve{{1e6}, {0.8}, {}};
  const double bw = 0.8 * sc.system.device.memory_bandwidth;
  const TrainingEstimator est(sc.model, sc.system);
  for (const auto& [optimizer, fp32_states, bf16_states, step_saved] :
       {std::tuple{parallelism::Optimizer::kAdam, 12.0, 8.0, 8.0},
        std::tuple{parallelism::Optimizer::kSgd, 8.0, 6.0, 4.0}}) {
    parallelism::TrainingPlan p = sc.training;
    p.optimizer = optimizer;
    const TrainingEstimate fp32 = est.Run(p, sc.workload);
    p.optimizer_moments = hardware::DataType::kBf16;
    const TrainingEstimate bf16 = est.Run(p, sc.workload);
    ASSERT_TRUE(fp32.feasible() && bf16.feasible());
    EXPECT_NEAR(fp32.memory.optimizer / bf16.memory.optimizer, fp32_states / bf16_states, 1e-12);
    const double opt_params = fp32.memory.optimizer / fp32_states;
    EXPECT_NEAR((fp32.time.optimizer - bf16.time.optimizer) * bw / opt_params, step_saved, 1e-4);
  }
}

// Megatron-Core's mlp recompute module (training.recompute_mlp) on Llama 3
// 70B (h 8192, SwiGLU f 28672) at micro batch 1 x 8,192 tokens, tp 8 with
// sequence parallelism: a dense layer no longer keeps the MLP's norm output
// (2 sbh / t, the SP shard) nor its gate, up and product (6 sbf / t):
//   2 x 8192 x 8192 / 8 + 6 x 8192 x 28672 / 8 = 16,777,216 + 176,160,768
//   = 192,937,984 bytes.
// In FP8 the up projection keeps its FP8 input (1 sbh) and the down
// projection its FP8 product (5 sbf kept of 6): 8,388,608 + 146,800,640 =
// 155,189,248 bytes. The step pays it back in time: every microbatch of
// the pace stage's 20 layers runs the block's forward once more, the norm,
// mlp_up, the activation and mlp_down as the operator breakdown prices them.
TEST(PlanKeyAudit, MlpRecomputeKeepsOnlyTheBlocksInputAndRunsItsForwardAgain) {
  Scenario sc = Llama70b();
  parallelism::TrainingPlan p = sc.training;
  p.micro_batch = 1;
  p.sequence_parallel = true;
  p.recompute = parallelism::Recompute::kNone;
  ASSERT_EQ(p.tp, 8);
  ASSERT_EQ(sc.workload.seq_len, 8192);
  for (const auto& [dt, saved] : {std::pair{hardware::DataType::kBf16, 192937984.0},
                                  std::pair{hardware::DataType::kFp8, 155189248.0}}) {
    p.precision = dt;
    p.recompute_mlp = false;
    const double kept = parallelism::LayerActivationBytes(sc.model, p, 1, 8192);
    p.recompute_mlp = true;
    EXPECT_DOUBLE_EQ(kept - parallelism::LayerActivationBytes(sc.model, p, 1, 8192), saved);
  }
  p.precision = hardware::DataType::kBf16;
  const TrainingEstimator est(sc.model, sc.system);
  p.recompute_mlp = false;
  const TrainingEstimate plain = est.Run(p, sc.workload);
  p.recompute_mlp = true;
  const TrainingEstimate rec = est.Run(p, sc.workload);
  ASSERT_TRUE(plain.feasible() && rec.feasible());
  const OperatorBreakdown b = est.Breakdown(p, sc.workload, rec);
  double block_fwd = 0;
  for (const OperatorLine& l : b.dense.ops)
    if (l.name == "post_attention_norm" || l.name == "mlp_up" || l.name == "swiglu" || l.name == "mlp_down")
      block_fwd += l.fwd_s;
  ASSERT_GT(block_fwd, 0);
  EXPECT_NEAR(rec.time.recompute - plain.time.recompute,
              static_cast<double>(rec.microbatches) * 20 * block_fwd, 1e-9 * rec.time.recompute);
  EXPECT_GT(rec.hardware_flops, plain.hardware_flops);
  EXPECT_EQ(rec.model_flops, plain.model_flops);
  // Under full recompute the key changes nothing.
  p.recompute = parallelism::Recompute::kFull;
  const TrainingEstimate full_rec = est.Run(p, sc.workload);
  p.recompute_mlp = false;
  const TrainingEstimate full = est.Run(p, sc.workload);
  EXPECT_EQ(full_rec.iteration_s, full.iteration_s);
  EXPECT_EQ(full_rec.memory.activations, full.memory.activations);
}

// Megatron-Core's layernorm and moe_act recompute modules on DeepSeek-V3
// (h 7168, MLA, 8 routed experts of width 2048 a token) at micro batch 1 x
// 4,096 tokens, tp 1, ep 8, balanced routing (8 routed copies a token):
//   layernorm, bf16: a MoE layer frees its pre-MLP norm output and MLA's
//     input norm output, 2 x 2 sbh = 4 x 4096 x 7168 = 117,440,512 bytes; a
//     dense layer the MLA norm's alone, 58,720,256;
//   layernorm, FP8: the MoE pre-MLP norm's bf16 output alone (the router
//     keeps it; MLA's down projections keep their FP8 copy), 58,720,256 in
//     a MoE layer and nothing in a dense one;
//   moe_act, bf16: the product of every routed copy, 8 x 2 x 2048 x 4096 =
//     134,217,728 bytes; FP8: nothing (the down projection keeps its FP8
//     copy). The step runs each module's forward kernels once more.
TEST(PlanKeyAudit, LayernormAndMoeActRecomputeFreeWhatNoOtherModuleKeeps) {
  const Scenario sc = DeepSeekV3();
  parallelism::TrainingPlan p = sc.training;
  p.tp = 1;
  p.sequence_parallel = false;
  p.ep = 8;
  p.expert_imbalance = 0;
  p.recompute = parallelism::Recompute::kNone;
  p.recompute_mla_up_proj = false;
  struct Case {
    hardware::DataType dt;
    bool layernorm;
    double moe_saved, dense_saved;
  };
  for (const Case& c : {Case{hardware::DataType::kBf16, true, 117440512.0, 58720256.0},
                        Case{hardware::DataType::kFp8, true, 58720256.0, 0.0},
                        Case{hardware::DataType::kBf16, false, 134217728.0, 0.0},
                        Case{hardware::DataType::kFp8, false, 0.0, 0.0}}) {
    p.precision = c.dt;
    p.recompute_layernorm = false;
    p.recompute_moe_act = false;
    const double moe_kept = parallelism::MoeLayerActivationBytes(sc.model, p, 1, 4096);
    const double dense_kept = parallelism::LayerActivationBytes(sc.model, p, 1, 4096);
    (c.layernorm ? p.recompute_layernorm : p.recompute_moe_act) = true;
    EXPECT_DOUBLE_EQ(moe_kept - parallelism::MoeLayerActivationBytes(sc.model, p, 1, 4096), c.moe_saved);
    EXPECT_DOUBLE_EQ(dense_kept - parallelism::LayerActivationBytes(sc.model, p, 1, 4096), c.dense_saved);
  }
  // Time: the kernels once more, on the scenario's own plan.
  const TrainingEstimator est(sc.model, sc.system);
  parallelism::TrainingPlan q = sc.training;
  q.recompute = parallelism::Recompute::kNone;
  const TrainingEstimate plain = est.Run(q, sc.workload);
  q.recompute_layernorm = true;
  q.recompute_moe_act = true;
  const TrainingEstimate rec = est.Run(q, sc.workload);
  EXPECT_GT(rec.time.recompute, plain.time.recompute);
  EXPECT_EQ(rec.model_flops, plain.model_flops);
  EXPECT_LT(rec.memory.activations, plain.memory.activations);
}

}  // namespace
}  // namespace orrery::engine
