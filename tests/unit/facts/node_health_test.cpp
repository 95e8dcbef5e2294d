// SPDX-License-Identifier: Apache-2.0
#include "facts/node_health.hpp"

#include <gtest/gtest.h>

#include "fakes/systemd/fake_journal.hpp"
#include "fakes/systemd/fake_manager.hpp"
#include "support/fixture_node.hpp"

namespace gl {
namespace {

// Lines as the NVIDIA kernel module writes them: driver 580 (open-gpu-kernel-modules #1151),
// with pid and name (leptonai/gpud's xid README), a row remap (stas00/ml-engineering's
// nvidia/debug.md) and the bare address older drivers wrote.
TEST(XidLine, ParsesTheModulesFormats) {
  auto fallen = parse_xid_line("NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.");
  ASSERT_TRUE(fallen);
  EXPECT_EQ(fallen->pci, "0000:2b:00");
  EXPECT_EQ(fallen->xid, 79);
  auto timeout = parse_xid_line(
      "NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, "
      "errorString CTX SWITCH TIMEOUT, Info 0x58005");
  ASSERT_TRUE(timeout);
  EXPECT_EQ(timeout->xid, 109);
  auto remap = parse_xid_line(
      "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, "
      "reset gpu to activate.");
  ASSERT_TRUE(remap);
  EXPECT_EQ(remap->pci, "0000:10:1c");
  EXPECT_EQ(remap->xid, 63);
  auto old = parse_xid_line("NVRM: Xid (0000:01:00): 3, C 00000005 SC 00000007");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->pci, "0000:01:00");
  EXPECT_EQ(old->xid, 3);
}

TEST(XidLine, RefusesOtherNvrmLines) {
  EXPECT_FALSE(parse_xid_line("NVRM: GPU at PCI:0000:2b:00: GPU-0b11d014-1685-04bd-26ed"));
  EXPECT_FALSE(parse_xid_line("NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus."));
  EXPECT_FALSE(parse_xid_line("NVRM: Xid (PCI:zz:2b:00): 79, x"));
  EXPECT_FALSE(parse_xid_line("NVRM: Xid (PCI:0000:2b:00): , x"));
}

TEST(PciAddress, NvmlAndKernelSpellingsOfOneDevice) {
  EXPECT_TRUE(same_pci_device("00000000:3B:00.0", "0000:3b:00"));
  EXPECT_TRUE(same_pci_device("00000001:10:1C.0", "0001:10:1c"));
  EXPECT_FALSE(same_pci_device("00000000:3B:00.0", "0000:3c:00"));
  EXPECT_FALSE(same_pci_device("", "0000:3b:00"));
}

GpuFact gpu_at(int index, std::string bus_id) {
  GpuFact gpu;
  gpu.index = index;
  gpu.pci_bus_id = std::move(bus_id);
  return gpu;
}

// Lines since /proc/stat's btime only, each on the GPU at its address; the Fabric Manager is asked
// only where a GPU reports NVLink fabric.
TEST(NodeHealth, XidsSinceBootMappedToGpus) {
  test::FixtureNode node;
  node.write("/proc/stat", "cpu  1 2 3\nbtime 1000\n");
  auto journal = std::make_shared<testing::FakeJournal>();
  journal->kernel = {
      {999'000'000, "kernel", 0, "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."},
      {1'001'000'000, "kernel", 0, "NVRM: Xid (PCI:0000:3b:00): 48, pid=7, name=python3, DBE"},
      {1'002'000'000, "kernel", 0, "NVRM: Xid (PCI:0000:c8:00): 79, GPU has fallen off the bus."},
  };
  int manager_opened = 0;
  HostSources host{[&]() -> Result<std::unique_ptr<Journal>> {
                     return std::make_unique<testing::FakeJournal>(*journal);
                   },
                   [&]() -> Result<std::unique_ptr<SystemdManager>> {
                     ++manager_opened;
                     return std::make_unique<testing::FakeManager>();
                   }};
  std::vector<GpuFact> gpus{gpu_at(0, "00000000:18:00.0"), gpu_at(1, "00000000:3B:00.0")};
  auto fact = probe_node_health(NodeFs(node.root()), host, gpus);
  EXPECT_TRUE(fact.kernel_log_read);
  EXPECT_EQ(fact.boot_usec, 1'000'000'000u);
  ASSERT_EQ(fact.xids.size(), 2u);
  EXPECT_EQ(fact.xids[0].xid, 48);
  EXPECT_EQ(fact.xids[0].gpu, 1);
  EXPECT_EQ(fact.xids[1].xid, 79);
  EXPECT_FALSE(fact.xids[1].gpu);
  EXPECT_EQ(manager_opened, 0);
  EXPECT_FALSE(fact.fabric_manager_state);

  gpus[0].health.fabric_state = "completed";
  fact = probe_node_health(NodeFs(node.root()), host, gpus);
  EXPECT_EQ(manager_opened, 1);
  EXPECT_EQ(fact.fabric_manager_state, "not-found");
}

TEST(NodeHealth, AJournalThatCannotOpenIsAProblemNotAFailure) {
  test::FixtureNode node;
  HostSources host{[]() -> Result<std::unique_ptr<Journal>> {
                     return fail("Failed to open the journal: Permission denied");
                   },
                   {}};
  auto fact = probe_node_health(NodeFs(node.root()), host, {gpu_at(0, "00000000:18:00.0")});
  EXPECT_FALSE(fact.kernel_log_read);
  ASSERT_EQ(fact.problems.size(), 1u);
  EXPECT_EQ(fact.problems[0], "Xid lines: Failed to open the journal: Permission denied");
}

}  // namespace
}  // namespace gl
