#include "core/validation/validation.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <regex>

#include "core/estimate/training_estimator.h"
#include "core/search/search.h"
#include "hardware/topology.h"
#include "core/base/csv.h"
#include "models/model_spec.h"
#include "parallelism/plan_spec.h"
#include "parallelism/schedule.h"

namespace orrery::engine {
namespace {

// Host seconds per kernel launch for a dropless MoE row whose system preset
// states no measured host.op_launch_time (DGX B200's Xeon Platinum 8570 is
// the one the shipped rows meet). The Xeon Platinum 8480C's torch.nn.Linear
// forward on an H100 DGX, 13.48 us of CPU time (TransformerEngine issue
// 2053, Aug 2025): the one x86 DGX host measured, taken as the assumption,
// and the row's assumptions say so.
constexpr double kUnmeasuredHostOpLaunch = 13.48e-6;

// First year 20xx mentioned in a text, or 0.
int YearOf(const std::string& text) {
  static const std::regex year("20[0-9][0-9]");
  std::smatch m;
  return std::regex_search(text, m, year) ? std::stoi(m.str()) : 0;
}

// The Megatron frameworks: Megatron-LM and the stacks built on its core
// (Megatron-Core, NeMo, Megatron-Bridge).
bool MegatronFamily(const std::string& framework) {
  return framework == "megatron-lm" || framework == "megatron-core" || framework == "nemo" ||
         framework == "megatron-bridge";
}

// torchtitan's rows: eager (`torchtitan`, its 2024 train configs' compile =
// false) or with its blocks through torch.compile (`torchtitan+compile`, the
// H100 tables' "FSDP + torch.compile"); everything else about its step
// (FSDP2, PyTorch SDPA, its loss and optimizer) the same.
bool Torchtitan(const std::string& framework) {
  return framework == "torchtitan" || framework == "torchtitan+compile";
}

// Whether a row's attention is Megatron-Core's with Transformer Engine (its
// RoPE kernels and packed QKV layout, training.rope_kernel and
// packed_qkv_copies): the Megatron frameworks, but Megatron-LM before 2024
// (its own attention module), and a row naming no framework (taken as
// Transformer Engine's, as the plan's defaults are).
bool TeAttention(const std::string& framework, int year) {
  if (framework.empty()) return true;
  return MegatronFamily(framework) && !(framework == "megatron-lm" && year > 0 && year < 2024);
}

// What a row's framework and date allow for the fields it leaves unstated:
// those a framework did not have at the time are held off (`notes` gets
// why); the others stay free for the search. A row without a year is taken
// as recent.
void RowLimits(const std::string& framework, int year, FixedKnobs& f, PlanSpaceOptions& space,
               std::string& notes) {
  auto note = [&](const std::string& a) { notes += (notes.empty() ? "" : "; ") + a; };
  const bool before = year > 0;  // the date rules apply
  const bool megatron = MegatronFamily(framework);
  // Sequence parallelism: Korthikanti et al. 2022 (arXiv 2205.05198), Sec. 4.2.2.
  if (f.sequence_parallel < 0 && before && year < 2022) {
    f.sequence_parallel = 0;
    note("no sequence parallelism (introduced by Korthikanti et al. 2022)");
  }
  // Tensor-parallel communication overlap: Megatron-Core --tp-comm-overlap
  // (TransformerEngine userbuffers), 2023; DeepSpeed has no tensor parallelism of its own to overlap.
  if (f.tp_comm_overlap < 0 && ((before && year < 2023) || framework == "deepspeed")) {
    f.tp_comm_overlap = 0;
    note("no tensor-parallel communication overlap (Megatron-Core --tp-comm-overlap, 2023)");
  }
  // Megatron-LM reduced the gradients after the backward pass until
  // Megatron-Core's --overlap-grad-reduce (2023).
  if (f.dp_overlap < 0 && megatron && before && year < 2023) {
    f.dp_overlap = 0;
    note("gradient reduction after the backward pass (Megatron-LM before --overlap-grad-reduce, 2023)");
  }
  // Megatron shards at most the optimizer states (its distributed optimizer,
  // ZeRO-1 in the terms of Rajbhandari et al. 2020), and in the harness's
  // rows only from Megatron-Core (2023).
  if (f.zero < 0 && megatron) {
    if (before && year < 2023) {
      f.zero = 0;
      note("no optimizer sharding (Megatron-LM before its distributed optimizer)");
    } else {
      f.zero_max = 1;
    }
  }
  // FSDP frameworks shard weights, gradients and optimizer states in full
  // by default (ZeRO-3 in the terms of Rajbhandari et al. 2020): torchtitan's
  // data parallelism is FSDP2 (Liang et al. 2024, arXiv 2410.06511, Sec.
  // 2.1), llm-foundry's the PyTorch FSDP of its fsdp_config, FULL_SHARD in
  // its training YAMLs. llm-foundry has no tensor or pipeline parallelism.
  if (Torchtitan(framework) || framework == "llm-foundry") {
    if (f.zero < 0) {
      f.zero = 3;
      note("ZeRO-3 (" + framework + " shards with FSDP)");
    }
  }
  if (framework == "llm-foundry") {
    if (f.tp == 0) f.tp = 1;
    if (f.pp == 0) f.pp = 1;
    if (f.cp == 0) f.cp = 1;
    note("no tensor, pipeline or context parallelism (llm-foundry trains with FSDP alone)");
  }
  // Context parallelism: Megatron-Core 2024 (--context-parallel-size).
  if (f.cp == 0 && before && year < 2024) {
    f.cp = 1;
    space.context_parallel = false;
  }
}

// The knobs the search chose, those `fixed` left free, for the row's
// assumptions: "micro batch 2, recompute selective, ZeRO-1".
std::string DescribeFree(const PlanKnobs& k, const FixedKnobs& fixed) {
  std::string out;
  auto add = [&](bool free, const std::string& what) {
    if (free) out += (out.empty() ? "" : ", ") + what;
  };
  add(fixed.tp == 0, "tp " + std::to_string(k.tp));
  add(fixed.pp == 0, "pp " + std::to_string(k.pp));
  add(fixed.cp == 0, "cp " + std::to_string(k.cp));
  add(fixed.ep == 0, "ep " + std::to_string(k.ep));
  add(fixed.dp == 0, "dp " + std::to_string(k.dp));
  add(fixed.micro_batch == 0, "micro batch " + std::to_string(k.micro_batch));
  add(fixed.interleave == 0, "interleave " + std::to_string(k.interleave));
  add(fixed.recompute < 0, std::string("recompute ") + parallelism::RecomputeName(k.recompute));
  add(fixed.sequence_parallel < 0, std::string("sequence parallel ") + (k.sequence_parallel ? "on" : "off"));
  add(fixed.zero < 0, "ZeRO-" + std::to_string(k.zero));
  add(fixed.dp_overlap < 0, std::string("DP overlap ") + (k.dp_overlap ? "on" : "off"));
  add(fixed.tp_comm_overlap < 0, std::string("TP overlap ") + (k.tp_comm_overlap ? "on" : "off"));
  return out;
}

}  // namespace

GpuPlacement PlaceGpu(const std::string& gpu_name, const PresetStore& store) {
  GpuPlacement out;
  std::string device_name = TrimCell(gpu_name), system_name;
  if (const size_t open = device_name.find('('); open != std::string::npos) {
    const size_t close = device_name.find(')', open);
    system_name = TrimCell(device_name.substr(open + 1, close == std::string::npos
                                                            ? std::string::npos
                                                            : close - open - 1));
    device_name = TrimCell(device_name.substr(0, open));
  }
  const auto device = store.Resolve(DocKind::kDevice, device_name);
  if (!device) {
    out.error = "no device preset for GPU '" + gpu_name + "'";
    const std::string near = store.CloseTo(DocKind::kDevice, device_name);
    if (!near.empty()) out.error += "; " + near;
    return out;
  }
  out.device = device->preset;
  if (!system_name.empty())
    if (const auto sys = store.Resolve(DocKind::kSystem, system_name)) out.system = sys->preset;
  if (out.system.empty()) {
    out.system = store.ReferenceSystem(out.device);
    if (out.system.empty()) {
      out.error = "device preset '" + out.device + "' declares no reference_system to place it in";
      return out;
    }
    if (!system_name.empty())
      out.assumption = "no system preset answers to '" + system_name + "'; placed in " +
                       out.system + " (" + out.device + "'s reference system)";
  }
  return out;
}

std::string TrimCell(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string SourceGroup(const std::string& source) {
  const size_t cut = source.find_first_of("(,'");
  return TrimCell(cut == std::string::npos ? source : source.substr(0, cut));
}

bool MetricIsTime(const std::string& metric) {
  auto ends = [&](const char* tail) {
    const std::string t(tail);
    return metric.size() >= t.size() && metric.compare(metric.size() - t.size(), t.size(), t) == 0;
  };
  return (ends("_s") || ends("_ms")) && metric.find("per_s") == std::string::npos;
}

double SpeedBiasPct(const ValidationRow& row) {
  const double ratio = MetricIsTime(row.metric) ? row.measured / row.predicted : row.predicted / row.measured;
  return 100 * (ratio - 1);
}

std::string FacetOf(const ValidationRow& row, const std::string& facet) {
  if (facet == "device") return row.device;
  if (facet == "framework") return row.framework;
  if (facet == "precision") return row.precision;
  if (facet == "recompute") return row.recompute;
  if (facet == "metric") return row.metric;
  return "";
}

void Summarise(ValidationReport& r) {
  r.evaluated = 0;
  r.skipped = 0;
  double sum = 0, mx = 0, speed = 0;
  for (const auto& row : r.rows) {
    if (!row.error_pct) {
      ++r.skipped;
      continue;
    }
    ++r.evaluated;
    sum += std::fabs(*row.error_pct);
    mx = std::max(mx, std::fabs(*row.error_pct));
    speed += SpeedBiasPct(row);
  }
  r.mape_pct = r.evaluated > 0 ? sum / r.evaluated : 0;
  r.max_abs_error_pct = mx;
  r.speed_bias_pct = r.evaluated > 0 ? speed / r.evaluated : 0;
}

namespace {

// The closed vocabularies of validation/training_runs.csv (validation/README.md
// documents each column). A blank cell means the source did not state it.
// mla_up_proj: Megatron-Core selective recompute of the MLA up projections
// alone (--recompute-modules mla_up_proj), no attention-core recompute;
// mla_up_proj+mlp: those and the dense layers' MLP blocks
// (--recompute-modules mla_up_proj mlp).
// `layers/N` (every N-th layer fully recomputed) is read beside these words.
// op: torchtitan's op-level selective activation checkpointing
// (selective_ac_option = "op"; parallelism::Recompute::kOp).
// layernorm+moe_act: Megatron-Core's layernorm and moe_act recompute modules
// (--recompute-modules layernorm moe_act; TrainingPlan::recompute_layernorm
// and recompute_moe_act), no attention-core recompute.
const std::vector<std::string> kRecompute = {"none",        "selective",       "full",
                                             "mla_up_proj", "mla_up_proj+mlp", "layernorm+moe_act",
                                             "op"};
const std::vector<std::string> kYesNo = {"yes", "no"};
// fp8 runs Transformer Engine's default delayed scaling; fp8-cs current
// scaling, fp8-block 1x128 / 128x128 block scaling, fp8-mx MXFP8
// (training.fp8_recipe, core/estimate/step_kernels.h).
const std::vector<std::string> kPrecision = {"bf16", "fp16", "fp8", "fp8-cs", "fp8-block", "fp8-mx", "nvfp4"};
const std::vector<std::string> kAttention = {"flash", "flash2", "triton", "materialized"};
const std::vector<std::string> kFlopsMetric = {"model", "hardware"};
const std::vector<std::string> kMoeRouting = {"learned", "force-balanced", "token-dropping"};
// The datatype a ZeRO-3 / FSDP run reduce-scatters its gradients in, where
// the source states it (training.zero3_fp32_reduce): fp32, or the 16-bit
// datatype of the weights. llm-foundry's tables state it through their
// "MP Mode" column: Composer's fsdp_config mixed_precision PURE sets
// MixedPrecision(param_dtype, reduce_dtype, buffer_dtype) all to the run's
// precision (composer/trainer/dist_strategy.py, prepare_fsdp_module, early
// 2023; composer/trainer/mosaic_fsdp_utils.py, get_mixed_precision, from
// mid 2023: the same for PURE in every version), so a PURE bf16 row reduces
// in bf16.
const std::vector<std::string> kReduceDtype = {"fp32", "bf16", "fp16"};


// A plan's GEMM precision in the precision column's words (kPrecision).
std::string PrecisionWord(const parallelism::TrainingPlan& p) {
  if (p.precision != hardware::DataType::kFp8) return hardware::DataTypeName(p.precision);
  switch (p.fp8_recipe) {
    case parallelism::Fp8Recipe::kDelayed: return "fp8";
    case parallelism::Fp8Recipe::kCurrent: return "fp8-cs";
    case parallelism::Fp8Recipe::kBlockwise: return "fp8-block";
    case parallelism::Fp8Recipe::kMxfp8: return "fp8-mx";
    case parallelism::Fp8Recipe::kNvfp4: return "nvfp4";
  }
  return "fp8";
}

std::string JoinWords(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

double PredictedMetric(const TrainingEstimate& e, const std::string& metric, double devices) {
  if (metric == "iteration_s") return e.iteration_s;
  if (metric == "hardware_tflops_per_gpu") return e.hardware_flops / e.iteration_s / devices / 1e12;
  if (metric == "model_tflops_per_gpu") return e.tflops_per_device / 1e12;
  return e.mfu;
}

ValidationReport ValidateTrainingCsv(const std::string& csv_file, const PresetStore& store,
                                     base::Diagnostics& diags, int only_line, bool keep_scenarios) {
  ValidationReport report;
  auto table = base::ReadCsvFile(csv_file);
  if (!table) {
    diags.Add({csv_file, 0, 0}, "", "", table.error().message);
    return report;
  }
  const auto& t = *table;
  // The shape columns may be absent when every row names a model preset, and
  // the plan columns when the harness is to choose the plan; these cannot be.
  const std::vector<std::string> required = {"model", "gpus", "gpu", "global_batch"};
  for (const auto& c : required) {
    if (t.ColumnIndex(c) < 0)
      diags.Add({csv_file, t.header_line, 0}, c, "", "required column is missing",
                base::DidYouMean(c, t.header));
  }
  if (!diags.ok()) return report;
  std::map<std::string, std::pair<hardware::SystemSpec, bool>> systems;

  for (const auto& r : t.rows) {
    if (only_line > 0 && r.line != only_line) continue;
    ValidationRow row;
    row.file = csv_file;
    row.line = r.line;
    auto cell = [&](const char* name) -> std::string {
      const int i = t.ColumnIndex(name);
      return i < 0 ? std::string() : TrimCell(r.cells[static_cast<size_t>(i)]);
    };
    row.model = cell("model");
    row.source = cell("source");
    std::string assumed;
    auto assume = [&](const std::string& a) { assumed += (assumed.empty() ? "" : "; ") + a; };
    auto skip = [&](const std::string& why) {
      row.skipped = why;
      row.assumptions = assumed;
      report.rows.push_back(row);
    };

    // --- typed cells -------------------------------------------------------------
    // Typed, range-checked cells (core/base/csv.h): a cell that is present but
    // not a number in range, or not a word of its column's vocabulary, is an
    // error at its file:line and column, and the row is skipped with that
    // reason. The first bad cell of a row is reported.
    std::string bad;
    auto number = [&](const char* name, double min, double max) -> std::optional<double> {
      auto v = base::CsvNumber(t, r, name, min, max);
      if (v) return *v;
      if (bad.empty()) bad = v.error().message;
      return std::nullopt;
    };
    auto word = [&](const char* name, const std::vector<std::string>& allowed) -> std::string {
      std::string v = cell(name);
      if (v.empty()) return v;
      for (const auto& a : allowed)
        if (v == a) return v;
      if (bad.empty())
        bad = t.source + ":" + std::to_string(r.line) + ": column '" + name + "': got '" + v +
              "': must be one of " + JoinWords(allowed) + " (blank: not stated)";
      return "";
    };
    const auto iter = number("measured_iter_s", 1e-6, 1e7);
    const auto tflops = number("measured_tflops_per_gpu", 1e-6, 1e6);
    std::optional<double> mfu_pct;
    {
      // "41.5%" or "41.5": percent of peak.
      base::CsvTable one{t.source, t.header_line, {"measured_mfu"}, {}};
      std::string text = cell("measured_mfu");
      if (!text.empty() && text.back() == '%') text.pop_back();
      const base::CsvRow mfu_row{r.line, {text}};
      auto v = base::CsvNumber(one, mfu_row, "measured_mfu", 1e-6, 100);
      if (v) mfu_pct = *v;
      else if (bad.empty()) bad = v.error().message;
    }
    auto integer = [&](const char* name, int64_t min, int64_t max) -> std::optional<int64_t> {
      auto v = base::CsvInteger(t, r, name, min, max);
      if (v) return *v;
      if (bad.empty()) bad = v.error().message;
      return std::nullopt;
    };
    // The ranges are the parameter registry's, the same as for YAML keys.
    auto ranged = [&](const char* column, const auto& schema, const char* key) {
      const auto* f = schema.Find(key);
      return integer(column, static_cast<int64_t>(f->info.min), static_cast<int64_t>(f->info.max));
    };
    const auto& model = models::ModelSchema();
    const auto& plan = parallelism::TrainingPlanSchema();
    const auto& work = parallelism::WorkloadSchema();
    const auto layers = ranged("layers", model, "layers"), hidden = ranged("hidden", model, "hidden"),
               heads = ranged("heads", model, "heads"), vocab = ranged("vocab", model, "vocab"),
               ffn = ranged("ffn", model, "ffn"), seq = ranged("seq", work, "seq_len"),
               global_batch = ranged("global_batch", work, "global_batch"),
               tp = ranged("tp", plan, "tp"), pp = ranged("pp", plan, "pp"),
               dp = ranged("dp", plan, "dp"), cp = ranged("cp", plan, "cp"),
               ep = ranged("ep", plan, "ep"), micro_batch = ranged("micro_batch", plan, "micro_batch"),
               interleave = ranged("interleave", plan, "interleave"),
               zero = ranged("zero", plan, "zero"), gpus = integer("gpus", 1, 1'000'000'000),
               kv_heads = ranged("kv_heads", model, "kv_heads"),
               mtp = ranged("mtp", model, "mtp_depth"),
               first_stage_layers = ranged("first_stage_layers", plan, "first_stage_layers"),
               last_stage_layers = ranged("last_stage_layers", plan, "last_stage_layers");
    // The schedule names are the plan parser's (parallelism/plan_spec.cpp).
    const std::string recompute_cell = cell("recompute");
    // A `word/N` recompute cell: N a whole number from `least` to the plan
    // field's maximum, else the row is refused with `rule`; 0 when the cell
    // is another word.
    const auto slash_count = [&](const std::string& prefix, const char* field, int64_t least,
                                 const char* rule) -> int64_t {
      if (recompute_cell.rfind(prefix, 0) != 0) return 0;
      const std::string n = recompute_cell.substr(prefix.size());
      const bool digits = !n.empty() && n.size() <= 7 && n.find_first_not_of("0123456789") == std::string::npos;
      const int64_t v = digits ? std::stoll(n) : 0;
      if (v >= least && static_cast<double>(v) <= plan.Find(field)->info.max) return v;
      if (bad.empty())
        bad = t.source + ":" + std::to_string(r.line) + ": column 'recompute': got '" + recompute_cell + "': " + rule;
      return 0;
    };
    // `layers/N`: every N-th layer fully recomputed, the rest keep all
    // their activations (torchtitan's selective layer activation
    // checkpointing, selective_ac_option = "N"; TrainingPlan::recompute_interval).
    const bool layer_recompute = recompute_cell.rfind("layers/", 0) == 0;
    const int64_t recompute_interval =
        layer_recompute ? std::max<int64_t>(1, slash_count("layers/", "recompute_interval", 2,
                                                           "layers/N needs a whole N from 2 to 1000000 (every "
                                                           "N-th layer recomputed)"))
                        : 1;
    // `offload/N`: no recompute, the activations of the first N layers of
    // each stage copied to host memory after their forward and back before
    // their backward (Megatron-Core --cpu-offloading
    // --cpu-offloading-num-layers N, activations only;
    // TrainingPlan::offload_activation_layers).
    const bool layer_offload = recompute_cell.rfind("offload/", 0) == 0;
    const int64_t offload_layers =
        slash_count("offload/", "offload_activation_layers", 1,
                    "offload/N needs a whole N from 1 to 1000000 (layers whose activations go to host memory)");
    const std::string recompute = layer_recompute  ? std::string("full")
                                  : layer_offload ? std::string("none")
                                                  : word("recompute", kRecompute),
                      seq_parallel = word("seq_parallel", kYesNo),
                      schedule = word("schedule", plan.Find("schedule")->info.choices),
                      precision = word("precision", kPrecision),
                      dp_overlap = word("dp_overlap", kYesNo), tp_overlap = word("tp_overlap", kYesNo),
                      ep_overlap = word("ep_overlap", kYesNo), attention = word("attention", kAttention),
                      fp8_param_gather = word("fp8_param_gather", kYesNo),
                      flops_metric = word("flops_metric", kFlopsMetric),
                      moe_routing = word("moe_routing", kMoeRouting),
                      reduce_dtype = word("reduce_dtype", kReduceDtype),
                      cp_scheme = word("cp_scheme", plan.Find("cp_scheme")->info.choices);
    // The order of the parallel groups, innermost first, where the source
    // states it (training.group_order's words; Llama 3: [TP, CP, PP, DP],
    // Grattafiori et al. 2024 Sec. 3.3.2).
    const std::string group_order = cell("group_order");
    if (!group_order.empty() && !parallelism::IsGroupOrder(group_order) && bad.empty())
      bad = t.source + ":" + std::to_string(r.line) + ": column 'group_order': got '" + group_order + "': " +
            parallelism::kGroupOrderRule + " (blank: the framework's default, tp,cp,ep,dp,pp)";
    // The architecture of a shape given by columns; the words are the model
    // parser's (models/model_spec.cpp).
    const std::string activation = word("activation", model.Find("activation")->info.choices),
                      norm = word("norm", model.Find("norm")->info.choices),
                      position = word("position", model.Find("position")->info.choices),
                      tied = word("tied_embeddings", kYesNo), bias = word("bias", kYesNo);
    const std::string framework = cell("framework");  // a free word: megatron-lm, deepspeed, ...

    // --- the model: a preset the row names, or the shape columns -----------------
    // A row's `model` may name a preset (by file name, name or alias). Its
    // shape is then the preset's (attention, MLP kind, experts: more than the
    // columns carry); shape columns the row fills in must agree with it.
    std::optional<models::ModelSpec> preset;
    std::string preset_name;
    if (bad.empty()) {
      if (const auto found = store.Resolve(DocKind::kModel, row.model)) {
        models::ModelSpec pm;
        base::Diagnostics pd;
        if (LoadModelPreset(found->preset, store, {csv_file, r.line, 0}, "model", pm, pd)) {
          preset = pm;
          preset_name = found->preset;
          const std::pair<const char*, std::pair<std::optional<int64_t>, int64_t>> shape[] = {
              {"layers", {layers, pm.layers}}, {"hidden", {hidden, pm.hidden}},
              {"heads", {heads, pm.heads}},    {"ffn", {ffn, models::FfnSize(pm)}},
              {"vocab", {vocab, pm.vocab}}};
          for (const auto& [column, given_want] : shape) {
            const auto& [given, want] = given_want;
            if (given && *given != want && bad.empty())
              bad = t.source + ":" + std::to_string(r.line) + ": column '" + column + "': got '" +
                    std::to_string(*given) + "': the model '" + row.model + "' is preset '" +
                    preset_name + "', whose " + column + " is " + std::to_string(want) +
                    " (leave the cell blank, or name a model no preset answers to)";
          }
        }
      }
    }
    if (!bad.empty()) {
      diags.Add({csv_file, r.line, 0}, "", "", bad);
      skip("invalid cell: " + bad);
      continue;
    }

    // --- the measured figure -------------------------------------------------------
    if (iter) {
      row.metric = "iteration_s";
      row.measured = *iter;
    } else if (tflops) {
      // flops_metric says what the TFLOP/s count: hardware FLOPs include the
      // recomputed forward (Narayanan et al. 2021 Eq. 3), model FLOPs do not.
      if (flops_metric.empty()) {
        skip("measured TFLOP/s without flops_metric (model or hardware FLOPs): the figure cannot be compared");
        continue;
      }
      row.metric = flops_metric == "hardware" ? "hardware_tflops_per_gpu" : "model_tflops_per_gpu";
      row.measured = *tflops;
    } else if (mfu_pct) {
      row.metric = "mfu";
      row.measured = *mfu_pct / 100;
    } else {
      skip("no measured iteration time, TFLOP/s or MFU");
      continue;
    }

    Scenario s;
    s.name = row.model;
    s.file = csv_file + ":" + std::to_string(r.line);
    if (preset) {
      s.model = *preset;
      assume("model preset " + preset_name);
    } else {
      if (!layers || !hidden || !heads || !vocab) {
        skip("model shape incomplete (layers, hidden, heads, vocab) and no model preset answers to '" +
             row.model + "'");
        continue;
      }
      // GPT architecture: GeLU, LayerNorm, learned positions, biases, tied.
      s.model.name = row.model;
      s.model.layers = *layers;
      s.model.hidden = *hidden;
      s.model.heads = *heads;
      s.model.vocab = *vocab;
      if (ffn) s.model.ffn = *ffn;
      else assume("ffn = 4h (GPT)");
      // Architecture columns the row states replace the GPT defaults.
      std::string arch;
      auto set = [&](const std::string& key, const std::string& value) {
        if (value.empty()) return;
        base::Diagnostics d;
        models::ModelSchema().SetText(s.model, key, value, {csv_file, r.line, 0}, key, d);
        arch += (arch.empty() ? "" : ", ") + key + " " + value;
      };
      if (kv_heads) set("kv_heads", std::to_string(*kv_heads));
      set("activation", activation);
      set("norm", norm);
      set("position", position);
      set("tied_embeddings", tied == "yes" ? "true" : tied == "no" ? "false" : "");
      set("bias", bias == "yes" ? "true" : bias == "no" ? "false" : "");
      // A row that states only whether the embedding is tied to the LM head
      // is still a GPT shape (the Megatron-LM README 2024 rows: their model
      // sizes count an untied output layer); every other column states a
      // different architecture.
      const bool gpt_shape = activation.empty() && norm.empty() && position.empty() &&
                             bias.empty() && !kv_heads;
      if (arch.empty()) assume("GPT architecture (GeLU, LayerNorm, learned positions, biases, tied embeddings)");
      else if (gpt_shape) assume("GPT architecture (GeLU, LayerNorm, learned positions, biases)");
      // Dropout is no column: a GPT run of Megatron-LM (or Megatron-DeepSpeed,
      // which keeps Megatron's arguments) drops at the defaults of
      // megatron/training/arguments.py, --hidden-dropout 0.1 and
      // --attention-dropout 0.1; llm-foundry's MPT drops nothing
      // (llmfoundry/models/mpt/configuration_mpt.py: resid_pdrop 0.0,
      // attn_config attn_pdrop 0.0), nor do the Llama-style recipes.
      if (gpt_shape && (framework == "megatron-lm" || framework == "deepspeed")) {
        s.model.hidden_dropout = 0.1;
        s.model.attention_dropout = 0.1;
        assume("dropout 0.1 on the residual branches and attention (Megatron-LM defaults)");
      }
    }
    if (!seq) {
      skip("sequence length missing (the step's work cannot be assumed)");
      continue;
    }
    s.workload.seq_len = *seq;
    // The multi-token-prediction modules the run trained, where the source
    // states them: the Megatron-Bridge 25.11 table labels its DeepSeek-V3
    // rows "DeepSeekV3 (w/o MTP)" on GB200 and "(w/ MTP)" on B200, while the
    // preset carries the report's depth 1 (model.mtp_depth).
    if (mtp && *mtp != s.model.mtp_depth) {
      assume("MTP depth " + std::to_string(*mtp) + " (the source's; the preset's " +
             std::to_string(s.model.mtp_depth) + ")");
    }
    if (mtp) s.model.mtp_depth = *mtp;
    {
      base::Diagnostics d;
      models::CheckModel(s.model, "model", {csv_file, r.line, 0}, d);
      if (!d.ok()) {
        skip("model shape inconsistent: " + d.items()[0].message);
        continue;
      }
    }

    // --- the system ---------------------------------------------------------------
    const std::string gpu = cell("gpu");
    if (gpu.empty()) {
      skip("gpu missing (the device cannot be assumed)");
      continue;
    }
    const GpuPlacement place = PlaceGpu(gpu, store);
    if (!place.error.empty()) {
      skip(place.error);
      continue;
    }
    std::string system_name = cell("system").empty() ? place.system : cell("system");
    if (!place.assumption.empty()) assume(place.assumption);
    row.device = place.device;
    const std::string key = system_name + "/" + place.device;
    auto it = systems.find(key);
    if (it == systems.end()) {
      base::Diagnostics d;
      hardware::SystemSpec sys;
      bool ok = LoadSystemPreset(system_name, store, {csv_file, r.line, 0}, "system", sys, d);
      if (ok && sys.device_preset != place.device) {
        ok = LoadDevicePreset(place.device, store, {csv_file, r.line, 0}, "system.device",
                              sys.device, d);
        sys.device_preset = place.device;
      }
      if (!ok) diags.Append(d);
      it = systems.emplace(key, std::make_pair(sys, ok)).first;
    }
    if (!it->second.second) {
      skip("system preset '" + system_name + "' failed to load");
      continue;
    }
    s.system = it->second.first;
    if (!gpus) {
      skip("gpus missing (the GPU count cannot be assumed)");
      continue;
    }
    const int64_t n = *gpus;
    if (n % s.system.devices_per_node == 0) {
      s.system.nodes = n / s.system.devices_per_node;
    } else {
      // The row's GPUs do not fill whole scale-up domains (64 or 256 GPUs on
      // 72-GPU NVL72 racks): the scheduler places the job in equal segments,
      // each inside one domain (Slurm's topology/block plugin, --segment;
      // NVIDIA's GB200 NVL72 guidance is segments of 16 four-GPU compute
      // trays, 64 GPUs a rack, for jobs of 128+ GPUs such as MoE training:
      // NVIDIA Technical Blog, "Unlock Exascale Performance on NVIDIA GB200
      // NVL72 with Slurm Topology-Aware Job Scheduling", 2025). A segment is
      // the largest divisor of the GPU count that fits in one domain, and it
      // is the job's scale-up domain: no parallel group spans two racks
      // unless it is wider than a segment.
      const int64_t dom = s.system.devices_per_node;
      int64_t seg = std::min(n, dom);
      while (seg > 1 && n % seg != 0) --seg;
      // A rail is one local rank of the domain (one NIC per GPU): a
      // segment of seg GPUs uses seg of the domain's rails.
      for (auto& tier : s.system.network) {
        if (tier.domain == dom) tier.domain = seg;
        if (tier.rails == dom) tier.rails = seg;
      }
      s.system.devices_per_node = seg;
      s.system.nodes = n / seg;
      if (n > dom)
        assume("placed as " + std::to_string(n / seg) + " segments of " + std::to_string(seg) +
               " GPUs, one per " + std::to_string(dom) + "-GPU scale-up domain (Slurm --segment)");
    }

    // The measured machine held the row's GPUs: where the preset's fat tree
    // is too small for them, give it the switch levels it needs (the same
    // capacity `orrery network` checks, hardware/topology.h).
    for (auto& tier : s.system.network) {
      if (tier.topology != hardware::Topology::kFatTree || tier.radix <= 0) continue;
      const int64_t links = tier.links > 0 ? tier.links : 1;
      const int64_t need = (tier.domain == 0 ? n : std::min(tier.domain, n)) * links;
      const int64_t before = tier.levels;
      while (tier.levels < 5 &&
             hardware::FatTreeCapacity(tier.radix, static_cast<int>(tier.levels), tier.oversubscription) < need)
        ++tier.levels;
      if (tier.levels != before)
        assume(std::to_string(tier.levels) + "-level " + tier.name + " fat tree (the preset's " +
               std::to_string(before) + " levels hold fewer than " + std::to_string(n) + " GPUs)");
    }

    // --- the plan ---------------------------------------------------------------------
    // Stated fields are held; unstated ones are filled the way a tuned
    // production run would fill them: the fastest plan `orrery search`
    // (core/search) finds among those consistent with every stated field,
    // within what the row's framework and date allow (RowLimits below).
    if (!global_batch) {
      skip("global batch missing (the step's work cannot be assumed)");
      continue;
    }
    s.workload.global_batch = *global_batch;
    const int year = YearOf(row.source);
    auto& p = s.training;
    FixedKnobs fixed;
    PlanSpaceOptions space;
    // Degrees: held when stated; dp follows from the GPU count when tp, pp and
    // cp are all held.
    if (tp) fixed.tp = *tp;
    if (pp) fixed.pp = *pp;
    if (cp) fixed.cp = *cp;
    if (ep) fixed.ep = *ep;
    else if (s.model.experts <= 1) fixed.ep = 1;  // a dense model has no expert parallelism
    // No column states the expert tensor parallelism: a row runs
    // Megatron-Core's default, etp = tp, unless its stated ep fits only
    // folded over the tp devices too (parallelism::ExpertTensorParallel),
    // or it comes from a Megatron-Bridge table (below);
    // then etp = 1, the value Megatron-Bridge's MoE recipes set
    // (scripts/performance/configs/qwen3 workload base configs:
    // expert_tensor_parallel_size=1 for Qwen3-30B-A3B and -235B-A22B).
    fixed.etp = 0;
    if (ep && tp && dp && *ep > 1 && (*dp * cp.value_or(1)) % *ep != 0 &&
        (*tp * *dp * cp.value_or(1)) % *ep == 0) {
      fixed.etp = 1;
      assume("etp 1 (ep " + std::to_string(*ep) + " fits only folded over tp x cp x dp)");
    } else if (ep && tp && dp && *ep > 1 && *tp > 1 && row.source.find("Megatron-Bridge") != std::string::npos &&
               (*tp * *dp * cp.value_or(1)) % *ep == 0) {
      // A Megatron-Bridge table's MoE row ran a Megatron-Bridge recipe, and
      // those set etp = 1 for every MoE model they benchmark (scripts/
      // performance/configs: BASE_DEEPSEEK_V3_CONFIG and the Qwen3 base
      // configs, expert_tensor_parallel_size=1), folded or not.
      fixed.etp = 1;
      assume("etp 1 (the Megatron-Bridge MoE recipes' expert_tensor_parallel_size)");
    }
    if (dp) fixed.dp = *dp;
    if (micro_batch) fixed.micro_batch = *micro_batch;
    if (interleave) fixed.interleave = *interleave;
    // A row that states an interleaved schedule without its virtual stages
    // (Llama 3's pre-training: Grattafiori et al. 2024 Sec. 3.3.2) ran at
    // least two chunks a device: interleave 1 would be plain 1F1B, which it
    // did not run.
    const bool interleaved_unstated = schedule == "interleaved" && !interleave;
    if (interleaved_unstated) fixed.interleave_min = 2;
    if (zero) fixed.zero = static_cast<int>(*zero);
    if (!recompute.empty())
      fixed.recompute = static_cast<int>(recompute == "full"        ? parallelism::Recompute::kFull
                                         : recompute == "selective" ? parallelism::Recompute::kSelective
                                         : recompute == "op"        ? parallelism::Recompute::kOp
                                                                    : parallelism::Recompute::kNone);
    if (!seq_parallel.empty()) fixed.sequence_parallel = seq_parallel == "yes" ? 1 : 0;
    if (!tp_overlap.empty()) fixed.tp_comm_overlap = tp_overlap == "yes" ? 1 : 0;
    if (!dp_overlap.empty()) fixed.dp_overlap = dp_overlap == "yes" ? 1 : 0;
    // No measured-run source offloads the optimizer, and no column states it.
    fixed.offload = 0;
    space.offload = false;
    // Frameworks lay the groups in their default order (tp innermost), or
    // in the order the row states.
    space.all_group_orders = false;
    if (!group_order.empty() && parallelism::IsGroupOrder(group_order)) {
      space.group_order = group_order;
      p.group_order = group_order;
      assume("groups laid out " + group_order + ", innermost first (stated)");
    }
    // A stated pipeline need not split the layers evenly (DeepSeek-V3's 61
    // layers over 8 stages): the estimator places the remainder.
    space.uneven_stages = pp.has_value();
    {
      std::string limits;
      RowLimits(framework, year, fixed, space, limits);
      if (!limits.empty()) assume(limits);
    }

    // Fields the search does not vary come from the row or its date.
    if (!schedule.empty()) {
      const auto* f = plan.Find("schedule");
      base::ParamValue v;
      std::string hint;
      if (base::ParseParam(f->info, schedule, v, hint).empty()) f->store(p, v);
    }
    // How context parallelism moves K/V, where the source states it
    // (training.cp_scheme, in the plan schema's words): ring passes
    // (Megatron-Core's p2p), one all-gather of K/V before attention (Llama 3,
    // Grattafiori et al. 2024 Sec. 3.3.2) or DeepSpeed-Ulysses head
    // scattering. Blank or auto: the cheapest for the plan, as a tuned run
    // would pick (ChooseCpScheme).
    if (!cp_scheme.empty()) {
      const auto* f = plan.Find("cp_scheme");
      base::ParamValue v;
      std::string hint;
      if (base::ParseParam(f->info, cp_scheme, v, hint).empty()) f->store(p, v);
      if (cp.value_or(1) > 1 && p.cp_scheme != parallelism::CpScheme::kAuto)
        assume("context parallelism by " + cp_scheme + " (stated)");
    }
    // FlashAttention (Dao et al., May 2022) reached Megatron-LM in 2023;
    // earlier runs used materialised softmax attention.
    // Which fused kernel "flash" is depends on the framework: llm-foundry's
    // attn_impl flash calls the flash-attn package (llmfoundry/models/layers/
    // attention.py, flash_attn_fn; FlashAttention-2 from flash-attn 2.0) and
    // torchtitan PyTorch's scaled_dot_product_attention, whose flash backend
    // is FlashAttention-2 (PyTorch 2.2 release notes); Megatron-Core and NeMo
    // run cuDNN fused attention through Transformer Engine, the profile's
    // flash_attention_* kernels.
    const bool flash2_framework = framework == "llm-foundry" || Torchtitan(framework);
    if (attention == "flash2" || (attention == "flash" && flash2_framework)) {
      p.attention = parallelism::Attention::kFlash2;
      if (attention == "flash") assume("FlashAttention-2 kernels (" + framework + " calls flash-attn / PyTorch SDPA)");
    } else if (attention == "triton") p.attention = parallelism::Attention::kTriton;
    else if (attention == "flash") p.attention = parallelism::Attention::kFlash;
    else if (attention == "materialized") p.attention = parallelism::Attention::kMaterialized;
    else if (year > 0 && year < 2023) {
      p.attention = parallelism::Attention::kMaterialized;
      assume("materialized attention (FlashAttention reached Megatron-LM in 2023)");
    } else if (flash2_framework) {
      p.attention = parallelism::Attention::kFlash2;
      assume("FlashAttention-2 kernels (" + framework + " calls flash-attn / PyTorch SDPA)");
    } else {
      p.attention = parallelism::Attention::kFlash;
      assume("FlashAttention");
    }
    // litgpt runs PyTorch eager code: its RMSNorm, rotary embedding and gated
    // MLP are separate tensor operations, each its own kernel
    // (parallelism::Elementwise::kEager; litgpt/model.py).
    // torchtitan's published A100 runs ran eager too: the train configs of
    // that period ("a preset for 64 A100 GPUs", train_configs/llama3_8b.toml,
    // llama2_13b.toml) set compile = false and norm_type = "rmsnorm", the
    // eager RMSNorm (torchtitan/models/norms.py: _norm(x.float()).type_as(x)
    // * weight) rather than the fused Triton kernel ("fused_rmsnorm"), and
    // torchtitan/models/llama/model.py applies the rotary embedding in fp32
    // complex arithmetic and SwiGLU as F.silu(w1(x)) * w3(x), each operator
    // its own kernel (docs/torchtitan-fsdp2.md).
    // A plain PyTorch training loop ("pytorch": this repository's own
    // validation/gpu_step/time_train_step.py, eager; "pytorch+compile": its
    // blocks through torch.compile, fused element-wise kernels) computes its
    // loss as torchtitan does, F.cross_entropy on fp32 logits, and, with
    // fp32 parameters under torch.autocast, casts every weight at its use
    // and adds each microbatch's weight gradient, cast back to fp32, into
    // the fp32 .grad in kernels of its own (training.autocast_fp32_weights).
    const bool plain_pytorch = framework == "pytorch" || framework == "pytorch+compile";
    if (plain_pytorch) {
      p.autocast_fp32_weights = true;
      assume("fp32 parameters under torch.autocast: weights cast and gradients cast and added into .grad every microbatch");
    }
    if (framework.rfind("litgpt", 0) == 0 || framework == "torchtitan" || framework == "pytorch") {
      p.elementwise = parallelism::Elementwise::kEager;
      assume("eager element-wise kernels (" + framework + " runs PyTorch eager code)");
    }
    // Full recompute stopping early (training.checkpoint_early_stop): PyTorch's
    // non-reentrant torch.utils.checkpoint has stopped its replay once every
    // saved tensor is back by default since PyTorch 2.1 (pytorch PRs 90105
    // and 96866). torchtitan wraps its blocks in checkpoint_wrapper, whose
    // default is NO_REENTRANT (torchtitan/parallelisms/parallelize_llama.py,
    // apply_ac), and its FSDP2 (fully_shard) came with PyTorch 2.4; this
    // repository's H200 steps ran PyTorch 2.11 with use_reentrant=False
    // (validation/gpu_step/time_train_step.py, the run files' "torch"), and
    // their kernel counts show it: 13 forward-layout GEMMs a recomputed layer
    // and microbatch, not 14 (validation/gpu_step/README.md). llm-foundry's
    // benchmark tables do not state their PyTorch (its PR 543's sweep.sh
    // names a 2.0.1 image and, commented out, a 2.1 nightly): the whole
    // forward runs again there, as for Megatron's CheckpointFunction.
    // torchtitan's tensor parallelism is PyTorch DTensor's: a block's input
    // is all-gathered once by PrepareModuleInput (Shard(1) -> Replicate())
    // and the replicated tensor is what autograd saves for the column-
    // parallel projections' weight gradients (torchtitan/parallelisms/
    // parallelize_llama.py, apply_tp): no second gather in the backward
    // (training.sp_input_regather false).
    if (Torchtitan(framework)) {
      p.sp_input_regather = false;
      if (tp.value_or(1) > 1)
        assume("sequence parallelism as PyTorch DTensor runs it: the gathered input kept, not gathered again (" +
               framework + ")");
    }
    if (Torchtitan(framework) || plain_pytorch) {
      p.checkpoint_early_stop = true;
      if (recompute == "full")
        assume("recompute stopping early (" + framework +
               ": PyTorch's non-reentrant checkpoint skips the MLP's down projection and the residual add)");
    }
    // The loss over the logits as each framework's code computes it
    // (parallelism::LossKernel; bytes per logit in core/estimate/step_kernels.h,
    // sources in docs/loss-path.md). llm-foundry's MPT defaults loss_fn to
    // fused_crossentropy, flash-attn's fused cross entropy on the bf16 logits
    // (llmfoundry/models/mpt/modeling_mpt.py, ComposerMPTCausalLM:
    // om_model_config.get('loss_fn', 'fused_crossentropy')); the benchmark's
    // submit_benchmarks.py does not set loss_fn. torchtitan's loss_fn is
    // F.cross_entropy(pred.flatten(0, 1).float(), ...) (train.py). litgpt's
    // chunked_cross_entropy calls F.cross_entropy on the logits
    // (litgpt/utils.py), which its default precision bf16-mixed runs under
    // autocast, whose fp32 list holds cross_entropy: the same fp32 kernels.
    // The Megatron frameworks keep Megatron-Core's unfused fp32 loss (the
    // default): --cross-entropy-loss-fusion is off unless asked for
    // (docs/loss-path.md, what is left).
    if (framework == "llm-foundry") {
      p.loss_kernel = parallelism::LossKernel::kFusedBf16;
      assume("fused bf16 cross entropy (llm-foundry loss_fn fused_crossentropy, flash-attn)");
    } else if (framework.rfind("litgpt", 0) == 0 || Torchtitan(framework) || plain_pytorch) {
      p.loss_kernel = parallelism::LossKernel::kTorchFp32;
      assume("PyTorch cross entropy on fp32 logits (" + framework + ": F.cross_entropy after an fp32 upcast)");
    }
    // PyTorch FSDP as these frameworks run it (Zero3GathersPerMicrobatch,
    // Zero3ReduceBytesPerParam, core/estimate/parallel_comm.h): activation
    // checkpointing inside each FSDP unit, so the recomputed forward reuses
    // the weights the unit's backward gathered, and, where the row's
    // reduce_dtype does not say otherwise, gradients reduce-scattered in fp32
    // (Composer's fsdp_config mixed_precision DEFAULT, which the H100 tables
    // and most A100 80GB rows of llm-foundry state; torchtitan's default
    // mixed_precision_reduce). The PURE rows (the A100 40GB table, the A100
    // 80GB mpt-70b rows) state bf16 (kReduceDtype above). What DEFAULT meant
    // changed between Composer releases: before mosaicml/composer PR 2628
    // (2023-10-10) it left reduce_dtype unset and FSDP1 then reduces in
    // param_dtype, bf16 (torch/distributed/fsdp/flat_param.py,
    // _init_param_reduce_dtypes: "infer gradient reduction mixed
    // precision"); the tables do not state their Composer release, so the
    // DEFAULT rows keep fp32, an assumption the row prints
    // (docs/hopper-dense.md section 8 measures the other reading).
    if (framework == "llm-foundry" || Torchtitan(framework)) {
      p.zero3_recompute_gather = false;
      p.zero3_fp32_reduce = reduce_dtype.empty() || reduce_dtype == "fp32";
      assume(reduce_dtype.empty() ? "FSDP: recompute on the backward's gathered weights, gradients reduced in fp32"
                                  : "FSDP: recompute on the backward's gathered weights");
    } else if (!reduce_dtype.empty()) {
      p.zero3_fp32_reduce = reduce_dtype == "fp32";
    }
    // ZeRO-0/1/2: the gradient buffer and its reduction in the stated
    // datatype (training.grad_reduce_fp32): the Megatron-Bridge performance
    // recipes' set_*_common_configs and NeMo 25.02's Llama 3 8B FP8 script
    // set grad_reduce_in_fp32 = False, which their rows state as bf16. Blank
    // keeps fp32, what Megatron-LM forces for bf16 and NeMo 2's and
    // Megatron-Bridge's mixed-precision configs default to.
    if (!reduce_dtype.empty()) {
      p.grad_reduce_fp32 = reduce_dtype == "fp32";
      if (!p.grad_reduce_fp32)
        assume("gradients kept and reduced over data parallelism in " + reduce_dtype +
               " (the recipe's grad_reduce_in_fp32 = False)");
    }
    // Composer, llm-foundry's trainer, wraps with PyTorch FSDP1 and defaults
    // fsdp_config backward_prefetch to BACKWARD_POST (composer/trainer/
    // dist_strategy.py, prepare_fsdp_module, 2023); the benchmark's
    // submit_benchmarks.py (mod_parameters) sets the fsdp_config's mixed
    // precision, activation checkpointing and limit_all_gathers, not the
    // prefetch. torchtitan's FSDP2 prefetches ahead of the backward.
    if (framework == "llm-foundry") {
      p.zero3_backward_prefetch = false;
      assume("FSDP1 BACKWARD_POST: each backward gather waits exposed (Composer's default)");
      // FSDP1's parameters are views of the unit's FlatParameter, so the
      // backward concatenates their gradients into the flat gradient
      // (training.zero3_flat_grad).
      p.zero3_flat_grad = true;
      assume("FSDP1 flat gradients: each unit's parameter gradients concatenated on the compute stream");
      // The mpt yamls train with Composer's DecoupledAdamW (optimizer name
      // decoupled_adamw, weight_decay 0.0), a per-parameter loop of single
      // element-wise passes, and clip by norm (algorithms: gradient_clipping,
      // clipping_type norm) through FSDP's clip_grad_norm_, which always
      // rescales (training.optimizer_step = pytorch).
      p.optimizer_step = parallelism::OptimizerStep::kPytorch;
      assume("PyTorch's optimizer step: Composer's DecoupledAdamW as separate element-wise passes, FSDP's "
             "clip_grad_norm_ always rescaling");
    }
    // torchtitan's data parallelism is FSDP2 (fully_shard; Liang et al. 2024,
    // arXiv 2410.06511, Sec. 2.1), which copies every gather out of its flat
    // buffer on the compute stream (Zero3CopyOutBytes, parallel_comm.h);
    // llm-foundry's FSDP1 gathers into its FlatParameter in place.
    if (Torchtitan(framework)) {
      p.zero3_copy_out = true;
      assume("FSDP2: each gather copied out of the all-gather buffer");
      // torchtitan's AdamW is torch.optim's foreach implementation unless
      // --optimizer.fused is given (build_optimizers: "fused": fused,
      // "foreach": not fused, weight_decay 0.1; --optimizer.fused default
      // False in torchtitan/config_manager.py of 2024, and the llama
      // train_configs tomls do not set it), and train.py clips with
      // torch.nn.utils.clip_grad_norm_(..., foreach=True), which always
      // rescales (training.optimizer_step = pytorch).
      p.optimizer_step = parallelism::OptimizerStep::kPytorch;
      assume("PyTorch's optimizer step: torch.optim's foreach AdamW as separate element-wise passes, "
             "clip_grad_norm_ always rescaling");
    }
    // Megatron-LM of 2021 added each weight gradient into the gradient
    // buffer outside its GEMM, every microbatch (GradAccumulationBytesPerParam,
    // core/estimate/training_estimator.cpp): the fused accumulation
    // (--gradient-accumulation-fusion) calls apex's fused_weight_gradient_mlp_cuda,
    // which apex first shipped in early 2022 (NVIDIA/apex issue 1314 and PR
    // 1317, 2022-03-02), after the April 2021 runs of Narayanan et al.
    // Korthikanti et al. 2022 do not name their build: their development code
    // (megatron/mpu/layers.py at 02bb1f5c, model_parallel_memory_opt) still
    // adds each gradient in a hook, but the release of their features under
    // the published names (megatron/arguments.py at 00129014: --sequence-
    // parallel and --checkpoint-granularity selective) added
    // --no-gradient-accumulation-fusion beside them, the fusion on by
    // default; a 2022 row is taken as fused (docs/korthikanti-layer.md).
    // Megatron-LM's DistributedDataParallel divided the gradient buffer by
    // the data-parallel size every step, even at dp 1 (allreduce_gradients,
    // megatron/model/distributed.py, from 2021 to 01d65bde of 2023);
    // Megatron-Core's buffer skips it at dp 1.
    if (framework == "megatron-lm" && year > 0 && year < 2022) {
      p.grad_accumulation_fusion = false;
      assume("unfused weight-gradient accumulation (Megatron-LM before --gradient-accumulation-fusion, 2022)");
    }
    if (framework == "megatron-lm" && year > 0 && year < 2024) {
      p.grad_scale_at_dp1 = true;
      assume("gradient buffer divided by dp even at dp 1 (Megatron-LM DistributedDataParallel before Megatron-Core)");
    }
    // A linear layer's bias gradient: PyTorch autograd sums F.linear's
    // output gradient to the bias's shape in a reduction of its own (addmm's
    // gradient for self, tools/autograd/derivatives.yaml), and Megatron-LM's
    // own layers do the same (megatron/core/tensor_parallel/layers.py,
    // LinearWithGradAccumulationAndAsyncCommunication.backward: grad_bias =
    // grad_output.sum(dim=0); its fused bias-GeLU and bias-dropout-add leave
    // the bias's share to autograd's reduction too); Transformer Engine
    // computes it in the weight-gradient GEMM's epilogue (its Linear
    // backward's gemm(..., grad=True, use_bias=True), cuBLASLt's bias-gradient
    // epilogue), which Megatron-LM runs from 2024 and Megatron-Core's
    // recipes (NeMo, Megatron-Bridge) always. Only a model with biases has
    // any (training.separate_bias_grad).
    const bool own_bias_grad = framework == "llm-foundry" || framework == "deepspeed" ||
                               (framework == "megatron-lm" && year > 0 && year < 2024) ||
                               plain_pytorch || Torchtitan(framework) || framework.rfind("litgpt", 0) == 0;
    if (own_bias_grad && s.model.bias) {
      p.separate_bias_grad = true;
      assume("bias gradients reduced in kernels of their own (" + framework + ": not in a GEMM epilogue)");
    }
    // One fused QKV projection whose output is split into queries, keys and
    // values by autograd views, the split's backward a cat of the three
    // gradients (split_backward, tools/autograd/derivatives.yaml):
    // llm-foundry's MPT (llmfoundry/models/layers/attention.py,
    // GroupedQueryAttention.forward: qkv = self.Wqkv(x), then qkv.chunk(3,
    // dim=2) or qkv.split([...], dim=2)), Megatron-LM's own attention and
    // Megatron-DeepSpeed's (ParallelAttention.forward:
    // split_tensor_along_last_dim(mixed_x_layer, 3), a torch.split) and
    // litgpt's (CausalSelfAttention.forward: qkv = self.attn(x), then
    // qkv.split(...)). torchtitan's and the plain PyTorch rows' Llama project
    // Q, K and V separately. Megatron-Core with Transformer Engine is left
    // out: its split (TE's SplitAlongDim) returns the packed gradient without
    // a copy when the attention kernel writes the three gradients into one
    // buffer, which depends on the QKV layout it chose (docs/hopper-dense.md,
    // section 15).
    const bool fused_qkv_split = framework == "llm-foundry" || framework == "deepspeed" ||
                                 (framework == "megatron-lm" && year > 0 && year < 2024) ||
                                 framework.rfind("litgpt", 0) == 0;
    if (fused_qkv_split && !models::UsesMla(s.model)) {
      p.qkv_split_cat = true;
      assume("Q, K and V split off one fused projection, their gradients concatenated in the backward (" +
             framework + ")");
    }
    // Megatron-Core's attention with Transformer Engine (training.rope_kernel
    // and packed_qkv_copies, on by default; docs/hopper-dense.md section 16),
    // for the Megatron frameworks from 2024 and a row naming no framework
    // (taken as Transformer Engine's, as above): RoPE runs in TE's own
    // kernels (apply_rope_fusion, the default of Megatron-LM's arguments and
    // of the NeMo and Megatron-Bridge recipes), which write new queries and
    // keys; with grouped-query attention the queries' reshape out of the
    // packed layout copies them; TE's layout check then copies the values;
    // and TE's SplitAlongDim, whose backward returns the packed gradient
    // without a copy only when the three gradients are adjacent views of one
    // buffer (noop_ok), runs torch.cat. Without RoPE and with as many KV
    // heads as query heads (GPT-3) none of these run. The other frameworks
    // project Q, K and V apart (torchtitan, the plain PyTorch loops) or split
    // them by torch.split (training.qkv_split_cat, above) and apply RoPE in
    // their own eager kernels (training.elementwise: eager) or not at all
    // (MPT's ALiBi, GPT's learned positions).
    const bool te_attention = TeAttention(framework, year);
    p.rope_kernel = p.packed_qkv_copies = te_attention;
    const bool rope = s.model.position == models::Position::kRope;
    if (te_attention && !models::UsesMla(s.model) && (rope || models::KvHeads(s.model) < s.model.heads) &&
        p.elementwise == parallelism::Elementwise::kFused)
      assume(std::string(rope ? "RoPE in Transformer Engine's kernels, " : "") +
             "queries and values copied out of the packed QKV layout, their gradients concatenated in the "
             "backward (Megatron-Core with Transformer Engine)");
    // PyTorch's own LayerNorm (llm-foundry's LPLayerNorm, F.layer_norm with
    // autocast off; torch.nn.LayerNorm in torchtitan, litgpt and plain
    // PyTorch loops) computes its weight's and bias's gradients in a kernel
    // of its own after the input gradient's (aten/src/ATen/native/cuda/
    // layer_norm_kernel.cu: layer_norm_grad_input_kernel, then
    // GammaBetaBackwardCUDAKernel), each reading the output gradient and the
    // input (training.norm_weight_grad_kernel; an eager RMSNorm's passes are
    // priced as they run and do not read it). So do the two kernels
    // torch.compile generates for a norm's backward (pytorch+compile), one
    // reducing each row for the input gradient, the other each column for
    // the weight's (pytorch/helion issue 2013: Inductor "reduces over the M
    // dimension and writes N outputs directly for DW/Db and computes the
    // input gradients dx kernel"). Megatron-LM's MixedFusedLayerNorm
    // (megatron/model/fused_layer_norm.py) runs apex's persistent
    // FastLayerNorm, one pass, where the hidden size is in its
    // persist_ln_hidden_sizes, and otherwise Megatron's own kernel, whose
    // backward is two (megatron/fused_kernels/layer_norm_cuda_kernel.cu:
    // cuComputePartGradGammaBeta reads dY and X for the weight's partials,
    // cuComputeGradInput reads them again). The rows of 2021 (Narayanan et
    // al.'s, and DeepSpeed's, which ran Megatron's model code) are taken to
    // run the non-persistent kernel: the import of FastLayerNorm is in
    // Megatron-LM's 2022 code, not found in what the 2021 runs name (an
    // assumption the row prints). Transformer Engine's norms (Megatron-Core,
    // NeMo, Megatron-Bridge, Megatron-LM from 2024) are one pass.
    static constexpr int64_t kPersistLnHidden[] = {1024,  1536,  2048,  2304,  3072,  3840,  4096,  5120,
                                                   6144,  8192,  10240, 12288, 12800, 15360, 16384, 18432,
                                                   20480, 24576, 25600, 30720, 32768, 40960, 49152, 65536};
    const bool megatron_ln = framework == "deepspeed" || (framework == "megatron-lm" && year > 0 && year < 2024);
    const bool persistent_ln =
        megatron_ln && year >= 2022 &&
        std::find(std::begin(kPersistLnHidden), std::end(kPersistLnHidden), s.model.hidden) !=
            std::end(kPersistLnHidden);
    const bool torch_norm = framework == "llm-foundry" || framework == "torchtitan" || framework == "pytorch" ||
                            framework.rfind("litgpt", 0) == 0;
    const bool eager_rms = p.elementwise == parallelism::Elementwise::kEager &&
                           s.model.norm == models::Norm::kRmsNorm;
    if (torch_norm && !eager_rms) {
      p.norm_weight_grad_kernel = true;
      assume("PyTorch's LayerNorm backward: the weight's gradient in a kernel of its own, reading the output "
             "gradient and the input again");
    }
    if ((framework == "pytorch+compile" || framework == "torchtitan+compile") && !eager_rms) {
      p.norm_weight_grad_kernel = true;
      assume("torch.compile's norm backward: the weight's gradient in a kernel of its own, reading the output "
             "gradient and the input again");
    }
    if (megatron_ln && !persistent_ln && s.model.norm == models::Norm::kLayerNorm) {
      p.norm_weight_grad_kernel = true;
      assume("Megatron's non-persistent fused LayerNorm: the weight's gradient in a kernel of its own, reading "
             "the output gradient and the input again");
    }
    // Megatron-LM of 2024 on checks each gradient bucket for a NaN before
    // reducing it (--check-for-nan-in-loss-and-grad, on unless
    // --no-check-for-nan-in-loss-and-grad; DistributedDataParallelConfig
    // check_for_nan_in_grad, megatron/training/training.py get_model): an L2
    // norm over the whole gradient buffer every step (GradBufferBytesPerParam,
    // core/estimate/training_estimator.cpp). Rows of other frameworks keep it
    // off: NeMo and Megatron-Bridge build their own DDP config.
    if (framework == "megatron-lm" && year >= 2024) {
      p.grad_nan_check = true;
      assume("a NaN check of the gradient buffer before its reduction (Megatron-LM --check-for-nan-in-loss-and-grad, default on)");
    }
    if (zero && *zero == 3 && framework == "deepspeed" && year > 0 && year < 2023) {
      // DeepSpeed ZeRO-3 as Narayanan et al. 2021 ran it: their Table 2 shows
      // the iteration time flat as GPUs double at fixed batch (74 days at 768
      // and at 1536 GPUs), the signature of a per-device volume crossing each
      // device's own NIC: a flat ring.
      p.dp_collective = parallelism::DpCollective::kFlat;
      assume("flat-ring ZeRO-3 collectives (DeepSpeed before 2023)");
      // Its ZeRO-3 of 2021 (deepspeed/runtime/zero/stage3.py, v0.3.x) fetches
      // weights a matrix at a time, blocking, and prefetches only the next
      // matrix (PrefetchOneAheadExposed, core/estimate/parallel_comm.h).
      p.zero3_matrix_prefetch = true;
      assume("ZeRO-3 gathers one weight matrix ahead (DeepSpeed 2021 prefetch)");
    }
    p.ep_comm_overlap = ep_overlap == "yes";
    if (precision.rfind("fp8", 0) == 0 || precision == "nvfp4") {
      // NVFP4 is a recipe of Transformer Engine's quantized linear layers
      // (NVFP4BlockScaling under the same autocast as the FP8 recipes).
      p.precision = hardware::DataType::kFp8;
      p.fp8_recipe = precision == "fp8-cs"      ? parallelism::Fp8Recipe::kCurrent
                     : precision == "fp8-block" ? parallelism::Fp8Recipe::kBlockwise
                     : precision == "fp8-mx"    ? parallelism::Fp8Recipe::kMxfp8
                     : precision == "nvfp4"     ? parallelism::Fp8Recipe::kNvfp4
                                                : parallelism::Fp8Recipe::kDelayed;
      if (precision == "fp8") assume("fp8 delayed scaling (recipe not stated)");
      // The row's recipe keeps the weights in FP8 and gathers them so
      // (training.fp8_param_gather; NeMo 2's bf16_with_fp8_mixed): stated
      // only, never searched; blank keeps the BF16 gather.
      p.fp8_param_gather = fp8_param_gather == "yes";
      if (p.fp8_param_gather) assume("weights kept in FP8 and all-gathered in FP8 (the recipe's fp8_param_gather)");
    } else if (precision == "fp16") p.precision = hardware::DataType::kFp16;
    else {
      p.precision = hardware::DataType::kBf16;
      assume("bf16");
    }
    // torchtitan's float8 tensor parallelism (torchao's Float8ColwiseParallel,
    // Float8RowwiseParallel and PrepareFloat8ModuleInput, chosen by
    // torchtitan's parallelize_llama when float8 tensorwise training runs
    // with TP) casts each column-parallel module's input to float8 before
    // its all-gather; the gradients go through the DTensor redistributions
    // in bf16 and are cast inside the float8 matmul after them
    // (training.fp8_tp_gather input). The Megatron frameworks' Transformer
    // Engine quantizes the output gradients and the re-gathered inputs too
    // (the key's default, all).
    if (Torchtitan(framework) && p.precision == hardware::DataType::kFp8) {
      p.fp8_tp_gather = parallelism::Fp8TpGather::kInput;
      if (tp.value_or(1) > 1)
        assume("float8 all-gathers of the tensor-parallel inputs only (" + framework +
               ": torchao's float8 tensor parallelism; gradients gathered in bf16)");
    }
    // Benchmarks that force-balance the routing (Megatron-Core
    // --moe-router-force-load-balancing) have no busiest expert.
    if (moe_routing == "force-balanced") p.expert_imbalance = 0;
    // Token-dropping rows whose tables do not state the capacity factor run
    // at C = 1.0, Switch Transformer's (Fedus et al. 2022, Sec. 2.2 and
    // Table 1) and the value Megatron-Core's MoE README shows for
    // --moe-expert-capacity-factor: the busiest expert takes its balanced
    // share and drops the rest. The Megatron-Bridge token-dropping rows
    // (25.09 Qwen3 and DeepSeek-V3) ran so, padded: their performance
    // recipes call apply_moe_token_drop (src/megatron/bridge/training/utils/
    // moe_token_drop.py) with its defaults, moe_expert_capacity_factor 1.0
    // and moe_pad_expert_input_to_capacity True (the Qwen3 recipe's
    // set_qwen3_common_configs in scripts/performance/configs/qwen3/
    // qwen3_llm_pretrain.py, the version with the *_8GPUS / *_64GPUS
    // presets), so the dispatcher's counts are the capacity and no
    // device-to-host copy is made (drop_and_pad; AddMoeHostBound).
    if (moe_routing == "token-dropping") {
      p.expert_capacity_factor = 1.0;
      assume("expert capacity factor 1.0 (token-dropping, not stated)");
    }
    // Dropless MoE layers wait on the host each layer (MoeLayerKernels,
    // core/estimate/parallel_comm.h). The rows run PyTorch eager, each
    // kernel launched through PyTorch's operator path (Python binding,
    // autograd, ATen dispatcher, cudaLaunchKernel): the host CPU's time per
    // operator is a fact of the row's system, its preset's
    // host.op_launch_time (hardware/system_spec.h). The presets carry
    // TransformerEngine issue 2053's torch.nn.Linear forward (Aug 2025):
    // 13.48 us on the DGX H100's Xeon Platinum 8480C (dgx-h100-*, eos),
    // 37.08 us on GB200's Grace (gb200-nvl72), 33.17 us on GH200's
    // (gh200-nvl256*). A host the presets state no measurement for (DGX
    // B200's Xeon Platinum 8570) takes kUnmeasuredHostOpLaunch, and the
    // assumption says so.
    if (s.model.experts > 1 && p.expert_capacity_factor <= 0) {
      const hardware::HostSpec& host = s.system.host;
      const std::string cpu = host.cpu.empty() ? "host CPU not stated" : host.cpu;
      if (host.op_launch_time > 0) {
        p.host_kernel_launch = host.op_launch_time;
        assume("dropless MoE: " + base::FormatQuantity(host.op_launch_time, base::Dimension::kTime) +
               " host time per kernel launch (" + cpu +
               (host.op_launch_source.empty() ? "" : ": " + host.op_launch_source) + ")");
      } else {
        p.host_kernel_launch = kUnmeasuredHostOpLaunch;
        assume("dropless MoE: " + base::FormatQuantity(kUnmeasuredHostOpLaunch, base::Dimension::kTime) +
               " host time per kernel launch (" + cpu +
               " not measured: the Xeon Platinum 8480C's from TransformerEngine issue 2053)");
      }
      // The Megatron frameworks build a MoE layer's linear GEMMs from
      // Transformer Engine modules (MoeLayerKernels, parallel_comm.h), whose
      // forward call costs the host more than its kernels' launches. Cited
      // per-call figures, forward only:
      //   BF16: 115 us per TEColumnParallelLinear forward (Megatron-Core, TP
      //     1; TransformerEngine PR 1191, after its optimizations: 140 us
      //     before); issue 2053 measures te.Linear's BF16 forward (hidden
      //     2048, 8,192 tokens) at 90.5 and 99.7 us of CPU time on GH200 and
      //     GB200. Per
      //     GroupedLinear split one tensor view (torch.split; issue 1499 names
      //     it as the module's host cost), about 5 us per PyTorch tensor
      //     created (PR 865): 5 us.
      //   FP8 delayed scaling: scheduling a te.Linear "takes more than 2x"
      //     BF16's (issue 761), so 2 x 115 = 230 us, a lower bound. Per split
      //     the view and the two torch.empty buffers fused_multi_cast_transpose
      //     allocates for it (issue 1499; PR 1793's bulk allocation covers
      //     the blockwise recipe, PR 1934 MXFP8, not per-tensor scaling):
      //     3 x 5 = 15 us.
      // Current scaling, MXFP8 and blockwise FP8: no published per-call
      // figure (searched again, with what each source gives and the residual
      // a figure would have to cover: docs/moe-long-context.md, "Current
      // scaling and MXFP8 on the host: searched, not priced"); their module
      // kernels stay at the launch cost each.
      const bool te_framework = MegatronFamily(framework);
      if (te_framework && p.precision == hardware::DataType::kBf16) {
        p.host_te_module = 115e-6;
        p.host_te_split = 5e-6;
        assume("dropless MoE: Transformer Engine linear forward 115 us, 5 us per grouped split (bf16)");
      } else if (te_framework && p.precision == hardware::DataType::kFp8 &&
                 p.fp8_recipe == parallelism::Fp8Recipe::kDelayed) {
        p.host_te_module = 230e-6;
        p.host_te_split = 15e-6;
        assume("dropless MoE: Transformer Engine linear forward 230 us, 15 us per grouped split (fp8 delayed)");
      }
    }

    // The knobs before the search: the stated ones, and for the rest the
    // first value of each free axis (used only when no plan fits, below).
    p.tp = tp.value_or(1);
    p.pp = pp.value_or(1);
    p.cp = cp.value_or(1);
    p.ep = ep.value_or(1);
    p.dp = dp.value_or(n / std::max<int64_t>(1, p.tp * p.pp * p.cp));
    p.etp = fixed.etp;
    p.micro_batch = micro_batch.value_or(1);
    p.interleave = interleave.value_or(interleaved_unstated ? 2 : 1);
    if (p.interleave > 1 && schedule.empty()) p.schedule = parallelism::Schedule::kInterleaved;
    // More virtual stages than layers run only with the embedding and the
    // loss as stages of their own: Megatron-Core counts them as a layer each
    // (--account-for-embedding-in-pipeline-split,
    // --account-for-loss-in-pipeline-split), and Llama 3's own schedule
    // does the same, its first model chunk holding only the embedding and
    // its last only the output projection and the loss (Grattafiori et al.
    // 2024, Sec. 3.3.2). A row stating such a split (Llama 3.1 405B's 126
    // layers as pp 16 x interleave 8) ran so, whatever its framework.
    const bool megatron_family = MegatronFamily(framework);
    if (p.pp > 1 && p.pp * p.interleave > s.model.layers &&
        p.pp * p.interleave <= s.model.layers + 2) {
      p.pipeline_split_embedding_loss = true;
      assume("embedding and loss counted as a pipeline layer each (pp x interleave " +
             std::to_string(p.pp * p.interleave) + " > " + std::to_string(s.model.layers) + " layers)");
    }
    // The decoder layers on the first and on the last pipeline device, where
    // the row's recipe lays the stages out itself (Megatron-Core's
    // pipeline_model_parallel_layout; training.first_stage_layers and
    // last_stage_layers). The Megatron-Bridge DeepSeek-V3 recipe's layout_map
    // (src/megatron/bridge/recipes/deepseek/deepseek_v3.py) gives pp 4 x vp 4
    // the virtual stages [embedding + 4], 14 x [4], [1 + MTP + loss]: 16
    // layers on device 0 and 4 + 4 + 4 + 1 = 13 on device 3; pp 16 the
    // stages [embedding + 4], 14 x [4], [1 + MTP + loss]: 4 and 1.
    if (first_stage_layers || last_stage_layers) {
      p.first_stage_layers = first_stage_layers.value_or(0);
      p.last_stage_layers = last_stage_layers.value_or(0);
      assume("pipeline layout as the row states it: " + std::to_string(p.first_stage_layers) +
             " layers on the first device, " + std::to_string(p.last_stage_layers) + " on the last");
    }
    p.zero = fixed.zero >= 0 ? fixed.zero : 0;
    p.recompute = static_cast<parallelism::Recompute>(std::max(0, fixed.recompute));
    p.recompute_mla_up_proj = recompute == "mla_up_proj" || recompute == "mla_up_proj+mlp";
    p.recompute_mlp = recompute == "mla_up_proj+mlp";
    p.recompute_layernorm = p.recompute_moe_act = recompute == "layernorm+moe_act";
    p.recompute_interval = recompute_interval;
    p.offload_activation_layers = offload_layers;
    p.sequence_parallel = fixed.sequence_parallel == 1 && p.tp > 1;
    p.tp_comm_overlap = fixed.tp_comm_overlap == 1;
    p.dp_overlap = fixed.dp_overlap != 0;
    p.offload_optimizer = false;

    const bool any_free = fixed.tp == 0 || fixed.pp == 0 || fixed.cp == 0 || fixed.ep == 0 ||
                      fixed.dp == 0 || fixed.micro_batch == 0 || fixed.interleave == 0 ||
                      fixed.zero < 0 || fixed.recompute < 0 || fixed.sequence_parallel < 0 ||
                      fixed.tp_comm_overlap < 0 || fixed.dp_overlap < 0;
    // The search over the unstated fields, into `sc`; returns what it chose.
    auto search_free = [&](Scenario& sc) {
      SearchOptions so;
      so.top = 1;
      so.threads = 1;
      so.space = space;
      so.space.fixed = fixed;
      const SearchResult found = Search(sc, so);
      if (!found.top.empty()) {
        const PlanKnobs& k = found.top.front().knobs;
        ApplyKnobs(k, sc.training);
        return (found.stats.candidates == 1
                    ? std::string("searched (the one plan consistent with the stated fields): ")
                    : "searched (the fastest of the " + std::to_string(found.stats.candidates) +
                          " plans consistent with the stated fields): ") +
               DescribeFree(k, fixed);
      }
      // None fits the device's memory as the memory model counts it: the
      // run did fit, so the model is short of what it ran (its schedule's
      // memory, a buffer freed early). Predict the fastest consistent plan
      // regardless of memory, as the row's time, and say so; the estimate
      // then flags it out of memory (ValidationRow::predicted_oom).
      Scenario roomy = sc;
      roomy.system.device.memory_capacity = 1e15;  // the schema's largest
      const SearchResult any = Search(roomy, so);
      if (!any.top.empty()) {
        const PlanKnobs& k = any.top.front().knobs;
        ApplyKnobs(k, sc.training);
        return "no plan consistent with the stated fields fits in the memory model (" + found.why_none +
               "); predicted with the fastest of them regardless of memory (" +
               std::to_string(any.stats.candidates) + " plans): " + DescribeFree(k, fixed);
      }
      return "no plan consistent with the stated fields fits (" + found.why_none +
             "); predicted with the unstated fields at their first values";
    };
    // Counting the embedding and the loss as a pipeline layer each
    // (Megatron-Core --account-for-embedding-in-pipeline-split and
    // --account-for-loss-in-pipeline-split) is a plan field no table
    // states, and Megatron-Bridge's Llama 3.1 405B recipe sets both
    // (src/megatron/bridge/recipes/llama/llama3.py,
    // llama31_405b_pretrain_config, which scripts/performance/configs/
    // llama/llama31_llm_pretrain.py builds every performance run on). Where
    // the L + 2 units divide evenly over the stated pp x interleave virtual
    // stages, a Megatron row is predicted both ways and the faster kept, as
    // for any unstated field (pp x interleave above L forces it, above).
    const int64_t units = s.model.layers + 2;
    const int64_t virtual_stages = p.pp * parallelism::ScheduleChunks(p);
    const bool try_split = megatron_family && fixed.pp != 0 && fixed.interleave != 0 && p.pp > 1 &&
                           !p.pipeline_split_embedding_loss && p.first_stage_layers == 0 &&
                           p.last_stage_layers == 0 && virtual_stages > 0 && units % virtual_stages == 0;
    std::optional<Scenario> split;
    std::string split_note;
    if (try_split) {
      split.emplace(s);
      split->training.pipeline_split_embedding_loss = true;
      if (any_free) split_note = search_free(*split);
    }
    const std::string even_note = any_free ? search_free(s) : std::string();
    bool use_split = false;
    if (split) {
      const TrainingEstimate even = TrainingEstimator(s.model, s.system).Run(p, s.workload);
      const TrainingEstimate uneven = TrainingEstimator(split->model, split->system).Run(split->training, s.workload);
      use_split = uneven.iteration_s > 0 && (even.iteration_s <= 0 || uneven.iteration_s < even.iteration_s);
    }
    if (use_split) {
      s = *split;
      assume("embedding and loss counted as a pipeline layer each (faster than the even split: " +
             std::to_string(units) + " units over " + std::to_string(virtual_stages) + " virtual stages)");
      if (any_free) assume(split_note);
    } else if (any_free) {
      assume(even_note);
    }
    row.assumptions = assumed;

    base::Diagnostics d;
    CrossCheck(s, d);
    if (!d.ok()) {
      skip("plan does not fit the row's GPUs: " + d.items()[0].message);
      continue;
    }
    const TrainingEstimator est(s.model, s.system);
    const TrainingEstimate e = est.Run(p, s.workload);
    if (e.iteration_s <= 0) {
      skip("infeasible: " + ExplainInfeasible(e, s));
      continue;
    }
    row.predicted_oom = e.infeasible == Infeasible::kOutOfMemory;
    row.predicted = PredictedMetric(e, row.metric, static_cast<double>(n));
    const double error_pct = (row.predicted - row.measured) / row.measured * 100;
    if (!std::isfinite(row.predicted) || row.predicted <= 0 || !std::isfinite(error_pct)) {
      // The estimate's invariants hold (result_invariants.h), so this is a
      // derived figure out of range: say so rather than print it.
      skip("internal error: the predicted " + row.metric + " is not a positive number");
      continue;
    }
    row.error_pct = error_pct;
    row.framework = framework;
    row.recompute = parallelism::RecomputeName(p.recompute);
    row.precision = PrecisionWord(p);
    if (only_line > 0 || keep_scenarios) row.scenario = std::make_shared<const Scenario>(s);
    report.rows.push_back(row);
  }
  Summarise(report);
  return report;
}

}  // namespace orrery::engine
