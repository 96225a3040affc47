// `orrery report`: a scenario, a search or a `plan` question -> one
// self-contained HTML document (and a PDF of it). The work is
// orrery::Report (core/api/report.h); this file parses options and writes files.

#include <boost/program_options.hpp>

#include <cmath>
#include <fstream>

#include "cli/report_command.h"

#include "cli/api_support.h"
#include "cli/cli_common.h"
#include "core/api/report.h"
#include "core/base/csv.h"
#include "core/base/format.h"

namespace orrery::cli {

namespace po = boost::program_options;

namespace {

const char* kHelp = R"(orrery report: one command from a question to a document a budget holder reads.

usage:
  orrery report SCENARIO.yaml [--search] [--gpus N|A-B] [--compare OTHER.yaml...]
                              [--sweep STORE] --out report.html [--pdf report.pdf]
  orrery report --loss L | --budget FLOP | --gpus N --days D  --system PRESET
                [--deadline DAYS] [--law NAME|FILE] [--family NAME|FILE]
                --out report.html [--pdf report.pdf]

The HTML file opens offline: no network fetch, charts drawn by Chart.js
(libjs-chart.js) inlined into the file. --pdf prints the same document with
headless Chromium. Sections: the question and the answer; the recommended plan
and the runners-up (search top 5, why #1 wins, memory against capacity); where
the time goes (breakdown, the event engine's timeline of one step); scaling
over a GPU range; sensitivity (+-20 % on GEMM efficiency, bandwidths, price);
confidence from the nearest measured runs (orrery validate); alternatives
(--compare); assumptions with their sources, the version and the command.

--gpus A-B searches and scales over A, 2A, 4A, ... up to B (and B). Without
--search the scenario's own plan is reported and the scaling section searches
the best plan at each count around it.

Exit status: 0 the report was written; 1 invalid input or no feasible plan
(the document, which says why, is still written); 2 usage error.

Examples:
  orrery report configs/scenarios/llama3-70b-h100.yaml --search --gpus 512-16384 --out r.html
  orrery report llama3-70b-h100 --search --price-per-gpu-hour 2.5 --compare configs/scenarios/gpt3-175b-a100.yaml --out r.html --pdf r.pdf
  orrery report --loss 2.0 --law epoch --system dgx-h100-superpod --deadline 90 --max-gpus 16384 --price-per-gpu-hour 2.5 --out plan.html

options)";

// A number, or a quantity string the planner's options accept ("1e24", "90").
bool Number(const std::string& text, const char* option, double& out, std::ostream& err) {
  if (!base::ParseDouble(text, &out) || out < 0) {
    err << "error: " << option << ": expected a number >= 0, got '" << text << "'\n";
    return false;
  }
  return true;
}

bool WriteFile(const std::string& path, const std::string& text, std::ostream& err) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) {
    err << "error: cannot write " << path << "\n";
    return false;
  }
  return true;
}

}  // namespace

int RunReport(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(kHelp);
  std::string sweep, pue;
  std::string scenario, gpus, out_file, pdf_file, json_file, objective = "time", price, validation;
  std::string loss, budget, days, deadline, law = "chinchilla", family = "llama", system;
  std::vector<std::string> compare, sets;
  int64_t max_gpus = 0;
  int threads = 0;
  size_t range_samples = 200;
  bool search = false;
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("scenario", po::value(&scenario), "scenario file or preset (also the first positional argument)")
    ("search", po::bool_switch(&search), "rank plans (top 5) instead of reporting the scenario's own")
    ("gpus", po::value(&gpus), "N or A-B: GPU counts to search and scale over (plan form: the GPU count)")
    ("objective", po::value(&objective), "search objective: time (default), cost, energy, tokens-per-dollar")
    ("compare", po::value(&compare)->multitoken(), "alternative scenarios, side by side")
    ("sweep", po::value(&sweep), "an `orrery sweep` result store: draw its axes (its scenario when none is given)")
    ("set", po::value(&sets), "override a key of the scenario, e.g. --set training.pp=8 (repeatable)")
    ("price-per-gpu-hour", po::value(&price), "USD per GPU-hour (default: the system preset's; none = not priced)")
    ("pue", po::value(&pue), "power usage effectiveness (default: the system preset's)")
    ("out,o", po::value(&out_file), "the HTML file to write")
    ("pdf", po::value(&pdf_file), "also print the report to this PDF (headless Chromium)")
    ("json", po::value(&json_file), "also write the report's numbers as JSON")
    ("validation", po::value(&validation), "measured runs for the confidence section (default validation/training_runs.csv)")
    ("threads", po::value(&threads), "search threads (default: every core)")
    ("loss", po::value(&loss), "plan form: target loss (nats/token)")
    ("budget", po::value(&budget), "plan form: training compute budget, FLOP")
    ("days", po::value(&days), "plan form, with --gpus N: train for this many days")
    ("deadline", po::value(&deadline), "plan form: finish within this many days (chooses the GPU count)")
    ("max-gpus", po::value(&max_gpus), "plan form: largest GPU count --deadline may choose")
    ("law", po::value(&law), "plan form: scaling-law preset or fit file (default chinchilla)")
    ("family", po::value(&family), "plan form: model family preset or file (default llama)")
    ("system", po::value(&system), "plan form: system preset or file")
    ("range-samples", po::value(&range_samples), "plan form: bootstrap replicates carried through (default 200)");
  // clang-format on
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "error: " << e.what() << " (see orrery report --help)\n";
    return kExitUsage;
  }
  if (vm.count("help")) {
    out << opts << "\n";
    return kExitOk;
  }
  if (out_file.empty()) {
    err << "error: missing --out report.html (see orrery report --help)\n";
    return kExitUsage;
  }
  const bool plan_form = vm.count("loss") || vm.count("budget") || vm.count("days");
  if (plan_form == (!scenario.empty() || !sweep.empty())) {
    err << "error: give a SCENARIO, or a plan question (--loss, --budget or --gpus N --days D with --system), "
           "not both (see orrery report --help)\n";
    return kExitUsage;
  }
  ReportRequest req;
  req.search = search;
  req.compare = compare;
  req.sets = sets;
  req.threads = threads;
  req.validation_csv = validation;
  if (!engine::ParseObjective(objective, req.objective)) {
    err << "error: --objective: expected time, cost, energy or tokens-per-dollar, got '" << objective << "'\n";
    return kExitUsage;
  }
  if (vm.count("price-per-gpu-hour") && !Number(price, "--price-per-gpu-hour", req.price_per_gpu_hour, err))
    return kExitUsage;
  if (vm.count("pue")) {
    if (!Number(pue, "--pue", req.pue, err)) return kExitUsage;
    if (req.pue < 1) {
      err << "error: --pue: a PUE is at least 1, got '" << pue << "'\n";
      return kExitUsage;
    }
  }
  if (plan_form) {
    report::PlanQuestion q;
    q.law = law;
    q.family = family;
    q.system = system;
    if (system.empty()) {
      err << "error: a plan question needs --system PRESET (orrery presets list shows them)\n";
      return kExitUsage;
    }
    auto& pr = q.request;
    pr.range_samples = range_samples;
    pr.max_gpus = max_gpus;
    const int goals = (vm.count("loss") ? 1 : 0) + (vm.count("budget") ? 1 : 0) + (vm.count("days") ? 1 : 0);
    if (goals != 1) {
      err << "error: give exactly one of --loss L, --budget FLOP, or --gpus N --days D\n";
      return kExitUsage;
    }
    if (!gpus.empty()) {
      double g = 0;
      if (!base::ParseDouble(gpus, &g) || g < 1 || g != std::floor(g)) {
        err << "error: --gpus: a plan question takes one GPU count, got '" << gpus << "'\n";
        return kExitUsage;
      }
      pr.gpus = static_cast<int64_t>(g);
    }
    if (vm.count("loss")) {
      pr.goal = engine::PlanGoal::kLoss;
      if (!Number(loss, "--loss", pr.target_loss, err)) return kExitUsage;
    } else if (vm.count("budget")) {
      pr.goal = engine::PlanGoal::kBudget;
      if (!Number(budget, "--budget", pr.budget_flops, err)) return kExitUsage;
    } else {
      pr.goal = engine::PlanGoal::kGpuDays;
      if (pr.gpus == 0) {
        err << "error: --days needs --gpus N\n";
        return kExitUsage;
      }
      if (!Number(days, "--days", pr.days, err)) return kExitUsage;
    }
    if (vm.count("deadline")) {
      if (!Number(deadline, "--deadline", pr.deadline_days, err)) return kExitUsage;
      if (pr.gpus > 0) {
        err << "error: give --gpus or --deadline, not both (the deadline chooses the GPU count)\n";
        return kExitUsage;
      }
    }
    req.plan = q;
  } else {
    req.scenario = scenario;
    req.sweep_store = sweep;
    if (!gpus.empty()) {
      std::string e;
      if (!report::ParseGpuRange(gpus, req.search_gpus, e)) {
        err << "error: " << e << "\n";
        return kExitUsage;
      }
      req.scaling_gpus = req.search_gpus;
      if (!search && req.search_gpus.size() == 1) req.scaling_gpus.clear();
    }
  }
  std::string command = "orrery report";
  for (const auto& a : args) command += " " + base::ShellQuote(a);
  req.command = command;

  err << "orrery report: searching plans, scaling and sensitivities (this takes a few seconds)...\n";
  const ReportResult r = Report(req);
  if (r.status == Status::kInvalidInput) return PrintFailure(r, err);
  if (r.html.empty()) {
    err << "error: " << r.reason << "\n";
    return kExitInvalid;
  }
  if (!WriteFile(out_file, r.html, err)) return kExitInvalid;
  if (!json_file.empty() && !WriteFile(json_file, r.json + "\n", err)) return kExitInvalid;
  out << "wrote " << out_file;
  if (!pdf_file.empty()) {
    std::string e;
    if (!report::PrintPdf(out_file, pdf_file, e)) {
      out << "\n";
      err << "error: " << e << "\n";
      return kExitInvalid;
    }
    out << " and " << pdf_file;
  }
  out << "\n" << r.model->answer << "\n";
  if (r.status == Status::kInfeasible) {
    err << "error: " << r.reason << "\n";
    return kExitInvalid;
  }
  return kExitOk;
}

}  // namespace orrery::cli
