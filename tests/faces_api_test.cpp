// The public API a face that edits a scenario uses (issue 12/13: the GUI
// calls only core/api): registry fields and values, checked edits with the
// error at the field, the event engine's step as drawable tasks, a
// scenario's network on its own or another fabric, and the KV-cache pool of
// a deployment.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "core/api/estimate.h"
#include "core/api/infer.h"
#include "core/api/network.h"
#include "core/api/registry.h"
#include "core/api/timeline.h"

namespace orrery {
namespace {

class FacesApi : public ::testing::Test {
 protected:
  void SetUp() override { setenv("ORRERY_CONFIG_DIR", ORRERY_TEST_CONFIG_DIR, 1); }

  // GPT-3 175B on 64 A100 (Korthikanti et al. 2022 Table 5): tp 8, pp 8,
  // interleave 3, micro_batch 1, global batch 64 (configs/scenarios).
  static engine::Scenario Gpt3() {
    base::Diagnostics d;
    auto s = ResolveScenario(ScenarioInput::File("gpt3-175b-a100"), d);
    EXPECT_TRUE(s.has_value()) << d.ToString();
    return s ? *s : engine::Scenario{};
  }
};

TEST_F(FacesApi, RegistryPathsResolveWithUnits) {
  // Network tier keys are found by any tier index.
  ASSERT_NE(FindParam("system.network[3].bandwidth"), nullptr);
  EXPECT_EQ(FindParam("model.hiden"), nullptr);
  // 400 Gb/s = 400e9 bit/s / 8 = 5e10 bytes/s.
  EXPECT_DOUBLE_EQ(ParamSiValue("system.network[1].bandwidth", "400 Gb/s"), 5e10);
  EXPECT_DOUBLE_EQ(ParamSiValue("training.tp", "4"), 4);
  EXPECT_TRUE(std::isnan(ParamSiValue("system.network[1].bandwidth", "fast")));
  EXPECT_EQ(CheckParamText("training.tp", "4"), "");
  // A bare number where a unit is needed: the `orrery check` text, at the path.
  const std::string bare = CheckParamText("system.device.memory_capacity", "80");
  EXPECT_EQ(bare.rfind("system.device.memory_capacity: ", 0), 0u) << bare;
  EXPECT_NE(bare.find("(got '80')"), std::string::npos) << bare;

  const engine::Scenario s = Gpt3();
  EXPECT_EQ(ParamValueText(s, "training.pp"), "8");
  EXPECT_EQ(ParamValueText(s, "workload.global_batch"), "64");
  // Two tiers (NVLink, InfiniBand): each tier's keys appear once per tier.
  int tier_bandwidths = 0;
  for (const ParamField& f : ParamFields(s))
    if (f.info.key == "bandwidth" && f.section.rfind("system.network[", 0) == 0) ++tier_bandwidths;
  EXPECT_EQ(tier_bandwidths, 2);
}

TEST_F(FacesApi, EditsReportErrorsAtTheirFields) {
  ScenarioEdit e;
  e.base = Gpt3();
  e.sets = {{"workload.global_batch", "128"}, {"system.device.memory_capacity", "80"}};
  EditedScenario r = ApplyEdits(e);
  ASSERT_TRUE(r.scenario.has_value());
  EXPECT_EQ(r.scenario->workload.global_batch, 128);
  ASSERT_EQ(r.field_errors.count("system.device.memory_capacity"), 1u);
  EXPECT_EQ(r.field_errors["system.device.memory_capacity"],
            CheckParamText("system.device.memory_capacity", "80"));
  EXPECT_FALSE(r.ok());
  // A cross-check lands at the field it names: GPT-3 has 96 heads, and 5
  // does not divide 96 (96 = 5 x 19 + 1).
  e.sets = {{"training.tp", "5"}};
  r = ApplyEdits(e);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.field_errors.count("training.tp"), 1u);
  // A bad preset pick belongs to no field.
  e.sets.clear();
  e.model_preset = "gpt3-175";
  r = ApplyEdits(e);
  EXPECT_FALSE(r.errors.empty());
  EXPECT_TRUE(r.field_errors.empty());
}

TEST_F(FacesApi, OverridesBetweenNameOnlyWhatChanged) {
  const engine::Scenario a = Gpt3();
  base::Diagnostics d;
  auto b = ResolveScenario(ScenarioInput::Loaded(a, {"training.tp=4", "training.pp=16"}), d);
  ASSERT_TRUE(b.has_value()) << d.ToString();
  const auto o = OverridesBetween(a, *b);
  ASSERT_EQ(o.size(), 2u);
  // Registry order: tp is declared before pp.
  EXPECT_EQ(o[0], (std::pair<std::string, std::string>{"training.tp", "4"}));
  EXPECT_EQ(o[1], (std::pair<std::string, std::string>{"training.pp", "16"}));
  EXPECT_TRUE(OverridesBetween(a, a).empty());
}

TEST_F(FacesApi, TimelineHoldsEveryForwardPass) {
  EstimateRequest req;
  req.scenario = ScenarioInput::File("gpt3-175b-a100");
  req.engine = EstimateEngine::kEvent;
  req.keep_timeline = true;
  const EstimateResult r = Estimate(req);
  ASSERT_TRUE(r.ok()) << r.reason;
  const StepTimeline t = Timeline(r);
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.stages, 8);
  EXPECT_GT(t.closed_form_s, 0);
  // m = global batch / (dp x micro_batch) = 64 / (1 x 1) = 64 microbatches;
  // interleaving makes 8 x 3 = 24 virtual stages, each runs one forward pass
  // per microbatch: 24 x 64 = 1536 forward tasks, 3 x 64 = 192 per stage.
  int forward = 0, forward_stage0 = 0;
  for (const TimelineTask& k : t.tasks) {
    EXPECT_GE(k.stage, 0);
    EXPECT_LT(k.stage, t.stages);
    EXPECT_LT(k.start_s, k.finish_s);
    EXPECT_LE(k.finish_s, t.makespan_s * (1 + 1e-12));
    if (k.kind == TaskKind::kForward) {
      ++forward;
      if (k.stage == 0) ++forward_stage0;
      EXPECT_EQ(k.stream, StreamKind::kCompute);
    }
  }
  EXPECT_EQ(forward, 1536);
  EXPECT_EQ(forward_stage0, 192);
  EXPECT_STREQ(StreamLabel(StreamKind::kCompute), parallelism::StreamName(StreamKind::kCompute));

  // The closed form keeps no timeline: not ok, with the reason.
  req.engine = EstimateEngine::kClosed;
  const StepTimeline none = Timeline(Estimate(req));
  EXPECT_FALSE(none.ok);
  EXPECT_FALSE(none.error.empty());
}

TEST_F(FacesApi, ScenarioNetworkOnOwnAndOtherFabrics) {
  const engine::Scenario s = Gpt3();
  ScenarioNetworkRequest req;
  req.scenario = s;
  ScenarioNetworkResult own = ScenarioNetwork(req);
  ASSERT_TRUE(own.ok()) << own.reason << own.diagnostics.ToString();
  EXPECT_EQ(own.report.devices, 64);  // 8 nodes x 8
  ASSERT_EQ(own.report.tiers.size(), 2u);
  // The plan's estimate on its own fabric is orrery::Estimate's.
  EstimateRequest er;
  er.scenario = ScenarioInput::Loaded(s);
  ASSERT_TRUE(own.has_estimate);
  EXPECT_EQ(own.estimate.iteration_s, Estimate(er).estimate.iteration_s);

  // Another preset's fabric: the scenario's 64 A100 kept, the system resized.
  req.fabric_system = "dgx-h100-superpod";
  const ScenarioNetworkResult other = ScenarioNetwork(req);
  ASSERT_TRUE(other.ok()) << other.reason << other.diagnostics.ToString();
  EXPECT_EQ(other.report.devices, 64);
  EXPECT_EQ(other.report.device, s.system.device.name);

  // The outermost tier as rail-only (Wang et al. 2023), named in the system.
  req.fabric_system.clear();
  req.outer_topology = "rail-only";
  const ScenarioNetworkResult rail = ScenarioNetwork(req);
  ASSERT_TRUE(rail.ok()) << rail.reason << rail.diagnostics.ToString();
  EXPECT_EQ(rail.report.tiers.back().topology, "rail-only");
  EXPECT_EQ(rail.report.system, s.system.name + ", infiniband-hdr rail-only");

  req.outer_topology = "rail-onyl";
  const ScenarioNetworkResult bad = ScenarioNetwork(req);
  EXPECT_EQ(bad.status, Status::kInvalidInput);
  EXPECT_NE(bad.diagnostics.ToString().find("rail-only"), std::string::npos) << bad.diagnostics.ToString();
}

TEST_F(FacesApi, StaticKvPoolIsTheServingSimulatorsPool) {
  InferRequest req;
  req.scenario = ScenarioInput::File("llama2-70b-h100-infer");
  const InferResult st = Infer(req);
  ASSERT_TRUE(st.ok()) << st.reason;
  EXPECT_GT(st.kv_capacity_tokens, 0);
  req.mode = InferMode::kServe;
  req.scenario.overrides = {"inference.requests=20"};
  const InferResult sv = Infer(req);
  ASSERT_TRUE(sv.has_result) << sv.reason;
  EXPECT_EQ(st.kv_capacity_tokens, static_cast<double>(sv.serving.kv_capacity_tokens));
}

}  // namespace
}  // namespace orrery
