// SPDX-License-Identifier: Apache-2.0
// `render --slurm`'s script: every profile in tests/golden/slurm/ renders to exactly the script
// stored beside it (NAME.sbatch; GPULAUNCH_UPDATE_GOLDEN=1 rewrites them, then review the diff),
// and the numbers it is built on. The goldens are also run through `bash -n` and shellcheck
// (the slurm_script_lint test) and through a real slurmctld and slurmd (tests/slurm).

#include "group/slurm_script.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "profile/loader.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {
namespace fs = std::filesystem;

const fs::path kGolden = fs::path(GL_SOURCE_DIR) / "tests/golden/slurm";

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Profile load(const std::string& name) {
  DirectorySource source({kGolden});
  auto profile = load_profile(source, (kGolden / (name + ".toml")).string());
  EXPECT_TRUE(profile) << (profile ? "" : profile.error().message);
  return profile ? *profile : Profile{};
}

SlurmScriptOptions options() {
  SlurmScriptOptions o;
  o.gpulaunch_binary = "/usr/bin/gpulaunch";
  o.version = "GOLDEN";
  return o;
}

class SlurmGolden : public testing::TestWithParam<std::string> {};

TEST_P(SlurmGolden, RendersTheStoredScript) {
  const Profile profile = load(GetParam());
  auto script = render_slurm_script(profile, options());
  ASSERT_TRUE(script) << script.error().message;
  const fs::path expected = kGolden / (GetParam() + ".sbatch");
  if (const char* update = std::getenv("GPULAUNCH_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(expected, std::ios::binary) << *script;
    return;
  }
  ASSERT_TRUE(fs::exists(expected))
      << expected << " is missing; run with GPULAUNCH_UPDATE_GOLDEN=1";
  EXPECT_EQ(*script, slurp(expected));
}

std::vector<std::string> golden_names() {
  std::vector<std::string> names;
  for (const auto& item : fs::directory_iterator(kGolden))
    if (item.path().extension() == ".toml") names.push_back(item.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Slurm, SlurmGolden, testing::ValuesIn(golden_names()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(SlurmScript, GroupSizeSignalAndGpusComeFromTheProfile) {
  auto script = render_slurm_script(load("sglang-two-nodes"), options());
  ASSERT_TRUE(script);
  EXPECT_NE(script->find("#SBATCH --nodes=2\n"), std::string::npos);
  EXPECT_NE(script->find("#SBATCH --gpus-per-node=8\n"), std::string::npos);
  // drain 60 s + the 15 s margin
  EXPECT_NE(script->find("#SBATCH --signal=B:TERM@75\n"), std::string::npos);
  EXPECT_NE(script->find("rendezvous_port=$((5000 + port_offset))"), std::string::npos);
  EXPECT_NE(script->find("max_steps=4\n"), std::string::npos);  // budget 3 + 1
  EXPECT_NE(script->find("model_json='\"deepseek-v3\"'"), std::string::npos);
}

TEST(SlurmScript, AOneNodeProfileAsksForOneNodeAndNoGresWhenTold) {
  auto script = render_slurm_script(load("vllm-one-node"), options());
  ASSERT_TRUE(script);
  EXPECT_NE(script->find("#SBATCH --nodes=1\n"), std::string::npos);
  EXPECT_NE(script->find("#SBATCH --gpus-per-node=1\n"), std::string::npos);
  SlurmScriptOptions no_gres = options();
  no_gres.gres = false;
  auto without = render_slurm_script(load("vllm-one-node"), no_gres);
  ASSERT_TRUE(without);
  EXPECT_EQ(without->find("--gpus-per-node"), std::string::npos);
  EXPECT_NE(script->find("#SBATCH --signal=B:TERM@45\n"), std::string::npos);
}

TEST(SlurmScript, APortWithoutRoomForTheOffsetIsRefused) {
  Profile profile = load("vllm-one-node");
  profile.server.port = 65000;
  auto script = render_slurm_script(profile, options());
  ASSERT_FALSE(script);
  EXPECT_EQ(script.error().message,
            "server.port 65000 leaves no room for a Slurm job's port offset (up to +1990): choose "
            "one below 63546");
}

TEST(SlurmScript, TheArchiveAndBinaryAreQuotedForTheShell) {
  SlurmScriptOptions o = options();
  o.gpulaunch_binary = "/opt/gl bin/gpulaunch";
  o.cache_archive = "/shared/it's.tar.zst";
  auto script = render_slurm_script(load("vllm-one-node"), o);
  ASSERT_TRUE(script);
  EXPECT_NE(script->find("gpulaunch='/opt/gl bin/gpulaunch'\n"), std::string::npos);
  EXPECT_NE(script->find("cache_archive='/shared/it'\\''s.tar.zst'\n"), std::string::npos);
}

TEST(SlurmKillWait, ReadsScontrolShowConfig) {
  EXPECT_EQ(parse_kill_wait("JobRequeue              = 1\nKillWait                = 30 sec\n"
                            "KillOnBadExit           = 0\n"),
            std::chrono::seconds(30));
  EXPECT_EQ(parse_kill_wait("KillWait                = 5 sec"), std::chrono::seconds(5));
  EXPECT_EQ(parse_kill_wait("KillOnBadExit = 0\n"), std::nullopt);
  EXPECT_EQ(parse_kill_wait("KillWait = soon\n"), std::nullopt);
  EXPECT_EQ(parse_kill_wait("KillWait = 5 min\n"), std::nullopt);
}

TEST(SlurmKillWait, WarnsOnlyWhenShorterThanTheDrain) {
  const Profile profile = load("sglang-two-nodes");  // drain 60 s
  EXPECT_EQ(kill_wait_warning(profile, std::chrono::seconds(60)), std::nullopt);
  EXPECT_EQ(kill_wait_warning(profile, std::chrono::seconds(30)),
            "warning: the cluster's KillWait (30 s) is shorter than server.drain_timeout (60 s): "
            "a scancel SIGKILLs the engines 30 s into their drain; ask the administrators for "
            "KillWait >= 60 or lower server.drain_timeout");
}

}  // namespace
}  // namespace gl
