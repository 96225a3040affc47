// Sweep YAML through the loader `orrery sweep` uses. Properties: no crash or
// hang; a rejection is a located message.

#include <cstddef>
#include <cstdint>

#include "core/search/sweep.h"
#include "fuzz/fuzz_support.h"

using namespace orrery;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const engine::PresetStore store(fuzz::ConfigDir());
  const std::string file = fuzz::AsFile(data, size, ".yaml");
  base::Diagnostics d;
  engine::Scenario base;
  const auto spec = engine::LoadSweepFile(file, store, base, d);
  if (!spec) fuzz::RequireLocated(d, file);
  return 0;
}
