// SPDX-License-Identifier: Apache-2.0
#include "util/try.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

Result<int> parse_digit(char c) {
  if (c < '0' || c > '9') return failf("'{}' is not a digit", c);
  return c - '0';
}

Result<void> check_even(int value) {
  if (value % 2 != 0) return failf("{} is odd", value);
  return {};
}

// Two digits, the second even: the first failure comes back unchanged.
Result<int> two_digits(char tens, char ones) {
  GL_TRY(const int high, parse_digit(tens));
  int low = 0;
  GL_TRY(low, parse_digit(ones));
  GL_TRY_VOID(check_even(low));
  return high * 10 + low;
}

TEST(Try, GivesTheValueOnSuccess) {
  EXPECT_EQ(two_digits('4', '2'), 42);
}

TEST(Try, ForwardsTheFirstError) {
  EXPECT_EQ(two_digits('x', '2').error().message, "'x' is not a digit");
  EXPECT_EQ(two_digits('4', 'y').error().message, "'y' is not a digit");
  EXPECT_EQ(two_digits('4', '3').error().message, "3 is odd");
}

}  // namespace
}  // namespace gl
