// SPDX-License-Identifier: Apache-2.0
#include "supervise/stall_report.hpp"

#include <gtest/gtest.h>

#include "supervise/exit_status.hpp"

namespace gl {
namespace {

TEST(StallReport, LineSaysWhatWasSeenAndReadsBack) {
  StallReport report{StallSignal::metrics, Seconds{64}, 3, 12345};
  const std::string line = stall_line(report);
  EXPECT_EQ(line,
            "gpulaunch: stalled: no forward progress for 64s (signal=metrics in_flight=3 "
            "tokens=12345); dumping every thread's stack, then killing the engine");
  auto back = parse_stall_line(line);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->signal, StallSignal::metrics);
  EXPECT_EQ(back->still_for, Seconds{64});
  EXPECT_EQ(back->in_flight, 3);
  EXPECT_EQ(back->tokens, 12345);
}

TEST(StallReport, UnknownCountsWithoutMetrics) {
  const std::string line = stall_line({StallSignal::generate, Seconds{90}, {}, {}});
  EXPECT_NE(line.find("(signal=generate in_flight=? tokens=?)"), std::string::npos);
  auto back = parse_stall_line(line);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->signal, StallSignal::generate);
  EXPECT_FALSE(back->in_flight);
  EXPECT_FALSE(back->tokens);
}

TEST(StallReport, OtherLinesAreNotStalls) {
  EXPECT_FALSE(parse_stall_line("gpulaunch: engine exited with status 1; exiting with 1"));
  EXPECT_FALSE(parse_stall_line("stalled: no forward progress for 64s (signal=metrics)"));
  EXPECT_FALSE(parse_stall_line("gpulaunch: stalled: no forward progress for xs (signal=metrics)"));
  EXPECT_FALSE(parse_stall_line("gpulaunch: stalled: no forward progress for 5s (signal=psychic)"));
  EXPECT_FALSE(parse_stall_line("gpulaunch: stalled: no forward progress for 5s (in_flight=2)"));
  // The stall line is not run's verdict: the verdict still follows it.
  EXPECT_FALSE(parse_run_verdict(stall_line({StallSignal::generate, Seconds{1}, {}, {}})));
}

}  // namespace
}  // namespace gl
