// SPDX-License-Identifier: Apache-2.0
// What the rendered unit promises other processes: the statuses systemd must not restart on are
// the ones the exit-status table marks, and `record-exit` gets the rank of the plan it ran.

#include "unit/render.hpp"

#include <set>
#include <sstream>
#include <utility>

#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "catalog/exit_codes.hpp"
#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "util/duration.hpp"

namespace gl {
namespace {

Profile load(const std::string& text) {
  MemorySource source({{"/p/r.toml", text}});
  auto profile = load_profile(source, "/p/r.toml");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value_or(Profile{});
}

constexpr const char* kProfile =
    "[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n[model]\npath = \"/m\"\n";

TEST(Render, RestartPreventExitStatusIsEveryStatusThatPreventsARestart) {
  const Profile profile = load(kProfile);
  const UnitFile unit = render_unit(profile, make_launch_plan(profile), RenderOptions{});
  std::set<int> listed;
  for (const auto& value : unit.values("Service", "RestartPreventExitStatus")) {
    std::istringstream words(value);
    int status = 0;
    while (words >> status) listed.insert(status);
  }
  std::set<int> expected;
  for (int status = 0; status <= 255; ++status)
    if (prevents_restart(status)) expected.insert(status);
  EXPECT_EQ(listed, expected);
  EXPECT_TRUE(listed.contains(kExitConfig));
  EXPECT_TRUE(listed.contains(kExitCrashLoop));
  EXPECT_FALSE(listed.contains(kExitReadyTimeout));  // a slow load may serve next time
}

TEST(Render, TheUnitIsThePlansRank) {
  const Profile profile =
      load(std::string(kProfile) +
           "[parallelism]\ntp = 2\n[nodes]\nhosts = [\"10.0.0.1\", \"10.0.0.2\"]"
           "\n");
  const UnitFile unit =
      render_unit(profile, make_launch_plan(profile, LaunchOptions{1}), RenderOptions{});
  EXPECT_THAT(unit.values("Service", "ExecStopPost").front(),
              ::testing::HasSubstr("--node-rank=1"));
  EXPECT_THAT(unit.values("Service", "ExecStart").front(),
              ::testing::HasSubstr(R"("--node-rank" "1")"));
}

// The system manager runs each profile's engine as the profile's own user; a user manager
// (`up --user`) cannot switch users, so its unit names none and the engine runs as the caller.
TEST(Render, OnlyTheSystemManagersUnitNamesTheProfilesUser) {
  const Profile profile = load(kProfile);
  const LaunchPlan plan = make_launch_plan(profile);
  const UnitFile system = render_unit(profile, plan, RenderOptions{});
  EXPECT_EQ(system.values("Service", "User"), std::vector<std::string>{"gpulaunch-r"});
  EXPECT_EQ(system.values("Service", "RemoveIPC"), std::vector<std::string>{"yes"});
  RenderOptions user_manager;
  user_manager.user_manager = true;
  const UnitFile user = render_unit(profile, plan, user_manager);
  EXPECT_TRUE(user.values("Service", "User").empty());
  EXPECT_TRUE(user.values("Service", "RemoveIPC").empty());
  // Nor a Requires= on the system's device oneshot, which a user manager cannot load.
  EXPECT_EQ(system.values("Unit", "Requires").size(), 1u);
  EXPECT_TRUE(user.values("Unit", "Requires").empty());
}

// A stop drains: systemd sends SIGTERM to `run` alone, `run` gets the drain time and kills the
// engine kStopKillGrace after it, and systemd's own SIGKILL (TimeoutStopSec=) comes later still.
TEST(Render, TheStopLetsTheEngineDrainBeforeAnySigkill) {
  const std::vector<std::pair<std::string, Seconds>> cases{
      {"", kDefaultDrainTimeout}, {"[server]\ndrain_timeout = \"5min\"\n", Seconds{300}}};
  for (const auto& [drain, seconds] : cases) {
    const Profile profile = load(std::string(kProfile) + drain);
    const UnitFile unit = render_unit(profile, make_launch_plan(profile), RenderOptions{});
    EXPECT_THAT(
        unit.values("Service", "ExecStart").front(),
        ::testing::HasSubstr(fmt::format(R"("{}={}")", kRunDrainTimeoutOption, seconds.count())));
    EXPECT_EQ(
        unit.values("Service", "TimeoutStopSec"),
        std::vector<std::string>{format_duration(seconds + kStopKillGrace + kStopTimeoutMargin)});
    EXPECT_EQ(unit.values("Service", "KillMode"), std::vector<std::string>{"mixed"});
    EXPECT_EQ(unit.values("Service", "KillSignal"), std::vector<std::string>{"SIGTERM"});
    EXPECT_EQ(unit.values("Service", "SendSIGKILL"), std::vector<std::string>{"yes"});
  }
}

}  // namespace
}  // namespace gl

namespace gl {
namespace {

// issue 26: the sandbox allowances (catalog/sandbox_allowances), rendered for every engine.
TEST(RenderSandbox, EveryUnitWaitsForTheDeviceNodesAndAllowsPidfdGetfd) {
  for (const char* kind : {"sglang", "vllm"}) {
    const Profile profile = load(fmt::format(
        "[engine]\nkind = \"{}\"\nvenv = \"/opt/venv\"\n[model]\npath = \"/m\"\n", kind));
    const UnitFile unit = render_unit(profile, make_launch_plan(profile), RenderOptions{});
    EXPECT_THAT(unit.values("Unit", "Requires"),
                ::testing::ElementsAre("gpulaunch-nvidia-devices.service"));
    EXPECT_THAT(unit.values("Unit", "After"),
                ::testing::ElementsAre(::testing::EndsWith(" gpulaunch-nvidia-devices.service")));
    EXPECT_THAT(unit.values("Service", "SystemCallFilter"),
                ::testing::ElementsAre("@system-service", "pidfd_getfd"));
    // Kept: no ptrace, no perf, no extra devices, memlock only where needed, no W^X.
    EXPECT_THAT(
        unit.values("Service", "DeviceAllow"),
        ::testing::ElementsAre("char-nvidia* rw", "char-nvidia-uvm rw", "char-nvidia-caps rw"));
    EXPECT_TRUE(unit.values("Service", "LimitMEMLOCK").empty());
    EXPECT_TRUE(unit.values("Service", "MemoryDenyWriteExecute").empty());
    EXPECT_TRUE(unit.values("Service", "BindPaths").empty());
  }
}

TEST(RenderSandbox, TheNodesOptionalDevicesAndMpsDaemonOpenToTheUnit) {
  const Profile profile = load(kProfile);
  LaunchOptions options;
  options.sandbox = SandboxNode{{"gdrdrv", "xpmem"}, true};
  const UnitFile unit = render_unit(profile, make_launch_plan(profile, options), RenderOptions{});
  EXPECT_THAT(unit.values("Service", "DeviceAllow"),
              ::testing::IsSupersetOf({"/dev/gdrdrv rw", "/dev/xpmem rw"}));
  EXPECT_THAT(unit.values("Service", "BindPaths"), ::testing::ElementsAre("\"/tmp/nvidia-mps\""));
}

TEST(RenderSandbox, MlockGetsUnlimitedMemlockAndServiceAllowNamesTheExtras) {
  const Profile mlock = load(
      "[engine]\nkind = \"llamacpp\"\nexecutable = \"/opt/llama/llama-server\"\nargs = "
      "[\"--mlock\"]\n[model]\npath = \"/m/model.gguf\"\n");
  EXPECT_THAT(render_unit(mlock, make_launch_plan(mlock), RenderOptions{})
                  .values("Service", "LimitMEMLOCK"),
              ::testing::ElementsAre("infinity"));
  const Profile allowed = load(std::string(kProfile) +
                               "[service]\nallow = [\"ptrace\", \"perf_event_open\", "
                               "\"gdrdrv\"]\n");
  const UnitFile unit = render_unit(allowed, make_launch_plan(allowed), RenderOptions{});
  EXPECT_THAT(unit.values("Service", "SystemCallFilter"),
              ::testing::ElementsAre("@system-service", "pidfd_getfd ptrace perf_event_open"));
  EXPECT_THAT(unit.values("Service", "DeviceAllow"), ::testing::Contains("/dev/gdrdrv rw"));
}

}  // namespace
}  // namespace gl
