// SPDX-License-Identifier: Apache-2.0
// The gpulaunch binary itself on the seed node: exit codes and the report's key lines.

#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"
#include "support/image_fixture.hpp"
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

// What the user sees of a refusal: the exit status and stderr alone.
Run gpulaunch_stderr(std::vector<std::string> args) {
  std::vector<std::string> sh_args{
      "-c", "exec \"$@\" 2>&1 >/dev/null", "sh",         "/usr/bin/env",
      "-i", "PATH=/usr/bin:/bin",          GPULAUNCH_BIN};
  sh_args.insert(sh_args.end(), args.begin(), args.end());
  // A read that blocks (a FIFO nobody writes) fails here instead of hanging the suite.
  auto result = run_process("/bin/sh", sh_args, std::chrono::seconds(20));
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

// `check` never talks to systemd and reads no archive, so it loads neither library at its start
// (issue 44: within 10 ms; bench/README.md, where check's time goes). The loader's own account
// (LD_DEBUG=files) of every object it opens is read.
TEST(CheckCli, CheckLoadsNeitherLibsystemdNorLibarchive) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("healthy-blackwell-cuda-13"), node, 30000);
  auto result = run_process(
      "/bin/sh",  // the loader writes its account to stderr
      {"-c", "exec \"$@\" 2>&1", "sh", "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LD_DEBUG=files",
       std::string("GPULAUNCH_FAKE_NVML=") +
           (getenv("GPULAUNCH_FAKE_NVML") ? getenv("GPULAUNCH_FAKE_NVML") : ""),
       std::string("LD_LIBRARY_PATH=") + GPULAUNCH_FAKE_NVML_DIR, GPULAUNCH_BIN, "check", profile,
       "--root", node.root().string()},
      std::chrono::seconds(30));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->exit_code, 0) << result->out;
  EXPECT_THAT(result->out, HasSubstr("file=libstdc++.so.6"));     // the loader's account is there
  EXPECT_THAT(result->out, HasSubstr("file=libnvidia-ml.so.1"));  // and covers dlopen
  EXPECT_THAT(result->out, Not(HasSubstr("libsystemd")));
  EXPECT_THAT(result->out, Not(HasSubstr("libarchive")));
}

// The same check on a terminal (a pty from util-linux's script): errors red, warnings yellow;
// NO_COLOR, a pipe and --json stay plain (issue 46).
Run on_terminal(const std::string& no_color, const std::vector<std::string>& args) {
  std::string command = std::string("exec env -i PATH=/usr/bin:/bin TERM=xterm ") +
                        "LD_LIBRARY_PATH=" + GPULAUNCH_FAKE_NVML_DIR + " NO_COLOR=" + no_color +
                        " " + GPULAUNCH_BIN;
  for (const auto& arg : args) command += " '" + arg + "'";
  auto result =
      run_process("/usr/bin/script", {"-qec", command, "/dev/null"}, std::chrono::seconds(30));
  EXPECT_TRUE(result) << (result ? "" : result.error().message);
  return result ? Run{result->exit_code, result->out} : Run{};
}

TEST(CheckCli, ColourOnATerminalOnlyAndNotWithNoColor) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("seed-sm120-distro-nvcc-12.8"), node, 30000);
  const std::vector<std::string> check{"check", profile, "--root", node.root().string()};
  auto tty = on_terminal("", check);
  EXPECT_EQ(tty.exit_code, 1) << tty.out;
  EXPECT_THAT(tty.out, HasSubstr("\033[31mERRORS\033[0m (2)"));
  EXPECT_THAT(tty.out, HasSubstr("  \033[31merror\033[0m["));
  EXPECT_THAT(tty.out, HasSubstr("  \033[33mwarning\033[0m[cuda-home-unset]"));
  EXPECT_THAT(tty.out, HasSubstr("\033[31mFAILED, the start would fail\033[0m: 2 error(s)"));
  auto no_color = on_terminal("1", check);
  EXPECT_THAT(no_color.out, HasSubstr("  error["));
  EXPECT_THAT(no_color.out, Not(HasSubstr("\033[")));
  auto json_check = check;
  json_check.push_back("--json");
  EXPECT_THAT(on_terminal("", json_check).out, Not(HasSubstr("\033[")));
  EXPECT_THAT(gpulaunch(node, check).out, Not(HasSubstr("\033[")));  // a pipe
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
  // Copied alone, without the ExecStartPost= program installed beside it.
  EXPECT_THAT(run.out, HasSubstr("warning[gpulaunch-program-missing] the unit would run '" +
                                 (tree / "gpulaunch-record-start").string() +
                                 "' as root (ExecStartPost=), and it is not an executable file"));
  // An image probed with --root has no gpulaunch of this host to judge.
  auto image = gpulaunch(node, {"check", profile, "--root", node.root().string()},
                         (tree / "gpulaunch").string());
  EXPECT_THAT(image.out, Not(HasSubstr("gpulaunch-binary-user-writable")));
}

TEST(CheckCli, EngineAsRootIsAWarningNotAnError) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("engine-as-explicit-root"), node, 30000);
  auto run = gpulaunch(node, {"check", profile, "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("  warning[engine-runs-as-root] the engine would run as root: "
                                 "service.user is root"));
}

// An image profile through the binary's own path: podman (a fake on the node's PATH answering
// from a vLLM cu130 image root) is asked to inspect and mount it; the node's driver is 570.
TEST(CheckCli, Cu130ImageOnA570DriverWithoutCompatFails) {
  FixtureNode node;
  ImageSpec spec;
  spec.compat_driver.reset();
  auto image_root = node.scratch() / "image";
  write_image_root(image_root, spec);
  auto inspect = node.scratch() / "inspect.json";
  std::ofstream(inspect) << image_inspect_json(spec);
  write_fake_podman(node.root() / "usr/bin/podman", spec, inspect, image_root,
                    node.scratch() / "podman.log");
  auto nvml = node.nvml({GpuSpec{1, 9, 0, "NVIDIA H100 80GB HBM3"}}, "570.172.08", "12.8");
  setenv("GPULAUNCH_FAKE_NVML", nvml.c_str(), 1);
  node.mkdir("/models/m");
  node.write("/etc/cdi/nvidia.yaml", "kind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n");
  auto profile = node.scratch() / "img.toml";
  std::ofstream(profile) << "[engine]\nkind = \"vllm\"\nimage = \"" << spec.reference
                         << "\"\n[model]\npath = \"/models/m\"\n[service]\nuser = \"llm\"\n";
  auto run = gpulaunch(node, {"check", profile.string(), "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("error[driver-too-old-for-image] the driver runs CUDA up to 12.8, "
                                 "the image localhost/vllm-openai:v0.11.0-cu130 is built for CUDA "
                                 "13.0"));
  EXPECT_THAT(run.out, Not(HasSubstr("cdi-device-missing")));
  // Rendered, the unit's root `run` starts the image under podman as the profile's user.
  auto rendered = gpulaunch(node, {"render", profile.string()});
  EXPECT_EQ(rendered.exit_code, 0) << rendered.out;
  EXPECT_THAT(rendered.out,
              HasSubstr("\"--container-user=llm\" \"--\" \"/usr/bin/podman\" \"run\""));
  EXPECT_THAT(rendered.out,
              HasSubstr("\"localhost/vllm-openai:v0.11.0-cu130\" \"vllm\" \"serve\""));
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

// `check --all`: every snapshot `up` installed under the root, one line each, the worst status.
std::string slurp_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void install_snapshot(FixtureNode& node, const std::string& name, const std::string& text) {
  node.write("/var/lib/gpulaunch/snapshots/" + name + ".toml", text);
}

TEST(CheckAllCli, OneLinePerInstalledProfileAndTheWorstStatus) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("healthy-blackwell-cuda-13"), node, 30000);
  std::string text = slurp_file(profile);
  // Both run as the scenario's explicit user, on purpose (service-user-shared is another test's).
  const auto service = text.find("[service]\n");
  ASSERT_NE(service, std::string::npos) << text;
  text.insert(service + 10, "share_user = true\n");
  install_snapshot(node, "good", text);
  std::string broken = text;
  broken.replace(broken.find("/usr/local/cuda-13.0"), 20, "/usr/local/cuda-12.4");
  install_snapshot(node, "broken", broken);
  auto run = gpulaunch(node, {"check", "--all", "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("PROFILE  WORST    FINDINGS  FIRST\n"));
  EXPECT_THAT(run.out, HasSubstr("\nbroken   error           2  error[cuda-home-missing] "
                                 "toolkit.cuda_home '/usr/local/cuda-12.4' does not exist\n"));
  // Both hold GPUs 0-7: each names the other.
  EXPECT_THAT(run.out, HasSubstr("\ngood     warning         1  warning[gpus-shared-with-profile] "
                                 "profile 'broken' (sglang) is installed on the same GPU(s)"));

  // A snapshot that does not load could not be checked: the worst status is 2.
  install_snapshot(node, "garbled", "[engine\n");
  auto garbled = gpulaunch(node, {"check", "--all", "--root", node.root().string(), "--json"});
  EXPECT_EQ(garbled.exit_code, 2) << garbled.out;
  EXPECT_THAT(garbled.out, HasSubstr("\"worst\": \"failed\""));
  EXPECT_THAT(garbled.out, HasSubstr("\"exit_code\": 2"));
}

TEST(CheckAllCli, NothingInstalledIsOk) {
  FixtureNode node;
  build_scenario(scenario_named("healthy-blackwell-cuda-13"), node, 30000);
  auto run = gpulaunch(node, {"check", "--all", "--root", node.root().string()});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("no installed profiles in /var/lib/gpulaunch/snapshots"));
  auto both = gpulaunch_stderr({"check", "--all", "k26-ar"});
  EXPECT_NE(both.exit_code, 0);
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

// `verify --json`, what the Ansible collection's gpulaunch_verify reads: the same verdict and exit
// status as the table, each drifted field with the lock's value and the node's.
TEST(VerifyCli, JsonNamesEachDriftedFieldWithBothValues) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("seed-fixed-cuda-home-pinned"), node, 30000);
  const std::string root = node.root().string();
  const std::string lock = (node.scratch() / "node.lock").string();
  ASSERT_EQ(gpulaunch(node, {"lock", profile, "--root", root, "-o", lock}).exit_code, 0);
  auto same = gpulaunch(node, {"verify", lock, "--root", root, "--json"});
  EXPECT_EQ(same.exit_code, 0) << same.out;
  auto answer = nlohmann::json::parse(same.out, nullptr, false);
  ASSERT_TRUE(answer.is_object()) << same.out;
  EXPECT_EQ(answer["lock"], lock);
  EXPECT_EQ(answer["ok"], true);
  EXPECT_EQ(answer["drift"], nlohmann::json::array());

  node.toolkit("/usr/local/cuda-13.0", "12.9");
  auto drifted = gpulaunch(node, {"verify", lock, "--root", root, "--json"});
  EXPECT_EQ(drifted.exit_code, 1) << drifted.out;
  answer = nlohmann::json::parse(drifted.out, nullptr, false);
  ASSERT_TRUE(answer.is_object()) << drifted.out;
  EXPECT_EQ(answer["ok"], false);
  EXPECT_EQ(answer["profile"], std::filesystem::path(profile).stem().string());
  ASSERT_EQ(answer["drift"].size(), 1u) << drifted.out;
  EXPECT_EQ(answer["drift"][0]["field"], "node.toolkit.version");
  EXPECT_EQ(answer["drift"][0]["locked"], "13.0");
  EXPECT_EQ(answer["drift"][0]["node"], "12.9");
  EXPECT_THAT(answer["drift"][0]["why"].get<std::string>(), HasSubstr("JIT kernels compile"));

  // Could not run: exit 2, nothing on stdout, the one-line reason on stderr.
  const std::string missing = (node.scratch() / "missing.lock").string();
  auto broken = gpulaunch(node, {"verify", missing, "--json"});
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_EQ(broken.out, "");
  auto said = gpulaunch_stderr({"verify", missing, "--json"});
  EXPECT_THAT(said.out, HasSubstr("Failed to"));
  EXPECT_EQ(std::ranges::count(said.out, '\n'), 1) << said.out;
}

// The profile edited since the lock: verify names the keys that changed, with both values,
// beside the hash rows that stand for them.
std::string edited_profile(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto port = text.find("port = 30000");
  EXPECT_NE(port, std::string::npos) << text;
  text.replace(port, 12, "port = 30001");
  text.erase(0, text.find('\n') + 1);  // the description
  text += "\n[env]\nFOO = \"bar\"\n";
  std::ofstream(path) << text;
  return text;
}

TEST(VerifyCli, AnEditedProfileIsNamedKeyByKey) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("seed-fixed-cuda-home-pinned"), node, 30000);
  const std::string root = node.root().string();
  const std::string lock = (node.scratch() / "node.lock").string();
  ASSERT_EQ(gpulaunch(node, {"lock", profile, "--root", root, "-o", lock}).exit_code, 0);
  edited_profile(profile);
  auto run = gpulaunch(node, {"verify", lock, "--root", root});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("\nprofile.sha256  sha256:"));
  EXPECT_THAT(run.out, HasSubstr("\n\nprofile keys that differ (locked -> live):\n"
                                 "  removed  description  'scenario seed-fixed-cuda-home-pinned'\n"
                                 "  added    env.FOO      'bar'\n"
                                 "  changed  server.port  30000 -> 30001\n"));

  auto json = gpulaunch(node, {"verify", lock, "--root", root, "--json"});
  EXPECT_EQ(json.exit_code, 1) << json.out;
  auto answer = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(answer.is_object()) << json.out;
  ASSERT_EQ(answer["profile_keys"].size(), 3u) << json.out;
  EXPECT_EQ(
      answer["profile_keys"][2],
      (nlohmann::json{
          {"key", "server.port"}, {"change", "changed"}, {"old", "30000"}, {"new", "30001"}}));
  EXPECT_EQ(answer["profile_keys"][1]["old"], nullptr);
}

// A lock whose profile text was edited by hand is refused at its line and column.
TEST(VerifyCli, ALockWithAnUnreadableProfileTextCouldNotRun) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("seed-fixed-cuda-home-pinned"), node, 30000);
  auto locked = gpulaunch(node, {"lock", profile, "--root", node.root().string()});
  ASSERT_EQ(locked.exit_code, 0);
  auto lock = nlohmann::ordered_json::parse(locked.out);
  lock["profile"]["merged"] = "a = 1\nb = \n";
  const std::string path = (node.scratch() / "bad.lock").string();
  std::ofstream(path) << lock.dump(2);
  auto run = gpulaunch_stderr({"verify", path});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.out, HasSubstr(path + " (profile.merged):2:"));
  EXPECT_EQ(std::ranges::count(run.out, '\n'), 1) << run.out;
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
  EXPECT_EQ(same.out, "identical\n");  // no rows: none differs
}

// Two locks of one profile before and after an edit: only the rows that differ, the profile's
// keys by name; every row with --all; the same in JSON.
TEST(DiffCli, TwoLocksShowOnlyTheDifferingRowsAndTheProfileKeys) {
  FixtureNode node;
  auto profile = build_scenario(scenario_named("seed-fixed-cuda-home-pinned"), node, 30000);
  const std::string root = node.root().string();
  const std::string before = (node.scratch() / "before.lock").string();
  const std::string after = (node.scratch() / "after.lock").string();
  ASSERT_EQ(gpulaunch(node, {"lock", profile, "--root", root, "-o", before}).exit_code, 0);
  edited_profile(profile);
  ASSERT_EQ(gpulaunch(node, {"lock", profile, "--root", root, "-o", after}).exit_code, 0);

  auto run = gpulaunch(node, {"diff", before, after});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, ::testing::MatchesRegex("  FIELD +" + before + " +" + after +
                                               "\n! profile.sha256 .*\n! unit.sha256 .*\n\n"
                                               "profile keys that differ \\(.*\\):\n"
                                               "  removed  description .*\n"
                                               "  added    env.FOO      'bar'\n"
                                               "  changed  server.port  30000 -> 30001\n\n"
                                               "2 field\\(s\\) differ \\(marked !\\); --all "
                                               "shows every field\n"));
  auto all = gpulaunch(node, {"diff", before, after, "--all"});
  EXPECT_EQ(all.exit_code, 1);
  EXPECT_THAT(all.out, HasSubstr("\n  node.driver.version "));
  EXPECT_THAT(all.out, HasSubstr("\n2 field(s) differ (marked !)\n"));

  auto json = gpulaunch(node, {"diff", before, after, "--json"});
  EXPECT_EQ(json.exit_code, 1) << json.out;
  auto answer = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(answer.is_object()) << json.out;
  EXPECT_EQ(answer["kind"], "lock");
  EXPECT_EQ(answer["identical"], false);
  ASSERT_EQ(answer["fields"].size(), 2u) << json.out;
  EXPECT_EQ(answer["fields"][0]["field"], "profile.sha256");
  EXPECT_EQ(answer["fields"][0]["differs"], true);
  EXPECT_EQ(answer["profile_keys"].size(), 3u);

  auto same = gpulaunch(node, {"diff", before, before, "--json"});
  EXPECT_EQ(same.exit_code, 0) << same.out;
  answer = nlohmann::json::parse(same.out, nullptr, false);
  EXPECT_EQ(answer["identical"], true);
  EXPECT_EQ(answer["fields"], nlohmann::json::array());
  EXPECT_EQ(answer["profile_keys"], nlohmann::json::array());
}

// Files handed to `check --facts`, `verify` and `diff` may come from anywhere: each hostile one
// is refused with exit 2 and one line, without hanging, an unbounded read or a crash.
class HostileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    profile_ = build_scenario(scenario_named("healthy-blackwell-cuda-13"), node_, 30000);
    auto facts = gpulaunch(node_, {"facts", profile_, "--root", node_.root().string(), "--json"});
    ASSERT_EQ(facts.exit_code, 0);
    good_facts_ = (node_.scratch() / "good.json").string();
    std::ofstream(good_facts_) << facts.out;
  }

  std::string file(const std::string& name, const std::string& content) {
    const auto path = node_.scratch() / name;
    std::ofstream(path) << content;
    return path.string();
  }

  // Every command that reads `path` refuses it with `message`, on one line, exit 2.
  void expect_refused(const std::string& path, const std::string& message) {
    const std::vector<std::vector<std::string>> commands{
        {"check", profile_, "--facts", path}, {"verify", path}, {"diff", path, good_facts_}};
    for (const auto& command : commands) {
      auto run = gpulaunch_stderr(command);
      EXPECT_EQ(run.exit_code, 2) << command.front() << ": " << run.out;
      EXPECT_EQ(run.out, message + "\n") << command.front();
    }
  }

  FixtureNode node_;
  std::string profile_;
  std::string good_facts_;
};

TEST_F(HostileInput, DeeplyNestedJsonIsRefusedNotACrash) {
  const auto deep = file("deep.json", std::string(200000, '[') + std::string(200000, ']'));
  auto run = gpulaunch_stderr({"check", profile_, "--facts", deep});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "Failed to read facts '" + deep + "': nested deeper than 64 levels\n");
  run = gpulaunch_stderr({"verify", deep});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "Failed to read lock '" + deep + "': nested deeper than 64 levels\n");
  run = gpulaunch_stderr({"diff", deep, good_facts_});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "Failed to read '" + deep + "': nested deeper than 64 levels\n");
}

TEST_F(HostileInput, DevZeroIsRefusedWithoutReadingIt) {
  expect_refused("/dev/zero", "Refusing to read '/dev/zero': not a regular file");
}

TEST_F(HostileInput, AFifoNobodyWritesIsRefusedWithoutWaiting) {
  const auto fifo = (node_.scratch() / "facts.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(fifo, "Refusing to read '" + fifo + "': not a regular file");
}

TEST_F(HostileInput, AnOversizeFileIsRefusedBeforeReading) {
  const auto big = file("big.json", "{}");
  std::filesystem::resize_file(big, (16 << 20) + 1);
  expect_refused(big, big + ":1:1: file is 16777217 bytes, over the limit of 16777216 bytes");
}

TEST_F(HostileInput, JsonThatIsNotFactsIsNamedAsSuch) {
  const auto array = file("array.json", "[1, 2, 3]\n");
  auto run = gpulaunch_stderr({"check", profile_, "--facts", array});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "'" + array +
                         "' is not a gpulaunch facts file: the top level is a JSON array, not an "
                         "object\n");
  const auto other = file("other.json", R"({"root": "/", "driver": {}, "gpus": {}})");
  run = gpulaunch_stderr({"diff", good_facts_, other});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "'" + other +
                         "' is not a gpulaunch facts file: \"gpus\" is a JSON object, not an "
                         "array\n");
  run = gpulaunch_stderr({"verify", array});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "Failed to read lock '" + array +
                         "': no \"gpulaunch_lock\" key; not a gpulaunch lockfile\n");
}

// A profile name becomes a path under /var/lib/gpulaunch and a unit name: `events ..` would read
// /var/lib/events.jsonl. Refused while the command line is parsed, before anything is opened.
TEST(ProfileNameCli, NamesThatAreNotNamesAreRefusedByEveryCommand) {
  const std::string rule =
      "(letters, digits, '-', '_', '.', not starting with '.' or '-', at most 64 characters)";
  auto run = gpulaunch_stderr({"events", ".."});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "profile: '..' is not a valid profile name " + rule + "\n");
  run = gpulaunch_stderr({"events", "../x"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "profile: '../x' is not a valid profile name " + rule + "\n");
  run = gpulaunch_stderr({"status", "a/b"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "profile: 'a/b' is neither a profile name nor a path to a NAME.toml file\n");
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"logs", ".."},
                                             {"down", "../x.toml/.."},
                                             {"restart", ".x"},
                                             {"record-exit", "--profile=.."},
                                             {"record-start", "--profile=.."},
                                             {"peer-failed", "--profile=..", "--from-rank=1",
                                              "--from-host=h", "--class=crash", "--at=1"},
                                             {"run", "--profile=..", "--", "/bin/true"},
                                             {"cache", "clear", ".."},
                                             {"exec", "..", "--", "/bin/true"},
                                             {"check", std::string(65, 'a')},
                                             {"lock", "a/.hidden.toml"}}) {
    run = gpulaunch_stderr(command);
    EXPECT_EQ(run.exit_code, 2) << command.front() << ": " << run.out;
    EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  }
}

// exec runs what the installed service runs: without an installed snapshot there is nothing to
// run, and its own failures (125) stay apart from any status the command may exit with.
TEST(ExecCli, AProfileThatIsNotInstalledIsRefusedWith125) {
  auto run = gpulaunch_stderr({"exec", "gl-never-installed", "--", "/bin/true"});
  EXPECT_EQ(run.exit_code, 125);
  if (::geteuid() != 0)
    EXPECT_EQ(run.out,
              "gpulaunch exec: must be run as root (it starts a transient service as the "
              "service's user)\n");
  else
    EXPECT_EQ(run.out,
              "Profile 'gl-never-installed' is not installed (no snapshot at "
              "'/var/lib/gpulaunch/snapshots/gl-never-installed.toml'): run `gpulaunch up "
              "gl-never-installed` first\n");
}

// The unit's ExecStartPost=: outside a unit (no $INVOCATION_ID, so no journal to read) it says
// there was nothing to record and exits 0, touching no history: it must never fail a start.
TEST(RecordStartCli, WithNoInvocationItRecordsNothingAndSucceeds) {
  // Outside the journal, gpulaunch's own lines go to stderr (log/logger).
  auto run = gpulaunch_stderr({"record-start", "--profile=never-installed-phases"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(run.out, HasSubstr("gpulaunch record-start: no start phases in this "
                                 "invocation's journal"));
  EXPECT_FALSE(std::filesystem::exists("/var/lib/gpulaunch/never-installed-phases"));
}

}  // namespace
}  // namespace gl::test
