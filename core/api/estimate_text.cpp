#include "core/api/text.h"

#include <cmath>
#include <iomanip>

#include "core/base/format.h"
#include "parallelism/schedule.h"

namespace orrery::text {

using namespace base;  // the Format* functions

namespace {

struct Part {
  const char* label;
  double engine::TimeBreakdown::*field;
};

constexpr Part kParts[] = {
    {"forward", &engine::TimeBreakdown::forward},
    {"backward", &engine::TimeBreakdown::backward},
    {"recompute", &engine::TimeBreakdown::recompute},
    {"exposed TP comm", &engine::TimeBreakdown::tp_comm},
    {"exposed CP comm", &engine::TimeBreakdown::cp_comm},
    {"exposed EP comm", &engine::TimeBreakdown::ep_comm},
    {"pipeline bubble", &engine::TimeBreakdown::pp_bubble},
    {"PP point-to-point", &engine::TimeBreakdown::pp_p2p},
    {"exposed DP comm", &engine::TimeBreakdown::dp_comm},
    {"optimizer step", &engine::TimeBreakdown::optimizer},
    {"offload transfers", &engine::TimeBreakdown::offload},
};

struct MemPart {
  const char* label;
  double parallelism::MemoryBreakdown::*field;
};

constexpr MemPart kMemParts[] = {
    {"weights", &parallelism::MemoryBreakdown::weights},
    {"gradients", &parallelism::MemoryBreakdown::gradients},
    {"optimizer states", &parallelism::MemoryBreakdown::optimizer},
    {"activations", &parallelism::MemoryBreakdown::activations},
    {"temporary buffers", &parallelism::MemoryBreakdown::temporary},
};

std::string Pad(std::string s, size_t n) {
  if (s.size() < n) s.insert(0, n - s.size(), ' ');
  return s;
}

std::string Label(const char* text) {
  std::string label = text;
  label.resize(20, ' ');
  return "  " + label;
}

void PrintEventPart(const engine::EventEstimate& e, std::ostream& out) {
  const auto& r = e.step;
  const double closed = e.closed_form.iteration_s;
  out << "\nevent engine: " << parallelism::PipelineScheduleName(e.schedule) << " schedule, "
      << FormatCount(static_cast<double>(r.tasks), "tasks") << " simulated in "
      << FormatTime(e.simulate_s) << "; closed form " << FormatTime(closed) << " ("
      << (r.iteration >= closed ? "+" : "") << FormatPercent(closed > 0 ? r.iteration / closed - 1 : 0)
      << ")\nbubble " << FormatPercent(r.bubble_fraction)
      << " of stage time; the breakdown above is stage " << r.critical_stage
      << ", which finishes last\n\n"
      << "stage  layers        busy        idle   bubble  peak in flight    activations\n";
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const auto& st = r.stages[i];
    out << Pad(std::to_string(i), 5)
        << Pad(FormatPlain(i < e.stage_layers.size() ? e.stage_layers[i] : 0.0), 8)
        << Pad(FormatTime(st.busy), 12) << Pad(FormatTime(st.idle), 12)
        << Pad(FormatPercent(r.iteration > 0 ? st.wait_bubble / r.iteration : 0), 9)
        << Pad(std::to_string(st.peak_in_flight), 16)
        << Pad(FormatBytes(st.peak_activation_bytes), 15) << "\n";
  }
  out << "(idle: the compute stream waits, for the pipeline or for communication; bubble: the\n"
         " part spent waiting for other stages. Peak in flight: microbatch-chunks whose\n"
         " activations are held at once, from the start of their forward to the end of their\n"
         " backward or W pass.)\n";
}

}  // namespace

namespace {

void PrintGoodput(const goodput::Result& g, const goodput::MonteCarlo* mc, std::ostream& out) {
  const goodput::Inputs& in = g.in;
  out << "\ngoodput    " << FormatPercent(g.goodput) << "  (failures and checkpoints "
      << FormatPercent(g.failure_goodput) << ", stragglers x" << FormatPlain(in.straggler_factor, 4)
      << ")\n";
  if (!std::isfinite(in.mtbf_s)) {
    out << "failures   none (system.reliability gives no failure rate)\n";
  } else {
    out << "failures   one every " << FormatTime(in.mtbf_s) << " across " << in.devices
        << " devices; restart " << FormatTime(in.restart_s) << " + checkpoint read "
        << FormatTime(in.read_s) << "\n"
        << "checkpoint " << FormatBytes(in.checkpoint_bytes) << ", write "
        << FormatTime(in.write_s) << (in.async ? ", async: stall " + FormatTime(in.stall_s) : "")
        << ", every " << FormatTime(g.interval_s);
    if (in.step_s > 0) out << " (" << FormatPlain(g.interval_s / in.step_s, 4) << " steps)";
    out << "; Young " << FormatTime(g.young_interval_s);
    if (g.daly_interval_s > 0) out << ", Daly " << FormatTime(g.daly_interval_s);
    out << "\n";
  }
  if (in.work_s > 0 && !(g.goodput >= 0.01)) {
    out << "effective  the run barely progresses (goodput below 1 %): restarts and checkpoints "
           "take longer than the time between failures\n";
  } else if (in.work_s > 0) {
    out << "effective  " << FormatTime(g.effective_s) << " for the training ("
        << FormatTime(in.work_s) << " failure-free";
    if (g.expected_failures > 0) out << ", " << FormatPlain(g.expected_failures, 3) << " failures expected";
    out << ")";
    if (in.busy_power_w > 0) {
      out << ", " << FormatEnergy(g.effective_energy_j);
      if (in.carbon_kg_per_j > 0) out << ", " << FormatPlain(g.carbon_kg / 1000, 4) << " t CO2e";
    }
    out << "\n";
  }
  if (mc != nullptr && !mc->skipped.empty()) out << "Monte-Carlo not run: " << mc->skipped << "\n";
  if (mc != nullptr && mc->runs > 0)
    out << "Monte-Carlo " << mc->runs << " runs (seed " << mc->seed << "): mean "
        << FormatTime(mc->mean_s) << ", p50 " << FormatTime(mc->p50_s) << ", p90 "
        << FormatTime(mc->p90_s) << ", " << FormatPlain(mc->mean_failures, 3)
        << " failures per run\n";
}

}  // namespace

namespace {

std::string PadRight(std::string s, size_t n) {
  if (s.size() < n) s.append(n - s.size(), ' ');
  return s;
}

// A group's lines: seconds per microbatch, what each moves, the fraction of
// the peak it reaches and what bounds it (forward / backward).
void PrintOperatorGroup(const char* title, const engine::OperatorGroup& g, std::ostream& out) {
  out << "\n" << PadRight(title, 24) << Pad("forward", 11) << Pad("backward", 11) << Pad("FLOP fwd", 13)
      << Pad("bytes fwd", 11) << Pad("peak f/b", 13) << "  bound f/b\n";
  for (const engine::OperatorLine& l : g.ops) {
    const bool compute = l.fwd_flops > 0;
    // A pass that runs no kernel (the backward-only qkv_split_grad's
    // forward, a forward copy's backward) shows a dash, not "0 s" or "0 %".
    auto time = [](double s, engine::OpBound b) { return b == engine::OpBound::kNone ? std::string("-") : FormatTime(s); };
    auto share = [](double f, engine::OpBound b) {
      return b == engine::OpBound::kNone ? std::string("-") : FormatPercent(f, 0);
    };
    out << "  " << PadRight(l.name, 22) << Pad(time(l.fwd_s, l.fwd_bound), 11) << Pad(time(l.bwd_s, l.bwd_bound), 11)
        << Pad(compute ? FormatFlops(l.fwd_flops) : "-", 13) << Pad(l.fwd_bytes > 0 ? FormatBytes(l.fwd_bytes) : "-", 11)
        << Pad(l.fwd_fraction > 0 || l.bwd_fraction > 0
                   ? share(l.fwd_fraction, l.fwd_bound) + " / " + share(l.bwd_fraction, l.bwd_bound)
                   : "-",
               13)
        << "  " << (l.fwd_bound == engine::OpBound::kNone ? "-" : engine::OpBoundName(l.fwd_bound)) << " / "
        << (l.bwd_bound == engine::OpBound::kNone ? "-" : engine::OpBoundName(l.bwd_bound)) << "\n";
    if (l.fp8_cast_fwd_s > 0 || l.fp8_cast_bwd_s > 0)
      out << "    " << PadRight("of which FP8 casts", 20) << Pad(FormatTime(l.fp8_cast_fwd_s), 11)
          << Pad(FormatTime(l.fp8_cast_bwd_s), 11) << "\n";
    if (l.bias_grad_bwd_s > 0)
      out << "    " << PadRight("of which bias grad", 20) << Pad("-", 11) << Pad(FormatTime(l.bias_grad_bwd_s), 11)
          << "\n";
  }
  out << "  " << PadRight("total", 22) << Pad(FormatTime(g.fwd_s), 11) << Pad(FormatTime(g.bwd_s), 11) << "\n";
}

void PrintOperatorBreakdown(const engine::OperatorBreakdown& b, const engine::TrainingEstimate& e,
                            std::ostream& out) {
  out << "\nper operator: one microbatch on one device (peak " << FormatFlopRate(b.peak_flops) << ", memory "
      << FormatBandwidth(b.memory_bandwidth) << "; FLOP executed, causal attention halved;\n"
      << "peak f/b: achieved FLOP/s over the peak of the kernel's datatype, or bytes/s over the\n"
      << "memory bandwidth for memory-bound kernels)\n";
  PrintOperatorGroup("dense layer", b.dense, out);
  if (!b.moe.ops.empty()) PrintOperatorGroup("MoE layer", b.moe, out);
  PrintOperatorGroup("LM head and loss", b.head, out);
  PrintOperatorGroup("embedding", b.embed, out);
  out << "\nper iteration: " << b.microbatches << " microbatches x (" << FormatPlain(b.layers, 4)
      << (b.moe_layers > 0 ? " dense + " + FormatPlain(b.moe_layers, 4) + " MoE" : std::string())
      << " layers on the fullest stage";
  out << ") -> forward " << FormatTime(e.time.forward) << ", backward " << FormatTime(e.time.backward);
  if (e.time.recompute > 0) out << ", recompute " << FormatTime(e.time.recompute);
  out << "; optimizer step " << FormatTime(b.optimizer_s) << "\n";
  if (b.comm.empty()) return;
  out << "\n" << PadRight("communication", 31) << Pad("traffic", 11) << Pad("exposed", 11) << Pad("hidden", 11)
      << "\n";
  for (const engine::CommLine& c : b.comm) {
    const bool known = c.traffic_s >= 0;
    out << "  " << PadRight(c.name, 29) << Pad(known ? FormatTime(c.traffic_s) : "-", 11)
        << Pad(FormatTime(c.exposed_s), 11) << Pad(known ? FormatTime(c.traffic_s - c.exposed_s) : "-", 11) << "\n";
  }
  out << "(traffic: the collectives alone, every overlap off; exposed: what the step waits for,\n"
         " slowed compute beside overlapped traffic included; hidden = traffic - exposed)\n";
}

// Where a soft-capped model's caps are priced (ModelSpec::attention_softcap,
// final_logit_softcap): the attention's in the materialised path's three
// element-wise passes, not inside a fused kernel. NeMo's Gemma 2 runs its
// attention unfused for the cap (nemo/collections/llm/gpt/model/gemma2.py:
// Gemma2DotProductAttention, "use unfused SDPA for attn logit softcapping");
// Transformer Engine takes a cap only into FlashAttention 2 or 3, not cuDNN's
// fused attention (TransformerEngine PR 3391, 2026).
std::string SoftcapLine(const models::ModelSpec& m, const parallelism::TrainingPlan& p) {
  if (m.attention_softcap <= 0 && m.final_logit_softcap <= 0) return "";
  std::string line = "           soft-capping";
  if (m.final_logit_softcap > 0)
    line += ": final logits at " + FormatPlain(m.final_logit_softcap) + " (three element-wise passes over them)";
  if (m.attention_softcap > 0) {
    line += std::string(m.final_logit_softcap > 0 ? ";" : ":") + " attention scores at " +
            FormatPlain(m.attention_softcap);
    line += p.attention == parallelism::Attention::kMaterialized
                ? " (three element-wise passes over the scores, as NeMo's Gemma 2 runs them)"
                : " inside the fused attention kernel, not priced (FlashAttention 2.6 on; NeMo's Gemma 2 runs "
                  "attention unfused: training.attention=materialized)";
  }
  return line + "\n";
}

}  // namespace

std::string UnreadKeysLine(const models::ModelSpec& m) {
  if (m.unread_keys.empty()) return "";
  std::string keys;
  for (const std::string& k : m.unread_keys) keys += (keys.empty() ? "" : ", ") + k;
  return "           model config keys not read (what they change is not modelled): " + keys + "\n";
}

void PrintEstimateTable(const EstimateResult& r, std::ostream& out) {
  if (r.hetero) return PrintHeteroEstimate(r, out);
  const engine::Scenario& s = r.scenario;
  const engine::TrainingEstimate& e = r.estimate;
  const auto& p = s.training;
  out << "scenario   " << (s.name.empty() ? s.file : s.name) << "\n"
      << "model      " << s.model.name << " (" << FormatCount(r.parameters, "parameters") << ")\n"
      << UnreadKeysLine(s.model)
      << "system     " << s.system.name << ": " << hardware::DeviceCount(s.system) << " x "
      << s.system.device.name << " (" << s.system.nodes << (s.system.nodes == 1 ? " node" : " nodes")
      << " of " << s.system.devices_per_node << ")\n"
      << "plan       tp " << p.tp << ", pp " << p.pp << ", dp " << e.dp << ", cp " << p.cp
      << ", ep " << p.ep
      << (parallelism::ExpertTensorParallel(p) != p.tp
              ? " (folded: etp " + std::to_string(parallelism::ExpertTensorParallel(p)) + ")"
              : std::string())
      << ", micro-batch " << p.micro_batch << " x " << e.microbatches
      << " microbatches, "
      // A pipeline schedule that takes no interleave is named instead.
      << (p.pp > 1 && !parallelism::TakesInterleave(p.schedule)
              ? std::string("schedule ") + parallelism::ScheduleName(p.schedule)
              : "interleave " + std::to_string(p.interleave))
      << (parallelism::OverlapsPipelineSends(p) ? " (sends overlapped)" : "") << ", recompute "
      << parallelism::RecomputeName(p.recompute)
      << (p.recompute == parallelism::Recompute::kFull && p.recompute_interval > 1
              ? " (1 layer in " + std::to_string(p.recompute_interval) + ")"
              : std::string())
      << (p.recompute == parallelism::Recompute::kFull && p.checkpoint_early_stop ? " stopping early" : "")
      << (parallelism::RecomputesMlaUpProj(s.model, p) ? " + MLA up projections" : "")
      << (parallelism::RecomputesMlp(p) && models::MoeFraction(s.model) < 1 ? " + dense MLPs" : "")
      << (parallelism::RecomputesLayernorm(p) && (models::MoeFraction(s.model) > 0 || models::UsesMla(s.model))
              ? " + norms"
              : "")
      << (parallelism::RecomputesMoeAct(p) && models::MoeFraction(s.model) > 0 ? " + expert activations" : "")
      << (p.sequence_parallel ? ", sequence parallel" : "")
      << ", ZeRO " << p.zero << "\n"
      << SoftcapLine(s.model, p);
  if (!e.feasible()) {
    out << "\nINFEASIBLE: " << r.reason << "\n";
    if (e.iteration_s == 0) return;
    out << "(the figures below are what it would take)\n";
  }
  out << "\niteration  " << FormatTime(e.iteration_s) << "\n";
  for (const Part& part : kParts) {
    const double v = e.time.*(part.field);
    if (v == 0) continue;
    out << Label(part.label) << std::setw(12) << FormatTime(v) << "  " << std::setw(7)
        << FormatPercent(v / e.iteration_s) << "\n";
  }
  out << "\nmemory per device (fullest stage)\n";
  for (const MemPart& part : kMemParts)
    out << Label(part.label) << std::setw(12) << FormatBytes(e.memory.*(part.field)) << "\n";
  out << Label("total") << std::setw(12) << FormatBytes(e.memory.total()) << "  of "
      << FormatBytes(e.memory_capacity) << "\n";
  // What the plan keeps in host memory instead (not in the total above).
  if (e.memory.host_optimizer > 0 || e.memory.host_activations > 0) {
    out << "in host memory, per device (not in the total above)\n";
    if (e.memory.host_optimizer > 0)
      out << Label("optimizer states") << std::setw(12) << FormatBytes(e.memory.host_optimizer)
          << "  offloaded (training.offload_optimizer)\n";
    if (e.memory.host_activations > 0)
      out << Label("activations") << std::setw(12) << FormatBytes(e.memory.host_activations)
          << "  offloaded (training.offload_activation_layers)\n";
  }
  out << "\nMFU " << FormatPercent(e.mfu) << "   HFU " << FormatPercent(e.hfu) << "   "
      << FormatFlopRate(e.tflops_per_device) << " per device (model FLOPs)   "
      << FormatRate(e.tokens_per_s, "tokens") << "\n";
  // Where causal attention is a visible part of the FLOPs (long sequences),
  // the MFU above credits the masked half no kernel runs: say so, with the
  // figure that counts what runs.
  if (engine::CausalMfuDiffers(e.mfu, e.mfu_causal))
    out << "causal MFU " << FormatPercent(e.mfu_causal)
        << " (causal attention's masked half not counted; the MFU above counts all s x s scores)\n";
  if (e.energy_j > 0)
    out << "energy per iteration " << FormatEnergy(e.energy_j) << " (TDP x time x PUE)\n";
  if (s.workload.train_tokens > 0) {
    out << "\ntraining on " << FormatCount(s.workload.train_tokens, "tokens") << ": "
        << FormatTime(e.train_time_s) << ", " << FormatCount(e.train_device_hours, "device-hours");
    if (e.train_energy_j > 0) out << ", " << FormatEnergy(e.train_energy_j);
    if (e.train_cost_usd > 0) out << ", " << FormatMoney(e.train_cost_usd);
    out << "\n";
  }
  if (r.goodput) PrintGoodput(*r.goodput, r.goodput_mc ? &*r.goodput_mc : nullptr, out);
  if (r.event && r.event->simulated()) PrintEventPart(*r.event, out);
  if (!r.notes.empty()) out << "\n";
  for (const std::string& note : r.notes) out << "groups     " << note << "\n";
  if (r.ops) PrintOperatorBreakdown(*r.ops, r.event ? r.event->closed_form : e, out);
}

}  // namespace orrery::text
