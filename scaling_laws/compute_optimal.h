#pragma once
// Compute-optimal allocation of a training budget between parameters N and
// tokens D under a Chinchilla law L = E + A/N^alpha + B/D^beta.
//
// Budget model: C = k N D FLOP, k = 6 for dense training (forward 2 + backward
// 4 FLOP per parameter per token; Kaplan et al. 2020 Sec. 2.1). Pass the
// model's own FLOP per parameter per token as k when it differs.
//
// Closed form (Hoffmann et al. 2022, arXiv:2203.15556, Eq. 4 / App. D.2,
// written for general k):
//   G     = (alpha A / (beta B))^(1/(alpha+beta))
//   N_opt = G (C/k)^a,  D_opt = G^-1 (C/k)^b,  a = beta/(alpha+beta), b = alpha/(alpha+beta)
//
// Inference-aware optimum (Sardana et al. 2023, "Beyond Chinchilla-Optimal",
// arXiv:2401.00448, Sec. 2): for a target loss L* and an expected lifetime of
// D_inf inference tokens, minimise k_train N D_train + k_inf N D_inf subject
// to L(N, D_train) = L*, with k_train = 6 and k_inf = 2 by default.

#include "scaling_laws/chinchilla_law.h"
#include "core/base/result.h"

namespace orrery::scaling_laws {

struct ComputeOptimum {
  double compute_flops = 0.0;
  double params_n = 0.0;
  double tokens_d = 0.0;
  double tokens_per_param = 0.0;
  double loss = 0.0;          // L(N_opt, D_opt)
  double exponent_a = 0.0;    // N_opt ~ C^a (closed form only; 0 otherwise)
  double g = 0.0;             // G of Eq. 4 (closed form only)
};

// Errors: non-positive budget/k, non-positive A, B, alpha, beta.
base::Result<ComputeOptimum> ComputeOptimalClosedForm(const ChinchillaParams& law, double compute_flops,
                                                double flops_per_param_token = 6.0);

// The same optimum found numerically: golden-section search of
// L(N, C/(k N)) over log N (strictly convex in log N for positive A, B).
base::Result<ComputeOptimum> ComputeOptimalNumeric(const ChinchillaParams& law, double compute_flops,
                                             double flops_per_param_token = 6.0);

struct InferenceAwareOptimum {
  double target_loss = 0.0;
  double params_n = 0.0;
  double tokens_train = 0.0;
  double tokens_inference = 0.0;
  double training_flops = 0.0;
  double inference_flops = 0.0;
  double total_flops = 0.0;
};

// Sardana et al. 2023. With tokens_inference = 0 this is the cheapest
// training run reaching target_loss (the Chinchilla optimum for that loss).
// Errors: target_loss <= E (unreachable), negative inference tokens.
base::Result<InferenceAwareOptimum> InferenceAwareOptimal(const ChinchillaParams& law, double target_loss,
                                                    double tokens_inference,
                                                    double train_flops_per_param_token = 6.0,
                                                    double inference_flops_per_param_token = 2.0);

}  // namespace orrery::scaling_laws
