// Issue 15: a device preset written `like:` another (the H800 is the H100
// with fewer NVLink links) takes that preset's values and replaces the keys
// it states; the devices measured runs name that the presets lacked (H800,
// A800, GH200, MI325X, MI355X, B300) are written that way.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include "core/estimate/scenario.h"
#include "hardware/device_spec.h"
#include "hardware/network.h"

namespace orrery::engine {
namespace {

namespace fs = std::filesystem;
const std::string kConfigs = ORRERY_TEST_CONFIG_DIR;
constexpr double kGiB = 1073741824.0;

hardware::DeviceSpec Device(const std::string& name, const PresetStore& store) {
  hardware::DeviceSpec d;
  base::Diagnostics diags;
  EXPECT_TRUE(LoadDevicePreset(name, store, {}, "device", d, diags)) << diags.ToString();
  return d;
}

hardware::DeviceSpec Device(const std::string& name) { return Device(name, PresetStore(kConfigs)); }

// The schema keys whose printed values differ between two devices.
std::vector<std::string> Differing(const hardware::DeviceSpec& a, const hardware::DeviceSpec& b) {
  std::vector<std::string> out;
  const auto& s = hardware::DeviceSchema();
  for (const std::string& k : s.Keys())
    if (s.GetText(a, k) != s.GetText(b, k)) out.push_back(k);
  return out;
}

TEST(DeviceLike, H800IsTheH100ButItsNvlinkAndName) {
  const hardware::DeviceSpec h100 = Device("h100-sxm"), h800 = Device("h800");
  EXPECT_EQ(Differing(h100, h800), (std::vector<std::string>{"name", "citation", "scaleup_bandwidth"}));
  EXPECT_EQ(h800.name, "NVIDIA H800 SXM5 80GB");
  EXPECT_DOUBLE_EQ(h800.scaleup_bandwidth, 200e9);
  EXPECT_EQ(h800.gemm_efficiency.y, h100.gemm_efficiency.y);
  EXPECT_EQ(h800.flash_attention_length_factor.y, h100.flash_attention_length_factor.y);

  // In the DGX H100 (its reference system) the NVLink tier is held to the
  // device's 200 GB/s: a 1 GiB send at the tier's 1 GiB efficiency (0.68)
  // takes 1 GiB / 0.68 x (1/200 - 1/450) ns per byte = 4.3862 ms longer
  // than on the H100 (the latencies are the same and cancel).
  hardware::SystemSpec sys;
  base::Diagnostics diags;
  ASSERT_TRUE(LoadSystemPreset("dgx-h100-superpod", PresetStore(kConfigs), {}, "system", sys, diags))
      << diags.ToString();
  const double t100 = hardware::AlphaBetaNetwork(sys).SendTime(0, 1, kGiB);
  sys.device = h800;
  const double t800 = hardware::AlphaBetaNetwork(sys).SendTime(0, 1, kGiB);
  EXPECT_NEAR((t800 - t100) * 1e3, kGiB / 0.68 * (1 / 200e9 - 1 / 450e9) * 1e3, 1e-9);
  EXPECT_NEAR((t800 - t100) * 1e3, 4.3862, 1e-4);
  // What a device moves on each tier, as the estimate's notes and `orrery
  // network` print it: the H800's own 200 GB/s inside the node, the 400 Gb/s
  // NIC (50 GB/s) between nodes.
  EXPECT_DOUBLE_EQ(hardware::DeviceTierBandwidth(sys, 0), 200e9);
  EXPECT_DOUBLE_EQ(hardware::DeviceTierBandwidth(sys, 1), 50e9);
  EXPECT_DOUBLE_EQ(hardware::AlphaBetaNetwork(sys).bandwidth(0), 200e9);
  // Between nodes the NIC, not NVLink: the same on both.
  sys.device = h100;
  const double x100 = hardware::AlphaBetaNetwork(sys).SendTime(0, 8, kGiB);
  sys.device = h800;
  EXPECT_DOUBLE_EQ(hardware::AlphaBetaNetwork(sys).SendTime(0, 8, kGiB), x100);
}

TEST(DeviceLike, StatedKeysReplaceTheBasesAndTheRestStays) {
  const hardware::DeviceSpec mi300x = Device("mi300x"), mi325x = Device("mi325x");
  EXPECT_EQ(Differing(mi300x, mi325x),
            (std::vector<std::string>{"name", "citation", "memory_capacity", "memory_bandwidth", "tdp"}));
  EXPECT_DOUBLE_EQ(mi325x.memory_capacity, 256e9);
  EXPECT_DOUBLE_EQ(mi325x.memory_bandwidth, 6e12);
  EXPECT_DOUBLE_EQ(mi325x.peak_bf16, 1307.4e12);  // the MI300X's
  // The GEMM curve, replaced whole: the H200 probe's largest point 0.70 x
  // 60.4 / 80.3 (the two MAMF measurements) = 0.527; the MI300X's is 0.448.
  ASSERT_EQ(mi325x.gemm_efficiency.y.size(), 6u);
  EXPECT_DOUBLE_EQ(mi325x.gemm_efficiency.y.back(), 0.527);
  EXPECT_DOUBLE_EQ(mi300x.gemm_efficiency.y.back(), 0.448);
  EXPECT_NEAR(0.70 * 60.4 / 80.3, 0.527, 5e-4);

  const hardware::DeviceSpec a100 = Device("a100-80gb"), a800 = Device("a800-80gb");
  EXPECT_EQ(Differing(a100, a800), (std::vector<std::string>{"name", "citation", "scaleup_bandwidth"}));
  EXPECT_DOUBLE_EQ(a800.scaleup_bandwidth, 200e9);  // 400 GB/s both ways; the A100's 300 each way

  // A key the derived preset sets to zero is zero, not the base's: the
  // MI355X publishes no TF32 rate.
  EXPECT_DOUBLE_EQ(Device("mi355x").peak_tf32, 0);
  EXPECT_DOUBLE_EQ(Device("b300").peak_fp4, 12600e12);
  EXPECT_EQ(Device("b300").gemm_efficiency_mxfp8.y, Device("b200").gemm_efficiency_mxfp8.y);

  // The H20: the H100's curves on a sixth of its tensor rate. A 1 TFLOP
  // GEMM at the curve's top point (0.70) takes 1e12 / (0.70 x 148e12) =
  // 9.653 ms plus the 4 us floor on it, 1.444 ms on the H100.
  const hardware::DeviceSpec h20 = Device("h20"), h100 = Device("h100-sxm");
  EXPECT_EQ(h20.gemm_efficiency.y, h100.gemm_efficiency.y);
  EXPECT_DOUBLE_EQ(h20.peak_bf16, 148e12);
  EXPECT_NEAR(1e12 / (h20.gemm_efficiency.At(1e12) * h20.peak_bf16) * 1e3, 9.653, 1e-3);
  EXPECT_NEAR(1e12 / (h100.gemm_efficiency.At(1e12) * h100.peak_bf16) * 1e3, 1.444, 1e-3);
}

TEST(DeviceLike, TheNewDevicesAnswerToTheNamesRunsUse) {
  const PresetStore store(kConfigs);
  // The names nvidia-smi, rocm-smi and vendors' tables write.
  const std::pair<const char*, const char*> kNames[] = {
      {"NVIDIA H800", "h800"},           {"H800 80GB HBM3", "h800"},
      {"NVIDIA A800-SXM4-80GB", "a800-80gb"}, {"GH200 Grace Hopper Superchip", "gh200"},
      {"AMD Instinct MI325X", "mi325x"}, {"MI355X", "mi355x"},
      {"NVIDIA B300", "b300"},           {"NVIDIA H20", "h20"},
      {"GB300 NVL72", "gb300"}};
  for (const auto& [name, preset] : kNames) {
    const auto r = store.Resolve(DocKind::kDevice, name);
    EXPECT_EQ(r ? r->preset : std::string("<none>"), preset) << name;
  }
  for (const char* d : {"h800", "a800-80gb", "gh200", "mi325x", "mi355x", "b300", "h20", "gb300"})
    EXPECT_FALSE(store.ReferenceSystem(d).empty()) << d;
}

// A system written `like:` a preset: DeepSeek-V3's cluster (arXiv
// 2412.19437 Sec. 3.1: 2048 H800, eight a node on NVLink and NVSwitch,
// InfiniBand between nodes) as the DGX H100 SuperPOD with H800s and 256
// nodes. The tiers are the base's; the NVLink tier is held to the H800's
// 200 GB/s.
TEST(SystemLike, TheBaseSystemWithTheKeysTheMapStates) {
  const std::string yaml =
      "system:\n  name: DeepSeek-V3 H800 cluster\n  like: dgx-h100-superpod\n  device: h800\n"
      "  nodes: 256\n";
  const YAML::Node root = YAML::Load(yaml);
  hardware::SystemSpec base, sys;
  base::Diagnostics diags;
  const PresetStore store(kConfigs);
  ASSERT_TRUE(LoadSystemPreset("dgx-h100-superpod", store, {}, "system", base, diags)) << diags.ToString();
  LoadSystemMap(root["system"], "system", "s.yaml", store, sys, diags);
  ASSERT_TRUE(diags.ok()) << diags.ToString();
  EXPECT_EQ(sys.name, "DeepSeek-V3 H800 cluster");
  EXPECT_EQ(sys.device_preset, "h800");
  EXPECT_EQ(sys.nodes * sys.devices_per_node, 2048);
  ASSERT_EQ(sys.network.size(), base.network.size());
  EXPECT_EQ(sys.network[1].bandwidth, base.network[1].bandwidth);  // 400 Gb/s = DeepSeek's 50 GB/s
  EXPECT_EQ(sys.host.op_launch_time, base.host.op_launch_time);
  EXPECT_DOUBLE_EQ(hardware::AlphaBetaNetwork(sys).SendTime(0, 1, kGiB) -
                       hardware::AlphaBetaNetwork(base).SendTime(0, 1, kGiB),
                   kGiB / 0.68 * (1 / 200e9 - 1 / 450e9));
  // A stated network replaces the base's whole; a stated host key changes
  // that key only.
  const YAML::Node two = YAML::Load(
      "system:\n  name: One tier\n  like: dgx-h100-superpod\n  host: {cpu: Grace}\n"
      "  network:\n    - {name: ib, domain: 0, topology: fat-tree, radix: 64, levels: 2, "
      "bandwidth: 200 Gb/s, latency: 5 us}\n");
  hardware::SystemSpec one;
  LoadSystemMap(two["system"], "system", "t.yaml", store, one, diags);
  ASSERT_TRUE(diags.ok()) << diags.ToString();
  ASSERT_EQ(one.network.size(), 1u);
  EXPECT_DOUBLE_EQ(one.network[0].bandwidth, 25e9);
  EXPECT_EQ(one.host.cpu, "Grace");
  EXPECT_EQ(one.host.op_launch_time, base.host.op_launch_time);
  EXPECT_EQ(one.device_preset, "h100-sxm");
  // An inline device map replaces the base's device, and with it its preset
  // name (a report would otherwise speak of the H100's measured runs).
  const YAML::Node inl = YAML::Load(
      "system:\n  name: Capped\n  like: dgx-h100-superpod\n"
      "  device: {name: H100 at 500 W, like: h100-sxm, power_cap: 500 W}\n");
  hardware::SystemSpec capped;
  LoadSystemMap(inl["system"], "system", "v.yaml", store, capped, diags);
  ASSERT_TRUE(diags.ok()) << diags.ToString();
  EXPECT_EQ(capped.device_preset, "");
  EXPECT_DOUBLE_EQ(capped.device.power_cap, 500);
  EXPECT_DOUBLE_EQ(capped.device.peak_bf16, 989.4e12);
  // Its own name is required, as a device's.
  const YAML::Node nameless = YAML::Load("system:\n  like: dgx-h100-superpod\n  nodes: 4\n");
  hardware::SystemSpec x;
  LoadSystemMap(nameless["system"], "system", "u.yaml", store, x, diags);
  EXPECT_NE(diags.ToString().find("system.name: a system written `like: dgx-h100-superpod` states its own name"),
            std::string::npos) << diags.ToString();
}

// A scratch folder of device presets.
class LikeErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("orrery_like_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "devices");
    fs::copy_file(fs::path(kConfigs) / "devices" / "h100-sxm.yaml", dir_ / "devices" / "h100-sxm.yaml");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / "devices" / (name + ".yaml")) << text;
  }
  std::string Errors(const std::string& name) {
    hardware::DeviceSpec d;
    base::Diagnostics diags;
    LoadDevicePreset(name, PresetStore(dir_.string()), {}, "device", d, diags);
    return diags.ToString();
  }
  fs::path dir_;
};

TEST_F(LikeErrors, AnUnknownBaseIsNamedWithItsLineAndANearName) {
  Write("x", "device:\n  name: X\n  like: h100-sxn\n");
  const std::string e = Errors("x");
  EXPECT_NE(e.find("x.yaml:3:9"), std::string::npos) << e;
  EXPECT_NE(e.find("device.like"), std::string::npos) << e;
  EXPECT_NE(e.find("h100-sxn"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'h100-sxm'"), std::string::npos) << e;
}

TEST_F(LikeErrors, ADerivedDeviceStatesItsOwnName) {
  Write("x", "device:\n  like: h100-sxm\n  tdp: 500 W\n");
  const std::string e = Errors("x");
  EXPECT_NE(e.find("device.name"), std::string::npos) << e;
  EXPECT_NE(e.find("states its own name"), std::string::npos) << e;
}

TEST_F(LikeErrors, ACycleIsRefusedNotFollowedForever) {
  Write("a", "device:\n  name: A\n  like: b\n");
  Write("b", "device:\n  name: B\n  like: a\n");
  const std::string e = Errors("a");
  EXPECT_NE(e.find("presets deep in `like:`"), std::string::npos) << e;
}

TEST_F(LikeErrors, AStatedKeyIsCheckedAsInAnyDevice) {
  Write("x", "device:\n  name: X\n  like: h100-sxm\n  memory_bandwidth: 3\n  like_this: 1\n");
  const std::string e = Errors("x");
  EXPECT_NE(e.find("device.memory_bandwidth"), std::string::npos) << e;
  EXPECT_NE(e.find("device.like_this"), std::string::npos) << e;
}

}  // namespace
}  // namespace orrery::engine
