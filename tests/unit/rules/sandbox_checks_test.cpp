// SPDX-License-Identifier: Apache-2.0
// `check`'s sandbox preflight: missing NVIDIA device nodes that nothing would create, and a
// Yama scope that refuses the ranks' pidfd_getfd.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "rules/sandbox_checks.hpp"

namespace gl {
namespace {

Profile load(const std::string& extra = "") {
  MemorySource source({{"/p/r.toml",
                        "[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n"
                        "[model]\npath = \"/m\"\n[gpus]\ncount = 8\n"
                        "[parallelism]\ntp = 8\n" +
                            extra}});
  auto profile = load_profile(source, "/p/r.toml");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value_or(Profile{});
}

std::vector<Finding> findings_for(const Facts& facts) {
  const Profile profile = load();
  std::vector<Finding> findings;
  check_sandbox(profile, make_launch_plan(profile), facts, findings);
  return findings;
}

Facts fresh_boot() {
  Facts facts;
  NvidiaNodesFact nodes;
  nodes.driver_loaded = true;
  nodes.minors = {0, 1};
  nodes.missing = {"/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia1"};
  facts.nvidia_nodes = nodes;
  return facts;
}

TEST(DeviceNodes, MissingNodesThatNothingCreatesFailWithTheFix) {
  auto findings = findings_for(fresh_boot());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].code, "nvidia-device-nodes-missing");
  EXPECT_EQ(findings[0].severity, Severity::error);
  EXPECT_EQ(findings[0].summary,
            "the NVIDIA driver is loaded but /dev/nvidia-uvm, /dev/nvidia0, /dev/nvidia1 are "
            "missing, and nothing creates them before the engine starts: CUDA fails with "
            "\"unknown error\" or \"no CUDA-capable device\"");
  EXPECT_EQ(findings[0].fix,
            "apt install nvidia-modprobe (/usr/bin/nvidia-modprobe), install gpulaunch's "
            "gpulaunch-nvidia-devices.service (/usr/lib/systemd/system/"
            "gpulaunch-nvidia-devices.service, shipped in the package); now: "
            "/usr/bin/nvidia-modprobe -c 255 -c 0 -c 1 && /usr/bin/nvidia-modprobe -u -c 0");
}

TEST(DeviceNodes, TheDeviceUnitAndModprobeInstalledMeanTheBootCreatesThem) {
  Facts facts = fresh_boot();
  facts.nvidia_nodes->modprobe_installed = true;
  facts.nvidia_nodes->devices_unit_installed = true;
  EXPECT_TRUE(findings_for(facts).empty());
  facts = fresh_boot();
  facts.nvidia_nodes->missing.clear();
  EXPECT_TRUE(findings_for(facts).empty());
  facts = fresh_boot();
  facts.nvidia_nodes->driver_loaded = false;  // no driver: the driver checks say so
  EXPECT_TRUE(findings_for(facts).empty());
}

// A two-node profile on a driver with IMEX channels, channel 0 missing, and an nvidia-modprobe
// without -i (every release since 570.86.16): warned, with the driver's own way and mknod.
std::vector<Finding> two_node_findings(const Facts& facts) {
  const Profile profile = load("nodes = 2\ndist_init_addr = \"10.0.0.1:5000\"\n");
  std::vector<Finding> findings;
  check_sandbox(profile, make_launch_plan(profile), facts, findings);
  return findings;
}

Facts imex_without_channel0() {
  Facts facts;
  NvidiaNodesFact nodes;
  nodes.driver_loaded = true;
  nodes.minors = {0};
  nodes.imex_channels = true;
  nodes.imex_major = 238;
  nodes.modprobe_installed = true;
  nodes.modprobe_version = "580.95.05";
  nodes.modprobe_imex_option = false;
  facts.nvidia_nodes = nodes;
  return facts;
}

TEST(ImexChannel, ATwoNodeProfileIsWarnedWhenNothingMakesChannel0) {
  auto findings = two_node_findings(imex_without_channel0());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].code, "nvidia-imex-channel-missing");
  EXPECT_EQ(findings[0].severity, Severity::warning);
  EXPECT_EQ(findings[0].summary,
            "the driver registers IMEX channels but /dev/nvidia-caps-imex-channels/channel0 is "
            "missing and /usr/bin/nvidia-modprobe 580.95.05 has no -i "
            "(--nvidia-imex-channel-device-file; only 550.54.14-550.127.05 and "
            "555.42.02-565.77 have it): memory shared over multi-node NVLink (CUDA fabric "
            "handles) fails for this 2-node profile");
  EXPECT_EQ(findings[0].fix,
            "echo 'options nvidia NVreg_CreateImexChannel0=1' > "
            "/etc/modprobe.d/nvidia-imex-channel0.conf and reboot (the driver then makes channel "
            "0, mode 0666: every process on the node shares it); or for this boot only: mkdir -p "
            "/dev/nvidia-caps-imex-channels && mknod -m 0666 "
            "/dev/nvidia-caps-imex-channels/channel0 c 238 0");
}

TEST(ImexChannel, NoWarningWhereChannel0ExistsModprobeMakesItOrOneNodeRuns) {
  Facts facts = imex_without_channel0();
  facts.nvidia_nodes->imex_channel0 = true;
  EXPECT_TRUE(two_node_findings(facts).empty());
  facts = imex_without_channel0();
  facts.nvidia_nodes->modprobe_imex_option = true;  // 550.54.14-565.77: the oneshot runs -i 0:1
  EXPECT_TRUE(two_node_findings(facts).empty());
  EXPECT_TRUE(findings_for(imex_without_channel0()).empty());  // one node: no IMEX needed
}

TEST(Yama, ScopeOneWarnsThatSiblingRanksCannotTakeEachOthersFds) {
  Facts facts;
  facts.sandbox = SandboxFact{{}, false, 1};
  auto findings = findings_for(facts);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].code, "yama-refuses-pidfd-getfd");
  EXPECT_EQ(findings[0].severity, Severity::warning);
  facts.sandbox->ptrace_scope = 0;
  EXPECT_TRUE(findings_for(facts).empty());
}

}  // namespace
}  // namespace gl
