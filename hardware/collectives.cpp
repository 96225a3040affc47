#include "hardware/collectives.h"

#include <cmath>

namespace orrery::hardware {

const char* CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "all-reduce";
    case Collective::kReduceScatter: return "reduce-scatter";
    case Collective::kAllGather: return "all-gather";
    case Collective::kAllToAll: return "all-to-all";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kSendRecv: return "send/recv";
  }
  return "?";
}

double InNetworkTime(Collective c, double bytes, const StepCost& s) {
  if (bytes <= 0) return 0;
  if (c != Collective::kAllReduce) return kNotSupported;
  return 2 * s.alpha + bytes / s.bandwidth;
}

double TorusTime(Collective c, double bytes, const TorusDim* dims, int ndims) {
  if (bytes <= 0) return 0;
  double t = 0;
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
    case Collective::kAllGather: {
      double size = bytes;
      for (int d = 0; d < ndims; ++d) {
        const TorusDim& x = dims[d];
        if (x.n <= 1) continue;
        const double n = static_cast<double>(x.n);
        const double bw = (x.wrap ? 2 : 1) * x.link_bandwidth;
        t += (n - 1) * x.alpha + (n - 1) / n * size / bw;
        size /= n;
      }
      return c == Collective::kAllReduce ? 2 * t : t;
    }
    case Collective::kAllToAll: {
      for (int d = 0; d < ndims; ++d) {
        const TorusDim& x = dims[d];
        if (x.n <= 1) continue;
        const double n = static_cast<double>(x.n);
        const double pairs = std::floor(n * n / 4);
        t += (n - 1) * x.alpha + (x.wrap ? 1 : 2) * bytes * pairs / (2 * n * x.link_bandwidth);
      }
      return t;
    }
    case Collective::kBroadcast: {
      bool first = true;
      for (int d = 0; d < ndims; ++d) {
        const TorusDim& x = dims[d];
        if (x.n <= 1) continue;
        if (first) t += bytes / ((x.wrap ? 2 : 1) * x.link_bandwidth);
        first = false;
        t += std::ceil(static_cast<double>(x.n) / 2) * x.alpha;
      }
      return t;
    }
    case Collective::kSendRecv: break;
  }
  return kNotSupported;
}

}  // namespace orrery::hardware
