#include "cli/event_output.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "cli/estimate_output.h"
#include "core/base/quantity.h"

namespace orrery::cli {

using base::Dimension;
using base::FormatQuantity;

namespace {

std::string Pct(double x) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << 100 * x << " %";
  return os.str();
}

std::string Pad(std::string s, size_t n) {
  if (s.size() < n) s.insert(0, n - s.size(), ' ');
  return s;
}

}  // namespace

nlohmann::ordered_json EventJson(const engine::Scenario& s, const engine::EventEstimate& e) {
  nlohmann::ordered_json j = EstimateJson(s, e.estimate);
  j["engine"] = "event";
  if (!e.simulated()) return j;
  const auto& r = e.step;
  nlohmann::ordered_json ev;
  ev["schedule"] = parallelism::PipelineScheduleName(e.schedule);
  ev["closed_form_iteration_s"] = e.closed_form.iteration_s;
  ev["bubble_fraction"] = r.bubble_fraction;
  ev["critical_stage"] = r.critical_stage;
  ev["tasks"] = r.tasks;
  ev["events"] = r.events;
  ev["simulate_s"] = e.simulate_s;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const auto& st = r.stages[i];
    stages.push_back({{"stage", i},
                      {"layers", i < e.stage_layers.size() ? e.stage_layers[i] : 0.0},
                      {"busy_s", st.busy},
                      {"idle_s", st.idle},
                      {"bubble_fraction", r.iteration > 0 ? st.wait_bubble / r.iteration : 0.0},
                      {"wait_tp_s", st.wait_tp},
                      {"wait_p2p_s", st.wait_p2p},
                      {"wait_dp_s", st.wait_dp},
                      {"peak_in_flight", st.peak_in_flight},
                      {"peak_activation_bytes", st.peak_activation_bytes}});
  }
  ev["stages"] = stages;
  j["event"] = ev;
  return j;
}

void PrintEventEstimate(const engine::Scenario& s, const engine::EventEstimate& e, Format f,
                        std::ostream& out) {
  if (f == Format::kJson) {
    out << EventJson(s, e).dump(2) << "\n";
    return;
  }
  if (f == Format::kCsv) {
    PrintJsonAsCsvRow(EventJson(s, e), out);
    return;
  }
  PrintEstimate(s, e.estimate, f, out);
  if (!e.simulated()) return;
  const auto& r = e.step;
  const double closed = e.closed_form.iteration_s;
  out << "\nevent engine: " << parallelism::PipelineScheduleName(e.schedule) << " schedule, "
      << r.tasks << " tasks simulated in " << FormatQuantity(e.simulate_s, Dimension::kTime)
      << "; closed form " << FormatQuantity(closed, Dimension::kTime) << " ("
      << (r.iteration >= closed ? "+" : "") << Pct(closed > 0 ? r.iteration / closed - 1 : 0)
      << ")\nbubble " << Pct(r.bubble_fraction) << " of stage time; the breakdown above is stage "
      << r.critical_stage << ", which finishes last\n\n"
      << "stage  layers        busy        idle   bubble  peak in flight    activations\n";
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const auto& st = r.stages[i];
    std::ostringstream layers;
    layers << (i < e.stage_layers.size() ? e.stage_layers[i] : 0.0);
    out << Pad(std::to_string(i), 5) << Pad(layers.str(), 8)
        << Pad(FormatQuantity(st.busy, Dimension::kTime), 12)
        << Pad(FormatQuantity(st.idle, Dimension::kTime), 12)
        << Pad(Pct(r.iteration > 0 ? st.wait_bubble / r.iteration : 0), 9)
        << Pad(std::to_string(st.peak_in_flight), 16)
        << Pad(FormatQuantity(st.peak_activation_bytes, Dimension::kBytes), 15) << "\n";
  }
  out << "(idle: the compute stream waits, for the pipeline or for communication; bubble: the\n"
         " part spent waiting for other stages. Peak in flight: microbatch-chunks whose\n"
         " activations are held at once, from the start of their forward to the end of their\n"
         " backward or W pass.)\n";
}

}  // namespace orrery::cli
