// SPDX-License-Identifier: Apache-2.0
#include "engines/engine_argv.hpp"

#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

Profile profile_from(const std::string& text) {
  MemorySource source({{"/p/x.toml", text}});
  auto profile = load_profile(source, "x");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value_or(Profile{});
}

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

TEST(VllmArgv, MultiNodeSplitsTheRendezvousAddress) {
  auto argv = engine_argv(profile_from(R"(
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
)"),
                          {.node_rank = 1});
  EXPECT_EQ(argv[0], "/usr/local/bin/vllm");
  EXPECT_EQ(argv[1], "serve");
  EXPECT_EQ(argv[2], "org/model");
  EXPECT_TRUE(has_pair(argv, "--master-addr", "10.1.2.3"));
  EXPECT_TRUE(has_pair(argv, "--master-port", "29500"));
  EXPECT_TRUE(has_pair(argv, "--node-rank", "1"));
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
