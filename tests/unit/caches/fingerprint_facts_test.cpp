// SPDX-License-Identifier: Apache-2.0
// The fingerprint's toolkit is the one the JIT libraries pick in the unit's environment, decided
// by the same rule `check` and the lock use; its architectures are those of the engine's GPUs.

#include "caches/fingerprint_facts.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "facts/python_env.hpp"
#include "profile/memory_source.hpp"
#include "profile/validate.hpp"
#include "rules/jit_toolkit.hpp"
#include "support/fixture_node.hpp"

namespace gl {
namespace {

Profile load(const std::string& extra) {
  MemorySource source({{"/p/f.toml",
                        "[engine]\nkind = \"sglang\"\nvenv = \"/opt/venv\"\n"
                        "[model]\npath = \"/m\"\n" +
                            extra}});
  auto profile = load_profile(source, "/p/f.toml");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value_or(Profile{});
}

// No "found via" labels: facts from another gatherer (a --facts file) carry none, and the
// fingerprint must not depend on them.
ToolkitFact toolkit(const std::string& root, const std::string& version) {
  ToolkitFact fact;
  fact.root = fact.resolved_root = root;
  fact.nvcc = root + "/bin/nvcc";
  fact.root_exists = fact.nvcc_exists = true;
  fact.nvcc_version = version;
  return fact;
}

Facts node(std::vector<ToolkitFact> toolkits) {
  Facts facts;
  facts.gpus.push_back({0, "B200", "GPU-5a0c3b1e-8d2f-4e6a-9b7c-1f3e5d7a9c0b", 10, 0, 183359});
  facts.gpus.push_back({1, "H100", "GPU-0e9d8c7b-6a5f-4e3d-2c1b-0a9f8e7d6c5b", 9, 0, 81559});
  facts.toolkits = std::move(toolkits);
  return facts;
}

void expect_the_rules_toolkit(const Profile& profile, const Facts& facts, const std::string& root,
                              const std::string& version) {
  const LaunchPlan plan = make_launch_plan(profile);
  const JitPick pick = pick_jit_toolkit(plan.environment, facts);
  const FingerprintInputs inputs = fingerprint_inputs(profile, plan, facts);
  EXPECT_EQ(inputs.toolkit_path, pick.root);
  EXPECT_EQ(inputs.toolkit_path, root);
  EXPECT_EQ(inputs.toolkit_version, version);
}

TEST(FingerprintFacts, APinnedToolkitIsTheOneCudaHomeNames) {
  const Profile profile = load("[toolkit]\ncuda_home = \"/usr/local/cuda-13.0\"\n");
  expect_the_rules_toolkit(profile,
                           node({toolkit("/usr", "12.0"), toolkit("/usr/local/cuda-13.0", "13.0")}),
                           "/usr/local/cuda-13.0", "13.0");
  // Not on the node: the pinned path still keys the caches, its version unknown.
  expect_the_rules_toolkit(profile, node({toolkit("/usr", "12.0")}), "/usr/local/cuda-13.0", "");
}

TEST(FingerprintFacts, AnUnpinnedToolkitIsTheOneTheUnitsPathOrTheDefaultGives) {
  const Profile profile = load("");
  expect_the_rules_toolkit(
      profile, node({toolkit("/usr/local/cuda", "12.8"), toolkit("/usr", "12.0")}), "/usr", "12.0");
  expect_the_rules_toolkit(profile, node({toolkit("/usr/local/cuda", "12.8")}), "/usr/local/cuda",
                           "12.8");
  expect_the_rules_toolkit(profile, node({}), "", "");
}

// A node's other GPUs run other engines: their architecture is not this engine's kernels'.
TEST(FingerprintFacts, ArchitecturesAreThoseOfTheEnginesGpus) {
  const Facts facts = node({});
  const Profile one = load("[gpus]\ndevices = [\"GPU-0e9d8c7b-6a5f-4e3d-2c1b-0a9f8e7d6c5b\"]\n");
  EXPECT_THAT(fingerprint_inputs(one, make_launch_plan(one), facts).gpu_archs,
              ::testing::ElementsAre("9.0"));
  const Profile both = load("[gpus]\ncount = 2\n");
  EXPECT_THAT(fingerprint_inputs(both, make_launch_plan(both), facts).gpu_archs,
              ::testing::UnorderedElementsAre("10.0", "9.0"));
}

// An engine upgrade recompiles kernels: the engine's version is read under its import name
// (TensorRT-LLM's is tensorrt_llm, not the kind's name).
TEST(FingerprintFacts, TheEnginesVersionIsItsInstalledPackages) {
  MemorySource source(
      {{"/p/t.toml", std::string("[engine]\nkind = \"trtllm\"\nvenv = \"/opt/venv\"\n"
                                 "[model]\npath = \"/m\"\n")}});
  auto profile = load_profile(source, "/p/t.toml");
  ASSERT_TRUE(profile) << profile.error().message;
  Facts facts = node({});
  facts.python.emplace();
  facts.python->packages = {{"tensorrt_llm", "1.2.0"}, {"flashinfer", "0.6.18"}};
  const FingerprintInputs inputs = fingerprint_inputs(*profile, make_launch_plan(*profile), facts);
  EXPECT_EQ(inputs.engine, "trtllm");
  EXPECT_EQ(inputs.engine_version, "1.2.0");
  EXPECT_EQ(inputs.flashinfer_version, "0.6.18");
}

// A venv made with --system-site-packages imports the system's torch: when that torch changes
// (apt upgraded python3-torch), caches the old one built are stale, as for a venv's own torch.
TEST(FingerprintFacts, TheSystemsTorchOfASystemSitePackagesVenvIsFingerprinted) {
  test::FixtureNode fixture;
  fixture.write("/usr/lib/python3.11/os.py", "");
  fixture.write("/usr/lib/python3.11/site.py", "# Debian: lib/python3/dist-packages\n");
  fixture.venv("/opt/venv", std::nullopt, std::nullopt, {{"sglang", "0.5.6"}});
  fixture.write("/opt/venv/pyvenv.cfg",
                "home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.11.2\n");
  const Profile profile = load("");
  const LaunchPlan plan = make_launch_plan(profile);
  auto hash_with_system_torch = [&](const std::string& version) {
    fixture.write("/usr/lib/python3/dist-packages/torch/version.py",
                  "__version__ = '" + version + "'\ncuda = None\n");
    Facts facts = node({toolkit("/usr/local/cuda-13.0", "13.0")});
    facts.python = probe_python_env(NodeFs(fixture.root()), "/opt/venv", "/opt/venv/bin/python");
    const FingerprintInputs inputs = fingerprint_inputs(profile, plan, facts);
    EXPECT_EQ(inputs.torch_version, version);
    EXPECT_EQ(inputs.engine_version, "0.5.6");
    return fingerprint_hash(inputs);
  };
  const auto before = hash_with_system_torch("1.13.0a0");
  EXPECT_NE(hash_with_system_torch("2.1.2"), before);
  EXPECT_EQ(hash_with_system_torch("1.13.0a0"), before);
}

}  // namespace
}  // namespace gl
