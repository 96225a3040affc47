// `orrery network`: parses options, calls orrery::Network or
// orrery::NetworkStudy (core/api/network.h), presents the result.

#include "cli/network_command.h"

#include <boost/program_options.hpp>

#include "cli/cli_common.h"
#include "core/api/network.h"
#include "core/api/text.h"
#include "core/base/quantity.h"

namespace orrery::cli {

namespace po = boost::program_options;

namespace {

// Prints a failed result's diagnostics or reason; returns its exit status.
int Failed(const ResultBase& r, std::ostream& err) {
  if (!r.diagnostics.ok()) PrintDiagnostics(r.diagnostics, err);
  if (!r.reason.empty())
    err << "error: " << r.reason << (r.status == Status::kUsage ? " (see orrery network --help)" : "") << "\n";
  return static_cast<int>(r.status);
}

}  // namespace

int RunNetwork(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "orrery network SYSTEM [--prices NAME|FILE] [--set PATH=VALUE]... [--format table|json|csv]\n"
      "               [--collective NAME --bytes SIZE (--group tp|cp|ep|dp|pp [--tp N ...] |\n"
      "                --size N [--stride S])]\n"
      "orrery network study STUDY.yaml [--format table|json|csv]\n\n"
      "Prints a system's network: for every tier its topology, domain, links and\n"
      "bandwidth, diameter and bisection bandwidth, and the parts it needs for the\n"
      "system's devices (switches, cables, transceivers, NIC ports) with their cost\n"
      "and power from a price table (configs/prices/), beside the devices' own cost\n"
      "and power. With --collective it also prints the time of one collective and\n"
      "its algorithm and bus bandwidth (NCCL's definitions), the tiers it crosses,\n"
      "and on rail-only fabrics whether its traffic is forwarded through the HB\n"
      "domain. SYSTEM is a system file or preset name.\n\n"
      "`orrery network study FILE` runs a fabric study (configs/studies/rail-only.yaml):\n"
      "for each case and fabric, the training iteration time, its exposed all-to-all\n"
      "time, and the fabric's cost and power, each against the baseline fabric.\n\noptions");
  std::string format = "table", prices = "default", collective, bytes_text, group,
              order = "tp,cp,ep,dp,pp";
  std::vector<std::string> sets;
  int64_t tp = 1, cp = 1, ep = 1, dp = 0, pp = 1, size = 0, stride = 1;
  opts.add_options()("help,h", "show this help")(
      "prices", po::value(&prices), "price table: a name under configs/prices/ or a file (default: default)")(
      "set", po::value(&sets)->composing(),
      "override system.* or prices.* (e.g. --set system.nodes=512 --set "
      "system.network[1].topology=rail-only --set 'prices.switch_price=40 kUSD')")(
      "format", po::value(&format), "table | json | csv (csv: the tiers, or the collective when asked)")(
      "collective", po::value(&collective),
      "all-reduce | reduce-scatter | all-gather | all-to-all | broadcast | send-recv")(
      "bytes", po::value(&bytes_text), "buffer size with a unit, e.g. 1GiB, 64 MiB")(
      "group", po::value(&group), "the plan's group: tp | cp | ep | dp | pp")(
      "tp", po::value(&tp), "tensor-parallel degree (default 1)")(
      "cp", po::value(&cp), "context-parallel degree (default 1)")(
      "ep", po::value(&ep), "expert-parallel degree, carved out of cp x dp (default 1)")(
      "pp", po::value(&pp), "pipeline stages (default 1)")(
      "dp", po::value(&dp), "data-parallel degree (default: devices / (tp cp pp))")(
      "order", po::value(&order), "group order, innermost first (default tp,cp,ep,dp,pp)")(
      "size", po::value(&size), "explicit group: members")(
      "stride", po::value(&stride), "explicit group: devices between consecutive members (default 1)");
  po::options_description hidden;
  hidden.add_options()("what", po::value<std::vector<std::string>>(), "");
  po::positional_options_description pos;
  pos.add("what", 2);
  po::variables_map vm;
  try {
    po::options_description all;
    all.add(opts).add(hidden);
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see orrery network --help)\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts
        << "\nExamples:\n"
           "  orrery network dgx-h100-superpod\n"
           "  orrery network dgx-h100-superpod --collective all-reduce --bytes 64MiB --size 8\n"
           "  orrery network dgx-h100-rail-only --collective all-to-all --bytes 256MiB --group ep "
           "--tp 2 --ep 16\n"
           "  orrery network gh200-nvl256 --set system.network[1].topology=rail-only --format json\n"
           "  orrery network tpu-v4-pod --collective all-reduce --bytes 1GiB --size 4096\n"
           "  orrery network study configs/studies/rail-only.yaml\n";
    return kExitOk;
  }
  const std::vector<std::string> what =
      vm.count("what") ? vm["what"].as<std::vector<std::string>>() : std::vector<std::string>{};
  Format fmt;
  if (!ParseFormat(format, fmt, err)) return kExitUsage;
  if (!what.empty() && what[0] == "study") {
    if (what.size() != 2) {
      err << "error: missing STUDY.yaml (see orrery network --help)\n";
      return kExitUsage;
    }
    NetworkStudyRequest req;
    req.file = what[1];
    const NetworkStudyResult r = NetworkStudy(req);
    if (!r.ok()) return Failed(r, err);
    text::PrintNetworkStudy(r, fmt, out);
    return kExitOk;
  }
  if (what.size() != 1) {
    err << "error: " << (what.empty() ? "missing SYSTEM" : "one SYSTEM expected")
        << " (see orrery network --help)\n";
    return kExitUsage;
  }
  NetworkRequest req;
  req.system = what[0];
  req.prices = prices;
  req.sets = sets;
  req.collective = collective;
  req.group = group;
  req.size = size;
  req.stride = stride;
  req.tp = tp;
  req.cp = cp;
  req.ep = ep;
  req.dp = dp;
  req.pp = pp;
  req.order = order;
  if (!collective.empty()) {
    const base::QuantityParse q = base::ParseQuantity(bytes_text, base::Dimension::kBytes);
    if (bytes_text.empty() || !q.value || *q.value <= 0) {
      err << "error: --bytes '" << bytes_text << "': "
          << (bytes_text.empty() ? "required with --collective" : q.value ? "must be > 0" : q.error)
          << (q.hint.empty() ? "" : "; " + q.hint) << " (e.g. --bytes 1GiB)\n";
      return kExitUsage;
    }
    req.bytes = *q.value;
  }
  const NetworkResult r = Network(req);
  if (!r.ok()) return Failed(r, err);
  text::PrintNetwork(r, fmt, out);
  return kExitOk;
}

}  // namespace orrery::cli
