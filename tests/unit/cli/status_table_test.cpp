// SPDX-License-Identifier: Apache-2.0
#include "cli/status_table.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'800'000'000'000'000;  // realtime microseconds
constexpr int64_t kMinute = 60'000'000;

Profile installed_profile() {
  const std::string text = R"(
[engine]
kind = "vllm"
venv = "/opt/venvs/vllm"
[model]
path = "/models/m"
[server]
port = 30123
[parallelism]
tp = 2
[gpus]
devices = ["2", "3"]
)";
  MemorySource source({{"/p/demo.toml", text}});
  auto profile = load_profile(source, "demo");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile ? *profile : Profile{};
}

UnitStatus serving_unit() {
  UnitStatus unit;
  unit.load_state = "loaded";
  unit.active_state = "active";
  unit.sub_state = "running";
  unit.status_text = "serving";
  unit.restarts = 2;
  unit.result = "success";
  unit.active_enter_usec = kNow - 12 * kMinute;
  unit.state_change_usec = kNow - 12 * kMinute;
  return unit;
}

TEST(StatusTable, ARowHasWhatPodmanPsShows) {
  const Profile profile = installed_profile();
  SupervisorState supervisor;
  supervisor.last_class = "cuda-oom";
  auto row = service_row("demo", serving_unit(), supervisor, &profile);
  EXPECT_EQ(row.engine, "vllm");
  EXPECT_EQ(row.state, "active");
  EXPECT_EQ(row.port, 30123);
  EXPECT_EQ(row.endpoint, "http://127.0.0.1:30123");
  EXPECT_EQ(row.gpus, (std::vector<std::string>{"2", "3"}));
  EXPECT_EQ(row.last_failure, "cuda-oom");  // the class, not systemd's "exit-code"
  EXPECT_EQ(status_table({row}, kNow),
            "NAME  ENGINE  STATE   SINCE    RESTARTS  LAST-FAILURE  PORT   GPUS  PHASE\n"
            "demo  vllm    active  12m ago  2         cuda-oom      30123  2,3   serving\n");
}

TEST(StatusTable, WaitingToRestartAndNotLoadedAreSaidSo) {
  UnitStatus waiting = serving_unit();
  waiting.active_state = "activating";
  waiting.sub_state = "auto-restart";
  waiting.result = "exit-code";
  waiting.state_change_usec = kNow - 30'000'000;
  auto row = service_row("demo", waiting, SupervisorState{}, nullptr);
  EXPECT_EQ(row.state, "restarting");
  EXPECT_EQ(row.last_failure, "exit-code");  // no class recorded: systemd's result
  EXPECT_EQ(format_ago(row.since_usec, kNow), "30s ago");
  // An installed profile whose unit systemd does not have.
  UnitStatus gone;
  gone.load_state = "not-found";
  auto down = service_row("old", gone, SupervisorState{}, nullptr);
  EXPECT_EQ(down.state, "not-loaded");
  EXPECT_THAT(
      status_table({row, down}, kNow),
      HasSubstr("\nold   -       not-loaded  -        0         -             -     -     -\n"));
}

// On a terminal the state is coloured (cli/colour), its padding not: the columns stay aligned.
TEST(StatusTable, TheStateIsColouredOnlyWhenAsked) {
  UnitStatus failed = serving_unit();
  failed.active_state = "failed";
  auto row = service_row("demo", failed, SupervisorState{}, nullptr);
  auto ok = service_row("okay", serving_unit(), SupervisorState{}, nullptr);
  const auto plain = status_table({row, ok}, kNow);
  EXPECT_EQ(plain.find('\033'), std::string::npos) << plain;
  const auto coloured = status_table({row, ok}, kNow, true);
  EXPECT_THAT(coloured, HasSubstr("\ndemo  -       \033[31mfailed\033[0m  "));
  EXPECT_THAT(coloured, HasSubstr("\nokay  -       \033[32mactive\033[0m  "));
  std::string stripped = coloured;
  for (const std::string code : {"\033[31m", "\033[32m", "\033[0m"})
    for (auto at = stripped.find(code); at != std::string::npos; at = stripped.find(code))
      stripped.erase(at, code.size());
  EXPECT_EQ(stripped, plain);
}

TEST(StatusTable, AgoIsHuman) {
  EXPECT_EQ(format_ago(0, kNow), "-");
  EXPECT_EQ(format_ago(kNow - 119'000'000, kNow), "119s ago");
  EXPECT_EQ(format_ago(kNow - 90 * kMinute, kNow), "90m ago");
  EXPECT_EQ(format_ago(kNow - 25 * 60 * kMinute, kNow), "25h ago");
  EXPECT_EQ(format_ago(kNow - 3 * 24 * 60 * kMinute, kNow), "3d ago");
}

TEST(StatusTable, JsonCarriesTheSameColumns) {
  const Profile profile = installed_profile();
  auto json =
      service_row_json(service_row("demo", serving_unit(), SupervisorState{}, &profile), kNow);
  EXPECT_EQ(json["profile"], "demo");
  EXPECT_EQ(json["engine"], "vllm");
  EXPECT_EQ(json["state"], "active");
  EXPECT_EQ(json["since"], "12m ago");
  EXPECT_EQ(json["restarts"], 2);
  EXPECT_TRUE(json["last_failure_class"].is_null());
  EXPECT_EQ(json["port"], 30123);
  EXPECT_EQ(json["gpus"], nlohmann::json({"2", "3"}));
}

}  // namespace
}  // namespace gl
