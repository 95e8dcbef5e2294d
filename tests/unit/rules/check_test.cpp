#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/check.hpp"

namespace gl {
namespace {

ToolkitFact toolkit(const std::string& root, const std::string& version) {
  ToolkitFact fact;
  fact.root = fact.resolved_root = root;
  fact.nvcc = root + "/bin/nvcc";
  fact.root_exists = fact.nvcc_exists = true;
  fact.nvcc_version = version;
  return fact;
}

Facts blackwell_node() {
  Facts facts;
  facts.driver = {true, "nvml", "580.95.05", "13.0", {}};
  facts.gpus.push_back({0, "NVIDIA RTX PRO 6000", "GPU-0", 12, 0, 97887});
  facts.toolkits = {toolkit("/usr/local/cuda-13.0", "13.0"), toolkit("/opt/cuda-12.6", "12.6")};
  return facts;
}

std::vector<std::string> codes(const std::vector<Finding>& findings) {
  std::vector<std::string> list;
  for (const auto& finding : findings) list.push_back(finding.code);
  return list;
}

// Validation refuses [env] CUDA_HOME, but `up` may hand over a profile built another way: the
// rule checks what the unit's environment really resolves to.
TEST(Check, UnitEnvironmentThatBypassesTheProfileToolkitIsAnError) {
  Profile profile;
  profile.name = "t";
  profile.engine.kind = EngineKind::command;
  profile.engine.argv = {"/bin/true"};
  profile.toolkit.cuda_home = "/usr/local/cuda-13.0";
  profile.env["CUDA_HOME"] = "/opt/cuda-12.6";
  auto findings = evaluate(profile, blackwell_node(), ShellEnvironment{});
  EXPECT_THAT(codes(findings),
              ::testing::ElementsAre("jit-toolkit-mismatch", "toolkit-too-old-for-arch"));
  EXPECT_TRUE(has_errors(findings));
}

TEST(Check, PinnedHealthyToolkitHasNoFindings) {
  Profile profile;
  profile.name = "t";
  profile.engine.kind = EngineKind::command;
  profile.engine.argv = {"/bin/true"};
  profile.toolkit.cuda_home = "/usr/local/cuda-13.0";
  auto findings = evaluate(profile, blackwell_node(), ShellEnvironment{});
  EXPECT_THAT(codes(findings), ::testing::IsEmpty());
  EXPECT_FALSE(has_errors(findings));
}

}  // namespace
}  // namespace gl
