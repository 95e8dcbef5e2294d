// SPDX-License-Identifier: Apache-2.0
// `up`'s rollback on a fake manager and clock: the previous unit file and snapshot back on disk,
// the manager reloaded, the previous version running again only if it ran before, the budget
// reset and the rollback in the history, and a previous version that fails too said so.

#include "supervise/rollback.hpp"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "../temp_dir.hpp"
#include "catalog/journal_messages.hpp"
#include "fakes/systemd/fake_manager.hpp"
#include "fakes/util/fake_timekeeper.hpp"

namespace gl {
namespace {

using testing::FakeManager;
using testing::FakeTimekeeper;
using testing::TempDir;

constexpr const char* kUnit = "gpulaunch-demo.service";

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Node {
  TempDir dir;
  FakeTimekeeper clock;
  FakeManager manager{&clock};
  History history{place()};
  RollbackPlaces places{kUnit, dir.path() / "demo.service", dir.path() / "snapshot.toml"};

  HistoryPlace place() {
    HistoryPlace place = history_place("demo");
    place.directory = dir.path() / "state";
    place.runtime_directory = dir.path() / "run";
    return place;
  }
  Node() {
    std::ofstream(places.unit_file) << "[Service]\nExecStart=/new\n";
    std::ofstream(places.snapshot) << "new = true\n";
    // The changed unit failed its start and two stops counted against it.
    SupervisorState state;
    state.consecutive_failures = 2;
    EXPECT_TRUE(history.save(state));
  }
};

TEST(Rollback, APreviouslyRunningUnitRunsItsPreviousVersionAgain) {
  Node node;
  node.manager.add_unit(kUnit, "failed");
  node.manager.script_next_job({3, "done", std::nullopt});
  auto rolled = roll_back(node.manager, node.clock, node.history, node.places,
                          PreviousUnit{"[Service]\nExecStart=/old\n", "old = true\n", true,
                                       "job failed; failed (exit-code)"},
                          std::chrono::seconds(60));
  ASSERT_TRUE(rolled) << rolled.error().message;
  EXPECT_TRUE(rolled->restarted);
  EXPECT_EQ(read(node.places.unit_file), "[Service]\nExecStart=/old\n");
  EXPECT_EQ(read(node.places.snapshot), "old = true\n");
  EXPECT_EQ(node.manager.calls,
            (std::vector<std::string>{"Reload", std::string("RestartUnit ") + kUnit}));
  EXPECT_EQ(node.history.state()->consecutive_failures, 0);
  auto events = node.history.events(10);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2U);
  EXPECT_EQ((*events)[0].kind, kOperatorResetMessage);
  EXPECT_EQ((*events)[1].kind, kRolledBackMessage);
  EXPECT_EQ((*events)[1].evidence, "job failed; failed (exit-code)");
  EXPECT_EQ((*events)[1].action, "previous unit and profile snapshot restored; restarting it");
}

TEST(Rollback, AUnitThatWasStoppedIsLeftStoppedAndASnapshotItNeverHadIsRemoved) {
  Node node;
  node.manager.add_unit(kUnit, "failed");
  auto rolled =
      roll_back(node.manager, node.clock, node.history, node.places,
                PreviousUnit{"[Service]\nExecStart=/old\n", "", false, "no progress for 2min"},
                std::chrono::seconds(60));
  ASSERT_TRUE(rolled) << rolled.error().message;
  EXPECT_FALSE(rolled->restarted);
  EXPECT_FALSE(std::filesystem::exists(node.places.snapshot));
  EXPECT_EQ(node.manager.started, 0);
  auto events = node.history.events(10);
  ASSERT_TRUE(events);
  EXPECT_EQ(events->back().action, "previous unit and profile snapshot restored; left stopped");
}

TEST(Rollback, APreviousVersionThatFailsTooIsSaidSo) {
  Node node;
  node.manager.add_unit(kUnit, "failed");
  node.manager.script_next_job({1, "failed", std::nullopt});
  auto rolled = roll_back(node.manager, node.clock, node.history, node.places,
                          PreviousUnit{"[Service]\nExecStart=/old\n", "old = true\n", true, "x"},
                          std::chrono::seconds(60));
  ASSERT_FALSE(rolled);
  EXPECT_EQ(rolled.error().message, "the previous unit did not become ready either: job failed");
  // The files are back all the same: the operator's next `up` starts from the previous version.
  EXPECT_EQ(read(node.places.unit_file), "[Service]\nExecStart=/old\n");
}

}  // namespace
}  // namespace gl
