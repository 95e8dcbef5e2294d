// SPDX-License-Identifier: Apache-2.0
// What `run` decides before it starts the engine, on a fake clock, notifier and GPU list: the
// exit code it stops with, the lines it writes to the journal, what it tells systemd, how long it
// waited, the engine's command line.

#include "supervise/start_gate.hpp"

#include <algorithm>
#include <optional>

#include <gtest/gtest.h>

#include "../temp_dir.hpp"
#include "fakes/systemd/fake_notifier.hpp"
#include "fakes/util/fake_timekeeper.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/step_down.hpp"

namespace gl {
namespace {

using testing::FakeNotifier;
using testing::FakeTimekeeper;
using testing::TempDir;

HistoryPlace place_in(const TempDir& dir) {
  HistoryPlace place = history_place("demo");
  place.directory = dir.path() / "state";
  place.runtime_directory = dir.path() / "run";
  return place;
}

bool said(const std::vector<std::string>& lines, std::string_view text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

// One `run` start: the history in a scratch directory, the GPUs answering what `held` says at
// each look (the last answer repeats).
struct Start {
  TempDir dir;
  History history{place_in(dir)};
  FakeTimekeeper clock;
  FakeNotifier notifier;
  std::vector<std::string> said;
  std::vector<std::vector<GpuProcessUse>> held;
  bool no_nvml = false;
  int looks = 0;
  std::optional<GpuContext> gpus;  // what NVML says of the unit's GPUs; unset: not asked
  int described = 0;
  StartGateInput input{"demo",
                       RestartSettings{},
                       EngineKind::sglang,
                       1200,
                       {"python3", "-m", "sglang.launch_server", "--mem-fraction-static", "0.88"}};

  StartGate run() {
    StartGateIo io{
        notifier, clock,
        GpuHolders{[this]() -> Result<std::vector<GpuProcessUse>> {
                     ++looks;
                     if (no_nvml) return failf("NVML is not available");
                     if (held.empty()) return std::vector<GpuProcessUse>{};
                     return held[std::min(static_cast<size_t>(looks - 1), held.size() - 1)];
                   },
                   [](unsigned pid) { return pid == 4242 ? "python3" : "?"; }, 100,
                   [this] {
                     ++described;
                     return gpus.value_or(GpuContext{});
                   }},
        [this](const std::string& line) { said.push_back(line); }};
    return gate_start(input, history, io);
  }

  void record(long long failures, const std::string& last_class, int gpu_level = 0) {
    SupervisorState state;
    state.consecutive_failures = failures;
    state.last_class = last_class;
    state.gpu_level = gpu_level;
    ASSERT_TRUE(history.save(state));
  }
};

TEST(StartGate, AFirstStartRunsTheEngineAsWrittenWithoutWaiting) {
  Start start;
  const StartGate gate = start.run();
  EXPECT_FALSE(gate.exit_code);
  EXPECT_EQ(gate.argv, start.input.argv);
  EXPECT_EQ(start.clock.slept().count(), 0);
  EXPECT_TRUE(start.said.empty());
  EXPECT_EQ(gate.stable_message, "");  // nothing to forgive
}

TEST(StartGate, AGpuHeldByAnotherProcessIsWaitedForThenStarted) {
  Start start;
  const GpuProcessUse other{0, 4242, 30000};
  start.held = {{other}, {other}, {other}, {}};
  const StartGate gate = start.run();
  EXPECT_FALSE(gate.exit_code);
  EXPECT_TRUE(said(start.said, "GPU residue: pid 4242 (python3) holds 30000 MiB on GPU 0"));
  EXPECT_TRUE(said(start.said, "GPU memory released; starting the engine"));
  EXPECT_EQ(start.notifier.last("STATUS="), "waiting for 1 process(es) to release GPU memory");
  EXPECT_EQ(start.notifier.last("EXTEND_TIMEOUT_USEC="), "180000000");  // 60 s + 120 s
  EXPECT_EQ(start.clock.slept(), std::chrono::seconds(3));
}

TEST(StartGate, AGpuStillHeldAfterTheWaitKeepsTheEngineDown) {
  Start start;
  start.held = {{GpuProcessUse{1, 4242, 8000}}};
  const StartGate gate = start.run();
  ASSERT_TRUE(gate.exit_code);
  EXPECT_EQ(*gate.exit_code, kExitGpuResidue);
  EXPECT_TRUE(said(start.said, "GPU memory still held after 60s; not starting into an OOM"));
  EXPECT_EQ(start.clock.slept(), kResidueWait);
}

TEST(StartGate, RunItselfOnTheGpuOrNoNvmlIsNoReasonToWait) {
  Start own;
  own.held = {{GpuProcessUse{0, 100, 500}}};  // run's own pid
  EXPECT_FALSE(own.run().exit_code);
  EXPECT_EQ(own.clock.slept().count(), 0);
  EXPECT_TRUE(own.said.empty());

  Start bare;
  bare.no_nvml = true;
  EXPECT_FALSE(bare.run().exit_code);
  EXPECT_EQ(bare.clock.slept().count(), 0);
}

TEST(StartGate, TheBudgetSpentKeepsItDown) {
  Start start;
  start.record(5, "crash");  // the default budget is 5
  const GpuProcessUse other{0, 4242, 30000};
  start.held = {{other}};
  const StartGate gate = start.run();
  ASSERT_TRUE(gate.exit_code);
  EXPECT_EQ(*gate.exit_code, kExitCrashLoop);
  EXPECT_TRUE(said(start.said,
                   "crash loop: 5 failures in a row (budget 5), last crash; staying down. Fix the "
                   "cause (`gpulaunch events demo`), then `gpulaunch restart demo` to try again"))
      << start.said.front();
  EXPECT_EQ(start.notifier.last("STATUS="),
            "crash loop: 5 failures in a row (budget 5), last crash; gpulaunch restart demo to "
            "try again");
  EXPECT_EQ(start.looks, 0);  // it never got as far as the GPUs
  EXPECT_EQ(start.clock.slept().count(), 0);
}

// `run --foreground` has no `gpulaunch restart`: the stop names what its caller resets.
TEST(StartGate, TheBudgetsStopNamesTheCallersWayToTryAgain) {
  Start start;
  start.record(5, "crash");
  start.input.try_again = "remove '/state/demo/supervisor.json'";
  const StartGate gate = start.run();
  EXPECT_EQ(gate.exit_code, kExitCrashLoop);
  EXPECT_TRUE(said(start.said,
                   "crash loop: 5 failures in a row (budget 5), last crash; staying down. Fix the "
                   "cause, then remove '/state/demo/supervisor.json' to try again"))
      << start.said.front();
}

TEST(StartGate, ABackoffSleepsTheExpectedTimeOnTheClock) {
  Start start;
  start.record(3, "crash");  // 10 s doubled twice
  const StartGate gate = start.run();
  EXPECT_FALSE(gate.exit_code);
  EXPECT_EQ(start.clock.slept(), std::chrono::seconds(40));
  EXPECT_EQ(start.notifier.last("STATUS="), "backing off 40s after crash (failure 3 of 5)");
  // The start job's timeout covers the wait, the ready timeout and a minute.
  EXPECT_EQ(start.notifier.last("EXTEND_TIMEOUT_USEC="), "1300000000");
  EXPECT_EQ(gate.stable_message,
            "served for restart.stable_after (10min): forgiven at the next stop");
}

// restart.delay counts from the stop record-exit stamped: what systemd's RestartSec= and the
// start's set-up took since then is not waited again.
TEST(StartGate, TheBackoffCountsFromTheFailureNotFromThisStart) {
  Start start;
  SupervisorState state;
  state.consecutive_failures = 1;
  state.last_class = "crash";
  state.last_failure_usec = start.clock.now_usec();
  ASSERT_TRUE(start.history.save(state));
  start.input.restart.delay = Seconds(1);
  start.clock.advance(std::chrono::milliseconds(300));
  const StartGate gate = start.run();
  EXPECT_FALSE(gate.exit_code);
  EXPECT_EQ(start.clock.slept(), std::chrono::milliseconds(700));
  EXPECT_EQ(start.notifier.last("STATUS="), "backing off 1s after crash (failure 1 of 5)");

  Start late;  // a start later than the whole delay does not wait at all
  state.last_failure_usec = late.clock.now_usec();
  ASSERT_TRUE(late.history.save(state));
  late.input.restart.delay = Seconds(1);
  late.clock.advance(std::chrono::milliseconds(1500));
  EXPECT_FALSE(late.run().exit_code);
  EXPECT_EQ(late.clock.slept().count(), 0);
}

TEST(StartGate, AnUnrecordedStopKeepsItDown) {
  Start start;
  ASSERT_TRUE(start.history.mark_unrecorded("Failed to write 'x': No space left on device"));
  const StartGate gate = start.run();
  ASSERT_TRUE(gate.exit_code);
  EXPECT_EQ(*gate.exit_code, kExitCrashLoop);
  EXPECT_TRUE(said(start.said, "history unrecorded"));
}

TEST(StartGate, AfterACudaOomTheEngineStartsSteppedDown) {
  Start start;
  start.record(1, "cuda-oom", 1);
  const StartGate gate = start.run();
  EXPECT_FALSE(gate.exit_code);
  EXPECT_EQ(start.clock.slept(), std::chrono::seconds(10));
  const auto expected = step_down(start.input.argv, EngineKind::sglang, 1, 0);
  ASSERT_FALSE(expected.changes.empty());
  EXPECT_NE(gate.argv, start.input.argv);
  EXPECT_EQ(gate.argv, expected.argv);
  EXPECT_TRUE(said(start.said, "step-down (GPU memory level 1, concurrency level 0): " +
                                   expected.changes.front()));

  EXPECT_EQ(start.described, 1);

  Start off;
  off.input.restart.step_down = false;
  off.record(1, "cuda-oom", 1);
  EXPECT_EQ(off.run().argv, off.input.argv);
}

// The step-down starts from what SGLang would use on the unit's GPUs, and says so; the GPUs are
// asked only when there is a step-down to take.
TEST(StartGate, TheStepDownStartsFromTheEnginesDefaultOnTheUnitsGpus) {
  Start start;
  start.input.argv = {"python3", "-m", "sglang.launch_server", "--port", "30000"};
  start.input.engine_version = "0.5.16";  // run's --engine-version: the phase-split flags
  start.gpus = GpuContext{143771, "NVIDIA H200", 1, 1};
  start.record(1, "cuda-oom", 2);
  const StartGate gate = start.run();
  EXPECT_FALSE(gate.exit_code);
  EXPECT_EQ(gate.argv, (std::vector<std::string>{"python3", "-m", "sglang.launch_server", "--port",
                                                 "30000", "--mem-fraction-static", "0.807",
                                                 "--cuda-graph-max-bs-decode", "64"}));
  EXPECT_TRUE(said(start.said,
                   "step-down (GPU memory level 2, concurrency level 0): --mem-fraction-static "
                   "0.907 -> 0.807 (from SGLang default for 143771 MiB GPUs at tp 1, pp 1: 0.907 "
                   "(reserves 13440 MiB))"))
      << ::testing::PrintToString(start.said);

  Start first;
  first.gpus = GpuContext{143771, "NVIDIA H200", 1, 1};
  EXPECT_EQ(first.run().argv, first.input.argv);
  EXPECT_EQ(first.described, 0);
}

// An SGLang before the phase-split graph flags refuses --cuda-graph-max-bs-decode: the restart
// after a CUDA OOM inserts the spelling that release takes.
TEST(StartGate, TheStepDownSpellsKnobsAsTheInstalledReleaseDoes) {
  Start start;
  start.input.argv = {"python3", "-m", "sglang.launch_server"};
  start.input.engine_version = "0.5.6";
  start.gpus = GpuContext{143771, "NVIDIA H200", 1, 1};
  start.record(1, "cuda-oom", 1);
  const StartGate gate = start.run();
  EXPECT_EQ(gate.argv, (std::vector<std::string>{"python3", "-m", "sglang.launch_server",
                                                 "--mem-fraction-static", "0.857",
                                                 "--cuda-graph-max-bs", "128"}));
}

}  // namespace
}  // namespace gl
