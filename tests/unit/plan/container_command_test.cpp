// SPDX-License-Identifier: Apache-2.0
// An engine image's podman command: what reaches the container (GPUs, variables, directories)
// and what stays the host's; and the unit's own environment beside it.
#include "plan/container_command.hpp"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/profile_text.hpp"
#include "unit/unit_environment.hpp"

namespace gl {
namespace {

using ::testing::Contains;
using ::testing::Not;

Profile load(const std::string& text) {
  return gl::testing::profile_from(text);
}

constexpr const char* kImage = R"(
[engine]
kind = "sglang"
image = "localhost/sglang:v0.5.6"
[model]
path = "/models/m"
[gpus]
devices = [1, 3]
[env]
HF_HUB_OFFLINE = "1"
)";

TEST(ContainerCommand, AssignedGpusAreCdiDevicesAndTheHostsNumberingStaysOutside) {
  const Profile profile = load(kImage);
  const LaunchPlan plan = make_launch_plan(profile);
  EXPECT_EQ(plan.argv[0], "/usr/bin/podman");
  EXPECT_THAT(plan.argv, Contains("--device=nvidia.com/gpu=1"));
  EXPECT_THAT(plan.argv, Contains("--device=nvidia.com/gpu=3"));
  // Inside, CDI numbers them 0 and 1: the host's indices would name the wrong GPUs.
  EXPECT_THAT(plan.argv, Not(Contains("--env=CUDA_VISIBLE_DEVICES")));
  EXPECT_THAT(plan.argv, Not(Contains("--env=PATH")));
  EXPECT_THAT(plan.argv, Contains("--env=HF_HUB_OFFLINE"));
  // The image, then the engine's own argv with the image's interpreter.
  auto image = std::ranges::find(plan.argv, "localhost/sglang:v0.5.6");
  ASSERT_NE(image, plan.argv.end());
  EXPECT_EQ(*(image + 1), "/usr/bin/python3");
  EXPECT_THAT(plan.argv, Contains("--volume=/models/m:/models/m:ro"));
}

// Without [gpus], the first GPUs the parallelism needs, as a venv engine's CUDA_VISIBLE_DEVICES.
TEST(ContainerCommand, TheFirstGpusWithoutAnAssignmentAndNoMountForAHubModel) {
  const Profile profile = load(R"(
[engine]
kind = "vllm"
image = "localhost/vllm:v0.11.0"
[model]
path = "Qwen/Qwen3-8B"
)");
  const LaunchPlan plan = make_launch_plan(profile);
  EXPECT_THAT(plan.argv, Contains("--device=nvidia.com/gpu=0"));
  EXPECT_THAT(plan.argv, Not(Contains("--device=nvidia.com/gpu=1")));
  EXPECT_TRUE(std::ranges::none_of(
      plan.argv, [](const std::string& word) { return word.starts_with("--volume=Qwen"); }));
}

// Root's podman reads its configuration under $HOME and the XDG directories: the unit gives it
// root's, and the engine's reach the container by value in the command.
TEST(ContainerCommand, HomeAndXdgByValueRootsOwnForTheUnit) {
  const Profile profile = load(kImage);
  const LaunchPlan plan = make_launch_plan(profile);
  EXPECT_THAT(plan.argv, Contains("--env=HOME=/var/lib/gpulaunch/x/engine"));
  EXPECT_THAT(plan.argv, Contains("--env=XDG_CACHE_HOME=/var/cache/gpulaunch/x/xdg"));
  EXPECT_THAT(plan.argv, Not(Contains("--env=HOME")));
  std::vector<std::string> unit;
  for (const auto& variable : container_unit_environment(profile, plan))
    unit.push_back(variable.name + "=" + variable.value);
  EXPECT_THAT(unit, Contains("HOME=/root"));
  EXPECT_THAT(unit, Contains("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
  EXPECT_THAT(unit, Contains("CUDA_VISIBLE_DEVICES=1,3"));  // `run`'s, not the container's
  EXPECT_TRUE(std::ranges::none_of(
      unit, [](const std::string& entry) { return entry.starts_with("XDG_"); }));
}

TEST(ContainerCommand, RunAddsTheAccountAfterPodmanRun) {
  auto argv = with_container_user({"/usr/bin/podman", "run", "--rm", "img", "python3"}, 997, 996);
  ASSERT_TRUE(argv) << argv.error().message;
  EXPECT_EQ(*argv, (std::vector<std::string>{"/usr/bin/podman", "run", "--user=997:996", "--rm",
                                             "img", "python3"}));
  auto refused = with_container_user({"/opt/venv/bin/python", "-m", "sglang"}, 997, 996);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "not a container command: it does not start with '/usr/bin/podman run'");
}

}  // namespace
}  // namespace gl
