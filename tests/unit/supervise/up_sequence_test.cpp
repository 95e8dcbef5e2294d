// SPDX-License-Identifier: Apache-2.0
// `up`'s sequence on a fake manager, clock, actions and output, in milliseconds: what is written,
// asked of systemd and said, in which order, for each way `up` goes (unchanged, refused by the
// check, forced, started, failed and rolled back or kept, gated). The integration suites
// (lifecycle, rollback, upgrade_gate) only prove the real wiring.

#include "supervise/up_sequence.hpp"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../temp_dir.hpp"
#include "catalog/journal_messages.hpp"
#include "fakes/systemd/fake_manager.hpp"
#include "fakes/util/fake_timekeeper.hpp"
#include "rules/check.hpp"

namespace gl {
namespace {

using ::testing::ElementsAre;
using testing::FakeManager;
using testing::FakeTimekeeper;
using testing::TempDir;

constexpr const char* kUnit = "gpulaunch-demo.service";
constexpr const char* kOld = "[Service]\nExecStart=/old\n";
constexpr const char* kNew = "[Service]\nExecStart=/new\n";

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What `up` asks beyond the manager, scripted; what it was asked, in order.
struct ScriptedActions final : UpActions {
  std::vector<Finding> findings;
  std::optional<GateCheck> gate_answer;
  Result<void> state_prepared{};
  std::vector<std::string> asked;

  std::vector<Finding> check() override {
    asked.push_back("check");
    return findings;
  }
  Result<void> prepare_state() override {
    asked.push_back("prepare-state");
    return state_prepared;
  }
  std::optional<GateCheck> gate(bool unit_changed) override {
    asked.push_back(unit_changed ? "gate changed" : "gate unchanged");
    return gate_answer;
  }
  void write_metrics() override { asked.push_back("metrics"); }
};

// What `up` said, one word each (and the detail a user would read).
struct RecordedOutput final : UpOutput {
  std::vector<std::string> said;
  CheckGate check;
  std::string failure;
  std::optional<StartTimeline> start;
  int progress_lines = 0;

  void enabled(const std::vector<std::string>& changes) override {
    if (!changes.empty()) said.push_back("enabled");
  }
  void unchanged() override { said.push_back("unchanged"); }
  void checked(const CheckGate& gate) override {
    check = gate;
    said.push_back(gate.refuse ? "refused" : "checked");
  }
  void unit_changed(std::string_view, std::string_view) override { said.push_back("diff"); }
  void warning(std::string_view line) override { said.push_back("warning: " + std::string(line)); }
  void starting(UnitAction action) override {
    said.push_back(action == UnitAction::restart ? "restarting" : "starting");
  }
  void progress(const std::string&, std::chrono::steady_clock::duration) override {
    ++progress_lines;
  }
  void watch_ended() override {}
  void start_failed(std::string_view why) override {
    failure = why;
    said.push_back("start failed");
  }
  void ready(std::chrono::milliseconds) override { said.push_back("ready"); }
  void gate_failed(std::string_view summary) override {
    failure = summary;
    said.push_back("gate failed");
  }
  void kept_failed(UpFailure) override { said.push_back("kept"); }
  void rolling_back(UpFailure why) override {
    said.push_back(why == UpFailure::not_ready ? "rolling back: not ready" : "rolling back: gate");
  }
  void rolled_back(const Rollback& rolled) override {
    said.push_back(rolled.restarted ? "rolled back, restarted" : "rolled back, stopped");
  }
  void rollback_failed(const Error& error) override {
    said.push_back("rollback failed: " + error.message);
  }
  void done(const std::optional<StartTimeline>& timeline) override {
    start = timeline;
    said.push_back("done");
  }
};

struct Node {
  TempDir dir;
  FakeTimekeeper clock;
  FakeManager manager{&clock};
  History history{place()};
  ScriptedActions actions;
  RecordedOutput output;
  UpRequest request;

  HistoryPlace place() {
    HistoryPlace place = history_place("demo");
    place.directory = dir.path() / "state";
    place.runtime_directory = dir.path() / "run";
    return place;
  }
  Node() {
    request.unit = kUnit;
    request.unit_file = dir.path() / "system" / kUnit;
    request.snapshot = dir.path() / "snapshots/demo.toml";
    request.rendered = kNew;
    request.snapshot_text = "new = true\n";
    request.ready_window = std::chrono::seconds(2);
    request.stop_window = std::chrono::seconds(3);
  }
  // An installed, running version that `up` replaces.
  void install_old(const std::string& active_state = "active") {
    std::filesystem::create_directories(request.unit_file.parent_path());
    std::filesystem::create_directories(request.snapshot.parent_path());
    std::ofstream(request.unit_file) << kOld;
    std::ofstream(request.snapshot) << "old = true\n";
    request.installed = kOld;
    manager.add_unit(kUnit, active_state, request.unit_file.string());
  }
  UpTransition transition() {
    auto status = manager.status(kUnit);
    return decide_up(request.installed, request.rendered, *status, request.unit_file.string());
  }
  Result<int> up() {
    return run_up(request, transition(), manager, clock, history, actions, output);
  }
  Result<int> restart() {
    return run_restart(RestartRequest{kUnit, request.ready_window, request.stop_window}, manager,
                       clock, history, actions, output);
  }
};

Finding error_finding(std::string code) {
  Finding finding;
  finding.code = std::move(code);
  finding.summary = "it would fail";
  return finding;
}

TEST(UpSequence, ARunningUnchangedUnitOnlyGetsItsBootLinksAndNothingIsChecked) {
  Node node;
  node.install_old();
  node.request.rendered = kOld;
  auto code = node.up();
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 0);
  EXPECT_THAT(node.manager.calls, ElementsAre(std::string("EnableUnitFiles ") + kUnit, "Reload"));
  EXPECT_THAT(node.output.said, ElementsAre("enabled", "unchanged"));
  EXPECT_TRUE(node.actions.asked.empty());
  EXPECT_EQ(read(node.request.snapshot), "old = true\n");  // not rewritten

  // Enabled already: not even a reload.
  node.manager.calls.clear();
  node.output.said.clear();
  ASSERT_TRUE(node.up());
  EXPECT_THAT(node.manager.calls, ElementsAre(std::string("EnableUnitFiles ") + kUnit));
  EXPECT_THAT(node.output.said, ElementsAre("unchanged"));
}

TEST(UpSequence, CheckErrorsRefuseBeforeAnythingIsWrittenOrAsked) {
  Node node;
  node.actions.findings = {error_finding("flashinfer-nvcc-too-old")};
  auto code = node.up();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(node.output.said, ElementsAre("refused"));
  EXPECT_EQ(node.output.check.errors, 1);
  EXPECT_THAT(node.actions.asked, ElementsAre("check"));
  EXPECT_TRUE(node.manager.calls.empty());
  EXPECT_FALSE(std::filesystem::exists(node.request.unit_file));
  EXPECT_FALSE(std::filesystem::exists(node.request.snapshot));
}

TEST(UpSequence, OurOwnRunningEngineHoldingThePortIsNoConflict) {
  Node node;
  node.install_old();
  node.actions.findings = {error_finding(std::string(kPortTakenCode))};
  node.manager.script_next_job({2, "done", std::nullopt});
  auto code = node.up();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 0);
  EXPECT_EQ(node.output.check.errors, 0);
  EXPECT_EQ(node.manager.calls.back(), std::string("RestartUnit ") + kUnit);
}

TEST(UpSequence, ForceStartsDespiteTheCheckErrors) {
  Node node;
  node.request.force = true;
  node.actions.findings = {error_finding("flashinfer-nvcc-too-old")};
  node.manager.script_next_job({2, "done", std::nullopt});
  auto code = node.up();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 0);
  EXPECT_EQ(node.output.said.front(), "checked");
  EXPECT_EQ(node.output.check.errors, 1);
  EXPECT_EQ(read(node.request.unit_file), kNew);
}

TEST(UpSequence, ANewUnitIsWrittenEnabledReloadedStartedAndWatchedUntilReady) {
  Node node;
  // An earlier crash loop: starting by hand is the operator's word.
  SupervisorState looping;
  looping.consecutive_failures = 3;
  ASSERT_TRUE(node.history.save(looping));
  node.manager.script_next_job({4, "done", std::nullopt});
  auto code = node.up();
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 0);
  EXPECT_EQ(read(node.request.unit_file), kNew);
  EXPECT_EQ(read(node.request.snapshot), "new = true\n");
  EXPECT_THAT(node.manager.calls, ElementsAre(std::string("EnableUnitFiles ") + kUnit, "Reload",
                                              std::string("StartUnit ") + kUnit));
  EXPECT_THAT(node.actions.asked, ElementsAre("check", "prepare-state", "gate unchanged"));
  EXPECT_THAT(node.output.said, ElementsAre("checked", "enabled", "starting", "ready", "done"));
  EXPECT_EQ(node.output.progress_lines, 4);
  EXPECT_EQ(node.history.state()->consecutive_failures, 0);
  auto events = node.history.events(10);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1U);
  EXPECT_EQ(events->front().kind, kOperatorResetMessage);
  EXPECT_EQ(events->front().evidence, "gpulaunch up");
}

TEST(UpSequence, OnlyThisStartsRecordedPhasesAreShown) {
  Node node;
  node.manager.script_next_job({1, "done", std::nullopt});
  SupervisorState state;
  state.last_start = StartTimeline{node.clock.now_usec() - 1, node.clock.now_usec(), {}};
  ASSERT_TRUE(node.history.save(state));
  ASSERT_TRUE(node.up());
  EXPECT_FALSE(node.output.start);  // an earlier start's: not this one

  Node again;
  again.manager.script_next_job({1, "done", std::nullopt});
  const int64_t process_start = again.clock.now_usec();
  state.last_start = StartTimeline{process_start, process_start + 5, {}};
  ASSERT_TRUE(again.history.save(state));
  ASSERT_TRUE(again.up());
  ASSERT_TRUE(again.output.start);
  EXPECT_EQ(again.output.start->ready_usec, process_start + 5);
}

TEST(UpSequence, AStateThatCannotBePreparedStopsBeforeTheUnitIsWritten) {
  Node node;
  node.actions.state_prepared = fail("Failed to create user 'gpulaunch-demo': no useradd");
  auto code = node.up();
  ASSERT_FALSE(code);
  EXPECT_EQ(code.error().message, "Failed to create user 'gpulaunch-demo': no useradd");
  EXPECT_FALSE(std::filesystem::exists(node.request.unit_file));
  EXPECT_TRUE(node.manager.calls.empty());
}

TEST(UpSequence, AChangedUnitThatDoesNotBecomeReadyIsRolledBackAndRunsAgain) {
  Node node;
  node.install_old();
  node.manager.script_next_job({2, "failed", "failed"});    // the changed unit's restart
  node.manager.script_next_job({2, "done", std::nullopt});  // the previous unit's
  auto code = node.up();
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(node.output.said,
              ElementsAre("checked", "diff", "enabled", "restarting", "start failed",
                          "rolling back: not ready", "rolled back, restarted"));
  EXPECT_EQ(node.output.failure, "job failed; failed (dead)");
  EXPECT_EQ(read(node.request.unit_file), kOld);
  EXPECT_EQ(read(node.request.snapshot), "old = true\n");
  EXPECT_THAT(node.actions.asked, ElementsAre("check", "prepare-state", "metrics"));
  auto events = node.history.events(10);
  ASSERT_TRUE(events);
  EXPECT_EQ(events->back().kind, kRolledBackMessage);
  EXPECT_EQ(events->back().evidence, node.output.failure);
}

TEST(UpSequence, NoRollbackKeepsTheChangedUnitAsItFailed) {
  Node node;
  node.install_old();
  node.request.no_rollback = true;
  node.manager.script_next_job({2, "failed", "failed"});
  auto code = node.up();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 1);
  EXPECT_EQ(node.output.said.back(), "kept");
  EXPECT_EQ(read(node.request.unit_file), kNew);
  EXPECT_EQ(node.manager.calls.back(), std::string("RestartUnit ") + kUnit);
}

TEST(UpSequence, AnUnchangedUnitThatFailsToStartHasNothingToRollBackTo) {
  Node node;
  node.install_old("failed");
  node.request.rendered = kOld;
  node.manager.script_next_job({1, "failed", "failed"});
  auto code = node.up();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 1);
  EXPECT_EQ(node.output.said.back(), "start failed");
  EXPECT_EQ(node.manager.calls.back(), std::string("StartUnit ") + kUnit);
}

TEST(UpSequence, ARestartThatMakesNoProgressIsBoundedByTheReadyAndDrainWindows) {
  Node node;
  node.install_old();
  node.request.no_rollback = true;
  node.manager.script_next_job({1'000'000, "done", std::nullopt});  // never ends
  auto code = node.up();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 1);
  EXPECT_EQ(node.output.failure, "no progress for 5s");  // 2 s ready + 3 s drain
}

TEST(UpSequence, AChangedUnitThatFailsItsGateIsRolledBackAndItsMetricsWritten) {
  Node node;
  node.install_old();
  GateCheck failed;
  failed.outcome = GateOutcome::failed;
  failed.failures = {"prompt 1 answered differently"};
  node.actions.gate_answer = failed;
  node.manager.script_next_job({1, "done", std::nullopt});  // the changed unit: ready
  node.manager.script_next_job({1, "done", std::nullopt});  // the previous one again
  auto code = node.up();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(node.output.said,
              ElementsAre("checked", "diff", "enabled", "restarting", "ready", "gate failed",
                          "rolling back: gate", "rolled back, restarted"));
  EXPECT_EQ(node.output.failure, "prompt 1 answered differently");
  EXPECT_THAT(node.actions.asked, ElementsAre("check", "prepare-state", "gate changed", "metrics"));
  EXPECT_EQ(read(node.request.unit_file), kOld);
}

TEST(UpSequence, AGateWithoutARecordKeepsTheChangedUnit) {
  Node node;
  node.install_old();
  node.actions.gate_answer = GateCheck{};  // no_record
  node.manager.script_next_job({1, "done", std::nullopt});
  auto code = node.up();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 0);
  EXPECT_EQ(node.output.said.back(), "done");
  EXPECT_EQ(read(node.request.unit_file), kNew);
}

// `restart` says what `up` says of a start: the restart, its progress, ready and the phases; it
// checks, writes and rolls back nothing, and ends a crash loop (the operator's word).
TEST(RestartSequence, ARestartIsWatchedUntilReadyAndEndsACrashLoop) {
  Node node;
  node.install_old("failed");
  SupervisorState looping;
  looping.consecutive_failures = 5;
  ASSERT_TRUE(node.history.save(looping));
  node.manager.script_next_job({3, "done", std::nullopt});
  auto code = node.restart();
  ASSERT_TRUE(code) << code.error().message;
  EXPECT_EQ(*code, 0);
  EXPECT_THAT(node.manager.calls, ElementsAre(std::string("RestartUnit ") + kUnit));
  EXPECT_THAT(node.output.said, ElementsAre("restarting", "ready", "done"));
  EXPECT_GE(node.output.progress_lines, 3);
  EXPECT_TRUE(node.actions.asked.empty());
  EXPECT_EQ(read(node.request.unit_file), kOld);
  auto events = node.history.events(10);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->back().kind, "operator-reset");
  EXPECT_EQ(events->back().evidence, "gpulaunch restart");
}

TEST(RestartSequence, ARestartThatFailsIsSaidAsUpSaysAFailedStartAndItsMetricsWritten) {
  Node node;
  node.install_old();
  node.manager.script_next_job({1, "failed", "failed"});
  auto code = node.restart();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(node.output.said, ElementsAre("restarting", "start failed"));
  EXPECT_EQ(node.output.failure, "job failed; failed (dead)");
  EXPECT_THAT(node.actions.asked, ElementsAre("metrics"));
  EXPECT_EQ(read(node.request.unit_file), kOld);  // nothing rolled back or written
}

TEST(RestartSequence, ARestartThatMakesNoProgressIsBoundedByTheReadyAndDrainWindows) {
  Node node;
  node.install_old();
  node.manager.script_next_job({1'000'000, "done", std::nullopt});
  auto code = node.restart();
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 1);
  EXPECT_EQ(node.output.failure, "no progress for 5s");
}

}  // namespace
}  // namespace gl
