#include "core/planning/planner.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "core/base/yaml_source.h"
#include "core/search/search.h"
#include "core/base/csv.h"
#include "hardware/device_spec.h"
#include "models/transformer.h"
#include "scaling_laws/compute_optimal.h"
#include "scaling_laws/law_presets.h"

namespace orrery::engine {

namespace fs = std::filesystem;
namespace sl = orrery::scaling_laws;
using base::Diagnostics;
using base::SourceLocation;

// ---------------------------------------------------------------------------
// Families

const base::Schema<FamilySpec>& FamilySchema() {
  static const base::Schema<FamilySpec> schema = [] {
    base::Schema<FamilySpec> s(
        "family",
        "Shape rules of a model family for `orrery plan` (configs/families/): how a parameter "
        "count becomes layers, hidden size, heads, KV heads and MLP size.");
    s.String("name", &FamilySpec::name, "", "Name shown in reports.")
        .String("citation", &FamilySpec::citation, "", "Where the shape rules come from.")
        .Real("aspect_ratio", &FamilySpec::aspect_ratio, 1, 1e4, "128",
              "Target d_model / n_layers; shapes stay within a factor 2 of it.", true)
        .Int("head_dim", &FamilySpec::head_dim, 1, 1e5, "128", "Size of one attention head.")
        .Int("kv_heads", &FamilySpec::kv_heads, 0, 1e5, "0",
             "Key/value heads: 0 = one per query head (MHA), G = G groups (GQA; capped at the "
             "query heads, and reduced to a divisor of them).")
        .Int("hidden_multiple", &FamilySpec::hidden_multiple, 1, 1e6, "1024",
             "d_model is a multiple of this (and of head_dim); 8 x head_dim keeps tp = 8 possible.")
        .Int("layers_multiple", &FamilySpec::layers_multiple, 1, 1e4, "1",
             "n_layers is a multiple of this, so that as many pipeline depths divide the layers.")
        .Enum<models::Activation>("activation", &FamilySpec::activation,
                                  {{"gelu", models::Activation::kGelu},
                                   {"swiglu", models::Activation::kSwiglu}},
                                  "swiglu", "MLP: gelu (2 matrices) or swiglu (3 matrices, gated).")
        .Real("ffn_multiplier", &FamilySpec::ffn_multiplier, 0, 100, "2.6666666666666665",
              "MLP inner size = ffn_multiplier x d_model, rounded up to ffn_multiple.", true)
        .Int("ffn_multiple", &FamilySpec::ffn_multiple, 1, 1e6, "256",
             "The MLP inner size is rounded up to a multiple of this.")
        .Int("vocab", &FamilySpec::vocab, 1, 1e8, "", "Vocabulary size V.")
        .Enum<models::Norm>("norm", &FamilySpec::norm,
                            {{"layernorm", models::Norm::kLayerNorm},
                             {"rmsnorm", models::Norm::kRmsNorm}},
                            "rmsnorm", "Normalisation layer.")
        .Enum<models::Position>("position", &FamilySpec::position,
                                {{"learned", models::Position::kLearned},
                                 {"rope", models::Position::kRope}},
                                "rope", "Position encoding: a learned table or RoPE.")
        .Bool("bias", &FamilySpec::bias, "false", "Linear layers and norms carry biases.")
        .Bool("tied_embeddings", &FamilySpec::tied_embeddings, "false",
              "The LM head shares the input embedding matrix.")
        .Int("seq_len", &FamilySpec::seq_len, 1, 1e8, "4096", "Training sequence length (tokens).")
        .Real("batch_tokens", &FamilySpec::batch_tokens, 1, 1e12, "4194304",
              "Tokens per global batch; the batch is this many tokens rounded to whole sequences.");
    return s;
  }();
  return schema;
}

void CheckFamily(const FamilySpec& f, const std::string& path, const SourceLocation& where,
                 Diagnostics& diags) {
  if (f.head_dim > 0 && f.hidden_multiple % f.head_dim != 0)
    diags.Add(where, path + ".hidden_multiple", std::to_string(f.hidden_multiple),
              "hidden_multiple must be a multiple of head_dim (" + std::to_string(f.head_dim) +
                  ") so that every d_model holds whole heads");
  if (f.batch_tokens < static_cast<double>(f.seq_len))
    diags.Add(where, path + ".batch_tokens", base::FormatNumber(f.batch_tokens),
              "batch_tokens must hold at least one sequence of seq_len (" +
                  std::to_string(f.seq_len) + ") tokens");
}

std::vector<std::string> FamilyNames(const std::string& config_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(config_dir + "/families", ec))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

bool LooksLikeFile(const std::string& s) {
  auto ends = [&](const char* suffix) {
    const std::string x = suffix;
    return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  return s.find('/') != std::string::npos || ends(".yaml") || ends(".yml") || ends(".json");
}

}  // namespace

std::optional<FamilySpec> LoadFamily(const std::string& name_or_file, const std::string& config_dir,
                                     Diagnostics& diags) {
  std::string file = name_or_file;
  if (!LooksLikeFile(name_or_file)) {
    file = config_dir + "/families/" + name_or_file + ".yaml";
    if (!fs::exists(file)) {
      diags.Add(SourceLocation{"--family", 0, 0}, "family", name_or_file,
                "no family preset of that name in " + config_dir + "/families",
                base::DidYouMean(name_or_file, FamilyNames(config_dir)));
      return std::nullopt;
    }
  }
  const size_t before = diags.size();
  auto doc = base::LoadYamlFile(file, diags);
  if (!doc) return std::nullopt;
  if (!doc->IsMap() || doc->size() != 1 || !(*doc)["family"]) {
    diags.Add(base::LocationOf(*doc, file), "", "",
              "expected one top-level key 'family' (a model family's shape rules)");
    return std::nullopt;
  }
  FamilySpec f;
  const YAML::Node map = (*doc)["family"];
  FamilySchema().Parse(map, "family", file, f, diags);
  if (diags.size() == before) CheckFamily(f, "family", base::LocationOf(map, file), diags);
  if (diags.size() != before) return std::nullopt;
  return f;
}

namespace {

int64_t RoundUp(int64_t v, int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }

models::ModelSpec Shape(const FamilySpec& f, int64_t hidden, int64_t layers) {
  models::ModelSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.head_dim = f.head_dim;
  m.heads = hidden / f.head_dim;
  if (f.kv_heads > 0) {
    // The largest divisor of the heads that is at most the family's groups.
    int64_t g = std::min(f.kv_heads, m.heads);
    while (g > 1 && m.heads % g != 0) --g;
    m.kv_heads = g;
  }
  m.ffn = RoundUp(static_cast<int64_t>(std::ceil(f.ffn_multiplier * static_cast<double>(hidden))),
                  f.ffn_multiple);
  m.vocab = f.vocab;
  m.max_seq = f.position == models::Position::kLearned ? f.seq_len : 0;
  m.activation = f.activation;
  m.norm = f.norm;
  m.position = f.position;
  m.bias = f.bias;
  m.tied_embeddings = f.tied_embeddings;
  return m;
}

}  // namespace

models::ModelSpec BuildModel(const FamilySpec& f, double target_params) {
  const double r = f.aspect_ratio;
  const int64_t step = std::max<int64_t>(f.hidden_multiple, f.head_dim);
  // Score of a shape: its parameter error beyond 1 % plus 0.01 x |ln(aspect
  // / target)|. Within 1 % of N the aspect ratio decides; beyond, 1 % more
  // parameter error is worth a factor e in aspect ratio, so a shape slightly
  // further from N but near the family's proportions wins over a squat one.
  constexpr double kTolerance = 0.01;
  constexpr double kAspectWeight = 0.01;
  models::ModelSpec best;
  double best_err = std::numeric_limits<double>::infinity();
  double best_score = std::numeric_limits<double>::infinity();
  for (int64_t k = 1; k <= 4096; ++k) {
    const int64_t h = k * step;
    const double hd = static_cast<double>(h);
    const int64_t lm = f.layers_multiple;
    const int64_t lmin = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(hd / (2 * r) / lm))) * lm;
    const int64_t lmax = std::max(lmin, static_cast<int64_t>(std::floor(2 * hd / r / lm)) * lm);
    const models::ModelSpec smallest = Shape(f, h, lmin);
    if (best_err < std::numeric_limits<double>::infinity() &&
        models::ParameterCount(smallest, f.seq_len) > 2 * target_params)
      break;
    for (int64_t l = lmin; l <= lmax; l += lm) {
      const models::ModelSpec m = Shape(f, h, l);
      const double p = models::ParameterCount(m, f.seq_len);
      const double err = std::abs(std::log(p / target_params));
      const double aspect = std::abs(std::log(hd / static_cast<double>(l) / r));
      const double score = std::max(0.0, err - kTolerance) + kAspectWeight * aspect;
      if (score < best_score) {
        best = m;
        best_err = err;
        best_score = score;
      }
      if (p > 2 * target_params) break;
    }
  }
  const double p = models::ParameterCount(best, f.seq_len);
  best.name = f.name + " " + base::FormatNumber(p / 1e9, 4) + "B";
  best.citation = "built by orrery plan from the family's shape rules (" + f.citation + ")";
  return best;
}

// ---------------------------------------------------------------------------
// Plan search

BestPlan FindBestPlan(const models::ModelSpec& model, const hardware::SystemSpec& system,
                      const parallelism::Workload& workload, const PlanSpace& space,
                      const parallelism::TrainingPlan& base) {
  Scenario s;
  s.name = model.name;
  s.model = model;
  s.system = system;
  s.training = base;
  s.workload = workload;
  SearchOptions o;
  o.top = 1;
  o.objective = Objective::kTime;
  o.threads = space.threads;
  // The planner ranks by the closed form (its figures are closed-form
  // figures); the closed form itself refuses the schedules it cannot price.
  o.event_check = false;
  o.space = space.search;
  const SearchResult r = Search(s, o);
  BestPlan best;
  best.candidates = r.stats.candidates;
  best.evaluated = r.stats.evaluated;
  best.feasible = r.stats.feasible;
  if (r.top.empty()) {
    best.why_none = r.why_none.empty() ? "no plan in the searched space fits" : r.why_none;
    return best;
  }
  best.found = true;
  best.plan = PlanOf(s, r.top.front().knobs);
  best.estimate = r.top.front().estimate;
  return best;
}

// ---------------------------------------------------------------------------
// Laws

namespace {

bool ReadPositive(const YAML::Node& map, const char* key, const std::string& path,
                  const std::string& file, bool allow_zero, double& out, Diagnostics& diags) {
  const YAML::Node n = map[key];
  if (!n) {
    diags.Add(base::LocationOf(map, file), path + "." + key, "", "required key is missing");
    return false;
  }
  const std::string text = n.IsScalar() ? n.Scalar() : std::string();
  double v = 0;
  if (!n.IsScalar() || !base::ParseDouble(text, &v) || !std::isfinite(v) ||
      !(allow_zero ? v >= 0 : v > 0)) {
    diags.Add(base::LocationOf(n, file), path + "." + key, text,
              allow_zero ? "expected a finite number >= 0" : "expected a finite number > 0");
    return false;
  }
  out = v;
  return true;
}

// The range of N and D of the runs a fit file was fitted on, from its
// residuals (one {N, D, ...} a run, as `orrery fit` writes them). The range
// only informs a note: an entry that is not a positive N and D is passed over.
void ReadFittedRange(const YAML::Node& residuals, LawWithUncertainty& law) {
  if (!residuals || !residuals.IsSequence()) return;
  double n_lo = std::numeric_limits<double>::infinity(), n_hi = 0;
  double d_lo = std::numeric_limits<double>::infinity(), d_hi = 0;
  for (const auto& r : residuals) {
    if (!r.IsMap() || !r["N"] || !r["D"] || !r["N"].IsScalar() || !r["D"].IsScalar()) continue;
    double n = 0, d = 0;
    if (!base::ParseDouble(r["N"].Scalar(), &n) || !base::ParseDouble(r["D"].Scalar(), &d)) continue;
    if (!(n > 0 && d > 0 && std::isfinite(n) && std::isfinite(d))) continue;
    n_lo = std::min(n_lo, n);
    n_hi = std::max(n_hi, n);
    d_lo = std::min(d_lo, d);
    d_hi = std::max(d_hi, d);
  }
  if (n_hi == 0) return;
  law.fitted = {n_lo, n_hi, d_lo, d_hi};
}

std::optional<LawWithUncertainty> LoadLawFile(const std::string& file, Diagnostics& diags) {
  const size_t before = diags.size();
  auto doc = base::LoadYamlFile(file, diags);
  if (!doc) return std::nullopt;
  if (!doc->IsMap()) {
    diags.Add(base::LocationOf(*doc, file), "", "",
              "expected a fit written by `orrery fit --format json|yaml` (a map)");
    return std::nullopt;
  }
  if (const YAML::Node law = (*doc)["law"]; law && (!law.IsScalar() || law.Scalar() != "chinchilla")) {
    diags.Add(base::LocationOf(law, file), "law", law.IsScalar() ? law.Scalar() : "",
              "orrery plan needs a chinchilla law (L = E + A/N^alpha + B/D^beta)");
    return std::nullopt;
  }
  const YAML::Node params = (*doc)["parameters"];
  if (!params || !params.IsMap()) {
    diags.Add(base::LocationOf(*doc, file), "parameters", "",
              "required map {E, A, B, alpha, beta} is missing");
    return std::nullopt;
  }
  LawWithUncertainty law;
  law.name = "fit:" + file;
  if (const YAML::Node src = (*doc)["source"]; src && src.IsScalar())
    law.source = "fitted to " + src.Scalar() + " (" + file + ")";
  else
    law.source = file;
  auto& p = law.point;
  ReadPositive(params, "E", "parameters", file, true, p.E, diags);
  ReadPositive(params, "A", "parameters", file, false, p.A, diags);
  ReadPositive(params, "B", "parameters", file, false, p.B, diags);
  ReadPositive(params, "alpha", "parameters", file, false, p.alpha, diags);
  ReadPositive(params, "beta", "parameters", file, false, p.beta, diags);
  if (diags.size() != before) return std::nullopt;
  ReadFittedRange((*doc)["residuals"], law);

  const YAML::Node boot = (*doc)["bootstrap"];
  if (!boot) return law;
  // Subscripting a scalar or a sequence throws in yaml-cpp (a fuzzed law
  // file found it): check the shape first.
  if (!boot.IsMap()) {
    diags.Add(base::LocationOf(boot, file), "bootstrap", boot.IsScalar() ? boot.Scalar() : "",
              "expected a map {level, samples} as `orrery fit --bootstrap K` writes it");
    return std::nullopt;
  }
  if (const YAML::Node lv = boot["level"]) {
    double level = 0;
    if (!lv.IsScalar() || !base::ParseDouble(lv.Scalar(), &level) || !(level > 0 && level < 1)) {
      diags.Add(base::LocationOf(lv, file), "bootstrap.level", lv.IsScalar() ? lv.Scalar() : "",
                "expected a number in (0, 1)");
      return std::nullopt;
    }
    law.level = level;
  }
  const YAML::Node samples = boot["samples"];
  if (!samples) return law;  // intervals alone cannot carry the joint uncertainty
  if (!samples.IsMap()) {
    diags.Add(base::LocationOf(samples, file), "bootstrap.samples", samples.IsScalar() ? samples.Scalar() : "",
              "expected a map of parameter -> sequence of replicates {E: [...], A: [...], ...}");
    return std::nullopt;
  }
  const char* keys[] = {"E", "A", "B", "alpha", "beta"};
  std::vector<std::vector<double>> cols;
  for (const char* k : keys) {
    const YAML::Node s = samples[k];
    const std::string path = std::string("bootstrap.samples.") + k;
    if (!s || !s.IsSequence()) {
      diags.Add(base::LocationOf(samples, file), path, "", "expected a sequence of numbers");
      return std::nullopt;
    }
    std::vector<double> col;
    for (const auto& x : s) {
      double v = 0;
      if (!x.IsScalar() || !base::ParseDouble(x.Scalar(), &v) || !std::isfinite(v) || v < 0) {
        diags.Add(base::LocationOf(x, file), path, x.IsScalar() ? x.Scalar() : "",
                  "expected a finite number >= 0");
        return std::nullopt;
      }
      col.push_back(v);
    }
    if (!cols.empty() && col.size() != cols[0].size()) {
      diags.Add(base::LocationOf(s, file), path, std::to_string(col.size()),
                "every parameter needs the same number of replicates (E has " +
                    std::to_string(cols[0].size()) + ")");
      return std::nullopt;
    }
    cols.push_back(std::move(col));
  }
  for (size_t i = 0; i < cols[0].size(); ++i)
    law.samples.push_back({cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i]});
  return law;
}

}  // namespace

std::optional<LawWithUncertainty> LoadLaw(const std::string& name_or_file,
                                          const std::string& catalog_path, Diagnostics& diags) {
  if (LooksLikeFile(name_or_file)) return LoadLawFile(name_or_file, diags);
  const SourceLocation where{"--law", 0, 0};
  auto cat = sl::LoadPresetCatalog(catalog_path);
  if (!cat) {
    diags.Add(where, "law", name_or_file, cat.error().message);
    return std::nullopt;
  }
  auto preset = cat->Find(name_or_file);
  if (!preset) {
    diags.Add(where, "law", name_or_file, preset.error().message);
    return std::nullopt;
  }
  auto params = preset->Chinchilla();
  if (!params) {
    diags.Add(where, "law", name_or_file,
              "preset '" + preset->name + "' is of kind '" + preset->kind_name +
                  "'; orrery plan needs a chinchilla-kind law (E, A, B, alpha, beta), e.g. "
                  "chinchilla or epoch (see orrery fit --list-presets)");
    return std::nullopt;
  }
  LawWithUncertainty law;
  law.name = preset->name;
  law.source = preset->source;
  law.point = *params;
  law.fitted = sl::FittedRangeOf(*preset);
  return law;
}

// ---------------------------------------------------------------------------
// The chain

bool SystemWithGpus(const hardware::SystemSpec& system, int64_t gpus, hardware::SystemSpec& out) {
  if (gpus <= 0 || system.devices_per_node <= 0) return false;
  hardware::SystemSpec s = system;
  if (gpus % system.devices_per_node == 0) {
    s.nodes = gpus / system.devices_per_node;
  } else if (gpus < system.devices_per_node && system.devices_per_node % gpus == 0) {
    s.devices_per_node = gpus;
    s.nodes = 1;
  } else {
    return false;
  }
  out = std::move(s);
  return true;
}

namespace {

constexpr double kSecondsPerDay = 86400.0;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Allocation {
  double n = 0, d = 0, loss = 0, inference_flops = 0;
  std::string error;
};

// N and D for one law. kGpuDays uses `budget` (the budget found for the
// point law) like kBudget.
Allocation Allocate(const sl::ChinchillaParams& law, const PlanRequest& req, double budget) {
  Allocation a;
  if (req.goal == PlanGoal::kLoss) {
    // Sardana et al. 2023 Sec. 2; with no inference tokens this is the
    // cheapest training run that reaches the loss (the Chinchilla optimum).
    auto ia = sl::InferenceAwareOptimal(law, req.target_loss, req.inference_tokens,
                                        req.flops_per_param_token, 2.0);
    if (!ia) {
      a.error = ia.error().message;
      return a;
    }
    a.n = ia->params_n;
    a.d = ia->tokens_train;
    a.inference_flops = ia->inference_flops;
  } else {
    // Hoffmann et al. 2022 Eq. 4.
    auto co = sl::ComputeOptimalClosedForm(law, budget, req.flops_per_param_token);
    if (!co) {
      a.error = co.error().message;
      return a;
    }
    a.n = co->params_n;
    a.d = co->tokens_d;
  }
  a.loss = law.Loss(a.n, a.d);
  return a;
}

struct Context {
  const FamilySpec& family;
  const hardware::SystemSpec& system;  // PUE and price applied; GPU count as asked
  const PlanRequest& req;
  int64_t seq_len = 0;
  int64_t global_batch = 0;
  std::vector<int64_t> gpu_candidates;  // deadline search, ascending
};

// Everything after N and D: shape, plan, days, energy, cost.
ChainPoint Evaluate(const Context& ctx, const Allocation& a) {
  ChainPoint cp;
  cp.params_n = a.n;
  cp.tokens_d = a.d;
  cp.compute_flops = ctx.req.flops_per_param_token * a.n * a.d;
  cp.loss = a.loss;
  cp.inference_flops = a.inference_flops;
  cp.model = BuildModel(ctx.family, a.n);
  cp.model_params = models::ParameterCount(cp.model, ctx.seq_len);
  cp.seq_len = ctx.seq_len;
  cp.global_batch = ctx.global_batch;
  const double batch_tokens = static_cast<double>(ctx.global_batch * ctx.seq_len);
  cp.steps = static_cast<int64_t>(std::ceil(a.d / batch_tokens));
  cp.tokens_trained = static_cast<double>(cp.steps) * batch_tokens;
  const parallelism::Workload w{ctx.global_batch, ctx.seq_len, 0};

  // The chain answers the question only while the built model is the law's N
  // and the steps train its D. A budget below the family's smallest shape
  // (its embeddings alone can exceed N) or below one global batch of tokens
  // would otherwise plan another model or another amount of data than asked:
  // such a point is a result with its reason, not a silent substitute.
  constexpr double kOffByAtMost = 2.0;
  const double shape_ratio = cp.model_params / a.n;
  const bool shape_off = !(shape_ratio <= kOffByAtMost && shape_ratio >= 1 / kOffByAtMost);
  const bool data_off = !(cp.tokens_trained <= kOffByAtMost * a.d);
  if (shape_off || data_off) {
    cp.days = cp.effective_days = kInf;
    cp.gpus = hardware::DeviceCount(ctx.system);
    if (shape_off)
      cp.infeasible = "the compute-optimal model has " + base::FormatNumber(a.n, 4) +
                      " parameters and the nearest " + ctx.family.name + " shape " +
                      base::FormatNumber(cp.model_params, 4) + " (" +
                      std::to_string(cp.model.layers) + " layers, d_model " +
                      std::to_string(cp.model.hidden) +
                      "), more than 2x off: no model of this family answers the question "
                      "(ask for a larger budget or loss, or a --family with smaller shapes)";
    else
      cp.infeasible = "the compute-optimal data, " + base::FormatNumber(a.d, 4) +
                      " tokens, is less than half of one global batch (" +
                      std::to_string(ctx.global_batch) + " x " + std::to_string(ctx.seq_len) +
                      " tokens): one step would train " +
                      base::FormatNumber(cp.tokens_trained / a.d, 3) +
                      "x the tokens asked for (--batch-tokens sets a smaller batch)";
    return cp;
  }

  auto run_on = [&](const hardware::SystemSpec& sys) {
    cp.best = FindBestPlan(cp.model, sys, w, ctx.req.space);
    cp.gpus = hardware::DeviceCount(sys);
    cp.days = cp.best.found
                  ? static_cast<double>(cp.steps) * cp.best.estimate.iteration_s / kSecondsPerDay
                  : kInf;
    cp.effective_days = kInf;
    if (cp.best.found) {
      const double step = cp.best.estimate.iteration_s;
      cp.goodput = goodput::Evaluate(goodput::MakeInputs(
          sys, cp.best.plan, cp.model_params, step, static_cast<double>(cp.steps) * step));
      cp.effective_days = cp.goodput.effective_s / kSecondsPerDay;
    }
  };
  if (ctx.req.deadline_days > 0) {
    // The fewest GPUs that meet the deadline; the candidates ascend, and the
    // largest is tried last so that a miss still reports its best effort.
    bool met = false;
    BestPlan fastest;
    int64_t fastest_gpus = 0;
    double fastest_days = kInf, fastest_compute_days = kInf;  // effective, failure-free
    goodput::Result fastest_goodput;
    for (int64_t g : ctx.gpu_candidates) {
      hardware::SystemSpec sys;
      if (!SystemWithGpus(ctx.system, g, sys)) continue;
      run_on(sys);
      if (cp.effective_days < fastest_days) {
        fastest = cp.best;
        fastest_gpus = cp.gpus;
        fastest_days = cp.effective_days;
        fastest_goodput = cp.goodput;
        fastest_compute_days = cp.days;
      }
      if (cp.effective_days <= ctx.req.deadline_days) {
        met = true;
        break;
      }
    }
    if (!met) {
      cp.best = fastest;
      cp.gpus = fastest_gpus;
      cp.days = fastest_compute_days;
      cp.effective_days = fastest_days;
      cp.goodput = fastest_goodput;
      const int64_t cap = ctx.gpu_candidates.empty() ? 0 : ctx.gpu_candidates.back();
      cp.infeasible =
          fastest_days < kInf
              ? "the deadline of " + base::FormatNumber(ctx.req.deadline_days) +
                    " days is not met with up to " + std::to_string(cap) + " GPUs (fastest: " +
                    base::FormatNumber(fastest_days) + " days on " + std::to_string(fastest_gpus) +
                    "); raise --max-gpus"
              : "no plan fits on up to " + std::to_string(cap) + " GPUs";
    }
  } else {
    run_on(ctx.system);
    if (!cp.best.found)
      cp.infeasible = cp.best.why_none + " (" + std::to_string(cp.gpus) + " GPUs, a batch of " +
                      std::to_string(ctx.global_batch) + " sequences, " +
                      std::to_string(cp.model.layers) +
                      " layers; --gpus, --deadline or --batch-tokens change them)";
  }
  if (cp.best.found) {
    const TrainingEstimate& e = cp.best.estimate;
    const double steps = static_cast<double>(cp.steps);
    cp.model_flops_per_token = e.model_flops / batch_tokens;
    cp.train_model_flops = steps * e.model_flops;
    cp.gpu_hours = cp.days * 24.0 * static_cast<double>(cp.gpus);
    cp.energy_j = steps * e.energy_j;
    cp.cost_usd = steps * e.cost_usd;
    cp.effective_gpu_hours = cp.effective_days * 24.0 * static_cast<double>(cp.gpus);
    cp.effective_cost_usd = cp.goodput.goodput > 0 ? cp.cost_usd / cp.goodput.goodput : kInf;
  }
  return cp;
}

// kGpuDays: the compute-optimal budget whose training takes `days` on the
// GPUs. Bisection on log C between budgets that train faster and slower;
// the faster end is returned so the plan fits the days.
bool SolveBudget(const Context& ctx, const sl::ChinchillaParams& law, double& budget,
                 std::string& error) {
  const PlanRequest& req = ctx.req;
  auto days_at = [&](double c) {
    const Allocation a = Allocate(law, req, c);
    if (!a.error.empty()) return kInf;
    return Evaluate(ctx, a).effective_days;
  };
  // At 100 % of peak every GPU-second does PeakFlops FLOP: a first bracket.
  const double peak = hardware::PeakFlops(ctx.system.device, hardware::DataType::kBf16);
  double hi = peak * static_cast<double>(hardware::DeviceCount(ctx.system)) * req.days * kSecondsPerDay;
  double lo = hi / 64;
  double days_hi = days_at(hi), days_lo = days_at(lo);
  for (int guard = 0; days_hi < req.days && guard < 10; ++guard) days_hi = days_at(hi *= 4);
  for (int guard = 0; !(days_lo <= req.days) && guard < 20; ++guard) days_lo = days_at(lo /= 4);
  if (!(days_lo <= req.days) || days_hi < req.days) {
    error = "no compute-optimal budget trains in " + base::FormatNumber(req.days) + " days on " +
            std::to_string(hardware::DeviceCount(ctx.system)) +
            " GPUs (even small models find no feasible plan)";
    return false;
  }
  for (int i = 0; i < 60 && hi / lo > 1 + 1e-5; ++i) {
    const double mid = std::sqrt(lo * hi);
    (days_at(mid) <= req.days ? lo : hi) = mid;
  }
  budget = lo;
  return true;
}

std::vector<int64_t> GpuCandidates(const hardware::SystemSpec& system, int64_t cap) {
  std::vector<int64_t> out;
  const int64_t node = system.devices_per_node;
  for (int64_t g = 1; g < node; g *= 2)
    if (node % g == 0 && g <= cap) out.push_back(g);
  for (int64_t g = node; g <= cap; g *= 2) out.push_back(g);
  if (out.empty() || out.back() != cap) {
    hardware::SystemSpec probe;
    if (SystemWithGpus(system, cap, probe)) out.push_back(cap);
  }
  return out;
}

// Percentile with linear interpolation between order statistics (as
// scaling_laws::Percentile), where a replicate that found no plan counts as
// +infinity rather than poisoning the interpolation.
double PercentileWithInf(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  if (frac == 0 || v[lo] == v[hi]) return v[lo];
  if (std::isinf(v[hi])) return kInf;
  return v[lo] + frac * (v[hi] - v[lo]);
}

Range PercentileRange(const std::vector<double>& v, double level) {
  return {PercentileWithInf(v, (1 - level) / 2), PercentileWithInf(v, (1 + level) / 2)};
}

}  // namespace

PlanResult Plan(const LawWithUncertainty& law, const FamilySpec& family,
                const hardware::SystemSpec& system, const PlanRequest& req) {
  PlanResult r;
  const auto& L = law.point;
  switch (req.goal) {
    case PlanGoal::kLoss:
      if (!(req.target_loss > L.E)) {
        r.error = "target loss " + base::FormatNumber(req.target_loss, 5) +
                  " is not above the law's irreducible loss E = " + base::FormatNumber(L.E, 5) +
                  " (" + law.name + "): no finite model and data reach it";
        return r;
      }
      break;
    case PlanGoal::kBudget:
      if (!(req.budget_flops > 0)) {
        r.error = "the compute budget must be > 0 FLOP";
        return r;
      }
      break;
    case PlanGoal::kGpuDays:
      if (!(req.days > 0) || req.gpus <= 0) {
        r.error = "a GPUs x days budget needs GPUs > 0 and days > 0";
        return r;
      }
      if (req.deadline_days > 0) {
        r.error = "a GPUs x days budget fixes the GPU count; a deadline cannot also choose it";
        return r;
      }
      break;
  }
  if (req.goal != PlanGoal::kLoss && req.inference_tokens > 0) {
    r.error =
        "inference-aware sizing (Sardana et al. 2023) fixes the loss and trades training against "
        "inference compute; give a target loss with the inference tokens";
    return r;
  }
  if (req.gpus > 0 && req.deadline_days > 0) {
    r.error = "give a GPU count or a deadline, not both (the deadline chooses the GPU count)";
    return r;
  }

  // The system as used: price, PUE, GPU count.
  r.system = system;
  if (req.pue > 0) r.system.pue = req.pue;
  if (req.price_per_gpu_s >= 0) r.system.price_per_device_hour = req.price_per_gpu_s;
  if (req.gpus > 0 && !SystemWithGpus(r.system, req.gpus, r.system)) {
    r.error = std::to_string(req.gpus) + " GPUs cannot be laid out on nodes of " +
              std::to_string(system.devices_per_node) +
              " (give a multiple of the node size, or a divisor of it)";
    return r;
  }
  Context ctx{family, r.system, req};
  ctx.seq_len = req.seq_len > 0 ? req.seq_len : family.seq_len;
  const double batch_tokens = req.batch_tokens > 0 ? req.batch_tokens : family.batch_tokens;
  ctx.global_batch = std::max<int64_t>(1, std::llround(batch_tokens / static_cast<double>(ctx.seq_len)));
  if (req.deadline_days > 0) {
    const int64_t cap = req.max_gpus > 0 ? req.max_gpus : hardware::DeviceCount(system);
    ctx.gpu_candidates = GpuCandidates(system, cap);
    if (ctx.gpu_candidates.empty()) {
      r.error = "no GPU count up to " + std::to_string(cap) + " fits the system's nodes";
      return r;
    }
  }

  double budget = req.budget_flops;
  if (req.goal == PlanGoal::kGpuDays) {
    r.achieved_days_target = req.days;
    std::string error;
    if (!SolveBudget(ctx, L, budget, error)) {
      r.error = error;
      return r;
    }
  }
  const Allocation a = Allocate(L, req, budget);
  if (!a.error.empty()) {
    r.error = a.error;
    return r;
  }
  r.point = Evaluate(ctx, a);

  // Notes that keep the chain honest.
  const ChainPoint& p = r.point;
  if (p.best.found)
    r.notes.push_back("C = " + base::FormatNumber(req.flops_per_param_token) +
                      " N D (Kaplan et al. 2020 Sec. 2.1); the engine counts " +
                      base::FormatNumber(p.model_flops_per_token / p.model_params, 4) +
                      " FLOP per parameter per token for this shape (attention scores and the "
                      "LM head included, input embeddings excluded)");
  if (std::abs(p.model_params / p.params_n - 1) > 0.02)
    r.notes.push_back("the nearest " + family.name + " shape has " +
                      base::FormatNumber(p.model_params / 1e9, 4) + "B parameters, " +
                      base::FormatNumber(100 * (p.model_params / p.params_n - 1), 3) +
                      " % from N");
  // Beyond the runs the law was fitted on the loss, and so N and D, are an
  // extrapolation of the fitted form: said, with how far.
  for (const std::string& note :
       {sl::ExtrapolationNote("N", p.params_n, law.fitted.n_min, law.fitted.n_max, "parameters"),
        sl::ExtrapolationNote("D", p.tokens_d, law.fitted.d_min, law.fitted.d_max, "tokens")})
    if (!note.empty()) r.notes.push_back(note);
  if (r.system.price_per_device_hour <= 0)
    r.notes.push_back("no price: the system preset has none; give --price-per-gpu-hour");
  if (req.goal == PlanGoal::kGpuDays && p.effective_days < 0.98 * req.days)
    r.notes.push_back("finishes in " + base::FormatNumber(p.effective_days) + " of the " +
                      base::FormatNumber(req.days) +
                      " days: a slightly larger budget moves to the next model shape (or plan), "
                      "which no longer fits the days");
  if (system.pue == 1.0 && req.pue <= 0)
    r.notes.push_back("PUE 1.0 (the system preset gives none; --pue sets one)");
  if (p.gpus > hardware::DeviceCount(system))
    r.notes.push_back("the plan uses " + std::to_string(p.gpus) + " GPUs; the preset has " +
                      std::to_string(hardware::DeviceCount(system)) +
                      " (more nodes of the same kind and network are assumed)");

  // The law's uncertainty, replicate by replicate through the whole chain.
  if (!law.samples.empty() && req.range_samples > 0) {
    r.has_range = true;
    r.level = law.level;
    const size_t n = law.samples.size();
    const size_t m = std::min(n, req.range_samples);
    std::vector<double> vn, vd, vc, vl, vdays, vh, ve, vcost, vg, veff;
    for (size_t i = 0; i < m; ++i) {
      const sl::ChinchillaParams& s = law.samples[i * n / m];
      const Allocation sa = Allocate(s, req, budget);
      ++r.range_samples;
      if (!sa.error.empty()) {
        ++r.range_infeasible;  // e.g. this replicate's E is above the target loss
        vn.push_back(kInf);
        vd.push_back(kInf);
        vc.push_back(kInf);
        vl.push_back(req.target_loss);
        vdays.push_back(kInf);
        vh.push_back(kInf);
        ve.push_back(kInf);
        vcost.push_back(kInf);
        vg.push_back(kInf);
        veff.push_back(kInf);
        continue;
      }
      const ChainPoint c = Evaluate(ctx, sa);
      if (!c.infeasible.empty()) ++r.range_infeasible;
      const bool ok = c.best.found;
      vn.push_back(c.params_n);
      vd.push_back(c.tokens_d);
      vc.push_back(c.compute_flops);
      vl.push_back(c.loss);
      vdays.push_back(ok ? c.days : kInf);
      vh.push_back(ok ? c.gpu_hours : kInf);
      ve.push_back(ok ? c.energy_j : kInf);
      vcost.push_back(ok ? c.cost_usd : kInf);
      vg.push_back(ok ? static_cast<double>(c.gpus) : kInf);
      veff.push_back(ok ? c.effective_days : kInf);
    }
    r.params_n = PercentileRange(vn, r.level);
    r.tokens_d = PercentileRange(vd, r.level);
    r.compute_flops = PercentileRange(vc, r.level);
    r.loss = PercentileRange(vl, r.level);
    r.days = PercentileRange(vdays, r.level);
    r.gpu_hours = PercentileRange(vh, r.level);
    r.energy_j = PercentileRange(ve, r.level);
    r.cost_usd = PercentileRange(vcost, r.level);
    r.gpus = PercentileRange(vg, r.level);
    r.effective_days = PercentileRange(veff, r.level);
  } else if (law.samples.empty()) {
    r.notes.push_back("no range: the law '" + law.name +
                      "' carries no bootstrap replicates (fit one with `orrery fit POINTS.csv "
                      "--bootstrap K --format json > law.json` and pass --law law.json)");
  }
  return r;
}

}  // namespace orrery::engine
