// SPDX-License-Identifier: Apache-2.0
// `gpulaunch exec`'s wait on a fake manager: it exits with the command's status, 128 + a signal,
// or fails when the command never ran.

#include "supervise/transient_run.hpp"

#include <gtest/gtest.h>

#include "fakes/systemd/fake_manager.hpp"

namespace gl {
namespace {

using testing::FakeManager;

TransientService service() {
  TransientService service;
  service.unit = "gpulaunch-demo-exec-42.service";
  service.argv = {"/usr/bin/env", "--", "python", "-c", "import flashinfer"};
  service.properties = {{"User", std::string("llm")}, {"ProtectSystem", std::string("strict")}};
  return service;
}

TEST(TransientRun, TheCommandsExitStatusIsReturnedAfterTheUnitEnds) {
  FakeManager manager;
  manager.script_next_job({2, "done", std::nullopt});
  manager.transient_end = {"failed", 1, 3};
  auto status = run_transient(manager, service());
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(*status, 3);
  ASSERT_EQ(manager.transients.size(), 1u);
  EXPECT_EQ(manager.transients[0].properties, service().properties);
  // Failed, it stayed for its status to be read; then it is removed.
  EXPECT_EQ(manager.calls,
            (std::vector<std::string>{"StartTransientUnit gpulaunch-demo-exec-42.service",
                                      "ResetFailedUnit gpulaunch-demo-exec-42.service"}));
  EXPECT_FALSE(manager.units.contains("gpulaunch-demo-exec-42.service"));
  EXPECT_GE(manager.waits, 2);  // not before the start job ended
}

// Issue 28: Ctrl-C on `exec` left the command running as the service user. An interruption
// stops the unit and waits for it to end; the command's end (SIGTERM) is the status.
TEST(TransientRun, AnInterruptionStopsTheUnitAndWaitsForItsEnd) {
  FakeManager manager;
  manager.script_next_job({1, "done", std::nullopt});
  manager.transient_end = {"active", 2, 15};  // runs until stopped, then killed by SIGTERM
  manager.script_next_job({2, "done", std::nullopt});
  int asked = 0;
  auto status = run_transient(manager, service(), [&] { return ++asked >= 3; });
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(*status, 128 + 15);
  EXPECT_EQ(manager.calls,
            (std::vector<std::string>{"StartTransientUnit gpulaunch-demo-exec-42.service",
                                      "StopUnit gpulaunch-demo-exec-42.service"}));
  EXPECT_EQ(manager.status("gpulaunch-demo-exec-42.service")->active_state, "inactive");
}

TEST(TransientRun, ASignalIsReportedAsAShellDoes) {
  FakeManager manager;
  manager.transient_end = {"failed", 2, 9};  // CLD_KILLED by SIGKILL
  auto status = run_transient(manager, service());
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(*status, 137);
  // Ended well: systemd collected it before its status was read.
  manager.transient_end = {"inactive", 1, 0};
  EXPECT_EQ(run_transient(manager, service()).value_or(-1), 0);
}

TEST(TransientRun, AStartJobThatFailedBeforeTheCommandIsAnError) {
  FakeManager manager;
  manager.script_next_job({1, "dependency", std::string("failed")});
  manager.transient_end = {"failed", 0, 0};
  auto status = run_transient(manager, service());
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message,
            "Transient unit 'gpulaunch-demo-exec-42.service' did not run the command: its start "
            "job dependency");
}

}  // namespace
}  // namespace gl
