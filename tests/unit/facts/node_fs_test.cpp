// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "facts/node_fs.hpp"
#include "support/fixture_node.hpp"

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

TEST(NodeFs, NormalisesPaths) {
  EXPECT_EQ(normal_path("/usr/local/cuda/bin/"), "/usr/local/cuda/bin");
  EXPECT_EQ(normal_path("/a//b/../c"), "/a/c");
  EXPECT_EQ(parent_path("/usr/bin/"), "/usr");
  EXPECT_EQ(parent_path("/usr"), "/");
}

}  // namespace
}  // namespace gl
