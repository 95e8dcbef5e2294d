// SPDX-License-Identifier: Apache-2.0
// The bridge with a real engine child: what the engine prints reaches the journal (here, a
// vector) whatever its line lengths, and the bridge keeps reading to the end.

#include "run/bridge.hpp"

#include "supervise/exit_status.hpp"
#include "support/bridge_child.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gl {
namespace {

using test::run_engine;

TEST(Bridge, ALineOfMegabytesWithoutANewlineIsForwardedInPiecesAndReadingGoesOn) {
  constexpr size_t kLong = 3 << 20;
  auto run = run_engine("head -c " + std::to_string(kLong) +
                        " /dev/zero | tr '\\0' x; echo; echo 'after the long line'");
  EXPECT_EQ(run.exit_status, 0);
  ASSERT_FALSE(run.engine_lines.empty());
  // Compared as a bool: a failure would otherwise print megabytes.
  EXPECT_TRUE(run.engine_lines.back() == "after the long line")
      << "last line has " << run.engine_lines.back().size() << " bytes";
  std::string joined;
  for (size_t i = 0; i + 1 < run.engine_lines.size(); ++i) {
    EXPECT_LE(run.engine_lines[i].size(), kMaxOutputLine);
    joined += run.engine_lines[i];
  }
  EXPECT_EQ(joined.size(), kLong);  // every byte, none twice
  EXPECT_EQ(std::count(joined.begin(), joined.end(), 'x'), static_cast<long>(kLong));
  EXPECT_EQ(run.engine_lines.size(), kLong / kMaxOutputLine + 1);
}

TEST(Bridge, PiecesEndBetweenUtf8CharactersNotInsideThem) {
  // 'a' then two-byte characters: the bound falls inside one.
  auto run = run_engine(
      "printf a; i=0; while [ $i -lt 40000 ]; do printf '\\303\\251'; "
      "i=$((i+1)); done; echo");
  ASSERT_GE(run.engine_lines.size(), 2u);
  std::string joined;
  for (const auto& piece : run.engine_lines) {
    ASSERT_FALSE(piece.empty());
    EXPECT_NE(static_cast<unsigned char>(piece.front()) & 0xC0, 0x80)
        << "piece starts mid-character";
    joined += piece;
  }
  EXPECT_EQ(joined.size(), 1u + 2 * 40000);
}

TEST(Bridge, ProgressAfterALongLineStillReportsTheLoadingPhase) {
  auto run = run_engine(
      "head -c 200000 /dev/zero | tr '\\0' y; "
      "echo 'Loading safetensors checkpoint shards:  50% Completed | 4/8'");
  EXPECT_THAT(run.notifications, ::testing::Contains("STATUS=loading weights 50%"));
}

// vLLM's bar format (and SGLang's where it ends in "\n"): "\r" + bar + "\n", then tqdm's padding
// spaces when the next bar is shorter. Those spaces are no line of their own.
TEST(Bridge, TqdmsPaddingBetweenNewlineEndedUpdatesIsNotJournalled) {
  auto run = run_engine(
      "printf '\\rLoading safetensors checkpoint shards:  50%% Completed | 1/2 [00:12<00:12, "
      "12.00s/it]\\n  ' >&2; "
      "printf '\\rLoading safetensors checkpoint shards: 100%% Completed | 2/2 [00:13<00:00, "
      "6.5s/it]\\n' >&2");
  EXPECT_EQ(run.engine_lines,
            (std::vector<std::string>{"Loading safetensors checkpoint shards:  50% Completed | "
                                      "1/2 [00:12<00:12, 12.00s/it]",
                                      "Loading safetensors checkpoint shards: 100% Completed | "
                                      "2/2 [00:13<00:00, 6.5s/it]"}));
  EXPECT_THAT(run.notifications, ::testing::Contains("STATUS=loading weights 100%"));
}

// record-exit reads the journal until `run`'s verdict is in: whatever the engine's end, the
// bridge's last line must be one it recognises, naming the status the bridge exits with.
TEST(Bridge, ItsLastLineIsTheVerdictRecordExitRecognises) {
  for (const std::string script :
       {"echo serving; exit 3", "echo 'error: unrecognized arguments: --tp 8' >&2; exit 2",
        "exit 0"}) {
    auto run = run_engine(script);
    EXPECT_EQ(parse_run_verdict(run.last_line), run.exit_status) << script << ": " << run.last_line;
  }
  EXPECT_EQ(run_engine("exit 2").exit_status, 2);
  EXPECT_EQ(run_engine("echo 'error: argument --tp: invalid int value' >&2; exit 2").exit_status,
            kExitConfig);
}

// Issue 28: an engine exiting 79 was recorded as gpulaunch's "crash-loop budget spent". The
// engine's own exit never claims one of gpulaunch's statuses: `run` exits 1, a crash, and says so.
TEST(Bridge, AnEngineCannotExitWithOneOfGpulaunchsVerdicts) {
  for (const std::string code : {"75", "78", "79", "80", "81", "200", "244"}) {
    auto run = run_engine("exit " + code);
    EXPECT_EQ(run.exit_status, 1) << code;
    EXPECT_EQ(run.last_line, "gpulaunch: engine exited with status " + code +
                                 ", one of gpulaunch's own: counted as a crash; exiting with 1");
  }
  EXPECT_EQ(run_engine("exit 82").exit_status, 82);
}

}  // namespace
}  // namespace gl
