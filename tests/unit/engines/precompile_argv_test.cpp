// SPDX-License-Identifier: Apache-2.0
#include "engines/precompile_argv.hpp"

#include <gtest/gtest.h>

#include "catalog/jit_caches.hpp"
#include "catalog/precompile.hpp"
#include "support/profile_text.hpp"

namespace gl {
namespace {

using testing::profile_from;

const std::string kSglang = R"(
[engine]
kind = "sglang"
venv = "/v"
mem_fraction = 0.8
args = ["--trust-remote-code"]
[model]
path = "/m"
[parallelism]
tp = 2
[gpus]
count = 2
[server]
port = 31000
)";

TEST(PrecompileArgv, SglangCompilesWithTheServicesOwnFlags) {
  const Profile profile = profile_from(kSglang);
  // A release with the serve script: the service runs `sglang serve`, the step `python -m`.
  for (std::optional<std::string> version :
       {std::optional<std::string>{"0.5.16"}, std::optional<std::string>{"0.5.5"},
        std::optional<std::string>{}}) {
    const LaunchOptions options{.engine_version = version};
    auto argv = precompile_argv(profile, options, std::nullopt);
    ASSERT_TRUE(argv) << argv.error().message;
    const auto service = engine_argv(profile, options);
    const auto launcher = engine_launcher(profile, options).size();
    std::vector<std::string> expected{"/v/bin/python", "-m", "sglang.compile_deep_gemm"};
    expected.insert(expected.end(), service.begin() + static_cast<std::ptrdiff_t>(launcher),
                    service.end());
    EXPECT_EQ(*argv, expected) << version.value_or("unknown");
    // The same model, parallelism, port and the user's own flags as the service.
    EXPECT_NE(std::find(argv->begin(), argv->end(), "--trust-remote-code"), argv->end());
    EXPECT_NE(std::find(argv->begin(), argv->end(), "31000"), argv->end());
    EXPECT_EQ(std::find(argv->begin(), argv->end(), "serve"), argv->end());
  }
}

TEST(PrecompileArgv, TheTimeoutIsTheStepsOwnFlag) {
  auto argv = precompile_argv(profile_from(kSglang), {}, 7200);
  ASSERT_TRUE(argv) << argv.error().message;
  ASSERT_GE(argv->size(), 2U);
  EXPECT_EQ((std::vector(argv->end() - 2, argv->end())),
            (std::vector<std::string>{"--timeout", "7200"}));
  auto plain = precompile_argv(profile_from(kSglang), {}, std::nullopt);
  ASSERT_TRUE(plain);
  EXPECT_EQ(std::find(plain->begin(), plain->end(), "--timeout"), plain->end());
}

TEST(PrecompileArgv, EnginePythonRunsTheModule) {
  auto argv = precompile_argv(profile_from(R"(
[engine]
kind = "sglang"
python = "/usr/bin/python3"
[model]
path = "/m"
)"),
                              {}, std::nullopt);
  ASSERT_TRUE(argv) << argv.error().message;
  EXPECT_EQ((std::vector(argv->begin(), argv->begin() + 3)),
            (std::vector<std::string>{"/usr/bin/python3", "-m", "sglang.compile_deep_gemm"}));
}

TEST(PrecompileArgv, EnginesWithoutAStepAreRefusedByName) {
  auto vllm = precompile_argv(profile_from(R"(
[engine]
kind = "vllm"
venv = "/v"
[model]
path = "/m"
)"),
                              {}, std::nullopt);
  ASSERT_FALSE(vllm);
  EXPECT_EQ(vllm.error().message.substr(0, 46), "Profile 'x' has no precompile step (vllm): vLL");
  EXPECT_NE(vllm.error().message.find("cache export"), std::string::npos);
}

TEST(PrecompileArgv, AMultiNodeGroupIsRefused) {
  auto group = precompile_argv(profile_from(R"(
[engine]
kind = "sglang"
venv = "/v"
[model]
path = "/m"
[parallelism]
tp = 16
nodes = 2
dist_init_addr = "10.0.0.1:5000"
[gpus]
count = 8
)"),
                               {}, std::nullopt);
  ASSERT_FALSE(group);
  EXPECT_EQ(group.error().message,
            "Profile 'x' spans 2 nodes: sglang.compile_deep_gemm must run on every rank at once "
            "against rank 0's rendezvous, which `warm --compile` does not do; start the group "
            "once with `gpulaunch up x --all-nodes` and seed new nodes with `gpulaunch cache "
            "export` and `cache import`");
}

TEST(Precompile, EveryStepFillsACatalogedCacheAndEveryOtherEngineSaysWhy) {
  for (EngineKind kind : {EngineKind::sglang, EngineKind::vllm, EngineKind::trtllm,
                          EngineKind::llamacpp, EngineKind::command}) {
    const PrecompileStep* step = precompile_step(kind);
    if (!step) {
      EXPECT_FALSE(no_precompile_reason(kind).empty()) << engine_kind_name(kind);
      continue;
    }
    EXPECT_TRUE(no_precompile_reason(kind).empty());
    EXPECT_FALSE(step->source.empty());
    EXPECT_FALSE(step->finished_line.empty());
    for (auto cache : step->caches) EXPECT_NE(find_jit_cache(cache), nullptr) << cache;
  }
  EXPECT_NE(precompile_step(EngineKind::sglang), nullptr);
}

}  // namespace
}  // namespace gl
