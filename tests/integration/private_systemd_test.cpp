// SPDX-License-Identifier: Apache-2.0
#include "harness/private_systemd.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <thread>

namespace {

using gpulaunch::testing::PrivateSystemd;

bool alive(int pid) {
  return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

TEST(PrivateSystemd, BootsRunsAndPowersOff) {
  PrivateSystemd systemd;
  if (!systemd.boot()) {
    if (systemd.skipped()) GTEST_SKIP() << systemd.skip_reason();
    FAIL() << "boot failed; console in " << systemd.state_dir();
  }
  const int pid = systemd.pid();
  ASSERT_TRUE(alive(pid));
  const auto version = systemd.exec({"systemctl", "--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("systemd 252"), std::string::npos) << version.out;
  EXPECT_EQ(systemd.exec({"sh", "-c", "exit 7"}).exit_code, 7);
  systemd.poweroff();
  EXPECT_FALSE(alive(pid));
  systemd.poweroff();  // idempotent
}

// A failed assertion leaves the scope early; the destructor must still power the manager off.
// EXPECT_FATAL_FAILURE's statement cannot touch locals: it reports through these.
int g_failed_scope_pid = 0;
bool g_failed_scope_skipped = false;

void BootThenFailAssertion() {
  PrivateSystemd systemd;
  if (!systemd.boot()) {
    g_failed_scope_skipped = systemd.skipped();
    FAIL() << "boot";
  }
  g_failed_scope_pid = systemd.pid();
  ASSERT_EQ(1, 2) << "deliberate failure while the manager runs";
}

TEST(PrivateSystemd, DestructorPowersOffAfterFailedAssertion) {
  EXPECT_FATAL_FAILURE(BootThenFailAssertion(), "deliberate failure");
  const int pid = g_failed_scope_pid;
  if (g_failed_scope_skipped) GTEST_SKIP() << "cannot boot systemd here";
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(alive(pid)) << "manager " << pid << " survived its PrivateSystemd";
}

}  // namespace
