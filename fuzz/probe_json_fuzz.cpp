// Probe measurement JSON (`orrery calibrate import`). Properties: no crash or
// hang; a rejection carries a message.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "hardware/calibration/probe_record_json.h"

using namespace orrery;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto r = calibration::ParseProbeJson(std::string(reinterpret_cast<const char*>(data), size));
  if (!r.ok) fuzz::Require(!r.error.empty(), "a rejection without a message");
  return 0;
}
