// SPDX-License-Identifier: Apache-2.0
// The pinned variables' one table against its readers: the plan pins every row, a profile's [env]
// may set none of them (each refusal names the row's key), and an image's container gets exactly
// the rows that are not host-only.

#include "catalog/pinned_variables.hpp"

#include <gtest/gtest.h>

#include "../../support/profile_text.hpp"
#include "plan/container_command.hpp"
#include "plan/launch_plan.hpp"
#include "profile/memory_source.hpp"

namespace gl {
namespace {

constexpr const char* kEverythingPinned = R"(
[engine]
kind = "sglang"
venv = "/opt/venv"
[model]
path = "/m"
[toolkit]
cuda_home = "/usr/local/cuda-13.0"
arch_list = "12.0a"
)";

TEST(PinnedVariables, ThePlanPinsEveryRow) {
  const LaunchPlan plan = make_launch_plan(testing::profile_from(kEverythingPinned));
  for (const auto& row : kPinnedVariables) {
    int set = 0;
    for (const auto& [name, value] : plan.environment) set += name == row.name;
    EXPECT_EQ(set, 1) << row.name;
  }
}

TEST(PinnedVariables, AProfilesEnvMaySetNoneAndIsToldWhichKeySetsIt) {
  for (const auto& row : kPinnedVariables) {
    MemorySource source({{"/p/x.toml", std::string(kEverythingPinned) + "[env]\n" +
                                           std::string(row.name) + " = \"/elsewhere\"\n"}});
    auto refused = load_profile(source, "x");
    ASSERT_FALSE(refused) << row.name;
    EXPECT_EQ(refused.error().message, "/p/x.toml:11:1: 'env." + std::string(row.name) +
                                           "' is pinned by gpulaunch; set '" +
                                           std::string(row.instead) + "' instead");
  }
}

TEST(PinnedVariables, OnlyTheHostOnlyRowsStayOutOfAnImagesContainer) {
  for (const auto& row : kPinnedVariables) EXPECT_EQ(container_host_only(row.name), row.host_only);
  EXPECT_FALSE(container_host_only("HF_HOME"));
}

}  // namespace
}  // namespace gl
