// SPDX-License-Identifier: Apache-2.0
// What `up`, `down` and `restart` do to a unit, on a fake manager and clock: the jobs systemd is
// asked for (what `systemctl list-jobs` would show), their results, the refusals.

#include "supervise/unit_transition.hpp"

#include <gtest/gtest.h>

#include "../temp_dir.hpp"
#include "fakes/systemd/fake_manager.hpp"
#include "fakes/systemd/fake_notifier.hpp"
#include "fakes/util/fake_timekeeper.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/start_gate.hpp"

namespace gl {
namespace {

using testing::FakeManager;
using testing::FakeNotifier;
using testing::FakeTimekeeper;
using testing::TempDir;

constexpr const char* kUnit = "gpulaunch-demo.service";
constexpr const char* kPath = "/etc/systemd/system/gpulaunch-demo.service";

using Strings = std::vector<std::string>;

// `up`'s part once the unit file is in place: ask for the job its transition names, wait for it.
Result<StartWatch> bring_up(FakeManager& manager, FakeTimekeeper& clock, const UpTransition& up,
                            Strings* phases = nullptr) {
  auto job = manager.enqueue(job_method(up.action), kUnit);
  if (!job) return std::unexpected(job.error());
  return watch_start(manager, clock, *job, kUnit, std::chrono::seconds(600),
                     [&](const std::string& phase, auto) {
                       if (phases && (phases->empty() || phases->back() != phase))
                         phases->push_back(phase);
                     });
}

Finding port_taken() {
  return Finding{Severity::error, "port-taken", "port 30000 is in use", "", {}, ""};
}

TEST(UnitTransition, UpLeavesARunningUnchangedUnitAlone) {
  FakeManager manager;
  const UnitStatus& before = manager.add_unit(kUnit, "active", kPath);
  const UpTransition up = decide_up("[Service]\n", "[Service]\n", before, kPath);
  EXPECT_EQ(up.action, UnitAction::none);
  EXPECT_FALSE(up.install);
  EXPECT_EQ(job_method(up.action), "");
}

TEST(UnitTransition, UpRestartsARunningUnitWhoseUnitChanged) {
  FakeTimekeeper clock;
  FakeManager manager(&clock);
  const UnitStatus before = manager.add_unit(kUnit, "active", kPath);
  const UpTransition up = decide_up("[Service]\nA=1\n", "[Service]\nA=2\n", before, kPath);
  EXPECT_EQ(up.action, UnitAction::restart);
  EXPECT_TRUE(up.install);
  EXPECT_TRUE(up.changed);
  manager.script_next_job({.waits = 3, .result = "done", .active_state = {}});
  auto watched = bring_up(manager, clock, up);
  ASSERT_TRUE(watched) << watched.error().message;
  EXPECT_EQ(watched->job_result, "done");
  EXPECT_EQ(manager.calls, (Strings{"RestartUnit gpulaunch-demo.service"}));
  EXPECT_EQ(manager.started, 1);
}

TEST(UnitTransition, UpStartsAUnitThatIsNotRunning) {
  FakeTimekeeper clock;
  FakeManager manager(&clock);
  // First install: nothing there yet.
  const UpTransition fresh = decide_up("", "[Service]\n", *manager.status(kUnit), kPath);
  EXPECT_EQ(fresh.action, UnitAction::start);
  EXPECT_TRUE(fresh.install);
  EXPECT_FALSE(fresh.changed);  // nothing to show a diff against

  // Installed and unchanged but failed: started again, the file left as it is.
  const UnitStatus failed = manager.add_unit(kUnit, "failed", kPath);
  const UpTransition again = decide_up("[Service]\n", "[Service]\n", failed, kPath);
  EXPECT_EQ(again.action, UnitAction::start);
  EXPECT_FALSE(again.install);
  Strings phases;
  auto watched = bring_up(manager, clock, again, &phases);
  ASSERT_TRUE(watched);
  EXPECT_EQ(watched->job_result, "done");
  EXPECT_EQ(manager.calls, (Strings{"StartUnit gpulaunch-demo.service"}));
  EXPECT_EQ(phases.back(), "active (running)");
}

TEST(UnitTransition, APortHeldByAnotherProcessRefusesUnlessForced) {
  FakeManager manager;
  const UpTransition up = decide_up("", "[Service]\n", *manager.status(kUnit), kPath);
  const CheckGate refused = gate_on_check({port_taken()}, up, false);
  EXPECT_TRUE(refused.refuse);
  EXPECT_EQ(refused.errors, 1);
  ASSERT_EQ(refused.findings.size(), 1u);

  const CheckGate forced = gate_on_check({port_taken()}, up, true);
  EXPECT_FALSE(forced.refuse);
  EXPECT_EQ(forced.errors, 1);  // still shown and counted: the warning names them
}

TEST(UnitTransition, OurOwnRunningEngineOnThePortIsNoConflict) {
  FakeManager manager;
  const UnitStatus before = manager.add_unit(kUnit, "active", kPath);
  const UpTransition up = decide_up("[Service]\nA=1\n", "[Service]\nA=2\n", before, kPath);
  const CheckGate gate = gate_on_check({port_taken()}, up, false);
  EXPECT_FALSE(gate.refuse);
  EXPECT_EQ(gate.errors, 0);
  EXPECT_TRUE(gate.findings.empty());
}

TEST(UnitTransition, AFailedStartJobIsReportedWithTheUnitsState) {
  FakeTimekeeper clock;
  FakeManager manager(&clock);
  manager.script_next_job({.waits = 2, .result = "failed", .active_state = "failed"});
  auto watched = bring_up(manager, clock, UpTransition{});
  ASSERT_TRUE(watched);
  EXPECT_EQ(watched->job_result, "failed");
  EXPECT_EQ(watched->last.active_state, "failed");
  EXPECT_EQ(manager.started, 0);
}

TEST(UnitTransition, AStartThatStopsProgressingIsGivenUpOnTheClockWithoutSleeping) {
  FakeTimekeeper clock;
  FakeManager manager(&clock);
  manager.add_unit(kUnit, "activating").status_text = "loading weights 40%";
  manager.script_next_job({.waits = 1'000'000, .result = "done", .active_state = {}});
  const auto real = std::chrono::steady_clock::now();
  auto watched = bring_up(manager, clock, UpTransition{});
  ASSERT_TRUE(watched);
  EXPECT_FALSE(watched->job_result);  // no progress for 10 minutes
  EXPECT_EQ(watched->last.status_text, "loading weights 40%");
  EXPECT_GT(clock.steady_now().time_since_epoch(), std::chrono::seconds(600));
  EXPECT_LT(std::chrono::steady_clock::now() - real, std::chrono::seconds(5));
}

TEST(UnitTransition, DownStopsARunningUnitAndLeavesAStoppedOneAlone) {
  FakeTimekeeper clock;
  FakeManager manager(&clock);
  manager.add_unit(kUnit, "active", kPath);
  auto stopped = stop_unit(manager, clock, kUnit, std::chrono::seconds(300));
  ASSERT_TRUE(stopped);
  EXPECT_TRUE(stopped->was_running);
  EXPECT_EQ(stopped->job_result, "done");
  EXPECT_EQ(stopped->before.fragment_path, kPath);
  EXPECT_EQ(manager.calls, (Strings{"StopUnit gpulaunch-demo.service"}));
  EXPECT_EQ(manager.status(kUnit)->active_state, "inactive");

  auto again = stop_unit(manager, clock, kUnit, std::chrono::seconds(300));
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->was_running);
  EXPECT_EQ(manager.calls.size(), 1u);  // no second job

  FakeManager none(&clock);
  auto missing = stop_unit(none, clock, kUnit, std::chrono::seconds(300));
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->was_running);
  EXPECT_TRUE(none.calls.empty());
}

TEST(UnitTransition, DownGivesUpOnAStopJobThatNeverEnds) {
  FakeTimekeeper clock;
  FakeManager manager(&clock);
  manager.add_unit(kUnit, "deactivating");
  manager.script_next_job({.waits = 1'000'000, .result = "done", .active_state = {}});
  auto stopped = stop_unit(manager, clock, kUnit, std::chrono::seconds(300));
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().message,
            "Failed to wait for job '/org/freedesktop/systemd1/job/1': still running after 300s");
}

HistoryPlace place_in(const TempDir& dir) {
  HistoryPlace place = history_place("demo");
  place.directory = dir.path() / "state";
  place.runtime_directory = dir.path() / "run";
  return place;
}

// The documented way out of a crash loop: `restart` forgives the failures (run_restart, whose
// sequence up_sequence_test runs), and the next start no longer stays down.
TEST(UnitTransition, RestartEndsACrashLoop) {
  TempDir dir;
  const History history(place_in(dir));
  SupervisorState looping;
  looping.consecutive_failures = 5;
  looping.gpu_level = 1;
  looping.last_class = "crash";
  ASSERT_TRUE(history.save(looping));
  FakeTimekeeper clock;
  ASSERT_TRUE(reset_crash_loop(history, "gpulaunch restart", clock));
  auto events = history.events(10);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->back().kind, "operator-reset");
  EXPECT_EQ(events->back().evidence, "gpulaunch restart");
  EXPECT_EQ(events->back().action, "forgave 5 failure(s); starting again");
  EXPECT_EQ(events->back().gpu_level, 1);  // the step-down stays until it served

  FakeNotifier notifier;
  StartGateIo io{notifier, clock,
                 GpuHolders{[] { return Result<std::vector<GpuProcessUse>>{}; },
                            [](unsigned) { return std::string("?"); },
                            1,
                            {}},
                 [](const std::string&) {}};
  const StartGate gate = gate_start(
      StartGateInput{"demo", RestartSettings{}, EngineKind::sglang, 1200, {"x"}}, history, io);
  EXPECT_FALSE(gate.exit_code);
}

TEST(UnitTransition, RestartWithNothingToForgiveWritesNoEvent) {
  TempDir dir;
  const History history(place_in(dir));
  FakeTimekeeper clock;
  ASSERT_TRUE(reset_crash_loop(history, "gpulaunch up", clock));
  auto events = history.events(10);
  ASSERT_TRUE(events);
  EXPECT_TRUE(events->empty());
}

TEST(UnitTransition, StartAtBootLinksOnceAndSaysWhatChangedAsSystemctlDoes) {
  FakeManager manager;
  auto enabled = start_at_boot(manager, "gpulaunch-x.service", true, false);
  ASSERT_TRUE(enabled) << enabled.error().message;
  EXPECT_EQ(*enabled, (std::vector<std::string>{
                          "Created symlink /etc/systemd/system/multi-user.target.wants/"
                          "gpulaunch-x.service -> /etc/systemd/system/gpulaunch-x.service."}));
  // Enabled already: nothing changes, nothing is said (and `up` need not reload).
  auto again = start_at_boot(manager, "gpulaunch-x.service", true, false);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->empty());
  auto disabled = start_at_boot(manager, "gpulaunch-x.service", false, true);
  ASSERT_TRUE(disabled);
  EXPECT_EQ(*disabled,
            (std::vector<std::string>{"Removed \"/run/systemd/system/multi-user.target.wants/"
                                      "gpulaunch-x.service\"."}));
  EXPECT_EQ(manager.calls,
            (std::vector<std::string>{"EnableUnitFiles gpulaunch-x.service",
                                      "EnableUnitFiles gpulaunch-x.service",
                                      "DisableUnitFiles gpulaunch-x.service runtime"}));
}

}  // namespace
}  // namespace gl
