#include "core/api/common.h"

namespace orrery {

const char* StatusName(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kInvalidInput: return "invalid_input";
    case Status::kUsage: return "usage";
    case Status::kInfeasible: return "infeasible";
    case Status::kCancelled: return "cancelled";
  }
  return "unknown";
}

}  // namespace orrery
