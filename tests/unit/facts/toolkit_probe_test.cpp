#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "facts/toolkit_probe.hpp"
#include "util/version.hpp"

namespace gl {
namespace {

TEST(ToolkitProbe, ParsesNvccRelease) {
  EXPECT_EQ(parse_nvcc_release("Cuda compilation tools, release 13.0, V13.0.88\n"), "13.0");
  EXPECT_FALSE(parse_nvcc_release("nvcc fatal"));
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
  EXPECT_EQ(parse_version_json(R"({"cuda": {"name": "CUDA SDK", "version": "13.0.3"}})"), "13.0.3");
  EXPECT_FALSE(parse_version_json("{"));
}

// The real toolkit of this machine: pip layout, no version.json.
TEST(ToolkitProbe, RealToolkitAtUsrLocalCuda) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc"))
    GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda on this machine";
  ToolkitFact toolkit;
  toolkit.root = "/usr/local/cuda";
  toolkit.nvcc = "/usr/local/cuda/bin/nvcc";
  probe_toolkit(NodeFs("/"), toolkit);
  ASSERT_TRUE(toolkit.nvcc_exists);
  ASSERT_TRUE(toolkit.nvcc_version) << ::testing::PrintToString(toolkit.problems);
  auto major = parse_version(*toolkit.nvcc_version)->major;
  EXPECT_GE(major, 11);
  if (toolkit.header_version) {
    EXPECT_EQ(*toolkit.header_version, *toolkit.nvcc_version);
  }
  if (*toolkit.nvcc_version == "13.0") {
    EXPECT_FALSE(toolkit.json_version);
    ASSERT_TRUE(toolkit.archs);
    EXPECT_THAT(*toolkit.archs, ::testing::Contains(120));
    EXPECT_THAT(*toolkit.archs, ::testing::Not(::testing::Contains(70)));
  }
}

}  // namespace
}  // namespace gl
