// SPDX-License-Identifier: Apache-2.0
#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "facts/probe_cache.hpp"
#include "support/fixture_node.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;

ProgramIdentity some_program() {
  return ProgramIdentity{"/opt/venv/bin/nvcc", 2049, 1234, 30153384, 1700000000000000000,
                         1700000000000000001};
}

NvccAnswer some_answer() {
  return NvccAnswer{"12.4", std::vector<int>{50, 75, 90}, {}};
}

TEST(ProbeCache, AnswersSurviveARoundTripThroughRootsFile) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root writes the cache file";
  test::FixtureNode node;
  const auto file = node.scratch() / "cache" / "probe-cache.json";
  {
    ProbeCache cache(file);
    cache.store(some_program(), some_answer());
    cache.save();
  }
  struct stat info {};
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0644u);
  ProbeCache again(file);
  const NvccAnswer* found = again.find(some_program());
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->version, "12.4");
  EXPECT_EQ(found->archs, (std::vector<int>{50, 75, 90}));
  // Any part of the identity differing is another file.
  auto touched = some_program();
  touched.ctime_ns += 1;
  EXPECT_EQ(again.find(touched), nullptr);
}

// Whatever sits at the cache path (garbage, wrong types, deep nesting, a FIFO, a link) is
// ignored: no crash, no hang, nothing believed.
TEST(ProbeCache, AnythingButRootsOwnFileIsIgnored) {
  test::FixtureNode node;
  const auto file = node.scratch() / "probe-cache.json";
  for (const std::string& text :
       {std::string("not json"), std::string(R"({"nvcc": 7})"),
        std::string(R"({"nvcc": [{"path": 1, "device": "x"}]})"), std::string(300000, '['),
        std::string(R"({"nvcc": [{"path": "/opt/venv/bin/nvcc", "device": 2049, "inode": 1234,
          "size": 30153384, "mtime_ns": 1700000000000000000, "ctime_ns": 1700000000000000001,
          "version": ["12.4"], "archs": null, "problems": []}]})")}) {
    std::ofstream(file) << text;
    ProbeCache cache(file);
    EXPECT_EQ(cache.find(some_program()), nullptr) << text.substr(0, 40);
  }
  fs::remove(file);
  ASSERT_EQ(::mkfifo(file.c_str(), 0644), 0);
  ProbeCache fifo(file);  // would block forever if opened for reading without O_NONBLOCK
  EXPECT_EQ(fifo.find(some_program()), nullptr);
  fs::remove(file);
  std::ofstream(node.scratch() / "elsewhere.json") << "{}";
  fs::create_symlink(node.scratch() / "elsewhere.json", file);
  ProbeCache link(file);
  EXPECT_EQ(link.find(some_program()), nullptr);
}

}  // namespace
}  // namespace gl
