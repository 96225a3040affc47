#pragma once
// Calibration as a library call: run a probe on this machine (or read probe
// records), fit a device profile from them (hardware/calibration/
// profile_fit.h), check it the way `orrery check` reads devices, write it,
// keep the raw records in a SQLite database; and check a CPU profile
// against a measured GPT layer (validation/cpu_layer/). Stands on
// core/estimate (device presets) and hardware/calibration; the api
// (core/api/calibrate.h) is its door.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "cpu_probe.h"
#include "profile_fit.h"

namespace orrery::calibration {

// How a profile is fitted from records, and where it goes.
struct ProfileRequest {
  std::string base;                 // device preset name or file; empty: CPU records describe themselves
  std::string gemm_dtype;           // empty: bf16 when measured, else fp32
  std::optional<double> overhead_s; // unset: measured from the smallest copies
  int bins_per_decade = 2;
  std::vector<double> gemm_bins;    // fixed GEMM bin centres (FLOP) instead
  TimeStatistic statistic = TimeStatistic::kMedian;
  std::string db;                   // also store the raw records here (SQLite)
  std::string name;                 // device name in the profile
  double memory_capacity = 0;       // bytes; 0: the base's or the probe's
  std::string out_path;             // profile to write ("-": not written to a file)
};

struct ProfileOutcome {
  bool usage_error = false;           // the request cannot be used as given (error says why)
  std::string error;                  // set on failure
  base::Diagnostics diagnostics;      // the base device, or the fitted profile's checks
  FitResult fit;
  std::string profile_yaml;           // the profile written
  std::int64_t run_id = 0;            // database run (0: none)
  std::vector<std::string> notes;     // warnings and notes for the user
};

// Fits, checks, writes the profile and stores the records. `source` names
// where the records came from (a file, or "in-process CPU probe").
bool FitAndWriteProfile(const ProbeFile& probe, const std::string& source, const ProfileRequest& req,
                        ProfileOutcome& out);

// Runs a probe: "cpu" in-process, or "cuda:N" through orrery_cuda_probe.
struct ProbeRequest {
  std::string device;        // cpu or cuda:N
  bool full = false;         // full grids (default quick)
  int threads = 0;           // CPU threads (0 = all)
  std::string clock = "wall";// wall, thread_cpu, auto (thread_cpu with one thread)
  std::string probe_out;     // keep the raw records (JSON) here
  std::string probe_path;    // orrery_cuda_probe (default: the one built with orrery)
  std::string base;          // required for cuda
  std::string command_line;  // recorded in the probe header
};

// Runs the probe; `source` names the records. `status` messages ("probing
// the CPU ...") go to `say`.
bool RunProbe(const ProbeRequest& req, ProbeFile& probe, std::string& source, bool& usage_error,
              std::string& error, const std::function<void(const std::string&)>& say = {});

// "auto" resolves to thread CPU time for one thread, wall time otherwise.
bool ParseClock(const std::string& text, int threads, TimerClock& out, std::string& error);

// Loads a device preset name or a YAML file with a `device:` document.
bool LoadBaseDevice(const std::string& base, hardware::DeviceSpec& out, std::string& description,
                    base::Diagnostics& d);

// One pass of one layer: measured and predicted seconds. GEMM shares are
// fractions of the pass; negative when not known.
struct LayerRow {
  std::string shape, pass;
  double measured = 0, predicted = 0, error_pct = 0, gemm_measured = -1, gemm_predicted = -1;
};

struct LayerCheckRequest {
  std::string profile;                // CPU profile; empty: calibrate this CPU now
  std::vector<std::string> shapes;    // B,S,H,A; empty: 1,256,512,8 1,512,768,12 4,128,1024,16
  int threads = 1;
  std::string clock = "auto";
  int reps = 7;
  std::string statistic = "min";      // min or median
  double max_error_pct = 25;
  std::string probe_out;
  std::string measured;               // orrery.gpu_layer.v1 JSON measured elsewhere (needs profile)
};

struct LayerCheck {
  std::string profile_name;
  TimerClock clock = TimerClock::kWall;
  std::vector<LayerRow> rows;
  double worst_abs_error_pct = 0;
  bool passed = false;
};

// Status messages ("timing layer ...") go to `say`. usage_error: the request
// is malformed (error says why); otherwise a failure is invalid input.
bool CheckLayer(const LayerCheckRequest& req, LayerCheck& out, bool& usage_error, std::string& error,
                base::Diagnostics& d, const std::function<void(const std::string&)>& say = {});

}  // namespace orrery::calibration
