// Tables and CSV of `orrery network`; JSON is orrery::ToJson.

#include "core/api/text.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "core/api/json.h"
#include "core/base/quantity.h"

namespace orrery::text {

namespace {

using base::Dimension;
using base::FormatQuantity;

std::string Money(double usd) {
  std::ostringstream os;
  if (usd >= 1e6) os << std::fixed << std::setprecision(2) << usd / 1e6 << " MUSD";
  else if (usd >= 1e3) os << std::fixed << std::setprecision(1) << usd / 1e3 << " kUSD";
  else os << std::fixed << std::setprecision(0) << usd << " USD";
  return os.str();
}

std::string Percent(double fraction) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << 100 * fraction << " %";
  return os.str();
}

using Rows = std::vector<std::vector<std::string>>;

void PrintTable(std::ostream& out, const std::vector<std::string>& header, const Rows& rows) {
  std::vector<size_t> w(header.size());
  for (size_t c = 0; c < header.size(); ++c) w[c] = header[c].size();
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], r[c].size());
  auto line = [&](const std::vector<std::string>& r) {
    for (size_t c = 0; c < r.size(); ++c) {
      out << r[c];
      if (c + 1 < r.size()) out << std::string(w[c] - r[c].size() + 2, ' ');
    }
    out << "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

void PrintCsv(std::ostream& out, const std::vector<std::string>& header, const Rows& rows) {
  for (size_t c = 0; c < header.size(); ++c) out << (c ? "," : "") << CsvField(header[c]);
  out << "\n";
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) out << (c ? "," : "") << CsvField(r[c]);
    out << "\n";
  }
}

}  // namespace

void PrintNetwork(const NetworkResult& r, Format fmt, std::ostream& out) {
  const studies::NetworkReport& n = r.report;
  if (fmt == Format::kJson) {
    out << ToJson(r).dump(2) << "\n";
    return;
  }
  const std::vector<std::string> tier_header = {
      "tier", "name", "topology", "domain", "links", "link bw", "bw/device", "latency", "diameter",
      "bisection/domain", "switches", "levels", "cables", "transceivers", "NIC ports", "cost", "power"};
  Rows tier_rows;
  for (const studies::TierRow& t : n.tiers) {
    const hardware::TierParts& p = t.parts;
    tier_rows.push_back({std::to_string(t.index), t.name, t.topology, std::to_string(t.domain),
                         std::to_string(t.links_per_device),
                         FormatQuantity(t.link_bandwidth, Dimension::kBandwidth),
                         FormatQuantity(t.bandwidth, Dimension::kBandwidth),
                         FormatQuantity(t.latency, Dimension::kTime),
                         std::to_string(t.diameter_hops) + " hops",
                         FormatQuantity(p.bisection, Dimension::kBandwidth), std::to_string(p.switches),
                         std::to_string(p.switch_levels), std::to_string(p.links),
                         std::to_string(p.transceivers), std::to_string(p.nic_ports), Money(p.cost()),
                         FormatQuantity(p.power(), Dimension::kPower)});
  }
  const studies::CollectiveRow& k = n.collective;
  std::string algos;
  for (const auto& [tier, algorithm] : k.algorithms)
    algos += std::string(algos.empty() ? "" : " + ") + tier + ":" + algorithm;
  const std::vector<std::string> coll_header = {"collective", "bytes", "group", "members", "stride", "time",
                                                "algbw", "busbw", "algorithms", "rail_aligned", "forwarded"};
  const std::vector<std::string> coll_row = {
      k.collective, FormatQuantity(k.bytes, Dimension::kBytes), k.group.empty() ? "-" : k.group,
      std::to_string(k.members), std::to_string(k.stride), FormatQuantity(k.time_s, Dimension::kTime),
      FormatQuantity(k.algbw, Dimension::kBandwidth), FormatQuantity(k.busbw, Dimension::kBandwidth), algos,
      k.rail_aligned ? "yes" : "no", k.forwarded ? "yes" : "no"};
  if (fmt == Format::kCsv) {
    if (n.has_collective) PrintCsv(out, coll_header, {coll_row});
    else PrintCsv(out, tier_header, tier_rows);
    return;
  }
  const hardware::SystemCost& cost = n.cost;
  out << n.system << ": " << n.devices << " x " << n.device << " (" << n.nodes << " nodes of "
      << n.devices_per_node << "); prices: " << n.prices << "\n\n";
  PrintTable(out, tier_header, tier_rows);
  out << "\nnetwork: " << Money(cost.network_cost) << ", "
      << FormatQuantity(cost.network_power, Dimension::kPower) << "  (scale-out fabric without NICs: "
      << Money(cost.fabric_cost) << ", " << FormatQuantity(cost.fabric_power, Dimension::kPower) << ")\n";
  out << "devices: " << Money(cost.device_cost) << ", "
      << FormatQuantity(cost.device_power, Dimension::kPower) << " at TDP\n";
  const double total_cost = cost.device_cost + cost.network_cost;
  const double total_power = cost.device_power + cost.network_power;
  if (total_cost > 0)
    out << "network share: " << Percent(cost.network_cost / total_cost) << " of cost, "
        << Percent(total_power > 0 ? cost.network_power / total_power : 0) << " of power\n";
  if (!n.has_collective) return;
  out << "\n" << k.collective << " of " << FormatQuantity(k.bytes, Dimension::kBytes) << " over "
      << (k.group.empty() ? std::string("the group") : k.group + " group") << " (" << k.members
      << " members, " << k.stride << " apart): " << FormatQuantity(k.time_s, Dimension::kTime)
      << "\n  algorithm bandwidth " << FormatQuantity(k.algbw, Dimension::kBandwidth) << ", bus bandwidth "
      << FormatQuantity(k.busbw, Dimension::kBandwidth) << "\n  " << algos << "; base latency "
      << FormatQuantity(k.base_latency_s, Dimension::kTime) << "\n";
  if (k.top_tier_rail_only)
    out << "  members " << (k.rail_aligned ? "share a rail" : "sit on different rails")
        << (k.forwarded ? "; cross-rail traffic forwarded through the HB domain (+" +
                              FormatQuantity(k.forwarded_hb_bytes, Dimension::kBytes) + " per member on it)"
                        : "; the collective keeps its cross-domain traffic on rails")
        << "\n";
}

void PrintNetworkStudy(const NetworkStudyResult& r, Format fmt, std::ostream& out) {
  if (fmt == Format::kJson) {
    out << ToJson(r).dump(2) << "\n";
    return;
  }
  using Row = studies::FabricStudyRow;
  const studies::FabricStudy& st = r.study;
  const std::vector<std::string> header = {
      "case", "fabric", "GPUs", "iteration", "vs base", "all-to-all", "vs base", "fabric cost",
      "vs base", "fabric power", "vs base", "with NICs", "vs base"};
  Rows table;
  for (const Row& x : st.rows) {
    const auto pct = [&](double field_rel) {
      return x.baseline ? std::string("-") : (field_rel >= 0 ? "+" : "") + Percent(field_rel);
    };
    const auto rel = [&](double Row::*f) { return st.VsBaseline(x, f); };
    table.push_back({x.case_name, x.fabric, std::to_string(x.devices),
                     x.feasible ? FormatQuantity(x.iteration_s, Dimension::kTime) : "infeasible",
                     pct(rel(&Row::iteration_s)),
                     x.ep_comm_s > 0 ? FormatQuantity(x.ep_comm_s, Dimension::kTime) : "-",
                     x.ep_comm_s > 0 ? pct(rel(&Row::ep_comm_s)) : "-", Money(x.fabric_cost),
                     pct(rel(&Row::fabric_cost)), FormatQuantity(x.fabric_power, Dimension::kPower),
                     pct(rel(&Row::fabric_power)), Money(x.scale_out_cost), pct(rel(&Row::scale_out_cost))});
  }
  if (fmt == Format::kCsv) {
    PrintCsv(out, header, table);
    return;
  }
  out << "study: " << st.name << "\n";
  if (!st.citation.empty()) out << "claim: " << st.citation << "\n";
  out << "prices: " << st.prices << "; baseline fabric: " << st.baseline
      << "; fabric = scale-out switches, transceivers and cables (NICs are the same in both)\n\n";
  PrintTable(out, header, table);
  for (const Row& x : st.rows)
    if (!x.feasible) out << "\n" << x.case_name << " / " << x.fabric << ": " << x.reason << "\n";
}

}  // namespace orrery::text
