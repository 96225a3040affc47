#pragma once
// Test support: the scaling-law data shipped in scaling_laws/data/ (MIT
// licensed; its README names origins and licences) and runs generated from a
// planted law with seeded noise. Data that may not be redistributed are not
// read by tests; `orrery validate --scaling-laws DIR` reproduces the published
// fits from them (reproduction.h).

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <string>

#include <Eigen/Dense>

#include "scaling_laws/chinchilla_law.h"
#include "scaling_laws/run_table.h"

namespace orrery::scaling_laws::testing {

// Path of data file `rel` ("porian2024/porian2024_fit_results.json") in
// scaling_laws/data/ of the source tree.
inline std::string DataFile(const std::string& rel) {
#ifdef ORRERY_SCALING_DATA_DIR
  return std::string(ORRERY_SCALING_DATA_DIR) + "/" + rel;
#else
  return rel;
#endif
}

// Standard normal deviates, the same on every platform: mt19937_64 is fully
// specified by the standard, std::normal_distribution is not, so the
// Box-Muller transform (Box & Muller 1958) is written out here.
class SeededNormal {
 public:
  explicit SeededNormal(std::uint64_t seed) : rng_(seed) {}
  double operator()() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    const double u1 = Uniform(), u2 = Uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * std::numbers::pi * u2);
    have_spare_ = true;
    return r * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  // (0, 1]: 53 random bits.
  double Uniform() { return (static_cast<double>(rng_() >> 11) + 1.0) * 0x1p-53; }
  std::mt19937_64 rng_;
  double spare_ = 0.0;
  bool have_spare_ = false;
};

// Standard errors of least squares in ln L at parameters `p` for the runs of
// `t` with noise sigma in ln L, in the order E, A, B, alpha, beta:
// sigma * sqrt(diag((J^T J)^-1)), J the Jacobian of ln L with respect to the
// parameters (Gauss-Newton; e.g. Seber & Wild 1989, Nonlinear Regression,
// Sec. 2.1).
inline Eigen::VectorXd LeastSquaresStandardErrors(const RunTable& t, const ChinchillaParams& p,
                                                  double sigma) {
  Eigen::MatrixXd J(t.points.size(), 5);
  for (size_t i = 0; i < t.points.size(); ++i) {
    const double n = t.points[i].params_n, d = t.points[i].tokens_d;
    const double pn = std::pow(n, -p.alpha), pd = std::pow(d, -p.beta);
    const double l = p.E + p.A * pn + p.B * pd;
    J.row(static_cast<Eigen::Index>(i)) << 1 / l, pn / l, pd / l, -p.A * pn * std::log(n) / l,
        -p.B * pd * std::log(d) / l;
  }
  const Eigen::MatrixXd cov = (J.transpose() * J).inverse();
  return sigma * cov.diagonal().cwiseSqrt();
}

}  // namespace orrery::scaling_laws::testing
