// SPDX-License-Identifier: Apache-2.0
// The sandbox's node facts on files laid out as the NVIDIA driver, the kernel and gdrcopy lay
// them out: which device nodes the driver serves and /dev lacks or has wrong (read back by type,
// major and minor), and the nvidia-modprobe calls that make them. The real nvidia-modprobe runs
// these calls in tests/integration/nvidia_real_programs_test.sh.

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "facts/gather.hpp"
#include "facts/sandbox_probe.hpp"
#include "support/fixture_node.hpp"
#include "temp_dir.hpp"

namespace gl {
namespace {

using Calls = std::vector<std::vector<std::string>>;

void driver_with_gpus(testing::TempDir& root, int gpus) {
  root.write("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX Open Kernel Module  580\n");
  for (int i = 0; i < gpus; ++i)
    root.write("proc/driver/nvidia/gpus/0000:" + std::to_string(0x18 + i) + ":00.0/information",
               "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\nDevice Minor: \t " +
                   std::to_string(i) + "\nBus Type: \t PCIe\n");
}

// A character device in the fixture's /dev (mknod: root only).
bool char_node(testing::TempDir& root, const std::string& path, unsigned major, unsigned minor) {
  root.write(path, "");
  const auto host = root.path() / path;
  ::unlink(host.c_str());
  return ::mknod(host.c_str(), S_IFCHR | 0666, makedev(major, minor)) == 0;
}

// /proc/devices as fs/char_dev.c writes it, the driver's regions as R550+ registers them.
constexpr const char* kDevices =
    "Character devices:\n  1 mem\n195 nvidia\n195 nvidiactl\n234 nvidia-uvm\n237 nvidia-caps\n"
    "238 nvidia-caps-imex-channels\n\nBlock devices:\n  8 sd\n";

// A fresh boot: the nvidia module loaded by udev, nothing has called CUDA yet.
TEST(NvidiaNodes, AFreshBootLacksUvmAndTheGpuNodesAndModprobeWouldMakeThem) {
  testing::TempDir root;
  driver_with_gpus(root, 2);
  root.write("proc/devices", "Character devices:\n  1 mem\n195 nvidia-frontend\n");
  root.write("dev/nvidiactl", "");  // a regular file is no node
  const auto fact = probe_nvidia_nodes(NodeFs(root.path()));
  EXPECT_TRUE(fact.driver_loaded);
  EXPECT_FALSE(fact.uvm_registered);
  EXPECT_EQ(fact.minors, (std::vector<int>{0, 1}));
  EXPECT_EQ(fact.missing,
            (std::vector<std::string>{"/dev/nvidiactl (not a character device)", "/dev/nvidia-uvm",
                                      "/dev/nvidia-uvm-tools", "/dev/nvidia0", "/dev/nvidia1"}));
  // One call per mode of nvidia-modprobe's main(): -u would turn every -c into a uvm minor.
  EXPECT_EQ(nvidia_modprobe_calls(fact),
            (Calls{{"-c", "255", "-c", "0", "-c", "1"}, {"-u", "-c", "0"}}));
}

// Before udev loaded the module: both calls, which load nvidia and nvidia-uvm themselves.
TEST(NvidiaNodes, WithoutTheDriverThePciBusCountsTheGpus) {
  testing::TempDir root;
  for (auto [address, vendor, klass] :
       {std::tuple{"0000:18:00.0", "0x10de\n", "0x030200\n"},
        std::tuple{"0000:19:00.0", "0x10de\n", "0x030000\n"},
        std::tuple{"0000:1a:00.0", "0x10de\n", "0x068000\n"},  // an NVSwitch bridge
        std::tuple{"0000:1b:00.0", "0x8086\n", "0x030000\n"}}) {
    root.write(std::string("sys/bus/pci/devices/") + address + "/vendor", vendor);
    root.write(std::string("sys/bus/pci/devices/") + address + "/class", klass);
  }
  const auto fact = probe_nvidia_nodes(NodeFs(root.path()));
  EXPECT_FALSE(fact.driver_loaded);
  EXPECT_EQ(fact.minors, (std::vector<int>{0, 1}));
  EXPECT_EQ(nvidia_modprobe_calls(fact),
            (Calls{{"-c", "255", "-c", "0", "-c", "1"}, {"-u", "-c", "0"}}));
}

// Where a loaded driver listed its GPUs (NVML answered) but /proc/driver/nvidia is not in the
// root, the minors are those GPUs: the PCI bus, which says two here, is not scanned.
TEST(NvidiaNodes, GpusALoadedDriverListedStandInForThePciScan) {
  testing::TempDir root;
  for (const auto& address : {"0000:18:00.0", "0000:19:00.0"}) {
    root.write(std::string("sys/bus/pci/devices/") + address + "/vendor", "0x10de\n");
    root.write(std::string("sys/bus/pci/devices/") + address + "/class", "0x030200\n");
  }
  const auto fact = probe_nvidia_nodes(NodeFs(root.path()), size_t{4});
  EXPECT_FALSE(fact.driver_loaded);
  EXPECT_EQ(fact.minors, (std::vector<int>{0, 1, 2, 3}));
  // Without that answer the bus is what counts, as before.
  EXPECT_EQ(probe_nvidia_nodes(NodeFs(root.path())).minors, (std::vector<int>{0, 1}));
}

// The same through gather_facts: NVML answering stands for the loaded driver; NVML failing (no
// driver) leaves the PCI bus to count the controllers nvidia-modprobe will number.
TEST(NvidiaNodes, GatherCountsNvmlGpusOrElseThePciBus) {
  test::FixtureNode node;
  for (const auto& address : {"0000:18:00.0", "0000:19:00.0"}) {
    node.write(std::string("/sys/bus/pci/devices/") + address + "/vendor", "0x10de\n");
    node.write(std::string("/sys/bus/pci/devices/") + address + "/class", "0x030200\n");
  }
  FactsRequest request;
  request.probe_ports = false;
  request.probe_cache = std::nullopt;
  setenv("GPULAUNCH_FAKE_NVML", node.nvml({{3, 12, 0}}, "580.95.05", "13.0").c_str(), 1);
  auto loaded = gather_facts(NodeFs(node.root()), request);
  ASSERT_EQ(loaded.driver.source, "nvml");
  EXPECT_EQ(loaded.nvidia_nodes->minors, (std::vector<int>{0, 1, 2}));
  setenv("GPULAUNCH_FAKE_NVML", node.nvml({}, "", "0", 9).c_str(), 1);
  auto none = gather_facts(NodeFs(node.root()), request);
  ASSERT_FALSE(none.driver.present);
  EXPECT_EQ(none.nvidia_nodes->minors, (std::vector<int>{0, 1}));
}

// What the old single call "-u -c 0 -c 1" leaves behind (the real program does it: the
// integration test): /dev/nvidia-uvm with the last GPU's minor. The number, not the path, counts.
TEST(NvidiaNodes, ANodeWithTheWrongNumberIsNotTheDriversAndOnlyItsCallRuns) {
  testing::TempDir root;
  driver_with_gpus(root, 2);
  root.write("proc/devices", kDevices);
  if (!char_node(root, "dev/nvidiactl", 195, 255))
    GTEST_SKIP() << "mknod needs root here: " << std::strerror(errno);
  ASSERT_TRUE(char_node(root, "dev/nvidia0", 195, 0));
  ASSERT_TRUE(char_node(root, "dev/nvidia1", 195, 1));
  ASSERT_TRUE(char_node(root, "dev/nvidia-uvm", 234, 1));
  ASSERT_TRUE(char_node(root, "dev/nvidia-uvm-tools", 234, 2));
  ASSERT_TRUE(char_node(root, "dev/nvidia-caps-imex-channels/channel0", 238, 0));
  const auto fact = probe_nvidia_nodes(NodeFs(root.path()));
  EXPECT_TRUE(fact.uvm_registered);
  EXPECT_FALSE(fact.uvm_node);
  EXPECT_TRUE(fact.imex_channel0);
  EXPECT_EQ(fact.missing, (std::vector<std::string>{
                              "/dev/nvidia-uvm (c 234:1; the driver serves c 234:0)",
                              "/dev/nvidia-uvm-tools (c 234:2; the driver serves c 234:1)"}));
  EXPECT_EQ(nvidia_modprobe_calls(fact), (Calls{{"-u", "-c", "0"}}));
  ASSERT_TRUE(char_node(root, "dev/nvidia-uvm", 234, 0));
  ASSERT_TRUE(char_node(root, "dev/nvidia-uvm-tools", 234, 1));
  EXPECT_TRUE(nvidia_modprobe_calls(probe_nvidia_nodes(NodeFs(root.path()))).empty());
}

// nvidia-modprobe 535.161.07's --help as Debian 12's package prints it (its option list), and
// the line 550.54.14-565.77 add for -i (option-table.h, printed by nvgetopt_print_help).
constexpr const char* kHelp535 =
    "\nnvidia-modprobe:  version 535.161.07\n\n\n  This setuid program is used to create...\n\n"
    "nvidia-modprobe [options]\n\n  -v, --version\n  -h, --help\n"
    "  -c MINOR-NUMBER, --create-nvidia-device-file=MINOR-NUMBER\n  -u, --unified-memory\n"
    "  -f NVIDIA-CAPABILITY-DEVICE-FILE, "
    "--nvidia-capability-device-file=NVIDIA-CAPABILITY-DEVICE-FILE\n"
    "  -a, --auto-online-movable\n";
constexpr const char* kHelp565Imex =
    "  -i NVIDIA-IMEX-CHANNEL-DEVICE-FILE, "
    "--nvidia-imex-channel-device-file=NVIDIA-IMEX-CHANNEL-DEVICE-FILE\n";

TEST(NvidiaNodes, MigCapabilitiesAreTheirOwnCallAndImexOnlyWhereModprobeHasIt) {
  testing::TempDir root;
  driver_with_gpus(root, 1);
  root.write("proc/devices", kDevices);
  root.write("proc/driver/nvidia/capabilities/mig/config",
             "DeviceFileMinor: 1\nDeviceFileMode: 256\nDeviceFileModify: 1\n");
  root.write("usr/bin/nvidia-modprobe", "#!/bin/sh\n");
  std::filesystem::permissions(root.path() / "usr/bin/nvidia-modprobe",
                               std::filesystem::perms::owner_all);
  if (!char_node(root, "dev/nvidiactl", 195, 255))
    GTEST_SKIP() << "mknod needs root here: " << std::strerror(errno);
  ASSERT_TRUE(char_node(root, "dev/nvidia0", 195, 0));
  ASSERT_TRUE(char_node(root, "dev/nvidia-uvm", 234, 0));
  ASSERT_TRUE(char_node(root, "dev/nvidia-uvm-tools", 234, 1));
  auto fact = probe_nvidia_nodes(NodeFs(root.path()));
  EXPECT_EQ(fact.missing, (std::vector<std::string>{"/dev/nvidia-caps/nvidia-cap1"}));
  EXPECT_EQ(fact.imex_major, 238);
  EXPECT_FALSE(fact.imex_channel0);
  EXPECT_TRUE(needs_modprobe_help(fact));

  auto on_535 = fact;
  read_modprobe_help(on_535, kHelp535);
  EXPECT_EQ(on_535.modprobe_version, "535.161.07");
  EXPECT_EQ(on_535.modprobe_imex_option, false);
  EXPECT_EQ(nvidia_modprobe_calls(on_535),
            (Calls{{"-f", "/proc/driver/nvidia/capabilities/mig/config"}}));
  EXPECT_EQ(imex_channel_gap(on_535),
            "/usr/bin/nvidia-modprobe 535.161.07 has no -i (--nvidia-imex-channel-device-file; "
            "only 550.54.14-550.127.05 and 555.42.02-565.77 have it)");

  auto on_565 = fact;
  read_modprobe_help(on_565, std::string(kHelp535) + kHelp565Imex);
  EXPECT_EQ(nvidia_modprobe_calls(on_565),
            (Calls{{"-f", "/proc/driver/nvidia/capabilities/mig/config"}, {"-i", "0:1"}}));
  EXPECT_FALSE(imex_channel_gap(on_565));
}

TEST(SandboxProbe, OptionalDevicesMpsAndYamaAreRead) {
  testing::TempDir root;
  EXPECT_TRUE(probe_sandbox(NodeFs(root.path())).devices.empty());
  root.write("dev/gdrdrv", "");
  root.write("tmp/nvidia-mps/control", "");
  root.write("proc/sys/kernel/yama/ptrace_scope", "1\n");
  const auto fact = probe_sandbox(NodeFs(root.path()));
  EXPECT_EQ(fact.devices, (std::vector<std::string>{"gdrdrv"}));
  EXPECT_TRUE(fact.mps_daemon);
  EXPECT_EQ(fact.ptrace_scope, 1);
}

}  // namespace
}  // namespace gl
