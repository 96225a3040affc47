#pragma once
// orrery::Calibrate*: measure this machine's kernels into a device profile,
// import probe records, check a CPU profile against a measured GPT layer,
// list and compare the probe runs of a calibration database. The work is
// core/calibration/ (and hardware/calibration/); `orrery calibrate` is the
// command-line face.
//
//   orrery::CalibrateImportRequest req;
//   req.probe_file = "hardware/calibration/measurements/h200/cuda_full_run1.json";
//   req.profile.base = "h200";  req.profile.out_path = "h200.yaml";
//   orrery::CalibrateProfileResult r = orrery::CalibrateImport(req);

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibration_db.h"
#include "core/api/common.h"
#include "core/calibration/calibrate.h"

namespace orrery {

using CalibrationProfileRequest = calibration::ProfileRequest;

// `orrery calibrate run`: probe this machine, fit, write the profile.
struct CalibrateRunRequest {
  calibration::ProbeRequest probe;    // device (cpu | cuda:N), grids, threads, clock
  CalibrationProfileRequest profile;  // base, fit options, out path, database
};

// `orrery calibrate import`: fit and write a profile from probe records.
struct CalibrateImportRequest {
  std::string probe_file;             // orrery.calibration.v1 JSON
  CalibrationProfileRequest profile;
};

struct CalibrateProfileResult : ResultBase {
  std::string profile_path;
  calibration::FitResult fit;
  std::int64_t db_run_id = 0;         // 0: not stored
  std::vector<std::string> notes;     // warnings and notes for the user
};

// Progress: stage "probe" while the probe runs (one unit). Status messages
// also go to `control.progress` as the stage text with done = total = 0.
CalibrateProfileResult CalibrateRun(const CalibrateRunRequest& request, const Control& control = {});
CalibrateProfileResult CalibrateImport(const CalibrateImportRequest& request);

// `orrery calibrate check-layer`.
using CheckLayerRequest = calibration::LayerCheckRequest;
struct CheckLayerResult : ResultBase {
  CheckLayerRequest request;          // as run (the statistic, tolerance, ...)
  calibration::LayerCheck check;      // rows, worst error, passed
};
// kInvalidInput with a reason when the worst error exceeds the tolerance.
CheckLayerResult CalibrateCheckLayer(const CheckLayerRequest& request, const Control& control = {});

// `orrery calibrate runs` and `compare`.
struct CalibrationRunsRequest {
  std::string db;
};
struct CalibrationRunsResult : ResultBase {
  std::vector<calibration::StoredRun> runs;
};
CalibrationRunsResult CalibrationRuns(const CalibrationRunsRequest& request);

struct CalibrationCompareRequest {
  std::string db;
  std::int64_t run_a = 0, run_b = 0;
  std::string kind;  // only records of this kind; empty: all
};
struct CalibrationCompareResult : ResultBase {
  std::vector<calibration::RecordComparison> rows;
};
CalibrationCompareResult CalibrationCompare(const CalibrationCompareRequest& request);

nlohmann::ordered_json ToJson(const CalibrateProfileResult& r);
nlohmann::ordered_json ToJson(const CheckLayerResult& r);
nlohmann::ordered_json ToJson(const CalibrationRunsResult& r);
nlohmann::ordered_json ToJson(const CalibrationCompareResult& r);

}  // namespace orrery
