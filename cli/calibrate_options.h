#pragma once
// The options `orrery calibrate run` and `orrery calibrate import` share:
// how the probe records become a profile (base device, datatype, overhead,
// binning, statistic, store, name, memory), parsed once for both.

#include <boost/program_options.hpp>
#include <ostream>
#include <string>

#include "core/api/calibrate.h"

namespace orrery::cli {

struct FitFlags {
  std::string base;
  std::string gemm_dtype;
  std::string overhead = "auto";
  int bins_per_decade = 2;
  std::string gemm_bins;
  std::string statistic = "median";
  std::string db;
  std::string name;
  std::string memory_capacity;
  std::string format = "table";
};

// Adds the shared options to `o`, bound to `f`.
void AddFitOptions(boost::program_options::options_description& o, FitFlags& f);

// Turns the flags into a profile request; prints the error and returns false.
bool MakeProfileRequest(const FitFlags& f, const std::string& out_path, CalibrationProfileRequest& o,
                        std::ostream& err);

}  // namespace orrery::cli
