#include "scaling_laws/reproduction.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/csv.h"
#include "scaling_laws/bootstrap.h"
#include "scaling_laws/chinchilla_law.h"
#include "scaling_laws/compute_optimal.h"
#include "scaling_laws/isoflop.h"
#include "scaling_laws/law_presets.h"
#include "scaling_laws/run_table.h"

namespace orrery::scaling_laws {

size_t ReproductionReport::Failed() const {
  return static_cast<size_t>(
      std::count_if(checks.begin(), checks.end(), [](const ReproductionCheck& c) { return !c.pass; }));
}

namespace {

namespace fs = std::filesystem;

class Checks {
 public:
  explicit Checks(ReproductionReport& r) : r_(r) {}
  void Relative(std::string name, std::string reference, double published, double ours, double tol) {
    const bool pass = std::abs(ours - published) <= tol * std::abs(published);
    Add(std::move(name), std::move(reference), published, ours,
        "within " + Percent(tol) + " %", pass);
  }
  void Absolute(std::string name, std::string reference, double published, double ours, double tol) {
    std::ostringstream os;
    os << "within +-" << tol;
    Add(std::move(name), std::move(reference), published, ours, os.str(),
        std::abs(ours - published) <= tol);
  }
  void AtMost(std::string name, std::string reference, double published, double ours, double factor,
              std::string rule) {
    Add(std::move(name), std::move(reference), published, ours, std::move(rule),
        ours <= published * factor);
  }
  void AtLeast(std::string name, std::string reference, double published, double ours,
               double factor, std::string rule) {
    Add(std::move(name), std::move(reference), published, ours, std::move(rule),
        ours > published * factor);
  }

 private:
  static std::string Percent(double tol) {
    std::ostringstream os;
    os << tol * 100;
    return os.str();
  }
  void Add(std::string name, std::string reference, double published, double ours,
           std::string rule, bool pass) {
    r_.checks.push_back({std::move(name), std::move(reference), published, ours, std::move(rule), pass});
  }
  ReproductionReport& r_;
};

base::Result<nlohmann::json> ReadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return base::Error{"cannot read '" + path + "'"};
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return base::Error{path + ": not valid JSON"};
  return j;
}

// Besiroglu et al. 2024 (arXiv:2404.10102) drop the 5 highest-loss points of
// the 245 digitised ones; 240 remain.
RunTable DropFiveHighestLosses(RunTable t) {
  std::vector<RunPoint> pts = t.points;
  std::stable_sort(pts.begin(), pts.end(),
                   [](const RunPoint& a, const RunPoint& b) { return a.loss > b.loss; });
  const size_t drop = std::min<size_t>(5, pts.size());
  t.points.assign(pts.begin() + static_cast<std::ptrdiff_t>(drop), pts.end());
  return t;
}

double Num(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : std::nan("");
}

}  // namespace

base::Result<ReproductionReport> ReproducePublishedFits(const std::string& data_dir,
                                                        const ReproductionOptions& options) {
  if (!fs::is_directory(data_dir))
    return base::Error{"scaling-law data directory '" + data_dir + "' not found"};
  auto catalog = LoadPresetCatalog(options.catalog_path.empty() ? DefaultPresetCatalogPath()
                                                                 : options.catalog_path);
  if (!catalog.ok()) return catalog.error();
  ReproductionReport report;
  report.data_dir = data_dir;
  Checks check(report);
  auto path = [&](const char* rel) { return (fs::path(data_dir) / rel).string(); };
  auto have = [&](const char* rel) {
    if (fs::exists(path(rel))) return true;
    report.missing.push_back(rel);
    return false;
  };

  // --- Chinchilla Approach 3 on Epoch's points (Besiroglu et al. 2024) ------
  const char* kPoints = "epoch_chinchilla/chinchilla_fig4_points_NDCL.csv";
  const char* kGolden = "reference/epoch_refit_golden.json";
  const bool have_points = have(kPoints), have_golden = have(kGolden);  // both listed when missing
  if (have_points && have_golden) {
    auto all = LoadRuns(path(kPoints), {});
    if (!all.ok()) return all.error();
    auto golden_file = ReadJson(path(kGolden));
    if (!golden_file.ok()) return golden_file.error();
    const nlohmann::json g = (*golden_file)["sum_objective_fit"];
    const std::string ref = "Epoch refit, sum Huber, 240 points (" + std::string(kGolden) + ")";
    const RunTable t = DropFiveHighestLosses(*all);

    // Summed Huber objective, L-BFGS from the full 4500-start Hoffmann grid:
    // objective within 1e-4 of the golden optimum, E, alpha, beta within
    // 0.5 %, A and B within 2 % (the objective is flat along A and B).
    auto fit = FitChinchillaHuber(t);
    if (!fit.ok()) return fit.error();
    const ChinchillaParams& p = fit->params;
    check.AtMost("epoch-240.huber.objective", ref, Num(g, "objective"), fit->objective, 1 + 1e-4,
                 "<= published x (1 + 1e-4)");
    check.Relative("epoch-240.huber.E", ref, Num(g, "E"), p.E, 0.005);
    check.Relative("epoch-240.huber.alpha", ref, Num(g, "alpha"), p.alpha, 0.005);
    check.Relative("epoch-240.huber.beta", ref, Num(g, "beta"), p.beta, 0.005);
    check.Relative("epoch-240.huber.A", ref, Num(g, "A"), p.A, 0.02);
    check.Relative("epoch-240.huber.B", ref, Num(g, "B"), p.B, 0.02);

    // Variable projection lands on the same optimum: exponents and E within
    // 1 %, objective within 0.5 %.
    auto vp = FitChinchillaVarPro(t);
    if (!vp.ok()) return vp.error();
    check.Relative("epoch-240.varpro.alpha", ref, Num(g, "alpha"), vp->params.alpha, 0.01);
    check.Relative("epoch-240.varpro.beta", ref, Num(g, "beta"), vp->params.beta, 0.01);
    check.Relative("epoch-240.varpro.E", ref, Num(g, "E"), vp->params.E, 0.01);
    check.AtMost("epoch-240.varpro.objective", ref, Num(g, "objective"), vp->objective, 1.005,
                 "<= published x 1.005");

    // Besiroglu et al. 2024 Sec. 3: a MEAN Huber objective with a default
    // stopping rule halts early. Our analogue (LBFGSpp defaults, 90 starts)
    // must end worse than the optimum by more than 1e-3.
    HuberFitOptions mean;
    mean.average = true;
    mean.solver_defaults = true;
    mean.max_starts = 90;
    auto early = FitChinchillaHuber(t, mean);
    if (!early.ok()) return early.error();
    check.AtLeast("epoch-240.mean-objective-stops-early", ref + ": optimum objective",
                  Num(g, "objective"), early->objective, 1 + 1e-3, "> published x (1 + 1e-3)");

    // All 245 points: Besiroglu et al. 2024 Table 3 with outliers (preset
    // besiroglu2024_refit_with_outliers, secondary notes). Tolerances reflect
    // the notes' rounding and the flat A, B directions.
    auto with = catalog->Find("besiroglu2024_refit_with_outliers");
    if (!with.ok()) return with.error();
    auto want = with->Chinchilla();
    if (!want.ok()) return want.error();
    HuberFitOptions best200;
    best200.max_starts = 200;
    auto fit245 = FitChinchillaHuber(*all, best200);
    if (!fit245.ok()) return fit245.error();
    const std::string ref245 = "Besiroglu et al. 2024 Table 3, with outliers (245 points)";
    check.Relative("epoch-245.E", ref245, want->E, fit245->params.E, 0.01);
    check.Relative("epoch-245.beta", ref245, want->beta, fit245->params.beta, 0.01);
    check.Relative("epoch-245.alpha", ref245, want->alpha, fit245->params.alpha, 0.02);
    check.Relative("epoch-245.B", ref245, want->B, fit245->params.B, 0.05);
    check.Relative("epoch-245.A", ref245, want->A, fit245->params.A, 0.10);

    // Bootstrap: our 95 % intervals overlap the reference's 400-resample
    // intervals; alpha's contains the published point 0.3473.
    if (options.bootstrap_resamples > 0) {
      const ChinchillaParams point{Num(g, "E"), Num(g, "A"), Num(g, "B"), Num(g, "alpha"),
                                   Num(g, "beta")};
      auto b = BootstrapChinchilla(t, point, options.bootstrap_resamples, 20240416);
      if (!b.ok()) return b.error();
      // The reference file's 400-resample intervals: the one key that starts
      // "bootstrap_400_resamples".
      nlohmann::json gi = nlohmann::json::object();
      for (const auto& [key, value] : golden_file->items())
        if (key.rfind("bootstrap_400_resamples", 0) == 0) gi = value;
      for (size_t k = 0; k < b->names.size(); ++k) {
        const std::string& name = b->names[k];
        if (!gi.contains(name) || !gi[name].is_array() || gi[name].size() != 2) continue;
        const double lo = gi[name][0], hi = gi[name][1];
        const Interval& ours = b->intervals[k];
        // Overlap: |centre difference| <= sum of half widths.
        const double centre = (lo + hi) / 2, ours_centre = (ours.lo + ours.hi) / 2;
        check.Absolute("epoch-240.bootstrap." + name + ".centre", ref + ": 95 % interval centre",
                       centre, ours_centre, (hi - lo) / 2 + (ours.hi - ours.lo) / 2);
      }
    }
  }

  // --- Closed-form compute-optimal allocations (Hoffmann et al. 2022 Eq. 4)
  // against reference values computed from the published laws: 0.1 %.
  const char* kOptima = "reference/compute_optimal_reference_values.csv";
  if (have(kOptima)) {
    auto table = base::ReadCsvFile(path(kOptima));
    if (!table.ok()) return table.error();
    const int set = table->ColumnIndex("param_set"), cc = table->ColumnIndex("C_flops"),
              nn = table->ColumnIndex("N_opt"), dd = table->ColumnIndex("D_opt"),
              ll = table->ColumnIndex("L_opt");
    if (set < 0 || cc < 0 || nn < 0 || dd < 0 || ll < 0)
      return base::Error{path(kOptima) + ": needs columns param_set, C_flops, N_opt, D_opt, L_opt"};
    double worst_n = 0, worst_d = 0, worst_l = 0;
    for (const auto& row : table->rows) {
      auto preset = catalog->Find(row.cells[static_cast<size_t>(set)]);
      if (!preset.ok()) return preset.error();
      auto law = preset->Chinchilla();
      if (!law.ok()) return law.error();
      double c = 0, n = 0, d = 0, l = 0;
      if (!base::ParseDouble(row.cells[static_cast<size_t>(cc)], &c) ||
          !base::ParseDouble(row.cells[static_cast<size_t>(nn)], &n) ||
          !base::ParseDouble(row.cells[static_cast<size_t>(dd)], &d) ||
          !base::ParseDouble(row.cells[static_cast<size_t>(ll)], &l))
        return base::Error{path(kOptima) + ":" + std::to_string(row.line) + ": not a number"};
      auto o = ComputeOptimalClosedForm(*law, c);
      if (!o.ok()) return o.error();
      worst_n = std::max(worst_n, std::abs(o->params_n / n - 1));
      worst_d = std::max(worst_d, std::abs(o->tokens_d / d - 1));
      worst_l = std::max(worst_l, std::abs(o->loss / l - 1));
    }
    const std::string ref = std::to_string(table->rows.size()) + " rows of " + kOptima +
                            " (largest relative difference)";
    check.Absolute("compute-optimal.N_opt", ref, 0.0, worst_n, 1e-3);
    check.Absolute("compute-optimal.D_opt", ref, 0.0, worst_d, 1e-3);
    check.Absolute("compute-optimal.L_opt", ref, 0.0, worst_l, 1e-3);
  }

  // --- Llama 3 Herd (arXiv:2407.21783) Sec. 3.2.1 / Fig. 3: D*(C) = 0.299
  // C^0.537 fitted to the Fig. 2 IsoFLOP minima; the digitised points give
  // the exponent within 0.03.
  const char* kLlama = "llama3_isoflop/llama3_fig2_isoflops_points.csv";
  if (have(kLlama)) {
    auto runs = LoadRuns(path(kLlama), {});
    if (!runs.ok()) return runs.error();
    auto fit = FitIsoFlop(*runs);
    if (!fit.ok()) return fit.error();
    check.Absolute("llama3.isoflop.tokens-exponent", "Llama 3 Herd Sec. 3.2.1: D* = 0.299 C^0.537",
                   0.537, fit->tokens_fit.exponent, 0.03);
    check.Absolute("llama3.isoflop.budgets", "Llama 3 Herd Fig. 2: 10 compute budgets", 10,
                   static_cast<double>(fit->budgets.size()), 0);
  }
  return report;
}

}  // namespace orrery::scaling_laws
