// SPDX-License-Identifier: Apache-2.0
#include "run/readiness.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

using namespace std::chrono_literals;

TEST(Readiness, ReportsProgressAndSaysReadyOnlyOnHealth200) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 1200s, .progress_grace = 300s}, start);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"STATUS=starting"});
  readiness.on_output_line("Loading safetensors checkpoint shards:  50% Completed | 4/8",
                           start + 1s);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"STATUS=loading weights 50%"});
  readiness.on_health(503, start + 2s);
  readiness.on_health(std::nullopt, start + 3s);
  EXPECT_FALSE(readiness.ready());
  EXPECT_TRUE(readiness.take_notifications().empty());
  readiness.on_health(200, start + 4s);
  EXPECT_TRUE(readiness.ready());
  EXPECT_EQ(readiness.take_notifications(),
            (std::vector<std::string>{"STATUS=serving", "READY=1"}));
  readiness.on_health(200, start + 5s);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"WATCHDOG=1"});
  readiness.on_health(503, start + 6s);  // no WATCHDOG=1: systemd restarts a hung engine
  EXPECT_TRUE(readiness.take_notifications().empty());
}

TEST(Readiness, ProgressNearTheDeadlineExtendsItAndSystemdsTimeout) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 600s, .progress_grace = 300s}, start);
  readiness.take_notifications();
  readiness.on_output_line("Loading safetensors checkpoint shards:  10% Completed", start + 60s);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"STATUS=loading weights 10%"});
  readiness.on_output_line("Loading safetensors checkpoint shards:  90% Completed", start + 500s);
  // 100 s were left: the deadline moves to 300 s from now; systemd gets a minute more.
  EXPECT_EQ(
      readiness.take_notifications(),
      (std::vector<std::string>{"EXTEND_TIMEOUT_USEC=360000000", "STATUS=loading weights 90%"}));
  EXPECT_FALSE(readiness.deadline_passed(start + 799s));
  EXPECT_TRUE(readiness.deadline_passed(start + 800s));
}

TEST(Readiness, NoProgressMeansTheDeadlineHolds) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 10s, .progress_grace = 10s}, start);
  readiness.on_output_line("some unrelated line", start + 9s);
  EXPECT_TRUE(readiness.deadline_passed(start + 10s));
}

}  // namespace
}  // namespace gl

namespace gl {
namespace {

using namespace std::chrono_literals;

TEST(Readiness, AHeadlessRankIsReadyOnceJoinedAndItsWatchdogFedOnlyWhileItHoldsOn) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 600s, .progress_grace = 300s, .headless = true}, start);
  readiness.take_notifications();
  readiness.on_rendezvous(false, start + 1s);  // rank 0 not up yet
  EXPECT_FALSE(readiness.ready());
  EXPECT_TRUE(readiness.take_notifications().empty());
  readiness.on_rendezvous(true, start + 2s);
  EXPECT_TRUE(readiness.ready());
  EXPECT_EQ(readiness.take_notifications(),
            (std::vector<std::string>{"STATUS=headless, joined rank 0", "READY=1"}));
  readiness.on_rendezvous(true, start + 3s);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"WATCHDOG=1"});
  readiness.on_rendezvous(false, start + 4s);  // rank 0 went away: the watchdog runs out
  EXPECT_TRUE(readiness.take_notifications().empty());
  EXPECT_FALSE(readiness.deadline_passed(start + 700s));  // ready: no start deadline any more
}

}  // namespace
}  // namespace gl
