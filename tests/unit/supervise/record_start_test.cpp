// SPDX-License-Identifier: Apache-2.0
#include "supervise/record_start.hpp"

#include <gtest/gtest.h>

#include "../../fakes/systemd/fake_journal.hpp"
#include "../../fakes/util/fake_timekeeper.hpp"
#include "supervise/start_phases.hpp"

namespace gl {
namespace {

using testing::FakeJournal;
using testing::FakeTimekeeper;

constexpr uint64_t kT0 = 1'800'000'000'000'000;
constexpr uint64_t kS = 1'000'000;

JournalEntry at(uint64_t seconds, const std::string& message) {
  return JournalEntry{kT0 + seconds * kS, "gpulaunch", 1, message, ""};
}

std::vector<JournalEntry> until_health() {
  return {at(0, phase_line({PhaseMark::Kind::begins, Phase::process})),
          at(2, "[2026-12-01 10:00:02 TP0] Load weight begin. avail mem=138.69 GB"),
          at(2, phase_line({PhaseMark::Kind::begins, Phase::weights})),
          at(40, phase_line({PhaseMark::Kind::begins, Phase::health}))};
}

// journald hands over run's last lines a moment after systemd saw READY=1.
TEST(RecordStart, ReadsTheJournalAgainUntilTheReadyLineIsIn) {
  FakeJournal journal;
  auto complete = until_health();
  complete.push_back(at(41, phase_line({PhaseMark::Kind::ready, Phase::health})));
  journal.invocation_reads = {until_health(), until_health(), complete};
  FakeTimekeeper clock;
  const StartTimeline timeline = read_start_timeline("abc", &journal, clock);
  EXPECT_EQ(journal.invocation_calls, 3);
  EXPECT_EQ(timeline.ready_usec, static_cast<int64_t>(kT0 + 41 * kS));
  ASSERT_EQ(timeline.phases.size(), 3u);
  EXPECT_EQ(timeline.phases[1].phase, Phase::weights);
}

TEST(RecordStart, GivesUpWithinTwoSecondsAndRecordsWhatItHas) {
  FakeJournal journal;
  journal.invocation_reads = {until_health()};
  FakeTimekeeper clock;
  const StartTimeline timeline = read_start_timeline("abc", &journal, clock);
  EXPECT_LE(clock.slept(), std::chrono::seconds(2));
  EXPECT_EQ(timeline.ready_usec, 0);
  auto decision = decide_start(SupervisorState{}, timeline, clock.now_usec());
  ASSERT_TRUE(decision);
  EXPECT_EQ(decision->event.time_usec, clock.now_usec());
  EXPECT_NE(decision->event.action.find("ready line was not in the journal yet"),
            std::string::npos);
}

TEST(RecordStart, TheStartedEventAndTheStateCarryTheTimeline) {
  FakeJournal journal;
  auto lines = until_health();
  lines.push_back(at(43, phase_line({PhaseMark::Kind::ready, Phase::health})));
  journal.invocation_reads = {lines};
  FakeTimekeeper clock;
  SupervisorState before;
  before.consecutive_failures = 2;
  before.gpu_level = 1;
  auto decision =
      decide_start(before, read_start_timeline("abc", &journal, clock), clock.now_usec());
  ASSERT_TRUE(decision);
  EXPECT_EQ(decision->state.consecutive_failures, 2);  // a start forgives nothing by itself
  ASSERT_TRUE(decision->state.last_start);
  EXPECT_EQ(decision->event.kind, kStartedEventKind);
  EXPECT_EQ(decision->event.time_usec, static_cast<int64_t>(kT0 + 43 * kS));
  EXPECT_EQ(decision->event.evidence, "ready in 43s: process 2s, weights 38s, health 3s");
  EXPECT_EQ(decision->event.gpu_level, 1);
  ASSERT_TRUE(decision->event.start);
  EXPECT_EQ(decision->event.start->phases.size(), 3u);
}

TEST(RecordStart, NothingToRecordWithoutAJournalOrPhaseLines) {
  FakeTimekeeper clock;
  EXPECT_EQ(read_start_timeline("abc", nullptr, clock).process_start_usec, 0);
  FakeJournal journal;
  journal.invocation_reads = {{at(0, "gpulaunch: started engine, pid 42")}};
  EXPECT_FALSE(decide_start(SupervisorState{}, read_start_timeline("abc", &journal, clock),
                            clock.now_usec()));
  FakeJournal unused;
  EXPECT_EQ(read_start_timeline("", &unused, clock).process_start_usec, 0);
  EXPECT_EQ(unused.invocation_calls, 0);
}

}  // namespace
}  // namespace gl
