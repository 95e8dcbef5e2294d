// SPDX-License-Identifier: Apache-2.0
// What `record-exit` decides about a stopped invocation, on a fake journal, manager and clock: the
// class and evidence of the event `gpulaunch events` shows, the action, what the next start sees.

#include "supervise/record_stop.hpp"

#include <gtest/gtest.h>

#include "../temp_dir.hpp"
#include "fakes/systemd/fake_journal.hpp"
#include "fakes/systemd/fake_manager.hpp"
#include "fakes/systemd/fake_notifier.hpp"
#include "fakes/util/fake_timekeeper.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/stall_report.hpp"
#include "supervise/start_gate.hpp"

namespace gl {
namespace {

using testing::FakeJournal;
using testing::FakeManager;
using testing::FakeNotifier;
using testing::FakeTimekeeper;
using testing::TempDir;

constexpr const char* kUnit = "gpulaunch-demo.service";

HistoryPlace place_in(const TempDir& dir) {
  HistoryPlace place = history_place("demo");
  place.directory = dir.path() / "state";
  place.runtime_directory = dir.path() / "run";
  return place;
}

// What systemd hands ExecStopPost= for a process that exited with `status`, or was killed.
StopInput exited(const std::string& status) {
  StopInput input;
  input.report.unit = kUnit;
  input.report.service_result = status == "0" ? "success" : "exit-code";
  input.report.exit_code = "exited";
  input.report.exit_status = status;
  input.invocation_id = "0123456789abcdef0123456789abcdef";
  input.kind = EngineKind::sglang;
  return input;
}

StopInput killed() {
  StopInput input = exited("9");
  input.report.service_result = "signal";
  input.report.exit_code = "killed";
  input.report.exit_status = "KILL";
  return input;
}

TEST(RecordStop, TheJournalIsReadAgainUntilRunsLastLineArrives) {
  FakeTimekeeper clock;
  FakeJournal journal;
  journal.invocation_reads = {
      {},
      FakeJournal::lines({"engine: loading weights"}),
      FakeJournal::lines({"engine: loading weights", "Traceback (most recent call last):",
                          run_verdict_line("engine exited with status 1", 1)}),
      FakeJournal::lines({"never read"})};
  const StopDecision decision = decide_stop({}, exited("1"), nullptr, &journal, clock);
  EXPECT_EQ(decision.stop.value, ExitClass::crash);
  EXPECT_EQ(journal.invocation_calls, 3);
  EXPECT_EQ(clock.slept(), std::chrono::milliseconds(400));
  ASSERT_EQ(decision.events.size(), 1u);
  EXPECT_EQ(decision.events.back().kind, "crash");
  EXPECT_EQ(decision.events.back().evidence,
            "SERVICE_RESULT=exit-code EXIT_CODE=exited EXIT_STATUS=1");
  EXPECT_EQ(decision.events.back().action, "restart after 10s");
  EXPECT_EQ(decision.state.consecutive_failures, 1);
}

TEST(RecordStop, AnOomMessageThatArrivesLateStillClassifiesTheStop) {
  FakeTimekeeper clock;
  FakeJournal journal;
  const std::string oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";
  journal.invocation_reads = {FakeJournal::lines({"engine: serving"}),
                              FakeJournal::lines({"engine: serving", oom})};
  const StopDecision decision = decide_stop({}, exited("1"), nullptr, &journal, clock);
  EXPECT_EQ(decision.stop.value, ExitClass::cuda_oom);
  EXPECT_EQ(journal.invocation_calls, 2);
  EXPECT_EQ(decision.events.back().kind, "cuda-oom");
  EXPECT_EQ(decision.events.back().evidence, oom);
  EXPECT_EQ(decision.events.back().action, "restart after 10s; step down to GPU memory level 1");
  EXPECT_EQ(decision.state.gpu_level, 1);
}

TEST(RecordStop, AnUnexplainedStopIsACrashAfterASecondOfReading) {
  FakeTimekeeper clock;
  FakeJournal journal;
  const StopDecision decision = decide_stop({}, killed(), nullptr, &journal, clock);
  EXPECT_EQ(decision.stop.value, ExitClass::crash);
  EXPECT_EQ(journal.invocation_calls, 6);
  EXPECT_EQ(clock.slept(), std::chrono::milliseconds(1000));

  // Without a journal it decides from what systemd said, at once.
  FakeTimekeeper alone;
  EXPECT_EQ(decide_stop({}, killed(), nullptr, nullptr, alone).stop.value, ExitClass::crash);
  EXPECT_EQ(alone.slept().count(), 0);
}

TEST(RecordStop, AnOomKilledInvocationClassifiesAsHostOomByTheCgroupCounter) {
  FakeTimekeeper clock;
  FakeJournal journal;
  SupervisorState before;
  before.cgroup_oom_kills = 2;
  StopInput input = killed();
  input.cgroup_oom_kills = 3;
  const StopDecision decision = decide_stop(before, input, nullptr, &journal, clock);
  EXPECT_EQ(decision.stop.value, ExitClass::host_oom);
  EXPECT_EQ(decision.events.back().kind, "host-oom");
  EXPECT_EQ(decision.events.back().evidence, "memory cgroup oom_kill counter 2 -> 3");
  EXPECT_EQ(decision.state.cgroup_oom_kills, 3);
  EXPECT_EQ(decision.state.host_level, 1);
  EXPECT_EQ(journal.invocation_calls, 1);  // the counter decided it: no second read

  // The same SIGKILL with the counter where it was is no OOM.
  StopInput same = killed();
  same.cgroup_oom_kills = 2;
  FakeJournal quiet;
  EXPECT_EQ(decide_stop(before, same, nullptr, &quiet, clock).stop.value, ExitClass::crash);

  // A counter below the recorded one is a new cgroup (a reboot): its kill is new.
  StopInput rebooted = killed();
  rebooted.cgroup_oom_kills = 1;
  const StopDecision fresh = decide_stop(before, rebooted, nullptr, &quiet, clock);
  EXPECT_EQ(fresh.stop.value, ExitClass::host_oom);
  EXPECT_EQ(fresh.events.back().evidence, "memory cgroup oom_kill counter 0 -> 1");
}

TEST(RecordStop, TheKernelsOomKillLineForTheUnitClassifiesAsHostOom) {
  FakeTimekeeper clock;
  FakeJournal journal;
  journal.invocation_reads = {FakeJournal::lines({"engine: serving"}, 1'000)};
  const std::string kernel =
      "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
      "oom_memcg=/system.slice/gpulaunch-demo.service,task_memcg=/system.slice/"
      "gpulaunch-demo.service,task=python3,pid=4242,uid=999";
  journal.kernel = {JournalEntry{2'000, "kernel", 0, kernel},
                    JournalEntry{500, "kernel", 0, "oom-kill: an older one"}};
  const StopDecision decision = decide_stop({}, killed(), nullptr, &journal, clock);
  EXPECT_EQ(decision.stop.value, ExitClass::host_oom);
  EXPECT_EQ(decision.events.back().evidence, kernel);
}

TEST(RecordStop, AnInvocationThatServedStableAfterIsForgivenBeforeItsStopCounts) {
  FakeTimekeeper clock;
  FakeManager manager(&clock);
  UnitStatus& unit = manager.add_unit(kUnit, "deactivating");
  const int64_t now = clock.now_usec();
  unit.main_start_usec = static_cast<uint64_t>(now - 3'700'000'000LL);
  unit.active_enter_usec = static_cast<uint64_t>(now - 3'600'000'000LL);  // served an hour
  unit.active_exit_usec = static_cast<uint64_t>(now - 1'000'000LL);
  SupervisorState before;
  before.consecutive_failures = 3;
  before.gpu_level = 2;
  before.last_class = "cuda-oom";
  before.last_failure_usec = now - 4'000'000'000LL;
  FakeJournal journal;
  journal.invocation_reads = {
      FakeJournal::lines({run_verdict_line("engine exited with status 1", 1)})};
  const StopDecision decision = decide_stop(before, exited("1"), &manager, &journal, clock);
  ASSERT_EQ(decision.events.size(), 2u);
  EXPECT_EQ(decision.events[0].kind, "stable");
  EXPECT_EQ(decision.events[0].evidence, "served 59min 59s (restart.stable_after 10min)");
  EXPECT_EQ(decision.events[0].action, "forgive 3 failure(s); step up to GPU memory level 1");
  ASSERT_TRUE(decision.stable_action);
  EXPECT_EQ(decision.events[1].kind, "crash");
  // The first failure again, after serving: not counted toward the crash-loop budget.
  EXPECT_EQ(decision.events[1].action,
            "restart after 10s (after serving 59min 59s: not counted toward the crash-loop "
            "budget; 1 failure(s) in a row)");
  EXPECT_EQ(decision.state.consecutive_failures, 1);
  EXPECT_EQ(failed_starts(decision.state), 0);
  EXPECT_EQ(decision.state.gpu_level, 1);
  // The stable period forgives failures; the per-class stop count (the metrics' counter) stays.
  EXPECT_EQ(decision.state.stops_by_class.at(ExitClass::crash), 1);
}

// The next start's delay counts from the engine's end (`run` exits right after it), not from
// this decision: the journal read again for `run`'s last line (200 ms here) and what systemd and
// the next start do before its gate (700 ms here) are part of restart.delay, not added to it.
TEST(RecordStop, TheDelayCountsFromRunsExitNotFromTheDecision) {
  TempDir dir;
  const History history(place_in(dir));
  FakeTimekeeper clock;
  FakeManager manager(&clock);
  UnitStatus& unit = manager.add_unit(kUnit, "deactivating");
  const int64_t exited_at = clock.now_usec() - 30'000;
  unit.main_start_usec = static_cast<uint64_t>(exited_at - 60'000'000LL);
  unit.main_exit_usec = static_cast<uint64_t>(exited_at);
  FakeJournal journal;
  journal.invocation_reads = {
      FakeJournal::lines({"Segmentation fault"}),
      FakeJournal::lines({"Segmentation fault", run_verdict_line("engine exited", 139)})};
  RestartSettings restart;
  restart.delay = Seconds{1};
  restart.max_delay = Seconds{1};
  StopInput input = exited("139");
  input.restart = restart;
  const StopDecision decision = decide_stop({}, input, &manager, &journal, clock);
  EXPECT_EQ(clock.slept(), std::chrono::milliseconds(200));
  EXPECT_EQ(decision.events.back().time_usec, clock.now_usec());  // the decision's own time
  EXPECT_EQ(decision.events.back().action, "restart after 1s");
  EXPECT_EQ(decision.state.last_failure_usec, exited_at);
  StopRecord record(history);
  record.save(decision.state);
  EXPECT_TRUE(record.finish(decision.events).empty());

  clock.advance(std::chrono::milliseconds(700) - std::chrono::milliseconds(200) -
                std::chrono::milliseconds(30));  // 700 ms after the exit
  FakeNotifier notifier;
  StartGateIo io{notifier, clock,
                 GpuHolders{[] { return Result<std::vector<GpuProcessUse>>{}; },
                            [](unsigned) { return std::string("?"); },
                            1,
                            {}},
                 [](const std::string&) {}};
  const StartGate gate =
      gate_start(StartGateInput{"demo", restart, EngineKind::sglang, 1200, {"x"}}, history, io);
  EXPECT_FALSE(gate.exit_code);
  EXPECT_EQ(clock.slept(), std::chrono::milliseconds(200 + 300));  // the 300 ms the delay had left

  // Without systemd's word (no manager, or an exit before this run's start) the decision's time.
  FakeTimekeeper alone;
  unit.main_exit_usec = static_cast<uint64_t>(exited_at - 120'000'000LL);
  EXPECT_EQ(decide_stop({}, input, &manager, nullptr, alone).state.last_failure_usec,
            alone.now_usec());
  EXPECT_EQ(decide_stop({}, input, nullptr, nullptr, alone).state.last_failure_usec,
            alone.now_usec());
}

TEST(RecordStop, EveryStopCountsByItsClassAndTheCountSurvivesTheHistoryFile) {
  TempDir dir;
  const History history(place_in(dir));
  FakeTimekeeper clock;
  SupervisorState state;
  state.stops_by_class[ExitClass::crash] = 2;
  state.stops_by_class[ExitClass::cuda_oom] = 1;
  const StopDecision decision = decide_stop(state, killed(), nullptr, nullptr, clock);
  EXPECT_EQ(decision.state.stops_by_class.at(ExitClass::crash), 3);
  EXPECT_EQ(decision.state.stops_by_class.at(ExitClass::cuda_oom), 1);
  StopRecord record(history);
  record.save(decision.state);
  EXPECT_TRUE(record.finish(decision.events).empty());
  auto read = history.state();
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->stops_by_class, decision.state.stops_by_class);
}

TEST(RecordStop, WhatIsRecordedIsWhatTheNextStartDecidesFrom) {
  TempDir dir;
  const History history(place_in(dir));
  FakeTimekeeper clock;
  SupervisorState state;
  state.consecutive_failures = 4;
  state.last_class = "crash";
  const StopDecision decision = decide_stop(state, killed(), nullptr, nullptr, clock);
  EXPECT_EQ(decision.events.back().action, "stay down: crash-loop budget of 5 failures spent");
  StopRecord record(history);
  record.save(decision.state);
  EXPECT_TRUE(record.finish(decision.events).empty());
  auto events = history.events(10);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->front().kind, "crash");

  FakeNotifier notifier;
  StartGateIo io{notifier, clock,
                 GpuHolders{[] { return Result<std::vector<GpuProcessUse>>{}; },
                            [](unsigned) { return std::string("?"); },
                            1,
                            {}},
                 [](const std::string&) {}};
  const StartGate gate = gate_start(
      StartGateInput{"demo", RestartSettings{}, EngineKind::sglang, 1200, {"x"}}, history, io);
  ASSERT_TRUE(gate.exit_code);
  EXPECT_EQ(*gate.exit_code, kExitCrashLoop);
}

// run's stall line arrives a read late; the event keeps what it saw and the line's cursor, where
// the thread dump starts, and a stall counts toward the budget and the backoff as a crash does.
TEST(RecordStop, AStallIsRecordedWithItsEvidenceAndTheCursorOfTheThreadDump) {
  TempDir dir;
  const History history(place_in(dir));
  FakeTimekeeper clock;
  FakeJournal journal;
  const std::string stall = stall_line({StallSignal::generate, Seconds{4}, 1, 250});
  const std::vector<std::string> full = {"The server is fired up and ready to roll!", stall,
                                         "Fatal Python error: Aborted",
                                         "Thread 0x00007f3a1bfff640 (most recent call first):",
                                         run_verdict_line("engine stalled", kExitStalled)};
  journal.invocation_reads = {FakeJournal::lines({full[0]}), FakeJournal::lines(full)};
  const StopDecision decision =
      decide_stop({}, exited(std::to_string(kExitStalled)), nullptr, &journal, clock);
  EXPECT_EQ(journal.invocation_calls, 2);
  EXPECT_EQ(decision.stop.value, ExitClass::stalled);
  ASSERT_TRUE(decision.stop.stall);
  EXPECT_EQ(decision.stop.stall->in_flight, 1);
  const SupervisorEvent& event = decision.events.back();
  EXPECT_EQ(event.kind, "stalled");
  EXPECT_EQ(event.evidence, stall);
  EXPECT_EQ(event.journal_cursor, FakeJournal::cursor_of(1));
  EXPECT_EQ(event.action, "restart after 10s");
  EXPECT_EQ(decision.state.consecutive_failures, 1);
  EXPECT_EQ(decision.state.last_class, "stalled");
  EXPECT_EQ(describe_stall(*decision.stop.stall),
            "no forward progress for 4s (generation probe unanswered, 1 request(s) in flight, "
            "generation token counter at 250)");
  EXPECT_EQ(thread_dump_command(kUnit, event.journal_cursor),
            "journalctl -u gpulaunch-demo.service --cursor='" + FakeJournal::cursor_of(1) + "'");

  // What `events` reads back is what was decided, cursor included.
  StopRecord record(history);
  record.save(decision.state);
  EXPECT_TRUE(record.finish(decision.events).empty());
  auto events = history.events(10);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->back().kind, "stalled");
  EXPECT_EQ(events->back().journal_cursor, FakeJournal::cursor_of(1));
  EXPECT_EQ(parse_stall_line(events->back().evidence)->tokens, 250);
}

// Stalls in a row back off and spend the crash-loop budget like crashes: a wedge that comes back
// at every start does not restart forever.
TEST(RecordStop, StallsInARowBackOffAndSpendTheBudget) {
  FakeTimekeeper clock;
  FakeJournal journal;
  journal.invocation_reads = {
      FakeJournal::lines({stall_line({StallSignal::metrics, Seconds{4}, 3, 99}),
                          run_verdict_line("engine stalled", kExitStalled)})};
  SupervisorState state;
  std::vector<std::string> actions;
  for (int stop = 0; stop < 5; ++stop) {
    const StopDecision decision =
        decide_stop(state, exited(std::to_string(kExitStalled)), nullptr, &journal, clock);
    EXPECT_EQ(decision.stop.value, ExitClass::stalled);
    state = decision.state;
    actions.push_back(decision.events.back().action);
  }
  EXPECT_EQ(actions,
            (std::vector<std::string>{"restart after 10s", "restart after 20s", "restart after 40s",
                                      "restart after 1min 20s",
                                      "stay down: crash-loop budget of 5 failures spent"}));
  EXPECT_EQ(state.consecutive_failures, 5);
  EXPECT_EQ(state.gpu_level, 0);  // no step-down: a wedge is not a shortage of memory
  EXPECT_EQ(state.host_level, 0);
}

// A full disk: nothing can be written, so the marker (a tmpfs) keeps the next start down even
// though the history on disk still shows no failure.
TEST(RecordStop, AStopThatCannotBeRecordedKeepsTheNextStartDown) {
  TempDir dir;
  auto enospc = [](int, std::string_view, std::string_view, mode_t,
                   const std::string& shown) -> Result<void> {
    return failf("Failed to write '{}': No space left on device", shown);
  };
  const History full(place_in(dir), HistoryWriter{enospc, enospc});
  FakeTimekeeper clock;
  const StopDecision decision = decide_stop({}, exited("1"), nullptr, nullptr, clock);
  StopRecord record(full);
  record.save(decision.state);
  const auto lines = record.finish(decision.events);
  ASSERT_EQ(lines.size(), 2u);  // the state and the event
  EXPECT_NE(lines.front().find("No space left on device"), std::string::npos) << lines.front();

  FakeNotifier notifier;
  StartGateIo io{notifier, clock,
                 GpuHolders{[] { return Result<std::vector<GpuProcessUse>>{}; },
                            [](unsigned) { return std::string("?"); },
                            1,
                            {}},
                 [](const std::string&) {}};
  const History reader(place_in(dir));
  const StartGate gate = gate_start(
      StartGateInput{"demo", RestartSettings{}, EngineKind::sglang, 1200, {"x"}}, reader, io);
  ASSERT_TRUE(gate.exit_code);
  EXPECT_EQ(*gate.exit_code, kExitCrashLoop);
  EXPECT_NE(notifier.last("STATUS=").find("history unrecorded"), std::string::npos);
}

// vLLM #24915: a corrupt torch.compile cache crashes every start until it is deleted.
std::vector<std::string> crash_through_inductor_cache() {
  return {"Traceback (most recent call last):",
          "  File \"/venv/lib/python3.12/site-packages/torch/_inductor/codecache.py\", line "
          "1215, in _load_graph",
          "  File \"/var/cache/gpulaunch/demo/torchinductor/fxgraph/xy/cxy.py\", line 41, in "
          "<module>",
          "RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
          run_verdict_line("engine exited with status 1", 1)};
}

StopInput crash_with_caches() {
  StopInput input = exited("1");
  input.caches = {{"inductor", "/var/cache/gpulaunch/demo/torchinductor"},
                  {"vllm", "/var/cache/gpulaunch/demo/vllm"}};
  return input;
}

TEST(RecordStop, ACrashThroughACacheIsQuarantinedAndNotCounted) {
  FakeTimekeeper clock;
  FakeJournal journal;
  journal.invocation_reads = {FakeJournal::lines(crash_through_inductor_cache())};
  StopDecision decision = decide_stop({}, crash_with_caches(), nullptr, &journal, clock);
  ASSERT_TRUE(decision.quarantine);
  EXPECT_EQ(decision.quarantine->cache.name, "inductor");
  EXPECT_EQ(decision.state.consecutive_failures, 1);  // counted until the move is done
  apply_quarantine(decision, "/var/cache/gpulaunch/demo/torchinductor.quarantined-x",
                   RestartSettings{});
  EXPECT_EQ(decision.state.consecutive_failures, 0);
  ASSERT_EQ(decision.events.size(), 1u);
  const SupervisorEvent& event = decision.events.back();
  EXPECT_EQ(event.kind, kCacheQuarantinedEventKind);
  EXPECT_NE(event.evidence.find("torchinductor/fxgraph/xy/cxy.py\", line 41, in <module>"),
            std::string::npos)
      << event.evidence;
  EXPECT_EQ(event.action,
            "moved /var/cache/gpulaunch/demo/torchinductor to "
            "/var/cache/gpulaunch/demo/torchinductor.quarantined-x (kept for inspection); "
            "restart at once, not counted toward the crash-loop budget (the next stop counts)");

  // It was rebuilt and crashed through it again: this stop counts, with its backoff.
  FakeJournal again;
  again.invocation_reads = {FakeJournal::lines(crash_through_inductor_cache())};
  StopInput next = crash_with_caches();
  next.previous_stop = event;
  const StopDecision second = decide_stop(decision.state, next, nullptr, &again, clock);
  EXPECT_FALSE(second.quarantine);
  EXPECT_EQ(second.events.back().kind, "crash");
  EXPECT_EQ(second.state.consecutive_failures, 1);
}

// Issue 28: past events.jsonl's read bound record-exit read no previous stop, so every crash
// through a cache was quarantined and none counted (35 restarts with budget 2). An unreadable
// history now counts each one: the budget holds.
TEST(RecordStop, AnUnreadableHistoryCountsEveryCrashSoTheBudgetHolds) {
  FakeTimekeeper clock;
  RestartSettings restart;
  restart.budget = 2;
  SupervisorState state;
  int starts = 1;
  for (int stop = 0; stop < 35; ++stop) {
    FakeJournal journal;
    journal.invocation_reads = {FakeJournal::lines(crash_through_inductor_cache())};
    StopInput input = crash_with_caches();
    input.restart = restart;
    input.events_unreadable =
        "'/var/lib/gpulaunch/demo/events.jsonl' is larger than 16777216 bytes";
    const StopDecision decision = decide_stop(state, input, nullptr, &journal, clock);
    EXPECT_FALSE(decision.quarantine);
    EXPECT_EQ(decision.events.back().kind, "crash");
    EXPECT_NE(decision.events.back().action.find(
                  "counted, no cache moved aside: the event history could not be read"),
              std::string::npos)
        << decision.events.back().action;
    state = decision.state;
    if (decide_start(state, restart).stay_down) break;
    ++starts;
  }
  EXPECT_EQ(starts, 2);
  EXPECT_EQ(state.consecutive_failures, 2);
}

TEST(RecordStop, AMoveThatFailsCountsTheCrashAsUsual) {
  FakeTimekeeper clock;
  FakeJournal journal;
  journal.invocation_reads = {FakeJournal::lines(crash_through_inductor_cache())};
  StopDecision decision = decide_stop({}, crash_with_caches(), nullptr, &journal, clock);
  note_quarantine_failed(decision, "Failed to stat 'x': Permission denied");
  EXPECT_FALSE(decision.quarantine);
  EXPECT_EQ(decision.state.consecutive_failures, 1);
  EXPECT_EQ(decision.events.back().kind, "crash");
  EXPECT_EQ(decision.events.back().action,
            "restart after 10s; cache 'inductor' not moved aside: Failed to stat 'x': "
            "Permission denied");
}

TEST(RecordStop, OnlyACrashQuarantines) {
  // A CUDA OOM raised inside a kernel the cache holds is the memory's fault, not the cache's.
  FakeTimekeeper clock;
  FakeJournal journal;
  auto lines = crash_through_inductor_cache();
  lines[3] =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 79.19 GiB of which 1.12 GiB is free.";
  journal.invocation_reads = {FakeJournal::lines(lines)};
  StopInput input = crash_with_caches();
  input.kind = EngineKind::vllm;
  const StopDecision decision = decide_stop({}, input, nullptr, &journal, clock);
  EXPECT_EQ(decision.stop.value, ExitClass::cuda_oom);
  EXPECT_FALSE(decision.quarantine);
}

}  // namespace
}  // namespace gl
