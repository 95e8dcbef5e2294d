// SPDX-License-Identifier: Apache-2.0
#include "rules/init_proposal.hpp"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fakes/rules/fake_chooser.hpp"
#include "profile/loader.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr unsigned long long kGpuMib = 97887;  // RTX PRO 6000 Blackwell
constexpr unsigned long long kGB = 1000ULL * 1000 * 1000;

Facts node(int gpus) {
  Facts facts;
  for (int i = 0; i < gpus; ++i)
    facts.gpus.push_back({i, "NVIDIA RTX PRO 6000 Blackwell Server Edition",
                          "GPU-" + std::to_string(i), 12, 0, kGpuMib});
  ToolkitFact link;
  link.root = "/usr/local/cuda";
  link.resolved_root = "/usr/local/cuda-13.0";
  link.nvcc = "/usr/local/cuda/bin/nvcc";
  link.root_exists = link.nvcc_exists = true;
  link.nvcc_version = "13.0";
  link.cudart = "lib64/libcudart.so.13";
  link.runtime_header = true;
  ToolkitFact versioned = link;
  versioned.root = versioned.resolved_root = "/usr/local/cuda-13.0";
  versioned.nvcc = "/usr/local/cuda-13.0/bin/nvcc";
  ToolkitFact old = versioned;
  old.root = old.resolved_root = "/usr/local/cuda-12.8";
  old.nvcc_version = "12.8";
  facts.toolkits = {link, versioned, old};
  return facts;
}

VenvCandidate venv(const std::string& prefix, EngineKind kind, const std::string& version) {
  VenvCandidate candidate;
  candidate.prefix = prefix;
  candidate.found_via = "/opt/venvs";
  candidate.python.torch_version = "2.9.0+cu130";
  candidate.python.torch_cuda = "13.0";
  candidate.engines = {{kind, version}};
  return candidate;
}

// A dense model: 28 layers, 8 KV heads of 128, a 32k context: 3.8 GB of KV cache a request.
ModelCandidate model(const std::string& path, unsigned long long bytes, bool hub = false) {
  ModelCandidate candidate;
  candidate.path = path;
  candidate.found_via = "/models";
  candidate.hub = hub;
  candidate.fact.path = path;
  candidate.fact.weights_bytes = bytes;
  candidate.fact.weights_source = "1 weight file(s)";
  candidate.fact.layers = 28;
  candidate.fact.kv_heads = 8;
  candidate.fact.head_dim = 128;
  candidate.fact.context = 32768;
  return candidate;
}

TEST(InitProposal, OneOfEachAsksNothingAndPinsTheMatchingToolkit) {
  Discovery found;
  found.venvs = {venv("/opt/venv", EngineKind::sglang, "0.5.5")};
  found.models = {model("/models/qwen", 16 * kGB)};
  test::FakeChooser chooser;
  auto decision = decide_init({.name = "qwen"}, node(8), found, chooser);
  ASSERT_TRUE(decision) << decision.error().message;
  // One venv, one model: not asked. Every power of two up to 8 fits, and two roots have nvcc
  // 13.0: both asked, the proposals taken.
  ASSERT_EQ(chooser.asked.size(), 2u);
  EXPECT_EQ(chooser.asked[0].topic, "parallelism");
  EXPECT_THAT(chooser.asked[0].options, ElementsAre("tp = 1", "tp = 2", "tp = 4", "tp = 8"));
  EXPECT_EQ(chooser.asked[1].topic, "toolkit");
  EXPECT_EQ(decision->engine, EngineKind::sglang);
  EXPECT_EQ(decision->venv, "/opt/venv");
  EXPECT_EQ(decision->model, "/models/qwen");
  EXPECT_EQ(decision->tp, 1);
  EXPECT_EQ(decision->cuda_home, "/usr/local/cuda-13.0");
}

// vLLM's 0.11 and SGLang's 0.5 say nothing about each other: engines are listed engine by
// engine, never interleaved by version number (which engine fits is the node's to say: init --yes
// judges each with check).
TEST(InitProposal, TwoEnginesAreNotOrderedByTheirVersionNumbers) {
  Discovery found;
  found.venvs = {venv("/opt/a", EngineKind::vllm, "0.11.0"),
                 venv("/opt/b", EngineKind::sglang, "0.5.10"),
                 venv("/opt/c", EngineKind::sglang, "0.5.5")};
  std::vector<EngineOption> answers;
  auto choice = venv_choice({.name = "q"}, found, answers);
  ASSERT_TRUE(choice) << choice.error().message;
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(answers[0].engine, answers[1].engine);  // an engine's releases stay together
  EXPECT_NE(answers[1].engine, answers[2].engine);
  const auto sglang_first = answers[0].engine == EngineKind::sglang;
  EXPECT_EQ(answers[sglang_first ? 0 : 1].version, "0.5.10");  // newest within the engine
}

TEST(InitProposal, TwoVenvsAskAndTheRuleProposesTheNewestEngine) {
  Discovery found;
  found.venvs = {venv("/opt/a", EngineKind::sglang, "0.5.5"),
                 venv("/opt/b", EngineKind::sglang, "0.5.10")};
  found.models = {model("/models/qwen", 16 * kGB)};
  test::FakeChooser chooser;
  auto decision = decide_init({.name = "q"}, node(1), found, chooser);
  ASSERT_TRUE(decision) << decision.error().message;
  ASSERT_GE(chooser.asked.size(), 1u);
  const Choice& venvs = chooser.asked.front();
  EXPECT_EQ(venvs.topic, "venv");
  ASSERT_EQ(venvs.options.size(), 2u);
  EXPECT_THAT(venvs.options[venvs.proposed], HasSubstr("/opt/b (sglang 0.5.10"));
  EXPECT_EQ(venvs.rule, std::string(kVenvRule));
  EXPECT_EQ(decision->venv, "/opt/b");

  test::FakeChooser other;
  other.answers = {1};  // the older one, as an operator may
  auto chosen = decide_init({.name = "q"}, node(1), found, other);
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->venv, "/opt/a");
  EXPECT_THAT(chosen->venv_why, HasSubstr("chosen of 2 found"));
}

TEST(InitProposal, EngineNarrowsTheVenvs) {
  Discovery found;
  found.venvs = {venv("/opt/a", EngineKind::sglang, "0.5.5"),
                 venv("/opt/b", EngineKind::vllm, "0.11.0")};
  found.models = {model("/models/qwen", 16 * kGB)};
  test::FakeChooser chooser;
  auto decision = decide_init({.name = "q", .engine = EngineKind::vllm}, node(1), found, chooser);
  ASSERT_TRUE(decision);
  EXPECT_EQ(decision->engine, EngineKind::vllm);
  EXPECT_EQ(decision->venv, "/opt/b");
  auto none = decide_init({.name = "q", .engine = EngineKind::trtllm}, node(1), found, chooser);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message,
            "init: found no venv holding trtllm-serve: name it with --venv DIR");
}

TEST(InitProposal, TwoModelsAskAndLocalOnesComeFirst) {
  Discovery found;
  found.venvs = {venv("/opt/a", EngineKind::sglang, "0.5.5")};
  found.models = {model("Org/Hub", 2 * kGB, true), model("/models/z", 2 * kGB),
                  model("/models/a", 2 * kGB)};
  test::FakeChooser chooser;
  auto decision = decide_init({.name = "q"}, node(1), found, chooser);
  ASSERT_TRUE(decision);
  ASSERT_FALSE(chooser.asked.empty());
  const Choice& models = chooser.asked.front();
  EXPECT_EQ(models.topic, "model");
  ASSERT_EQ(models.options.size(), 3u);
  EXPECT_THAT(models.options[0], HasSubstr("/models/a"));
  EXPECT_THAT(models.options[2], HasSubstr("Org/Hub"));
  EXPECT_EQ(decision->model, "/models/a");
}

TEST(InitProposal, TooBigForOneGpuProposesTheSmallestTpThatFits) {
  std::vector<long long> sizes;
  const Facts facts = node(8);
  std::vector<const GpuFact*> gpus;
  for (const auto& gpu : facts.gpus) gpus.push_back(&gpu);
  // 150 GB of weights: one 96 GiB GPU at SGLang's share cannot hold it, two can.
  auto choice = parallelism_choice(EngineKind::sglang, model("/m", 150 * kGB).fact, gpus, sizes);
  ASSERT_TRUE(choice) << choice.error().message;
  EXPECT_THAT(sizes, ElementsAre(2, 4, 8));
  EXPECT_EQ(choice->proposed, 0u);
  EXPECT_THAT(choice->rule, HasSubstr("the smallest tensor-parallel size the fit rule says fits"));
  EXPECT_THAT(choice->rule, HasSubstr("tp = 1: needs"));
}

TEST(InitProposal, TooBigForEveryGpuIsRefusedWithTheArithmetic) {
  std::vector<long long> sizes;
  const Facts facts = node(2);
  std::vector<const GpuFact*> gpus;
  for (const auto& gpu : facts.gpus) gpus.push_back(&gpu);
  auto choice = parallelism_choice(EngineKind::vllm, model("/m", 700 * kGB).fact, gpus, sizes);
  ASSERT_FALSE(choice);
  EXPECT_THAT(choice.error().message, HasSubstr("init: the model does not fit 2 GPU(s) of 97887 "
                                                "MiB with vLLM"));
  EXPECT_THAT(choice.error().message, HasSubstr("tp = 2: needs"));
  EXPECT_THAT(choice.error().message, HasSubstr("a lower-precision checkpoint"));
}

TEST(InitProposal, TrtllmsShareIsNotJudgedSoTpIsOne) {
  std::vector<long long> sizes;
  const Facts facts = node(8);
  std::vector<const GpuFact*> gpus;
  for (const auto& gpu : facts.gpus) gpus.push_back(&gpu);
  auto choice = parallelism_choice(EngineKind::trtllm, model("/m", 700 * kGB).fact, gpus, sizes);
  ASSERT_TRUE(choice);
  EXPECT_THAT(sizes, ElementsAre(1));
  EXPECT_THAT(choice->rule, HasSubstr("not judged"));
}

TEST(InitProposal, ToolkitMatchingTorchsCudaPrefersARootThatIsNoLink) {
  std::vector<std::optional<std::string>> roots;
  const Facts facts = node(1);
  auto choice = toolkit_choice(std::string("13.0"), facts.toolkits, roots);
  ASSERT_EQ(roots.size(), 2u);
  EXPECT_EQ(roots[choice.proposed], "/usr/local/cuda-13.0");
  EXPECT_EQ(roots[1], "/usr/local/cuda");
  auto none = toolkit_choice(std::string("12.9"), facts.toolkits, roots);
  EXPECT_TRUE(roots.empty());
  EXPECT_THAT(none.rule, HasSubstr("install CUDA 12.9's nvcc (cuda-nvcc-12-9)"));
}

TEST(InitProposal, GpusNarrowTheFitAndAreWritten) {
  Discovery found;
  found.venvs = {venv("/opt/a", EngineKind::sglang, "0.5.5")};
  found.models = {model("/models/big", 150 * kGB)};
  test::FakeChooser chooser;
  auto decision = decide_init({.name = "q", .gpus = {"2", "3", "5", "6"}}, node(8), found, chooser);
  ASSERT_TRUE(decision) << decision.error().message;
  EXPECT_EQ(decision->tp, 2);
  EXPECT_THAT(decision->devices, ElementsAre("2", "3"));
  auto missing = decide_init({.name = "q", .gpus = {"9"}}, node(8), found, chooser);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("--gpus names '9'"));
}

// The text is a profile the loader takes, with each value's reason as a comment.
TEST(InitProposal, ProfileTextLoadsAndSaysWhy) {
  InitDecision decision;
  decision.name = "qwen";
  decision.engine = EngineKind::vllm;
  decision.engine_version = "0.11.0";
  decision.venv = "/opt/venvs/vllm \"quoted\"";
  decision.torch = "2.9.0+cu130";
  decision.torch_cuda = "13.0";
  decision.model = "/models/qwen";
  decision.model_why = "16.0 GB of weights\nsecond line";
  decision.tp = 2;
  decision.parallelism_why = "the smallest tensor-parallel size the fit rule says fits";
  decision.cuda_home = "/usr/local/cuda-13.0";
  decision.toolkit_why = "nvcc 13.0 is torch's CUDA";
  decision.devices = {"0", "1"};
  const std::string text = init_profile_text(decision);
  EXPECT_THAT(text, HasSubstr("# 16.0 GB of weights second line\npath = \"/models/qwen\"\n"));
  EXPECT_THAT(text, HasSubstr("venv = \"/opt/venvs/vllm \\\"quoted\\\"\"\n"));
  EXPECT_THAT(text, HasSubstr("# nvcc 13.0 is torch's CUDA\ncuda_home = \"/usr/local/cuda-13.0\""));
  EXPECT_THAT(text, HasSubstr("devices = [\"0\", \"1\"]"));
  const auto dir = std::filesystem::temp_directory_path() / "gl-init-proposal-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "qwen.toml") << text;
  auto profile = load_profile(DirectorySource({dir}, ProfileTrust{}), (dir / "qwen.toml").string());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_EQ(profile->engine.kind, EngineKind::vllm);
  EXPECT_EQ(profile->parallelism.tp, 2);
  EXPECT_EQ(profile->toolkit.cuda_home, "/usr/local/cuda-13.0");
  EXPECT_EQ(profile->model.path, "/models/qwen");
}

}  // namespace
}  // namespace gl
