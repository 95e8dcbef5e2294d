// SPDX-License-Identifier: Apache-2.0
// record-exit's sequence (decide, act, amend, record, notify) on a fake journal, clock, history
// directory and acts, in milliseconds: what is moved aside, what the group is told, what the
// recorded event says and what the next start reads. The supervise integration suite only proves
// the real wiring (ExecStopPost=, the journal, ssh).

#include "supervise/record_exit.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../temp_dir.hpp"
#include "fakes/systemd/fake_journal.hpp"
#include "fakes/systemd/fake_manager.hpp"
#include "fakes/util/fake_timekeeper.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/quarantine.hpp"

namespace gl {
namespace {

using ::testing::ElementsAre;
using testing::FakeJournal;
using testing::FakeManager;
using testing::FakeTimekeeper;
using ::testing::HasSubstr;
using testing::TempDir;

// The acts scripted; what was asked and said, in order.
struct ScriptedStopActions final : StopActions {
  Result<std::filesystem::path> moved = std::filesystem::path("/cache/torchinductor.quarantined");
  std::string group_answer = "rank 0 (gpu-a): restarting with the group";
  std::vector<std::string> done;

  Result<std::filesystem::path> quarantine(std::string_view cache, int64_t) override {
    done.push_back("quarantine " + std::string(cache));
    return moved;
  }
  std::string tell_group(const Classification& stop, int64_t) override {
    done.push_back("tell group " + std::string(exit_class_name(stop.value)));
    return group_answer;
  }
  void stable(std::string_view) override { done.push_back("stable"); }
  void classified(const Classification&, const SupervisorEvent& event) override {
    done.push_back("classified " + event.kind);
  }
  void keeps_dying(const Classification&, const SupervisorEvent& event) override {
    done.push_back("keeps dying " + event.kind);
  }
  void group_told(std::string_view action) override {
    done.push_back("group told: " + std::string(action));
  }
  void warning(std::string_view line) override { done.push_back("warning: " + std::string(line)); }
  void error(std::string_view line) override { done.push_back("error: " + std::string(line)); }
};

// vLLM #24915: a corrupt torch.compile cache crashes every start until it is deleted.
std::vector<std::string> crash_through_inductor_cache() {
  return {"Traceback (most recent call last):",
          "  File \"/var/cache/gpulaunch/demo/torchinductor/fxgraph/xy/cxy.py\", line 41, in "
          "<module>",
          "RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
          run_verdict_line("engine exited with status 1", 1)};
}

struct Stop {
  TempDir dir;
  FakeTimekeeper clock;
  FakeJournal journal;
  ScriptedStopActions actions;
  StopInput input;
  StopGroup group;

  HistoryPlace place() const {
    HistoryPlace place = history_place("demo");
    place.directory = dir.path() / "state";
    place.runtime_directory = dir.path() / "run";
    return place;
  }
  // The engine exited with `status` after writing `lines`.
  void exited(const std::string& status, const std::vector<std::string>& lines) {
    input.report.unit = "gpulaunch-demo.service";
    input.report.service_result = status == "0" ? "success" : "exit-code";
    input.report.exit_code = "exited";
    input.report.exit_status = status;
    input.invocation_id = "0123456789abcdef0123456789abcdef";
    input.kind = EngineKind::vllm;
    input.caches = {{"inductor", "/var/cache/gpulaunch/demo/torchinductor"}};
    journal.invocation_reads = {FakeJournal::lines(lines)};
  }
  StopDecision record(HistoryWriter writer = {}, SystemdManager* manager = nullptr) {
    const History history(place(), std::move(writer));
    return record_exit(input, group, history, manager, &journal, clock, actions);
  }
  std::vector<SupervisorEvent> events() const { return History(place()).events(10).value(); }
  SupervisorState state() const { return History(place()).state().value(); }
};

TEST(RecordExit, ACrashThroughACacheIsMovedAsideBeforeTheUncountedStopIsRecorded) {
  Stop stop;
  stop.exited("1", crash_through_inductor_cache());
  stop.record();
  EXPECT_THAT(
      stop.actions.done,
      ElementsAre("quarantine inductor", "classified " + std::string(kCacheQuarantinedEventKind)));
  ASSERT_EQ(stop.events().size(), 1U);
  EXPECT_EQ(stop.events().back().kind, kCacheQuarantinedEventKind);
  EXPECT_THAT(stop.events().back().action, HasSubstr("/cache/torchinductor.quarantined"));
  EXPECT_EQ(stop.state().consecutive_failures, 0);

  // Rebuilt, and it crashed through the cache again: read from the history, this one counts.
  stop.actions.done.clear();
  stop.record();
  EXPECT_THAT(stop.actions.done, ElementsAre("classified crash"));
  EXPECT_EQ(stop.state().consecutive_failures, 1);
}

TEST(RecordExit, AMoveThatFailsIsInTheEventAndTheCrashCounts) {
  Stop stop;
  stop.exited("1", crash_through_inductor_cache());
  stop.actions.moved = fail("Failed to stat 'x': Permission denied");
  stop.record();
  ASSERT_EQ(stop.events().size(), 1U);
  EXPECT_EQ(stop.events().back().kind, "crash");
  EXPECT_THAT(stop.events().back().action,
              HasSubstr("cache 'inductor' not moved aside: Failed to stat 'x': Permission denied"));
  EXPECT_EQ(stop.state().consecutive_failures, 1);
}

TEST(RecordExit, AnUnreadableHistoryMovesNothingAsideAndCountsTheCrash) {
  Stop stop;
  stop.exited("1", crash_through_inductor_cache());
  std::filesystem::create_directories(stop.place().directory);
  std::filesystem::create_symlink("/etc/shadow", stop.place().directory / "events.jsonl");
  const StopDecision decision = stop.record();
  EXPECT_THAT(stop.actions.done, ElementsAre("classified crash", ::testing::StartsWith("error: ")));
  EXPECT_THAT(decision.events.back().action,
              HasSubstr("counted, no cache moved aside: the event history could not be read"));
  EXPECT_EQ(stop.state().consecutive_failures, 1);
}

TEST(RecordExit, AFailedRankTellsItsGroupAndItsEventSaysWhatTheRanksAnswered) {
  Stop stop;
  stop.exited("1", {run_verdict_line("engine exited with status 1", 1)});
  stop.group = StopGroup{2, 1};
  stop.record();
  const std::string action =
      "restart after 10s; the group: rank 0 (gpu-a): restarting with the group";
  EXPECT_THAT(stop.actions.done,
              ElementsAre("classified crash", "tell group crash", "group told: " + action));
  EXPECT_EQ(stop.events().back().action, action);
}

TEST(RecordExit, AUnitWithoutARankSaysTheGroupWasNotTold) {
  Stop stop;
  stop.exited("1", {run_verdict_line("engine exited with status 1", 1)});
  stop.group = StopGroup{2, -1};
  stop.record();
  EXPECT_THAT(stop.events().back().action, HasSubstr("the other ranks were not told"));
  EXPECT_EQ(std::count(stop.actions.done.begin(), stop.actions.done.end(), "tell group crash"), 0);
}

TEST(RecordExit, ACleanStopIsNeverToldToTheGroup) {
  Stop stop;
  stop.exited("0", {});
  stop.group = StopGroup{2, 0};
  stop.record();
  EXPECT_THAT(stop.actions.done, ElementsAre("classified clean"));
  EXPECT_EQ(stop.events().back().action, "none (stopped cleanly)");
}

TEST(RecordExit, AStopThatCannotBeWrittenIsSaidAndLeavesTheUnrecordedMarker) {
  Stop stop;
  stop.exited("1", {run_verdict_line("engine exited with status 1", 1)});
  auto enospc = [](int, std::string_view, std::string_view, mode_t,
                   const std::string& shown) -> Result<void> {
    return failf("Failed to write '{}': No space left on device", shown);
  };
  stop.record(HistoryWriter{enospc, enospc});
  ASSERT_EQ(stop.actions.done.size(), 3U);  // the class, then the state's and the event's failure
  EXPECT_THAT(stop.actions.done[1], HasSubstr("No space left on device"));
  auto marker = History(stop.place()).unrecorded();
  ASSERT_TRUE(marker);
  EXPECT_TRUE(*marker);
}

// Issue 44: an engine that served 7 minutes before each death (past restart.probation, short of
// restart.stable_after) is restarted every time; once
// the failures in a row reach restart.budget each death also says, loudly, that it keeps dying.
TEST(RecordExit, AnEngineThatKeepsDyingAfterServingIsRestartedAndSaysSo) {
  Stop stop;
  FakeManager manager(&stop.clock);
  UnitStatus& unit = manager.add_unit("gpulaunch-demo.service", "deactivating");
  for (int death = 1; death <= 6; ++death) {
    const int64_t now = stop.clock.now_usec();
    unit.main_start_usec = static_cast<uint64_t>(now - 480'000'000LL);
    unit.active_enter_usec = static_cast<uint64_t>(now - 421'000'000LL);
    unit.active_exit_usec = static_cast<uint64_t>(now - 1'000'000LL);  // served 7 min
    stop.actions.done.clear();
    stop.exited("1", {run_verdict_line("engine exited with status 1", 1)});
    const StopDecision decision = stop.record({}, &manager);
    EXPECT_THAT(decision.events.back().action, HasSubstr("after serving 7min"));
    EXPECT_EQ(stop.state().consecutive_failures, death);
    EXPECT_EQ(stop.state().deaths_after_serving, death);
    if (death < 5)
      EXPECT_THAT(stop.actions.done, ElementsAre("classified crash"));
    else
      EXPECT_THAT(stop.actions.done, ElementsAre("classified crash", "keeps dying crash"));
    EXPECT_FALSE(decision.events.back().action.starts_with("stay down"));
    stop.clock.advance(std::chrono::seconds(1000));
  }
}

}  // namespace
}  // namespace gl
