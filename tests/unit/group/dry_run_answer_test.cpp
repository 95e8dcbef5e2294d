// SPDX-License-Identifier: Apache-2.0
// The one line a rank's `up --dry-run --json` prints and `up --all-nodes` reads back: every
// field survives the trip, and an answer missing one is named, not taken for a default.

#include "group/dry_run_answer.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

DryRunAnswer sample() {
  return DryRunAnswer{.profile = "k26-ar",
                      .unit = "gpulaunch-k26-ar.service",
                      .path = "/etc/systemd/system/gpulaunch-k26-ar.service",
                      .action = UnitAction::restart,
                      .unit_changed = true,
                      .diff = "--- a\n+++ b\n",
                      .check_errors = 2,
                      .check_warnings = 1,
                      .refuse = true};
}

TEST(DryRunAnswer, EveryFieldSurvivesTheTripThroughItsJson) {
  const DryRunAnswer answer = sample();
  auto read = read_dry_run_answer(nlohmann::ordered_json::parse(dry_run_json(answer).dump()));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->profile, answer.profile);
  EXPECT_EQ(read->unit, answer.unit);
  EXPECT_EQ(read->path, answer.path);
  EXPECT_EQ(read->action, UnitAction::restart);
  EXPECT_TRUE(read->unit_changed);
  EXPECT_EQ(read->diff, answer.diff);
  EXPECT_EQ(read->check_errors, 2);
  EXPECT_EQ(read->check_warnings, 1);
  EXPECT_TRUE(read->refuse);
}

// What scripts and the integration tests read: the keys as documented in the manual.
TEST(DryRunAnswer, TheJsonSpellsTheDocumentedKeys) {
  EXPECT_EQ(dry_run_json(sample()).dump(),
            R"({"profile":"k26-ar","unit":"gpulaunch-k26-ar.service",)"
            R"("path":"/etc/systemd/system/gpulaunch-k26-ar.service","action":"restart",)"
            R"("unit_changed":true,"diff":"--- a\n+++ b\n",)"
            R"("check":{"errors":2,"warnings":1,"refuse":true}})");
}

TEST(DryRunAnswer, AMissingOrMistypedMemberIsNamed) {
  auto json = dry_run_json(sample());
  json["check"].erase("refuse");
  auto read = read_dry_run_answer(json);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message, "the dry run's answer has no 'check.refuse'");

  json = dry_run_json(sample());
  json["unit_changed"] = "yes";
  read = read_dry_run_answer(json);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message, "the dry run's answer has a 'unit_changed' of the wrong type");

  json = dry_run_json(sample());
  json["action"] = "reload";
  read = read_dry_run_answer(json);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message, "the dry run's answer has an unknown 'action' 'reload'");
}

}  // namespace
}  // namespace gl
