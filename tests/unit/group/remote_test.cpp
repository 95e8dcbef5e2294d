// SPDX-License-Identifier: Apache-2.0
// Multi-node profiles: hosts in rank order, the ssh command line each rank gets, and
// `up|status|down --all-nodes` driven through a stand-in ssh that runs the remote command here.

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "group/remote.hpp"
#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "temp_dir.hpp"
#include "unit/render.hpp"
#include "util/process.hpp"

namespace gl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kTwoNodes = R"([engine]
kind = "sglang"
venv = "/opt/venv"

[model]
path = "/models/m"

[parallelism]
tp = 8

[nodes]
hosts = ["10.0.0.1", "10.0.0.2"]
ssh_user = "gl"
ssh_port = 2222
ssh_identity = "/etc/gpulaunch/id_ed25519"
ssh_known_hosts = "/etc/gpulaunch/known_hosts"

[server]
port = 30000
)";

Result<Profile> profile_from(const std::string& text) {
  MemorySource source({{"/p/pair.toml", text}});
  return load_profile(source, "pair");
}

TEST(Nodes, HostsSetTheNodeCountAndRankZerosAddress) {
  auto profile = profile_from(kTwoNodes);
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_THAT(profile->nodes.hosts, ElementsAre("10.0.0.1", "10.0.0.2"));
  EXPECT_EQ(profile->parallelism.nodes, 2);
  EXPECT_EQ(profile->parallelism.dist_init_addr, "10.0.0.1:5000");
  EXPECT_EQ(profile->gpus_per_node(), 4);
}

TEST(Nodes, EachRankRendersItsOwnRank) {
  auto profile = profile_from(kTwoNodes);
  ASSERT_TRUE(profile);
  auto rank1 = render_unit(*profile, make_launch_plan(*profile, LaunchOptions{1}), RenderOptions{})
                   .to_text();
  EXPECT_THAT(rank1,
              HasSubstr(R"("--nnodes" "2" "--node-rank" "1" "--dist-init-addr" "10.0.0.1:5000")"));
}

TEST(Nodes, SshGetsBatchModeTheProfilesOptionsAndAQuotedCommand) {
  auto profile = profile_from(kTwoNodes);
  ASSERT_TRUE(profile);
  EXPECT_THAT(ssh_args(profile->nodes, "10.0.0.2", {"up", "pair", "--node-rank", "1"}),
              ElementsAre("-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-p", "2222", "-i",
                          "/etc/gpulaunch/id_ed25519", "-o", "IdentitiesOnly=yes", "-o",
                          "UserKnownHostsFile=/etc/gpulaunch/known_hosts", "-o",
                          "StrictHostKeyChecking=yes", "-l", "gl", "10.0.0.2", "--",
                          "/usr/bin/gpulaunch up pair --node-rank 1 2>&1"));
}

// Without the profile's known_hosts, ssh checks the system's, still strictly: an unknown host is
// refused, never learned (no accept-new, whatever ssh_config says).
TEST(Nodes, HostKeysAreCheckedStrictlyWithoutAProfileKnownHostsToo) {
  std::string text = kTwoNodes;
  const std::string line = "ssh_known_hosts = \"/etc/gpulaunch/known_hosts\"\n";
  text.erase(text.find(line), line.size());
  auto profile = profile_from(text);
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_THAT(ssh_args(profile->nodes, "10.0.0.2", {"status", "pair"}),
              ElementsAre("-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-p", "2222", "-i",
                          "/etc/gpulaunch/id_ed25519", "-o", "IdentitiesOnly=yes", "-o",
                          "StrictHostKeyChecking=yes", "-l", "gl", "10.0.0.2", "--",
                          "/usr/bin/gpulaunch status pair 2>&1"));
}

TEST(Nodes, ShellQuotingSurvivesTheRemoteShell) {
  EXPECT_EQ(shell_quote("plain-1.0"), "plain-1.0");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's $HOME"), "'it'\\''s $HOME'");
  auto echoed = run_process("/bin/sh", {"-c", "printf %s " + shell_quote("it's $HOME; `x`")});
  ASSERT_TRUE(echoed);
  EXPECT_EQ(echoed->out, "it's $HOME; `x`");
}

// A stand-in for ssh: logs "HOST COMMAND", then runs the command here with $HOST set, as the
// remote shell would. A stand-in gpulaunch logs its argv per host and answers like the real one.
class AllNodes : public ::testing::Test {
 protected:
  AllNodes() {
    ssh_ =
        dir_.write(
                "ssh",
                "#!/bin/sh\n"
                "host=\n"
                "while [ $# -gt 0 ]; do\n"
                "  case \"$1\" in\n"
                "    -o|-p|-i|-l) shift 2 ;;\n"
                "    --) shift; break ;;\n"
                "    *) host=$1; shift ;;\n"
                "  esac\n"
                "done\n"
                "[ \"$host\" = \"$UNREACHABLE\" ] && exit 255\n"
                "echo \"$host $1\" >> \"$LOG_DIR/ssh.log\"\n"
                // A root helper's command clears its environment (env -i); the stand-in
                // gpulaunch still needs to know where it runs and where to log.
                "command=$(printf '%s' \"$1\" | sed \"s| -i | -i HOST=$host LOG_DIR=$LOG_DIR |\")\n"
                "HOST=$host exec /bin/sh -c \"$command\"\n")
            .string();
    const auto gpulaunch =
        dir_.write("gpulaunch",
                   "#!/bin/sh\n"
                   "echo \"$*\" >> \"$LOG_DIR/$HOST.argv\"\n"
                   "case \"$1\" in\n"
                   "  check) if [ \"$HOST\" = \"$FAIL_CHECK_ON\" ]; then\n"
                   "      echo 'ERRORS (1)'; exit 1; fi\n"
                   "    echo 'OK, nothing blocks a start' ;;\n"
                   // `up --dry-run --json`: what GROUP_STATE says the group is.
                   "  up) if [ \"$5\" = --dry-run ]; then\n"
                   "      a=start\n"
                   "      [ \"$GROUP_STATE\" = unchanged ] && a=none\n"
                   "      [ \"$GROUP_STATE\" = changed ] && a=restart\n"
                   // The whole answer, as group/dry_run_answer writes it.
                   "      echo \"{\\\"profile\\\": \\\"$2\\\", \\\"unit\\\": "
                   "\\\"gpulaunch-$2.service\\\", \\\"path\\\": "
                   "\\\"/etc/systemd/system/gpulaunch-$2.service\\\", \\\"action\\\": "
                   "\\\"$a\\\", \\\"unit_changed\\\": false, \\\"diff\\\": \\\"\\\", "
                   "\\\"check\\\": {\\\"errors\\\": 0, \\\"warnings\\\": 0, "
                   "\\\"refuse\\\": false}}\"; exit 0\n"
                   "    fi\n"
                   "    echo \"ready: $2 serves at http://$HOST:30000\" ;;\n"
                   "  status) echo \"$2: active (running)\" ;;\n"
                   "  down) echo \"stopped gpulaunch-$2.service\" ;;\n"
                   "  peer-failed) echo 'checking the unit'\n"
                   "    echo 'peer-failed: restart with the group: restart "
                   "after 1s' ;;\n"
                   // Rank 0 listens, the others reach it unless cut off.
                   "  rendezvous-probe) if [ \"$4\" = 0 ]; then\n"
                   "      echo 'listened on port 5000: rank(s) 1 connected'\n"
                   "    elif [ \"$HOST\" = \"$CUT_OFF\" ]; then\n"
                   "      echo 'cannot reach node-a:5000: no route (Network is "
                   "unreachable)'; exit 1\n"
                   "    else echo 'reaches node-a:5000'; fi ;;\n"
                   // `cache NAME --json`: one file in flashinfer, another
                   // one where CACHE_DIFFERS_ON names the host.
                   // `cache export` writes its archive to stdout unless EXPORT_FAILS_ON
                   // names the host; `cache import` keeps what it read from stdin.
                   "  cache) if [ \"$2\" = export ]; then\n"
                   "      [ \"$HOST\" = \"$EXPORT_FAILS_ON\" ] && { echo "
                   "'Failed to export' >&2; exit 1; }\n"
                   "      printf 'archive of %s from %s' \"$4\" \"$HOST\"; exit 0\n"
                   "    fi\n"
                   "    if [ \"$2\" = import ]; then\n"
                   "      cat > \"$LOG_DIR/$HOST.imported\"; echo imported; exit 0\n"
                   "    fi\n"
                   "    if [ \"$2\" = clear ]; then\n"
                   "      [ \"$HOST\" = \"$CLEAR_FAILS_ON\" ] && { echo "
                   "'Failed to clear'; exit 1; }\n"
                   "      echo \"removed /var/cache/gpulaunch/$3/$4\"; exit 0; "
                   "fi\n"
                   "    d=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
                   "    [ \"$HOST\" = \"$CACHE_DIFFERS_ON\" ] && "
                   "d=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n"
                   "    e=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
                   // A rank whose facts differ (FINGERPRINT_DIFFERS_ON) cannot be seeded.
                   "    f=00000000000000f1\n"
                   "    [ \"$HOST\" = \"$FINGERPRINT_DIFFERS_ON\" ] && f=00000000000000f2\n"
                   "    echo \"{\\\"caches\\\": {\"\n"
                   "    echo \"\\\"flashinfer\\\": {\\\"path\\\": "
                   "\\\"/c/flashinfer\\\", \\\"fingerprint\\\": "
                   "\\\"$f\\\", \\\"digest\\\": \\\"$d\\\", "
                   "\\\"files\\\": 1, \\\"bytes\\\": 6},\"\n"
                   "    echo \"\\\"triton\\\": {\\\"path\\\": "
                   "\\\"/c/triton\\\", \\\"fingerprint\\\": "
                   "\\\"00000000000000f1\\\", \\\"digest\\\": \\\"$e\\\", "
                   "\\\"files\\\": 0, \\\"bytes\\\": 0}}}\" ;;\n"
                   "esac\n");
    std::filesystem::permissions(ssh_, std::filesystem::perms::owner_all);
    std::filesystem::permissions(gpulaunch, std::filesystem::perms::owner_all);
    std::string text = kTwoNodes;
    text.replace(text.find("[server]"), 8,
                 "gpulaunch = \"" + gpulaunch.string() + "\"\n\n[server]");
    const std::string hosts = R"("10.0.0.1", "10.0.0.2")";
    text.replace(text.find(hosts), hosts.size(), R"("node-a", "node-b")");
    profile_ = dir_.write("pair.toml", text).string();
  }

  struct Run {
    int exit_code;
    std::string out;
  };

  Run gpulaunch(std::vector<std::string> args, std::vector<std::string> env = {}) {
    std::vector<std::string> env_args{"-i", "PATH=/usr/bin:/bin", "LOG_DIR=" + dir_.str()};
    env_args.insert(env_args.end(), env.begin(), env.end());
    env_args.push_back(GL_GPULAUNCH_BINARY);
    env_args.insert(env_args.end(), args.begin(), args.end());
    env_args.insert(env_args.end(), {"--ssh", ssh_});
    auto result = run_process("/usr/bin/env", env_args, std::chrono::seconds(30));
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    return result ? Run{result->exit_code, result->out} : Run{-1, ""};
  }

  std::vector<std::string> argv_seen(const std::string& host) const {
    std::ifstream in(dir_.path() / (host + ".argv"));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  Run record_exit_on_rank1(const std::vector<std::string>& stop_env,
                           const std::vector<std::string>& env = {});

  testing::TempDir dir_;
  std::string ssh_;
  std::string profile_;
};

TEST_F(AllNodes, UpChecksEveryNodeThenStartsEachRankWithItsRank) {
  auto run = gpulaunch({"up", profile_, "--all-nodes"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(argv_seen("node-a"),
              ElementsAre("check pair", "up pair --node-rank 0 --dry-run --json --force",
                          "rendezvous-probe pair --node-rank 0 --within 10", "cache pair --json",
                          "up pair --node-rank 0"));
  EXPECT_THAT(argv_seen("node-b"),
              ElementsAre("check pair", "up pair --node-rank 1 --dry-run --json --force",
                          "rendezvous-probe pair --node-rank 1 --within 10", "cache pair --json",
                          "up pair --node-rank 1"));
  EXPECT_THAT(run.out, HasSubstr("testing rank 0's rendezvous node-a:5000 from every rank\n"
                                 "  rank 0 (node-a): listened on port 5000: rank(s) 1 connected\n"
                                 "  rank 1 (node-b): reaches node-a:5000\n"));
  EXPECT_THAT(run.out, HasSubstr("  flashinfer: same on all 2 ranks (digest aaaaaaaaaaaa, 1 "
                                 "file(s))\n  triton: empty on all 2 ranks\n"
                                 "caches agree on all 2 ranks: nothing cleared\n"));
  EXPECT_THAT(run.out, HasSubstr("  rank 0 (node-a): check OK\n  rank 1 (node-b): check OK\n"));
  EXPECT_THAT(run.out, HasSubstr("starting 'pair' on 2 node(s), dist_init_addr node-a:5000\n"));
  EXPECT_THAT(run.out, HasSubstr("  rank 1 (node-b): ready: pair serves at http://node-b:30000\n"));
  EXPECT_THAT(run.out, HasSubstr("ready: 'pair' serves on all 2 node(s)\n"));
}

TEST_F(AllNodes, ACheckErrorOnOneNodeStartsNothingAnywhere) {
  auto run = gpulaunch({"up", profile_, "--all-nodes"}, {"FAIL_CHECK_ON=node-b"});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("  rank 1 (node-b): check FAILED, the start would fail there\n"
                                 "    ERRORS (1)\n"));
  EXPECT_THAT(argv_seen("node-a"), ElementsAre("check pair"));
  EXPECT_THAT(argv_seen("node-b"), ElementsAre("check pair"));
}

TEST_F(AllNodes, AnUnreachableNodeIsNamed) {
  auto run = gpulaunch({"up", profile_, "--all-nodes"}, {"UNREACHABLE=node-b"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("  rank 1 (node-b): could not check: ssh could not run the "
                                 "command on node-b (exit 255)"));
  EXPECT_THAT(argv_seen("node-a"), ElementsAre("check pair"));
}

TEST_F(AllNodes, StatusAndDownReportPerNode) {
  auto status = gpulaunch({"status", profile_, "--all-nodes"});
  EXPECT_EQ(status.exit_code, 0) << status.out;
  EXPECT_EQ(status.out,
            "rank 0 (node-a):\n    pair: active (running)\n"
            "rank 1 (node-b):\n    pair: active (running)\n");
  auto down = gpulaunch({"down", profile_, "--all-nodes", "--purge"});
  EXPECT_EQ(down.exit_code, 0) << down.out;
  EXPECT_EQ(down.out,
            "  rank 0 (node-a): stopped gpulaunch-pair.service\n"
            "  rank 1 (node-b): stopped gpulaunch-pair.service\n");
  EXPECT_THAT(argv_seen("node-b"), ElementsAre("status pair", "down pair --purge"));
}

// Both ranks' flashinfer caches were compiled for the same facts: the one rank 0 holds is
// streamed from its `cache export` into rank 1's `cache import`, and nothing is cleared.
TEST_F(AllNodes, ACacheThatDiffersIsSeededFromOneRankIntoTheOthersBeforeAnyStarts) {
  auto run = gpulaunch({"up", profile_, "--all-nodes"}, {"CACHE_DIFFERS_ON=node-b"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("  flashinfer: rank 1 differs (digest bbbbbbbbbbbb, 1 file(s), "
                                 "rank 0 digest aaaaaaaaaaaa, 1 file(s)); seeded rank 1 (node-b) "
                                 "from rank 0 (node-a)\n  triton: empty on all 2 ranks\n"));
  EXPECT_THAT(argv_seen("node-a"), ::testing::Contains("cache export pair flashinfer -o -"));
  EXPECT_THAT(argv_seen("node-b"), ::testing::Contains("cache import pair -"));
  std::ifstream imported(dir_.path() / "node-b.imported");
  std::stringstream archive;
  archive << imported.rdbuf();
  EXPECT_EQ(archive.str(), "archive of flashinfer from node-a");
  for (const auto* host : {"node-a", "node-b"})
    EXPECT_THAT(argv_seen(host), ::testing::Not(::testing::Contains("cache clear pair flashinfer")))
        << host;
  EXPECT_THAT(argv_seen("node-b").back(), "up pair --node-rank 1");
}

// Compiled for different facts, neither rank's cache can serve the other: cleared on both.
TEST_F(AllNodes, ACacheCompiledForDifferentFactsIsClearedOnEveryRankBeforeAnyStarts) {
  auto run = gpulaunch({"up", profile_, "--all-nodes"},
                       {"CACHE_DIFFERS_ON=node-b", "FINGERPRINT_DIFFERS_ON=node-b"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("  flashinfer: rank 1 differs (fingerprint 00000000000000f2, "
                                 "rank 0 00000000000000f1); no rank's was compiled for facts every "
                                 "rank shares: cleared on all 2 ranks\n  triton: empty on all 2 "
                                 "ranks\n"));
  for (const auto* host : {"node-a", "node-b"}) {
    EXPECT_THAT(argv_seen(host), ::testing::Contains("cache clear pair flashinfer")) << host;
    EXPECT_THAT(argv_seen(host), ::testing::Not(::testing::Contains(HasSubstr("cache export"))));
  }
  EXPECT_THAT(argv_seen("node-b").back(), "up pair --node-rank 1");
}

// A seed that fails leaves the caches differing: they are cleared on every rank instead.
TEST_F(AllNodes, ASeedThatFailsFallsBackToClearingOnEveryRank) {
  auto run = gpulaunch({"up", profile_, "--all-nodes"},
                       {"CACHE_DIFFERS_ON=node-b", "EXPORT_FAILS_ON=node-a"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("; seeding from rank 0 (node-a) failed (below): cleared on all 2 "
                                 "ranks\n  triton: empty on all 2 ranks\n"
                                 "  rank 1 (node-b) from rank 0 (node-a): the export failed: exit "
                                 "1\n    Failed to export\n"));
  for (const auto* host : {"node-a", "node-b"})
    EXPECT_THAT(argv_seen(host), ::testing::Contains("cache clear pair flashinfer")) << host;
  EXPECT_THAT(argv_seen("node-b").back(), "up pair --node-rank 1");
}

TEST_F(AllNodes, ARankWhereTheClearFailsIsNamedAndNothingStarts) {
  auto run = gpulaunch(
      {"up", profile_, "--all-nodes"},
      {"CACHE_DIFFERS_ON=node-b", "FINGERPRINT_DIFFERS_ON=node-b", "CLEAR_FAILS_ON=node-a"});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("  flashinfer: rank 1 differs (fingerprint 00000000000000f2, "
                                 "rank 0 00000000000000f1); no rank's was compiled for facts every "
                                 "rank shares: NOT cleared on rank 0 (node-a)\n"));
  for (const auto* host : {"node-a", "node-b"})
    EXPECT_THAT(argv_seen(host).back(), "cache clear pair flashinfer") << host;
}

TEST_F(AllNodes, ARankCutOffFromTheRendezvousIsNamedAndNothingStarts) {
  auto run = gpulaunch({"up", profile_, "--all-nodes"}, {"CUT_OFF=node-b"});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("  rank 1 (node-b): FAILED: cannot reach node-a:5000: no route "
                                 "(Network is unreachable)\n"));
  // The refusal itself (stderr) is asserted word for word in multinode_test.sh.
  EXPECT_THAT(argv_seen("node-b"),
              ElementsAre("check pair", "up pair --node-rank 1 --dry-run --json --force",
                          "rendezvous-probe pair --node-rank 1 --within 10"));
}

TEST_F(AllNodes, AGroupThatRunsUnchangedEverywhereIsLeftAlone) {
  auto run = gpulaunch({"up", profile_, "--all-nodes"}, {"GROUP_STATE=unchanged"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("'pair' runs unchanged on all 2 node(s): nothing to do\n"));
  EXPECT_THAT(argv_seen("node-b"),
              ElementsAre("check pair", "up pair --node-rank 1 --dry-run --json --force"));
}

// A multi-node engine cannot take a changed rank back into its running group: all stop first,
// and then the ranks agree (rank 0's engine no longer holds the rendezvous port).
TEST_F(AllNodes, AChangedRunningGroupStopsOnEveryRankBeforeAnyStarts) {
  auto run = gpulaunch({"up", profile_, "--all-nodes", "--no-rollback"}, {"GROUP_STATE=changed"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("'pair' changed while it runs: the group restarts together, "
                                 "every rank stopped first\n"));
  EXPECT_THAT(argv_seen("node-a"),
              ElementsAre("check pair", "up pair --node-rank 0 --dry-run --json --force",
                          "down pair", "rendezvous-probe pair --node-rank 0 --within 10",
                          "cache pair --json", "up pair --node-rank 0 --no-rollback"));
}

TEST_F(AllNodes, RestartStopsEveryRankBeforeAnyRankStarts) {
  auto run = gpulaunch({"restart", profile_, "--all-nodes"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  // Stopped, then the ranks agree (rendezvous, caches), then started.
  EXPECT_THAT(argv_seen("node-a"),
              ElementsAre("down pair", "rendezvous-probe pair --node-rank 0 --within 10",
                          "cache pair --json", "up pair --node-rank 0"));
  EXPECT_THAT(argv_seen("node-b"),
              ElementsAre("down pair", "rendezvous-probe pair --node-rank 1 --within 10",
                          "cache pair --json", "up pair --node-rank 1"));
  std::ifstream log(dir_.path() / "ssh.log");
  std::vector<std::string> order;
  for (std::string line; std::getline(log, line);) order.push_back(line.substr(line.find(' ') + 1));
  ASSERT_EQ(order.size(), 8u);
  EXPECT_THAT(order[0], HasSubstr(" down pair 2>&1"));
  EXPECT_THAT(order[1], HasSubstr(" down pair 2>&1"));
  EXPECT_THAT(order[6], HasSubstr(" up pair --node-rank "));
  EXPECT_THAT(order[7], HasSubstr(" up pair --node-rank "));
  EXPECT_THAT(run.out, HasSubstr("ready: 'pair' serves on all 2 node(s)\n"));
}

// `record-exit` as the unit's ExecStopPost= runs it on rank 1, then `events`. It writes the
// history under /var/lib/gpulaunch, so both run in a private mount namespace with a tmpfs there.
AllNodes::Run AllNodes::record_exit_on_rank1(const std::vector<std::string>& stop_env,
                                             const std::vector<std::string>& env) {
  const std::string binary = GL_GPULAUNCH_BINARY;
  std::vector<std::string> args = stop_env;
  args.insert(args.end(), env.begin(), env.end());
  args.insert(args.end(),
              {"unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
               "mount -t tmpfs gl-test /var/lib && '" + binary + "' record-exit --profile=pair " +
                   "--snapshot='" + profile_ + "' --node-rank=1 --ssh='" + ssh_ + "' && '" +
                   binary + "' events pair"});
  std::vector<std::string> env_args{"-i", "PATH=/usr/bin:/bin:/usr/sbin:/sbin",
                                    "LOG_DIR=" + dir_.str()};
  env_args.insert(env_args.end(), args.begin(), args.end());
  auto result = run_process("/usr/bin/env", env_args, std::chrono::seconds(30));
  EXPECT_TRUE(result) << (result ? "" : result.error().message);
  return result ? Run{result->exit_code, result->out} : Run{-1, ""};
}

// The failing rank's side of a group restart: needs root and a private mount namespace.
class GroupNotice : public AllNodes {
 protected:
  void SetUp() override {
    auto probe = run_process("/usr/bin/unshare", {"--mount", "true"});
    if (::geteuid() != 0 || !probe || probe->exit_code != 0)
      GTEST_SKIP() << "needs root and unshare --mount (record-exit writes /var/lib/gpulaunch)";
  }
};

TEST_F(GroupNotice, ARankThatStaysDownTellsEveryOtherRankAndRecordsTheirAnswers) {
  auto run =
      record_exit_on_rank1({"SERVICE_RESULT=exit-code", "EXIT_CODE=exited", "EXIT_STATUS=78"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  // Told over ssh: rank 0 only, never itself, with the classification and its evidence.
  EXPECT_TRUE(argv_seen("node-b").empty());
  EXPECT_THAT(argv_seen("node-a"),
              ElementsAre(::testing::StartsWith(
                  "peer-failed --profile=pair --from-rank=1 --from-host=node-b "
                  "--class=config-error --at=")));
  EXPECT_THAT(
      argv_seen("node-a")[0],
      ::testing::EndsWith(" --evidence=SERVICE_RESULT=exit-code EXIT_CODE=exited EXIT_STATUS=78"));
  // The other rank's gpulaunch runs as root there: with a clean environment.
  std::ifstream log(dir_.path() / "ssh.log");
  std::string notice;
  std::getline(log, notice);
  EXPECT_THAT(notice, HasSubstr("node-a /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin " +
                                (dir_.path() / "gpulaunch").string() + " peer-failed "));
  EXPECT_THAT(run.out, HasSubstr("action:   stay down: configuration error, not retried (fix "
                                 "the profile, then `gpulaunch up`); the group: rank 0 (node-a): "
                                 "restart with the group: restart after 1s\n"));
}

TEST_F(GroupNotice, AnUnreachableRankIsNamedInTheEvent) {
  auto run = record_exit_on_rank1(
      {"SERVICE_RESULT=exit-code", "EXIT_CODE=exited", "EXIT_STATUS=78"}, {"UNREACHABLE=node-a"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("the group: rank 0 (node-a): not told: ssh could not reach it "
                                 "(exit 255)\n"));
}

TEST_F(GroupNotice, ACleanStopTellsNoOne) {
  auto run =
      record_exit_on_rank1({"SERVICE_RESULT=success", "EXIT_CODE=killed", "EXIT_STATUS=TERM"});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("clean"));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "ssh.log"));
}

TEST_F(AllNodes, AProfileWithoutHostsIsRefused) {
  auto single = dir_.write("single.toml",
                           "[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n"
                           "[model]\npath = \"/models/m\"\n");
  auto run = gpulaunch({"up", single.string(), "--all-nodes"});
  EXPECT_EQ(run.exit_code, 2);
}

}  // namespace
}  // namespace gl
