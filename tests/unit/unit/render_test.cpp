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
