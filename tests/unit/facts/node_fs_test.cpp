// SPDX-License-Identifier: Apache-2.0
#include <sys/stat.h>

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
