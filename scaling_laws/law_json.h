#pragma once
// JSON form of fitted laws and compute-optimal answers (schema documented in
// README.md "JSON output"). Residuals are log L_pred - log L per input run.
// Bootstrap blocks carry the intervals and every replicate (`samples`,
// index-aligned across parameters).

#include <nlohmann/json.hpp>

#include "scaling_laws/bootstrap.h"
#include "scaling_laws/chinchilla_law.h"
#include "scaling_laws/compute_optimal.h"
#include "scaling_laws/isoflop.h"
#include "scaling_laws/kaplan_law.h"
#include "scaling_laws/run_table.h"

namespace orrery::scaling_laws {

// `bootstrap` is optional (nullptr: no "intervals" key).
nlohmann::json ChinchillaFitToJson(const ChinchillaFit& fit, const RunTable& table,
                                   const BootstrapResult* bootstrap = nullptr);
nlohmann::json KaplanFitsToJson(const KaplanFit1D& n_fit, const KaplanFit1D& d_fit,
                                const KaplanFitND& nd_fit, const RunTable& table);
nlohmann::json IsoFlopFitToJson(const IsoFlopFit& fit, const BootstrapResult* bootstrap = nullptr);
nlohmann::json ComputeOptimumToJson(const ComputeOptimum& optimum);
nlohmann::json BootstrapToJson(const BootstrapResult& bootstrap);

}  // namespace orrery::scaling_laws
