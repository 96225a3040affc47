#include "cli/estimate_output.h"

#include <algorithm>
#include <iomanip>

#include "core/base/quantity.h"
#include "models/transformer.h"

namespace orrery::cli {

using base::Dimension;
using base::FormatQuantity;

namespace {

struct Part {
  const char* key;
  const char* label;
  double engine::TimeBreakdown::*field;
};

constexpr Part kParts[] = {
    {"forward_s", "forward", &engine::TimeBreakdown::forward},
    {"backward_s", "backward", &engine::TimeBreakdown::backward},
    {"recompute_s", "recompute", &engine::TimeBreakdown::recompute},
    {"tp_comm_s", "exposed TP comm", &engine::TimeBreakdown::tp_comm},
    {"cp_comm_s", "exposed CP comm", &engine::TimeBreakdown::cp_comm},
    {"ep_comm_s", "exposed EP comm", &engine::TimeBreakdown::ep_comm},
    {"pp_bubble_s", "pipeline bubble", &engine::TimeBreakdown::pp_bubble},
    {"pp_p2p_s", "PP point-to-point", &engine::TimeBreakdown::pp_p2p},
    {"dp_comm_s", "exposed DP comm", &engine::TimeBreakdown::dp_comm},
    {"optimizer_s", "optimizer step", &engine::TimeBreakdown::optimizer},
    {"offload_s", "offload transfers", &engine::TimeBreakdown::offload},
};

struct MemPart {
  const char* key;
  const char* label;
  double parallelism::MemoryBreakdown::*field;
};

constexpr MemPart kMemParts[] = {
    {"weights_bytes", "weights", &parallelism::MemoryBreakdown::weights},
    {"gradients_bytes", "gradients", &parallelism::MemoryBreakdown::gradients},
    {"optimizer_bytes", "optimizer states", &parallelism::MemoryBreakdown::optimizer},
    {"activations_bytes", "activations", &parallelism::MemoryBreakdown::activations},
    {"temporary_bytes", "temporary buffers", &parallelism::MemoryBreakdown::temporary},
};

std::string Pct(double x) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << 100 * x << " %";
  return os.str();
}

}  // namespace

nlohmann::ordered_json EstimateJson(const engine::Scenario& s, const engine::TrainingEstimate& e) {
  nlohmann::ordered_json j;
  j["scenario"] = s.name;
  j["model"] = s.model.name;
  j["system"] = s.system.name;
  j["devices"] = hardware::DeviceCount(s.system);
  j["feasible"] = e.feasible();
  j["reason"] = e.feasible() ? nlohmann::ordered_json() : nlohmann::ordered_json(engine::ExplainInfeasible(e, s));
  j["plan"] = {{"tp", s.training.tp}, {"pp", s.training.pp}, {"dp", e.dp}, {"cp", s.training.cp},
               {"ep", s.training.ep}, {"micro_batch", s.training.micro_batch},
               {"microbatches", e.microbatches}, {"interleave", s.training.interleave}};
  if (e.infeasible != engine::Infeasible::kNone && e.iteration_s == 0) return j;
  j["iteration_s"] = e.iteration_s;
  nlohmann::ordered_json parts;
  for (const Part& p : kParts) parts[p.key] = e.time.*(p.field);
  j["time"] = parts;
  nlohmann::ordered_json mem;
  for (const MemPart& p : kMemParts) mem[p.key] = e.memory.*(p.field);
  mem["total_bytes"] = e.memory.total();
  mem["capacity_bytes"] = e.memory_capacity;
  j["memory_per_device"] = mem;
  j["model_flops_per_iteration"] = e.model_flops;
  j["hardware_flops_per_iteration"] = e.hardware_flops;
  j["mfu"] = e.mfu;
  j["hfu"] = e.hfu;
  j["model_tflops_per_device"] = e.tflops_per_device / 1e12;
  j["tokens_per_s"] = e.tokens_per_s;
  j["energy_per_iteration_j"] = e.energy_j;
  j["cost_per_iteration_usd"] = e.cost_usd;
  if (s.workload.train_tokens > 0) {
    j["train"] = {{"tokens", s.workload.train_tokens},
                  {"time_s", e.train_time_s},
                  {"device_hours", e.train_device_hours},
                  {"energy_j", e.train_energy_j},
                  {"cost_usd", e.train_cost_usd}};
  }
  return j;
}

void PrintJsonAsCsvRow(const nlohmann::ordered_json& j, std::ostream& out) {
  const auto flat = j.flatten();
  std::string header, row;
  bool first = true;
  for (auto it = flat.begin(); it != flat.end(); ++it, first = false) {
    std::string key = it.key().substr(1);  // JSON pointer "/time/forward_s"
    std::replace(key.begin(), key.end(), '/', '.');
    std::string v = it->is_string() ? it->get<std::string>() : it->dump();
    if (v.find_first_of(",\"\n") != std::string::npos) {
      std::string quoted(1, '"');
      for (char c : v) {
        quoted.push_back(c);
        if (c == '"') quoted.push_back('"');
      }
      quoted.push_back('"');
      v.swap(quoted);
    }
    if (!first) {
      header.push_back(',');
      row.push_back(',');
    }
    header.append(key);
    row.append(v);
  }
  out << header << "\n" << row << "\n";
}

void PrintEstimate(const engine::Scenario& s, const engine::TrainingEstimate& e, Format f,
                   std::ostream& out) {
  if (f == Format::kJson) {
    out << EstimateJson(s, e).dump(2) << "\n";
    return;
  }
  if (f == Format::kCsv) {
    PrintJsonAsCsvRow(EstimateJson(s, e), out);
    return;
  }
  const auto& p = s.training;
  out << "scenario   " << (s.name.empty() ? s.file : s.name) << "\n"
      << "model      " << s.model.name << " ("
      << base::FormatNumber(models::ParameterCount(s.model, s.workload.seq_len) / 1e9, 4)
      << " B parameters)\n"
      << "system     " << s.system.name << ": " << hardware::DeviceCount(s.system) << " x "
      << s.system.device.name << "\n"
      << "plan       tp " << p.tp << ", pp " << p.pp << ", dp " << e.dp << ", cp " << p.cp
      << ", ep " << p.ep << ", micro-batch " << p.micro_batch << " x " << e.microbatches
      << " microbatches, interleave " << p.interleave << ", recompute "
      << (p.recompute == parallelism::Recompute::kFull
              ? "full"
              : p.recompute == parallelism::Recompute::kSelective ? "selective" : "none")
      << (p.sequence_parallel ? ", sequence parallel" : "") << ", ZeRO " << p.zero << "\n";
  if (!e.feasible()) {
    out << "\nINFEASIBLE: " << engine::ExplainInfeasible(e, s) << "\n";
    if (e.iteration_s == 0) return;
    out << "(the figures below are what it would take)\n";
  }
  out << "\niteration  " << FormatQuantity(e.iteration_s, Dimension::kTime) << "\n";
  for (const Part& part : kParts) {
    const double v = e.time.*(part.field);
    if (v == 0) continue;
    std::string label = part.label;
    label.resize(20, ' ');
    out << "  " << label << std::setw(12) << FormatQuantity(v, Dimension::kTime) << "  "
        << std::setw(7) << Pct(v / e.iteration_s) << "\n";
  }
  out << "\nmemory per device (fullest stage)\n";
  for (const MemPart& part : kMemParts) {
    std::string label = part.label;
    label.resize(20, ' ');
    out << "  " << label << std::setw(12) << FormatQuantity(e.memory.*(part.field), Dimension::kBytes)
        << "\n";
  }
  out << "  total               " << std::setw(12) << FormatQuantity(e.memory.total(), Dimension::kBytes)
      << "  of " << FormatQuantity(e.memory_capacity, Dimension::kBytes) << "\n";
  out << "\nMFU " << Pct(e.mfu) << "   HFU " << Pct(e.hfu) << "   "
      << base::FormatNumber(e.tflops_per_device / 1e12) << " model TFLOP/s per device   "
      << base::FormatNumber(e.tokens_per_s) << " tokens/s\n";
  if (e.energy_j > 0)
    out << "energy per iteration " << FormatQuantity(e.energy_j, Dimension::kEnergy) << " (TDP x time x PUE)\n";
  if (s.workload.train_tokens > 0) {
    out << "\ntraining on " << base::FormatNumber(s.workload.train_tokens) << " tokens: "
        << FormatQuantity(e.train_time_s, Dimension::kTime) << ", "
        << base::FormatNumber(e.train_device_hours) << " device-hours";
    if (e.train_energy_j > 0) out << ", " << FormatQuantity(e.train_energy_j, Dimension::kEnergy);
    if (e.train_cost_usd > 0) out << ", " << FormatQuantity(e.train_cost_usd, Dimension::kMoney);
    out << "\n";
  }
}

}  // namespace orrery::cli
