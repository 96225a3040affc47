#include "profile_yaml.h"

#include <cstdio>
#include <utility>

#include "core/base/quantity.h"

namespace orrery::calibration {
namespace {

using base::Dimension;
using base::FormatNumber;
using base::FormatQuantity;

// A YAML double-quoted scalar: backslash, quote and control characters escaped.
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string CurveYaml(const hardware::Curve& c, Dimension x_dim) {
  std::string out = "[";
  for (size_t i = 0; i < c.x.size(); ++i) {
    if (i) out += ", ";
    out += "[" + FormatQuantity(c.x[i], x_dim) + ", " + FormatNumber(c.y[i], 3) + "]";
  }
  return out + "]";
}

std::string PointsText(const std::vector<CurvePoint>& points, Dimension x_dim) {
  std::string out;
  for (const CurvePoint& p : points) {
    if (!out.empty()) out += ", ";
    out += FormatQuantity(p.size, x_dim) + ": " + FormatNumber(p.efficiency, 3) + " (" +
           std::to_string(p.records) + ")";
  }
  return out.empty() ? "none" : out;
}

std::string BinsText(const BinSpec& b, Dimension x_dim) {
  if (b.centres.empty()) return std::to_string(b.per_decade) + " bins per decade";
  std::string out = "bins at";
  for (double c : b.centres) out += " " + FormatQuantity(c, x_dim);
  return out;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string DeviceProfileYaml(const hardware::DeviceSpec& device,
                              const std::vector<std::string>& comments) {
  std::string out;
  for (const std::string& line : comments) {
    // One comment line per line of text.
    size_t start = 0;
    while (start <= line.size()) {
      const size_t end = line.find('\n', start);
      const std::string piece = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
      out += piece.empty() ? "#\n" : "# " + piece + "\n";
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  out += "device:\n";
  for (const auto& field : hardware::DeviceSchema().fields()) {
    const base::ParamValue v = field.load(device);
    std::string text = base::FormatParam(field.info, v);
    if (field.info.type == base::ParamType::kString) text = Quoted(text);
    out += "  " + field.info.key + ": " + text + "\n";
  }
  if (!device.gemm_efficiency.empty())
    out += "  gemm_efficiency: " + CurveYaml(device.gemm_efficiency, Dimension::kFlops) + "\n";
  if (!device.gemm_efficiency_fp8.empty())
    out += "  gemm_efficiency_fp8: " + CurveYaml(device.gemm_efficiency_fp8, Dimension::kFlops) + "\n";
  if (!device.gemm_efficiency_mxfp8.empty())
    out += "  gemm_efficiency_mxfp8: " + CurveYaml(device.gemm_efficiency_mxfp8, Dimension::kFlops) + "\n";
  if (!device.gemm_efficiency_fp4.empty())
    out += "  gemm_efficiency_fp4: " + CurveYaml(device.gemm_efficiency_fp4, Dimension::kFlops) + "\n";
  if (!device.memory_efficiency.empty())
    out += "  memory_efficiency: " + CurveYaml(device.memory_efficiency, Dimension::kBytes) + "\n";
  // The attention curves are not measured by the probes: the base's carry over.
  const std::pair<const char*, const hardware::Curve*> attention[] = {
      {"flash_attention_length_factor", &device.flash_attention_length_factor},
      {"flash_attention_bwd_length_factor", &device.flash_attention_bwd_length_factor},
      {"flash2_attention_length_factor", &device.flash2_attention_length_factor},
      {"flash2_attention_bwd_length_factor", &device.flash2_attention_bwd_length_factor}};
  for (const auto& [key, curve] : attention)
    if (!curve->empty()) out += std::string("  ") + key + ": " + CurveYaml(*curve, Dimension::kDimensionless) + "\n";
  return out;
}

std::vector<std::string> DescribeFit(const FitResult& fit, const ProbeFile& probe,
                                     const std::string& probe_source,
                                     const std::string& base_description,
                                     const FitOptions& options) {
  const ProbeHeader& h = probe.header;
  const hardware::DeviceSpec& d = fit.device;
  const char* stat = options.statistic == TimeStatistic::kMin ? "minimum" : "median";
  std::vector<std::string> out;
  out.push_back("Device profile calibrated by `orrery calibrate` (hardware/calibration/profile_fit.h");
  out.push_back("says how each number is derived). Measured by the " + h.probe + " probe, " + h.mode +
                " mode, on \"" + h.device + "\", host \"" + h.host + "\", " + std::to_string(h.threads) +
                " thread(s), " + h.date_utc + ":");
  out.push_back("  " + h.command_line);
  out.push_back("Records: " + probe_source + " (" + std::to_string(probe.records.size()) +
                " records; the " + stat + " of each record's samples is its time).");
  out.push_back("Base: " + base_description + ". Keys not named below are the base's.");
  if (options.measure_peaks) {
    out.push_back("peak_fp32: the best fp32 GEMM rate measured, " +
                  FormatQuantity(d.peak_fp32, Dimension::kFlopRate) + ".");
    const std::string ext = HeaderExtra(h, "bf16_extensions");
    out.push_back("peak_bf16: the same figure as a STAND-IN, not a bf16 measurement: the probe times");
    out.push_back("  no bf16 GEMM (Eigen has no bf16 GEMM kernel). This CPU's bf16 extensions: " +
                  (ext.empty() ? std::string("not recorded") : ext) + ".");
    out.push_back("memory_bandwidth: the best copy/scale/triad rate with traffic beyond twice the");
    out.push_back("  last-level cache (" + FormatQuantity(fit.cache_bytes, Dimension::kBytes) +
                  "), STREAM counting (write-allocate traffic not counted).");
  }
  if (fit.overhead_measured) {
    out.push_back("kernel_overhead: median over " + Join(options.memory_kinds) +
                  " of [t - bytes / " + FormatQuantity(fit.best_memory_rate, Dimension::kBandwidth) +
                  "] over its overhead-dominated sizes.");
  } else {
    out.push_back("kernel_overhead: given, " + FormatQuantity(fit.kernel_overhead_s, Dimension::kTime) +
                  " (not measured).");
  }
  if (fit.gemm_curve.empty()) {
    out.push_back("gemm_efficiency: the base's (no " + fit.gemm_dtype + " GEMM record qualified).");
  } else {
    out.push_back("gemm_efficiency: " + fit.gemm_dtype + " GEMMs, median per bin (" +
                  BinsText(options.gemm_bins, Dimension::kFlops) + ") of FLOP / ((t - " +
                  FormatQuantity(fit.kernel_overhead_s, Dimension::kTime) + ") x " +
                  FormatQuantity(fit.gemm_peak, Dimension::kFlopRate) + ");");
    out.push_back("  " + std::to_string(fit.gemm_used) + " of " + std::to_string(fit.gemm_records) +
                  " records used, " + std::to_string(fit.gemm_memory_bound) +
                  " left out as memory-bound (FLOP/byte < ridge " + FormatNumber(fit.ridge, 4) +
                  "). Points, size: efficiency (records):");
    out.push_back("  " + PointsText(fit.gemm_curve, Dimension::kFlops));
  }
  if (!fit.gemm_fp8_curve.empty()) {
    out.push_back("gemm_efficiency_fp8: the same over fp8_e4m3 GEMMs against " +
                  FormatQuantity(fit.fp8_peak, Dimension::kFlopRate) + " (ridge " + FormatNumber(fit.fp8_ridge, 4) +
                  "); " + std::to_string(fit.fp8_used) + " of " + std::to_string(fit.fp8_records) +
                  " records used, " + std::to_string(fit.fp8_memory_bound) + " memory-bound. Points:");
    out.push_back("  " + PointsText(fit.gemm_fp8_curve, Dimension::kFlops));
  } else if (!d.gemm_efficiency_fp8.empty()) {
    out.push_back("gemm_efficiency_fp8: the base's (no fp8_e4m3 GEMM record qualified).");
  }
  // The probes time no MXFP8 GEMM: the base's MXFP8 curve carries over.
  if (!d.gemm_efficiency_mxfp8.empty())
    out.push_back("gemm_efficiency_mxfp8: the base's (the probe times no MXFP8 GEMM).");
  if (fit.memory_curve.empty()) {
    out.push_back("memory_efficiency: the base's (no data-movement record beyond the cache).");
  } else {
    out.push_back("memory_efficiency: " + Join(options.memory_kinds) + ", median per bin (" +
                  BinsText(options.memory_bins, Dimension::kBytes) +
                  ") of bytes / ((t - kernel_overhead) x memory_bandwidth);");
    out.push_back("  " + std::to_string(fit.memory_used) + " records used, " +
                  std::to_string(fit.memory_cache_resident) +
                  " left out as cache-resident (traffic < 2 x " +
                  FormatQuantity(fit.cache_bytes, Dimension::kBytes) + "). Points:");
    out.push_back("  " + PointsText(fit.memory_curve, Dimension::kBytes));
  }
  return out;
}

bool WriteTextFile(const std::string& path, const std::string& text, std::string* error) {
  std::FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (!f) {
    if (error) *error = "cannot open '" + path + "' for writing";
    return false;
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = path == "-" ? std::fflush(f) == 0 : std::fclose(f) == 0;
  if (!(ok && closed)) {
    if (error) *error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace orrery::calibration
