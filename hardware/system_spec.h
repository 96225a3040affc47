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
#include "hardware/reliability_spec.h"

namespace orrery::hardware {

// How the devices of one domain of a tier are wired (hardware/topology.h
// draws each one). kSwitch is the any-to-any tier the fields above always
// described; it stays the default so that older files mean what they meant.
enum class Topology { kSwitch, kFullMesh, kRing, kFatTree, kRailOnly, kTorus };
const char* TopologyName(Topology t);

// Which collective algorithm a tier runs (hardware/collectives.h).
// kAuto takes the fastest the tier supports, as NCCL's tuner does.
enum class CollectiveAlgorithm { kAuto, kRing, kTree, kDirect, kInNetwork };
const char* CollectiveAlgorithmName(CollectiveAlgorithm a);

struct NetworkTier {
  std::string name;
  int64_t domain = 0;        // devices reachable at this tier; 0 = all devices
  double bandwidth = 0;      // bytes/s per device per direction
  double latency = 0;        // seconds per algorithm step (alpha)
  // Achieved fraction of `bandwidth` (bus bandwidth) by message size, bytes.
  Curve efficiency;

  // --- topology (issue 4). Defaults keep the any-to-any switch above. ---
  Topology topology = Topology::kSwitch;
  int64_t links = 0;           // ports per device into this tier; 0 = the topology's own
                               // (switch/fat-tree/rail-only 1, ring 2, torus 2 per dim, mesh domain-1)
  double hop_latency = 0;      // seconds per link traversal (wire + switch port)
  double base_latency = 0;     // seconds once per collective call (launch and synchronisation)
  int64_t radix = 0;           // ports per switch; 0 = switches not modelled (no parts, no size check)
  int64_t levels = 2;          // fat-tree levels; rail-only: most levels one rail's Clos may use
  double oversubscription = 1; // fat-tree leaf downlinks : uplinks
  int64_t rails = 0;           // rail-optimised fat-tree / rail-only: rails; 0 = the inner domain size
  std::string dims;            // torus dimensions, e.g. "16x16x16"
  bool in_network_reduction = false;  // NVLink SHARP (NVLS) / InfiniBand SHARP all-reduce
  // Achieved fraction of `bandwidth` as algorithm bandwidth of an in-network
  // all-reduce, by message size; empty = `efficiency`.
  Curve in_network_efficiency;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  base::SourceLocation where;  // where the tier was read, for messages (unset for inline specs)
};

// A further pool of devices in a heterogeneous system (issue 17): nodes of
// another device type, e.g. H100 nodes beside the system's A100 nodes. A
// pool shares the system's network tiers, host memory, PUE and reliability;
// what differs is the device, the node count and the price. The system's
// own `device` and `nodes` are pool 0; `pools[i]` is pool i + 1. Plans that
// use the pools are described by the scenario's `hetero:` section
// (parallelism/hetero_plan.h) and costed by core/hetero.
struct DevicePool {
  std::string name;              // shown in reports; empty = the device's name
  std::string device_preset;     // name of the device preset, when given by name
  DeviceSpec device;
  int64_t devices_per_node = 0;  // 0 = the system's
  int64_t nodes = 1;
  double price_per_device_hour = 0;  // USD/s (parsed from USD/h); 0 = the system's
};

// The host CPU that drives the devices (`system.host`, optional). A fact of
// the system, read where the host's time shows: a dropless MoE layer waits
// on the host every layer (MoeLayerKernels, core/estimate/parallel_comm.h),
// and the validation harness prices that wait with `op_launch_time`.
struct HostSpec {
  std::string cpu;              // the CPU's name, e.g. "Intel Xeon Platinum 8480C"; empty = not stated
  // Host seconds to issue one eager PyTorch operator that launches one
  // kernel (Python binding, autograd, ATen dispatcher, cudaLaunchKernel),
  // as measured on this CPU; 0 = not measured. TransformerEngine issue 2053
  // measures torch.nn.Linear's forward: 13.48 us on DGX H100's Xeon
  // Platinum 8480C, 37.08 us on GB200's Grace, 33.17 us on GH200's.
  double op_launch_time = 0;
  std::string op_launch_source;  // where op_launch_time was measured
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
  double grid_co2_kg_per_kwh = 0;  // carbon intensity of the grid (0 = not given)
  std::vector<NetworkTier> network;
  ReliabilitySpec reliability;  // `reliability:` (optional section)
  StorageSpec storage;          // `storage:` (optional section)
  HostSpec host;                // `host:` (optional section): the host CPU
  std::vector<DevicePool> pools;  // `pools:` (optional): more device types (heterogeneous)
  double pool_bandwidth = 0;     // bytes/s per device between two pools; 0 = outermost tier's
};

inline int64_t DeviceCount(const SystemSpec& s) { return s.devices_per_node * s.nodes; }

const base::Schema<SystemSpec>& SystemSchema();
const base::Schema<NetworkTier>& NetworkTierSchema();
const base::Schema<DevicePool>& DevicePoolSchema();
const base::Schema<HostSpec>& HostSchema();

// Parses the system keys and the `network` sequence. The `device` key is the
// caller's (a preset name or an inline map), listed in SystemSubsectionKeys().
// `extra_keys` are keys the caller parses (a preset file's naming keys).
// `over_base`: `out` holds the system the map is written `like:`; the map
// changes the keys it states (a stated `network` or `pools` replaces the
// base's whole; `reliability`, `storage` and `host` change key by key).
void ParseSystem(const YAML::Node& map, const std::string& path, const std::string& file,
                 SystemSpec& out, base::Diagnostics& diags,
                 const std::vector<std::string>& extra_keys = {}, bool over_base = false);
const std::vector<std::string>& SystemSubsectionKeys();
// Keys of a network tier that hold curves (parsed by ParseSystem, not the schema).
const std::vector<std::string>& NetworkTierCurveKeys();

// Tier checks: domains increase outward and divide each other.
void CheckSystem(const SystemSpec& s, const std::string& path, const base::SourceLocation& where,
                 base::Diagnostics& diags);

// What models device pools (system.pools) is the closed-form estimate and
// the search over splits (core/hetero); every other face refuses a pooled
// system with this error at `where` rather than silently costing the
// system's own devices only. `what` names the face ("orrery plan").
void RefusePools(const SystemSpec& s, const std::string& what, const base::SourceLocation& where,
                 base::Diagnostics& diags);

}  // namespace orrery::hardware
