// Efficiency curves as YAML writes them: a sequence of [x, efficiency]
// pairs, the device's GEMM and memory curves ([FLOP, fraction], [bytes,
// fraction]) and a network tier's bus-bandwidth curves ([message size,
// fraction]) alike.
#pragma once

#include <string>

#include "core/base/diagnostics.h"
#include "core/base/quantity.h"
#include "core/base/yaml_source.h"
#include "hardware/device_spec.h"

namespace orrery::hardware {

// Parses `node` into `out` (emptied first): each pair's x a quantity of
// `x_dim`, > 0 and increasing along the curve, its efficiency a number in
// (0, 1]. A bad pair is a located error (file, path[i][j], value, rule) and
// is left out; the rest are kept. `x_name` names x in the messages ("size",
// "message size") and `example` is a pair they show ("[1 GFLOP, 0.5]").
// `max_y` above 1 admits factors instead of fractions (the attention length
// factors, which rise above 1 past the length their constant was read at).
void ParseEfficiencyCurve(const YAML::Node& node, const std::string& path, const std::string& file,
                          base::Dimension x_dim, const std::string& x_name,
                          const std::string& example, Curve& out, base::Diagnostics& diags,
                          double max_y = 1.0);

}  // namespace orrery::hardware
