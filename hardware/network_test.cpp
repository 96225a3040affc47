// Golden tests of the topologies, routes, collective algorithms and part
// counts (issue 4). Every expected number is worked out by hand in the
// comment beside it, or is a published measurement with its source.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/base/yaml_source.h"
#include "hardware/collectives.h"
#include "hardware/cost_model.h"
#include "hardware/network.h"
#include "hardware/topology.h"

namespace orrery::hardware {
namespace {

constexpr double kMiB = 1048576.0;
constexpr double kGiB = 1073741824.0;

SystemSpec OneTier(int64_t devices, NetworkTier t) {
  SystemSpec s;
  s.devices_per_node = devices;
  s.nodes = 1;
  s.network = {std::move(t)};
  return s;
}

NetworkTier Tier(const char* name, Topology kind, double bandwidth, int64_t links = 0) {
  NetworkTier t;
  t.name = name;
  t.topology = kind;
  t.bandwidth = bandwidth;
  t.links = links;
  return t;
}

// ASTRA-sim's analytical backend pins these: 16 devices, a 1 MiB message,
// 50 GiB/s per link, 500 ns per hop. Transfer 1 MiB / 50 GiB/s = 19,531.25 ns.
TEST(AstraSimGolden, FullMeshSwitchAndRingSends) {
  NetworkTier mesh = Tier("mesh", Topology::kFullMesh, 15 * 50 * kGiB, 15);
  mesh.hop_latency = 500e-9;
  const SystemSpec m_spec = OneTier(16, mesh);
  const AlphaBetaNetwork m(m_spec);
  // One hop on the direct link: 500 + 19,531.25 ns.
  EXPECT_NEAR(m.SendTime(0, 9, kMiB) * 1e9, 20031.25, 1e-6);

  NetworkTier sw = Tier("switch", Topology::kSwitch, 50 * kGiB, 1);
  sw.hop_latency = 500e-9;
  const SystemSpec s_spec = OneTier(16, sw);
  const AlphaBetaNetwork s(s_spec);
  // Device -> switch -> device: 2 x 500 + 19,531.25 ns.
  EXPECT_NEAR(s.SendTime(0, 9, kMiB) * 1e9, 20531.25, 1e-6);

  NetworkTier ring = Tier("ring", Topology::kRing, 2 * 50 * kGiB, 2);
  ring.hop_latency = 500e-9;
  const SystemSpec r_spec = OneTier(16, ring);
  const AlphaBetaNetwork r(r_spec);
  // 0 -> 3 on a ring of 16: 3 hops, one link's bandwidth: 1,500 + 19,531.25 ns.
  EXPECT_NEAR(r.SendTime(0, 3, kMiB) * 1e9, 21031.25, 1e-6);
  // The short way round: 0 -> 13 is also 3 hops.
  EXPECT_NEAR(r.SendTime(0, 13, kMiB) * 1e9, 21031.25, 1e-6);
  // The same transfer as a collective send between members 3 apart.
  EXPECT_NEAR(r.Time(Collective::kSendRecv, kMiB, r.Place(2, 3)) * 1e9, 21031.25, 1e-6);
}

TEST(Topology, HopsAndDiameters) {
  SystemSpec s = OneTier(64, Tier("torus", Topology::kTorus, 400e9));
  s.network[0].dims = "4x4x4";
  const AlphaBetaNetwork n(s);
  const TierGeometry& g = n.geometry(0);
  EXPECT_EQ(g.links, 6);  // 2 per dimension
  EXPECT_DOUBLE_EQ(g.link_bandwidth, 400e9 / 6);
  // (0,0,0) -> (3,2,1): x wraps (1 hop), y 2 hops, z 1 hop = 4.
  EXPECT_EQ(Hops(g, 0, 3 + 4 * 2 + 16 * 1), 4);
  EXPECT_EQ(Diameter(g), 6);  // 2 + 2 + 2
  // 24 TB/s-style bisection: cut across a 4-dimension: 2 x 64/4 links of b.
  EXPECT_DOUBLE_EQ(BisectionBandwidth(s.network[0], g), 2 * 16 * 400e9 / 6);
}

TEST(Topology, ParsesTorusDims) {
  std::array<int64_t, 3> d{};
  int n = 0;
  EXPECT_TRUE(ParseTorusDims("16x16x16", d, n));
  EXPECT_EQ(n, 3);
  EXPECT_EQ(d[2], 16);
  EXPECT_TRUE(ParseTorusDims("8", d, n));
  EXPECT_EQ(n, 1);
  EXPECT_FALSE(ParseTorusDims("16x", d, n));
  EXPECT_FALSE(ParseTorusDims("4x4x4x4", d, n));
  EXPECT_FALSE(ParseTorusDims("4xa", d, n));
  EXPECT_FALSE(ParseTorusDims("0x4", d, n));
}

TEST(Collectives, FormulasByHand) {
  const StepCost s{100e9, 1e-6};
  // Ring all-reduce, n = 4, S = 4e8: 2*3 us + 2*3/4*4e8/1e11 = 6 us + 6 ms.
  EXPECT_NEAR(RingTime(Collective::kAllReduce, 4e8, 4, s), 6e-6 + 6e-3, 1e-15);
  // Double binary tree, n = 8: 2*3 us + 2*4e8/1e11.
  EXPECT_NEAR(TreeTime(Collective::kAllReduce, 4e8, 8, s), 6e-6 + 8e-3, 1e-15);
  EXPECT_NEAR(TreeTime(Collective::kBroadcast, 4e8, 5, s), 3e-6 + 4e-3, 1e-15);  // ceil(log2 5) = 3
  EXPECT_EQ(TreeTime(Collective::kAllGather, 4e8, 8, s), kNotSupported);
  // Direct all-to-all: 1 step, 3/4 of S.
  EXPECT_NEAR(DirectTime(Collective::kAllToAll, 4e8, 4, s), 1e-6 + 3e-3, 1e-15);
  // In-network all-reduce: S up once, S down once: 2 us + 4 ms.
  EXPECT_NEAR(InNetworkTime(Collective::kAllReduce, 4e8, s), 2e-6 + 4e-3, 1e-15);
  EXPECT_EQ(InNetworkTime(Collective::kReduceScatter, 4e8, s), kNotSupported);
}

TEST(Collectives, AutoPicksTreeForSmallMessagesOnASwitch) {
  NetworkTier nv = Tier("nvlink", Topology::kSwitch, 300e9);
  nv.latency = 2e-6;
  const SystemSpec n_spec = OneTier(8, nv);
  const AlphaBetaNetwork n(n_spec);
  // 8 KiB: ring 14*2 us + 2*7/8*8192/3e11; tree 2*3*2 us + 2*8192/3e11 (faster).
  const double tree = 12e-6 + 2 * 8192 / 3e11;
  const CollectiveReport r = n.Explain(Collective::kAllReduce, 8192, n.Place(8, 1));
  EXPECT_NEAR(r.time_s, tree, 1e-15);
  EXPECT_EQ(r.algorithm[0], CollectiveAlgorithm::kTree);
  // 100 MB: the ring's (n-1)/n wins: 28 us + 2*7/8*1e8/3e11.
  EXPECT_NEAR(n.Time(Collective::kAllReduce, 1e8, n.Place(8, 1)), 28e-6 + 1.75e8 / 3e11, 1e-15);
  // Forcing the tier's algorithm.
  SystemSpec forced = OneTier(8, nv);
  forced.network[0].algorithm = CollectiveAlgorithm::kRing;
  const AlphaBetaNetwork f(forced);
  EXPECT_NEAR(f.Time(Collective::kAllReduce, 8192, f.Place(8, 1)), 28e-6 + 1.75 * 8192 / 3e11, 1e-15);
}

TEST(Collectives, DirectOnAFullMesh) {
  // 4 devices, 3 links of 100 GB/s each, 1 us per hop, no step overhead.
  NetworkTier mesh = Tier("mesh", Topology::kFullMesh, 300e9);
  mesh.hop_latency = 1e-6;
  const SystemSpec n_spec = OneTier(4, mesh);
  const AlphaBetaNetwork n(n_spec);
  const GroupPlacement g = n.Place(4, 1);
  // All-to-all of 3 MB: one step, S/4 to each peer on its own link:
  // 1 us + 3e6/4/1e11 = 8.5 us (a ring would take 3 us + 22.5 us).
  EXPECT_NEAR(n.Time(Collective::kAllToAll, 3e6, g), 8.5e-6, 1e-15);
  // All-reduce of 4 MB one-shot: 2 us + 2*4e6/4/1e11 = 22 us (ring: 6 + 60 us).
  const CollectiveReport r = n.Explain(Collective::kAllReduce, 4e6, g);
  EXPECT_NEAR(r.time_s, 22e-6, 1e-15);
  EXPECT_EQ(r.algorithm[0], CollectiveAlgorithm::kDirect);
  EXPECT_NEAR(r.busbw, 4e6 / 22e-6 * 1.5, 1e-3);
}

TEST(Collectives, TorusBucketAlgorithm) {
  // 4x4 torus, 4 links of 50 GB/s per chip, 1 us per step.
  SystemSpec s = OneTier(16, Tier("ici", Topology::kTorus, 200e9));
  s.network[0].dims = "4x4";
  s.network[0].latency = 1e-6;
  const AlphaBetaNetwork n(s);
  // Whole torus, S = 16 MB, one dimension order: reduce-scatter along x on a
  // bidirectional ring (B = 2 x 50 GB/s): 3 us + 3/4*16e6/1e11 = 123 us; along
  // y on S/4: 3 us + 3/4*4e6/1e11 = 33 us; all-reduce = 2 x 156 us = 312 us.
  // Multi-port: two halves at once, x-then-y and y-then-x, each S/2:
  // 2 x (3 + 3/4*8e6/1e11 * 1e6 + 3 + 3/4*2e6/1e11 * 1e6) = 2 x 81 us = 162 us.
  EXPECT_NEAR(n.Time(Collective::kAllReduce, 16e6, n.Place(16, 1)), 162e-6, 1e-12);
  // One x ring: 2 x 123 us. One y ring (stride 4): the same.
  EXPECT_NEAR(n.Time(Collective::kAllReduce, 16e6, n.Place(4, 1)), 246e-6, 1e-12);
  EXPECT_NEAR(n.Time(Collective::kAllReduce, 16e6, n.Place(4, 4)), 246e-6, 1e-12);
  // Two neighbours on an open segment: no wrap, B = b: 2 x (1 us + 1/2*16e6/5e10).
  EXPECT_NEAR(n.Time(Collective::kAllReduce, 16e6, n.Place(2, 1)), 322e-6, 1e-12);
  // All-to-all on one x ring of 4: 3 us + 16e6 * floor(16/4) / (2*4*5e10) = 163 us.
  EXPECT_NEAR(n.Time(Collective::kAllToAll, 16e6, n.Place(4, 1)), 163e-6, 1e-12);
}

// Two tiers: NVSwitch HB domains of 8 (450 GB/s, 2 us) and a scale-out tier
// of 50 GB/s per GPU, 5 us, over 16 nodes.
SystemSpec HbPlusScaleOut(Topology outer) {
  SystemSpec s;
  s.devices_per_node = 8;
  s.nodes = 16;
  NetworkTier hb = Tier("nvlink", Topology::kSwitch, 450e9);
  hb.domain = 8;
  hb.latency = 2e-6;
  NetworkTier out = Tier("ib", outer, 50e9);
  out.latency = 5e-6;
  s.network = {hb, out};
  return s;
}

TEST(RailOnly, CrossRailAllToAllIsForwardedThroughTheHbDomain) {
  const SystemSpec clos_spec = HbPlusScaleOut(Topology::kFatTree);
  const AlphaBetaNetwork clos(clos_spec);
  const SystemSpec rail_spec = HbPlusScaleOut(Topology::kRailOnly);
  const AlphaBetaNetwork rail(rail_spec);
  // 16 members over 2 HB domains (stride 1), S = 1 GB per member.
  const GroupPlacement g = rail.Place(16, 1);
  // Clos: inner share 7/16 S over NVLink (2 us + 7/8 * S/2 / 450e9 = 974.2 us)
  // and outer share 8/16 S over the fabric (5 us + 0.5e9/50e9 = 10,005 us) at once.
  EXPECT_NEAR(clos.Time(Collective::kAllToAll, 1e9, g) * 1e6, 10005, 1e-6);
  // Rail-only: HB all-to-all of the whole S (2 us + 7/8 * 1e9/450e9 = 1946.44 us),
  // then a rail all-to-all among 2 (5 us + 1/2 * 1e9/50e9 = 10,005 us).
  const CollectiveReport r = rail.Explain(Collective::kAllToAll, 1e9, g);
  EXPECT_NEAR(r.time_s * 1e6, 2 + 0.875e9 / 450e9 * 1e6 + 10005, 1e-6);
  EXPECT_TRUE(r.forwarded);
  EXPECT_FALSE(r.rail_aligned);
  EXPECT_DOUBLE_EQ(r.forwarded_hb_bytes, 0.875e9);
  // A rail-aligned group (one member per HB domain, stride 8) is not forwarded.
  const CollectiveReport aligned = rail.Explain(Collective::kAllToAll, 1e9, rail.Place(16, 8));
  EXPECT_FALSE(aligned.forwarded);
  EXPECT_TRUE(aligned.rail_aligned);
  // Hierarchical all-reduce keeps the outer phase on rails: same time on both.
  EXPECT_DOUBLE_EQ(rail.Time(Collective::kAllReduce, 1e9, g), clos.Time(Collective::kAllReduce, 1e9, g));
}

TEST(RailOnly, CrossRailSendTakesTwoPipelinedHops) {
  const SystemSpec clos_spec = HbPlusScaleOut(Topology::kFatTree);
  const AlphaBetaNetwork clos(clos_spec);
  const SystemSpec rail_spec = HbPlusScaleOut(Topology::kRailOnly);
  const AlphaBetaNetwork rail(rail_spec);
  // Device 3 (node 0, rail 3) to device 12 (node 1, rail 4), 100 MB.
  // Clos: 5 us + 1e8/50e9 = 2005 us.
  EXPECT_NEAR(clos.SendTime(3, 12, 1e8) * 1e6, 2005, 1e-6);
  // Rail-only: 3 -> 4 over NVLink, then rail 4: 2 us + 5 us + max(1e8/450e9, 1e8/50e9).
  EXPECT_NEAR(rail.SendTime(3, 12, 1e8) * 1e6, 2007, 1e-6);
  // Same rail: no forwarding.
  EXPECT_NEAR(rail.SendTime(3, 11, 1e8) * 1e6, 2005, 1e-6);
}

TEST(FatTree, OversubscriptionAppliesAboveTheLeaf) {
  // 12 devices, radix 8, 3:1: leaves of 6 downlinks and 2 uplinks.
  NetworkTier ft = Tier("ft", Topology::kFatTree, 10e9);
  ft.radix = 8;
  ft.oversubscription = 3;
  ft.hop_latency = 1e-6;
  const SystemSpec n_spec = OneTier(12, ft);
  const AlphaBetaNetwork n(n_spec);
  // Same leaf: 2 hops + 1e6/10e9 = 102 us. Across: 4 hops + 1e6/(10e9/3) = 304 us.
  EXPECT_NEAR(n.SendTime(0, 5, 1e6) * 1e6, 102, 1e-9);
  EXPECT_NEAR(n.SendTime(0, 6, 1e6) * 1e6, 304, 1e-9);
  EXPECT_EQ(FatTreeCapacity(8, 2, 3), 48);     // 6 downlinks x 8 leaves
  EXPECT_EQ(FatTreeCapacity(64, 2, 1), 2048);  // k^2/2
  EXPECT_EQ(FatTreeCapacity(64, 3, 1), 65536); // k^3/4 (Al-Fares et al. 2008)
}

TEST(Cost, ClosVersusRailOnlyPartCounts) {
  // 32,768 GPUs in HB domains of 256 (GH200 NVL256-like), 64-port switches.
  SystemSpec s;
  s.devices_per_node = 256;
  s.nodes = 128;
  NetworkTier hb = Tier("nvlink", Topology::kSwitch, 450e9);
  hb.domain = 256;
  NetworkTier clos = Tier("ib", Topology::kFatTree, 50e9);
  clos.radix = 64;
  clos.levels = 3;
  s.network = {hb, clos};
  PriceSpec p;
  p.switch_price = 36000;
  p.transceiver_price = 660;
  const SystemCost c = CountParts(s, p);
  // 3-level Clos of 32,768 ports: 1024 leaves, 1024 middle, 512 top = 2560
  // switches; links 32,768 + 1024*32 + 1024*32 = 98,304; 2 transceivers each.
  EXPECT_EQ(c.tiers[1].switches, 2560);
  EXPECT_EQ(c.tiers[1].links, 98304);
  EXPECT_EQ(c.tiers[1].transceivers, 196608);
  EXPECT_EQ(c.tiers[1].nic_ports, 32768);
  EXPECT_DOUBLE_EQ(c.fabric_cost, 2560 * 36000.0 + 196608 * 660.0);
  // Rail-only: 256 rails of 128 ports: 2 levels each (4 leaves + 2 spines).
  s.network[1].topology = Topology::kRailOnly;
  const SystemCost r = CountParts(s, p);
  EXPECT_EQ(r.tiers[1].switches, 256 * 6);
  EXPECT_EQ(r.tiers[1].links, 32768 + 256 * 4 * 32);
  EXPECT_DOUBLE_EQ(r.fabric_cost, 1536 * 36000.0 + 2 * 65536 * 660.0);
}

TEST(Check, BadTopologiesAreClearErrors) {
  SystemSpec s = HbPlusScaleOut(Topology::kRailOnly);
  s.network[1].rails = 4;
  s.network[1].where = {"sys.yaml", 12, 7};
  base::Diagnostics d;
  CheckSystem(s, "system", {"sys.yaml", 1, 1}, d);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d.ToString().find("sys.yaml:12:7: error: system.network[1].rails"), std::string::npos)
      << d.ToString();
  EXPECT_NE(d.ToString().find("rails must equal the devices of one domain of nvlink"),
            std::string::npos);

  s.network[1].rails = 0;
  s.network[1].topology = Topology::kFatTree;
  s.network[1].radix = 8;  // 2 levels of 8 ports: 8*4 = 32 ports < 128
  d = {};
  CheckSystem(s, "system", {"sys.yaml", 1, 1}, d);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d.ToString().find("radix too small for the size"), std::string::npos) << d.ToString();
  EXPECT_NE(d.ToString().find("connects at most 32 ports but this tier needs 128"), std::string::npos);

  SystemSpec t = OneTier(64, Tier("ici", Topology::kTorus, 1e11));
  t.network[0].dims = "4x4x2";
  d = {};
  CheckSystem(t, "system", {"t.yaml", 3, 3}, d);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d.ToString().find("torus dimensions multiply to 32 but the tier spans 64 devices"),
            std::string::npos)
      << d.ToString();
}

// The shipped presets against Vidur's published NCCL profiling
// (Agrawal et al. 2024, Vidur, MLSys; github.com/microsoft/vidur): 8-GPU all-reduce of 64 MiB 0.322 ms on DGX
// H100 (bus bandwidth ~365 GB/s), 0.675 ms on DGX A100 (~174 GB/s); 4 and 2
// H100 GPUs ~317 and ~274 GB/s; an 11-60 us floor for small messages.
SystemSpec Preset(const std::string& name) {
  const std::string file = std::string(ORRERY_TEST_CONFIG_DIR) + "/systems/" + name + ".yaml";
  base::Diagnostics d;
  const auto root = base::LoadYamlFile(file, d);
  SystemSpec s;
  // `aliases:` is read by the preset store (core/estimate), not by the system parser.
  if (root) ParseSystem((*root)["system"], "system", file, s, d, {"aliases"});
  EXPECT_TRUE(d.ok()) << d.ToString();
  return s;
}

TEST(NcclMeasured, DgxAllReduceWithin15Percent) {
  const SystemSpec h100 = Preset("dgx-h100-superpod");
  const SystemSpec a100 = Preset("dgx-a100-superpod");
  const AlphaBetaNetwork h(h100), a(a100);
  const double s = 64 * kMiB;
  EXPECT_NEAR(h.Time(Collective::kAllReduce, s, h.Place(8, 1)) * 1e3, 0.322, 0.15 * 0.322);
  EXPECT_NEAR(a.Time(Collective::kAllReduce, s, a.Place(8, 1)) * 1e3, 0.675, 0.15 * 0.675);
  EXPECT_NEAR(h.Explain(Collective::kAllReduce, s, h.Place(8, 1)).busbw / 1e9, 365, 0.15 * 365);
  EXPECT_NEAR(h.Explain(Collective::kAllReduce, s, h.Place(4, 1)).busbw / 1e9, 317, 0.15 * 317);
  EXPECT_NEAR(h.Explain(Collective::kAllReduce, s, h.Place(2, 1)).busbw / 1e9, 274, 0.15 * 274);
  EXPECT_NEAR(a.Explain(Collective::kAllReduce, s, a.Place(8, 1)).busbw / 1e9, 174, 0.15 * 174);
  for (const AlphaBetaNetwork* n : {&h, &a}) {
    for (int64_t g : {2, 4, 8}) {
      const double t = n->Time(Collective::kAllReduce, 1024, n->Place(g, 1)) * 1e6;
      EXPECT_GE(t, 11 * 0.85) << g;
      EXPECT_LE(t, 60 * 1.15) << g;
    }
  }
}

// Across nodes: "On an Nvidia DGX-A100 system we have 8x200Gbit/s IB cards
// and we measure 192GB/s AllReduce BusBW" (NVIDIA's NCCL team, NVIDIA/nccl
// issue 812, 2023). A ring over nodes is paced by its slowest links, the
// eight NICs of 25 GB/s (200 GB/s a node), whatever the node count. The
// preset, its phases pipelined as NCCL runs them, is paced by the rail phase:
// an all-reduce of 8e9 / 8 = 1e9 bytes over the 8 nodes, 2 x 7/8 x 1e9 /
// (25e9 x 0.85, the tier's efficiency at and above 256 MiB) = 82.35 ms plus
// 14 steps of 5 us and the small latencies of the node's phases, 82.48 ms:
// a bus bandwidth of 2 x 63/64 x 8e9 / 82.48 ms = 191.0 GB/s. The phases one
// after the other gave 103.9 GB/s, half the measurement.
TEST(NcclMeasured, DgxA100AllReduceAcrossNodesAtItsNics) {
  const SystemSpec a100 = Preset("dgx-a100-superpod");
  const AlphaBetaNetwork a(a100);
  EXPECT_NEAR(a.Explain(Collective::kAllReduce, 8e9, a.Place(64, 1)).busbw / 1e9, 192, 0.15 * 192);
  EXPECT_NEAR(a.Explain(Collective::kAllReduce, 8e9, a.Place(64, 1)).busbw / 1e9, 191.0, 0.05);
}

// Meta's 24K-GPU RoCE cluster as Grattafiori et al. 2024 Sec. 3.3.1 states
// it: 8 pods of 3,072 GPUs, each pod non-blocking, the aggregation layer
// between them 1:7 oversubscribed; 400 Gb/s (50 GB/s) per GPU. At 1 GiB the
// RoCE tiers' efficiency is 0.85 (the curve's last point, 256 MiB), so a
// send inside a pod moves at 50e9 x 0.85 = 42.5 GB/s and one between pods
// at 42.5 / 7 = 6.071 GB/s; each pays the tier's 5 us step and the 8.4 us
// base latency of the call (the nvlink tier's, the largest on the way).
// The MI300X platform (configs/systems/mi300x-platform.yaml): eight GPUs, one
// Infinity Fabric link of 64 GB/s per direction between every pair (seven
// links, 448 GB/s), nodes joined at 400 Gb/s per GPU.
TEST(Mi300xPlatform, EveryPairHasOneLinkAndNodesMeetAt400Gbps) {
  const SystemSpec s = Preset("mi300x-platform");
  base::Diagnostics d;
  CheckSystem(s, "system", {}, d);
  EXPECT_TRUE(d.ok()) << d.ToString();
  ASSERT_EQ(s.network.size(), 2u);
  const AlphaBetaNetwork n(s);
  // Inside a node one link carries a send: 1 GiB / (64 GB/s x 0.85) =
  // 19.7379 ms + 5 us.
  EXPECT_NEAR(n.SendTime(0, 1, kGiB) * 1e3, 1073741824.0 / 54.4e9 * 1e3 + 5e-3, 1e-6);
  EXPECT_NEAR(n.SendTime(0, 1, kGiB) * 1e3, 19.7430, 1e-4);
  // Between nodes, the 400 Gb/s NIC: 1 GiB / (50 GB/s x 0.85) = 25.2645 ms
  // and the fat tree's latency.
  const double across = n.SendTime(0, 8, kGiB);
  EXPECT_GT(across * 1e3, 25.2645);
  EXPECT_LT(across * 1e3, 25.2645 + 0.05);
  // An all-to-all inside the node sends 7/8 of the buffer, an eighth over
  // each of the seven links at once: each link carries 1/8 GiB.
  const double a2a = n.Explain(Collective::kAllToAll, kGiB, n.Place(8, 1)).time_s;
  EXPECT_NEAR(a2a * 1e3, 1073741824.0 / 8 / 54.4e9 * 1e3, 0.02);
}

TEST(MetaRoce, PodsAreNonBlockingAndTheAggregationLayerGivesASeventh) {
  const SystemSpec s = Preset("meta-roce-24k");
  base::Diagnostics d;
  CheckSystem(s, "system", {}, d);
  EXPECT_TRUE(d.ok()) << d.ToString();
  EXPECT_EQ(DeviceCount(s), 24576);  // 8 pods x 3,072
  ASSERT_EQ(s.network.size(), 3u);
  EXPECT_EQ(s.network[1].domain, 3072);  // 192 racks x 16 GPUs
  EXPECT_EQ(s.network[1].oversubscription, 1);
  EXPECT_EQ(s.network[2].oversubscription, 7);
  // The paper names no host CPU: no launch time is claimed for it.
  EXPECT_EQ(s.host.cpu, "");
  EXPECT_EQ(s.host.op_launch_time, 0);

  const AlphaBetaNetwork n(s);
  // 1 GiB / 42.5 GB/s = 25.2645 ms + 13.4 us = 25.2779 ms (devices 0 and 8:
  // two servers of one pod).
  const double in_pod = n.SendTime(0, 8, kGiB);
  EXPECT_NEAR(in_pod * 1e3, 25.2779, 1e-4);
  // Devices 0 and 3,072: the first GPU of two pods. 1 GiB / 6.071 GB/s =
  // 176.8516 ms + 13.4 us = 176.8650 ms.
  const double across = n.SendTime(0, 3072, kGiB);
  EXPECT_NEAR(across * 1e3, 176.8650, 1e-4);
  EXPECT_NEAR((across - 13.4e-6) / (in_pod - 13.4e-6), 7.0, 1e-9);

  // A group of 3,072 GPUs at stride 1 fills one pod and stays in it; the
  // same group at stride 2 spans two pods and reaches the aggregation layer.
  EXPECT_EQ(n.Place(3072, 1).per_domain[1], 3072);
  EXPECT_EQ(n.Explain(Collective::kAllReduce, kGiB, n.Place(3072, 1)).top_tier, 1);
  EXPECT_EQ(n.Explain(Collective::kAllReduce, kGiB, n.Place(3072, 2)).top_tier, 2);

  // Bisection of one domain (topology.h): a pod 1,536 x 50 GB/s = 76.8 TB/s;
  // the cluster 12,288 x 50 GB/s / 7 = 87.771 TB/s, little more than one
  // pod's although it holds eight.
  EXPECT_NEAR(BisectionBandwidth(s.network[1], n.geometry(1)) / 1e12, 76.8, 1e-9);
  EXPECT_NEAR(BisectionBandwidth(s.network[2], n.geometry(2)) / 1e12, 87.7714, 1e-4);

  // Parts: the aggregation layer is the top of the pods' fabric, not a
  // second fabric. The pod tier has the 24,576 NIC ports, one cable each and
  // two transceivers a cable; the aggregation tier no NIC of its own, and
  // the pods' uplinks for links: 24,576 / 7 = 3,510 (whole links), 7,020
  // transceivers. (No switch is counted: the paper gives no radix.)
  const SystemCost c = CountParts(s, PriceSpec{});
  ASSERT_EQ(c.tiers.size(), 3u);
  EXPECT_EQ(c.tiers[1].nic_ports, 24576);
  EXPECT_EQ(c.tiers[1].links, 24576);
  EXPECT_EQ(c.tiers[1].transceivers, 49152);
  EXPECT_EQ(c.tiers[2].nic_ports, 0);
  EXPECT_EQ(c.tiers[2].links, 3510);
  EXPECT_EQ(c.tiers[2].transceivers, 7020);
  EXPECT_EQ(c.tiers[2].nic_cost, 0.0);
}

// --- system.host: the host CPU (HostSchema, hardware/system_spec.h) --------

// Parses `yaml` (a `system:` document) from a file of its own, so that the
// messages carry a file, line and column.
SystemSpec ParseSystemText(const std::string& name, const std::string& yaml, base::Diagnostics& d,
                           std::string& file) {
  file = (std::filesystem::path(testing::TempDir()) / name).string();
  std::ofstream(file) << yaml;
  SystemSpec s;
  const auto root = base::LoadYamlFile(file, d);
  if (root) ParseSystem((*root)["system"], "system", file, s, d);
  return s;
}

const std::string kHostSystem =
    "system:\n"
    "  device: {name: x, peak_bf16: 1 PFLOP/s, memory_capacity: 80 GB, memory_bandwidth: 3 TB/s}\n"
    "  network: [{name: nvlink, domain: 0, bandwidth: 450 GB/s}]\n"
    "  host:\n";

TEST(HostSection, ReadsTheCpuAndItsTimePerOperatorWithUnits) {
  base::Diagnostics d;
  std::string file;
  const SystemSpec s = ParseSystemText(
      "orrery_host_ok.yaml",
      kHostSystem + "    cpu: Intel Xeon Platinum 8480C\n    op_launch_time: 13.48 us\n"
                    "    op_launch_source: TransformerEngine issue 2053\n",
      d, file);
  ASSERT_TRUE(d.ok()) << d.ToString();
  EXPECT_EQ(s.host.cpu, "Intel Xeon Platinum 8480C");
  EXPECT_DOUBLE_EQ(s.host.op_launch_time, 13.48e-6);  // 13.48 us in seconds
  EXPECT_EQ(s.host.op_launch_source, "TransformerEngine issue 2053");
  // Without the section: no CPU stated, no time measured.
  base::Diagnostics d2;
  const SystemSpec none = ParseSystemText(
      "orrery_host_none.yaml", kHostSystem.substr(0, kHostSystem.size() - std::string("  host:\n").size()), d2,
      file);
  ASSERT_TRUE(d2.ok()) << d2.ToString();
  EXPECT_EQ(none.host.cpu, "");
  EXPECT_EQ(none.host.op_launch_time, 0);
}

// A negative time, one above 1 ms (no eager operator costs the host that
// much: TransformerEngine issue 2053 measures 13-37 us), one without a unit
// and a misspelt key: each a located error naming the key and the rule.
TEST(HostSection, BadValuesAreLocatedErrors) {
  struct Case {
    std::string line, expect;
  };
  const Case cases[] = {
      {"    op_launch_time: -1 us\n", ":5:21: error: system.host.op_launch_time: value out of range: must be in [0 s, 1 ms]"},
      {"    op_launch_time: 2 ms\n", ":5:21: error: system.host.op_launch_time: value out of range: must be in [0 s, 1 ms]"},
      {"    op_launch_time: 13.48\n", ":5:21: error: system.host.op_launch_time: "},
      {"    op_launch_tme: 13 us\n", ":5:5: error: system.host.op_launch_tme: unknown key in host; did you mean 'op_launch_time'?"},
  };
  int i = 0;
  for (const Case& c : cases) {
    base::Diagnostics d;
    std::string file;
    ParseSystemText("orrery_host_bad" + std::to_string(i++) + ".yaml", kHostSystem + c.line, d, file);
    ASSERT_EQ(d.size(), 1u) << c.line << d.ToString();
    EXPECT_NE(d.ToString().find(file + c.expect), std::string::npos) << d.ToString();
  }
}

// Every shipped system preset loads with its host section; the measured
// figures are TransformerEngine issue 2053's torch.nn.Linear forward CPU
// times (13.48 us H100 DGX / Xeon Platinum 8480C, 37.08 us GB200, 33.17 us
// GH200), and hosts nobody measured carry their CPU and no time.
TEST(HostSection, ShippedPresetsStateTheirHostCpu) {
  for (const auto& e : std::filesystem::directory_iterator(std::string(ORRERY_TEST_CONFIG_DIR) + "/systems"))
    if (e.path().extension() == ".yaml") (void)Preset(e.path().stem().string());
  for (const char* n : {"dgx-h100-superpod", "dgx-h100-clos-2to1", "dgx-h100-rail-only", "eos"}) {
    const SystemSpec s = Preset(n);
    EXPECT_EQ(s.host.cpu, "Intel Xeon Platinum 8480C") << n;
    EXPECT_DOUBLE_EQ(s.host.op_launch_time, 13.48e-6) << n;
  }
  EXPECT_DOUBLE_EQ(Preset("gb200-nvl72").host.op_launch_time, 37.08e-6);
  for (const char* n : {"gh200-nvl256", "gh200-nvl256-rail-only"})
    EXPECT_DOUBLE_EQ(Preset(n).host.op_launch_time, 33.17e-6) << n;
  for (const char* n : {"gb200-nvl72", "gh200-nvl256"})
    EXPECT_EQ(Preset(n).host.cpu, "NVIDIA Grace, 72 Arm Neoverse V2 cores") << n;
  const std::pair<const char*, const char*> unmeasured[] = {{"dgx-b200", "Intel Xeon Platinum 8570"},
                                                            {"dgx-a100-superpod", "AMD EPYC 7742"},
                                                            {"selene", "AMD EPYC 7742"},
                                                            {"frontier", "AMD EPYC 7A53 Trento, 64 cores"}};
  for (const auto& [n, cpu] : unmeasured) {
    const SystemSpec s = Preset(n);
    EXPECT_EQ(s.host.cpu, cpu) << n;
    EXPECT_EQ(s.host.op_launch_time, 0) << n;
  }
}

}  // namespace
}  // namespace orrery::hardware
