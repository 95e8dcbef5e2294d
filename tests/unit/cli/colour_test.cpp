// SPDX-License-Identifier: Apache-2.0
#include "cli/colour.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

TEST(Colour, OnlyOnATerminalAndNeverWithNoColorSet) {
  EXPECT_TRUE(colour_wanted(true, nullptr));
  EXPECT_TRUE(colour_wanted(true, ""));  // no-color.org: set and non-empty
  EXPECT_FALSE(colour_wanted(true, "1"));
  EXPECT_FALSE(colour_wanted(false, nullptr));  // a pipe, a file, the journal
}

TEST(Colour, ErrorsRedWarningsYellowOkGreen) {
  EXPECT_EQ(paint("error", Tone::error, true), "\033[31merror\033[0m");
  EXPECT_EQ(paint("warning", Tone::warning, true), "\033[33mwarning\033[0m");
  EXPECT_EQ(paint("ready:", Tone::ok, true), "\033[32mready:\033[0m");
  EXPECT_EQ(paint("ready:", Tone::ok, false), "ready:");
  EXPECT_EQ(paint("inactive", Tone::none, true), "inactive");
}

TEST(Colour, StatesByWhatTheyMeanToAnOperator) {
  EXPECT_EQ(state_tone("active"), Tone::ok);
  EXPECT_EQ(state_tone("failed"), Tone::error);
  EXPECT_EQ(state_tone("restarting"), Tone::warning);
  EXPECT_EQ(state_tone("inactive"), Tone::none);
}

}  // namespace
}  // namespace gl
