// SPDX-License-Identifier: Apache-2.0
#include <sys/stat.h>

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

// A remembering view answers every question as the plain one does: links inside the root,
// relative links, links through missing directories, missing paths, files used as directories.
TEST(NodeFs, RememberingAnswersAsThePlainOne) {
  test::FixtureNode node;
  node.write("/usr/local/cuda-13.0/bin/nvcc", "#!/bin/sh\n", true);
  node.write("/usr/local/cuda-13.0/version.json", "{}\n");
  node.symlink("/usr/local/cuda", "/usr/local/cuda-13.0");
  node.symlink("/opt/relative", "../usr/local/cuda");
  node.symlink("/opt/through-missing", "missing/../../usr/local/cuda-13.0");
  node.mkdir("/usr/local/lib");
  const NodeFs plain(node.root());
  const NodeFs remembering = plain.remembering();
  for (int pass = 0; pass < 2; ++pass)  // the second pass is answered from memory
    for (const std::string path :
         {"/usr/local/cuda/bin/nvcc", "/opt/relative/bin/nvcc", "/opt/through-missing/bin/nvcc",
          "/usr/local/cuda/version.json", "/missing/deeper/file", "/usr/local/cuda/version.json/x",
          "/missing/../usr/local/cuda/bin", "/usr/local", "/"}) {
      SCOPED_TRACE(path);
      EXPECT_EQ(remembering.resolve(path), plain.resolve(path));
      EXPECT_EQ(remembering.host_path(path), plain.host_path(path));
      EXPECT_EQ(remembering.exists(path), plain.exists(path));
      EXPECT_EQ(remembering.is_directory(path), plain.is_directory(path));
      EXPECT_EQ(remembering.is_executable_file(path), plain.is_executable_file(path));
      EXPECT_EQ(remembering.read(path), plain.read(path));
      EXPECT_EQ(remembering.list(path), plain.list(path));
    }
  EXPECT_EQ(remembering.resolve("/opt/relative/bin/nvcc"), "/usr/local/cuda-13.0/bin/nvcc");
  EXPECT_EQ(remembering.read("/opt/relative/version.json"), "{}\n");
  EXPECT_EQ(remembering.list("/usr/local"), (std::vector<std::string>{"cuda", "cuda-13.0", "lib"}));
}

// One gather reads each file once: the toolkit reached as /usr/local/cuda and as
// /usr/local/cuda-13.0 is one read, and what it said stays what the gather saw. A plain NodeFs
// (and a new remembering one) reads the file again.
TEST(NodeFs, RememberingReadsEachFileOnce) {
  test::FixtureNode node;
  node.write("/usr/local/cuda-13.0/version.json", "first\n");
  node.symlink("/usr/local/cuda", "/usr/local/cuda-13.0");
  const NodeFs plain(node.root());
  const NodeFs remembering = plain.remembering();
  EXPECT_EQ(remembering.read("/usr/local/cuda-13.0/version.json"), "first\n");
  EXPECT_EQ(remembering.list("/usr/local/cuda"), (std::vector<std::string>{"version.json"}));
  node.write("/usr/local/cuda-13.0/version.json", "second\n");
  node.write("/usr/local/cuda-13.0/bin/nvcc", "#!/bin/sh\n", true);
  EXPECT_EQ(remembering.read("/usr/local/cuda/version.json"), "first\n");
  EXPECT_EQ(remembering.list("/usr/local/cuda-13.0"), (std::vector<std::string>{"version.json"}));
  EXPECT_EQ(plain.read("/usr/local/cuda/version.json"), "second\n");
  EXPECT_EQ(plain.remembering().list("/usr/local/cuda"),
            (std::vector<std::string>{"bin", "version.json"}));
}

// Reads from remembered directories refuse what read_regular_nofollow refuses: a FIFO, a file
// over the limit.
TEST(NodeFs, RememberingReadsOnlyRegularFilesWithinTheLimit) {
  test::FixtureNode node;
  node.write("/etc/big", std::string(100, 'x'));
  node.mkdir("/run");
  ASSERT_EQ(::mkfifo((node.root() / "run/fifo").c_str(), 0600), 0);
  const NodeFs remembering = NodeFs(node.root()).remembering();
  EXPECT_EQ(remembering.read("/run/fifo"), std::nullopt);
  EXPECT_EQ(remembering.read("/etc/big", 10), std::nullopt);
  EXPECT_EQ(remembering.read("/etc/big", 100), std::string(100, 'x'));
}

// A PCI bus scan reads a file or two in each of hundreds of directories: past the directories a
// gather keeps open, reads walk from "/" again and still answer.
TEST(NodeFs, RememberingReadsPastTheDirectoriesItKeepsOpen) {
  test::FixtureNode node;
  for (int i = 0; i < 150; ++i)
    node.write("/sys/devices/d" + std::to_string(i) + "/vendor", "0x10de\n");
  const NodeFs remembering = NodeFs(node.root()).remembering();
  int read = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < 150; ++i)
      read += remembering.read("/sys/devices/d" + std::to_string(i) + "/vendor") == "0x10de\n";
  EXPECT_EQ(read, 300);
}

TEST(NodeFs, NormalisesPaths) {
  EXPECT_EQ(normal_path("/usr/local/cuda/bin/"), "/usr/local/cuda/bin");
  EXPECT_EQ(normal_path("/a//b/../c"), "/a/c");
  EXPECT_EQ(parent_path("/usr/bin/"), "/usr");
  EXPECT_EQ(parent_path("/usr"), "/");
}

}  // namespace
}  // namespace gl
