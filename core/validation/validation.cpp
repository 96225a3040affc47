#include "core/validation/validation.h"

#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <regex>

#include "core/estimate/training_estimator.h"
#include "hardware/topology.h"
#include "core/base/csv.h"
#include "models/model_spec.h"
#include "parallelism/plan_spec.h"

namespace orrery::engine {
namespace {

// First year 20xx mentioned in a text, or 0.
int YearOf(const std::string& text) {
  static const std::regex year("20[0-9][0-9]");
  std::smatch m;
  return std::regex_search(text, m, year) ? std::stoi(m.str()) : 0;
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

void Summarise(ValidationReport& r) {
  r.evaluated = 0;
  r.skipped = 0;
  double sum = 0, mx = 0;
  for (const auto& row : r.rows) {
    if (!row.error_pct) {
      ++r.skipped;
      continue;
    }
    ++r.evaluated;
    sum += std::fabs(*row.error_pct);
    mx = std::max(mx, std::fabs(*row.error_pct));
  }
  r.mape_pct = r.evaluated > 0 ? sum / r.evaluated : 0;
  r.max_abs_error_pct = mx;
}

namespace {

// The closed vocabularies of validation/training_runs.csv (validation/README.md
// documents each column). A blank cell means the source did not state it.
const std::vector<std::string> kRecompute = {"none", "selective", "full"};
const std::vector<std::string> kYesNo = {"yes", "no"};
const std::vector<std::string> kPrecision = {"bf16", "fp16", "fp8"};
const std::vector<std::string> kAttention = {"flash", "materialized"};
const std::vector<std::string> kFlopsMetric = {"model", "hardware"};
const std::vector<std::string> kMoeRouting = {"learned", "force-balanced"};

std::string JoinWords(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

ValidationReport ValidateTrainingCsv(const std::string& csv_file, const PresetStore& store,
                                     base::Diagnostics& diags) {
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
      const std::string v = cell(name);
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
               zero = ranged("zero", plan, "zero"), gpus = integer("gpus", 1, 1'000'000'000);
    // The schedule names are the plan parser's (parallelism/plan_spec.cpp).
    const std::string recompute = word("recompute", kRecompute),
                      seq_parallel = word("seq_parallel", kYesNo),
                      schedule = word("schedule", plan.Find("schedule")->info.choices),
                      precision = word("precision", kPrecision),
                      dp_overlap = word("dp_overlap", kYesNo), tp_overlap = word("tp_overlap", kYesNo),
                      ep_overlap = word("ep_overlap", kYesNo), attention = word("attention", kAttention),
                      flops_metric = word("flops_metric", kFlopsMetric),
                      moe_routing = word("moe_routing", kMoeRouting);
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
    }
    if (!seq) {
      skip("sequence length missing (the step's work cannot be assumed)");
      continue;
    }
    s.workload.seq_len = *seq;
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
      s.system.devices_per_node = n;
      s.system.nodes = 1;
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

    // --- the plan -------------------------------------------------------------------
    if (!global_batch) {
      skip("global batch missing (the step's work cannot be assumed)");
      continue;
    }
    s.workload.global_batch = *global_batch;
    auto& p = s.training;
    p.tp = tp.value_or(1);
    p.pp = pp.value_or(1);
    p.dp = dp.value_or(0);  // 0: derived from the GPU count below
    p.cp = cp.value_or(1);
    p.ep = ep.value_or(1);
    if (micro_batch) p.micro_batch = *micro_batch;
    else { p.micro_batch = 1; assume("micro batch 1"); }
    if (recompute == "full") p.recompute = parallelism::Recompute::kFull;
    else if (recompute == "selective") p.recompute = parallelism::Recompute::kSelective;
    else if (recompute == "none") p.recompute = parallelism::Recompute::kNone;
    else { p.recompute = parallelism::Recompute::kNone; assume("no recompute"); }
    const int year = YearOf(row.source);
    const bool mcore = year >= 2023;  // Megatron-Core era defaults
    if (seq_parallel == "yes") p.sequence_parallel = p.tp > 1;
    else if (seq_parallel == "no") p.sequence_parallel = false;
    else { p.sequence_parallel = p.tp > 1 && mcore; if (p.tp > 1) assume(mcore ? "sequence parallel" : "no sequence parallel"); }
    p.interleave = interleave.value_or(1);
    if (!schedule.empty()) {
      const auto* f = plan.Find("schedule");
      base::ParamValue v;
      std::string hint;
      if (base::ParseParam(f->info, schedule, v, hint).empty()) f->store(p, v);
    } else if (p.interleave > 1) {
      p.schedule = parallelism::Schedule::kInterleaved;
    }
    // FlashAttention (Dao et al., May 2022) reached Megatron-LM in 2023;
    // earlier runs used materialised softmax attention.
    if (attention == "flash") p.attention = parallelism::Attention::kFlash;
    else if (attention == "materialized") p.attention = parallelism::Attention::kMaterialized;
    else p.attention = year >= 2023 ? parallelism::Attention::kFlash : parallelism::Attention::kMaterialized;
    bool zero3_prefetch = false;
    if (zero) {
      p.zero = static_cast<int>(*zero);
      if (p.zero == 3 && framework == "deepspeed" && year > 0 && year < 2023) {
        // DeepSpeed ZeRO-3 as Narayanan et al. 2021 ran it: their Table 2 shows
        // the iteration time flat as GPUs double at fixed batch (74 days at 768
        // and at 1536 GPUs), the signature of a per-device volume crossing each
        // device's own NIC: a flat ring.
        p.dp_collective = parallelism::DpCollective::kFlat;
        assume("flat-ring ZeRO-3 collectives (DeepSpeed before 2023)");
        // DeepSpeed ZeRO-3 prefetches the next parameters while the current
        // layer computes by default (stage3_prefetch_bucket_size, DeepSpeed
        // configuration reference): its gathers overlap the passes.
        zero3_prefetch = true;
      }
    } else if (mcore) { p.zero = 1; assume("distributed optimizer (ZeRO-1)"); }
    p.dp_overlap = dp_overlap == "yes" || (dp_overlap.empty() && zero3_prefetch);
    p.tp_comm_overlap = tp_overlap == "yes";
    p.ep_comm_overlap = ep_overlap == "yes";
    if (precision == "fp8") p.precision = hardware::DataType::kFp8;
    else if (precision == "fp16") p.precision = hardware::DataType::kFp16;
    else p.precision = hardware::DataType::kBf16;
    if (precision.empty() && s.model.experts > 1) assume("bf16");
    // Benchmarks that force-balance the routing (Megatron-Core
    // --moe-router-force-load-balancing) have no busiest expert.
    if (moe_routing == "force-balanced") p.expert_imbalance = 0;
    if (p.dp == 0) p.dp = n / (p.tp * p.pp * p.cp);
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
    const double devices = static_cast<double>(n);
    if (row.metric == "iteration_s") row.predicted = e.iteration_s;
    else if (row.metric == "hardware_tflops_per_gpu") row.predicted = e.hardware_flops / e.iteration_s / devices / 1e12;
    else if (row.metric == "model_tflops_per_gpu") row.predicted = e.tflops_per_device / 1e12;
    else row.predicted = e.mfu;
    const double error_pct = (row.predicted - row.measured) / row.measured * 100;
    if (!std::isfinite(row.predicted) || row.predicted <= 0 || !std::isfinite(error_pct)) {
      // The estimate's invariants hold (result_invariants.h), so this is a
      // derived figure out of range: say so rather than print it.
      skip("internal error: the predicted " + row.metric + " is not a positive number");
      continue;
    }
    row.error_pct = error_pct;
    report.rows.push_back(row);
  }
  Summarise(report);
  return report;
}

}  // namespace orrery::engine
