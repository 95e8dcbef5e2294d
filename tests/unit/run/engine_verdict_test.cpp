// SPDX-License-Identifier: Apache-2.0
// What an engine's end means for `run`'s exit status and its verdict line, without a process:
// the bridge's own reasons come first, then a stop, then how the engine itself ended.

#include "run/engine_verdict.hpp"

#include <sys/wait.h>
#include <csignal>

#include <gtest/gtest.h>

#include "catalog/exit_codes.hpp"

namespace gl {
namespace {

EngineEnd exited(int code, bool usage_error = false) {
  return {W_EXITCODE(code, 0), usage_error, false, std::nullopt, ""};
}

TEST(EngineVerdict, AnEngineThatExitsSaysItsStatus) {
  EXPECT_EQ(engine_verdict(exited(0)).status, 0);
  const EngineVerdict crash = engine_verdict(exited(3));
  EXPECT_EQ(crash.status, 3);
  EXPECT_EQ(crash.why, "engine exited with status 3");
}

TEST(EngineVerdict, AKilledEngineExitsWith128PlusTheSignal) {
  const EngineVerdict killed = engine_verdict({W_EXITCODE(0, SIGKILL), false, false, {}, ""});
  EXPECT_EQ(killed.status, kExitSignalBase + SIGKILL);
  EXPECT_EQ(killed.why.rfind("engine was killed by signal 9 (", 0), 0u) << killed.why;
}

TEST(EngineVerdict, AUsageErrorIsAConfigurationErrorNotRetried) {
  const EngineVerdict rejected = engine_verdict(exited(2, true));
  EXPECT_EQ(rejected.status, kExitConfig);
  EXPECT_EQ(rejected.why, "engine rejected its command line (a configuration error, not retried)");
}

TEST(EngineVerdict, AnEngineClaimingOneOfGpulaunchsStatusesCountsAsACrash) {
  const EngineVerdict claimed = engine_verdict(exited(kExitCrashLoop));
  EXPECT_EQ(claimed.status, kExitEngineCrash);
  EXPECT_EQ(claimed.why,
            "engine exited with status 79, one of gpulaunch's own: counted as a crash");
}

TEST(EngineVerdict, AStopIsACleanEndWhateverTheEngineExitedWith) {
  EngineEnd stopped = exited(1);
  stopped.stopping = true;
  EXPECT_EQ(engine_verdict(stopped).status, 0);
  EXPECT_EQ(engine_verdict(stopped).why, "engine stopped");
}

TEST(EngineVerdict, TheBridgesOwnReasonWinsOverAStopAndTheEnginesStatus) {
  EngineEnd stalled{W_EXITCODE(0, SIGKILL), false, true, kExitStalled, "no forward progress"};
  const EngineVerdict verdict = engine_verdict(stalled);
  EXPECT_EQ(verdict.status, kExitStalled);
  EXPECT_EQ(verdict.why, "no forward progress");
}

}  // namespace
}  // namespace gl
