// The options `orrery calibrate run` and `orrery calibrate import` share.

#include "cli/calibrate_options.h"

#include <sstream>

#include "core/base/quantity.h"

namespace orrery::cli {

namespace po = boost::program_options;
using base::Dimension;

void AddFitOptions(po::options_description& o, FitFlags& f) {
  o.add_options()("base", po::value(&f.base),
                  "device preset name (configs/devices/) or device YAML file supplying what the probe "
                  "does not measure; required for GPU records, optional for CPU records")(
      "gemm-dtype", po::value(&f.gemm_dtype),
      "GEMM datatype that sets gemm_efficiency: bf16, fp16, tf32, fp8_e4m3, fp32 (default: bf16 when "
      "measured, else fp32)")(
      "overhead", po::value(&f.overhead)->default_value("auto"),
      "per-kernel overhead to subtract: 'auto' (measured from the smallest copies) or a time, e.g. '4 us'")(
      "bins-per-decade", po::value(&f.bins_per_decade)->default_value(2),
      "curve points per factor of 10 in size (1..20)")(
      "gemm-bins", po::value(&f.gemm_bins),
      "fixed GEMM bin centres instead, e.g. '4 GFLOP,10 GFLOP,25 GFLOP'")(
      "statistic", po::value(&f.statistic)->default_value("median"),
      "time of a record: median, or min (better on a busy shared machine)")(
      "db", po::value(&f.db), "also store the raw records in this SQLite calibration database")(
      "name", po::value(&f.name), "device name in the profile (default: the base's, or the CPU model)")(
      "memory-capacity", po::value(&f.memory_capacity),
      "device memory for the profile, e.g. '64 GiB' (default: the base's, or the RAM the CPU probe recorded)")(
      "format", po::value(&f.format)->default_value("table"), "summary format: table | json | csv");
}

bool MakeProfileRequest(const FitFlags& f, const std::string& out_path, CalibrationProfileRequest& o,
                        std::ostream& err) {
  o.base = f.base;
  o.gemm_dtype = f.gemm_dtype;
  o.db = f.db;
  o.name = f.name;
  o.out_path = out_path;
  o.bins_per_decade = f.bins_per_decade;
  if (f.overhead != "auto") {
    const base::QuantityParse q = base::ParseQuantity(f.overhead, Dimension::kTime);
    if (!q.value) {
      err << "error: --overhead: '" << f.overhead << "': " << q.error << " (expected 'auto' or a time such as '4 us')\n";
      return false;
    }
    o.overhead_s = *q.value;
  }
  if (!f.gemm_bins.empty()) {
    std::stringstream ss(f.gemm_bins);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const base::QuantityParse q = base::ParseQuantity(item, Dimension::kFlops);
      if (!q.value) {
        err << "error: --gemm-bins: '" << item << "': " << q.error << " (expected sizes such as '4 GFLOP')\n";
        return false;
      }
      o.gemm_bins.push_back(*q.value);
    }
  }
  if (f.statistic == "median" || f.statistic == "min") {
    o.statistic = f.statistic == "min" ? calibration::TimeStatistic::kMin : calibration::TimeStatistic::kMedian;
  } else {
    err << "error: --statistic: unknown statistic '" << f.statistic << "' (one of: median, min)\n";
    return false;
  }
  if (!f.memory_capacity.empty()) {
    const base::QuantityParse q = base::ParseQuantity(f.memory_capacity, Dimension::kBytes);
    if (!q.value || !(*q.value > 0)) {
      err << "error: --memory-capacity: '" << f.memory_capacity << "': "
          << (q.value ? std::string("must be > 0") : q.error) << " (e.g. '64 GiB')\n";
      return false;
    }
    o.memory_capacity = *q.value;
  }
  return true;
}

}  // namespace orrery::cli
