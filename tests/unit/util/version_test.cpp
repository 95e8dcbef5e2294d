// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "util/version.hpp"

namespace gl {
namespace {

TEST(Version, ReadsLeadingNumbersOnly) {
  EXPECT_EQ(parse_version("12.8"), (Version{12, 8, 0}));
  EXPECT_EQ(parse_version("13.0.88"), (Version{13, 0, 88}));
  EXPECT_EQ(parse_version("0.6.7.post1"), (Version{0, 6, 7}));
  EXPECT_EQ(parse_version("2.9.0+cu130"), (Version{2, 9, 0}));
  EXPECT_FALSE(parse_version("None"));
  EXPECT_FALSE(parse_version(""));
}

TEST(Version, OrdersNumerically) {
  EXPECT_LT(*parse_version("12.8"), *parse_version("12.9"));
  EXPECT_LT(*parse_version("12.10"), *parse_version("13.0"));
  EXPECT_LT(*parse_version("0.6.6"), *parse_version("0.6.7"));
}

TEST(Version, DecodesCudaIntegers) {
  EXPECT_EQ(version_from_cuda_int(13000).major_minor(), "13.0");
  EXPECT_EQ(version_from_cuda_int(12080).major_minor(), "12.8");
}

}  // namespace
}  // namespace gl
