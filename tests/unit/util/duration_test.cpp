// SPDX-License-Identifier: Apache-2.0
#include "util/duration.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(Duration, ParsesProfileSpellings) {
  EXPECT_EQ(parse_duration("90"), Seconds{90});
  EXPECT_EQ(parse_duration("90s"), Seconds{90});
  EXPECT_EQ(parse_duration("20min"), Seconds{1200});
  EXPECT_EQ(parse_duration("1h 30min"), Seconds{5400});
  EXPECT_EQ(parse_duration("2d"), Seconds{172800});
}

TEST(Duration, RejectsNonsense) {
  EXPECT_FALSE(parse_duration(""));
  EXPECT_FALSE(parse_duration("soon"));
  EXPECT_FALSE(parse_duration("10 parsecs"));
  EXPECT_FALSE(parse_duration("-5s"));
  EXPECT_FALSE(parse_duration("99999999999999999999s"));
}

TEST(Duration, FormatsForSystemd) {
  EXPECT_EQ(format_duration(Seconds{0}), "0s");
  EXPECT_EQ(format_duration(Seconds{90}), "1min 30s");
  EXPECT_EQ(format_duration(Seconds{1200}), "20min");
  EXPECT_EQ(format_duration(Seconds{3050}), "50min 50s");
  EXPECT_EQ(format_duration(Seconds{7200}), "2h");
  EXPECT_EQ(parse_duration(format_duration(Seconds{3661})), Seconds{3661});
}

}  // namespace
}  // namespace gl
