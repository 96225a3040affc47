#pragma once
// The record a calibration probe writes for one timed kernel, the header of a
// probe run, and the JSON writer both probes share.
//
// Dependency-free C++17 (no JSON library) so that the CUDA probe builds alone
// with nvcc on a bare GPU node. Reading the JSON back lives in
// probe_record_json.h, which uses nlohmann_json. The schema is documented in
// README.md ("JSON record schema"); bump kProbeSchema when it changes.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "sample_stats.h"

namespace orrery::calibration {

inline constexpr const char* kProbeSchema = "orrery.calibration.v1";

// One timed kernel. Times are per kernel call, in seconds; work is per call.
struct ProbeRecord {
  std::string kind;   // "gemm", "copy", "scale", "triad", "gelu", "softmax", "d2d_copy", ...
  std::string dtype;  // "fp64", "fp32", "tf32", "bf16", "fp16", "fp8_e4m3"
  // Named extents, in order: gemm {m, n, k}; streaming kernels {bytes}
  // (the size of one buffer) or {elements}; softmax {rows, cols}.
  std::vector<std::pair<std::string, std::int64_t>> shape;
  std::int64_t reps = 0;   // timed samples
  std::int64_t inner = 1;  // kernel calls per sample; times below are divided by it
  double median_s = 0.0;
  double p10_s = 0.0;
  double p90_s = 0.0;
  double min_s = 0.0;
  double max_s = 0.0;
  double flop = 0.0;   // floating-point operations per call (0: not counted)
  double bytes = 0.0;  // bytes read plus bytes written to memory per call (compulsory traffic)
  double rate = 0.0;   // flop / median_s or bytes / median_s, as rate_unit says
  std::string rate_unit;  // "flop/s" or "bytes/s"
  std::string note;       // optional free text (algorithm, caveats)

  // Value of a named extent, or -1 when the record has no such extent.
  std::int64_t Extent(const std::string& name) const {
    for (const auto& [key, value] : shape) {
      if (key == name) return value;
    }
    return -1;
  }
};

// Where and how a probe ran.
struct ProbeHeader {
  std::string schema = kProbeSchema;
  std::string probe;         // "cpu" or "cuda"
  std::string mode;          // "quick" or "full"
  std::string host;          // host name
  std::string device;        // CPU model or GPU name
  std::string compiler;      // compiler and version the probe was built with
  std::string date_utc;      // ISO 8601, e.g. 2026-11-20T10:00:00Z
  std::string command_line;  // how the probe was invoked
  std::int64_t threads = 0;  // CPU threads used (CUDA probe: host threads, 1)
  // Further facts as text: driver and library versions, clocks, memory sizes.
  std::vector<std::pair<std::string, std::string>> extra;
};

// What a record's rate counts: FLOP for arithmetic-bound kernels (GEMM),
// bytes moved for streaming kernels.
enum class RateUnit { kFlopPerS, kBytesPerS };

// Builds a record from per-sample times (each sample timed `inner` calls and
// is already divided by `inner`). The rate is taken at the median time.
inline ProbeRecord MakeRecord(std::string kind, std::string dtype,
                              std::vector<std::pair<std::string, std::int64_t>> shape,
                              const std::vector<double>& per_call_samples_s, std::int64_t inner,
                              double flop, double bytes, RateUnit unit) {
  ProbeRecord r;
  r.kind = std::move(kind);
  r.dtype = std::move(dtype);
  r.shape = std::move(shape);
  const SampleSummary s = Summarize(per_call_samples_s);
  r.reps = static_cast<std::int64_t>(s.count);
  r.inner = inner;
  r.median_s = s.median;
  r.p10_s = s.p10;
  r.p90_s = s.p90;
  r.min_s = s.min;
  r.max_s = s.max;
  r.flop = flop;
  r.bytes = bytes;
  const bool per_flop = unit == RateUnit::kFlopPerS;
  const double work = per_flop ? flop : bytes;
  r.rate_unit = per_flop ? "flop/s" : "bytes/s";
  r.rate = (s.median > 0.0) ? work / s.median : 0.0;
  return r;
}

namespace detail {

inline void AppendJsonString(std::string& out, const std::string& text) {
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// Shortest form that reads back to the same double; NaN and infinities,
// which JSON cannot hold, become null.
inline void AppendJsonNumber(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buf[40];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  out += buf;
}

inline void AppendJsonInt(std::string& out, std::int64_t value) {
  out += std::to_string(value);
}

}  // namespace detail

// One record as a single-line JSON object.
inline std::string RecordToJson(const ProbeRecord& r) {
  using detail::AppendJsonInt;
  using detail::AppendJsonNumber;
  using detail::AppendJsonString;
  std::string out = "{\"kind\": ";
  AppendJsonString(out, r.kind);
  out += ", \"dtype\": ";
  AppendJsonString(out, r.dtype);
  out += ", \"shape\": {";
  for (std::size_t i = 0; i < r.shape.size(); ++i) {
    if (i) out += ", ";
    AppendJsonString(out, r.shape[i].first);
    out += ": ";
    AppendJsonInt(out, r.shape[i].second);
  }
  out += "}, \"reps\": ";
  AppendJsonInt(out, r.reps);
  out += ", \"inner\": ";
  AppendJsonInt(out, r.inner);
  const std::pair<const char*, double> numbers[] = {
      {"median_s", r.median_s}, {"p10_s", r.p10_s}, {"p90_s", r.p90_s}, {"min_s", r.min_s},
      {"max_s", r.max_s},       {"flop", r.flop},   {"bytes", r.bytes}, {"rate", r.rate}};
  for (const auto& [key, value] : numbers) {
    out += ", \"";
    out += key;
    out += "\": ";
    AppendJsonNumber(out, value);
  }
  out += ", \"rate_unit\": ";
  AppendJsonString(out, r.rate_unit);
  if (!r.note.empty()) {
    out += ", \"note\": ";
    AppendJsonString(out, r.note);
  }
  out += "}";
  return out;
}

// The whole probe output: {"schema", "header": {...}, "records": [...]},
// one record per line so that files diff well.
inline std::string ProbeToJson(const ProbeHeader& h, const std::vector<ProbeRecord>& records) {
  using detail::AppendJsonInt;
  using detail::AppendJsonString;
  std::string out = "{\n  \"schema\": ";
  AppendJsonString(out, h.schema);
  out += ",\n  \"header\": {";
  const std::pair<const char*, const std::string*> fields[] = {
      {"probe", &h.probe},       {"mode", &h.mode},         {"host", &h.host},
      {"device", &h.device},     {"compiler", &h.compiler}, {"date_utc", &h.date_utc},
      {"command_line", &h.command_line}};
  for (const auto& [key, value] : fields) {
    out += "\n    \"";
    out += key;
    out += "\": ";
    AppendJsonString(out, *value);
    out += ",";
  }
  out += "\n    \"threads\": ";
  AppendJsonInt(out, h.threads);
  out += ",\n    \"extra\": {";
  for (std::size_t i = 0; i < h.extra.size(); ++i) {
    out += i ? ",\n      " : "\n      ";
    AppendJsonString(out, h.extra[i].first);
    out += ": ";
    AppendJsonString(out, h.extra[i].second);
  }
  out += h.extra.empty() ? "}" : "\n    }";
  out += "\n  },\n  \"records\": [";
  for (std::size_t i = 0; i < records.size(); ++i) {
    out += i ? ",\n    " : "\n    ";
    out += RecordToJson(records[i]);
  }
  out += records.empty() ? "]" : "\n  ]";
  out += "\n}\n";
  return out;
}

// Writes the probe output to `path` ("-" writes to stdout). Returns false
// and fills `error` when the file cannot be written.
inline bool WriteProbeJson(const std::string& path, const ProbeHeader& h,
                           const std::vector<ProbeRecord>& records, std::string* error) {
  const std::string text = ProbeToJson(h, records);
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return true;
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    if (error) *error = "cannot open '" + path + "' for writing";
    return false;
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!(ok && closed)) {
    if (error) *error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace orrery::calibration
