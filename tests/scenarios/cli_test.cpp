// The gpulaunch binary itself on the seed node: exit codes and the report's key lines.

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "util/process.hpp"

namespace gl::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Run {
  int exit_code = -1;
  std::string out;
};

// A clean environment: the node's shell as the seed incident had it.
Run gpulaunch(FixtureNode& node, std::vector<std::string> args,
              const std::string& binary = GPULAUNCH_BIN) {
  std::vector<std::string> env_args{
      "-i", "PATH=/usr/bin:/bin:/usr/local/bin",
      std::string("GPULAUNCH_FAKE_NVML=") +
          (getenv("GPULAUNCH_FAKE_NVML") ? getenv("GPULAUNCH_FAKE_NVML") : ""),
      std::string("LD_LIBRARY_PATH=") + GPULAUNCH_FAKE_NVML_DIR, binary};
  env_args.insert(env_args.end(), args.begin(), args.end());
  (void)node;
  auto result = run_process("/usr/bin/env", env_args, std::chrono::seconds(30));
  EXPECT_TRUE(result) << (result ? "" : result.error().message);
  return result ? Run{result->exit_code, result->out} : Run{};
}

TEST(CheckCli, SeedNodeFailsWithThePinToApply) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("seed-sm120-distro-nvcc-12.8"), node, 30000);
  auto run = gpulaunch(node, {"check", profile, "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("\nERRORS (2)\n"));
  EXPECT_THAT(run.out,
              HasSubstr("  error[flashinfer-nvcc-too-old] FlashInfer 0.6.7 refuses compute "
                        "capability 12.0 with nvcc 12.8 at /usr/bin/nvcc"));
  EXPECT_THAT(run.out,
              HasSubstr("    rule: FlashInfer >= 0.6.7 with a 12.x GPU needs nvcc >= 12.9"));
  EXPECT_THAT(run.out, HasSubstr("    fix: toolkit.cuda_home = \"/usr/local/cuda-13.0\""));
  EXPECT_THAT(run.out, HasSubstr("\nWARNINGS (1)\n  warning[cuda-home-unset]"));
  EXPECT_THAT(run.out, HasSubstr("FAILED, the start would fail: 2 error(s), 1 warning(s)"));
}

// `up` renders the running binary into the unit (ExecStopPost=+ runs it as root): one that a
// user could replace is named, with who could.
TEST(CheckCli, GpulaunchRunFromAUserOwnedTreeIsWarned) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to hand the copy to another user";
  FixtureNode node;
  auto profile = build_scenario(scenario_named("healthy-blackwell-cuda-13"), node, 30000);
  const auto tree = node.scratch() / "home-build";
  std::filesystem::create_directories(tree);
  std::filesystem::copy_file(GPULAUNCH_BIN, tree / "gpulaunch");
  ASSERT_EQ(::chown(tree.c_str(), 65534, 65534), 0);
  // This node itself (no --root): the binary is this host's.
  auto run = gpulaunch(node, {"check", profile}, (tree / "gpulaunch").string());
  EXPECT_THAT(run.out, HasSubstr("warning[gpulaunch-binary-user-writable] the unit would run '" +
                                 (tree / "gpulaunch").string() + "' as root"));
  EXPECT_THAT(run.out, HasSubstr("    writable: '" + tree.string() + "' is owned by uid 65534"));
  // An image probed with --root has no gpulaunch of this host to judge.
  auto image = gpulaunch(node, {"check", profile, "--root", node.root().string()},
                         (tree / "gpulaunch").string());
  EXPECT_THAT(image.out, Not(HasSubstr("gpulaunch-binary-user-writable")));
}

TEST(CheckCli, EngineAsRootIsAWarningNotAnError) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("engine-as-root"), node, 30000);
  auto run = gpulaunch(node, {"check", profile, "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("  warning[engine-runs-as-root] the engine would run as root: "
                                 "service.user is not set"));
}

TEST(CheckCli, PinnedSeedNodePasses) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("seed-fixed-cuda-home-pinned"), node, 30000);
  auto run = gpulaunch(node, {"check", profile, "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("OK, nothing blocks a start: 0 error(s), 1 warning(s)"));
}

TEST(CheckCli, RecordedFactsCheckTheSameElsewhere) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("seed-sm120-distro-nvcc-12.8"), node, 30000);
  auto facts = gpulaunch(node, {"facts", profile, "--root", node.root().string(), "--json"});
  ASSERT_EQ(facts.exit_code, 0);
  auto file = node.scratch() / "facts.json";
  std::ofstream(file) << facts.out;
  auto run = gpulaunch(node, {"check", profile, "--facts", file.string(), "--json"});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("\"code\": \"flashinfer-nvcc-too-old\""));
  EXPECT_THAT(run.out, HasSubstr("\"errors\": 2"));
}

TEST(CheckCli, UnreadableFactsMeanTheCheckCouldNotRun) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("healthy-blackwell-cuda-13"), node, 30000);
  auto run =
      gpulaunch(node, {"check", profile, "--facts", (node.scratch() / "none.json").string()});
  EXPECT_EQ(run.exit_code, 2);
  auto missing = gpulaunch(node, {"check", (node.scratch() / "missing.toml").string()});
  EXPECT_EQ(missing.exit_code, 2);
}

TEST(FactsCli, NoDriverIsAFactNotACrash) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("no-driver"), node, 30000);
  auto run = gpulaunch(node, {"facts", "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(run.out, HasSubstr("driver: no NVIDIA driver [none]"));
  EXPECT_THAT(run.out, HasSubstr("gpus: 0"));
}

// A lock taken on a node, then the node's pinned toolkit replaced by another version.
TEST(VerifyCli, ToolkitChangedSinceTheLockIsNamedAsTheDrift) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("seed-fixed-cuda-home-pinned"), node, 30000);
  const std::string root = node.root().string();
  const std::string lock = (node.scratch() / "node.lock").string();
  auto locked = gpulaunch(node, {"lock", profile, "--root", root, "-o", lock});
  ASSERT_EQ(locked.exit_code, 0) << locked.out;
  auto same = gpulaunch(node, {"verify", lock, "--root", root});
  EXPECT_EQ(same.exit_code, 0) << same.out;
  EXPECT_THAT(same.out, HasSubstr("OK: this node matches " + lock));

  node.toolkit("/usr/local/cuda-13.0", "12.9");
  auto run = gpulaunch(node, {"verify", lock, "--root", root});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("DRIFT: 1 field(s) differ from " + lock));
  EXPECT_THAT(run.out, HasSubstr("\nFIELD                 LOCKED  LIVE  WHY IT MATTERS\n"
                                 "node.toolkit.version  13.0    12.9  JIT kernels compile with "
                                 "this nvcc: FlashInfer gates GPU architectures on its version "
                                 "and the JIT caches are keyed to it\n"));
}

TEST(VerifyCli, LockWrittenTwiceIsTheSameBytes) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("healthy-blackwell-cuda-13"), node, 30000);
  auto first = gpulaunch(node, {"lock", profile, "--root", node.root().string()});
  auto second = gpulaunch(node, {"lock", profile, "--root", node.root().string()});
  ASSERT_EQ(first.exit_code, 0);
  EXPECT_EQ(first.out, second.out);
  EXPECT_THAT(first.out, HasSubstr("\n  \"gpulaunch_lock\": 1,\n"));
  EXPECT_THAT(first.out, HasSubstr("\"config.json\": \"sha256:"));
}

TEST(VerifyCli, UnreadableLockMeansVerifyCouldNotRun) {
  FixtureNode node;
  auto run = gpulaunch(node, {"verify", (node.scratch() / "missing.lock").string()});
  EXPECT_EQ(run.exit_code, 2);
}

TEST(VerifyCli, UpLockedRefusesToStartOnANodeThatDrifted) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("seed-fixed-cuda-home-pinned"), node, 30000);
  const std::string lock = (node.scratch() / "node.lock").string();
  ASSERT_EQ(
      gpulaunch(node, {"lock", profile, "--root", node.root().string(), "-o", lock}).exit_code, 0);
  // This machine is not the fixture node: at least the model the lock names is not here.
  auto run = gpulaunch(node, {"up", profile, "--locked", lock});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("DRIFT: "));
  EXPECT_THAT(run.out,
              ::testing::MatchesRegex("(.|\n)*\nmodel.files.config.json +sha256:[0-9a-f]{64} +"
                                      "\\(none\\) +this file of the model changed\n(.|\n)*"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("starting gpulaunch-")));
}

TEST(DiffCli, TwoNodesFactsSideBySide) {
  FixtureNode a;
  auto profile_a = build_scenario(scenario_named("healthy-blackwell-cuda-13"), a, 30000);
  auto facts_a = gpulaunch(a, {"facts", profile_a, "--root", a.root().string(), "--json"});
  FixtureNode b;
  auto profile_b = build_scenario(scenario_named("healthy-hopper-cuda-12.9"), b, 30000);
  auto facts_b = gpulaunch(b, {"facts", profile_b, "--root", b.root().string(), "--json"});
  const auto file_a = a.scratch() / "a.json";
  const auto file_b = a.scratch() / "b.json";
  std::ofstream(file_a) << facts_a.out;
  std::ofstream(file_b) << facts_b.out;
  auto run = gpulaunch(a, {"diff", file_a.string(), file_b.string()});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, ::testing::MatchesRegex(
                           "(.|\n)*\n! node.gpu.model +NVIDIA RTX PRO 6000 Blackwell Server "
                           "Edition +NVIDIA H200 +memory fraction(.|\n)*"));
  auto same = gpulaunch(a, {"diff", file_a.string(), file_a.string()});
  EXPECT_EQ(same.exit_code, 0);
  EXPECT_THAT(same.out, HasSubstr("\nidentical\n"));
}

}  // namespace
}  // namespace gl::test
