// SPDX-License-Identifier: Apache-2.0
#include "catalog/hub_cache.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(HubCache, RepoFolderAndIdAreInverse) {
  EXPECT_EQ(hub_repo_folder("Qwen/Qwen3-32B"), "models--Qwen--Qwen3-32B");
  EXPECT_EQ(hub_repo_id("models--Qwen--Qwen3-32B"), "Qwen/Qwen3-32B");
  EXPECT_EQ(hub_repo_id("models--gpt2"), "gpt2");
  for (const std::string id : {"a/b", "meta-llama/Llama-3.1-8B", "gpt2"})
    EXPECT_EQ(hub_repo_id(hub_repo_folder(id)), id);
}

TEST(HubCache, OtherFoldersAreNoModels) {
  EXPECT_EQ(hub_repo_id("datasets--org--set"), std::nullopt);
  EXPECT_EQ(hub_repo_id(".locks"), std::nullopt);
  EXPECT_EQ(hub_repo_id("models--"), std::nullopt);
  EXPECT_EQ(hub_repo_id("models--org----x"), std::nullopt);
}

TEST(HubCache, DirectoryFollowsHuggingfaceHubsOrder) {
  EXPECT_EQ(hub_cache_directory({{"HOME", "/h"}, {"HF_HOME", "/hf"}}), "/hf/hub");
  EXPECT_EQ(hub_cache_directory({{"HF_HOME", "/hf"}, {"HF_HUB_CACHE", "/c"}}), "/c");
  EXPECT_EQ(hub_cache_directory({{"HF_HUB_CACHE", ""}, {"HOME", "/h"}}),
            "/h/.cache/huggingface/hub");
  EXPECT_EQ(hub_cache_directory({}), std::nullopt);
}

}  // namespace
}  // namespace gl
