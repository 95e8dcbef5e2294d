// SPDX-License-Identifier: Apache-2.0
#include "supervise/exit_status.hpp"

#include <csignal>
#include <vector>

#include <gtest/gtest.h>

namespace gl {
namespace {

int exited(int code) {
  return code << 8;
}  // as waitpid reports a normal exit
int killed(int signal) {
  return signal;
}

TEST(ExitStatus, SaysWhyTheEngineEnded) {
  EXPECT_EQ(exit_status_for_engine(exited(0), false), 0);
  EXPECT_EQ(exit_status_for_engine(exited(1), false), 1);
  EXPECT_EQ(exit_status_for_engine(killed(SIGKILL), false), 128 + SIGKILL);
  // argparse's exit 2 with its error line: the command line is wrong, a retry cannot help.
  EXPECT_EQ(exit_status_for_engine(exited(2), true), kExitConfig);
  EXPECT_EQ(exit_status_for_engine(exited(2), false), 2);
}

// Issue 28: an engine exiting 79 was recorded as "crash-loop budget spent" with no failure
// counted. Every status gpulaunch decides by becomes an ordinary crash when the engine picks it.
TEST(ExitStatus, TheEngineCannotExitWithAVerdict) {
  std::vector<int> verdicts{kExitReadyTimeout, kExitConfig, kExitCrashLoop, kExitGpuResidue,
                            kExitStalled};
  for (int status = kFirstSetupFailure; status <= kLastSetupFailure; ++status)
    verdicts.push_back(status);
  for (int status : verdicts) {
    EXPECT_EQ(exit_status_for_engine(exited(status), false), kExitEngineCrash) << status;
    EXPECT_FALSE(prevents_restart(exit_status_for_engine(exited(status), false))) << status;
  }
  for (int status : {1, 3, 77, 82, 199, 245, 255})
    EXPECT_EQ(exit_status_for_engine(exited(status), false), status) << status;
}

TEST(ExitStatus, RecognisesArgparseErrors) {
  EXPECT_TRUE(is_usage_error_line("launch_server.py: error: unrecognized arguments: --tp 8"));
  EXPECT_TRUE(is_usage_error_line("vllm serve: error: argument --max-num-seqs: invalid int value"));
  EXPECT_FALSE(is_usage_error_line("RuntimeError: Not enough memory."));
}

// vLLM's KV room check (kv_cache_utils.py) fails every start the same way: exit 1 after it is a
// configuration error, which systemd does not restart.
TEST(ExitStatus, AnEnginesConfigurationErrorStopsAsOne) {
  const std::string line =
      "ValueError: To serve at least one request with the model's max seq len (917504), 23.38 GiB "
      "KV cache is needed, which is larger than the available KV cache memory (22.61 GiB).";
  EXPECT_TRUE(is_usage_error_line(line));
  ASSERT_TRUE(config_error_fix(line));
  EXPECT_NE(config_error_fix(line)->find("--max-model-len"), std::string_view::npos);
  EXPECT_FALSE(config_error_fix("launch_server.py: error: unrecognized arguments: --tp 8"));
  EXPECT_EQ(exit_status_for_engine(exited(1), true), kExitConfig);
  EXPECT_EQ(exit_status_for_engine(exited(0), true), 0);
}

TEST(ExitStatus, TheVerdictLineNamesTheStatusRecordExitReadsBack) {
  EXPECT_EQ(run_verdict_line("engine exited with status 1", 1),
            "gpulaunch: engine exited with status 1; exiting with 1");
  EXPECT_EQ(parse_run_verdict(run_verdict_line("engine exited with status 1", 1)), 1);
  EXPECT_EQ(parse_run_verdict(run_verdict_line("engine was killed by signal 9 (Killed)", 137)),
            137);
  EXPECT_EQ(parse_run_verdict(run_verdict_line("", kExitReadyTimeout)), kExitReadyTimeout);
}

TEST(ExitStatus, EngineLinesThatMentionExitingAreNoVerdict) {
  EXPECT_FALSE(parse_run_verdict("INFO worker exiting with 0 pending requests"));
  EXPECT_FALSE(parse_run_verdict("gpulaunch: started engine, pid 12; waiting for http://x/health"));
  EXPECT_FALSE(parse_run_verdict("gpulaunch: engine exited; exiting with one"));
  EXPECT_FALSE(parse_run_verdict("gpulaunch: xexiting with 1"));
  EXPECT_FALSE(parse_run_verdict("gpulaunch: exiting with "));
}

}  // namespace
}  // namespace gl
