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
            "/usr/bin/nvidia-modprobe -u -c 0 -c 1");
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
