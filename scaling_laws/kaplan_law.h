#pragma once
// Kaplan et al. 2020 (arXiv:2001.08361) loss laws and their fits.
//
//   L(N)    = (N_c / N)^alpha_N                          Eq. 1.1
//   L(D)    = (D_c / D)^alpha_D                          Eq. 1.2
//   L(N, D) = [ (N_c / N)^(alpha_N / alpha_D) + D_c / D ]^alpha_D   Eq. 1.5
//
// Kaplan's N counts non-embedding parameters; the fits here take whatever N
// the data has. All fits are least squares on log L (Kaplan et al. do not
// state their loss function; log space makes each 1-D law a straight line).

#include <vector>
#include <string>

#include "core/base/result.h"
#include "scaling_laws/run_table.h"

namespace orrery::scaling_laws {

struct PowerLaw1D {  // L = (x_c / x)^exponent
  double scale = 0.0;     // N_c or D_c
  double exponent = 0.0;  // alpha_N or alpha_D
  double Loss(double x) const;
};

struct KaplanNDParams {
  double n_c = 0.0, d_c = 0.0, alpha_n = 0.0, alpha_d = 0.0;
  double Loss(double params_n, double tokens_d) const;  // Eq. 1.5
};

struct KaplanFit1D {
  PowerLaw1D law;
  double rms_log_residual = 0.0;
  std::vector<double> residuals;  // log L_pred - log L
  std::vector<std::string> warnings;
};
struct KaplanFitND {
  KaplanNDParams law;
  double rms_log_residual = 0.0;
  std::vector<double> residuals;
  std::vector<std::string> warnings;
};

// L(N): uses only N and L. Errors: < 3 points or a single N value.
base::Result<KaplanFit1D> FitKaplanN(const RunTable& table);
// L(D): uses only D and L.
base::Result<KaplanFit1D> FitKaplanD(const RunTable& table);
// L(N, D): L-BFGS on squared log residuals, started from a small grid.
base::Result<KaplanFitND> FitKaplanND(const RunTable& table);

}  // namespace orrery::scaling_laws
