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

// A 62-shard load as the bridge reads tqdm's stream: each '\r' update is a line of its own, so
// the update that arrives near the deadline pushes it back then, not a shard later.
TEST(Readiness, EachTqdmUpdateOfALongLoadPushesTheDeadlineBack) {
  const auto start = Clock::now();
  Readiness readiness({.ready_timeout = 600s, .progress_grace = 300s}, start);
  readiness.take_notifications();
  // Nine minutes per shard, far longer than the grace: only prompt updates keep it alive.
  const std::string stream =
      "\rMulti-thread loading shards:   0% Completed | 0/62 [00:00<?, ?it/s]"
      "\rMulti-thread loading shards:   2% Completed | 1/62 [09:00<9:09:00, 540.00s/it]"
      "\rMulti-thread loading shards:   3% Completed | 2/62 [18:00<9:00:00, 540.00s/it]";
  std::vector<std::string> updates;
  for (size_t begin = 1, end; begin < stream.size(); begin = end + 1) {
    end = stream.find('\r', begin);
    if (end == std::string::npos) end = stream.size();
    updates.push_back(stream.substr(begin, end - begin));
  }
  ASSERT_EQ(updates.size(), 3u);
  readiness.on_output_line(updates[0], start + 10s);
  readiness.on_output_line(updates[1], start + 550s);  // 50 s before the deadline
  EXPECT_EQ(readiness.take_notifications(),
            (std::vector<std::string>{"STATUS=loading weights 0%", "EXTEND_TIMEOUT_USEC=360000000",
                                      "STATUS=loading weights 2%"}));
  EXPECT_FALSE(readiness.deadline_passed(start + 849s));
  readiness.on_output_line(updates[2], start + 840s);
  EXPECT_FALSE(readiness.deadline_passed(start + 1139s));
  EXPECT_EQ(readiness.status_text(), "loading weights 3%");
}

// The unit's WatchdogSec is at least kWatchdogHealthTimeouts probe timeouts and `run` probes a
// quarter of it apart: two probes in a row that each take the whole timeout (a busy SGLang's
// /health) and a third that answers still feed the watchdog before it fires.
TEST(Readiness, ServingProbesFeedTheWatchdogEvenWhenEachProbeTakesItsWholeTimeout) {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  EXPECT_EQ(serving_probe_interval(std::nullopt), milliseconds{10000});
  EXPECT_EQ(serving_probe_interval(microseconds{120'000'000}), milliseconds{30000});
  EXPECT_EQ(serving_probe_interval(microseconds{200'000}), milliseconds{100});

  const milliseconds timeout{23000};  // SGLang: 20 s of its own and the margin
  const auto watchdog = std::chrono::duration_cast<microseconds>(timeout * 5);
  const milliseconds interval = serving_probe_interval(watchdog);
  // Fed at 0; a probe starts `interval` after each answer and answers `timeout` later.
  const milliseconds failed_then_fed = 2 * (interval + timeout);
  EXPECT_LT(failed_then_fed, watchdog);
  const auto start = Clock::now();
  Readiness readiness({}, start);
  readiness.on_health(200, start);
  readiness.take_notifications();
  readiness.on_health(std::nullopt, start + interval + timeout);  // timed out: no feed
  EXPECT_TRUE(readiness.take_notifications().empty());
  readiness.on_health(200, start + failed_then_fed);
  EXPECT_EQ(readiness.take_notifications(), std::vector<std::string>{"WATCHDOG=1"});
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
