// SPDX-License-Identifier: Apache-2.0
// An engine image's podman command: what reaches the container (GPUs, variables, directories)
// and what stays the host's; and the unit's own environment beside it.
#include "plan/container_command.hpp"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "catalog/containers.hpp"
#include "support/profile_text.hpp"
#include "unit/render.hpp"
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
  EXPECT_TRUE(std::ranges::none_of(plan.argv, [](const std::string& word) {
    return word.starts_with("--env=PATH") || word.starts_with("--env=CUDA_VISIBLE_DEVICES");
  }));
  EXPECT_THAT(plan.argv, Contains("--env=HF_HUB_OFFLINE=1"));
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
  EXPECT_EQ(unit, (std::vector<std::string>{
                      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                      "HOME=/root", "CUDA_VISIBLE_DEVICES=1,3"}));  // `run`'s, not the container's
}

// Issue 45: an image profile's [env] reaches the container by value in podman's command, never
// root's processes (`run`, podman, conmon): the rendered unit's Environment= holds gpulaunch's own
// list alone, so an LD_PRELOAD or CONTAINERS_CONF meant for the engine is not loaded or read as
// root.
TEST(ContainerCommand, TheProfilesEnvReachesTheContainerByValueAndNotRootsUnit) {
  const Profile profile = load(std::string(kImage) + R"(LD_PRELOAD = "/opt/venv/lib/libjemalloc.so"
CONTAINERS_CONF = "/home/u/containers.conf"
TMPDIR = "/home/u/tmp"
)");
  const LaunchPlan plan = make_launch_plan(profile);
  EXPECT_THAT(plan.argv, Contains("--env=LD_PRELOAD=/opt/venv/lib/libjemalloc.so"));
  EXPECT_THAT(plan.argv, Contains("--env=CONTAINERS_CONF=/home/u/containers.conf"));
  EXPECT_THAT(plan.argv, Contains("--env=TMPDIR=/home/u/tmp"));
  // Every variable the container gets is spelled with its value: none is taken from the unit.
  auto image = std::ranges::find(plan.argv, "localhost/sglang:v0.5.6");
  for (auto word = plan.argv.begin(); word != image; ++word) {
    if (word->starts_with("--env=")) {
      EXPECT_NE(word->find('=', 6), std::string::npos) << *word << " is taken from the unit";
    }
  }
  const auto environment = container_unit_environment(profile, plan);
  for (const auto& variable : environment) {
    EXPECT_THAT(kContainerUnitVariables, Contains(variable.name));
    EXPECT_NE(variable.name, "LD_PRELOAD");
  }
  const UnitFile unit = render_unit(profile, plan, RenderOptions{});
  const std::string text = unit.to_text();
  EXPECT_EQ(text.find("Environment=\"LD_PRELOAD"), std::string::npos) << text;
  EXPECT_EQ(text.find("Environment=\"CONTAINERS_CONF"), std::string::npos) << text;
  EXPECT_NE(text.find("\"--env=LD_PRELOAD=/opt/venv/lib/libjemalloc.so\""), std::string::npos)
      << text;
  // `run` meters the caches from the command, as the container sees them.
  EXPECT_STREQ(container_variable(plan.argv, "TRITON_CACHE_DIR"), "/var/cache/gpulaunch/x/triton");
  EXPECT_EQ(container_variable(plan.argv, "CUDA_VISIBLE_DEVICES"), nullptr);
  EXPECT_EQ(container_variable({"/opt/venv/bin/python", "--env=A=1"}, "A"), nullptr);
}

// A secret reaches the container as its credential's path, by value; the API key's variable by
// name, which `run` sets from the credential it reads (the key is never in the unit).
TEST(ContainerCommand, SecretsByPathAndTheApiKeyByName) {
  const Profile profile = load(R"(
[engine]
kind = "vllm"
image = "localhost/vllm:v0.11.0"
[model]
path = "Qwen/Qwen3-8B"
[secrets]
HF_TOKEN = "/etc/gpulaunch/secrets/hf"
VLLM_API_KEY = "/etc/gpulaunch/secrets/key"
)");
  const LaunchPlan plan = make_launch_plan(profile);
  EXPECT_THAT(plan.argv,
              Contains("--env=HF_TOKEN_PATH=/run/credentials/gpulaunch-x.service/HF_TOKEN"));
  EXPECT_THAT(plan.argv, Contains("--env=VLLM_API_KEY"));
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
