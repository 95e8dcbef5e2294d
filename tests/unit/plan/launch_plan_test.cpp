// SPDX-License-Identifier: Apache-2.0
#include "plan/launch_plan.hpp"

#include <gtest/gtest.h>

#include "catalog/jit_caches.hpp"
#include "profile/memory_source.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

std::string env_of(const LaunchPlan& plan, std::string_view name) {
  for (const auto& [key, value] : plan.environment)
    if (key == name) return value;
  return "<unset>";
}

Profile load(const std::string& text) {
  MemorySource source({{"/p/k26.toml", text}});
  auto profile = load_profile(source, "k26");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value_or(Profile{});
}

constexpr const char* kPinned = R"(
[engine]
kind = "sglang"
venv = "/opt/venv"
[model]
path = "/m"
[toolkit]
cuda_home = "/usr/local/cuda-13.0"
[server]
host = "0.0.0.0"
port = 30000
)";

// The incident: nvcc 12.8 first on the shell's PATH. The unit's PATH must put the pinned
// toolkit first and CUDA_HOME/CUDA_PATH must name it, whatever the caller's shell holds.
TEST(LaunchPlan, PinsTheToolkitAheadOfEverythingElse) {
  auto plan = make_launch_plan(load(kPinned));
  EXPECT_EQ(env_of(plan, "CUDA_HOME"), "/usr/local/cuda-13.0");
  EXPECT_EQ(env_of(plan, "CUDA_PATH"), "/usr/local/cuda-13.0");
  EXPECT_TRUE(env_of(plan, "PATH").starts_with("/usr/local/cuda-13.0/bin:/opt/venv/bin:"));
  EXPECT_EQ(env_of(plan, "LD_LIBRARY_PATH"), "/usr/local/cuda-13.0/lib64");
}

TEST(LaunchPlan, PinsEveryJitCacheVariableUnderTheRoot) {
  auto plan = make_launch_plan(load(kPinned));
  for (const auto& cache : jit_caches())
    for (const auto& variable : cache.variables)
      EXPECT_TRUE(env_of(plan, variable.name).starts_with("/var/cache/gpulaunch/k26/"))
          << variable.name;
  EXPECT_EQ(plan.caches.size(), jit_caches().size());
}

TEST(LaunchPlan, ProbesAWildcardListenerOnLoopback) {
  EXPECT_EQ(make_launch_plan(load(kPinned)).health_url, "http://127.0.0.1:30000/health");
}

TEST(LaunchPlan, IsDeterministic) {
  auto profile = load(kPinned);
  auto first = make_launch_plan(profile);
  auto second = make_launch_plan(profile);
  EXPECT_EQ(first.environment, second.environment);
  EXPECT_EQ(first.argv, second.argv);
}

}  // namespace
}  // namespace gl
