#pragma once
// What a network costs and draws: the parts each topology needs for N
// devices (switches, transceivers, cables, NIC ports), priced from a price
// table (configs/prices/default.yaml; every number overridable), beside the
// devices' own cost and power. Not a hot path: it allocates freely.
//
// Counting rules (per tier, N devices, l links per device, switches of k
// ports, leaf downlinks d = floor(k o / (1 + o)) at oversubscription o):
//   tier 0 (scale-up: NVSwitch, ICI)  switch: ceil(D l / k) switch planes per
//        domain of D; mesh, ring, torus: N l / 2 cables. Priced as hb_switch
//        only (links are board or backplane wiring).
//   scale-out tiers (1, 2, ...): l NIC ports per device, one cable and two
//        transceivers per link (each end), and switches:
//     switch (one flat switch)   ceil(N l / k)
//     fat-tree, 1 level          ceil(E / k), E = N l endpoints
//              2 levels          L1 = ceil(E / d) leaves, L2 = ceil(L1 (k-d) / k) spines
//              3 levels          L1 leaves, L2 = ceil(L1 (k-d) / (k/2)), L3 = ceil(L2 (k/2) / k)
//       (a folded Clos; Al-Fares, Loukissas and Vahdat 2008, SIGCOMM, Sec. 3)
//     rail-only                 per rail, E_r = (N / R) l endpoints (R rails = HB domain
//       size) on the fewest levels of a full-bisection Clos that hold them; no spine
//       joins the rails (Wang et al. 2023, arXiv 2307.12169, Sec. 4). Rails that fit
//       one switch share boxes, one partition each: ceil(R E_r / k) switches.
//     mesh, ring, torus          N l / 2 links, no switches
//   A switch of k ports at speed v costs switch_price x (k / switch_radix) x
//   (v / switch_port_speed) and draws switch_power scaled the same way;
//   transceivers and NIC ports scale with speed likewise.

#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/param.h"
#include "hardware/system_spec.h"

namespace orrery::hardware {

// Unit prices and powers of network parts and devices.
struct PriceSpec {
  std::string name;
  std::string citation;
  double gpu_price = 0;            // USD per device when the device preset has no price
  double switch_price = 0;         // USD per switch box of switch_radix ports
  double switch_power = 0;         // W per switch box (without transceivers)
  int64_t switch_radix = 64;       // ports of the priced box
  double switch_port_speed = 0;    // bytes/s per port of the priced box (0 = no speed scaling)
  double transceiver_price = 0;    // USD per transceiver (one end of an optical link)
  double transceiver_power = 0;    // W per transceiver
  double transceiver_speed = 0;    // bytes/s of the priced transceiver (0 = no speed scaling)
  double cable_price = 0;          // USD per cable (one per link)
  double nic_price = 0;            // USD per NIC port
  double nic_power = 0;            // W per NIC port
  double nic_speed = 0;            // bytes/s of the priced NIC port (0 = no speed scaling)
  double hb_switch_price = 0;      // USD per scale-up switch plane (0 = inside the server price)
  double hb_switch_power = 0;      // W per scale-up switch plane
};

const base::Schema<PriceSpec>& PriceSchema();

// Reads a `prices:` document (or the map under it) into `out`, defaults first.
void ParsePrices(const YAML::Node& map, const std::string& path, const std::string& file,
                 PriceSpec& out, base::Diagnostics& diags);
// Loads a YAML file whose top-level key is `prices`.
bool LoadPricesFile(const std::string& file, PriceSpec& out, base::Diagnostics& diags);

// The parts, cost and power of one tier.
struct TierParts {
  std::string name;
  Topology topology = Topology::kSwitch;
  bool scale_out = false;          // tier > 0: NICs, transceivers and cables are priced
  int64_t switches = 0;
  int64_t switch_levels = 0;       // levels of switches (fat-tree; rail-only: per rail)
  int64_t links = 0;               // cables
  int64_t transceivers = 0;
  int64_t nic_ports = 0;
  double port_speed = 0;           // bytes/s per link per direction
  double bisection = 0;            // bytes/s per direction across one domain of this tier
  double switch_cost = 0, transceiver_cost = 0, cable_cost = 0, nic_cost = 0;
  double switch_power = 0, transceiver_power = 0, nic_power = 0;
  double cost() const { return switch_cost + transceiver_cost + cable_cost + nic_cost; }
  double power() const { return switch_power + transceiver_power + nic_power; }
};

struct SystemCost {
  std::vector<TierParts> tiers;
  int64_t devices = 0;
  double device_cost = 0;    // USD, all devices
  double device_power = 0;   // W, all devices at TDP
  double network_cost = 0;   // USD, every tier including NICs
  double network_power = 0;  // W
  double scale_out_cost = 0;   // USD, tiers > 0 (switches, transceivers, cables, NICs)
  double scale_out_power = 0;  // W
  double fabric_cost = 0;    // USD, tiers > 0 without NICs: what the topology decides
  double fabric_power = 0;   // W
};

// Counts the parts of every tier of `s` and prices them. Assumes CheckSystem passed.
SystemCost CountParts(const SystemSpec& s, const PriceSpec& p);

}  // namespace orrery::hardware
