#include "core/base/param.h"

#include <charconv>
#include <cmath>

namespace orrery::base {
namespace {

std::string Bound(const ParamInfo& i, double v) {
  return i.type == ParamType::kQuantity ? FormatQuantity(v, i.dim) : FormatNumber(v, 10);
}

std::string RangeText(const ParamInfo& i) {
  const bool has_min = std::isfinite(i.min), has_max = std::isfinite(i.max);
  if (has_min && has_max)
    return std::string(i.min_exclusive ? "in (" : "in [") + Bound(i, i.min) + ", " +
           Bound(i, i.max) + "]";
  if (has_min) return std::string(i.min_exclusive ? "> " : ">= ") + Bound(i, i.min);
  if (has_max) return "<= " + Bound(i, i.max);
  return {};
}

}  // namespace

std::string ParamInfo::TypeName() const {
  switch (type) {
    case ParamType::kInt: return "integer";
    case ParamType::kReal: return "number";
    case ParamType::kBool: return "boolean";
    case ParamType::kString: return "string";
    case ParamType::kEnum: return "choice";
    case ParamType::kQuantity: return std::string(DimensionName(dim));
  }
  return "?";
}

namespace {

// A value a user might write for a quantity of this dimension, for the
// "with a unit (e.g. ...)" rule: typical of an accelerator or a cluster,
// moved into the parameter's range when it falls outside.
double ExampleOf(Dimension dim, double min, double max) {
  double v = 1;
  switch (dim) {
    case Dimension::kDimensionless: v = 1; break;
    case Dimension::kBytes: v = 80e9; break;           // 80 GB
    case Dimension::kBandwidth: v = 100e9; break;      // 100 GB/s
    case Dimension::kFlops: v = 1e12; break;           // 1 TFLOP
    case Dimension::kFlopRate: v = 1e15; break;        // 1000 TFLOP/s
    case Dimension::kTime: v = 10e-6; break;           // 10 us
    case Dimension::kPower: v = 700; break;            // 700 W
    case Dimension::kEnergy: v = 3.6e9; break;         // 1 MWh
    case Dimension::kMoney: v = 1e6; break;            // 1 MUSD
    case Dimension::kMoneyRate: v = 2.5 / 3600; break; // 2.5 USD/h
  }
  if (std::isfinite(min) && v < min) v = min;
  if (std::isfinite(max) && v > max) v = max;
  return v;
}

}  // namespace

std::string ParamInfo::RuleText() const {
  std::string r = TypeName();
  if (type == ParamType::kQuantity)
    r += " with a unit (e.g. '" + FormatQuantity(ExampleOf(dim, min, max), dim) + "')";
  if (type == ParamType::kEnum) {
    r = "one of:";
    for (size_t k = 0; k < choices.size(); ++k) r += (k ? ", " : " ") + choices[k];
    return r;
  }
  const std::string range = RangeText(*this);
  if (!range.empty()) r += " " + range;
  return r;
}

std::string ParseParam(const ParamInfo& info, const std::string& text, ParamValue& out,
                       std::string& hint) {
  hint.clear();
  switch (info.type) {
    case ParamType::kString:
      out.text = text;
      return {};
    case ParamType::kBool:
      if (text == "true" || text == "yes" || text == "on") {
        out.number = 1;
        return {};
      }
      if (text == "false" || text == "no" || text == "off") {
        out.number = 0;
        return {};
      }
      return "expected a boolean (true or false)";
    case ParamType::kEnum:
      for (size_t k = 0; k < info.choices.size(); ++k) {
        if (info.choices[k] == text) {
          out.number = static_cast<double>(k);
          return {};
        }
      }
      hint = DidYouMean(text, info.choices);
      return info.RuleText();
    case ParamType::kInt: {
      long long v = 0;
      const char* b = text.data();
      const char* e = text.data() + text.size();
      auto [p, ec] = std::from_chars(b, e, v);
      if (ec != std::errc() || p != e || text.empty()) return "expected an integer";
      out.number = static_cast<double>(v);
      break;
    }
    case ParamType::kReal:
    case ParamType::kQuantity: {
      const QuantityParse q = ParseQuantity(text, info.dim);
      if (!q.value) {
        hint = q.hint;
        return q.error;
      }
      out.number = *q.value;
      break;
    }
  }
  const double v = out.number;
  const bool low = info.min_exclusive ? !(v > info.min) : !(v >= info.min);
  if (low || !(v <= info.max)) return "value out of range: must be " + RangeText(info);
  return {};
}

std::string FormatParam(const ParamInfo& info, const ParamValue& v) {
  switch (info.type) {
    case ParamType::kString: return v.text;
    case ParamType::kBool: return v.number != 0 ? "true" : "false";
    case ParamType::kEnum: {
      const auto k = static_cast<size_t>(v.number);
      return k < info.choices.size() ? info.choices[k] : "?";
    }
    case ParamType::kInt: return FormatNumber(v.number, 15);
    case ParamType::kReal: return FormatNumber(v.number, 6);
    case ParamType::kQuantity: return FormatQuantity(v.number, info.dim);
  }
  return {};
}

}  // namespace orrery::base
