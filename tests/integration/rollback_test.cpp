// SPDX-License-Identifier: Apache-2.0
// Safe changes on a real systemd 252 booted privately (tests/integration/harness): `up` of a
// changed profile whose engine never becomes ready puts the previous unit and profile snapshot
// back and restarts the previous version, says so and exits non-zero; `--no-rollback` keeps the
// failed unit for inspection.

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/mock_engine_suite.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;

class Rollback : public MockEngineSuite<Rollback> {
 public:
  static MockEngineHost* new_host() {
    return new MockEngineHost(fs::path(GL_BINARY_DIR) / "rollback-work", kGpulaunch, GL_SOURCE_DIR);
  }

 protected:
  // A short start timeout, so a version that never becomes ready fails in seconds.
  static void write_version(const std::string& name, int port, const std::string& env) {
    host().write_profile(name, port, "ready_timeout = \"10s\"\n[restart]\ndelay = \"1s\"\n", env);
  }
  static std::string file_text(const std::string& path) {
    return host().systemd().exec({"cat", path}).out;
  }
  static std::string unit_file(const std::string& name) {
    return file_text("/run/systemd/system/gpulaunch-" + name + ".service");
  }
  static std::string snapshot(const std::string& name) {
    return file_text("/var/lib/gpulaunch/snapshots/" + name + ".toml");
  }
};

TEST_F(Rollback, AChangedProfileThatNeverBecomesReadyIsRolledBackToTheRunningPreviousVersion) {
  write_version("roll", 31321, "MOCK_SGLANG_PROGRESS = \"1\"\n");
  auto first = gpulaunch("up roll --runtime --force");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const std::string previous_unit = unit_file("roll");
  const std::string previous_snapshot = snapshot("roll");
  ASSERT_FALSE(previous_unit.empty());
  ASSERT_FALSE(previous_snapshot.empty());

  write_version("roll", 31321, "MOCK_SGLANG_MODE = \"never-ready\"\n");
  auto changed = gpulaunch("up roll --runtime --force");
  EXPECT_EQ(changed.exit_code, 1) << changed.out;
  EXPECT_NE(changed.out.find("Failed to start gpulaunch-roll.service"), std::string::npos)
      << changed.out;
  EXPECT_NE(changed.out.find("Rolling back gpulaunch-roll.service: the changed unit did not "
                             "become ready; restoring the previous unit and profile snapshot"),
            std::string::npos)
      << changed.out;
  EXPECT_NE(changed.out.find("rolled back: gpulaunch-roll.service runs its previous unit again, "
                             "ready after "),
            std::string::npos)
      << changed.out;

  // The previous version, exactly, serves again.
  EXPECT_EQ(unit_file("roll"), previous_unit);
  EXPECT_EQ(snapshot("roll"), previous_snapshot);
  EXPECT_EQ(unit_file("roll").find("never-ready"), std::string::npos);
  auto status = status_of("roll");
  EXPECT_EQ(status["state"], "active") << status.dump(2);
  EXPECT_EQ(host()
                .systemd()
                .exec({"python3", "-c",
                       "import urllib.request; "
                       "urllib.request.urlopen('http://127.0.0.1:31321/health', timeout=5)"})
                .exit_code,
            0);
  // The history says what happened and why.
  const auto rolled = gpulaunch::testing::event_of(events_of("roll"), "rolled-back");
  ASSERT_FALSE(rolled.empty()) << events_of("roll").dump(2);
  EXPECT_EQ(rolled.value("action", ""),
            "previous unit and profile snapshot restored; restarting it");
  EXPECT_NE(rolled.value("evidence", "").find("job failed"), std::string::npos) << rolled.dump(2);
  // Nothing to redo: the rolled-back unit is what `up` of the previous profile installs.
  write_version("roll", 31321, "MOCK_SGLANG_PROGRESS = \"1\"\n");
  auto again = gpulaunch("up roll --runtime --force");
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("is running and unchanged: nothing to do."), std::string::npos)
      << again.out;
  gpulaunch("down roll --runtime --purge");
}

TEST_F(Rollback, NoRollbackKeepsTheChangedUnitAsItFailed) {
  write_version("keep", 31322, "");
  ASSERT_EQ(gpulaunch("up keep --runtime --force").exit_code, 0);

  host().write_profile("keep", 31322, "ready_timeout = \"10s\"\n[restart]\npolicy = \"no\"\n",
                       "MOCK_SGLANG_MODE = \"crash\"\nMOCK_SGLANG_CRASH_AFTER = \"0\"\n");
  auto changed = gpulaunch("up keep --runtime --force --no-rollback");
  EXPECT_EQ(changed.exit_code, 1) << changed.out;
  EXPECT_NE(changed.out.find("--no-rollback: gpulaunch-keep.service keeps the changed unit, as "
                             "it failed"),
            std::string::npos)
      << changed.out;
  EXPECT_EQ(changed.out.find("rolled back"), std::string::npos) << changed.out;
  EXPECT_NE(unit_file("keep").find("MOCK_SGLANG_MODE=crash"), std::string::npos)
      << unit_file("keep");
  EXPECT_NE(status_of("keep")["state"], "active");
  gpulaunch("down keep --runtime --purge");
}

}  // namespace
