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

// A Debian node: python3.11 with its own site.py (which names dist-packages) and Debian's
// python3-torch in /usr/lib/python3/dist-packages, and a venv made from it.
void debian_python(test::FixtureNode& node, const std::string& system_torch) {
  node.write("/usr/lib/python3.11/os.py", "# the standard library's landmark\n");
  node.write("/usr/lib/python3.11/site.py",
             "# Debian: getsitepackages() adds local/lib/python3.11/dist-packages, "
             "lib/python3/dist-packages\n");
  node.write("/usr/lib/python3/dist-packages/torch/version.py",
             "__version__ = '" + system_torch + "'\ncuda: Optional[str] = None\n");
  node.write("/usr/lib/python3/dist-packages/torch-" + system_torch + ".egg-info/PKG-INFO",
             "Name: torch\nVersion: " + system_torch + "\n");
}

void system_site_venv(test::FixtureNode& node, bool include) {
  node.venv("/opt/venv", std::nullopt, std::nullopt, {{"sglang", "0.5.6"}});
  node.write("/opt/venv/pyvenv.cfg",
             std::string("home = /usr/bin\ninclude-system-site-packages = ") +
                 (include ? "true" : "false") + "\nversion = 3.11.2\n");
}

TEST(PythonEnv, ASystemSitePackagesVenvSeesTheSystemsTorchAfterItsOwnPackages) {
  test::FixtureNode node;
  debian_python(node, "1.13.1");
  system_site_venv(node, true);
  auto env = probe_python_env(NodeFs(node.root()), "/opt/venv", "/opt/venv/bin/python");
  EXPECT_EQ(env.torch_version, "1.13.1");
  EXPECT_EQ(env.torch_cuda, std::nullopt);  // Debian's torch is a CPU build
  EXPECT_TRUE(env.modules["torch"]);
  EXPECT_EQ(env.packages["sglang"], "0.5.6");
  // site.py's order: the venv's prefix, then the base's, Debian's directories in each.
  EXPECT_EQ(env.site_packages, (std::vector<std::string>{"/opt/venv/lib/python3.11/site-packages",
                                                         "/usr/lib/python3/dist-packages"}));
}

TEST(PythonEnv, AVenvWithoutSystemSitePackagesHasNoSystemTorch) {
  test::FixtureNode node;
  debian_python(node, "1.13.1");
  system_site_venv(node, false);
  auto env = probe_python_env(NodeFs(node.root()), "/opt/venv", "/opt/venv/bin/python");
  EXPECT_EQ(env.torch_version, std::nullopt);
  EXPECT_FALSE(env.modules["torch"]);
  EXPECT_EQ(env.site_packages,
            (std::vector<std::string>{"/opt/venv/lib/python3.11/site-packages"}));
}

TEST(PythonEnv, TheVenvsOwnTorchShadowsTheSystems) {
  test::FixtureNode node;
  debian_python(node, "1.13.1");
  node.venv("/opt/venv", "2.9.0+cu130", "13.0", {});
  node.write("/opt/venv/pyvenv.cfg",
             "home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.11.2\n");
  auto env = probe_python_env(NodeFs(node.root()), "/opt/venv", "/opt/venv/bin/python");
  EXPECT_EQ(env.torch_version, "2.9.0+cu130");
  EXPECT_EQ(env.packages["torch"], "2.9.0+cu130");
}

// CPython's own site.py (a python.org or uv build): one site-packages per prefix, no
// dist-packages, and the base found up from `home` by lib/pythonX.Y/os.py.
TEST(PythonEnv, AnUpstreamBaseInterpretersSitePackages) {
  test::FixtureNode node;
  node.write("/opt/python/lib/python3.12/os.py", "");
  node.write("/opt/python/lib/python3.12/site.py", "# CPython: lib/pythonX.Y/site-packages\n");
  node.write("/opt/python/lib/python3.12/site-packages/torch/version.py",
             "__version__ = '2.8.0+cu128'\ncuda: Optional[str] = '12.8'\n");
  node.write("/opt/python/lib/python3/dist-packages/torch/version.py",
             "__version__ = '0.0.0'\n");  // not on this interpreter's path
  node.write("/v/lib/python3.12/site-packages/.keep", "");
  node.write("/v/pyvenv.cfg",
             "Home = /opt/python/bin\nInclude-System-Site-Packages = True\n"
             "version_info = 3.12.7\n");
  auto env = probe_python_env(NodeFs(node.root()), "/v", "/v/bin/python");
  EXPECT_EQ(env.torch_version, "2.8.0+cu128");
  EXPECT_EQ(env.site_packages,
            (std::vector<std::string>{"/v/lib/python3.12/site-packages",
                                      "/opt/python/lib/python3.12/site-packages"}));
}

TEST(PythonEnv, ReadsPyvenvCfgAsSiteDoes) {
  const VenvConfig config = parse_pyvenv_cfg(
      "home = /usr/bin\ninclude-system-site-packages = TRUE\nversion = 3.11.2\n"
      "executable = /usr/bin/python3.11\n");
  EXPECT_TRUE(config.system_site_packages);
  EXPECT_EQ(config.home, "/usr/bin");
  EXPECT_EQ(config.version, "3.11");
  EXPECT_FALSE(parse_pyvenv_cfg("home = /usr/bin\n").system_site_packages);
}

}  // namespace
}  // namespace gl
