#include "hardware/curve_yaml.h"

namespace orrery::hardware {

void ParseEfficiencyCurve(const YAML::Node& node, const std::string& path, const std::string& file,
                          base::Dimension x_dim, const std::string& x_name,
                          const std::string& example, Curve& out, base::Diagnostics& diags,
                          double max_y) {
  out = Curve{};
  if (!node.IsSequence() || node.size() == 0) {
    diags.Add(base::LocationOf(node, file), path, "",
              "expected a non-empty sequence of [" + x_name + ", efficiency] pairs, got a " +
                  base::NodeKindName(node));
    return;
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node p = node[i];
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!p.IsSequence() || p.size() != 2 || !p[0].IsScalar() || !p[1].IsScalar()) {
      diags.Add(base::LocationOf(p, file), at, "",
                "expected a pair [" + x_name + ", efficiency], e.g. " + example);
      continue;
    }
    const base::QuantityParse x = base::ParseQuantity(p[0].Scalar(), x_dim);
    const base::QuantityParse y = base::ParseQuantity(p[1].Scalar(), base::Dimension::kDimensionless);
    if (!x.value || *x.value <= 0) {
      diags.Add(base::LocationOf(p[0], file), at + "[0]", p[0].Scalar(),
                x.value ? x_name + " must be > 0" : x.error, x.hint);
      continue;
    }
    if (!y.value || !(*y.value > 0 && *y.value <= max_y)) {
      diags.Add(base::LocationOf(p[1], file), at + "[1]", p[1].Scalar(),
                max_y == 1.0 ? std::string("efficiency must be a number in (0, 1]")
                             : "factor must be a number in (0, " + base::FormatNumber(max_y) + "]");
      continue;
    }
    if (!out.x.empty() && *x.value <= out.x.back()) {
      diags.Add(base::LocationOf(p[0], file), at + "[0]", p[0].Scalar(),
                x_name + "s must increase along the curve");
      continue;
    }
    out.x.push_back(*x.value);
    out.y.push_back(*y.value);
  }
  out.Finish();
}

}  // namespace orrery::hardware
