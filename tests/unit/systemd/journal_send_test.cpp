// SPDX-License-Identifier: Apache-2.0
// Which sink the logger picks: the journal only where the stream is the one systemd connected
// (JOURNAL_STREAM=DEVICE:INODE naming the fd's own fstat), lines on the stream anywhere else.

#include <sys/stat.h>
#include <unistd.h>
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "log/logger.hpp"
#include "systemd/journal.hpp"

namespace gl {
namespace {

class JournalStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::pipe(fds_), 0);
    if (const char* saved = std::getenv("JOURNAL_STREAM")) saved_ = saved;
  }
  void TearDown() override {
    ::close(fds_[0]);
    ::close(fds_[1]);
    if (saved_)
      ::setenv("JOURNAL_STREAM", saved_->c_str(), 1);
    else
      ::unsetenv("JOURNAL_STREAM");
    logging::configure(logging::Config{});
  }
  std::string identity(int fd) {
    struct stat status {};
    EXPECT_EQ(::fstat(fd, &status), 0);
    return fmt::format("{}:{}", status.st_dev, status.st_ino);
  }
  int fds_[2] = {-1, -1};
  std::optional<std::string> saved_;
};

TEST_F(JournalStreamTest, TheStreamSystemdNamedIsTheJournal) {
  ::setenv("JOURNAL_STREAM", identity(fds_[1]).c_str(), 1);
  EXPECT_TRUE(stream_is_journal(fds_[1]));
}

TEST_F(JournalStreamTest, ARedirectedStreamIsNotThoughTheVariableIsInherited) {
  // A child of a service whose output a shell sent to a file or a pipe: same variable, other fd.
  int other[2];
  ASSERT_EQ(::pipe(other), 0);
  ::setenv("JOURNAL_STREAM", identity(fds_[1]).c_str(), 1);
  EXPECT_FALSE(stream_is_journal(other[1]));
  ::close(other[0]);
  ::close(other[1]);
}

TEST_F(JournalStreamTest, WithoutTheVariableOrWithGarbageNothingIsTheJournal) {
  ::unsetenv("JOURNAL_STREAM");
  EXPECT_FALSE(stream_is_journal(fds_[1]));
  for (const char* garbage : {"", ":", "12", "12:", ":34", "x:y", "1:2:3"}) {
    ::setenv("JOURNAL_STREAM", garbage, 1);
    EXPECT_FALSE(stream_is_journal(fds_[1])) << garbage;
  }
}

TEST_F(JournalStreamTest, TheLoggerWritesToTheJournalOnlyWhereItsStreamIsTheJournal) {
  ::unsetenv("JOURNAL_STREAM");
  logging::configure({logging::Level::info, logging::Stream::err, "k26"});
  EXPECT_FALSE(logging::to_journal());
  ::setenv("JOURNAL_STREAM", identity(STDERR_FILENO).c_str(), 1);
  logging::configure({logging::Level::info, logging::Stream::err, "k26"});
  EXPECT_TRUE(logging::to_journal());
  // stdout is another stream (here it is not stderr's file): lines stay on it.
  struct stat out {
  }, err{};
  ASSERT_EQ(::fstat(STDOUT_FILENO, &out), 0);
  ASSERT_EQ(::fstat(STDERR_FILENO, &err), 0);
  if (out.st_dev != err.st_dev || out.st_ino != err.st_ino) {
    logging::configure({logging::Level::info, logging::Stream::out, "k26"});
    EXPECT_FALSE(logging::to_journal());
  }
}

}  // namespace
}  // namespace gl
