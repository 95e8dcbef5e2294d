// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "facts/python_env.hpp"
#include "support/fixture_node.hpp"
#include "temp_dir.hpp"

namespace gl {
namespace {

TEST(PythonEnv, EngineVersionFromTheVenvsDistInfoAlone) {
  gl::testing::TempDir root;
  EXPECT_EQ(installed_engine_version(NodeFs(root.path()), EngineKind::sglang, "/v"), std::nullopt);
  root.write("v/lib/python3.12/site-packages/sglang-0.5.6.dist-info/METADATA",
             "Metadata-Version: 2.4\nName: sglang\nVersion: 0.5.6.post1\n");
  EXPECT_EQ(installed_engine_version(NodeFs(root.path()), EngineKind::sglang, "/v"), "0.5.6.post1");
  EXPECT_EQ(installed_engine_version(NodeFs(root.path()), EngineKind::vllm, "/v"), std::nullopt);
}

TEST(PythonEnv, ReadsTorchVersionPy) {
  auto torch = parse_torch_version_py(
      "from typing import Optional\n__version__ = '2.9.0+cu130'\ndebug = False\n"
      "cuda: Optional[str] = '13.0'\ngit_version = 'x'\nhip: Optional[str] = None\n");
  EXPECT_EQ(torch.version, "2.9.0+cu130");
  EXPECT_EQ(torch.cuda, "13.0");
}

TEST(PythonEnv, CpuTorchHasNoCuda) {
  auto torch = parse_torch_version_py("__version__ = '2.9.0+cpu'\ncuda: Optional[str] = None\n");
  EXPECT_EQ(torch.version, "2.9.0+cpu");
  EXPECT_FALSE(torch.cuda);
}

TEST(PythonEnv, MetadataVersionFromHeadersOnly) {
  EXPECT_EQ(
      parse_metadata_version("Metadata-Version: 2.1\nName: flashinfer-python\nVersion: 0.6.7\n"),
      "0.6.7");
  EXPECT_FALSE(parse_metadata_version("Name: x\n\nVersion: 1.0\n"));
}

TEST(PythonEnv, NormalisesDistNames) {
  EXPECT_EQ(normalise_dist_name("FlashInfer-Python"), "flashinfer_python");
  EXPECT_EQ(normalise_dist_name("tensorrt.llm"), "tensorrt_llm");
}

// FlashInfer's kernel packages, laid out as pip installs them (dist-info names keep the local
// version: flashinfer_jit_cache-0.6.17+cu130.dist-info).
TEST(PythonEnv, ReadsFlashInferCompanionPackages) {
  test::FixtureNode node;
  node.venv("/opt/venv", "2.9.0+cu130", "13.0",
            {{"flashinfer", "0.6.18"},
             {"flashinfer_jit_cache", "0.6.17+cu130"},
             {"flashinfer_cubin", "0.6.18"}});
  auto env = probe_python_env(NodeFs(node.root()), "/opt/venv", "/opt/venv/bin/python");
  EXPECT_EQ(env.packages["flashinfer"], "0.6.18");
  EXPECT_EQ(env.packages["flashinfer_jit_cache"], "0.6.17+cu130");
  EXPECT_EQ(env.packages["flashinfer_cubin"], "0.6.18");
}

}  // namespace
}  // namespace gl
