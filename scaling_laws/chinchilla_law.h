#pragma once
// The Chinchilla parametric loss law and its fitters.
//
//   L(N, D) = E + A / N^alpha + B / D^beta          Hoffmann et al. 2022,
//                                                   arXiv:2203.15556, Eq. 2
//
// Fitted as in Hoffmann et al. 2022 Sec. 3.3 / App. D.2 and the Epoch AI
// replication (Besiroglu et al. 2024, arXiv:2404.10102): with a = log A,
// b = log B, e = log E,
//
//   min  sum_i Huber_delta( LSE(a - alpha log N_i, b - beta log D_i, e) - log L_i )
//
// delta = 1e-3, L-BFGS from a grid of initialisations, best result kept.
// The SUM matters: Besiroglu et al. 2024 (Sec. 3) found that Hoffmann's
// implementation effectively stopped early; averaging divides the gradient by
// the number of points and default tolerances then stop short of the optimum.

#include <string>
#include <vector>

#include "core/base/result.h"
#include "scaling_laws/run_table.h"

namespace orrery::scaling_laws {

struct ChinchillaParams {
  double E = 0.0;      // irreducible loss (nats/token)
  double A = 0.0;      // parameter-term coefficient
  double B = 0.0;      // data-term coefficient
  double alpha = 0.0;  // parameter exponent
  double beta = 0.0;   // data exponent

  // Eq. 2 of Hoffmann et al. 2022. n, d > 0.
  double Loss(double params_n, double tokens_d) const;
};

// Grid of starting points over (a = log A, b = log B, e = log E, alpha, beta).
struct InitGrid {
  std::vector<double> a, b, e, alpha, beta;
  size_t size() const { return a.size() * b.size() * e.size() * alpha.size() * beta.size(); }

  // Hoffmann et al. 2022 App. D.2 grid as used by Besiroglu et al. 2024:
  // alpha, beta in {0, 0.5, ..., 2}, e in {-1, -0.5, ..., 1},
  // a, b in {0, 5, ..., 25}: 5*5*5*6*6 = 4500 starts.
  static InitGrid Hoffmann();
};

struct HuberFitOptions {
  double huber_delta = 1e-3;
  // false: SUM over points (Hoffmann/Epoch, the right choice).
  // true: MEAN over points — kept only to demonstrate the early-stopping bias.
  bool average = false;
  InitGrid grid = InitGrid::Hoffmann();
  // 0: run L-BFGS from every grid point. K > 0: evaluate the objective at
  // every grid point and run L-BFGS only from the K best (much faster; on the
  // Epoch data it finds the same optimum).
  size_t max_starts = 0;
  // Stopping rule. Tight by default (the golden fit used ftol 1e-15, gtol
  // 1e-12). With `solver_defaults` the LBFGSpp defaults (relative gradient
  // norm 1e-5) are used instead, as an analogue of scipy's defaults.
  bool solver_defaults = false;
  double gradient_tolerance = 1e-12;
  double objective_tolerance = 1e-15;
  int max_iterations = 2000;
  // Objective evaluations allowed over all starts together. Points that do
  // not determine the law can send every start to max_iterations with long
  // line searches (minutes); past this budget the fit stops with an error.
  size_t max_evaluations = 20'000'000;
};

struct ChinchillaFit {
  ChinchillaParams params;
  std::string method;              // "huber-lbfgs" or "varpro-nnls"
  double objective = 0.0;          // SUM Huber objective at params (always the sum)
  std::vector<double> residuals;   // log L_pred - log L, one per point, input order
  size_t starts = 0;               // optimiser starts tried
  std::vector<std::string> warnings;
};

// Summed (or mean) Huber objective of `params` on `table` (log-loss residuals).
double ChinchillaObjective(const RunTable& table, const ChinchillaParams& params,
                           double huber_delta = 1e-3, bool average = false);

// Grid-started L-BFGS fit (see file comment). Errors: fewer than 5 points,
// no start produced a finite objective.
base::Result<ChinchillaFit> FitChinchillaHuber(const RunTable& table,
                                         const HuberFitOptions& options = {});

// One L-BFGS run from `start` (used by the bootstrap: refit each replicate
// from the point estimate, as Besiroglu et al. 2024 did).
base::Result<ChinchillaFit> FitChinchillaHuberFrom(const RunTable& table, const ChinchillaParams& start,
                                             const HuberFitOptions& options = {});

// Variable projection cross-check: for fixed (alpha, beta) the law is linear
// in (E, A, B) >= 0, so those are solved by non-negative least squares
// (iteratively reweighted with Huber weights on the relative residual, which
// approximates the log residual); the profile objective is then minimised
// over (alpha, beta) by a grid search followed by a compass refinement.
struct VarProOptions {
  double huber_delta = 1e-3;
  double exponent_min = 0.02;
  double exponent_max = 1.5;
  double grid_step = 0.02;
  double refine_tolerance = 1e-6;
  int irls_iterations = 25;
};
base::Result<ChinchillaFit> FitChinchillaVarPro(const RunTable& table, const VarProOptions& options = {});

}  // namespace orrery::scaling_laws
