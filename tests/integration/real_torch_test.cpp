// SPDX-License-Identifier: Apache-2.0
// Real PyTorch and the real CUDA toolkit under the unit, on a real systemd 252 booted privately
// (tests/integration/harness): Debian's python3-torch seen through a venv made with
// --system-site-packages, and the CUDA 13.0 toolkit at /usr/local/cuda-13.0. The engine
// (real_torch/engine.py, a `command` engine `gpulaunch up` starts) shares a tensor between
// processes with the file_descriptor strategy, builds a C++ extension with
// torch.utils.cpp_extension.load into the pinned TORCH_EXTENSIONS_DIR, compiles a kernel for
// sm_120 with the unit's nvcc, and serves. A restart reuses the build; after torch's version
// changed (a torch of the venv's own now shadows the system's, its version.py saying so), the
// extension cache alone is cleared and the build runs again, while caches torch does not key
// keep their entries.
// Needs (scripts/install-deps.sh on CI): python3-torch, pybind11-dev, python3-dev, python3-venv,
// ninja-build, g++, and the CUDA 13.0 toolkit at /usr/local/cuda-13.0; exits 77 naming what is
// missing otherwise.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/mock_engine_suite.hpp"
#include "util/state_paths.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;
const std::string kSystemTorch = "/usr/lib/python3/dist-packages/torch";
const std::string kToolkit = "/usr/local/cuda-13.0";
constexpr int kPort = 31301;

// What the test needs from the machine, each with the Debian package that brings it.
void skip_unless_installed() {
  const std::pair<std::string, std::string> needs[] = {
      {kSystemTorch + "/version.py", "python3-torch"},
      {"/usr/include/pybind11/pybind11.h", "pybind11-dev"},
      {"/usr/include/python3.11/Python.h", "python3-dev"},
      {"/usr/lib/python3.11/venv/__init__.py", "python3-venv"},
      {"/usr/bin/ninja", "ninja-build"},
      {"/usr/bin/g++", "g++"},
      {kToolkit + "/bin/nvcc", "the CUDA 13.0 toolkit at " + kToolkit},
  };
  for (const auto& [path, package] : needs)
    if (!fs::exists(path)) {
      std::printf("SKIP: %s is missing (install %s)\n", path.c_str(), package.c_str());
      std::fflush(stdout);
      std::exit(77);
    }
}

class RealTorch : public MockEngineSuite<RealTorch> {
 public:
  static MockEngineHost* new_host() {
    skip_unless_installed();
    return new MockEngineHost(fs::path(GL_BINARY_DIR) / "real-torch-work", kGpulaunch,
                              GL_SOURCE_DIR);
  }

 protected:
  static fs::path venv() { return host().work() / "torch-venv"; }

  // What the engine saw at its last start ($HOME/real-torch.json, under the private /var/lib).
  static nlohmann::json report() {
    auto read = host().systemd().exec(
        {"cat", (gl::state_paths::engine_home("torch") / "real-torch.json").string()});
    return nlohmann::json::parse(read.out, nullptr, false);
  }
  static std::string cache_file(const std::string& variable, const std::string& file) {
    const std::string env = gpulaunch("env torch").out;
    const std::string key = "export " + variable + "=";
    const auto at = env.find(key);
    if (at == std::string::npos) return "";
    const std::string directory = env.substr(at + key.size(), env.find('\n', at) - at - key.size());
    return host().systemd().exec({"cat", directory + "/" + file}).out;
  }
};

// A torch of the venv's own that shadows the system's: the same files, linked, with a version.py
// that names another version, as an upgrade inside the venv would.
void shadow_system_torch(const fs::path& venv, const std::string& version) {
  const fs::path torch = venv / "lib/python3.11/site-packages/torch";
  fs::create_directories(torch);
  for (const auto& entry : fs::directory_iterator(kSystemTorch))
    if (entry.path().filename() != "version.py")
      fs::create_symlink(entry.path(), torch / entry.path().filename());
  std::ifstream in(kSystemTorch + "/version.py");
  std::ofstream out(torch / "version.py");
  for (std::string line; std::getline(in, line);)
    out << (line.starts_with("__version__ = ") ? "__version__ = '" + version + "'" : line) << "\n";
}

TEST_F(RealTorch, BuildsSharesCompilesServesAndKeepsItsCachesHonest) {
  fs::remove_all(venv());
  ASSERT_EQ(std::system(("/usr/bin/python3 -m venv --without-pip --system-site-packages '" +
                         venv().string() + "'")
                            .c_str()),
            0);
  std::ofstream(host().work() / "profiles/torch.toml")
      << "[engine]\nkind = \"command\"\nvenv = \"" << venv().string() << "\"\n"
      << "argv = [\"" << (venv() / "bin/python").string() << "\", \"" << GL_SOURCE_DIR
      << "/tests/integration/real_torch/engine.py\"]\n"
      << "args = [\"--port\", \"" << kPort << "\"]\n"
      << "[server]\nport = " << kPort << "\nready_timeout = \"80s\"\n"
      << "[toolkit]\ncuda_home = \"" << kToolkit << "\"\narch_list = \"12.0f\"\n"
      << "[restart]\npolicy = \"no\"\n";

  // torch's own grammar for torch, FlashInfer's for FlashInfer.
  const std::string env = gpulaunch("env torch").out;
  EXPECT_NE(env.find("export TORCH_CUDA_ARCH_LIST=12.0\n"), std::string::npos) << env;
  EXPECT_NE(env.find("export FLASHINFER_CUDA_ARCH_LIST=12.0f\n"), std::string::npos) << env;
  // The venv's interpreter finds the system's torch, and so do the facts.
  const auto facts = nlohmann::json::parse(gpulaunch("facts torch --json").out, nullptr, false);
  ASSERT_TRUE(facts.is_object());
  std::ifstream version_py(kSystemTorch + "/version.py");
  std::string system_version;
  for (std::string line; std::getline(version_py, line);)
    if (line.starts_with("__version__ = ")) system_version = line.substr(15, line.size() - 16);
  EXPECT_EQ(facts["python"].value("torch_version", ""), system_version) << facts["python"].dump();

  auto up = gpulaunch("up torch --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out << gpulaunch("logs torch -n 60").out;
  auto first = report();
  ASSERT_TRUE(first.is_object()) << gpulaunch("logs torch -n 60").out;
  EXPECT_EQ(first["torch_version"], system_version);
  EXPECT_EQ(first["torch_file"], kSystemTorch + "/__init__.py");
  EXPECT_EQ(first["torch_cuda_arch_list"], "12.0");
  EXPECT_EQ(first["sharing"]["strategy"], "file_descriptor");
  EXPECT_EQ(first["sharing"]["child_exit"], 0);
  EXPECT_EQ(first["sharing"]["seen_by_parent"], nlohmann::json(std::vector<int>(8, 42)));
  EXPECT_EQ(first["extension"]["answer"], 42);
  EXPECT_TRUE(first["extension"]["built"].get<bool>());
  const std::string build_dir = first["extension"].value("directory", "");
  EXPECT_TRUE(build_dir.ends_with("/torch_extensions/gl_twice")) << build_dir;
  EXPECT_EQ(first["kernel"]["nvcc"], kToolkit + "/bin/nvcc");
  EXPECT_EQ(first["kernel"]["status"], 0) << first["kernel"].dump();
  EXPECT_GT(first["kernel"].value("object_bytes", 0), 0);

  // A restart with nothing changed: the build is reused.
  auto restart = gpulaunch("restart torch");
  ASSERT_EQ(restart.exit_code, 0) << restart.out;
  auto second = report();
  EXPECT_FALSE(second["extension"]["built"].get<bool>()) << second.dump();
  EXPECT_EQ(second["extension"]["directory"], build_dir);

  // torch changed: the extension cache is cleared (torch would reuse a build of the old torch,
  // TORCH_EXTENSIONS_DIR not being keyed), Triton's and TileLang's entries stay.
  shadow_system_torch(venv(), system_version + "+gl.shadow");
  restart = gpulaunch("restart torch");
  ASSERT_EQ(restart.exit_code, 0) << restart.out << gpulaunch("logs torch -n 60").out;
  auto third = report();
  EXPECT_EQ(third["torch_version"], system_version + "+gl.shadow");
  EXPECT_EQ(third["torch_file"],
            (venv() / "lib/python3.11/site-packages/torch/__init__.py").string());
  EXPECT_TRUE(third["extension"]["built"].get<bool>()) << third.dump();
  EXPECT_EQ(third["extension"]["answer"], 42);
  const std::string kept = "kept across a torch change\n";
  EXPECT_EQ(cache_file("TRITON_CACHE_DIR", "entry-from-first-start"), kept + kept + kept);
  EXPECT_EQ(cache_file("TILELANG_CACHE_DIR", "entry-from-first-start"), kept + kept + kept);

  gpulaunch("down torch --runtime --purge");
}

}  // namespace
