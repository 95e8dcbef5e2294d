// SPDX-License-Identifier: Apache-2.0
// The sandbox's node facts on files laid out as the NVIDIA driver, the kernel and gdrcopy lay
// them out: which device nodes the driver has and /dev lacks, and the nvidia-modprobe command
// that makes them.

#include <gtest/gtest.h>

#include "facts/sandbox_probe.hpp"
#include "temp_dir.hpp"

namespace gl {
namespace {

void driver_with_gpus(testing::TempDir& root, int gpus) {
  root.write("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX Open Kernel Module  580\n");
  for (int i = 0; i < gpus; ++i)
    root.write("proc/driver/nvidia/gpus/0000:" + std::to_string(0x18 + i) + ":00.0/information",
               "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\nDevice Minor: \t " +
                   std::to_string(i) + "\nBus Type: \t PCIe\n");
}

// A fresh boot: the nvidia module loaded by udev, nothing has called CUDA yet.
TEST(NvidiaNodes, AFreshBootLacksUvmAndTheGpuNodesAndModprobeWouldMakeThem) {
  testing::TempDir root;
  driver_with_gpus(root, 2);
  root.write("proc/devices", "Character devices:\n  1 mem\n195 nvidia-frontend\n");
  root.write("dev/nvidiactl", "");
  const auto fact = probe_nvidia_nodes(NodeFs(root.path()));
  EXPECT_TRUE(fact.driver_loaded);
  EXPECT_FALSE(fact.uvm_registered);
  EXPECT_EQ(fact.minors, (std::vector<int>{0, 1}));
  EXPECT_EQ(fact.missing,
            (std::vector<std::string>{"/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia1"}));
  EXPECT_EQ(nvidia_modprobe_args(fact), (std::vector<std::string>{"-u", "-c", "0", "-c", "1"}));
}

TEST(NvidiaNodes, MigCapabilitiesAndImexChannelsAreMadeToo) {
  testing::TempDir root;
  driver_with_gpus(root, 1);
  root.write("proc/devices", "195 nvidia\n234 nvidia-uvm\n237 nvidia-caps-imex-channels\n");
  root.write("proc/driver/nvidia/capabilities/mig/config", "DeviceFileMinor: 1\n");
  root.write("dev/nvidia-uvm", "");
  root.write("dev/nvidia0", "");
  const auto fact = probe_nvidia_nodes(NodeFs(root.path()));
  EXPECT_TRUE(fact.missing.empty());
  EXPECT_EQ(nvidia_modprobe_args(fact),
            (std::vector<std::string>{"-u", "-c", "0", "-f",
                                      "/proc/driver/nvidia/capabilities/mig/config", "-i", "0:1"}));
}

// Before udev loaded the module: one minor per NVIDIA display controller on the PCI bus.
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
