// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "facts/node_fs.hpp"
#include "support/fixture_node.hpp"
#include "temp_dir.hpp"

namespace gl {
namespace {

TEST(NodeFs, AbsoluteSymlinksStayUnderTheRoot) {
  test::FixtureNode node;
  node.write("/usr/local/cuda-13.0/bin/nvcc", "#!/bin/sh\n", true);
  node.symlink("/usr/local/cuda", "/usr/local/cuda-13.0");
  NodeFs fs(node.root());
  EXPECT_EQ(fs.resolve("/usr/local/cuda/bin/nvcc"), "/usr/local/cuda-13.0/bin/nvcc");
  EXPECT_TRUE(fs.is_executable_file("/usr/local/cuda/bin/nvcc"));
  EXPECT_EQ(fs.host_path("/usr/local/cuda/bin/nvcc"), node.root() / "usr/local/cuda-13.0/bin/nvcc");
}

// Issue 45: an image's deep link chain. Each link names the next relatively (the same inside the
// root and on the host), the 41st names a host directory absolutely: resolved inside the root it
// is a missing path; handed to the host's resolver after 40 links it would be the host's. Past
// kMaxLinks the path does not resolve at all (ELOOP), so no call answers whether the host's
// directory exists or lists it; 40 links still resolve.
TEST(NodeFs, ALinkChainPastFortyLinksIsRefusedNeverResolvedByTheHost) {
  namespace fs = std::filesystem;
  testing::TempDir host;
  std::ofstream(host.path() / "marker") << "the host's";
  test::FixtureNode image;
  const fs::path root = image.root();
  for (int i = 0; i < NodeFs::kMaxLinks; ++i)
    fs::create_symlink("l" + std::to_string(i + 1), root / ("l" + std::to_string(i)));
  fs::create_symlink(host.path(), root / ("l" + std::to_string(NodeFs::kMaxLinks)));
  ASSERT_TRUE(fs::exists(root / "l39" / "marker"));  // as the host's resolver would answer
  NodeFs node(root);
  EXPECT_EQ(node.resolve("/l0/marker"), std::nullopt);
  EXPECT_EQ(node.host_path("/l0/marker"), std::nullopt);
  EXPECT_FALSE(node.exists("/l0/marker"));
  EXPECT_FALSE(node.is_directory("/l0"));
  EXPECT_EQ(node.read("/l0/marker"), std::nullopt);
  EXPECT_TRUE(node.list("/l0").empty());
  EXPECT_EQ(node.device("/l0/marker"), std::nullopt);
  // The last link alone re-roots inside the image, where nothing is.
  EXPECT_EQ(node.resolve("/l40/marker"), host.path().string() + "/marker");
  EXPECT_FALSE(node.exists("/l40/marker"));
  // 40 links to a directory inside the image resolve as the kernel would.
  image.write("/real/config.json", "{}");
  for (int i = 0; i < NodeFs::kMaxLinks - 1; ++i)
    fs::create_symlink("m" + std::to_string(i + 1), root / ("m" + std::to_string(i)));
  fs::create_symlink("real", root / ("m" + std::to_string(NodeFs::kMaxLinks - 1)));
  EXPECT_EQ(node.resolve("/m0/config.json"), "/real/config.json");
  EXPECT_EQ(node.read("/m0/config.json"), "{}");
}

TEST(NodeFs, NormalisesPaths) {
  EXPECT_EQ(normal_path("/usr/local/cuda/bin/"), "/usr/local/cuda/bin");
  EXPECT_EQ(normal_path("/a//b/../c"), "/a/c");
  EXPECT_EQ(parent_path("/usr/bin/"), "/usr");
  EXPECT_EQ(parent_path("/usr"), "/");
}

}  // namespace
}  // namespace gl
