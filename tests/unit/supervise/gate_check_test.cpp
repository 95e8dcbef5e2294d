// SPDX-License-Identifier: Apache-2.0
// The upgrade gate's decisions around a running engine, on fakes: which profile and rank gate,
// where the gate asks, the running engine against its record (passed, failed, unanswered, no
// record, unreadable record), a new record, what `up` does with each outcome, and the record
// file in the state directory.

#include "supervise/gate_check.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "fakes/supervise/fake_gate.hpp"
#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "temp_dir.hpp"

namespace gl {
namespace {

using testing::FakeGateEngine;
using testing::FakeGateRecords;
using testing::TempDir;

Profile load(const std::string& text) {
  MemorySource source({{"/p/gated.toml", text}});
  auto profile = load_profile(source, "gated");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value_or(Profile{});
}

constexpr const char* kGated = R"(
[engine]
kind = "sglang"
venv = "/opt/venv"
[model]
path = "/models/m"
[server]
port = 31401
[gate]
prompts = ["The capital of France is", "2 + 2 ="]
min_throughput = 0.5
)";

constexpr const char* kUngated = R"(
[engine]
kind = "sglang"
venv = "/opt/venv"
[model]
path = "/models/m"
)";

GateMeasurement measurement(const std::string& paris, double tokens_per_second) {
  GateMeasurement measured;
  measured.answers = {{"The capital of France is", paris, 8}, {"2 + 2 =", " 4", 1}};
  measured.tokens_per_second = tokens_per_second;
  measured.load_tokens = 64;
  measured.load_time = std::chrono::milliseconds{200};
  return measured;
}

FakeGateRecords recorded(const GateMeasurement& measured) {
  FakeGateRecords records;
  records.record = GateRecord{measured, 42, "0.5.6"};
  return records;
}

TEST(GateCheck, RankZeroOfAProfileWithPromptsOnAKnownEngineGates) {
  const Profile profile = load(kGated);
  EXPECT_TRUE(gate_applies(profile, make_launch_plan(profile)));

  LaunchPlan rank1 = make_launch_plan(profile);
  rank1.node_rank = 1;
  auto refused = gate_applies(profile, rank1);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "profile 'gated' gates once, through rank 0: run the gate on rank 0's node (this is "
            "rank 1)");

  const Profile ungated = load(kUngated);
  refused = gate_applies(ungated, make_launch_plan(ungated));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "profile 'gated' has no upgrade gate: add [gate] prompts");
}

TEST(GateCheck, TheEndpointIsTheCompletionsApiWithTheServedNameLivenessTimeoutAndKey) {
  const Profile profile = load(kGated);
  const LaunchPlan plan = make_launch_plan(profile);
  const GateEndpoint endpoint = gate_endpoint(profile, plan, "secret");
  EXPECT_EQ(endpoint.path, "/v1/completions");
  EXPECT_EQ(endpoint.model, served_model_name(profile, plan));
  EXPECT_FALSE(endpoint.model.empty());
  EXPECT_EQ(endpoint.api_key, "secret");
  EXPECT_EQ(endpoint.timeout,
            std::chrono::duration_cast<std::chrono::milliseconds>(plan.liveness.timeout));
}

TEST(GateCheck, AnEngineThatAnswersAsRecordedPassesAgainstItsFloor) {
  const Profile profile = load(kGated);
  const FakeGateRecords records = recorded(measurement(" Paris.", 320));
  FakeGateEngine engine(measurement(" Paris.", 300));
  const GateCheck check = check_gate(profile.gate, records, engine);
  EXPECT_EQ(check.outcome, GateOutcome::passed);
  EXPECT_EQ(gate_outcome_name(check.outcome), "passed");
  EXPECT_DOUBLE_EQ(check.floor, 160.0);
  ASSERT_TRUE(check.measured);
  EXPECT_DOUBLE_EQ(check.measured->tokens_per_second, 300.0);
  EXPECT_TRUE(check.failures.empty());
  EXPECT_FALSE(gate_rolls_back(check));
  ASSERT_EQ(engine.asked.size(), 1u);
  EXPECT_EQ(engine.asked[0].prompts, profile.gate.prompts);
}

TEST(GateCheck, AnotherAnswerOrASlowerLoadFailsAndRollsBackNamingEach) {
  const Profile profile = load(kGated);
  const FakeGateRecords records = recorded(measurement(" Paris.", 320));
  FakeGateEngine engine(measurement(" Sirap q.", 64));
  const GateCheck check = check_gate(profile.gate, records, engine);
  EXPECT_EQ(check.outcome, GateOutcome::failed);
  EXPECT_TRUE(gate_rolls_back(check));
  ASSERT_EQ(check.failures.size(), 2u);
  EXPECT_TRUE(check.failures[0].starts_with(
      "prompt 1 'The capital of France is' differs from the record at character 1"))
      << check.failures[0];
  EXPECT_TRUE(check.failures[1].starts_with(
      "throughput 64.0 tok/s is below the floor 160.0 tok/s (50% of the recorded 320.0 tok/s"))
      << check.failures[1];
  EXPECT_EQ(check.summary(), check.failures[0] + "; " + check.failures[1]);
}

TEST(GateCheck, AnEngineThatDoesNotAnswerTheGateRollsBack) {
  const Profile profile = load(kGated);
  const FakeGateRecords records = recorded(measurement(" Paris.", 320));
  FakeGateEngine engine(fail("the gate ran past its 60s bound with 2 request(s) unanswered"));
  const GateCheck check = check_gate(profile.gate, records, engine);
  EXPECT_EQ(check.outcome, GateOutcome::unanswered);
  EXPECT_TRUE(gate_rolls_back(check));
  EXPECT_EQ(check.summary(), "the gate ran past its 60s bound with 2 request(s) unanswered");
  EXPECT_FALSE(check.measured);
}

TEST(GateCheck, NoRecordOrAnUnreadableOneAsksNothingAndKeepsTheUnit) {
  const Profile profile = load(kGated);
  FakeGateRecords none;
  FakeGateEngine engine(measurement(" Paris.", 320));
  GateCheck check = check_gate(profile.gate, none, engine);
  EXPECT_EQ(check.outcome, GateOutcome::no_record);
  EXPECT_FALSE(gate_rolls_back(check));

  FakeGateRecords bad;
  bad.load_error = "Failed to read '/var/lib/gpulaunch/gated/gate.json': not JSON";
  check = check_gate(profile.gate, bad, engine);
  EXPECT_EQ(check.outcome, GateOutcome::record_unreadable);
  EXPECT_EQ(check.summary(), bad.load_error);
  EXPECT_FALSE(gate_rolls_back(check));
  EXPECT_TRUE(engine.asked.empty());
}

TEST(GateCheck, RecordingKeepsTheMeasurementWithItsTimeAndEngineVersion) {
  const Profile profile = load(kGated);
  FakeGateRecords records;
  FakeGateEngine engine(measurement(" Paris.", 320));
  auto record = record_gate(profile.gate, records, engine, 1234, "0.5.6+mock.good");
  ASSERT_TRUE(record) << record.error().message;
  ASSERT_TRUE(records.record);
  EXPECT_EQ(records.saves, 1);
  EXPECT_EQ(records.record->recorded_usec, 1234);
  EXPECT_EQ(records.record->engine_version, "0.5.6+mock.good");
  EXPECT_DOUBLE_EQ(records.record->measured.tokens_per_second, 320.0);

  FakeGateEngine silent(fail("no answer"));
  FakeGateRecords untouched;
  EXPECT_FALSE(record_gate(profile.gate, untouched, silent, 1, ""));
  EXPECT_EQ(untouched.saves, 0);
}

TEST(GateCheck, UpGatesOnlyAChangedSystemUnitOnRankZero) {
  const Profile profile = load(kGated);
  const LaunchPlan plan = make_launch_plan(profile);
  UpGate gates = up_gates(profile, plan, true, false);
  EXPECT_TRUE(gates.run);
  EXPECT_EQ(gates.note, "");

  gates = up_gates(profile, plan, false, false);  // nothing changed
  EXPECT_FALSE(gates.run);
  EXPECT_EQ(gates.note, "");

  const Profile ungated = load(kUngated);
  gates = up_gates(ungated, make_launch_plan(ungated), true, false);
  EXPECT_FALSE(gates.run);
  EXPECT_EQ(gates.note, "");

  LaunchPlan rank1 = plan;
  rank1.node_rank = 1;
  gates = up_gates(profile, rank1, true, false);  // rank 0 gates the group
  EXPECT_FALSE(gates.run);
  EXPECT_EQ(gates.note, "");

  gates = up_gates(profile, plan, true, true);
  EXPECT_FALSE(gates.run);
  EXPECT_NE(gates.note.find("not run for a --user unit"), std::string::npos) << gates.note;
}

TEST(GateRecordFile, ReadsBackWhatItWroteOwnerOnly) {
  TempDir dir;
  GateRecordFile file(dir.path() / "gated" / "gate.json");
  auto nothing = file.load();
  ASSERT_TRUE(nothing) << nothing.error().message;
  EXPECT_FALSE(*nothing);

  ASSERT_TRUE(file.save(GateRecord{measurement(" Paris.", 320), 42, "0.5.6"}));
  auto back = file.load();
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(*back);
  EXPECT_EQ((*back)->measured.answers[0].text, " Paris.");
  EXPECT_DOUBLE_EQ((*back)->measured.tokens_per_second, 320.0);
  EXPECT_EQ((*back)->engine_version, "0.5.6");
  struct stat st {};
  ASSERT_EQ(::stat(file.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// Root keeps the record in its own state: never in a directory another user could write, never
// through a link planted at the record's name.
TEST(GateRecordFile, RootWritesNoRecordWhereAnotherUserCould) {
  if (::geteuid() != 0) GTEST_SKIP() << "the check is root's: run as root";
  TempDir dir;
  const auto open = dir.path() / "open";
  std::filesystem::create_directories(open);
  std::filesystem::permissions(open, std::filesystem::perms::all);  // 0777, no sticky bit
  auto written = GateRecordFile(open / "gated" / "gate.json")
                     .save(GateRecord{measurement(" Paris.", 320), 42, "0.5.6"});
  ASSERT_FALSE(written);
  EXPECT_NE(written.error().message.find(open.string()), std::string::npos)
      << written.error().message;
  EXPECT_FALSE(std::filesystem::exists(open / "gated" / "gate.json"));

  const auto owned = dir.path() / "owned";
  std::filesystem::create_directories(owned);
  std::filesystem::create_symlink(dir.path() / "elsewhere.json", owned / "gate.json");
  // Replaced by a fresh file, or refused; never written through.
  (void)GateRecordFile(owned / "gate.json")
      .save(GateRecord{measurement(" Paris.", 320), 42, "0.5.6"});
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "elsewhere.json"));
}

TEST(GateRecordFile, ABadRecordIsAnErrorNamingTheFile) {
  TempDir dir;
  const auto path = dir.write("gate.json", R"({"answers": 3})");
  auto read = GateRecordFile(path).load();
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message,
            "Failed to read '" + path.string() + "': gate record: 'answers' is not a list");
}

}  // namespace
}  // namespace gl
