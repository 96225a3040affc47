#pragma once
// Capacity planning: the glue between a scaling law and the estimator.
//
//   law ──(loss target | FLOP budget | GPUs x days)──▶ N parameters, D tokens
//       ──family shape rules──▶ ModelSpec (layers, hidden, heads, kv_heads, ffn, vocab)
//       ──engine::Search (orrery search, objective time)──▶ best plan, iteration time
//       ──steps = ceil(D / batch tokens)──▶ days, GPU-hours, MWh, USD
//
// With bootstrap replicates of the law (a fit file written by `orrery fit
// --bootstrap K`), every replicate is carried through the same chain and the
// percentile interval of each figure is reported as its range.
//
// Nothing here prints or exits: invalid requests come back as a reason.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/param.h"
#include "core/search/plan_space.h"
#include "core/estimate/training_estimator.h"
#include "core/goodput/goodput.h"
#include "hardware/system_spec.h"
#include "models/model_spec.h"
#include "parallelism/plan_spec.h"
#include "scaling_laws/chinchilla_law.h"
#include "scaling_laws/law_presets.h"

namespace orrery::engine {

// ---------------------------------------------------------------------------
// Model families: the shape rules that turn a parameter count into a model.

struct FamilySpec {
  std::string name;
  std::string citation;
  double aspect_ratio = 128;       // d_model / n_layers the shape aims for
  int64_t head_dim = 128;          // size of one attention head
  int64_t kv_heads = 0;            // 0 = MHA; G = G key/value heads (GQA), capped at the heads
  int64_t hidden_multiple = 1024;  // d_model is a multiple of this (and of head_dim)
  int64_t layers_multiple = 1;     // n_layers is a multiple of this (pipeline stages divide it)
  models::Activation activation = models::Activation::kSwiglu;
  double ffn_multiplier = 8.0 / 3.0;  // MLP inner size = ffn_multiplier * d_model ...
  int64_t ffn_multiple = 256;         // ... rounded up to a multiple of this
  int64_t vocab = 32000;
  models::Norm norm = models::Norm::kRmsNorm;
  models::Position position = models::Position::kRope;
  bool bias = false;
  bool tied_embeddings = false;
  int64_t seq_len = 4096;          // training sequence length (tokens)
  double batch_tokens = 4194304;   // tokens per global batch (rounded to whole sequences)
};

// The registry declaration of a family (`family:` documents, configs/families/).
const base::Schema<FamilySpec>& FamilySchema();

// Cross-key checks: hidden_multiple a multiple of head_dim, batch of at least
// one sequence.
void CheckFamily(const FamilySpec& f, const std::string& path, const base::SourceLocation& where,
                 base::Diagnostics& diags);

// Sorted names of the family presets under <config_dir>/families/.
std::vector<std::string> FamilyNames(const std::string& config_dir);

// A preset name (configs/families/<name>.yaml) or a path to a YAML file whose
// one top-level key is `family:`. Unknown names get "did you mean".
std::optional<FamilySpec> LoadFamily(const std::string& name_or_file, const std::string& config_dir,
                                     base::Diagnostics& diags);

// The model of `family` whose parameter count (models::ParameterCount at the
// family's sequence length) is near `target_params`. Shapes searched:
// d_model = k * hidden_multiple, n_layers = j * layers_multiple with
// d_model / n_layers within a factor 2 of the aspect ratio. Score: the
// parameter error beyond 1 % plus 0.01 x |ln(aspect / target aspect)|, so
// within 1 % of N the aspect ratio decides, and beyond it a shape slightly
// further from N but near the family's proportions beats a squat one.
// heads = d_model / head_dim; kv_heads = the largest divisor of heads that is
// at most the family's kv_heads; ffn = ffn_multiplier * d_model rounded up.
models::ModelSpec BuildModel(const FamilySpec& family, double target_params);

// ---------------------------------------------------------------------------
// The best plan for each model: `orrery search` (core/search/search.h).

struct PlanSpace {
  // The search's space. Defaults keep one search in milliseconds, since the
  // chain searches once per budget step, GPU count and bootstrap replicate:
  // no optimizer offload, the default group order, micro-batches up to 8;
  // tp, pp, cp, interleaving, recompute, sequence parallelism, TP overlap,
  // ZeRO stage and DP overlap are all searched. Context parallelism stays in:
  // at thousands of GPUs a batch of a few hundred sequences leaves too few
  // per replica, and without CP the only shapes left put TP across nodes.
  PlanSpaceOptions search = [] {
    PlanSpaceOptions o;
    o.offload = false;
    o.all_group_orders = false;
    o.max_micro_batch = 8;
    return o;
  }();
  int threads = 1;  // deterministic either way; 1 leaves the other cores alone
};

struct BestPlan {
  bool found = false;
  parallelism::TrainingPlan plan;
  TrainingEstimate estimate;
  uint64_t candidates = 0;  // size of the searched space
  uint64_t evaluated = 0;   // full estimates (the rest were pruned)
  uint64_t feasible = 0;
  std::string why_none;     // when !found
};

// The plan with the shortest iteration for `model` on `system` at
// `workload` (Search with objective time, top 1); `base` supplies the knobs
// the search does not set (precision, attention, optimizer, buckets).
BestPlan FindBestPlan(const models::ModelSpec& model, const hardware::SystemSpec& system,
                      const parallelism::Workload& workload, const PlanSpace& space,
                      const parallelism::TrainingPlan& base = {});

// ---------------------------------------------------------------------------
// Laws with their uncertainty.

struct LawWithUncertainty {
  std::string name;
  std::string source;
  scaling_laws::ChinchillaParams point;
  std::vector<scaling_laws::ChinchillaParams> samples;  // bootstrap replicates (may be empty)
  double level = 0.95;                                  // their interval level
  // The runs the law was fitted on, where known (0: not stated): a preset's
  // (scaling_laws::FittedRangeOf), a fit file's residuals. Plan notes an N or
  // D outside them as an extrapolation.
  scaling_laws::FittedRange fitted;
};

// `name_or_file`: a chinchilla-kind preset of the catalogue at
// `catalog_path` (name or alias), or a fit file written by `orrery fit
// --format json|yaml` (law: chinchilla, parameters, optional
// bootstrap.samples). Errors name the file, line, column and key.
std::optional<LawWithUncertainty> LoadLaw(const std::string& name_or_file,
                                          const std::string& catalog_path,
                                          base::Diagnostics& diags);

// ---------------------------------------------------------------------------
// The chain.

enum class PlanGoal {
  kLoss,     // reach target_loss at least compute (or, with inference tokens, Sardana's optimum)
  kBudget,   // spend budget_flops = 6 N D compute-optimally
  kGpuDays,  // spend what `gpus` GPUs do in `days` days, compute-optimally
};

struct PlanRequest {
  PlanGoal goal = PlanGoal::kLoss;
  double target_loss = 0;
  double budget_flops = 0;
  double days = 0;                  // kGpuDays
  double inference_tokens = 0;      // kLoss only (Sardana et al. 2023)
  int64_t gpus = 0;                 // 0 = the system's device count
  double deadline_days = 0;         // > 0: the fewest GPUs (node x 2^k) that meet it
  int64_t max_gpus = 0;             // deadline search cap; 0 = the system's device count
  double flops_per_param_token = 6; // C = k N D for the law (Kaplan et al. 2020 Sec. 2.1)
  double batch_tokens = 0;          // 0 = the family's
  int64_t seq_len = 0;              // 0 = the family's
  double price_per_gpu_s = -1;      // USD per GPU-second; < 0 = the system's price
  double pue = 0;                   // 0 = the system's PUE
  PlanSpace space;
  size_t range_samples = 200;       // bootstrap replicates carried through (evenly spaced)
};

// One pass through the chain, for one law.
struct ChainPoint {
  double params_n = 0;          // the law's N
  double tokens_d = 0;          // the law's D
  double compute_flops = 0;     // k N D
  double loss = 0;              // the law at (N, D)
  double inference_flops = 0;   // 2 N D_inference (kLoss with inference tokens)
  models::ModelSpec model;
  double model_params = 0;      // ParameterCount of the built model
  int64_t gpus = 0;
  int64_t global_batch = 0;     // sequences
  int64_t seq_len = 0;
  int64_t steps = 0;            // ceil(D / (global_batch * seq_len))
  double tokens_trained = 0;    // steps * global_batch * seq_len
  BestPlan best;
  double model_flops_per_token = 0;  // the engine's, for the built model (no recompute)
  double train_model_flops = 0;      // steps * the engine's model FLOP per iteration
  double days = 0;              // steps * iteration_s / 86400 (failure-free)
  // Failures, checkpoints and stragglers (core/goodput): the expected wall
  // time. The deadline and the GPUs x days goal are met in these days.
  goodput::Result goodput;
  double effective_days = 0;    // days / goodput
  double effective_gpu_hours = 0;
  double effective_cost_usd = 0;  // the devices rented for the effective days
  double gpu_hours = 0;
  double energy_j = 0;          // steps * the engine's energy per iteration (TDP x time x PUE)
  double cost_usd = 0;          // steps * the engine's cost per iteration
  std::string infeasible;       // empty when a plan was found
};

struct Range {
  double lo = 0;
  double hi = 0;
};

struct PlanResult {
  std::string error;            // the request cannot be answered (e.g. loss <= E)
  ChainPoint point;
  hardware::SystemSpec system;  // as used: GPU count, PUE, price applied
  double achieved_days_target = 0;  // kGpuDays: the days asked for
  bool has_range = false;
  double level = 0.95;
  size_t range_samples = 0;     // replicates carried through
  size_t range_infeasible = 0;  // of those, how many found no plan
  Range params_n, tokens_d, compute_flops, loss, days, gpu_hours, energy_j, cost_usd, gpus;
  Range effective_days;
  std::vector<std::string> notes;
};

// Runs the chain for `law` (and its replicates). `system` is the preset; the
// GPU count, PUE and price of the request are applied to a copy.
PlanResult Plan(const LawWithUncertainty& law, const FamilySpec& family,
                const hardware::SystemSpec& system, const PlanRequest& request);

// `system` with `gpus` devices: nodes = gpus / devices_per_node, or one node
// of `gpus` devices when gpus is smaller than a node and divides it.
// Returns false (and leaves `out` alone) when neither fits.
bool SystemWithGpus(const hardware::SystemSpec& system, int64_t gpus, hardware::SystemSpec& out);

}  // namespace orrery::engine
