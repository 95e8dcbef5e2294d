// SPDX-License-Identifier: Apache-2.0
// `up|down|restart --all-nodes` decided against ranks in memory: what runs on which rank, in
// which order, and the lines an operator reads, for a group that starts, runs unchanged, changed
// while it runs, disagrees on caches, or answers something that is not a dry run.

#include "group/group_steps.hpp"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "caches/cache_digest.hpp"
#include "fakes/group/fake_rank_runner.hpp"
#include "group/dry_run_answer.hpp"
#include "profile/memory_source.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using testing::FakeRankRunner;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr const char* kPair = R"([engine]
kind = "KIND"
venv = "/opt/venv"

[model]
path = "/models/m"

[parallelism]
tp = 8

[nodes]
hosts = ["node-a", "node-b"]

[server]
port = 30000
)";

Profile pair(const std::string& kind = "sglang") {
  std::string text = kPair;
  text.replace(text.find("KIND"), 4, kind);
  MemorySource source({{"/p/pair.toml", text}});
  auto profile = load_profile(source, "pair");
  EXPECT_TRUE(profile) << (profile ? "" : profile.error().message);
  return *profile;
}

class Output final : public GroupOutput {
 public:
  void line(const std::string& text) override { lines.push_back(text); }
  void error(const std::string& text) override { errors.push_back(text); }
  std::string text() const {
    std::string all;
    for (const auto& line : lines) all += line + "\n";
    return all;
  }
  std::vector<std::string> lines;
  std::vector<std::string> errors;
};

// A group whose ranks answer as the real gpulaunch does, shaped by the fields below.
struct Group {
  UnitAction action[2] = {UnitAction::start, UnitAction::start};
  std::string digest[2] = {std::string(64, 'a'), std::string(64, 'a')};
  int check_exit[2] = {0, 0};
  std::string dry_run_override;  // rank 1's whole dry-run answer, when set

  FakeRankRunner::Answer respond(long long rank, const std::vector<std::string>& args) const {
    const std::string& command = args.front();
    const auto r = static_cast<size_t>(rank);
    if (command == "check")
      return {check_exit[r], check_exit[r] ? "ERRORS (1)\n" : "OK, nothing blocks a start\n", ""};
    if (command == "up" && std::ranges::find(args, "--dry-run") != args.end()) {
      if (rank == 1 && !dry_run_override.empty()) return {0, dry_run_override + "\n", ""};
      DryRunAnswer answer;
      answer.profile = "pair";
      answer.unit = "gpulaunch-pair.service";
      answer.path = "/etc/systemd/system/gpulaunch-pair.service";
      answer.action = action[r];
      // ssh joins stderr: a warning line may come before the document.
      return {0, "warning: something\n" + dry_run_json(answer).dump() + "\n", ""};
    }
    if (command == "up") return {0, "ready: pair serves\n", ""};
    if (command == "rendezvous-probe")
      return {0, rank == 0 ? "listened on port 5000: rank(s) 1 connected\n" : "reaches\n", ""};
    if (command == "cache" && args.size() > 1 && args[1] == "clear") return {0, "cleared\n", ""};
    if (command == "cache") {
      CacheDigest cache{"flashinfer", "/var/cache/gpulaunch/pair/flashinfer", "f1", false, {}};
      cache.digest.sha256 = digest[r];
      cache.digest.files = 1;
      cache.digest.bytes = 10;
      const nlohmann::ordered_json report{{"caches", cache_digests_json({cache})}};
      return {0, report.dump() + "\n", ""};
    }
    if (command == "down") return {0, "stopped gpulaunch-pair.service\n", ""};
    return {2, "unexpected command\n", ""};
  }
};

FakeRankRunner runner_for(const Group& group) {
  return FakeRankRunner({"node-a", "node-b"},
                        [&group](long long rank, const std::vector<std::string>& args) {
                          return group.respond(rank, args);
                        });
}

size_t position(const std::vector<std::string>& commands, const std::string& command) {
  return static_cast<size_t>(std::ranges::find(commands, command) - commands.begin());
}

TEST(GroupSteps, UpChecksEveryRankThenAgreesThenStartsEveryRank) {
  Group group;
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(up_group(pair(), GroupOptions{}, runner, output), 0) << output.text();
  EXPECT_THAT(runner.commands,
              ElementsAre("node-a: check pair", "node-b: check pair",
                          "node-a: up pair --node-rank 0 --dry-run --json --force",
                          "node-b: up pair --node-rank 1 --dry-run --json --force",
                          "node-a: rendezvous-probe pair --node-rank 0 --within 10",
                          "node-b: rendezvous-probe pair --node-rank 1 --within 10",
                          "node-a: cache pair --json", "node-b: cache pair --json",
                          "node-a: up pair --node-rank 0", "node-b: up pair --node-rank 1"));
  EXPECT_THAT(output.text(), HasSubstr("caches agree on all 2 ranks: nothing cleared\n"));
  EXPECT_THAT(output.errors, IsEmpty());
}

TEST(GroupSteps, AGroupThatRunsUnchangedEverywhereIsLeftAlone) {
  Group group;
  group.action[0] = group.action[1] = UnitAction::none;
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(up_group(pair(), GroupOptions{}, runner, output), 0);
  EXPECT_THAT(output.lines, Contains("'pair' runs unchanged on all 2 node(s): nothing to do"));
  EXPECT_THAT(runner.commands, Not(Contains("node-a: up pair --node-rank 0")));
}

// A multi-node engine cannot take a rank back into a running group: all stop, then all start.
TEST(GroupSteps, AGroupChangedWhileItRunsStopsEveryRankBeforeAnyStarts) {
  Group group;
  group.action[0] = UnitAction::restart;
  group.action[1] = UnitAction::none;
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(up_group(pair(), GroupOptions{}, runner, output), 0) << output.text();
  const auto& commands = runner.commands;
  const size_t first_start = position(commands, "node-a: up pair --node-rank 0");
  ASSERT_LT(first_start, commands.size());
  EXPECT_LT(position(commands, "node-a: down pair"), first_start);
  EXPECT_LT(position(commands, "node-b: down pair"), first_start);
  EXPECT_LT(position(commands, "node-b: down pair"),
            position(commands, "node-a: rendezvous-probe pair --node-rank 0 --within 10"));
  EXPECT_THAT(output.lines,
              Contains("'pair' changed while it runs: the group restarts together, every rank "
                       "stopped first"));
}

TEST(GroupSteps, ACacheThatDiffersIsClearedOnEveryRankBeforeTheStart) {
  Group group;
  group.digest[1] = std::string(64, 'b');
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(up_group(pair(), GroupOptions{}, runner, output), 0) << output.text();
  EXPECT_THAT(runner.commands, Contains("node-a: cache clear pair flashinfer"));
  EXPECT_THAT(runner.commands, Contains("node-b: cache clear pair flashinfer"));
  EXPECT_THAT(output.text(), HasSubstr("; cleared on all 2 ranks\n"));
}

TEST(GroupSteps, ACheckErrorOnOneRankStartsNothingWithoutForce) {
  Group group;
  group.check_exit[1] = 1;
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(up_group(pair(), GroupOptions{}, runner, output), 1);
  EXPECT_THAT(runner.commands, ElementsAre("node-a: check pair", "node-b: check pair"));
  EXPECT_THAT(output.text(), HasSubstr("  rank 1 (node-b): check FAILED, the start would fail "
                                       "there\n    ERRORS (1)\n"));
  EXPECT_THAT(output.errors,
              ElementsAre("Refusing to start 'pair': the check found errors on a node above. Fix "
                          "them, or pass --force to start anyway."));

  Output forced;
  auto again = runner_for(group);
  EXPECT_EQ(up_group(pair(), GroupOptions{true, false, false}, again, forced), 0) << forced.text();
  EXPECT_THAT(again.commands, Contains("node-b: up pair --node-rank 1 --force"));
}

// An answer that is not a dry run's (another program, a truncated line) is not taken for "start".
TEST(GroupSteps, ARankThatDoesNotAnswerADryRunStartsNothing) {
  Group group;
  group.dry_run_override = R"({"action": "start"})";
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(up_group(pair(), GroupOptions{}, runner, output), 1);
  EXPECT_THAT(output.lines, Contains("  rank 1 (node-b): could not tell what up would do: the dry "
                                     "run's answer has no 'profile'"));
  EXPECT_THAT(output.errors, ElementsAre("Refusing to start 'pair': not every node answered."));
  EXPECT_THAT(runner.commands, Not(Contains("node-a: up pair --node-rank 0")));
}

TEST(GroupSteps, TheGroupsDryRunSaysWhatEachRankWouldDo) {
  Group group;
  group.action[1] = UnitAction::restart;
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(up_group_dry_run(pair(), GroupOptions{}, false, runner, output), 0);
  EXPECT_THAT(output.lines,
              ElementsAre("dry run: nothing is changed on any of 2 node(s)",
                          "  rank 0 (node-a): action start, unit unchanged, check 0 error(s), 0 "
                          "warning(s)",
                          "  rank 1 (node-b): action restart, unit unchanged, check 0 error(s), 0 "
                          "warning(s)"));
}

// vLLM's rank 1 runs --headless and ends, failed, once rank 0 is gone: it is stopped first.
TEST(GroupSteps, DownStopsHeadlessRanksBeforeRankZero) {
  Group group;
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(down_group(pair("vllm"), GroupOptions{}, runner, output), 0);
  EXPECT_THAT(runner.commands, ElementsAre("node-b: down pair", "node-a: down pair"));
}

}  // namespace
}  // namespace gl
