// SPDX-License-Identifier: Apache-2.0
// Start phases and silent JIT on a real systemd 252 booted privately (tests/integration/harness):
// root's record-start (ExecStartPost=, after READY=1) keeps the mock's start phases from `run`'s
// phase lines in the journal; a start whose JIT cache keeps growing while it prints nothing
// outlives server.ready_timeout, and one that neither prints nor grows is stopped by it.

#include <chrono>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/mock_engine_suite.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::event_of;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;
// run's own start timeout; the unit's TimeoutStartSec= is a minute longer.
constexpr int kReadyTimeout = 15;
const std::string kServer =
    "ready_timeout = \"" + std::to_string(kReadyTimeout) + "s\"\n[restart]\npolicy = \"no\"\n";

class StartPhases : public MockEngineSuite<StartPhases> {
 public:
  static MockEngineHost* new_host() {
    return new MockEngineHost(fs::path(GL_BINARY_DIR) / "start-phases-work", kGpulaunch,
                              GL_SOURCE_DIR);
  }

 protected:
  // The mock SGLang with a short start timeout and no restart; `env` adds to its [env].
  static void write_profile_for(const std::string& name, int port, const std::string& env) {
    host().write_profile(name, port, kServer, env);
  }
};

std::vector<std::string> phase_names(const nlohmann::json& start) {
  std::vector<std::string> names;
  for (const auto& span : start.value("phases", nlohmann::json::array()))
    names.push_back(span.value("phase", ""));
  return names;
}

double seconds_in(const nlohmann::json& start, const std::string& phase) {
  double total = 0;
  for (const auto& span : start.value("phases", nlohmann::json::array()))
    if (span.value("phase", "") == phase) total += span.value("seconds", 0.0);
  return total;
}

TEST_F(StartPhases, TheMockStartsPhasesAreRecordedAndShown) {
  write_profile_for("phases", 31281, "");
  auto up = gpulaunch("up phases --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  EXPECT_NE(up.out.find("ready in "), std::string::npos) << up.out;
  const auto status = status_of("phases");
  const auto start = status["last_start"];
  ASSERT_TRUE(start.is_object()) << status.dump(2) << gpulaunch("logs phases -n 80").out;
  // The mock prints SGLang's lines: weights (Load weight begin/end), the graph capture, then
  // uvicorn's (health, unless health answered before run read that line).
  auto names = phase_names(start);
  ASSERT_GE(names.size(), 3u) << start.dump(2);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3),
            (std::vector<std::string>{"process", "weights", "cuda_graphs"}))
      << start.dump(2);
  EXPECT_GE(start.value("ready_usec", 0LL), start.value("process_start_usec", 0LL));
  const auto started = event_of(events_of("phases"), "started");
  ASSERT_FALSE(started.empty()) << events_of("phases").dump(2);
  EXPECT_EQ(phase_names(started["start"]), phase_names(start));
  EXPECT_NE(gpulaunch("status phases").out.find("last start: ready in"), std::string::npos);
  gpulaunch("down phases --runtime --purge");
}

// vLLM #38246: a first-use JIT build that prints nothing for longer than the start timeout.
TEST_F(StartPhases, AStartWhoseJitCacheKeepsGrowingOutlivesItsStartTimeout) {
  constexpr int kJitSeconds = kReadyTimeout + 15;
  write_profile_for("jitgrows", 31282,
                    "MOCK_JIT_GROW_SECONDS = \"" + std::to_string(kJitSeconds) + "\"\n");
  auto up = gpulaunch("up jitgrows --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out << gpulaunch("logs jitgrows -n 80").out;
  const auto start = status_of("jitgrows")["last_start"];
  ASSERT_TRUE(start.is_object()) << status_of("jitgrows").dump(2);
  EXPECT_GT(start.value("seconds", 0), kReadyTimeout) << start.dump(2);
  EXPECT_GE(seconds_in(start, "jit_compile"), kJitSeconds - 8) << start.dump(2);
  EXPECT_NE(gpulaunch("logs jitgrows -n 200").out.find("start phase jit_compile begins"),
            std::string::npos);
  gpulaunch("down jitgrows --runtime --purge");
}

TEST_F(StartPhases, AStartThatNeitherPrintsNorGrowsIsStoppedByItsTimeout) {
  write_profile_for("jitdead", 31283,
                    "MOCK_JIT_GROW_SECONDS = \"" + std::to_string(3 * kReadyTimeout) +
                        "\"\nMOCK_JIT_GROW_KIB_PER_SECOND = \"0\"\n");
  const auto began = std::chrono::steady_clock::now();
  auto up = gpulaunch("up jitdead --runtime --force");
  const auto took = std::chrono::steady_clock::now() - began;
  EXPECT_NE(up.exit_code, 0) << up.out;
  EXPECT_LT(took, std::chrono::seconds(2 * kReadyTimeout + 20));
  auto logs = gpulaunch("logs jitdead -n 200").out;
  EXPECT_NE(logs.find("did not answer 200"), std::string::npos) << logs;
  EXPECT_FALSE(event_of(events_of("jitdead"), "start-timeout").empty())
      << events_of("jitdead").dump(2);
  EXPECT_TRUE(event_of(events_of("jitdead"), "started").empty());
  gpulaunch("down jitdead --runtime --purge");
}

}  // namespace
