// SPDX-License-Identifier: Apache-2.0
#include "unit/unit_environment.hpp"

#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "unit/escape.hpp"
#include "unit/render.hpp"

namespace gl {
namespace {

Profile load(const std::string& text) {
  MemorySource source({{"/p/e.toml", text}});
  auto profile = load_profile(source, "/p/e.toml");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value_or(Profile{});
}

constexpr const char* kProfile =
    "[engine]\nkind = \"vllm\"\nvenv = \"/opt/venv\"\n[model]\npath = \"/m\"\n"
    "[toolkit]\ncuda_home = \"/usr/local/cuda-13.0\"\n[env]\nODD = \"a 'b' $c\"\n"
    "[secrets]\nHF_TOKEN = \"/etc/gpulaunch/secrets/hf\"\n";

TEST(UnitEnvironment, IsThePlansEnvironmentThenEachSecretsPath) {
  const Profile profile = load(kProfile);
  const LaunchPlan plan = make_launch_plan(profile);
  const auto variables = unit_environment(profile, plan);
  ASSERT_EQ(variables.size(), plan.environment.size() + 1);
  for (size_t i = 0; i < plan.environment.size(); ++i) {
    EXPECT_EQ(variables[i].name, plan.environment[i].first);
    EXPECT_EQ(variables[i].value, plan.environment[i].second);
    EXPECT_FALSE(variables[i].credential);
  }
  const UnitVariable& secret = variables.back();
  EXPECT_EQ(secret.name, "HF_TOKEN_PATH");
  EXPECT_EQ(secret.value, "/run/credentials/gpulaunch-e.service/HF_TOKEN");
  EXPECT_EQ(secret.credential, "HF_TOKEN");
}

TEST(UnitEnvironment, IsEveryEnvironmentLineOfTheUnitInOrder) {
  const Profile profile = load(kProfile);
  const LaunchPlan plan = make_launch_plan(profile);
  const UnitFile unit = render_unit(profile, plan, RenderOptions{});
  std::vector<std::string> expected;
  for (const auto& variable : unit_environment(profile, plan))
    expected.push_back(variable.credential
                           ? credential_path_environment(variable.name, *variable.credential)
                           : quote_environment(variable.name, variable.value));
  EXPECT_EQ(unit.values("Service", "Environment"), expected);
}

}  // namespace
}  // namespace gl
