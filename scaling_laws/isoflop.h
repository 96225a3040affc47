#pragma once
// IsoFLOP analysis, Chinchilla Approach 2 (Hoffmann et al. 2022,
// arXiv:2203.15556, Sec. 3.2): for each compute budget fit a parabola of loss
// against log N, take its vertex as the optimal N for that budget, then fit
// power laws N_opt = k_N C^a and D_opt = k_D C^b (D_opt = C / (k N_opt)).
// Hoffmann et al. report a = 0.49, b = 0.51 (Table 2).

#include <string>
#include <vector>

#include "core/base/result.h"
#include "scaling_laws/run_table.h"

namespace orrery::scaling_laws {

struct PowerLawFit {  // y = coefficient * x^exponent, least squares in log-log
  double coefficient = 0.0;
  double exponent = 0.0;
  double r_squared = 0.0;
};

// Errors: fewer than 2 points, non-positive values, no spread in x.
base::Result<PowerLawFit> FitPowerLaw(const std::vector<double>& x, const std::vector<double>& y);

struct IsoFlopBudget {
  double compute_flops = 0.0;  // mean C of the group
  size_t points = 0;
  double params_opt = 0.0;     // parabola vertex
  double tokens_opt = 0.0;     // C / (k N_opt)
  double loss_opt = 0.0;       // parabola value at the vertex
  double curvature = 0.0;      // d2L / d(ln N)^2 = 2 * quadratic coefficient
  bool extrapolated = false;   // vertex outside the sampled N range
  bool used = false;           // entered the power-law fits
};

struct IsoFlopFit {
  std::vector<IsoFlopBudget> budgets;
  PowerLawFit params_fit;   // N_opt = k C^a
  PowerLawFit tokens_fit;   // D_opt = k C^b
  std::vector<std::string> warnings;
};

struct IsoFlopOptions {
  double budget_tolerance = 0.02;   // runs whose C differ by < 2 % share a budget
  size_t min_points_per_budget = 3;
  double flops_per_param_token = 6.0;
  bool drop_extrapolated = false;   // leave budgets whose vertex lies outside the data
};

// Errors: fewer than 2 usable budgets.
base::Result<IsoFlopFit> FitIsoFlop(const RunTable& table, const IsoFlopOptions& options = {});

}  // namespace orrery::scaling_laws
