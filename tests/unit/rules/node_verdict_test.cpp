// SPDX-License-Identifier: Apache-2.0
// `check --node`: the node judged without a profile, on fixture nodes with the fake NVML and the
// scenario's journal; and the same facts judged by a profile on every GPU name the same codes.

#include <algorithm>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "facts/gather.hpp"
#include "profile/validate.hpp"
#include "rules/check.hpp"
#include "rules/node_verdict.hpp"
#include "scenarios/scenario.hpp"

namespace gl::test {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::Not;

struct Judged {
  Facts facts;
  std::vector<Finding> findings;
  std::string profile_path;
};

Scenario healthy() {
  Scenario scenario = scenario_named("healthy-blackwell-cuda-13");
  scenario.name = "node";
  return scenario;
}

Judged judge(const Scenario& scenario, FixtureNode& node,
             const std::function<void(FixtureNode&)>& extra = {}) {
  Judged judged;
  judged.profile_path = build_scenario(scenario, node, 30000);
  if (extra) extra(node);
  auto request = node_facts_request();
  request.probe_cache = node.scratch() / "probe-cache.json";
  request.host = scenario_host(scenario);
  judged.facts = gather_facts(NodeFs(node.root()), request);
  judged.findings = evaluate_node(judged.facts);
  return judged;
}

std::vector<std::string> codes(const std::vector<Finding>& findings, Severity severity) {
  std::vector<std::string> out;
  for (const auto& finding : findings)
    if (finding.severity == severity) out.push_back(finding.code);
  return out;
}

const Finding* find(const std::vector<Finding>& findings, std::string_view code) {
  auto found = std::ranges::find(findings, code, &Finding::code);
  return found == findings.end() ? nullptr : &*found;
}

TEST(NodeVerdict, TheHealthyFixturePassesWithNothingToSay) {
  FixtureNode node;
  auto judged = judge(healthy(), node);
  EXPECT_THAT(judged.findings, IsEmpty()) << judged.findings.front().code;
  EXPECT_FALSE(judged.facts.python);  // no profile: no venv read
  EXPECT_EQ(judged.facts.gpus.size(), 8u);
}

// Xid 79 in this boot's journal on GPU 3: an error naming the reboot, on the node's own GPUs.
TEST(NodeVerdict, AGpuThatFellOffTheBusSinceBootIsAnError) {
  FixtureNode node;
  Scenario scenario = healthy();
  scenario.kernel_lines = {
      "NVRM: Xid (PCI:0000:48:00): 79, pid=2841, name=python3, GPU has fallen off the bus."};
  auto judged = judge(scenario, node);
  EXPECT_THAT(codes(judged.findings, Severity::error), ::testing::ElementsAre("gpu-xid-79"));
  const Finding* xid = find(judged.findings, "gpu-xid-79");
  ASSERT_NE(xid, nullptr);
  EXPECT_EQ(xid->summary,
            "Xid 79 (GPU has fallen off the bus) since boot on GPU 3: the GPU stopped answering "
            "on PCIe: the driver no longer reaches it");
  EXPECT_THAT(xid->fix, ::testing::StartsWith("reboot the node"));
}

// The same line in an earlier boot's journal says nothing about this boot.
TEST(NodeVerdict, AnXidOfAnEarlierBootIsNotJudged) {
  FixtureNode node;
  Scenario scenario = healthy();
  scenario.kernel_lines_earlier_boot = {
      "NVRM: Xid (PCI:0000:48:00): 79, pid=2841, name=python3, GPU has fallen off the bus."};
  EXPECT_THAT(judge(scenario, node).findings, IsEmpty());
}

TEST(NodeVerdict, AGpuNvmlCallsLostIsAnErrorWithoutAProfilesCount) {
  FixtureNode node;
  Scenario scenario = healthy();
  scenario.nvml_health = {"lost 3"};
  auto judged = judge(scenario, node);
  const Finding* lost = find(judged.findings, "gpu-lost");
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->severity, Severity::error);
  EXPECT_EQ(lost->summary, "GPU 3 fell off the bus: the driver cannot reach it (GPU is lost)");
  EXPECT_THAT(lost->facts, Not(Contains(::testing::Key("needed per node"))));
}

TEST(NodeVerdict, UncorrectedEccIsAnErrorAndAPendingRemapAWarning) {
  FixtureNode node;
  Scenario scenario = healthy();
  scenario.nvml_health = {"ecc 2 3", "remap 5 1 0"};
  auto judged = judge(scenario, node);
  EXPECT_THAT(codes(judged.findings, Severity::error),
              ::testing::ElementsAre("gpu-ecc-uncorrected"));
  EXPECT_THAT(codes(judged.findings, Severity::warning),
              ::testing::ElementsAre("gpu-row-remap-pending"));
  EXPECT_EQ(find(judged.findings, "gpu-ecc-uncorrected")->fix,
            "drain the GPU and reset it (`nvidia-smi -r -i 2` with no process on it, or reboot); "
            "errors that come back after the reset mean the GPU needs service");
}

TEST(NodeVerdict, PersistenceOffIsOnlyAWarning) {
  FixtureNode node;
  Scenario scenario = healthy();
  scenario.nvml_health = {"persistence 0 0"};
  auto judged = judge(scenario, node);
  EXPECT_THAT(codes(judged.findings, Severity::error), IsEmpty());
  EXPECT_THAT(codes(judged.findings, Severity::warning),
              ::testing::ElementsAre("gpu-persistence-off"));
}

// The driver is loaded (its /proc), its nodes are not in /dev, and nothing on the node makes them.
TEST(NodeVerdict, MissingDeviceNodesAreAnError) {
  FixtureNode node;
  auto judged = judge(healthy(), node, [](FixtureNode& node) {
    node.write("/proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX Open Kernel Module  580.95.05\n");
    node.write("/proc/devices", "Character devices:\n  1 mem\n195 nvidia\n195 nvidiactl\n");
  });
  const Finding* missing = find(judged.findings, "nvidia-device-nodes-missing");
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->severity, Severity::error);
  EXPECT_THAT(missing->summary, ::testing::HasSubstr("/dev/nvidiactl"));
}

// Only nvcc 12.4 on an sm_120 node: a job compiling with it fails, one bringing its own does not.
TEST(NodeVerdict, AToolkitTooOldForTheGpusIsAWarningWithTheReleaseToInstall) {
  FixtureNode node;
  Scenario scenario = healthy();
  scenario.toolkits = {{"/usr/local/cuda-12.4", "12.4"}};
  auto judged = judge(scenario, node);
  EXPECT_THAT(codes(judged.findings, Severity::error), IsEmpty());
  const Finding* old = find(judged.findings, "toolkit-too-old-for-arch");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->severity, Severity::warning);
  EXPECT_THAT(old->summary, ::testing::HasSubstr("nvcc 12.4 at /usr/local/cuda-12.4/bin/nvcc"));
  EXPECT_THAT(old->fix, ::testing::HasSubstr("install"));
}

TEST(NodeVerdict, ACdiSpecOfAnotherDriverIsStale) {
  FixtureNode node;
  auto judged = judge(healthy(), node, [](FixtureNode& node) {
    node.write("/etc/cdi/nvidia.yaml",
               "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n"
               "containerEdits:\n  mounts:\n"
               "  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.570.133.20\n"
               "    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.570.133.20\n");
  });
  const Finding* stale = find(judged.findings, "cdi-spec-stale");
  ASSERT_NE(stale, nullptr);
  EXPECT_EQ(stale->severity, Severity::error);
}

TEST(NodeVerdict, SmallShmIsAWarningOnAMultiGpuNode) {
  Scenario scenario = healthy();
  FixtureNode node;
  build_scenario(scenario, node, 30000);
  Facts facts;
  facts.driver.present = true;
  facts.gpus.resize(2);
  facts.gpus[1].index = 1;
  facts.shm = ShmFact{"/dev/shm", true, 64ull << 20, std::nullopt};
  auto findings = evaluate_node(facts);
  const Finding* shm = find(findings, "shm-too-small");
  ASSERT_NE(shm, nullptr);
  EXPECT_EQ(shm->severity, Severity::warning);
  EXPECT_THAT(shm->summary, ::testing::HasSubstr("the ranks of a job on this node's 2 GPUs"));
}

// No NVML library and no NVIDIA GPU on the PCI bus: a CPU node in the same cluster passes.
TEST(NodeVerdict, ANodeWithoutGpusPasses) {
  FixtureNode node;
  Scenario scenario = healthy();
  scenario.nvml_init = 12;  // NVML_ERROR_LIBRARY_NOT_FOUND
  auto judged = judge(scenario, node);
  EXPECT_THAT(codes(judged.findings, Severity::error), IsEmpty());
  EXPECT_THAT(codes(judged.findings, Severity::info), ::testing::ElementsAre("node-without-gpus"));
  // The library installed without its module is the driver not loaded: an error.
  FixtureNode unloaded;
  scenario.nvml_init = 9;
  EXPECT_THAT(codes(judge(scenario, unloaded).findings, Severity::error),
              ::testing::ElementsAre("nvidia-driver-not-loaded"));
}

// One rule, two callers: on the same facts, a profile on all eight GPUs reports every GPU-health
// and driver code the node check reports, at the same severity.
TEST(NodeVerdict, TheProfileCheckNamesTheSameNodeFindings) {
  FixtureNode node;
  Scenario scenario = healthy();
  scenario.nvml_health = {"ecc 1 2", "retired 4 1", "persistence 6 0"};
  scenario.kernel_lines = {"NVRM: Xid (PCI:0000:18:00): 94, pid=91231, name=python3, Ch 00000010"};
  auto judged = judge(scenario, node);
  auto profile = load_profile(DirectorySource({}), judged.profile_path);
  ASSERT_TRUE(profile) << profile.error().message;
  auto from_profile =
      evaluate(*profile, make_launch_plan(*profile), judged.facts, ShellEnvironment{});
  ASSERT_EQ(codes(judged.findings, Severity::error).size(), 1u);
  for (const auto& finding : judged.findings) {
    const Finding* same = find(from_profile, finding.code);
    ASSERT_NE(same, nullptr) << finding.code;
    EXPECT_EQ(same->severity, finding.severity) << finding.code;
    EXPECT_EQ(same->summary, finding.summary) << finding.code;
  }
}

}  // namespace
}  // namespace gl::test
