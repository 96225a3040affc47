#pragma once
// What the devices are wired into: nodes, memory tiers and network tiers.
//
// Network tiers are listed from the innermost (fastest) out. Tier i connects
// `domain` devices any-to-any at `bandwidth` per device per direction; the
// last tier may leave domain at 0, meaning "every device of the system".
//
//   tier 1 (scale-out, e.g. InfiniBand)  ─────────────────────────────
//          |                  |                   |
//   tier 0 [d d d d d d d d]  [d d d d d d d d]   [ ... ]   (NVLink, domain 8)

#include <string>
#include <vector>

#include "hardware/device_spec.h"

namespace orrery::hardware {

struct NetworkTier {
  std::string name;
  int64_t domain = 0;        // devices reachable at this tier; 0 = all devices
  double bandwidth = 0;      // bytes/s per device per direction
  double latency = 0;        // seconds per algorithm step (alpha)
  // Achieved fraction of `bandwidth` (bus bandwidth) by message size, bytes.
  Curve efficiency;
};

struct SystemSpec {
  std::string name;
  std::string citation;
  std::string device_preset;  // name of the device preset, when given by name
  DeviceSpec device;
  int64_t devices_per_node = 8;
  int64_t nodes = 1;
  double host_memory = 0;        // bytes per node (offload target)
  double host_bandwidth = 0;     // bytes/s per device to host memory (PCIe)
  double price_per_device_hour = 0;  // USD/s (parsed from USD/h)
  double pue = 1.0;              // power usage effectiveness of the data centre
  std::vector<NetworkTier> network;
};

inline int64_t DeviceCount(const SystemSpec& s) { return s.devices_per_node * s.nodes; }

const base::Schema<SystemSpec>& SystemSchema();
const base::Schema<NetworkTier>& NetworkTierSchema();

// Parses the system keys and the `network` sequence. The `device` key is the
// caller's (a preset name or an inline map), listed in SystemSubsectionKeys().
void ParseSystem(const YAML::Node& map, const std::string& path, const std::string& file,
                 SystemSpec& out, base::Diagnostics& diags);
const std::vector<std::string>& SystemSubsectionKeys();

// Tier checks: domains increase outward and divide each other.
void CheckSystem(const SystemSpec& s, const std::string& path, const base::SourceLocation& where,
                 base::Diagnostics& diags);

}  // namespace orrery::hardware
