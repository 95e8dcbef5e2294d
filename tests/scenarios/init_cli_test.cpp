// SPDX-License-Identifier: Apache-2.0
// `gpulaunch init` on fixture nodes laid out like real ones (tests/support/fixture_node): the
// profile it writes passes `check` there, for each engine kind; two venvs with --yes take the
// stated rule's pick; a model too big for one GPU gets the smallest tp that fits, one too big for
// all of them is refused.

#include <filesystem>
#include <fstream>

#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/scenario.hpp"
#include "support/image_fixture.hpp"
#include "util/process.hpp"

namespace gl::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

CliRun gpulaunch(const std::vector<std::string>& args) {
  std::vector<std::string> sh_args{
      "-c",
      "exec \"$@\" 2>&1 </dev/null",
      "sh",
      "/usr/bin/env",
      "-i",
      "PATH=/usr/bin:/bin:/usr/local/bin",
      std::string("GPULAUNCH_FAKE_NVML=") +
          (getenv("GPULAUNCH_FAKE_NVML") ? getenv("GPULAUNCH_FAKE_NVML") : ""),
      std::string("LD_LIBRARY_PATH=") + GPULAUNCH_FAKE_NVML_DIR,
      GPULAUNCH_BIN};
  sh_args.insert(sh_args.end(), args.begin(), args.end());
  auto result = run_process("/bin/sh", sh_args, std::chrono::seconds(30));
  EXPECT_TRUE(result) << (result ? "" : result.error().message);
  return result ? CliRun{result->exit_code, result->out} : CliRun{};
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A model directory as `hf download --local-dir` leaves it: config.json and the index whose
// metadata.total_size the fit rule reads (the shards themselves are not needed for the size).
void write_model(FixtureNode& node, const std::string& path, unsigned long long bytes) {
  node.write(path + "/config.json",
             R"({"num_hidden_layers": 28, "num_attention_heads": 32, "num_key_value_heads": 8,
                 "hidden_size": 4096, "max_position_embeddings": 32768})");
  node.write(path + "/model.safetensors.index.json",
             fmt::format(R"({{"metadata": {{"total_size": {}}}, "weight_map": {{}}}})", bytes));
}

struct InitNode {
  FixtureNode node;
  std::filesystem::path profiles;

  explicit InitNode(Scenario scenario, unsigned long long model_bytes = 16'000'000'000ULL) {
    scenario.model_exists = false;
    build_scenario(scenario, node, 30000);
    write_model(node, "/models/m", model_bytes);
    if (scenario.engine == "trtllm") node.write("/opt/venv/bin/trtllm-serve", "#!/bin/sh\n", true);
    profiles = node.scratch() / "profiles";
  }

  CliRun init(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--profiles-dir", profiles.string(),   "init", name,
                                  "--root",         node.root().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return gpulaunch(args);
  }

  CliRun check(const std::string& name) {
    return gpulaunch(
        {"check", (profiles / (name + ".toml")).string(), "--root", node.root().string()});
  }
};

Scenario engine_scenario(const std::string& engine) {
  Scenario scenario = scenario_named("healthy-blackwell-cuda-13");
  scenario.engine = engine;
  if (engine == "vllm") scenario.packages = {{"vllm", "0.11.0"}, {"flashinfer", "0.6.7"}};
  if (engine == "trtllm") scenario.packages = {{"tensorrt_llm", "1.1.0"}};
  return scenario;
}

class InitEachEngine : public ::testing::TestWithParam<std::string> {};

TEST_P(InitEachEngine, WritesAProfileThatPassesCheck) {
  InitNode node(engine_scenario(GetParam()));
  const std::string name = "init-" + GetParam();
  const CliRun init = node.init(name, {"--yes"});
  EXPECT_EQ(init.exit_code, 0) << init.out;
  EXPECT_THAT(init.out, HasSubstr("OK, nothing blocks a start")) << init.out;
  const std::string text = read(node.profiles / (name + ".toml"));
  EXPECT_THAT(text, HasSubstr(fmt::format("kind = \"{}\"\n", GetParam())));
  EXPECT_THAT(text, HasSubstr("venv = \"/opt/venv\"\n"));
  EXPECT_THAT(text, HasSubstr("path = \"/models/m\"\n"));
  EXPECT_THAT(text, HasSubstr("tp = 1\n"));
  EXPECT_THAT(text, HasSubstr("cuda_home = \"/usr/local/cuda-13.0\"\n"));
  const CliRun check = node.check(name);
  EXPECT_EQ(check.exit_code, 0) << check.out;
}

INSTANTIATE_TEST_SUITE_P(Kinds, InitEachEngine, ::testing::Values("sglang", "vllm", "trtllm"));

TEST(InitCli, TwoVenvsWithYesTakeTheRulesPickAndSayWhy) {
  InitNode node(engine_scenario("sglang"));
  node.node.venv("/opt/gpulaunch/venvs/newer", "2.9.0+cu130", "13.0",
                 {{"sglang", "0.5.10"}, {"flashinfer", "0.6.7"}}, true, {"sglang"});
  const CliRun init = node.init("two-venvs", {"--yes"});
  EXPECT_EQ(init.exit_code, 0) << init.out;
  EXPECT_THAT(init.out, HasSubstr("init: venv: took /opt/gpulaunch/venvs/newer (sglang 0.5.10"));
  EXPECT_THAT(init.out, HasSubstr("of 2 found, by the rule: within an engine its newest release, "
                                  "then the first by path"));
  EXPECT_THAT(read(node.profiles / "two-venvs.toml"),
              HasSubstr("venv = \"/opt/gpulaunch/venvs/newer\"\n"));
}

// The newest release's venv has a torch this node's check refuses (CUDA 12.4, no sm_120): --yes
// keeps the venv whose profile passes, says why the other was not taken, and the profile it
// writes passes its own check.
TEST(InitCli, YesSkipsAVenvWhoseProfileCheckRefuses) {
  InitNode node(engine_scenario("sglang"));
  node.node.venv("/opt/gpulaunch/venvs/newer", "2.5.1+cu124", "12.4",
                 {{"sglang", "0.5.10"}, {"flashinfer", "0.6.7"}}, true, {"sglang"});
  const CliRun init = node.init("fits", {"--yes"});
  EXPECT_EQ(init.exit_code, 0) << init.out;
  EXPECT_THAT(init.out, HasSubstr("init: venv: not /opt/gpulaunch/venvs/newer (sglang 0.5.10"));
  EXPECT_THAT(init.out, HasSubstr("init: venv: took /opt/venv (sglang"));
  EXPECT_THAT(read(node.profiles / "fits.toml"), HasSubstr("venv = \"/opt/venv\"\n"));
  EXPECT_EQ(node.check("fits").exit_code, 0);
}

// Where no venv gives a profile that passes, init writes nothing and exits 1 with check's findings.
TEST(InitCli, YesWritesNothingWhenCheckRefusesEveryAnswer) {
  Scenario scenario = engine_scenario("sglang");
  scenario.torch = "2.5.1+cu124";
  scenario.torch_cuda = "12.4";
  InitNode node(scenario);
  const CliRun init = node.init("refused", {"--yes"});
  EXPECT_EQ(init.exit_code, 1) << init.out;
  EXPECT_THAT(init.out, HasSubstr("FAILED, the start would fail"));
  EXPECT_THAT(init.out, HasSubstr("init: wrote nothing: check refuses this profile"));
  EXPECT_FALSE(std::filesystem::exists(node.profiles / "refused.toml"));
}

// Two engines whose profiles both pass: their version numbers are not compared; --yes asks for
// --engine and writes nothing, and --engine settles it.
TEST(InitCli, YesAsksForAnEngineWhenTwoEnginesFit) {
  InitNode node(engine_scenario("sglang"));
  node.node.venv("/opt/team/venvs/vllm", "2.9.0+cu130", "13.0",
                 {{"vllm", "0.11.0"}, {"flashinfer", "0.6.7"}}, true, {"vllm"});
  const CliRun init = node.init("two-engines", {"--yes"});
  EXPECT_EQ(init.exit_code, 2) << init.out;
  EXPECT_THAT(init.out, HasSubstr("venvs of more than one engine give a profile that passes"));
  EXPECT_THAT(init.out, HasSubstr("pass --engine sglang or --engine vllm"));
  EXPECT_FALSE(std::filesystem::exists(node.profiles / "two-engines.toml"));
  const CliRun chosen = node.init("two-engines", {"--yes", "--engine", "vllm"});
  EXPECT_EQ(chosen.exit_code, 0) << chosen.out;
  EXPECT_THAT(read(node.profiles / "two-engines.toml"),
              HasSubstr("venv = \"/opt/team/venvs/vllm\"\n"));
}

// Where operators keep them: a team's /opt/<team>/venvs and a model under /srv.
TEST(InitCli, FindsTeamVenvsAndSrvModels) {
  Scenario scenario = engine_scenario("sglang");
  InitNode node(scenario);
  std::filesystem::remove_all(node.node.root() / "opt/venv");
  std::filesystem::remove_all(node.node.root() / "models/m");
  node.node.venv("/opt/inference/venvs/sglang", "2.9.0+cu130", "13.0",
                 {{"sglang", "0.5.10"}, {"flashinfer", "0.6.7"}}, true, {"sglang"});
  write_model(node.node, "/srv/qwen", 16'000'000'000ULL);
  const CliRun init = node.init("where", {"--yes"});
  EXPECT_EQ(init.exit_code, 0) << init.out;
  const std::string text = read(node.profiles / "where.toml");
  EXPECT_THAT(text, HasSubstr("venv = \"/opt/inference/venvs/sglang\"\n"));
  EXPECT_THAT(text, HasSubstr("path = \"/srv/qwen\"\n"));
}

TEST(InitCli, TwoModelsWithYesTakeTheFirstLocalByPath) {
  InitNode node(engine_scenario("sglang"));
  write_model(node.node, "/data/models/a", 16'000'000'000ULL);
  const CliRun init = node.init("two-models", {"--yes"});
  EXPECT_EQ(init.exit_code, 0) << init.out;
  EXPECT_THAT(init.out, HasSubstr("init: model: took /data/models/a"));
  EXPECT_THAT(init.out, HasSubstr("local directories and GGUF files before the hub cache's"));
}

TEST(InitCli, AModelTooBigForOneGpuGetsTheSmallestTpThatFits) {
  InitNode node(engine_scenario("sglang"), 150'000'000'000ULL);
  const CliRun init = node.init("big", {"--yes"});
  EXPECT_EQ(init.exit_code, 0) << init.out;
  const std::string text = read(node.profiles / "big.toml");
  EXPECT_THAT(text, HasSubstr("tp = 2\n"));
  EXPECT_THAT(text, HasSubstr("tp = 1: needs"));
  EXPECT_EQ(node.check("big").exit_code, 0);
}

TEST(InitCli, AModelTooBigForEveryGpuIsRefused) {
  Scenario scenario = engine_scenario("sglang");
  scenario.gpus = {{2, 12, 0}};
  InitNode node(scenario, 700'000'000'000ULL);
  const CliRun init = node.init("huge", {"--yes"});
  EXPECT_EQ(init.exit_code, 2) << init.out;
  EXPECT_THAT(init.out, HasSubstr("init: the model does not fit 2 GPU(s) of 97887 MiB"));
  EXPECT_FALSE(std::filesystem::exists(node.profiles / "huge.toml"));
}

TEST(InitCli, NeverOverwritesAProfile) {
  InitNode node(engine_scenario("sglang"));
  ASSERT_EQ(node.init("once", {"--yes"}).exit_code, 0);
  const std::string before = read(node.profiles / "once.toml");
  const CliRun again = node.init("once", {"--yes", "--model", "/models/m"});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.out, HasSubstr("exists already"));
  EXPECT_EQ(read(node.profiles / "once.toml"), before);
}

// --image: the engine, its version and torch come from the image root's podman mounts (a fake
// podman on the node's PATH answering from a vLLM cu130 image root); the profile names the image,
// pins no host toolkit, and passes check on this node (driver 580, a CDI spec for GPU 0).
TEST(InitCli, AnImageGivesItsEngineAndPassesCheck) {
  InitNode node(engine_scenario("sglang"));
  ImageSpec spec;
  const auto image_root = node.node.scratch() / "image";
  write_image_root(image_root, spec);
  const auto inspect = node.node.scratch() / "inspect.json";
  std::ofstream(inspect) << image_inspect_json(spec);
  write_fake_podman(node.node.root() / "usr/bin/podman", spec, inspect, image_root,
                    node.node.scratch() / "podman.log");
  node.node.write("/etc/cdi/nvidia.yaml", "kind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n");
  const CliRun init = node.init("img", {"--image", spec.reference, "--yes"});
  EXPECT_EQ(init.exit_code, 0) << init.out;
  const std::string text = read(node.profiles / "img.toml");
  EXPECT_THAT(text, HasSubstr("# vLLM 0.11.0 in this image, torch 2.9.0+cu130 for CUDA 13.0"));
  EXPECT_THAT(text,
              HasSubstr("kind = \"vllm\"\nimage = \"localhost/vllm-openai:v0.11.0-cu130\"\n"));
  EXPECT_THAT(text, Not(HasSubstr("venv =")));
  EXPECT_THAT(text, Not(HasSubstr("cuda_home =")));
  EXPECT_THAT(text, HasSubstr("none pinned: the engine compiles with the image's own CUDA 13.0.1"));
  EXPECT_EQ(node.check("img").exit_code, 0) << node.check("img").out;
  // An image podman cannot read: refused, with podman's own word, and nothing written.
  const CliRun missing = node.init("gone", {"--image", "localhost/not-here:1", "--yes"});
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_THAT(missing.out, HasSubstr("init --image 'localhost/not-here:1': "));
  EXPECT_FALSE(std::filesystem::exists(node.profiles / "gone.toml"));
}

TEST(InitCli, AsksForATerminalWithoutYes) {
  InitNode node(engine_scenario("sglang"));
  const CliRun no_terminal = node.init("ask");
  EXPECT_EQ(no_terminal.exit_code, 2);
  EXPECT_THAT(no_terminal.out, HasSubstr("or pass --yes to take the proposal"));
  EXPECT_FALSE(std::filesystem::exists(node.profiles / "ask.toml"));
}

}  // namespace
}  // namespace gl::test
