// SPDX-License-Identifier: Apache-2.0
#include "util/atomic_file.hpp"

#include <sys/stat.h>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace gl {
namespace {
namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "gl-atomic-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(AtomicFile, ReplacesContentWholeAndLeavesNoTemporaries) {
  const fs::path unit = dir_ / "gpulaunch-x.service";
  ASSERT_TRUE(write_file_atomically(unit, "old\n"));
  ASSERT_TRUE(write_file_atomically(unit, "new\n", 0640));
  EXPECT_EQ(*read_file(unit, 1024), "new\n");
  struct stat info {};
  ASSERT_EQ(stat(unit.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(AtomicFile, ReportsAMissingDirectory) {
  auto written = write_file_atomically(dir_ / "no/such/dir/file", "x");
  ASSERT_FALSE(written);
  EXPECT_NE(written.error().message.find("Failed to create a temporary file in"),
            std::string::npos);
}

TEST_F(AtomicFile, ReadRefusesOversizedFilesBeforeReading) {
  std::ofstream(dir_ / "big.toml") << std::string(2048, 'x');
  auto text = read_file(dir_ / "big.toml", 1024);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message, (dir_ / "big.toml").string() +
                                      ":1:1: file is 2048 bytes, over the limit of 1024 bytes");
}

// /dev/zero would never end and a FIFO nobody writes would block forever.
TEST_F(AtomicFile, ReadRefusesWhatIsNotARegularFileWithoutReadingIt) {
  auto zero = read_file("/dev/zero", 1024);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "Refusing to read '/dev/zero': not a regular file");
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto piped = read_file(fifo, 1024);
  ASSERT_FALSE(piped);
  EXPECT_EQ(piped.error().message, "Refusing to read '" + fifo.string() + "': not a regular file");
}

}  // namespace
}  // namespace gl
