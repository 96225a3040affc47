#include "probe_record_json.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace orrery::calibration {
namespace {

// ordered_json keeps the writer's order of shape extents (m, n, k).
using json = nlohmann::ordered_json;

// Each getter returns false and sets `error` to "<where>.<key>: <rule>".
bool GetString(const json& obj, const std::string& where, const char* key, bool required,
               std::string* out, std::string* error) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (!required) return true;
    *error = where + "." + key + ": missing";
    return false;
  }
  if (!it->is_string()) {
    *error = where + "." + key + ": expected a string, got " + it->dump();
    return false;
  }
  *out = it->get<std::string>();
  return true;
}

bool GetInt(const json& obj, const std::string& where, const char* key, bool required,
            std::int64_t* out, std::string* error) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (!required) return true;
    *error = where + "." + key + ": missing";
    return false;
  }
  if (!it->is_number_integer()) {
    *error = where + "." + key + ": expected an integer, got " + it->dump();
    return false;
  }
  *out = it->get<std::int64_t>();
  return true;
}

// null reads as NaN (the writer turns non-finite numbers into null).
bool GetNumber(const json& obj, const std::string& where, const char* key, double* out,
               std::string* error) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    *error = where + "." + key + ": missing";
    return false;
  }
  if (it->is_null()) {
    *out = std::nan("");
    return true;
  }
  if (!it->is_number()) {
    *error = where + "." + key + ": expected a number, got " + it->dump();
    return false;
  }
  *out = it->get<double>();
  return true;
}

bool ParseHeader(const json& j, ProbeHeader* h, std::string* error) {
  if (!j.is_object()) {
    *error = "header: expected an object";
    return false;
  }
  const std::string w = "header";
  if (!GetString(j, w, "probe", true, &h->probe, error)) return false;
  if (!GetString(j, w, "mode", true, &h->mode, error)) return false;
  if (!GetString(j, w, "host", false, &h->host, error)) return false;
  if (!GetString(j, w, "device", false, &h->device, error)) return false;
  if (!GetString(j, w, "compiler", false, &h->compiler, error)) return false;
  if (!GetString(j, w, "date_utc", false, &h->date_utc, error)) return false;
  if (!GetString(j, w, "command_line", false, &h->command_line, error)) return false;
  if (!GetInt(j, w, "threads", false, &h->threads, error)) return false;
  if (const auto it = j.find("extra"); it != j.end()) {
    if (!it->is_object()) {
      *error = "header.extra: expected an object";
      return false;
    }
    for (const auto& [key, value] : it->items()) {
      if (!value.is_string()) {
        *error = "header.extra." + key + ": expected a string, got " + value.dump();
        return false;
      }
      h->extra.emplace_back(key, value.get<std::string>());
    }
  }
  return true;
}

bool ParseRecord(const json& j, const std::string& w, ProbeRecord* r, std::string* error) {
  if (!j.is_object()) {
    *error = w + ": expected an object";
    return false;
  }
  if (!GetString(j, w, "kind", true, &r->kind, error)) return false;
  if (!GetString(j, w, "dtype", true, &r->dtype, error)) return false;
  const auto shape = j.find("shape");
  if (shape == j.end() || !shape->is_object()) {
    *error = w + ".shape: expected an object of named integer extents";
    return false;
  }
  for (const auto& [key, value] : shape->items()) {
    if (!value.is_number_integer()) {
      *error = w + ".shape." + key + ": expected an integer, got " + value.dump();
      return false;
    }
    r->shape.emplace_back(key, value.get<std::int64_t>());
  }
  if (!GetInt(j, w, "reps", true, &r->reps, error)) return false;
  if (!GetInt(j, w, "inner", false, &r->inner, error)) return false;
  const std::pair<const char*, double*> numbers[] = {
      {"median_s", &r->median_s}, {"p10_s", &r->p10_s}, {"p90_s", &r->p90_s},
      {"min_s", &r->min_s},       {"max_s", &r->max_s}, {"flop", &r->flop},
      {"bytes", &r->bytes},       {"rate", &r->rate}};
  for (const auto& [key, out] : numbers) {
    if (!GetNumber(j, w, key, out, error)) return false;
  }
  if (!GetString(j, w, "rate_unit", true, &r->rate_unit, error)) return false;
  if (r->rate_unit != "flop/s" && r->rate_unit != "bytes/s") {
    *error = w + ".rate_unit: expected \"flop/s\" or \"bytes/s\", got \"" + r->rate_unit + "\"";
    return false;
  }
  if (!GetString(j, w, "note", false, &r->note, error)) return false;
  return true;
}

// Finds where a syntax error is: a SAX pass that accepts every event and
// keeps the byte position nlohmann reports with the error.
class ErrorPosition : public nlohmann::json_sax<json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    position_ = position;
    message_ = e.what();
    return false;
  }
  std::size_t position() const { return position_; }
  const std::string& message() const { return message_; }

 private:
  std::size_t position_ = 0;
  std::string message_;
};

// "LINE:COL: not valid JSON (...)" for text that does not parse. nlohmann
// counts the offending character among those read, so it sits at position-1.
std::string SyntaxError(const std::string& text) {
  ErrorPosition sax;
  json::sax_parse(text, &sax);
  const std::size_t at = sax.position() > 0 ? std::min(sax.position() - 1, text.size()) : 0;
  int line = 1, column = 1;
  for (std::size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  // Keep nlohmann's reason, without its own "[json.exception.parse_error.101] parse error at ..." prefix.
  std::string reason = sax.message();
  if (const auto colon = reason.find(": syntax error"); colon != std::string::npos) reason = reason.substr(colon + 2);
  return std::to_string(line) + ":" + std::to_string(column) + ": not valid JSON (" + reason + ")";
}

}  // namespace

ProbeFileResult ParseProbeJson(const std::string& text) {
  ProbeFileResult result;
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    result.error = SyntaxError(text);
    return result;
  }
  if (!doc.is_object()) {
    result.error = "top level: expected an object";
    return result;
  }
  std::string schema;
  if (!GetString(doc, "top level", "schema", true, &schema, &result.error)) return result;
  if (schema != kProbeSchema) {
    result.error = "schema: expected \"" + std::string(kProbeSchema) + "\", got \"" + schema + "\"";
    return result;
  }
  result.file.header.schema = schema;
  const auto header = doc.find("header");
  if (header == doc.end()) {
    result.error = "header: missing";
    return result;
  }
  if (!ParseHeader(*header, &result.file.header, &result.error)) return result;
  const auto records = doc.find("records");
  if (records == doc.end() || !records->is_array()) {
    result.error = "records: expected an array";
    return result;
  }
  for (std::size_t i = 0; i < records->size(); ++i) {
    ProbeRecord r;
    if (!ParseRecord((*records)[i], "records[" + std::to_string(i) + "]", &r, &result.error)) {
      return result;
    }
    result.file.records.push_back(std::move(r));
  }
  result.ok = true;
  return result;
}

ProbeFileResult ReadProbeJsonFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ProbeFileResult result;
    result.error = "cannot open '" + path + "'";
    return result;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  ProbeFileResult result = ParseProbeJson(buffer.str());
  if (!result.ok) {
    // "file:line:col: ..." for syntax errors, "file: field: ..." otherwise.
    const bool located = !result.error.empty() && result.error[0] >= '0' && result.error[0] <= '9';
    result.error = path + (located ? ":" : ": ") + result.error;
  }
  return result;
}

}  // namespace orrery::calibration
