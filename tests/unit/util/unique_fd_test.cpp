// SPDX-License-Identifier: Apache-2.0
#include "util/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace gl {
namespace {

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

TEST(UniqueFd, ClosesWhenItGoesOutOfScope) {
  int raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(raw, 0);
  {
    UniqueFd fd(raw);
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));
}

TEST(UniqueFd, MovingHandsOverTheDescriptorOnce) {
  UniqueFd first(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int raw = first.get();
  UniqueFd second(std::move(first));
  EXPECT_FALSE(first);
  EXPECT_EQ(second.get(), raw);
  UniqueFd third;
  third = std::move(second);
  EXPECT_TRUE(is_open(raw));
  third = UniqueFd();
  EXPECT_FALSE(is_open(raw));
}

TEST(UniqueFd, CloseReportsAndGivesUpTheDescriptor) {
  UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int raw = fd.get();
  EXPECT_EQ(fd.close(), 0);
  EXPECT_FALSE(fd);
  EXPECT_FALSE(is_open(raw));
  EXPECT_EQ(fd.close(), 0);  // nothing left to close
}

}  // namespace
}  // namespace gl
