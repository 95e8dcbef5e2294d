// SPDX-License-Identifier: Apache-2.0
#include "util/tar_archive.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "support/tar_bytes.hpp"

namespace gl {
namespace {

// An anonymous file, rewound, holding `bytes`.
int file_with(const std::string& bytes) {
  FILE* file = std::tmpfile();
  if (std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size()) std::abort();
  std::fflush(file);
  int fd = ::dup(::fileno(file));
  std::fclose(file);
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

std::string all_data(TarReader& reader) {
  std::string data;
  char buffer[7];  // smaller than a member, so reads come in pieces
  for (;;) {
    auto got = reader.read_data(buffer);
    EXPECT_TRUE(got);
    if (!got || *got == 0) return data;
    data.append(buffer, *got);
  }
}

TEST(TarArchive, WhatTheWriterWritesTheReaderReadsBack) {
  FILE* file = std::tmpfile();
  const int fd = ::fileno(file);
  {
    auto writer = TarWriter::open(fd, "t.tar.zst");
    ASSERT_TRUE(writer) << writer.error().message;
    ASSERT_TRUE(writer->add_file("a/first", 5, false));
    ASSERT_TRUE(writer->write_data(std::string_view("hello")));
    ASSERT_TRUE(writer->add_file("b/second.so", 0, true));
    ASSERT_TRUE(writer->finish());
  }
  ::lseek(fd, 0, SEEK_SET);
  char magic[4] = {};
  ASSERT_EQ(::read(fd, magic, 4), 4);
  EXPECT_EQ(std::string(magic, 4), std::string("\x28\xb5\x2f\xfd", 4)) << "zstd-compressed";
  ::lseek(fd, 0, SEEK_SET);
  auto reader = TarReader::open(fd, "t.tar.zst");
  ASSERT_TRUE(reader) << reader.error().message;
  auto first = reader->next();
  ASSERT_TRUE(first && *first);
  EXPECT_EQ((*first)->path, "a/first");
  EXPECT_EQ((*first)->kind, MemberKind::file);
  EXPECT_EQ((*first)->size, 5u);
  EXPECT_FALSE((*first)->executable);
  EXPECT_EQ(all_data(*reader), "hello");
  auto second = reader->next();
  ASSERT_TRUE(second && *second);
  EXPECT_EQ((*second)->path, "b/second.so");
  EXPECT_TRUE((*second)->executable);
  auto end = reader->next();
  ASSERT_TRUE(end);
  EXPECT_FALSE(*end);
  std::fclose(file);
}

TEST(TarArchive, LinksAndDevicesAreNamedForWhatTheyAre) {
  const int fd = file_with(test::tar_bytes(
      {{"l", "", '2', "/etc/shadow"}, {"h", "", '1', "l"}, {"c", "", '3'}, {"d/", "", '5'}}));
  auto reader = TarReader::open(fd, "t.tar");
  ASSERT_TRUE(reader) << reader.error().message;
  for (const auto& [kind, name] :
       std::vector<std::pair<MemberKind, std::string>>{{MemberKind::other, "symbolic link"},
                                                       {MemberKind::other, "hard link"},
                                                       {MemberKind::other, "character device"},
                                                       {MemberKind::directory, "directory"}}) {
    auto member = reader->next();
    ASSERT_TRUE(member && *member) << name;
    EXPECT_EQ((*member)->kind, kind) << name;
    EXPECT_EQ((*member)->kind_name, name);
  }
  ::close(fd);
}

TEST(TarArchive, GarbageIsAnErrorNotACrash) {
  const int fd = file_with(std::string(2048, 'x'));
  auto reader = TarReader::open(fd, "garbage");
  if (reader) {
    auto member = reader->next();
    EXPECT_FALSE(member);
  }
  ::close(fd);
}

}  // namespace
}  // namespace gl
