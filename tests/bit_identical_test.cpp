// Issue 19: speed work must not move a number. A fixed set of plans —
// closed-form and event-engine estimates, plan searches, static inference,
// simulated serving streams — is run through the public API and each JSON
// document is compared, byte for byte, with the one captured before the
// speed work (tests/data/bit_identical/NAME.json). nlohmann::json prints a
// double with the shortest text that reads back to the same bits, so equal
// text means equal doubles.
//
// Left out of the comparison: wall-clock fields (they differ from run to
// run) and a search's pruning counts (pruned_time_bound, pruned_memory,
// evaluated, out_of_memory, feasible, pruned, probes): how much of the space
// a search must cost depends on the order it visits the space in and on its
// bounds, which issue 19 changes on purpose; the space (candidates, shapes,
// divisibility pruning) and the answer (every plan and number of `top`) do
// not change.
// search_test.cpp holds the counts to determinism across thread counts.
//
// Re-capture (only when a change of the numbers is intended, saying why in
// the commit): ORRERY_BIT_IDENTICAL_CAPTURE=tests/data/bit_identical
// build/tests/orrery_bit_identical_test

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/api/estimate.h"
#include "core/api/infer.h"
#include "core/api/json.h"
#include "core/api/search.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(ORRERY_TEST_SOURCE_DIR) / "tests" / "data" / "bit_identical";

// Removes wall-clock fields everywhere and, under "stats", the counts that
// depend on the visit order (see the top of the file).
void Strip(Json& j, bool in_stats = false) {
  static const std::set<std::string> kVolatile = {"wall_s", "simulate_s", "elapsed_s", "build_s",
                                                  "analyze_s", "events_per_s"};
  static const std::set<std::string> kOrderDependent = {
      "pruned", "pruned_schedule", "pruned_time_bound", "pruned_memory", "evaluated", "probes", "out_of_memory", "refused", "feasible", "threads"};
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (kVolatile.count(it.key()) != 0 || (in_stats && kOrderDependent.count(it.key()) != 0)) {
        it = j.erase(it);
      } else {
        Strip(it.value(), it.key() == "stats");
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& e : j) Strip(e);
  }
}

// Compares `doc` with the captured document NAME.json, or writes it when
// ORRERY_BIT_IDENTICAL_CAPTURE names a folder.
void Check(const std::string& name, Json doc) {
  Strip(doc);
  const std::string got = doc.dump(1) + "\n";
  if (const char* dir = std::getenv("ORRERY_BIT_IDENTICAL_CAPTURE"); dir != nullptr && *dir != 0) {
    std::ofstream(fs::path(dir) / (name + ".json")) << got;
    return;
  }
  std::ifstream in(kData / (name + ".json"));
  ASSERT_TRUE(in) << "no captured document " << (kData / (name + ".json"));
  // The captured document goes through the same stripping (a count left out
  // later stays in old captures); a double reads back to the same bits.
  Json captured = Json::parse(in);
  Strip(captured);
  const std::string want = captured.dump(1) + "\n";
  if (want == got) return;
  // The first line that differs, to say which number moved.
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
    if (ea && eb) break;
    if (ea || eb || la != lb) {
      ADD_FAILURE() << name << ".json line " << line << ": captured '" << la << "', now '" << lb << "'";
      return;
    }
  }
}

// --- closed form and event engine -------------------------------------------

struct EstimateCase {
  const char* name;
  const char* scenario;  // preset or file
  std::vector<std::string> overrides;
  EstimateEngine engine = EstimateEngine::kClosed;
};

// A Mixtral MoE training plan on H100: EP, CP and ZeRO-3 in one scenario.
const char* kMoeTraining = R"(scenario:
  name: mixtral-8x7b-h100-train
  model: mixtral-8x7b
  system: dgx-h100-superpod
  set:
    system.nodes: 16
  training: {tp: 2, pp: 2, cp: 2, ep: 4, micro_batch: 1, sequence_parallel: true, recompute: selective, zero: 1}
  workload: {global_batch: 256, seq_len: 8192}
)";

std::vector<EstimateCase> EstimateCases() {
  const char* megatron = "configs/sweeps/megatron-1t-4096-a100.yaml";
  return {
      {"closed_gpt3_default", "gpt3-175b-a100", {}},
      {"closed_gpt3_full_pp4", "gpt3-175b-a100", {"training.recompute=full", "training.pp=4"}},
      {"closed_gpt3_1024", "gpt3-175b-1024-a100", {}},
      {"closed_gpt3_1024_zero3", "gpt3-175b-1024-a100", {"training.zero=3", "training.recompute=full"}},
      {"closed_gpt3_1024_zero3_no_overlap", "gpt3-175b-1024-a100",
       {"training.zero=3", "training.dp_overlap=false"}},
      {"closed_gpt3_1024_zero2_offload", "gpt3-175b-1024-a100",
       {"training.zero=2", "training.offload_optimizer=true"}},
      {"closed_gpt3_1024_order", "gpt3-175b-1024-a100",
       {"training.group_order=dp,tp,pp,cp,ep", "training.dp_collective=flat"}},
      {"closed_llama3_default", "llama3-70b-h100", {}},
      {"closed_llama3_cp2", "llama3-70b-h100",
       {"training.cp=2", "training.dp=8", "training.interleave=1", "training.precision=fp8"}},
      {"closed_llama3_gpipe", "llama3-70b-h100",
       {"training.schedule=gpipe", "training.interleave=1", "training.micro_batch=2"}},
      {"closed_llama3_zb", "llama3-70b-h100", {"training.schedule=zb-h1", "training.interleave=1"}},
      {"closed_llama3_uneven", "llama3-70b-h100",
       {"training.interleave=1", "training.first_stage_layers=18", "training.last_stage_layers=18"}},
      {"closed_llama3_oom", "llama3-70b-h100", {"training.tp=2", "training.pp=1", "training.dp=256",
                                                "training.interleave=1", "training.micro_batch=4"}},
      {"closed_megatron_1t", megatron, {}},
      {"closed_megatron_1t_full", megatron, {"training.recompute=full", "training.micro_batch=2"}},
      {"closed_moe", "", {}},
      {"closed_moe_zero3", "", {"training.zero=3", "training.tp_comm_overlap=true"}},
      {"event_gpt3_default", "gpt3-175b-a100", {}, EstimateEngine::kEvent},
      {"event_llama3_default", "llama3-70b-h100", {}, EstimateEngine::kEvent},
      {"event_llama3_zb", "llama3-70b-h100", {"training.schedule=zb-h1", "training.interleave=1"},
       EstimateEngine::kEvent},
      {"event_llama3_straggler", "llama3-70b-h100",
       {"training.straggler_stage=2", "training.straggler_slowdown=1.3"}, EstimateEngine::kEvent},
      {"event_gpt3_1024_zero3", "gpt3-175b-1024-a100", {"training.zero=3"}, EstimateEngine::kEvent},
      {"event_moe", "", {}, EstimateEngine::kEvent},
  };
}

TEST(BitIdentical, Estimates) {
  for (const EstimateCase& c : EstimateCases()) {
    SCOPED_TRACE(c.name);
    EstimateRequest req;
    // A path into the tree, a preset name, or (empty) the MoE scenario above.
    if (fs::path(c.scenario).extension() == ".yaml")
      req.scenario = ScenarioInput::File((fs::path(ORRERY_TEST_SOURCE_DIR) / c.scenario).string(), c.overrides);
    else if (*c.scenario != 0)
      req.scenario = ScenarioInput::File(c.scenario, c.overrides);
    else
      req.scenario = ScenarioInput::Yaml(kMoeTraining, c.overrides);
    req.scenario.config_dir = ORRERY_TEST_CONFIG_DIR;
    req.engine = c.engine;
    const EstimateResult r = Estimate(req);
    ASSERT_TRUE(r.has_estimate) << r.reason;
    Check(c.name, ToJson(r));
  }
}

// --- plan search ---------------------------------------------------------------

TEST(BitIdentical, Searches) {
  struct Case {
    const char* name;
    const char* scenario;
    int threads;
    std::function<void(SearchRequest&)> setup;
  };
  const std::vector<Case> cases = {
      // Llama 3 70B on 64 H100, default order of groups only: about 10^5 plans.
      {"search_llama3_64", "llama3-70b-h100", 1,
       [](SearchRequest& r) {
         r.gpus = "64";
         r.all_group_orders = false;
         r.top = 5;
       }},
      {"search_llama3_64_threads3", "llama3-70b-h100", 3,
       [](SearchRequest& r) {
         r.gpus = "64";
         r.all_group_orders = false;
         r.top = 5;
       }},
      // GPT-3 175B on 256 A100 by cost, every group order, no CP, no offload.
      {"search_gpt3_256_cost", "gpt3-175b-1024-a100", 2,
       [](SearchRequest& r) {
         r.gpus = "256";
         r.objective = Objective::kCost;
         r.context_parallel = false;
         r.offload = false;
         r.max_micro_batch = 4;
         r.top = 4;
         r.scenario.overrides.push_back("system.price_per_device_hour=1.5 USD/h");
       }},
      // The benchmark of issue 6: Megatron 1T on 4096 A100, every knob, the
      // batch rounded (about 57 M candidates).
      {"search_megatron_1t_4096", "", 2,
       [](SearchRequest& r) {
         r.scenario = ScenarioInput::File(
             (fs::path(ORRERY_TEST_SOURCE_DIR) / "configs/sweeps/megatron-1t-4096-a100.yaml").string());
         r.round_batch = true;
         r.top = 3;
       }},
      // The MoE scenario on 128 H100 with the batch rounded (Calculon's rule).
      {"search_moe_128", "", 2,
       [](SearchRequest& r) {
         r.gpus = "128";
         r.round_batch = true;
         r.all_group_orders = false;
         r.max_micro_batch = 2;
         r.top = 3;
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SearchRequest req;
    req.scenario = *c.scenario != 0 ? ScenarioInput::File(c.scenario) : ScenarioInput::Yaml(kMoeTraining);
    req.scenario.config_dir = ORRERY_TEST_CONFIG_DIR;
    req.threads = c.threads;
    c.setup(req);
    req.scenario.config_dir = ORRERY_TEST_CONFIG_DIR;
    const SearchResult r = Search(req);
    ASSERT_TRUE(r.ok()) << r.reason;
    Check(c.name, ToJson(r));
  }
}

// --- inference: static batch and simulated streams ----------------------------

TEST(BitIdentical, Inference) {
  struct Case {
    const char* name;
    const char* scenario;
    InferMode mode;
    std::vector<std::string> overrides;
  };
  const std::vector<Case> cases = {
      {"infer_llama2_static", "llama2-70b-h100-infer", InferMode::kStatic, {}},
      {"infer_mixtral_static", "mixtral-8x7b-a100-infer", InferMode::kStatic, {}},
      {"serve_llama2_continuous", "llama2-70b-h100-infer", InferMode::kServe,
       {"inference.requests=3000", "inference.rate=6"}},
      {"serve_llama2_chunked", "llama2-70b-h100-infer", InferMode::kServe,
       {"inference.requests=3000", "inference.rate=6", "inference.scheduler=chunked"}},
      {"serve_llama2_static", "llama2-70b-h100-infer", InferMode::kServe,
       {"inference.requests=1000", "inference.rate=2", "inference.scheduler=static",
        "inference.lengths=uniform"}},
      {"serve_llama2_overload", "llama2-70b-h100-infer", InferMode::kServe,
       {"inference.requests=2000", "inference.rate=40", "inference.max_batch=64"}},
      {"serve_mixtral", "mixtral-8x7b-a100-infer", InferMode::kServe, {"inference.requests=2000"}},
      {"serve_llama2_spec", "llama2-70b-spec-h100-infer", InferMode::kServe, {"inference.requests=1000"}},
      {"max_rate_llama2", "llama2-70b-h100-infer", InferMode::kMaxRate, {"inference.requests=300"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    InferRequest req;
    req.scenario = ScenarioInput::File(c.scenario, c.overrides);
    req.scenario.config_dir = ORRERY_TEST_CONFIG_DIR;
    req.mode = c.mode;
    const InferResult r = Infer(req);
    ASSERT_TRUE(r.has_result) << r.reason;
    Check(c.name, ToJson(r));
  }
}

}  // namespace
}  // namespace orrery
