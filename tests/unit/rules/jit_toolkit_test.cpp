// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "rules/jit_toolkit.hpp"

namespace gl {
namespace {

Facts node_with(std::vector<std::pair<std::string, std::string>> toolkits) {
  Facts facts;
  for (const auto& [root, nvcc] : toolkits) {
    ToolkitFact toolkit;
    toolkit.root = root;
    toolkit.nvcc = nvcc;
    toolkit.root_exists = toolkit.nvcc_exists = true;
    toolkit.nvcc_version = "13.0";
    facts.toolkits.push_back(toolkit);
  }
  return facts;
}

// FlashInfer's order: CUDA_HOME, CUDA_PATH, which nvcc, /usr/local/cuda.
TEST(JitToolkit, FollowsFlashInferOrder) {
  auto facts = node_with({{"/usr", "/usr/bin/nvcc"},
                          {"/usr/local/cuda", "/usr/local/cuda/bin/nvcc"},
                          {"/opt/a", "/opt/a/bin/nvcc"},
                          {"/opt/b", "/opt/b/bin/nvcc"}});
  EXPECT_EQ(pick_jit_toolkit({{"CUDA_HOME", "/opt/a"}, {"CUDA_PATH", "/opt/b"}}, facts).root,
            "/opt/a");
  EXPECT_EQ(pick_jit_toolkit({{"CUDA_PATH", "/opt/b"}, {"PATH", "/usr/bin"}}, facts).root,
            "/opt/b");
  auto which = pick_jit_toolkit({{"PATH", "/usr/local/sbin:/usr/bin:/bin"}}, facts);
  EXPECT_EQ(which.root, "/usr");
  EXPECT_EQ(which.how, "`which nvcc` = /usr/bin/nvcc");
  EXPECT_EQ(pick_jit_toolkit({{"PATH", "/bin"}}, facts).root, "/usr/local/cuda");
  EXPECT_EQ(pick_jit_toolkit({{"CUDA_HOME", ""}, {"PATH", "/bin"}}, facts).root, "/usr/local/cuda");
}

TEST(JitToolkit, NothingFound) {
  auto pick = pick_jit_toolkit({{"PATH", "/bin"}}, Facts{});
  EXPECT_EQ(pick.root, "");
  EXPECT_FALSE(pick.usable());
}

// FLASHINFER_NVCC replaces the compiler (cpp_ext.py's ninja `nvcc = ...`), not the root whose
// nvcc the version gate asks; a bare name is found on the unit's PATH.
TEST(JitToolkit, FlashInferNvccOverridesTheCompilerOnly) {
  auto facts = node_with({{"/usr/local/cuda-13.0", "/usr/local/cuda-13.0/bin/nvcc"},
                          {"/usr/local/cuda-12.8", "/usr/local/cuda-12.8/bin/nvcc"}});
  facts.toolkits[1].nvcc_version = "12.8";
  auto pick = pick_jit_toolkit({{"CUDA_HOME", "/usr/local/cuda-13.0"},
                                {"FLASHINFER_NVCC", "/usr/local/cuda-12.8/bin/nvcc -ccbin g++"}},
                               facts);
  EXPECT_EQ(pick.root, "/usr/local/cuda-13.0");
  EXPECT_EQ(pick.nvcc_override, "/usr/local/cuda-12.8/bin/nvcc");
  ASSERT_NE(pick.compiling(), nullptr);
  EXPECT_EQ(pick.compiling()->version(), "12.8");
  auto bare = pick_jit_toolkit({{"CUDA_HOME", "/usr/local/cuda-13.0"},
                                {"PATH", "/opt/x:/usr/local/cuda-12.8/bin"},
                                {"FLASHINFER_NVCC", "nvcc"},
                                {"FLASHINFER_NVCC_LAUNCHER", "sccache"}},
                               facts);
  EXPECT_EQ(bare.nvcc_override, "/usr/local/cuda-12.8/bin/nvcc");
  EXPECT_EQ(bare.launcher, "sccache");
  auto unknown = pick_jit_toolkit(
      {{"CUDA_HOME", "/usr/local/cuda-13.0"}, {"FLASHINFER_NVCC", "/opt/wrap/nvcc"}}, facts);
  EXPECT_EQ(unknown.compiling(), nullptr);
  auto plain = pick_jit_toolkit({{"CUDA_HOME", "/usr/local/cuda-13.0"}}, facts);
  EXPECT_EQ(plain.compiling(), plain.toolkit);
}

}  // namespace
}  // namespace gl
