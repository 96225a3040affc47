#pragma once
// Validation against measured inference runs (validation/inference_runs.csv):
// each row becomes a serving scenario (model preset, device preset on its
// system, tp/pp, precision, batch/input/output), is predicted with the
// inference estimator, and compared with every figure the row measured:
// time to first token, time per output token, output tokens/s (per GPU when
// the row says so). One ValidationRow per measured figure, so the report,
// aggregates and per-source groups are those of training validation.
// Rows it cannot model are kept as skipped with the reason.

#include <string>

#include "core/validation/validation.h"

namespace orrery::engine {

// Whether a CSV file's header has the inference columns (measured_ttft_ms,
// measured_tpot_ms or measured_tokens_per_s with input_len/output_len).
bool IsInferenceCsv(const std::string& csv_file);

ValidationReport ValidateInferenceCsv(const std::string& csv_file, const PresetStore& store,
                                      base::Diagnostics& diags);

}  // namespace orrery::engine
