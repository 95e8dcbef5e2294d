// SPDX-License-Identifier: Apache-2.0
#include "facts/discovery.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/fixture_node.hpp"

namespace gl {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> venv_paths(const Discovery& found) {
  std::vector<std::string> paths;
  for (const auto& venv : found.venvs) paths.push_back(venv.prefix);
  return paths;
}

std::vector<std::string> model_paths(const Discovery& found) {
  std::vector<std::string> paths;
  for (const auto& model : found.models) paths.push_back(model.path);
  return paths;
}

const SkippedCandidate* skipped(const Discovery& found, const std::string& path) {
  for (const auto& entry : found.skipped)
    if (entry.path == path) return &entry;
  return nullptr;
}

constexpr const char* kConfig =
    R"({"num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
        "hidden_size": 512, "max_position_embeddings": 4096})";

TEST(Discovery, FindsVenvsWithTheirEngineTorchAndCuda) {
  test::FixtureNode node;
  node.venv("/opt/gpulaunch/venvs/sglang", "2.9.0+cu130", "13.0",
            {{"sglang", "0.5.5"}, {"flashinfer", "0.6.7"}});
  node.venv("/opt/venv", "2.8.0+cu129", "12.9", {{"vllm", "0.11.0"}});
  node.mkdir("/opt/notavenv/bin");  // no pyvenv.cfg
  const Discovery found = discover(NodeFs(node.root()), {});
  EXPECT_THAT(venv_paths(found),
              ::testing::ElementsAre("/opt/gpulaunch/venvs/sglang", "/opt/venv"));
  ASSERT_EQ(found.venvs.size(), 2u);
  EXPECT_EQ(found.venvs[0].found_via, "/opt/gpulaunch/venvs");
  ASSERT_EQ(found.venvs[0].engines.size(), 1u);
  EXPECT_EQ(found.venvs[0].engines[0].first, EngineKind::sglang);
  EXPECT_EQ(found.venvs[0].engines[0].second, "0.5.5");
  EXPECT_EQ(found.venvs[0].python.torch_cuda, "13.0");
  EXPECT_EQ(found.venvs[1].engines[0].first, EngineKind::vllm);
  EXPECT_EQ(found.venvs[1].python.torch_version, "2.8.0+cu129");
}

TEST(Discovery, FindsModelDirectoriesGgufFilesAndTheHubCache) {
  test::FixtureNode node;
  node.write("/models/qwen/config.json", kConfig);
  node.write("/models/qwen/model.safetensors", std::string(1000, 'w'));
  node.write("/models/tiny.gguf", std::string(300, 'g'));
  node.mkdir("/models/empty");  // no config.json: no model
  const std::string hub = "/root/.cache/huggingface/hub";
  const std::string repo = hub + "/models--Org--Name";
  node.write(repo + "/refs/main", "abc123\n");
  node.write(repo + "/blobs/c1", kConfig);
  node.write(repo + "/blobs/w1", std::string(700, 'w'));
  node.symlink(repo + "/snapshots/abc123/config.json", "../../blobs/c1");
  node.symlink(repo + "/snapshots/abc123/model.safetensors", "../../blobs/w1");
  // A link out of the cache is neither followed nor counted.
  node.write("/etc/secret.safetensors", std::string(5000, 's'));
  node.symlink(repo + "/snapshots/abc123/evil.safetensors", "/etc/secret.safetensors");
  const Discovery found = discover(NodeFs(node.root()), {.hub_caches = {hub}});
  EXPECT_THAT(model_paths(found),
              ::testing::ElementsAre("/models/qwen", "/models/tiny.gguf", "Org/Name"));
  ASSERT_EQ(found.models.size(), 3u);
  EXPECT_EQ(found.models[0].fact.weights_bytes, 1000u);
  EXPECT_EQ(found.models[0].fact.layers, 4);
  EXPECT_EQ(found.models[1].fact.weights_bytes, 300u);
  const ModelFact& hub_model = found.models[2].fact;
  EXPECT_TRUE(found.models[2].hub);
  EXPECT_EQ(hub_model.weights_bytes, 700u);
  EXPECT_EQ(hub_model.links_skipped, 1);
  EXPECT_EQ(hub_model.kv_heads, 2);
  EXPECT_EQ(hub_model.head_dim, 64);
}

// SECURITY.md: as root, discovery takes nothing the engine or another user could change.
TEST(Discovery, AsRootSkipsLinkedAndUserWritableCandidatesWithAReason) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: every fixture file is a user's otherwise";
  test::FixtureNode node;
  node.venv("/opt/venvs/good", "2.9.0+cu130", "13.0", {{"sglang", "0.5.5"}});
  node.venv("/home/u/venv", "2.9.0+cu130", "13.0", {{"sglang", "0.6.0"}});
  node.symlink("/opt/venvs/linked", "/home/u/venv");
  node.venv("/opt/venvs/shared", "2.9.0+cu130", "13.0", {{"vllm", "0.11.0"}});
  ASSERT_EQ(::chmod((node.root() / "opt/venvs/shared").c_str(), 0775), 0);
  node.venv("/opt/venvs/libs", "2.9.0+cu130", "13.0", {{"vllm", "0.11.0"}});
  ASSERT_EQ(
      ::chown((node.root() / "opt/venvs/libs/lib/python3.11/site-packages").c_str(), 1000, 1000),
      0);
  node.write("/models/good/config.json", kConfig);
  node.write("/models/hostile/config.json", kConfig);
  ASSERT_EQ(::chmod((node.root() / "models/hostile").c_str(), 0777), 0);
  node.write("/data/real/config.json", kConfig);
  node.symlink("/models/linked", "/data/real");

  const Discovery found = discover(NodeFs(node.root()), {.trusted_only = true});
  EXPECT_THAT(venv_paths(found), ::testing::ElementsAre("/opt/venvs/good"));
  // /data/real is found as itself (root's, under /data); the link to it is not followed.
  EXPECT_THAT(model_paths(found), ::testing::ElementsAre("/models/good", "/data/real"));
  ASSERT_TRUE(skipped(found, "/opt/venvs/linked"));
  EXPECT_THAT(skipped(found, "/opt/venvs/linked")->reason,
              HasSubstr("is a link, which discovery as root does not follow"));
  ASSERT_TRUE(skipped(found, "/opt/venvs/shared"));
  EXPECT_THAT(skipped(found, "/opt/venvs/shared")->reason, HasSubstr("(mode 0775)"));
  ASSERT_TRUE(skipped(found, "/opt/venvs/libs"));
  EXPECT_THAT(skipped(found, "/opt/venvs/libs")->reason, HasSubstr("owned by uid 1000"));
  ASSERT_TRUE(skipped(found, "/models/hostile"));
  ASSERT_TRUE(skipped(found, "/models/linked"));

  // Not root: the user's own choices are theirs to make.
  const Discovery anyone = discover(NodeFs(node.root()), {});
  EXPECT_EQ(anyone.venvs.size(), 4u);
  EXPECT_TRUE(anyone.skipped.empty());
}

TEST(Discovery, AToldVenvOrModelIsTheOnlyCandidate) {
  test::FixtureNode node;
  node.venv("/opt/venv", "2.9.0+cu130", "13.0", {{"sglang", "0.5.5"}});
  node.venv("/srv/venvs/other", "2.9.0+cu130", "13.0", {{"vllm", "0.11.0"}});
  node.write("/models/a/config.json", kConfig);
  node.write("/models/b/config.json", kConfig);
  const Discovery found =
      discover(NodeFs(node.root()), {.venv = "/srv/venvs/other", .model = "/models/b"});
  EXPECT_THAT(venv_paths(found), ::testing::ElementsAre("/srv/venvs/other"));
  EXPECT_EQ(found.venvs[0].found_via, "--venv");
  EXPECT_THAT(model_paths(found), ::testing::ElementsAre("/models/b"));
}

}  // namespace
}  // namespace gl
