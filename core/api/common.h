#pragma once
// The public API's shared vocabulary: what every verb's call takes besides
// its request (progress, cancel) and what every result carries (status,
// diagnostics). One request struct in, one result struct out, per verb; the
// faces (cli/, gui/, reports, a user's program) call these and nothing below.
//
//   orrery::EstimateRequest req;  req.scenario_file = "configs/scenarios/gpt3-175b-a100.yaml";
//   orrery::EstimateResult r = orrery::Estimate(req);
//   if (r.status == orrery::Status::kOk) ... orrery::ToJson(r) ...

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/base/diagnostics.h"

namespace orrery {

// Version of the JSON output schema (docs/output-schema.md). Bumped when a
// field is renamed, removed or changes meaning; adding a field does not bump.
inline constexpr int kSchemaVersion = 1;

// What a call came to. The CLI's exit status is the numeric value.
enum class Status {
  kOk = 0,            // a result
  kInvalidInput = 1,  // the input is invalid (diagnostics say where), or a tolerance failed
  kUsage = 2,         // the request itself is malformed (faces map their own usage errors here)
  kInfeasible = 3,    // valid input, but no feasible plan / an infeasible result (reason given)
  kCancelled = 4,     // the cancel flag was raised; partial results may be present
};
const char* StatusName(Status s);

// Progress of a long call: `done` of `total` units of `stage` ("shapes",
// "points", "requests"). Called from the calling thread or a worker thread;
// must be cheap and thread-safe. `total` may be 0 when unknown.
using ProgressFn = std::function<void(uint64_t done, uint64_t total, std::string_view stage)>;

// Passed to every long call. Both members are optional.
struct Control {
  ProgressFn progress;
  const std::atomic<bool>* cancel = nullptr;  // borrowed; polled between units of work

  bool Cancelled() const { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }
  void Report(uint64_t done, uint64_t total, std::string_view stage) const {
    if (progress) progress(done, total, stage);
  }
};

// Every result starts with this: status, the located errors when the input
// was invalid, and the reason when the result is infeasible.
struct ResultBase {
  Status status = Status::kOk;
  base::Diagnostics diagnostics;  // non-empty iff status == kInvalidInput from input errors
  std::string reason;             // why infeasible / why a tolerance failed / why cancelled
  bool ok() const { return status == Status::kOk; }
};

}  // namespace orrery
