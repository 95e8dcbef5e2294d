// SPDX-License-Identifier: Apache-2.0
// `gpulaunch check --node` as a scheduler's prolog runs it: exit statuses, one JSON verdict per
// finding with its code and fix, and the drain reason a shell lifts out with sed.

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "util/process.hpp"

namespace gl::test {
namespace {

using ::testing::HasSubstr;

struct Run {
  int exit_code = -1;
  std::string out;
};

Run gpulaunch(std::vector<std::string> args) {
  std::vector<std::string> env_args{
      "-i", "PATH=/usr/bin:/bin",
      std::string("GPULAUNCH_FAKE_NVML=") +
          (getenv("GPULAUNCH_FAKE_NVML") ? getenv("GPULAUNCH_FAKE_NVML") : ""),
      std::string("LD_LIBRARY_PATH=") + GPULAUNCH_FAKE_NVML_DIR, GPULAUNCH_BIN};
  env_args.insert(env_args.end(), args.begin(), args.end());
  auto result = run_process("/usr/bin/env", env_args, std::chrono::seconds(30));
  EXPECT_TRUE(result) << (result ? "" : result.error().message);
  return result ? Run{result->exit_code, result->out} : Run{};
}

Scenario node_scenario(std::vector<std::string> nvml_health = {}) {
  Scenario scenario = scenario_named("healthy-blackwell-cuda-13");
  scenario.nvml_health = std::move(nvml_health);
  return scenario;
}

nlohmann::json verdict_of(const Run& run) {
  auto parsed = nlohmann::json::parse(run.out, nullptr, false);
  EXPECT_FALSE(parsed.is_discarded()) << run.out;
  return parsed;
}

TEST(CheckNodeCli, AHealthyNodePasses) {
  FixtureNode node;
  build_scenario(node_scenario(), node, 30000);
  auto run = gpulaunch({"check", "--node", "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("OK, this node can take jobs: 0 error(s), 0 warning(s)"));
  auto json = gpulaunch({"check", "--node", "--json", "--root", node.root().string()});
  EXPECT_EQ(json.exit_code, 0);
  auto verdict = verdict_of(json);
  EXPECT_EQ(verdict["verdict"], "pass");
  EXPECT_EQ(verdict["findings"].size(), 0u);
  EXPECT_EQ(verdict["reason"], "");
}

TEST(CheckNodeCli, WarningsOnlyExitZeroWithTheWarningInTheJson) {
  FixtureNode node;
  build_scenario(node_scenario({"persistence 1 0"}), node, 30000);
  auto run = gpulaunch({"check", "--node", "--json", "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  auto verdict = verdict_of(run);
  EXPECT_EQ(verdict["verdict"], "warn");
  EXPECT_EQ(verdict["warnings"], 1);
  ASSERT_EQ(verdict["findings"].size(), 1u);
  EXPECT_EQ(verdict["findings"][0]["code"], "gpu-persistence-off");
  EXPECT_EQ(verdict["findings"][0]["severity"], "warning");
  EXPECT_THAT(verdict["findings"][0]["fix"].get<std::string>(), HasSubstr("nvidia-persistenced"));
}

// GPU 3 lost (NVML's GPU_IS_LOST) and uncorrected ECC errors on GPU 2: two errors, one verdict
// each with its code, message and fix; the reason is the first, ready for scontrol.
TEST(CheckNodeCli, ACriticalNodeExitsOneWithCodeAndFix) {
  FixtureNode node;
  build_scenario(node_scenario({"lost 3", "ecc 2 4"}), node, 30000);
  auto run = gpulaunch({"check", "--node", "--json", "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  auto verdict = verdict_of(run);
  EXPECT_EQ(verdict["verdict"], "fail");
  EXPECT_EQ(verdict["exit_code"], 1);
  EXPECT_EQ(verdict["errors"], 2);
  ASSERT_EQ(verdict["findings"].size(), 2u);
  for (const auto& finding : verdict["findings"]) {
    EXPECT_EQ(finding["severity"], "error");
    EXPECT_FALSE(finding["message"].get<std::string>().empty());
    EXPECT_FALSE(finding["fix"].get<std::string>().empty());
  }
  EXPECT_EQ(verdict["findings"][0]["code"], "gpu-lost");
  EXPECT_THAT(verdict["findings"][0]["fix"].get<std::string>(), HasSubstr("reboot the node"));
  EXPECT_EQ(verdict["findings"][1]["code"], "gpu-ecc-uncorrected");
  EXPECT_EQ(verdict["reason"],
            "gpu-lost: GPU 3 fell off the bus: the driver cannot reach it (GPU is lost)");
  // The line the prolog's sed reads.
  EXPECT_THAT(run.out, HasSubstr("\n  \"reason\": \"gpu-lost: GPU 3 fell off the bus: the driver "
                                 "cannot reach it (GPU is lost)\",\n"));
  auto text = gpulaunch({"check", "--node", "--root", node.root().string()});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_THAT(text.out, HasSubstr("  error[gpu-lost] GPU 3 fell off the bus"));
  EXPECT_THAT(text.out,
              HasSubstr("FAILED, jobs placed on this node would fail: 2 error(s), 0 warning(s)"));
}

TEST(CheckNodeCli, MissingDeviceNodesAreCritical) {
  FixtureNode node;
  build_scenario(node_scenario(), node, 30000);
  node.write("/proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX Open Kernel Module  580.95.05\n");
  node.write("/proc/devices", "Character devices:\n  1 mem\n195 nvidia\n195 nvidiactl\n");
  auto run = gpulaunch({"check", "--node", "--json", "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_EQ(verdict_of(run)["findings"][0]["code"], "nvidia-device-nodes-missing");
}

TEST(CheckNodeCli, CouldNotRunExitsTwo) {
  FixtureNode node;
  auto missing = gpulaunch({"check", "--node", "--root", (node.root() / "nope").string()});
  EXPECT_EQ(missing.exit_code, 2);
  // A node verdict takes no profile.
  EXPECT_EQ(gpulaunch({"check", "--node", "k26-ar"}).exit_code, 2);
  EXPECT_EQ(gpulaunch({"check", "--node", "--all"}).exit_code, 2);
  node.write("/x", "not facts");
  EXPECT_EQ(gpulaunch({"check", "--node", "--facts", (node.root() / "x").string()}).exit_code, 2);
}

// Recorded facts are judged the same: the verdict of a node elsewhere.
TEST(CheckNodeCli, RecordedFactsGiveTheSameVerdict) {
  FixtureNode node;
  build_scenario(node_scenario({"ecc 0 1"}), node, 30000);
  auto facts = gpulaunch({"facts", "--json", "--root", node.root().string()});
  ASSERT_EQ(facts.exit_code, 0);
  node.write("/facts.json", facts.out);
  auto run = gpulaunch({"check", "--node", "--facts", (node.root() / "facts.json").string()});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("error[gpu-ecc-uncorrected] GPU 0:"));
}

}  // namespace
}  // namespace gl::test
