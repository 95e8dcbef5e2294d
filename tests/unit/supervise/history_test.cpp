// SPDX-License-Identifier: Apache-2.0
#include "supervise/history.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "../temp_dir.hpp"
#include "supervise/policy.hpp"
#include "supervise/start_phases.hpp"

using gl::testing::TempDir;

namespace gl {
namespace {

namespace fs = std::filesystem;

HistoryPlace place_in(const TempDir& dir) {
  HistoryPlace place = history_place("p");
  place.directory = dir.path() / "state";
  place.runtime_directory = dir.path() / "run";
  return place;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(History, LivesWhereStatePathsSay) {
  const auto place = history_place("k26-ar");
  EXPECT_EQ(place.directory, "/var/lib/gpulaunch/k26-ar");
  EXPECT_EQ(place.directory / place.events_name, "/var/lib/gpulaunch/k26-ar/events.jsonl");
  EXPECT_EQ(place.directory / place.supervisor_name, "/var/lib/gpulaunch/k26-ar/supervisor.json");
  EXPECT_EQ(place.runtime_directory / place.marker_name,
            "/run/gpulaunch/k26-ar/history-unrecorded");
}

TEST(History, StateRoundTripsAndEventsAppendInOrder) {
  TempDir dir;
  const History history(place_in(dir));
  auto fresh = history.state();
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->consecutive_failures, 0);
  SupervisorState state;
  state.consecutive_failures = 2;
  state.failures_at_last_serve = 1;
  state.deaths_after_serving = 1;
  state.gpu_level = 1;
  state.last_class = "cuda-oom";
  ASSERT_TRUE(history.save(state));
  auto loaded = history.state();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->consecutive_failures, 2);
  EXPECT_EQ(loaded->failures_at_last_serve, 1);
  EXPECT_EQ(loaded->deaths_after_serving, 1);
  EXPECT_EQ(loaded->gpu_level, 1);
  EXPECT_EQ(loaded->last_class, "cuda-oom");
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(
        history.append(SupervisorEvent{i, "crash", "line " + std::to_string(i), "restart", 0, 0}));
  auto events = history.events(2);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ(events->at(0).evidence, "line 1");
  EXPECT_EQ(events->at(1).time_usec, 2);
  // Root's directory: root-owned, 0755.
  struct stat info {};
  ASSERT_EQ(::stat((dir.path() / "state").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0755u);
}

TEST(History, WrongTypedStateIsAnErrorToReadersAndReplacedByRoot) {
  TempDir dir;
  const History history(place_in(dir));
  dir.write("state/supervisor.json", R"({"consecutive_failures": "x", "gpu_level": 1})");
  auto read = history.state();
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("'consecutive_failures' is not an integer"),
            std::string::npos)
      << read.error().message;
  auto current = history.state_to_update();
  EXPECT_NE(current.problem.find("replacing it with a fresh history"), std::string::npos)
      << current.problem;
  EXPECT_EQ(current.state.consecutive_failures, 0);
  ASSERT_TRUE(history.save(current.state));
  ASSERT_TRUE(history.state());
}

TEST(History, StrictParsingRefusesNegativeNestedAndNonObjectStates) {
  EXPECT_FALSE(parse_supervisor_state(R"({"gpu_level": -1})"));
  EXPECT_FALSE(parse_supervisor_state(R"({"host_level": 1.5})"));
  EXPECT_FALSE(parse_supervisor_state(R"({"last_class": 3})"));
  EXPECT_FALSE(parse_supervisor_state(R"({"gpu_level": [[1]]})"));
  EXPECT_FALSE(parse_supervisor_state(std::string(100000, '[')));
  EXPECT_FALSE(parse_supervisor_state("[]"));
  EXPECT_FALSE(parse_supervisor_state("garbage"));
  EXPECT_FALSE(parse_supervisor_state(R"({"consecutive_failures": 18446744073709551615})"));
  auto ok = parse_supervisor_state(R"({"consecutive_failures": 3, "unknown": "x"})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->consecutive_failures, 3);
}

TEST(History, StopsByClassAreFlatFieldsParsedStrictly) {
  SupervisorState state;
  state.stops_by_class[ExitClass::cuda_oom] = 3;
  state.stops_by_class[ExitClass::stalled] = 1;
  const std::string json = supervisor_state_to_json(state);
  EXPECT_NE(json.find(R"("stops_cuda-oom": 3)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("stops_stalled": 1)"), std::string::npos) << json;
  EXPECT_EQ(json.find("stops_crash"), std::string::npos) << json;  // none: no field
  auto parsed = parse_supervisor_state(json);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->stops_by_class, state.stops_by_class);
  // Written before the counters existed: none.
  auto old = parse_supervisor_state(R"({"consecutive_failures": 1})");
  ASSERT_TRUE(old);
  EXPECT_TRUE(old->stops_by_class.empty());
  auto negative = parse_supervisor_state(R"({"stops_crash": -1})");
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().message,
            "'stops_crash' is not an integer from 0 to 9223372036854775807");
  EXPECT_FALSE(parse_supervisor_state(R"({"stops_crash": "2"})"));
  auto unknown = parse_supervisor_state(R"({"stops_meteor": 2})");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "'stops_meteor' names no stop class");
}

TEST(History, AFifoOrLinkIsNeverOpenedForReadingAndIsReplacedOnAppend) {
  TempDir dir;
  const History history(place_in(dir));
  ASSERT_TRUE(history.save(SupervisorState{}));
  const fs::path state = dir.path() / "state";
  ASSERT_EQ(::mkfifo((state / "events.jsonl").c_str(), 0644), 0);
  fs::remove(state / "supervisor.json");
  ASSERT_EQ(::mkfifo((state / "supervisor.json").c_str(), 0644), 0);
  // Neither read hangs on the FIFO.
  auto read = history.state();
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("FIFO"), std::string::npos) << read.error().message;
  EXPECT_FALSE(history.events(10));
  EXPECT_NE(history.state_to_update().problem.find("FIFO"), std::string::npos);
  ASSERT_TRUE(history.save(SupervisorState{}));
  EXPECT_TRUE(history.state());
  auto appended = history.append(SupervisorEvent{1, "crash", "e", "a", 0, 0});
  ASSERT_TRUE(appended) << appended.error().message;
  EXPECT_NE(appended->find("replaced it with a new one"), std::string::npos) << *appended;
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(state / "events.jsonl")));

  // A link planted at the name: the target is never written.
  const fs::path target = dir.write("target", "untouched\n");
  fs::remove(state / "events.jsonl");
  fs::create_symlink(target, state / "events.jsonl");
  appended = history.append(SupervisorEvent{2, "crash", "e", "a", 0, 0});
  ASSERT_TRUE(appended) << appended.error().message;
  EXPECT_FALSE(appended->empty());
  EXPECT_EQ(slurp(target), "untouched\n");
  auto events = history.events(10);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->front().time_usec, 2);
}

// Issue 28: events.jsonl grew past its 16 MiB read bound and every read of it failed. Past
// 4 MiB an append first renames it to events.jsonl.1, so both stay readable and the newest
// events still come back in order across the two.
TEST(History, EventsRotateToABoundedTailThatStaysReadable) {
  TempDir dir;
  const History history(place_in(dir));
  ASSERT_TRUE(history.append(SupervisorEvent{1, "crash", "old", "restart", 0, 0}));
  const fs::path events = place_in(dir).directory / place_in(dir).events_name;
  {
    const std::string line = slurp(events);
    std::ofstream out(events, std::ios::app);
    for (size_t written = 0; written < 4 * 1024 * 1024 + 1; written += line.size()) out << line;
  }
  ASSERT_TRUE(history.append(SupervisorEvent{2, "crash", "newest", "restart", 0, 0}));
  const fs::path rotated = events.string() + ".1";
  ASSERT_TRUE(fs::exists(rotated));
  EXPECT_LE(fs::file_size(rotated), 4u * 1024 * 1024);
  EXPECT_GT(fs::file_size(rotated), 3u * 1024 * 1024);
  EXPECT_LT(fs::file_size(events), 1024u);
  auto last = history.events(3);
  ASSERT_TRUE(last) << last.error().message;
  ASSERT_EQ(last->size(), 3u);
  EXPECT_EQ((*last)[1].evidence, "old");
  EXPECT_EQ((*last)[2].evidence, "newest");
  struct stat info {};
  ASSERT_EQ(::stat(rotated.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0644u);
  // The next rotation replaces the older tail: never more than two bounded files.
  {
    std::ofstream out(events, std::ios::app);
    const std::string line = slurp(rotated).substr(0, slurp(rotated).find('\n') + 1);
    for (size_t written = 0; written < 4 * 1024 * 1024 + 1; written += line.size()) out << line;
  }
  ASSERT_TRUE(history.append(SupervisorEvent{3, "crash", "third", "restart", 0, 0}));
  EXPECT_LT(fs::file_size(rotated), 5u * 1024 * 1024);
  EXPECT_LT(fs::file_size(events), 1024u);
  ASSERT_TRUE(history.events(1));
  EXPECT_EQ(history.events(1)->back().evidence, "third");
}

// A history that grew past the read bound before rotation existed: unreadable (the issue's
// state), then its tail is kept at the next append and everything reads again.
TEST(History, AHistoryPastTheReadBoundIsCutToItsTailAtTheNextAppend) {
  TempDir dir;
  const History history(place_in(dir));
  ASSERT_TRUE(history.append(SupervisorEvent{1, "crash", "old", "restart", 0, 0}));
  const fs::path events = place_in(dir).directory / place_in(dir).events_name;
  {
    const std::string line = slurp(events);
    std::ofstream out(events, std::ios::app);
    for (size_t written = 0; written < 17 * 1024 * 1024; written += line.size()) out << line;
  }
  EXPECT_FALSE(history.events(50));
  ASSERT_TRUE(history.append(SupervisorEvent{2, "crash", "newest", "restart", 0, 0}));
  auto last = history.events(50);
  ASSERT_TRUE(last) << last.error().message;
  ASSERT_EQ(last->size(), 50u);
  EXPECT_EQ(last->back().evidence, "newest");
  EXPECT_EQ(last->front().evidence, "old");
  EXPECT_LE(fs::file_size(events.string() + ".1"), 4u * 1024 * 1024);
}

TEST(History, EventLinesOfTheWrongTypeAreSkippedNotThrown) {
  TempDir dir;
  const History history(place_in(dir));
  dir.write("state/events.jsonl",
            "{\"time_usec\": \"x\", \"kind\": \"crash\"}\nnot json\n"
            "{\"time_usec\": 5, \"kind\": \"crash\", \"gpu_level\": 1}\n");
  auto events = history.events(10);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->front().gpu_level, 1);
}

// A stall's event keeps the journal cursor of its thread dump; other events (and lines written
// before there were cursors) have none, and a cursor that is not a string is refused.
TEST(History, OnlyAStallsEventCarriesAJournalCursor) {
  SupervisorEvent stall{7, "stalled", "gpulaunch: stalled: ...",          "restart after 10s",
                        0, 0,         "s=ab12;i=3f;b=cd34;m=1a;t=5f;x=99"};
  auto back = parse_event(event_to_json(stall));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->journal_cursor, stall.journal_cursor);
  const std::string crash = event_to_json(SupervisorEvent{8, "crash", "boom", "restart", 0, 0, {}});
  EXPECT_EQ(crash.find("journal_cursor"), std::string::npos) << crash;
  EXPECT_TRUE(parse_event(crash)->journal_cursor.empty());
  EXPECT_FALSE(parse_event(R"({"time_usec": 9, "kind": "stalled", "journal_cursor": 12})"));
}

HistoryWriter full_disk() {
  auto enospc = [](int, std::string_view, std::string_view, mode_t,
                   const std::string& shown) -> Result<void> {
    return failf("Failed to write '{}': No space left on device", shown);
  };
  return {enospc, enospc};
}

// A full disk: the stop cannot be recorded, so the marker (on a tmpfs) keeps the next start down;
// without it the next start would see an old, smaller failure count and restart forever.
TEST(History, AnUnrecordedStopKeepsTheNextStartDown) {
  TempDir dir;
  const History full(place_in(dir), full_disk());
  auto saved = full.save(SupervisorState{});
  ASSERT_FALSE(saved);
  ASSERT_TRUE(full.mark_unrecorded(saved.error().message));

  const History reader(place_in(dir));
  auto marker = reader.unrecorded();
  ASSERT_TRUE(marker);
  ASSERT_TRUE(*marker);
  EXPECT_NE((*marker)->find("No space left on device"), std::string::npos) << **marker;
  RestartSettings settings;
  const auto decision = decide_start_without_history(*marker, "", settings);
  EXPECT_TRUE(decision.stay_down);
  EXPECT_NE(decision.reason.find("history unrecorded"), std::string::npos) << decision.reason;

  ASSERT_TRUE(reader.clear_unrecorded());
  marker = reader.unrecorded();
  ASSERT_TRUE(marker);
  EXPECT_FALSE(*marker);
}

TEST(History, RootRefusesADirectoryAnotherUserCanWrite) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (chown)";
  TempDir dir;
  fs::create_directories(dir.path() / "state");
  ASSERT_EQ(::chown((dir.path() / "state").c_str(), 12345, 12345), 0);
  const History history(place_in(dir));
  auto saved = history.save(SupervisorState{});
  ASSERT_FALSE(saved);
  EXPECT_NE(saved.error().message.find("is owned by uid 12345"), std::string::npos)
      << saved.error().message;
}

}  // namespace
}  // namespace gl

namespace gl {
namespace {

constexpr int64_t kT0 = 1'800'000'000'000'000;
constexpr int64_t kS = 1'000'000;

StartTimeline a_start() {
  return StartTimeline{kT0,
                       kT0 + 250 * kS,
                       {{Phase::process, kT0, kT0 + 3 * kS},
                        {Phase::weights, kT0 + 3 * kS, kT0 + 103 * kS},
                        {Phase::jit_compile, kT0 + 110 * kS, kT0 + 225 * kS},
                        {Phase::health, kT0 + 247 * kS, kT0 + 250 * kS}}};
}

void expect_same(const StartTimeline& a, const StartTimeline& b) {
  EXPECT_EQ(a.process_start_usec, b.process_start_usec);
  EXPECT_EQ(a.ready_usec, b.ready_usec);
  ASSERT_EQ(a.phases.size(), b.phases.size());
  for (size_t i = 0; i < a.phases.size(); ++i) {
    EXPECT_EQ(a.phases[i].phase, b.phases[i].phase) << i;
    EXPECT_EQ(a.phases[i].begin_usec, b.phases[i].begin_usec) << i;
    EXPECT_EQ(a.phases[i].end_usec, b.phases[i].end_usec) << i;
  }
}

TEST(History, TheLastStartRoundTripsInTheFlatState) {
  TempDir dir;
  const History history(place_in(dir));
  SupervisorState state;
  state.consecutive_failures = 1;
  state.last_start = a_start();
  ASSERT_TRUE(history.save(state));
  const std::string text = slurp(dir.path() / "state" / "supervisor.json");
  EXPECT_NE(text.find(R"("last_start_phases": "process:1800000000000000-1800000003000000 )"),
            std::string::npos)
      << text;
  auto loaded = history.state();
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_TRUE(loaded->last_start);
  expect_same(*loaded->last_start, a_start());
  EXPECT_EQ(loaded->consecutive_failures, 1);
  // Before the first start: none, and none written.
  ASSERT_TRUE(history.save(SupervisorState{}));
  EXPECT_EQ(slurp(dir.path() / "state" / "supervisor.json").find("last_start"), std::string::npos);
  EXPECT_FALSE(history.state()->last_start);
}

TEST(History, AStartedEventCarriesItsPhases) {
  TempDir dir;
  const History history(place_in(dir));
  SupervisorEvent started{
      kT0 + 250 * kS, std::string(kStartedEventKind), "ready in 4m10s", "", 0, 0};
  started.start = a_start();
  ASSERT_TRUE(history.append(started));
  ASSERT_TRUE(history.append(SupervisorEvent{kT0 + 300 * kS, "crash", "x", "restart", 0, 0}));
  auto events = history.events(10);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  ASSERT_TRUE(events->at(0).start);
  expect_same(*events->at(0).start, a_start());
  EXPECT_FALSE(events->at(1).start);
}

TEST(History, ABadStartTimelineIsRefusedNamingTheField) {
  auto refused = [](const std::string& fields) {
    auto parsed = parse_supervisor_state("{" + fields + "}");
    return parsed ? std::string("accepted") : parsed.error().message;
  };
  const std::string times =
      R"("last_start_process_start_usec": 1800000000000000, "last_start_ready_usec": 1800000250000000, )";
  EXPECT_EQ(refused(times + R"("last_start_phases": "weights:1800000003000000-1800000103000000")"),
            "accepted");
  EXPECT_EQ(refused(R"("last_start_phases": "")"),
            "'last_start_process_start_usec', 'last_start_ready_usec' and 'last_start_phases' go "
            "together");
  EXPECT_EQ(refused(times + R"("last_start_phases": "compiling:1800000003000000-0")"),
            "'last_start_phases': 'compiling:1800000003000000-0' names no start phase");
  EXPECT_EQ(refused(times + R"("last_start_phases": "weights:1800000003000000")"),
            "'last_start_phases': 'weights:1800000003000000' is not PHASE:BEGIN-END");
  EXPECT_EQ(refused(times + R"("last_start_phases": "weights:-5-0")"),
            "'last_start_phases': 'weights:-5-0' is not PHASE:BEGIN-END");
  EXPECT_EQ(refused(times + R"("last_start_phases": "weights:1800000003000000-1800000002000000")"),
            "'last_start_phases': 'weights:1800000003000000-1800000002000000' is out of order");
  // Before the process started, or after ready.
  EXPECT_EQ(refused(times + R"("last_start_phases": "weights:1-2")"),
            "'last_start_phases': 'weights:1-2' is out of order");
  EXPECT_EQ(refused(times + R"("last_start_phases": "health:1800000003000000-1800000999000000")"),
            "'last_start_phases': 'health:1800000003000000-1800000999000000' is out of order");
  EXPECT_EQ(refused(times + R"("last_start_phases": 5)"), "'last_start_phases' is not a string");
  EXPECT_EQ(
      refused(R"("last_start_process_start_usec": 1800000000000000, "last_start_ready_usec": 1, )"
              R"("last_start_phases": "")"),
      "'last_start_phases': ready before the process started");
  std::string many;
  for (size_t i = 0; i <= kMaxStartSpans; ++i)
    many += fmt::format("{}weights:{}-0", many.empty() ? "" : " ", kT0 + 1);
  EXPECT_EQ(
      refused(R"("last_start_process_start_usec": 1800000000000000, "last_start_ready_usec": 0, )"
              R"("last_start_phases": ")" +
              many + "\""),
      fmt::format("'last_start_phases': more than {} phases", kMaxStartSpans));
  EXPECT_NE(
      refused(R"("last_start_process_start_usec": 1800000000000000, "last_start_ready_usec": 0, )"
              R"("last_start_phases": ")" +
              std::string(4000, 'x') + "\"")
          .find("longer than"),
      std::string::npos);
  // An event with half a timeline is skipped like any other bad line.
  EXPECT_FALSE(parse_event(R"({"time_usec": 1, "kind": "started", "phases": "x"})"));
}

}  // namespace
}  // namespace gl
