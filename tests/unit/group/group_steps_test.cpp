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
  std::uint64_t files[2] = {1, 1};
  std::string fingerprint[2] = {"f1", "f1"};
  int import_exit = 0;  // what `cache import` answers on the rank seeded
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
    // Streamed: the export's stdout is the archive, its stderr (all the fake's output) the report.
    if (command == "cache" && args.size() > 1 && args[1] == "export")
      return {0, "exported flashinfer: 1 file(s), 10 B\nwrote stdout\n", ""};
    if (command == "cache" && args.size() > 1 && args[1] == "import")
      return import_exit == 0 ? FakeRankRunner::Answer{0, "imported flashinfer\n", ""}
                              : FakeRankRunner::Answer{import_exit,
                                                       "error: Failed to import cache "
                                                       "'flashinfer': torch_version 2.9.1 here, "
                                                       "2.9.0 in the archive\n",
                                                       ""};
    if (command == "cache") {
      CacheDigest cache{
          "flashinfer", "/var/cache/gpulaunch/pair/flashinfer", fingerprint[r], false, {}};
      cache.digest.sha256 = digest[r];
      cache.digest.files = files[r];
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

// Compiled for other facts on each rank: no rank's copy can seed the other, so it is cleared.
TEST(GroupSteps, ACacheThatMatchesNoOneIsClearedOnEveryRankBeforeTheStart) {
  Group group;
  group.digest[1] = std::string(64, 'b');
  group.fingerprint[1] = "f2";
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(up_group(pair(), GroupOptions{}, runner, output), 0) << output.text();
  EXPECT_THAT(runner.commands, Contains("node-a: cache clear pair flashinfer"));
  EXPECT_THAT(runner.commands, Contains("node-b: cache clear pair flashinfer"));
  EXPECT_THAT(runner.commands, Not(Contains(HasSubstr("cache export"))));
  EXPECT_THAT(output.lines, Contains("  flashinfer: rank 1 differs (fingerprint f2, rank 0 f1); no "
                                     "rank's was compiled for facts every rank shares: cleared on "
                                     "all 2 ranks"));
}

// A new node: rank 0 compiled, rank 1's cache is empty. Rank 1 is seeded from rank 0 over ssh
// (export there streamed into import here) before any rank starts, and nothing is cleared.
TEST(GroupSteps, ANewRankIsSeededFromTheRankThatCompiledInsteadOfClearingBoth) {
  Group group;
  group.digest[1] = std::string(64, 'e');
  group.files[1] = 0;
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(up_group(pair(), GroupOptions{}, runner, output), 0) << output.text();
  const std::string seed =
      "node-a: cache export pair flashinfer -o - | node-b: cache import pair -";
  EXPECT_THAT(runner.commands, Contains(seed));
  EXPECT_LT(position(runner.commands, seed),
            position(runner.commands, "node-a: up pair --node-rank 0"));
  EXPECT_THAT(runner.commands, Not(Contains(HasSubstr("cache clear"))));
  EXPECT_THAT(output.lines,
              Contains("  flashinfer: rank 1 has none, rank 0 has files (digest aaaaaaaaaaaa, 1 "
                       "file(s)); seeded rank 1 (node-b) from rank 0 (node-a)"));
  EXPECT_THAT(output.errors, IsEmpty());
}

// Same facts, other content: the copy with more compiled entries seeds the other, whichever
// rank holds it.
TEST(GroupSteps, TheFullerCopySeedsTheOtherRank) {
  Group group;
  group.digest[1] = std::string(64, 'b');
  group.files[1] = 7;
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(up_group(pair(), GroupOptions{}, runner, output), 0) << output.text();
  EXPECT_THAT(runner.commands,
              Contains("node-b: cache export pair flashinfer -o - | node-a: cache import pair -"));
  EXPECT_THAT(output.text(), HasSubstr("; seeded rank 0 (node-a) from rank 1 (node-b)\n"));
}

// The target refuses the archive (its facts moved since it was read): the cache still differs,
// so it is cleared on every rank, and the import's own line says why.
TEST(GroupSteps, ASeedTheTargetRefusesFallsBackToClearingOnEveryRank) {
  Group group;
  group.digest[1] = std::string(64, 'e');
  group.files[1] = 0;
  group.import_exit = 1;
  auto runner = runner_for(group);
  Output output;
  EXPECT_EQ(up_group(pair(), GroupOptions{}, runner, output), 0) << output.text();
  EXPECT_THAT(runner.commands, Contains("node-a: cache clear pair flashinfer"));
  EXPECT_THAT(runner.commands, Contains("node-b: cache clear pair flashinfer"));
  EXPECT_THAT(output.text(),
              HasSubstr("; seeding from rank 0 (node-a) failed (below): cleared on all 2 ranks\n"));
  EXPECT_THAT(output.text(),
              HasSubstr("  rank 1 (node-b) from rank 0 (node-a): the import failed: exit 1\n"));
  EXPECT_THAT(output.text(), HasSubstr("    error: Failed to import cache 'flashinfer': "
                                       "torch_version 2.9.1 here, 2.9.0 in the archive\n"));
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
