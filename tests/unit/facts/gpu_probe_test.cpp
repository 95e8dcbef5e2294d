// SPDX-License-Identifier: Apache-2.0
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "facts/gpu_probe.hpp"
#include "support/fixture_node.hpp"

namespace gl {
namespace {

std::optional<std::string> no_nvidia_smi() {
  return std::nullopt;
}

TEST(NvidiaSmi, ParsesQueryCsv) {
  std::string driver;
  auto gpus = parse_nvidia_smi_csv(
      "0, NVIDIA H200, GPU-1b2c, 9.0, 143771, 570.172.08\n"
      "1, NVIDIA H200, GPU-3d4e, 9.0, 143771, 570.172.08\n",
      &driver);
  ASSERT_TRUE(gpus) << gpus.error().message;
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[1].index, 1);
  EXPECT_EQ((*gpus)[1].uuid, "GPU-3d4e");
  EXPECT_EQ((*gpus)[1].cc_major, 9);
  EXPECT_EQ((*gpus)[1].memory_total_mib, 143771u);
  EXPECT_EQ(driver, "570.172.08");
}

// mig.mode.current, as the query gpulaunch sends asks for it: "Enabled", "Disabled" or "[N/A]".
TEST(NvidiaSmi, ReadsMigMode) {
  auto gpus = parse_nvidia_smi_csv(
      "0, NVIDIA H100 80GB HBM3, GPU-7f57, 9.0, 81559, 580.105.08, Enabled\n"
      "1, NVIDIA H100 80GB HBM3, GPU-8c7c, 9.0, 81559, 580.105.08, Disabled\n"
      "2, NVIDIA L4, GPU-9d8e, 8.9, 23034, 580.105.08, [N/A]\n",
      nullptr);
  ASSERT_TRUE(gpus) << gpus.error().message;
  EXPECT_TRUE((*gpus)[0].mig);
  EXPECT_FALSE((*gpus)[1].mig);
  EXPECT_FALSE((*gpus)[2].mig);
}

TEST(NvidiaSmi, RejectsUnexpectedColumns) {
  EXPECT_FALSE(parse_nvidia_smi_csv("garbage line\n", nullptr));
}

TEST(NvidiaSmi, ReadsCudaVersionFromQueryReport) {
  EXPECT_EQ(parse_nvidia_smi_cuda_version("Driver Version                            : 580.95.05\n"
                                          "CUDA Version                              : 13.0\n"),
            "13.0");
  EXPECT_FALSE(parse_nvidia_smi_cuda_version("Driver Version : 580\n"));
}

TEST(Nvml, FakeLibraryThroughLdLibraryPath) {
  test::FixtureNode node;
  auto file = node.nvml({{2, 12, 0}, {1, 9, 0, "NVIDIA H100"}}, "580.95.05", "13.0");
  setenv("GPULAUNCH_FAKE_NVML", file.c_str(), 1);
  auto probe = probe_nvml();
  ASSERT_TRUE(probe) << probe.error().message;
  EXPECT_EQ(probe->driver.version, "580.95.05");
  EXPECT_EQ(probe->driver.max_cuda, "13.0");
  ASSERT_EQ(probe->gpus.size(), 3u);
  EXPECT_EQ(probe->gpus[2].name, "NVIDIA H100");
  EXPECT_EQ(probe->gpus[2].cc_major, 9);
  EXPECT_EQ(probe->gpus[0].uuid, "GPU-00001000-0000-0000-0000-000000000000");
}

// GPU residue: compute processes left on the GPUs a start is about to use.
TEST(Nvml, ComputeProcessesOnTheAssignedGpus) {
  test::FixtureNode node;
  auto file = node.nvml({{2, 12, 0}}, "580.95.05", "13.0");
  std::ofstream(file, std::ios::app) << "process 0 4242 2048\nprocess 1 4343 512\n";
  setenv("GPULAUNCH_FAKE_NVML", file.c_str(), 1);
  auto all = nvml_compute_processes({});
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ(all->at(0).pid, 4242u);
  EXPECT_EQ(all->at(0).used_mib, 2048u);
  auto second = nvml_compute_processes({1});
  ASSERT_TRUE(second);
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ(second->at(0).gpu, 1);
  EXPECT_EQ(second->at(0).pid, 4343u);
}

TEST(Nvml, DriverNotLoadedIsAnErrorValue) {
  test::FixtureNode node;
  auto file = node.nvml({}, "", "0", 9);
  setenv("GPULAUNCH_FAKE_NVML", file.c_str(), 1);
  auto probe = probe_nvml();
  ASSERT_FALSE(probe);
  EXPECT_EQ(probe.error().message, "Failed to initialise NVML: Driver Not Loaded");
}

// A GPU fallen off the bus: NVML still counts it, its handle answers NVML_ERROR_GPU_IS_LOST.
TEST(Nvml, ALostGpuIsRecordedAsLost) {
  test::FixtureNode node;
  auto file = node.nvml({{3, 9, 0, "NVIDIA H100 80GB HBM3"}}, "580.95.05", "13.0");
  std::ofstream(file, std::ios::app) << "lost 1\n";
  setenv("GPULAUNCH_FAKE_NVML", file.c_str(), 1);
  auto probe = probe_nvml();
  ASSERT_TRUE(probe) << probe.error().message;
  EXPECT_EQ(probe->gpus.size(), 2u);
  EXPECT_EQ(probe->driver.lost_gpus, std::vector<std::string>{"GPU 1"});
  EXPECT_EQ(probe->driver.problems, std::vector<std::string>{"Failed to open GPU 1: GPU is lost"});
}

// nvidia-smi prints the lost GPU's line in its place in the listing (older drivers name the
// address after "GPU", newer ones the index and then the address).
TEST(NvidiaSmi, ReadsLostGpus) {
  const std::string_view output =
      "0, NVIDIA H100 80GB HBM3, GPU-7f57, 9.0, 81559, 580.105.08, Disabled\n"
      "Unable to determine the device handle for GPU0000:CB:00.0: GPU is lost.  Reboot the "
      "system to recover this GPU\n"
      "Unable to determine the device handle for GPU2: 0000:34:00.0: GPU is lost\n"
      "Unable to determine the device handle for GPU3: 0000:44:00.0: Unknown Error\n";
  EXPECT_EQ(parse_nvidia_smi_lost_gpus(output),
            (std::vector<std::string>{"GPU0000:CB:00.0", "GPU2: 0000:34:00.0"}));
  auto gpus = parse_nvidia_smi_csv(output, nullptr);
  ASSERT_TRUE(gpus) << gpus.error().message;
  EXPECT_EQ(gpus->size(), 1u);
}

// Each GPU's health through the calls rules/gpu_health judges, on NVML's real ABI.
TEST(Nvml, ReadsHealthAndFabricState) {
  test::FixtureNode node;
  auto file = node.nvml({{3, 9, 0, "NVIDIA H100 80GB HBM3"}}, "580.95.05", "13.0");
  std::ofstream(file, std::ios::app)
      << "pci 0 00000000:3B:00.0\npersistence 1 0\necc 1 4\nremap 2 1 1\nretired 2 1\n"
         "fabric 0 3 0\nfabric 1 2 0\nfabric 2 3 999\necc 0 none\n";
  setenv("GPULAUNCH_FAKE_NVML", file.c_str(), 1);
  auto probe = probe_nvml();
  ASSERT_TRUE(probe) << probe.error().message;
  ASSERT_EQ(probe->gpus.size(), 3u);
  const auto& first = probe->gpus[0].health;
  const auto& second = probe->gpus[1].health;
  const auto& third = probe->gpus[2].health;
  EXPECT_EQ(probe->gpus[0].pci_bus_id, "00000000:3B:00.0");
  EXPECT_EQ(probe->gpus[1].pci_bus_id, "00000000:28:00.0");
  EXPECT_EQ(first.persistence_mode, true);
  EXPECT_EQ(second.persistence_mode, false);
  EXPECT_FALSE(first.ecc_uncorrected_volatile);  // ECC off: NOT_SUPPORTED
  EXPECT_EQ(second.ecc_uncorrected_volatile, 4u);
  EXPECT_EQ(second.row_remap_pending, false);
  EXPECT_EQ(third.row_remap_pending, true);
  EXPECT_EQ(third.row_remap_failure, true);
  EXPECT_EQ(third.retired_pages_pending, true);
  EXPECT_EQ(first.fabric_state, "completed");
  EXPECT_FALSE(first.fabric_error);
  EXPECT_EQ(second.fabric_state, "in-progress");
  EXPECT_EQ(third.fabric_state, "completed");
  EXPECT_EQ(third.fabric_error, "Unknown Error");
}

TEST(Nvml, GpuWithoutFabricSaysNotSupported) {
  test::FixtureNode node;
  setenv("GPULAUNCH_FAKE_NVML", node.nvml({{1, 12, 0}}, "580.95.05", "13.0").c_str(), 1);
  auto probe = probe_nvml();
  ASSERT_TRUE(probe) << probe.error().message;
  EXPECT_EQ(probe->gpus[0].health.fabric_state, "not-supported");
}

// NVML_ERROR_LIB_RM_VERSION_MISMATCH is kept as a fact, apart from a driver that is not there.
TEST(GpuProbe, VersionMismatchKeepsNvmlCode) {
  test::FixtureNode node;
  setenv("GPULAUNCH_FAKE_NVML", node.nvml({{1, 12, 0}}, "580.95.05", "13.0", 18).c_str(), 1);
  auto probe = probe_gpus(NodeFs(node.root()), no_nvidia_smi);
  EXPECT_FALSE(probe.driver.present);
  EXPECT_EQ(probe.driver.nvml_error, 18);
  ASSERT_FALSE(probe.driver.problems.empty());
  EXPECT_EQ(probe.driver.problems.front(),
            "Failed to initialise NVML: RM has detected an NVML/RM version mismatch.");
  setenv("GPULAUNCH_FAKE_NVML", node.nvml({}, "", "0", 9).c_str(), 1);
  EXPECT_EQ(probe_gpus(NodeFs(node.root()), no_nvidia_smi).driver.nvml_error, 9);
}

// A loaded driver's NVML answers everything nvidia-smi would: PATH is not searched for it.
TEST(GpuProbe, NvmlAnswerLooksForNoNvidiaSmi) {
  test::FixtureNode node;
  setenv("GPULAUNCH_FAKE_NVML", node.nvml({{2, 12, 0}}, "580.95.05", "13.0").c_str(), 1);
  int lookups = 0;
  auto probe = probe_gpus(NodeFs(node.root()), [&]() -> std::optional<std::string> {
    ++lookups;
    return std::nullopt;
  });
  EXPECT_EQ(lookups, 0);
  EXPECT_TRUE(probe.driver.present);
  EXPECT_EQ(probe.driver.source, "nvml");
  EXPECT_EQ(probe.gpus.size(), 2u);
}

// Without a driver NVML fails, and nvidia-smi is looked for next, as before.
TEST(GpuProbe, NoDriverLooksForNvidiaSmi) {
  test::FixtureNode node;
  setenv("GPULAUNCH_FAKE_NVML", node.nvml({}, "", "0", 9).c_str(), 1);
  int lookups = 0;
  auto probe = probe_gpus(NodeFs(node.root()), [&]() -> std::optional<std::string> {
    ++lookups;
    return std::nullopt;
  });
  EXPECT_EQ(lookups, 1);
  EXPECT_FALSE(probe.driver.present);
  ASSERT_EQ(probe.driver.problems.size(), 2u);
  EXPECT_EQ(probe.driver.problems[1], "nvidia-smi: not found on PATH");
}

TEST(GpuProbe, ProcDriverVersionWhenNothingAnswers) {
  test::FixtureNode node;
  setenv("GPULAUNCH_FAKE_NVML", node.nvml({}, "", "0", 9).c_str(), 1);
  node.write("/proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 2025\n");
  auto probe = probe_gpus(NodeFs(node.root()), no_nvidia_smi);
  EXPECT_FALSE(probe.driver.present);
  EXPECT_EQ(probe.driver.source, "/proc/driver/nvidia");
  EXPECT_EQ(probe.driver.version, "580.95.05");
  EXPECT_EQ(probe.driver.problems.size(), 2u);
}

}  // namespace
}  // namespace gl
