// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "catalog/cuda_arch.hpp"
#include "facts/toolkit_probe.hpp"
#include "support/fixture_node.hpp"
#include "util/process.hpp"
#include "util/version.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;

TEST(ToolkitProbe, ParsesNvccRelease) {
  EXPECT_EQ(parse_nvcc_release("Cuda compilation tools, release 13.0, V13.0.88\n"), "13.0");
  EXPECT_EQ(parse_nvcc_release("release notes\nrelease 12.8, V12.8.93"), "12.8");
  EXPECT_FALSE(parse_nvcc_release("nvcc fatal"));
  EXPECT_FALSE(parse_nvcc_release("release 13.0"));  // no comma: not nvcc's line
}

// Plain scanning, as the regexes it replaced matched; megabytes of output are no risk (libstdc++'s
// std::regex recursed once per character).
TEST(ToolkitProbe, ParsesLikeTheRegexesOnAnyLength) {
  EXPECT_EQ(parse_nvcc_release("release x, release 12.8, V12.8.93"), "12.8");
  EXPECT_FALSE(parse_nvcc_release("release 13.0 V13"));
  EXPECT_FALSE(parse_nvcc_release("release 13., V13"));
  EXPECT_EQ(
      parse_cuda_header_version("#define CUDA_VERSION_MAJOR 13\n#define\tCUDA_VERSION \t13000"),
      "13.0");
  EXPECT_FALSE(parse_cuda_header_version("#define CUDA_VERSION\n"));
  EXPECT_FALSE(parse_cuda_header_version("#define CUDA_VERSION 99999999999999999999999"));
  const std::string long_line = "release " + std::string(1 << 20, '1');
  EXPECT_FALSE(parse_nvcc_release(long_line));
  EXPECT_FALSE(parse_cuda_header_version("#define" + std::string(1 << 20, ' ') + "X"));
  EXPECT_EQ(parse_nvcc_release(std::string(1 << 20, ' ') + "release 13.0,"), "13.0");
}

TEST(ToolkitProbe, ParsesArchListAndHeader) {
  EXPECT_THAT(parse_gpu_arch_list("compute_75\ncompute_120\ncompute_90\n"),
              ::testing::ElementsAre(75, 90, 120));
  EXPECT_EQ(parse_cuda_header_version("#define CUDA_VERSION 12080\n"), "12.8");
  EXPECT_EQ(parse_cuda_header_version("/* x */\n#  define\tCUDA_VERSION   13000\r\n"), "13.0");
  EXPECT_FALSE(parse_cuda_header_version("#define CUDA_VERSIONS 13000\n"));
  EXPECT_FALSE(parse_cuda_header_version("// #define CUDA_VERSION 13000\n"));
  EXPECT_EQ(parse_version_json(R"({"cuda": {"name": "CUDA SDK", "version": "13.0.3"}})"), "13.0.3");
  EXPECT_FALSE(parse_version_json("{"));
}

// NVIDIA's installer writes the SDK's version and each component's; nvcc's is cuda_nvcc.
TEST(ToolkitProbe, VersionJsonNamesNvccSeparately) {
  const std::string json = R"({"cuda": {"name": "CUDA SDK", "version": "11.8.20220929"},
    "cuda_nvcc": {"name": "CUDA NVCC", "version": "11.8.89"}})";
  EXPECT_EQ(parse_version_json(json), "11.8.20220929");
  EXPECT_EQ(parse_version_json_nvcc(json), "11.8.89");
  EXPECT_FALSE(parse_version_json_nvcc(R"({"cuda": {"version": "13.0.3"}})"));
}

// Scanning, not a backtracking matcher: a megabyte of one word is read without recursion.
TEST(ToolkitProbe, LongInputIsScannedNotRecursed) {
  const std::string word(4 << 20, '7');
  EXPECT_FALSE(parse_nvcc_release("release " + word));
  EXPECT_FALSE(parse_cuda_header_version("#define CUDA_VERSION " + word));
  EXPECT_TRUE(parse_gpu_arch_list("compute_" + word).empty());
  EXPECT_FALSE(parse_version_json(std::string(200000, '[')));
}

ToolkitFact probe_at(const test::FixtureNode& node, const std::string& root,
                     NvccRunner* runner = nullptr) {
  ToolkitFact toolkit;
  toolkit.root = root;
  toolkit.nvcc = root + "/bin/nvcc";
  probe_toolkit(NodeFs(node.root()), toolkit, runner);
  return toolkit;
}

TEST(ToolkitProbe, VersionsAndArchitecturesComeFromFilesWithoutRunningNvcc) {
  test::FixtureNode node;
  node.toolkit("/usr/local/cuda-12.8", "12.8");
  node.toolkit("/opt/wheels/cuda-13.0", "13.0", test::ToolkitLayout::pip);
  node.toolkit("/opt/venv/lib/python3.11/site-packages/nvidia/cu13", "13.0",
               test::ToolkitLayout::pip);
  node.toolkit("/opt/venv12/lib/python3.11/site-packages/nvidia/cuda_nvcc", "12.9",
               test::ToolkitLayout::pip);
  ProbeCache cache;
  NvccRunner runner{cache, std::nullopt};
  const auto started = processes_started();

  auto installer = probe_at(node, "/usr/local/cuda-12.8", &runner);
  EXPECT_EQ(installer.nvcc_version, "12.8");
  EXPECT_EQ(installer.nvcc_version_source, "version.json cuda_nvcc 12.8.88");
  EXPECT_EQ(installer.json_version, "12.8.0");
  EXPECT_EQ(installer.header_version, "12.8");
  EXPECT_EQ(installer.archs, archs_for_nvcc({12, 8, 0}));
  EXPECT_EQ(installer.archs_source, "catalog for CUDA 12.8");

  auto unpacked = probe_at(node, "/opt/wheels/cuda-13.0", &runner);
  EXPECT_EQ(unpacked.nvcc_version, "13.0");
  EXPECT_EQ(unpacked.nvcc_version_source, "nvidia-cuda-nvcc dist-info 13.0.88");

  auto cu13 = probe_at(node, "/opt/venv/lib/python3.11/site-packages/nvidia/cu13", &runner);
  EXPECT_EQ(cu13.nvcc_version, "13.0");
  EXPECT_EQ(cu13.nvcc_version_source, "nvidia-cuda-nvcc dist-info 13.0.88");
  EXPECT_THAT(*cu13.archs, ::testing::Not(::testing::Contains(70)));

  auto cu12 = probe_at(node, "/opt/venv12/lib/python3.11/site-packages/nvidia/cuda_nvcc", &runner);
  EXPECT_EQ(cu12.nvcc_version, "12.9");
  EXPECT_EQ(processes_started(), started) << "a version file existed: nothing may run";
}

// A link or a FIFO planted where a version file belongs is not followed or opened for reading.
TEST(ToolkitProbe, PlantedLinksAndFifosAreNotRead) {
  test::FixtureNode node;
  node.toolkit("/opt/cuda", "12.8", test::ToolkitLayout::nvcc_only);
  node.write("/secret.json", R"({"cuda_nvcc": {"version": "99.0.1"}})");
  fs::create_symlink(node.root() / "secret.json", node.root() / "opt/cuda/version.json");
  fs::create_directories(node.root() / "opt/cuda/include");
  ASSERT_EQ(::mkfifo((node.root() / "opt/cuda/include/cuda.h").c_str(), 0644), 0);
  auto toolkit = probe_at(node, "/opt/cuda");  // no runner: would hang on the FIFO if opened
  EXPECT_FALSE(toolkit.nvcc_version);
  EXPECT_FALSE(toolkit.header_version);
}

// Only when no file says the version does nvcc run: unprivileged, with PATH=/usr/bin:/bin as its
// whole environment. It records who it ran as and what it saw.
class FallbackNvcc : public ::testing::Test {
 protected:
  void SetUp() override {
    node.toolkit("/opt/cuda-12.4", "12.4", test::ToolkitLayout::nvcc_only);
    records = node.scratch() / "records";
    fs::create_directories(records);
    fs::permissions(records, fs::perms::all);  // nobody writes here
    const std::string nvcc = node.root() / "opt/cuda-12.4/bin/nvcc";
    fs::rename(nvcc, nvcc + ".real");
    std::ofstream(nvcc) << "#!/bin/sh\n"
                        << "echo \"$1\" >> " << (records / "runs") << "\n"
                        << "id -u > " << (records / "uid") << "\n"
                        << "/usr/bin/env > " << (records / "env") << "\n"
                        << "exec " << nvcc << ".real \"$@\"\n";
    fs::permissions(nvcc, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    ::setenv("GPULAUNCH_TEST_SECRET", "leaked", 1);
  }
  void TearDown() override { ::unsetenv("GPULAUNCH_TEST_SECRET"); }

  std::string record(const std::string& name) const {
    std::ifstream in(records / name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  test::FixtureNode node;
  fs::path records;
};

TEST_F(FallbackNvcc, RunsDroppedWithACleanEnvironment) {
  ProbeCache cache;
  NvccRunner runner{cache, std::nullopt};
  auto toolkit = probe_at(node, "/opt/cuda-12.4", &runner);
  ASSERT_EQ(toolkit.nvcc_version, "12.4") << ::testing::PrintToString(toolkit.problems);
  EXPECT_EQ(toolkit.nvcc_version_source, "nvcc --version");
  EXPECT_EQ(toolkit.archs_source, "nvcc --list-gpu-arch");
  EXPECT_EQ(record("runs"), "--version\n--list-gpu-arch\n");
  if (::geteuid() == 0) {
    auto nobody = unprivileged_identity(std::nullopt);
    ASSERT_TRUE(nobody) << nobody.error().message;
    EXPECT_EQ(record("uid"), std::to_string(nobody->uid) + "\n");
  }
  // sh adds PWD itself; nothing of ours (HOME, LD_*, the secret) reaches the child.
  EXPECT_THAT(record("env"), ::testing::HasSubstr("PATH=/usr/bin:/bin\n"));
  EXPECT_THAT(record("env"), ::testing::Not(::testing::HasSubstr("GPULAUNCH_TEST_SECRET")));
  EXPECT_THAT(record("env"), ::testing::Not(::testing::HasSubstr("HOME=")));
  std::istringstream lines(record("env"));
  std::string line;
  std::vector<std::string> names;
  while (std::getline(lines, line)) names.push_back(line.substr(0, line.find('=')));
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("PATH", "PWD"));
}

TEST_F(FallbackNvcc, SecondCheckSpawnsNothingUntilTheFileChanges) {
  const auto cache_file = node.scratch() / "probe-cache.json";
  {
    ProbeCache cache(cache_file);
    NvccRunner runner{cache, std::nullopt};
    EXPECT_EQ(probe_at(node, "/opt/cuda-12.4", &runner).nvcc_version, "12.4");
    cache.save();
  }
  ASSERT_EQ(record("runs"), "--version\n--list-gpu-arch\n");
  if (::geteuid() != 0) GTEST_SKIP() << "only root keeps the cache file";
  ASSERT_TRUE(fs::exists(cache_file));
  {
    const auto started = processes_started();
    ProbeCache cache(cache_file);  // a new `check`: only the file carries the answer over
    NvccRunner runner{cache, std::nullopt};
    auto toolkit = probe_at(node, "/opt/cuda-12.4", &runner);
    EXPECT_EQ(toolkit.nvcc_version, "12.4");
    EXPECT_EQ(toolkit.archs, archs_for_nvcc({12, 4, 0}));
    EXPECT_EQ(processes_started(), started);
    EXPECT_EQ(record("runs"), "--version\n--list-gpu-arch\n");
  }
  // Replaced nvcc (same size, mtime set back): ctime and inode give it away.
  const auto nvcc = node.root() / "opt/cuda-12.4/bin/nvcc";
  const auto mtime = fs::last_write_time(nvcc);
  fs::copy_file(nvcc, node.scratch() / "nvcc.copy");
  fs::remove(nvcc);
  fs::copy_file(node.scratch() / "nvcc.copy", nvcc);
  fs::last_write_time(nvcc, mtime);
  {
    ProbeCache cache(cache_file);
    NvccRunner runner{cache, std::nullopt};
    EXPECT_EQ(probe_at(node, "/opt/cuda-12.4", &runner).nvcc_version, "12.4");
  }
  EXPECT_EQ(record("runs"), "--version\n--list-gpu-arch\n--version\n--list-gpu-arch\n");
}

// A cache file root did not write is not believed.
TEST_F(FallbackNvcc, CacheNotOwnedByRootIsIgnored) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the file away";
  const auto cache_file = node.scratch() / "probe-cache.json";
  {
    ProbeCache cache(cache_file);
    NvccRunner runner{cache, std::nullopt};
    probe_at(node, "/opt/cuda-12.4", &runner);
    cache.save();
  }
  ASSERT_EQ(::chown(cache_file.c_str(), 65534, 65534), 0);
  ProbeCache cache(cache_file);
  NvccRunner runner{cache, std::nullopt};
  probe_at(node, "/opt/cuda-12.4", &runner);
  EXPECT_EQ(record("runs"), "--version\n--list-gpu-arch\n--version\n--list-gpu-arch\n");
}

// The real toolkit of this machine: wheels unpacked into /usr/local/cuda-13.0 (dist-info, no
// version.json). Its version comes from the dist-info, and the catalog's list is exactly what
// its nvcc prints.
TEST(ToolkitProbe, RealToolkitAtUsrLocalCuda) {
  if (!fs::exists("/usr/local/cuda/bin/nvcc"))
    GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda on this machine";
  ToolkitFact toolkit;
  toolkit.root = "/usr/local/cuda";
  toolkit.nvcc = "/usr/local/cuda/bin/nvcc";
  const auto started = processes_started();
  probe_toolkit(NodeFs("/"), toolkit);
  EXPECT_EQ(processes_started(), started);
  ASSERT_TRUE(toolkit.nvcc_exists);
  ASSERT_TRUE(toolkit.version()) << ::testing::PrintToString(toolkit.problems);
  if (toolkit.header_version && toolkit.nvcc_version) {
    EXPECT_EQ(*toolkit.header_version, *toolkit.nvcc_version);
  }
  auto printed = run_process("/usr/local/cuda/bin/nvcc", {"--list-gpu-arch"});
  ASSERT_TRUE(printed && printed->exit_code == 0);
  auto nvcc_says = run_process("/usr/local/cuda/bin/nvcc", {"--version"});
  ASSERT_TRUE(nvcc_says);
  EXPECT_EQ(toolkit.version(), parse_nvcc_release(nvcc_says->out));
  ASSERT_TRUE(toolkit.archs);
  EXPECT_EQ(*toolkit.archs, parse_gpu_arch_list(printed->out));
  // lib64 -> lib here: what FlashInfer's -L$cuda_home/lib64 -lcudart finds.
  EXPECT_THAT(toolkit.cudart.value_or(""), ::testing::StartsWith("lib64/libcudart.so"));
  EXPECT_EQ(toolkit.not_toolkit_root_reason(), "");
}

// Two levels above a /usr/local/bin/nvcc wrapper: an nvcc, but nothing the JIT links or includes.
TEST(ToolkitProbe, RuntimeFilesDecideAToolkitRoot) {
  test::FixtureNode node;
  node.toolkit("/usr/local/cuda-13.0", "13.0");
  node.write("/usr/local/bin/nvcc", "#!/bin/sh\nexit 0\n", true);
  node.mkdir("/usr/local/lib");
  node.mkdir("/usr/local/include");
  auto real = probe_at(node, "/usr/local/cuda-13.0");
  EXPECT_EQ(real.cudart, "lib64/libcudart.so.13");
  EXPECT_EQ(real.runtime_header, true);
  EXPECT_EQ(real.not_toolkit_root_reason(), "");
  auto wrapper_root = probe_at(node, "/usr/local");
  EXPECT_TRUE(wrapper_root.nvcc_exists);
  EXPECT_EQ(wrapper_root.not_toolkit_root_reason(),
            "no libcudart.so in lib64/ or lib/, no include/cuda_runtime.h");
  // Facts gathered before these were read judge nothing; the distro's /usr is a toolkit.
  ToolkitFact older;
  older.root = "/usr/local";
  EXPECT_EQ(older.not_toolkit_root_reason(), "");
  wrapper_root.root = "/usr";
  EXPECT_EQ(wrapper_root.not_toolkit_root_reason(), "");
}

}  // namespace
}  // namespace gl
