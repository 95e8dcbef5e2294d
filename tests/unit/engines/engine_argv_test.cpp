// SPDX-License-Identifier: Apache-2.0
#include "engines/engine_argv.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "support/profile_text.hpp"

namespace gl {
namespace {

using testing::profile_from;

bool has_pair(const std::vector<std::string>& argv, std::string_view flag, std::string_view value) {
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag && argv[i + 1] == value) return true;
  return false;
}

TEST(SglangArgv, UsesFullFlagNamesNeverPrefixes) {
  auto argv = engine_argv(profile_from(R"(
[engine]
kind = "sglang"
venv = "/v"
[model]
path = "/m"
[parallelism]
tp = 8
pp = 2
ep = 4
[gpus]
count = 16
)"));
  EXPECT_EQ(argv[0], "/v/bin/python");
  EXPECT_TRUE(has_pair(argv, "--tensor-parallel-size", "8"));
  EXPECT_TRUE(has_pair(argv, "--pipeline-parallel-size", "2"));
  EXPECT_TRUE(has_pair(argv, "--expert-parallel-size", "4"));
  for (const auto& word : argv) {
    EXPECT_NE(word, "--tp");
    EXPECT_NE(word, "--tp-size");
  }
}

TEST(SglangArgv, NodeRankComesFromTheLaunch) {
  auto profile = profile_from(R"(
[engine]
kind = "sglang"
python = "/usr/bin/python3"
[model]
path = "/m"
[parallelism]
tp = 16
nodes = 2
dist_init_addr = "node0:5000"
)");
  EXPECT_TRUE(has_pair(engine_argv(profile, {.node_rank = 1}), "--node-rank", "1"));
  EXPECT_TRUE(has_pair(engine_argv(profile, {.node_rank = 1}), "--nnodes", "2"));
}

// SGLang's console script from 0.5.6 (catalog/engines); the flags stay the same.
// engine.cuda_graph_max_bs: --cuda-graph-max-bs-decode from 0.5.15 (#23906), the deprecated
// alias every release takes where the release is older or unknown.
TEST(SglangArgv, TheGraphBatchFlagFitsTheInstalledRelease) {
  auto profile = profile_from(R"(
[engine]
kind = "sglang"
venv = "/v"
cuda_graph_max_bs = 64
[model]
path = "/m"
)");
  EXPECT_TRUE(has_pair(engine_argv(profile, {.engine_version = "0.5.16"}),
                       "--cuda-graph-max-bs-decode", "64"));
  EXPECT_TRUE(
      has_pair(engine_argv(profile, {.engine_version = "0.5.6"}), "--cuda-graph-max-bs", "64"));
  EXPECT_TRUE(has_pair(engine_argv(profile), "--cuda-graph-max-bs", "64"));
  auto unknown = fitted_flags(profile, {});
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].flag, "--cuda-graph-max-bs-decode");
  EXPECT_EQ(unknown[0].spelling, "--cuda-graph-max-bs");
  EXPECT_TRUE(unknown[0].version_unknown);
}

TEST(SglangArgv, VenvWithServeStartsSglangServe) {
  auto profile = profile_from(R"(
[engine]
kind = "sglang"
venv = "/v"
[model]
path = "/m"
)");
  for (std::string version : {"0.5.6", "0.5.14.post2", "1.0.0rc1"}) {
    auto argv = engine_argv(profile, {.engine_version = version});
    ASSERT_GE(argv.size(), 4u);
    EXPECT_EQ(std::vector(argv.begin(), argv.begin() + 4),
              (std::vector<std::string>{"/v/bin/sglang", "serve", "--model-path", "/m"}))
        << version;
  }
}

TEST(SglangArgv, OlderOrUnknownReleasesKeepLaunchServer) {
  auto venv = profile_from(R"(
[engine]
kind = "sglang"
venv = "/v"
[model]
path = "/m"
)");
  const std::vector<std::string> launch_server{"/v/bin/python", "-m", "sglang.launch_server"};
  for (std::optional<std::string> version :
       {std::optional<std::string>{"0.5.5.post3"}, std::optional<std::string>{"0.4.10"},
        std::optional<std::string>{"not a version"}, std::optional<std::string>{}}) {
    auto argv = engine_argv(venv, {.engine_version = version});
    EXPECT_EQ(std::vector(argv.begin(), argv.begin() + 3), launch_server) << version.value_or("-");
  }
  // engine.python's bin/ may hold another install's script: the interpreter runs the module.
  auto python = profile_from(R"(
[engine]
kind = "sglang"
python = "/usr/bin/python3"
[model]
path = "/m"
)");
  auto argv = engine_argv(python, {.engine_version = "0.5.6"});
  EXPECT_EQ(std::vector(argv.begin(), argv.begin() + 3),
            (std::vector<std::string>{"/usr/bin/python3", "-m", "sglang.launch_server"}));
}

bool has_word(const std::vector<std::string>& argv, std::string_view word) {
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

// server.drain_timeout reaches vLLM as --shutdown-timeout (catalog/engines' DrainFacts: since
// 0.18.0), only where the installed release is known to take it.
TEST(VllmArgv, DrainTimeoutBecomesShutdownTimeoutFromItsFirstRelease) {
  auto profile = profile_from(R"(
[engine]
kind = "vllm"
venv = "/v"
[model]
path = "/m"
[server]
drain_timeout = "2min"
)");
  for (std::string version : {"0.18.0", "0.18.1", "0.20.0rc1"})
    EXPECT_TRUE(
        has_pair(engine_argv(profile, {.engine_version = version}), "--shutdown-timeout", "120"))
        << version;
  for (std::optional<std::string> version :
       {std::optional<std::string>{"0.17.1"}, std::optional<std::string>{"not a version"},
        std::optional<std::string>{}})
    EXPECT_FALSE(has_word(engine_argv(profile, {.engine_version = version}), "--shutdown-timeout"))
        << version.value_or("-");
}

TEST(VllmArgv, TheDefaultDrainIsThirtySecondsAndEngineArgsWin) {
  auto plain = profile_from(R"(
[engine]
kind = "vllm"
venv = "/v"
[model]
path = "/m"
)");
  EXPECT_TRUE(
      has_pair(engine_argv(plain, {.engine_version = "0.18.0"}), "--shutdown-timeout", "30"));
  for (const char* args : {R"(["--shutdown-timeout", "5"])", R"(["--shutdown-timeout=5"])"}) {
    auto own = profile_from(std::string(R"(
[engine]
kind = "vllm"
venv = "/v"
args = )") + args + R"(
[model]
path = "/m"
)");
    auto argv = engine_argv(own, {.engine_version = "0.18.0"});
    EXPECT_EQ(std::count_if(
                  argv.begin(), argv.end(),
                  [](const std::string& word) { return word.starts_with("--shutdown-timeout"); }),
              1)
        << args;
  }
}

// SGLang and trtllm-serve have no such flag: SIGTERM alone, whatever the version.
TEST(SglangArgv, NoDrainFlagWhateverTheVersion) {
  auto profile = profile_from(R"(
[engine]
kind = "sglang"
venv = "/v"
[model]
path = "/m"
[server]
drain_timeout = "1min"
)");
  for (const auto& word : engine_argv(profile, {.engine_version = "0.5.14"}))
    EXPECT_FALSE(word.find("shutdown") != std::string::npos ||
                 word.find("drain") != std::string::npos)
        << word;
}

constexpr const char* kVllmTwoNodes = R"(
[engine]
kind = "vllm"
executable = "/usr/local/bin/vllm"
[model]
path = "org/model"
[parallelism]
tp = 8
pp = 2
nodes = 2
dist_init_addr = "10.1.2.3:29500"
)";

TEST(VllmArgv, MultiNodeSplitsTheRendezvousAddress) {
  auto argv = engine_argv(profile_from(kVllmTwoNodes), {.node_rank = 1});
  EXPECT_EQ(argv[0], "/usr/local/bin/vllm");
  EXPECT_EQ(argv[1], "serve");
  EXPECT_EQ(argv[2], "org/model");
  EXPECT_TRUE(has_pair(argv, "--master-addr", "10.1.2.3"));
  EXPECT_TRUE(has_pair(argv, "--master-port", "29500"));
  EXPECT_TRUE(has_pair(argv, "--node-rank", "1"));
  EXPECT_TRUE(has_pair(argv, "--nnodes", "2"));
}

bool has(const std::vector<std::string>& argv, std::string_view flag) {
  return std::find(argv.begin(), argv.end(), flag) != argv.end();
}

// vLLM's own multi-node rendezvous came with #23691 (0.11.1): an older vLLM has no spelling of
// it, and fitted_flags says so for `check` to refuse; a known newer one or an unknown release
// gets the flags as they are.
TEST(VllmArgv, MultiNodeFlagsNeedTheReleaseThatHasThem) {
  const Profile profile = profile_from(kVllmTwoNodes);
  auto old_release = fitted_flags(profile, {.node_rank = 1, .engine_version = "0.10.2"});
  // --nnodes, --node-rank, --master-addr, --master-port, and --headless (0.9.0, which 0.10.2 has).
  ASSERT_EQ(old_release.size(), 5u);
  EXPECT_EQ(old_release[0].flag, "--nnodes");
  EXPECT_EQ(old_release[0].spelling, "");
  EXPECT_EQ(old_release[0].needs, "0.11.1");
  EXPECT_FALSE(old_release[0].version_unknown);
  for (const auto& fit : fitted_flags(profile, {.node_rank = 1, .engine_version = "0.11.1"}))
    EXPECT_EQ(fit.spelling, fit.flag);
  for (const auto& fit : fitted_flags(profile, {.node_rank = 1})) {
    EXPECT_EQ(fit.spelling, fit.flag);
    EXPECT_TRUE(fit.version_unknown);
  }
  // engine.args are the user's: never fitted.
  Profile own = profile;
  own.parallelism.nodes = 1;
  own.engine.args = {"--nnodes", "2"};
  EXPECT_TRUE(fitted_flags(own, {.engine_version = "0.10.2"}).empty());
}

// docs/serving/parallelism_scaling.md: the worker node adds --headless; the head serves.
TEST(VllmArgv, RanksAfterTheFirstRunHeadlessAndRankZeroServes) {
  const Profile profile = profile_from(kVllmTwoNodes);
  EXPECT_FALSE(has(engine_argv(profile, {.node_rank = 0}), "--headless"));
  EXPECT_TRUE(has(engine_argv(profile, {.node_rank = 1}), "--headless"));
  EXPECT_EQ(rank_role(profile, 0), RankRole::serving);
  EXPECT_EQ(rank_role(profile, 1), RankRole::headless);
}

TEST(VllmArgv, AHeadlessRankWaitsForItsConnectionToRankZerosMasterPort) {
  const Profile profile = profile_from(kVllmTwoNodes);
  EXPECT_FALSE(headless_rendezvous(profile, {.node_rank = 0}));
  auto rendezvous = headless_rendezvous(profile, {.node_rank = 1});
  ASSERT_TRUE(rendezvous);
  EXPECT_EQ(rendezvous->host, "10.1.2.3");
  EXPECT_EQ(rendezvous->port, 29500);
  EXPECT_FALSE(rendezvous->any_port);
}

// docs/serving/data_parallel_deployment.md: DP=4 over two nodes, two replicas each; the second
// node is headless from data-parallel rank 2, both name the head's address and RPC port.
TEST(VllmArgv, DataParallelOverNodesUsesItsOwnFlagsAndWholeReplicasPerNode) {
  const Profile profile = profile_from(R"(
[engine]
kind = "vllm"
executable = "/usr/local/bin/vllm"
[model]
path = "org/model"
[parallelism]
tp = 2
dp = 4
nodes = 2
dist_init_addr = "10.1.2.3:13345"
)");
  auto head = engine_argv(profile, {.node_rank = 0});
  EXPECT_TRUE(has_pair(head, "--data-parallel-size", "4"));
  EXPECT_TRUE(has_pair(head, "--data-parallel-size-local", "2"));
  EXPECT_TRUE(has_pair(head, "--data-parallel-address", "10.1.2.3"));
  EXPECT_TRUE(has_pair(head, "--data-parallel-rpc-port", "13345"));
  // A start rank on the head would select hybrid load balancing (serve.py).
  EXPECT_FALSE(has(head, "--data-parallel-start-rank"));
  EXPECT_FALSE(has(head, "--headless"));
  EXPECT_FALSE(has(head, "--nnodes"));
  auto worker = engine_argv(profile, {.node_rank = 1});
  EXPECT_TRUE(has_pair(worker, "--data-parallel-size-local", "2"));
  EXPECT_TRUE(has_pair(worker, "--data-parallel-start-rank", "2"));
  EXPECT_TRUE(has(worker, "--headless"));
  EXPECT_FALSE(has(worker, "--master-addr"));
  auto rendezvous = headless_rendezvous(profile, {.node_rank = 1});
  ASSERT_TRUE(rendezvous);
  EXPECT_TRUE(rendezvous->any_port);
}

TEST(VllmArgv, DataParallelThatDoesNotSplitIntoWholeReplicasPerNodeIsRefused) {
  const std::string text = R"(
[engine]
kind = "vllm"
executable = "/usr/local/bin/vllm"
[model]
path = "org/model"
[parallelism]
tp = 2
dp = 3
nodes = 2
dist_init_addr = "10.1.2.3:13345"
)";
  MemorySource source({{"/p/x.toml", text}});
  auto profile = load_profile(source, "x");
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().message,
            "/p/x.toml:9:6: multi-node vLLM runs whole data-parallel replicas on each node: "
            "'parallelism.dp' (3) must be a multiple of 'parallelism.nodes' (2)");
}

TEST(SglangArgv, EveryRankServes) {
  const Profile profile = profile_from(R"(
[engine]
kind = "sglang"
venv = "/v"
[model]
path = "/m"
[parallelism]
tp = 16
nodes = 2
dist_init_addr = "10.0.0.1:5000"
)");
  EXPECT_EQ(rank_role(profile, 1), RankRole::serving);
  EXPECT_FALSE(headless_rendezvous(profile, {.node_rank = 1}));
}

TEST(VllmArgv, AnIpv6MasterAddressGoesBare) {
  auto argv = engine_argv(profile_from(R"(
[engine]
kind = "vllm"
executable = "/usr/local/bin/vllm"
[model]
path = "org/model"
[parallelism]
tp = 8
nodes = 2
dist_init_addr = "[fd00::1]:29500"
)"),
                          {.node_rank = 0});
  EXPECT_TRUE(has_pair(argv, "--master-addr", "fd00::1"));
  EXPECT_TRUE(has_pair(argv, "--master-port", "29500"));
}

TEST(EngineArgv, ProfileArgsComeLastVerbatim) {
  auto argv = engine_argv(profile_from(R"(
[engine]
kind = "sglang"
venv = "/v"
args = ["--attention-backend", "flashinfer", "--mem-fraction-static=0.7"]
[model]
path = "/m"
)"));
  ASSERT_GE(argv.size(), 3u);
  EXPECT_EQ(argv[argv.size() - 3], "--attention-backend");
  EXPECT_EQ(argv.back(), "--mem-fraction-static=0.7");
}

TEST(LlamacppArgv, RunsTheExecutableWithLlamaServersOwnFlags) {
  auto argv = engine_argv(profile_from(R"(
[engine]
kind = "llamacpp"
executable = "/opt/llama.cpp/bin/llama-server"
max_requests = 4
args = ["-c", "8192"]
[model]
path = "/models/q.gguf"
served_name = "q"
[server]
host = "0.0.0.0"
)"));
  EXPECT_EQ(argv, (std::vector<std::string>{"/opt/llama.cpp/bin/llama-server", "--model",
                                            "/models/q.gguf", "--n-gpu-layers", "999", "--host",
                                            "0.0.0.0", "--port", "8080", "--alias", "q",
                                            "--parallel", "4", "-c", "8192"}));
}

}  // namespace
}  // namespace gl
