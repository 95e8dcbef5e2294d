// SPDX-License-Identifier: Apache-2.0
// `run --foreground`'s loop (run/foreground) on a fake engine, clock and history directory: the
// real start gate and record-exit sequence decide, so what is asserted is what a user of a Slurm
// step would see: the backoff slept, the argv stepped down after a CUDA OOM, the budget ending
// the loop with a status a requeue may retry, a stop on request, a group restarting together.
// tests/cli/run_foreground_test.sh proves the wiring with the real binary and the mock engine.

#include "run/foreground.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>

#include "../temp_dir.hpp"
#include "catalog/exit_codes.hpp"
#include "fakes/systemd/fake_notifier.hpp"
#include "fakes/util/fake_timekeeper.hpp"
#include "supervise/exit_status.hpp"

namespace gl {
namespace {

using testing::FakeNotifier;
using testing::FakeTimekeeper;
using ::testing::HasSubstr;
using testing::TempDir;

constexpr int64_t kSecond = 1'000'000;

struct QuietActions final : StopActions {
  std::vector<std::string> done;
  Result<std::filesystem::path> quarantine(std::string_view, int64_t) override {
    return failf("no caches here");
  }
  std::string tell_group(const Classification&, int64_t) override {
    done.emplace_back("tell group");
    return "the scheduler ends the others";
  }
  void stable(std::string_view) override { done.emplace_back("stable"); }
  void classified(const Classification&, const SupervisorEvent& event) override {
    done.push_back("classified " + event.kind);
  }
  void keeps_dying(const Classification&, const SupervisorEvent&) override {
    done.emplace_back("keeps dying");
  }
  void group_told(std::string_view) override {}
  void warning(std::string_view line) override { done.push_back("warning " + std::string(line)); }
  void error(std::string_view line) override { done.push_back("error " + std::string(line)); }
};

// One scripted engine end: after `runs_for`, with `status` and `lines`; `ready_after` from its
// start it said READY=1 (nullopt: never); `stop` a SIGTERM reached `run` while it ran.
struct Scripted {
  int status = kExitEngineCrash;
  std::vector<std::string> lines;
  std::chrono::seconds runs_for{5};
  std::optional<std::chrono::seconds> ready_after;
  bool stop = false;
};

Scripted crash() {
  return {kExitEngineCrash,
          {"Segmentation fault", run_verdict_line("engine exited with status 1", 1)},
          std::chrono::seconds(5),
          std::nullopt,
          false};
}
Scripted cuda_oom() {
  return {kExitEngineCrash,
          {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
           run_verdict_line("engine exited with status 1", 1)},
          std::chrono::seconds(5),
          std::nullopt,
          false};
}

// The memory share an argv starts SGLang with (the step-down rewrites it in place).
double share_of(const std::vector<std::string>& argv) {
  const auto flag = std::find(argv.begin(), argv.end(), "--mem-fraction-static");
  return flag != argv.end() && flag + 1 != argv.end() ? std::stod(*(flag + 1)) : -1;
}

class FakeForegroundIo final : public ForegroundIo {
 public:
  explicit FakeForegroundIo(std::vector<std::string> argv) : argv_(std::move(argv)) {}

  std::deque<Scripted> script;
  std::vector<std::vector<std::string>> started;  // each start's argv
  std::vector<std::chrono::milliseconds> slept_before;
  std::vector<std::string> said;
  // The stop signal arrives while this gate (1: the first start's) backs off.
  std::optional<size_t> stop_during_gate;
  int holds = 0;
  FakeTimekeeper timekeeper;
  FakeNotifier notifier;
  QuietActions quiet;
  RestartSettings restart;
  EngineKind kind = EngineKind::sglang;

  StartGate gate(const History& history) override {
    const auto before = timekeeper.slept();
    StartGateIo io{
        notifier, timekeeper,
        GpuHolders{[]() -> Result<std::vector<GpuProcessUse>> { return failf("no NVML"); },
                   [](unsigned) { return std::string("?"); },
                   1,
                   {}},
        [this](const std::string& line) { said.push_back(line); }};
    StartGate gate = gate_start(StartGateInput{"demo", restart, kind, 60, argv_}, history, io);
    slept_before.push_back(timekeeper.slept() - before);
    if (stop_during_gate == slept_before.size()) stop_ = true;
    return gate;
  }

  // Runs while the engine does (another rank of the group, ending in the same step).
  std::function<void()> while_running;

  EngineRun run_engine(const StartGate& gate) override {
    started.push_back(gate.argv);
    if (while_running) std::exchange(while_running, nullptr)();
    if (script.empty()) throw std::logic_error("the engine was started more often than scripted");
    const Scripted next = script.front();
    script.pop_front();
    EngineRun run;
    run.status = next.status;
    run.lines = next.lines;
    run.times.main_start_usec = timekeeper.now_usec();
    if (next.ready_after)
      run.times.active_enter_usec = run.times.main_start_usec + next.ready_after->count() * kSecond;
    timekeeper.advance(next.runs_for);
    run.ended_usec = timekeeper.now_usec();
    if (next.ready_after) run.times.active_exit_usec = run.ended_usec;
    if (next.stop) stop_ = true;
    return run;
  }

  bool stop_requested() override { return stop_; }
  std::shared_ptr<void> hold_history() override {
    ++holds;
    return nullptr;
  }
  Timekeeper& clock() override { return timekeeper; }
  StopActions& actions() override { return quiet; }
  void recorded(const History&, const StopDecision& decision) override {
    recorded_classes.emplace_back(exit_class_name(decision.stop.value));
  }
  std::vector<std::string> recorded_classes;
  void say(logging::Level, const std::string& line) override { said.push_back(line); }

 private:
  std::vector<std::string> argv_;
  bool stop_ = false;
};

struct Loop {
  TempDir dir;
  HistoryPlace place() const {
    HistoryPlace place = history_place("demo");
    place.directory = dir.path() / "state";
    place.runtime_directory = dir.path() / "state";
    place.owner = ::geteuid();
    return place;
  }
  History history{place()};
  FakeForegroundIo io{{"python3", "-m", "sglang.launch_server", "--mem-fraction-static", "0.88"}};
  ForegroundSettings settings{"demo", {}, EngineKind::sglang, 1, 0, {}};

  Loop() {
    settings.restart.delay = std::chrono::seconds(2);
    settings.restart.max_delay = std::chrono::seconds(8);
    settings.restart.budget = 3;
    io.restart = settings.restart;
  }
  ForegroundEnd run() { return run_foreground(settings, history, io); }
  std::vector<std::string> event_kinds() const {
    std::vector<std::string> kinds;
    const auto events = history.events(100);
    if (!events) return {events.error().message};
    for (const auto& event : *events) kinds.push_back(event.kind);
    return kinds;
  }
};

TEST(ForegroundLoop, ACrashIsRestartedInProcessAfterTheBackoffAndAStopDrainsToStopped) {
  Loop loop;
  loop.io.script = {crash(), Scripted{0,
                                      {},
                                      std::chrono::seconds(30),
                                      std::chrono::seconds(3),
                                      /*stop=*/true}};
  EXPECT_EQ(loop.run(), ForegroundEnd::stopped);
  ASSERT_EQ(loop.io.started.size(), 2u);
  // The first start waits for nothing; the second backs off restart.delay from the crash's end.
  EXPECT_EQ(loop.io.slept_before, (std::vector<std::chrono::milliseconds>{
                                      std::chrono::milliseconds(0), std::chrono::seconds(2)}));
  EXPECT_EQ(loop.event_kinds(), (std::vector<std::string>{"crash", "clean"}));
  EXPECT_EQ(loop.io.holds, 2);  // each stop recorded under the group's lock
  EXPECT_EQ(loop.io.recorded_classes, (std::vector<std::string>{"crash", "clean"}));
}

TEST(ForegroundLoop, ACudaOomFromTheCapturedLinesStepsTheNextStartDown) {
  Loop loop;
  loop.io.script = {cuda_oom(),
                    Scripted{0, {}, std::chrono::seconds(10), std::chrono::seconds(2), true}};
  EXPECT_EQ(loop.run(), ForegroundEnd::stopped);
  ASSERT_EQ(loop.io.started.size(), 2u);
  EXPECT_EQ(share_of(loop.io.started[0]), 0.88);
  // No journal: the class came from the lines `run` captured.
  EXPECT_EQ(loop.event_kinds().front(), "cuda-oom");
  EXPECT_GT(share_of(loop.io.started[1]), 0);
  EXPECT_LT(share_of(loop.io.started[1]), 0.88);
  EXPECT_EQ(loop.history.state()->gpu_level, 1);
}

TEST(ForegroundLoop, ASpentBudgetEndsTheLoopForARequeue) {
  Loop loop;
  loop.io.script = {crash(), crash(), crash()};
  EXPECT_EQ(loop.run(), ForegroundEnd::retry_elsewhere);
  EXPECT_EQ(loop.io.started.size(), 3u);  // restart.budget = 3 failed starts
  // The backoff doubled between them: 2 s, then 4 s.
  EXPECT_EQ(loop.io.slept_before[1], std::chrono::seconds(2));
  EXPECT_EQ(loop.io.slept_before[2], std::chrono::seconds(4));
  EXPECT_THAT(loop.io.said.back(), HasSubstr("staying down"));
}

TEST(ForegroundLoop, ADeathAfterServingPastProbationIsNotAFailedStart) {
  Loop loop;
  loop.settings.restart.probation = std::chrono::seconds(60);
  loop.io.restart = loop.settings.restart;
  Scripted served = crash();
  served.ready_after = std::chrono::seconds(5);
  served.runs_for = std::chrono::seconds(600);
  // Three deaths, each after serving ten minutes: never the budget's (issue 44's probation).
  loop.io.script = {served, served, served, Scripted{0, {}, std::chrono::seconds(1), {}, true}};
  EXPECT_EQ(loop.run(), ForegroundEnd::stopped);
  EXPECT_EQ(loop.io.started.size(), 4u);
}

TEST(ForegroundLoop, TheEnginesConfigurationErrorIsNeverRetried) {
  Loop loop;
  loop.io.script = {Scripted{kExitConfig,
                             {"usage: ...", "launch_server: error: unrecognized arguments: --bogus",
                              run_verdict_line("the engine rejected its command line", 78)},
                             std::chrono::seconds(1),
                             std::nullopt,
                             false}};
  EXPECT_EQ(loop.run(), ForegroundEnd::config_error);
  EXPECT_EQ(loop.io.started.size(), 1u);
  EXPECT_EQ(loop.event_kinds(), (std::vector<std::string>{"config-error"}));
}

TEST(ForegroundLoop, AStopDuringTheBackoffStartsNothing) {
  Loop loop;
  loop.io.script = {crash()};
  loop.io.stop_during_gate = 2;
  EXPECT_EQ(loop.run(), ForegroundEnd::stopped);
  EXPECT_EQ(loop.io.started.size(), 1u);
  EXPECT_EQ(loop.io.said.back(), "stopped on request before the engine started");
  EXPECT_EQ(loop.event_kinds(), (std::vector<std::string>{"crash"}));
}

TEST(ForegroundLoop, ARankOfAGroupRecordsAndEndsSoTheGroupRestartsSteppedDownAlike) {
  // Two ranks share one state directory (a shared filesystem): rank 1 runs out of GPU memory.
  Loop rank1;
  rank1.settings.ranks = 2;
  rank1.settings.rank = 1;
  rank1.io.script = {cuda_oom()};
  EXPECT_EQ(rank1.run(), ForegroundEnd::retry_elsewhere);
  EXPECT_EQ(rank1.io.started.size(), 1u);
  EXPECT_THAT(rank1.io.quiet.done, ::testing::Contains("tell group"));

  // The next step: rank 0 reads the same history, so it steps down as rank 1 does.
  FakeForegroundIo rank0_io{
      {"python3", "-m", "sglang.launch_server", "--mem-fraction-static", "0.88"}};
  rank0_io.restart = rank1.settings.restart;
  rank0_io.timekeeper = rank1.io.timekeeper;
  rank0_io.script = {Scripted{0, {}, std::chrono::seconds(1), std::chrono::seconds(1), true}};
  ForegroundSettings rank0 = rank1.settings;
  rank0.rank = 0;
  EXPECT_EQ(run_foreground(rank0, rank1.history, rank0_io), ForegroundEnd::stopped);
  ASSERT_EQ(rank0_io.started.size(), 1u);
  EXPECT_GT(share_of(rank0_io.started[0]), 0);
  EXPECT_LT(share_of(rank0_io.started[0]), 0.88);
  EXPECT_EQ(rank1.history.state()->gpu_level, 1);                // one level, read by every rank
  EXPECT_EQ(rank0_io.slept_before[0], std::chrono::seconds(2));  // the group's backoff
}

TEST(ForegroundLoop, TwoRanksOutOfMemoryInOneStepCountTheGroupsStopOnce) {
  // Both ranks of one step run out of GPU memory; they share one state directory. Rank 1 records
  // first: rank 0 finds the group's stop recorded and neither counts it again nor steps down twice.
  Loop rank0;
  rank0.settings.ranks = 2;
  rank0.io.script = {cuda_oom()};
  FakeForegroundIo rank1_io{
      {"python3", "-m", "sglang.launch_server", "--mem-fraction-static", "0.88"}};
  rank1_io.restart = rank0.settings.restart;
  rank1_io.script = {cuda_oom()};
  ForegroundSettings rank1 = rank0.settings;
  rank1.rank = 1;
  rank0.io.while_running = [&] {
    EXPECT_EQ(run_foreground(rank1, rank0.history, rank1_io), ForegroundEnd::retry_elsewhere);
  };
  EXPECT_EQ(rank0.run(), ForegroundEnd::retry_elsewhere);
  EXPECT_EQ(rank0.history.state()->consecutive_failures, 1);
  EXPECT_EQ(rank0.history.state()->gpu_level, 1);
  EXPECT_EQ(rank0.event_kinds(), (std::vector<std::string>{"cuda-oom"}));
  EXPECT_THAT(
      rank0.io.said,
      ::testing::Contains(::testing::HasSubstr(
          "rank 0: the group's stop is recorded already (cuda-oom: torch.OutOfMemoryError")));
  EXPECT_TRUE(rank0.io.recorded_classes.empty());
}

TEST(ForegroundLoop, ARankEndedByTheSchedulerAfterAnotherDiedStopsWithoutARecord) {
  // Rank 1's engine crashes and records; srun then ends rank 0 (SIGTERM: drained, 0).
  Loop rank0;
  rank0.settings.ranks = 2;
  rank0.io.script = {Scripted{0, {}, std::chrono::seconds(3), std::chrono::seconds(1), true}};
  FakeForegroundIo rank1_io{
      {"python3", "-m", "sglang.launch_server", "--mem-fraction-static", "0.88"}};
  rank1_io.restart = rank0.settings.restart;
  rank1_io.script = {crash()};
  ForegroundSettings rank1 = rank0.settings;
  rank1.rank = 1;
  rank0.io.while_running = [&] {
    EXPECT_EQ(run_foreground(rank1, rank0.history, rank1_io), ForegroundEnd::retry_elsewhere);
  };
  EXPECT_EQ(rank0.run(), ForegroundEnd::stopped);
  EXPECT_EQ(rank0.event_kinds(), (std::vector<std::string>{"crash"}));
  EXPECT_EQ(rank0.history.state()->consecutive_failures, 1);
}

TEST(ForegroundLoop, ARankAloneInItsHistoryRecordsItsOwnStop) {
  // Each node's own state directory (no shared filesystem): nothing recorded by another rank.
  Loop rank0;
  rank0.settings.ranks = 2;
  rank0.io.script = {cuda_oom()};
  EXPECT_EQ(rank0.run(), ForegroundEnd::retry_elsewhere);
  EXPECT_EQ(rank0.io.recorded_classes, (std::vector<std::string>{"cuda-oom"}));
  EXPECT_EQ(rank0.history.state()->gpu_level, 1);
}

TEST(ForegroundEnds, EachStopClassEndsAsASchedulerWouldRequeueIt) {
  RestartSettings restart;
  EXPECT_EQ(end_after_stop(ExitClass::clean, restart, 1), ForegroundEnd::stopped);
  EXPECT_EQ(end_after_stop(ExitClass::crash, restart, 1), std::nullopt);
  EXPECT_EQ(end_after_stop(ExitClass::cuda_oom, restart, 1), std::nullopt);
  EXPECT_EQ(end_after_stop(ExitClass::config_error, restart, 1), ForegroundEnd::config_error);
  EXPECT_EQ(end_after_stop(ExitClass::setup_failure, restart, 1), ForegroundEnd::stays_down);
  EXPECT_EQ(end_after_stop(ExitClass::crash, restart, 2), ForegroundEnd::retry_elsewhere);
  EXPECT_EQ(end_after_stop(ExitClass::config_error, restart, 2), ForegroundEnd::config_error);
  restart.policy = "no";
  EXPECT_EQ(end_after_stop(ExitClass::crash, restart, 1), ForegroundEnd::stays_down);
  restart.policy = "always";
  EXPECT_EQ(end_after_stop(ExitClass::clean, restart, 1), std::nullopt);
  EXPECT_EQ(end_after_stop(ExitClass::clean, restart, 2), ForegroundEnd::retry_elsewhere);
  EXPECT_EQ(end_after_refused_start(kExitCrashLoop), ForegroundEnd::retry_elsewhere);
  EXPECT_EQ(end_after_refused_start(kExitGpuResidue), ForegroundEnd::retry_elsewhere);
}

}  // namespace
}  // namespace gl
