// The table of `orrery search`; JSON and CSV are orrery::ToJson.

#include <algorithm>

#include "core/api/text.h"
#include "core/base/format.h"

namespace orrery::text {

using namespace base;  // the Format* functions

void PrintSearchTable(const SearchResult& r, const std::string& gpus, std::ostream& out) {
  if (r.hetero) return PrintHeteroSearch(r, out);
  const engine::Scenario& s = r.scenario;
  const engine::SearchStats& st = r.stats;
  const uint64_t pruned = st.pruned_divisibility + st.pruned_schedule + st.pruned_memory + st.pruned_time;
  out << "search     " << s.model.name << " on "
      << (r.device_counts.size() > 1 ? gpus : std::to_string(hardware::DeviceCount(s.system)))
      << " x " << s.system.device.name << ", global batch " << s.workload.global_batch
      << " x " << s.workload.seq_len << " tokens, objective " << engine::ObjectiveName(r.objective)
      << "\n"
      << "space      " << FormatGrouped(st.candidates) << " candidates in " << FormatGrouped(st.shapes)
      << " shapes\n"
      << "pruned     " << FormatGrouped(pruned) << " (divisibility or stage layout " << FormatGrouped(st.pruned_divisibility)
      << (st.pruned_schedule > 0 ? ", microbatches the schedule cannot run " + FormatGrouped(st.pruned_schedule) : "")
      << ", weights+optimizer memory " << FormatGrouped(st.pruned_memory) << ", time bound "
      << FormatGrouped(st.pruned_time) << ")\n"
      << "evaluated  " << FormatGrouped(st.evaluated) << " (+ " << FormatGrouped(st.probes)
      << " bound probes): " << FormatGrouped(st.feasible) << " fit, " << FormatGrouped(st.out_of_memory)
      << " out of memory";
  if (st.refused > 0) out << ", " << FormatGrouped(st.refused) << " break a pipeline rule";
  out << "\n"
      << "wall       " << FormatTime(st.wall_s) << " on " << st.threads << " thread"
      << (st.threads == 1 ? "" : "s") << (r.ranks > 1 ? " x " + std::to_string(r.ranks) + " ranks" : "")
      << " (" << FormatRate(static_cast<double>(st.candidates) / std::max(1e-9, st.wall_s), "candidates")
      << ")\n";
  for (size_t i = 0; i < r.top.size(); ++i) {
    const engine::SearchCandidate& c = r.top[i].candidate;
    const engine::TrainingEstimate& e = c.estimate;
    out << "\n#" << i + 1 << "  " << FormatTime(e.iteration_s) << " per iteration, MFU "
        << FormatPercent(e.mfu);
    // The full s x s count credits causal attention's masked half
    // (TrainingEstimate::mfu_causal): at long sequences, say what runs.
    if (engine::CausalMfuDiffers(e.mfu, e.mfu_causal)) out << " (causal " << FormatPercent(e.mfu_causal) << ")";
    out << ", " << FormatRate(e.tokens_per_s, "tokens");
    if (r.objective != Objective::kTime)
      out << ", " << FormatPlain(ShownScore(r.objective, c.score)) << " " << ScoreUnit(r.objective);
    out << "\n    " << engine::DescribeKnobs(c.knobs);
    // The schedule is the scenario's, not a knob (the search only moves
    // 1F1B and interleaved 1F1B into each other): said whenever a pipeline
    // runs it, so a ZB-H1 or V-shape answer does not read as 1F1B.
    if (c.knobs.pp > 1)
      out << " schedule=" << parallelism::ScheduleName(r.top[i].scenario.training.schedule);
    out << "\n    time  ";
    const std::pair<const char*, double> parts[] = {
        {"fwd", e.time.forward},         {"bwd", e.time.backward},   {"recompute", e.time.recompute},
        {"tp", e.time.tp_comm},          {"cp", e.time.cp_comm},     {"ep", e.time.ep_comm},
        {"bubble", e.time.pp_bubble},    {"p2p", e.time.pp_p2p},     {"dp", e.time.dp_comm},
        {"optimizer", e.time.optimizer}, {"offload", e.time.offload}};
    bool first = true;
    for (const auto& [name, v] : parts) {
      if (v == 0) continue;
      out << (first ? "" : " | ") << name << " " << FormatTime(v);
      first = false;
    }
    out << "\n    memory " << FormatBytes(e.memory.total()) << " of " << FormatBytes(e.memory_capacity)
        << " (weights " << FormatBytes(e.memory.weights) << ", gradients "
        << FormatBytes(e.memory.gradients) << ", optimizer " << FormatBytes(e.memory.optimizer)
        << ", activations " << FormatBytes(e.memory.activations) << ")\n";
    const goodput::Result& g = r.top[i].goodput;
    out << "    goodput " << FormatPercent(g.goodput);
    if (g.interval_s > 0)
      out << " (a failure every " << FormatTime(g.in.mtbf_s) << ", checkpoint every "
          << FormatTime(g.interval_s) << ")";
    if (g.effective_s > 0) out << ", " << FormatTime(g.effective_s) << " effective training";
    out << "\n";
  }
  if (!r.why_first.empty()) out << "\nwhy #1 beats #2: " << r.why_first << "\n";
  for (const std::string& note : r.notes_first) out << "#1's groups: " << note << "\n";
  if (!r.disagreements.empty()) {
    out << "\nclosed form and event engine disagree by more than "
        << base::FormatNumber(100 * r.event_tolerance, 2) << " % on " << r.disagreements.size()
        << " finalist" << (r.disagreements.size() == 1 ? "" : "s") << " (ranked by the event engine):\n";
    for (const auto& d : r.disagreements) {
      out << "  " << engine::DescribeKnobs(d.knobs) << ": closed form "
          << FormatQuantity(d.closed_form_s, Dimension::kTime) << ", ";
      if (d.why.empty()) out << "event " << FormatQuantity(d.event_s, Dimension::kTime) << "\n";
      else out << "event engine rejects it: " << d.why << "\n";
    }
  }
}

}  // namespace orrery::text
