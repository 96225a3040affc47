#pragma once
// Presentation of `orrery calibrate` results: table, CSV, JSON.

#include <ostream>

#include "cli/cli_common.h"
#include "core/api/calibrate.h"

namespace orrery::cli {

void PrintProfileSummary(const CalibrateProfileResult& r, Format fmt, std::ostream& out);
void PrintLayerCheck(const CheckLayerResult& r, Format fmt, std::ostream& out);
void PrintCalibrationRuns(const CalibrationRunsResult& r, Format fmt, std::ostream& out);
void PrintCalibrationCompare(const CalibrationCompareResult& r, const CalibrationCompareRequest& q, Format fmt,
                             std::ostream& out);

}  // namespace orrery::cli
