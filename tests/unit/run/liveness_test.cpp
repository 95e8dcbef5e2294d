// SPDX-License-Identifier: Apache-2.0
#include "run/liveness.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

using namespace std::chrono_literals;

const Clock::time_point t0{};  // when the engine became ready: the fake clock's zero

LivenessConfig generate_with_metrics() {
  return {.mode = LivenessMode::generate,
          .interval = 30s,
          .timeout = 60s,
          .has_probe = true,
          .has_metrics = true};
}

LivenessConfig generate_only() {
  return {.mode = LivenessMode::generate,
          .interval = 30s,
          .timeout = 60s,
          .has_probe = true,
          .has_metrics = false};
}

LivenessConfig metrics_only() {
  return {.mode = LivenessMode::metrics,
          .interval = 30s,
          .timeout = 60s,
          .has_probe = false,
          .has_metrics = true};
}

MetricsSample sample(double in_flight, double tokens) {
  return {.in_flight = in_flight, .tokens = tokens};
}

TEST(Liveness, HealthAndOffRunNoSignal) {
  for (auto mode : {LivenessMode::health, LivenessMode::off}) {
    Liveness liveness({.mode = mode, .has_probe = true, .has_metrics = true}, t0);
    EXPECT_FALSE(liveness.active());
    EXPECT_EQ(liveness.next_wakeup(), Clock::time_point::max());
    EXPECT_FALSE(liveness.look(t0 + 1h).metrics);
    EXPECT_FALSE(liveness.stalled(t0 + 10h));
    EXPECT_TRUE(liveness.feed_watchdog());
  }
}

TEST(Liveness, WithoutMetricsTheProbeGoesOutOncePerIntervalAndNeverTwiceAtOnce) {
  Liveness liveness(generate_only(), t0);
  EXPECT_EQ(liveness.next_wakeup(), t0 + 30s);
  EXPECT_FALSE(liveness.look(t0 + 29s).probe);  // not due yet
  EXPECT_TRUE(liveness.look(t0 + 30s).probe);
  liveness.on_probe_sent(t0 + 30s);
  // The next look comes an interval later; the probe is still out (a busy server): no second.
  EXPECT_FALSE(liveness.look(t0 + 45s).probe);
  EXPECT_FALSE(liveness.look(t0 + 60s).probe);
  liveness.on_probe(true, t0 + 61s);
  EXPECT_TRUE(liveness.look(t0 + 90s).probe);
}

TEST(Liveness, AProbeWithoutAnswerWithinTheTimeoutIsAGenerateStall) {
  Liveness liveness(generate_only(), t0);
  ASSERT_TRUE(liveness.look(t0 + 30s).probe);
  liveness.on_probe_sent(t0 + 30s);
  EXPECT_EQ(liveness.next_wakeup(), t0 + 60s);  // the next look, before the deadline
  EXPECT_FALSE(liveness.stalled(t0 + 89s));
  EXPECT_TRUE(liveness.feed_watchdog());  // unanswered is not failed yet
  EXPECT_EQ(liveness.look(t0 + 60s).probe, false);
  EXPECT_EQ(liveness.next_wakeup(), t0 + 90s);  // the probe's deadline
  auto stall = liveness.stalled(t0 + 90s);
  ASSERT_TRUE(stall);
  EXPECT_EQ(stall->signal, StallSignal::generate);
  EXPECT_EQ(stall->still_for, Seconds{90});  // nothing moved since it became ready
  EXPECT_FALSE(liveness.feed_watchdog());
  EXPECT_FALSE(liveness.look(t0 + 120s).probe);  // nothing more once stalled
}

// SGLang's /health_generate answers 503 after its own 20 s: failed answers for a timeout.
TEST(Liveness, FailedAnswersForATimeoutStopTheWatchdogThenStall) {
  Liveness liveness(generate_only(), t0);
  ASSERT_TRUE(liveness.look(t0 + 30s).probe);
  liveness.on_probe_sent(t0 + 30s);
  liveness.on_probe(false, t0 + 50s);
  EXPECT_FALSE(liveness.feed_watchdog());
  EXPECT_FALSE(liveness.stalled(t0 + 50s));
  EXPECT_EQ(liveness.next_wakeup(), t0 + 60s);
  ASSERT_TRUE(liveness.look(t0 + 60s).probe);
  liveness.on_probe_sent(t0 + 60s);
  liveness.on_probe(false, t0 + 80s);
  EXPECT_FALSE(liveness.stalled(t0 + 89s));
  auto stall = liveness.stalled(t0 + 90s);  // 60 s after the first failed probe went out
  ASSERT_TRUE(stall);
  EXPECT_EQ(stall->signal, StallSignal::generate);
}

TEST(Liveness, ASuccessfulProbeClearsAFailure) {
  Liveness liveness(generate_only(), t0);
  liveness.look(t0 + 30s);
  liveness.on_probe_sent(t0 + 30s);
  liveness.on_probe(false, t0 + 31s);
  EXPECT_FALSE(liveness.feed_watchdog());
  liveness.look(t0 + 60s);
  liveness.on_probe_sent(t0 + 60s);
  liveness.on_probe(true, t0 + 62s);
  EXPECT_TRUE(liveness.feed_watchdog());
  EXPECT_FALSE(liveness.stalled(t0 + 91s));
}

TEST(Liveness, NoProbeWhileTheTokenCounterMoves) {
  Liveness liveness(generate_with_metrics(), t0);
  Liveness::Look look = liveness.look(t0 + 30s);
  EXPECT_TRUE(look.metrics);
  EXPECT_FALSE(look.probe);
  // The first reading has nothing to compare with: one probe.
  EXPECT_TRUE(liveness.on_metrics(sample(4, 1000), t0 + 30s));
  liveness.on_probe_sent(t0 + 30s);
  liveness.on_probe(true, t0 + 31s);
  for (int look_number = 2; look_number < 100; ++look_number) {
    const auto now = t0 + look_number * 30s;
    ASSERT_TRUE(liveness.look(now).metrics);
    EXPECT_FALSE(liveness.on_metrics(sample(4, 1000.0 + look_number), now)) << look_number;
  }
  EXPECT_FALSE(liveness.stalled(t0 + 3000s));
  // An idle server: the counter stands still and nothing is in flight: a probe again.
  ASSERT_TRUE(liveness.look(t0 + 3000s).metrics);
  EXPECT_TRUE(liveness.on_metrics(sample(0, 1099), t0 + 3000s));
}

// Requests take longer than the timeout (and the probe waits behind them), but tokens flow.
TEST(Liveness, SlowRequestsWhileTokensFlowAreNeverAStall) {
  Liveness liveness(generate_with_metrics(), t0);
  liveness.look(t0 + 30s);
  ASSERT_TRUE(liveness.on_metrics(sample(64, 5000), t0 + 30s));
  liveness.on_probe_sent(t0 + 30s);
  double tokens = 5000;
  for (auto now = t0 + 60s; now <= t0 + 600s; now += 30s) {
    ASSERT_FALSE(liveness.stalled(now));
    ASSERT_TRUE(liveness.look(now).metrics);
    tokens += 200;
    liveness.on_metrics(sample(64, tokens), now);
  }
  // The probe finally times out, queued: tokens moved after it went out, so no failure.
  liveness.on_probe(false, t0 + 600s);
  EXPECT_TRUE(liveness.feed_watchdog());
  EXPECT_FALSE(liveness.stalled(t0 + 600s));
}

TEST(Liveness, InFlightWhileTheCounterStandsStillIsAMetricsStallEvenWithTheProbeQueued) {
  Liveness liveness(generate_with_metrics(), t0);
  liveness.look(t0 + 30s);
  ASSERT_TRUE(liveness.on_metrics(sample(3, 12345), t0 + 30s));
  liveness.on_probe_sent(t0 + 30s);  // queued behind the wedged batch, never answered
  liveness.look(t0 + 60s);
  EXPECT_FALSE(liveness.on_metrics(sample(3, 12345), t0 + 60s));  // the probe is still out
  EXPECT_EQ(liveness.next_wakeup(), t0 + 90s);
  auto stall = liveness.stalled(t0 + 90s);
  ASSERT_TRUE(stall);
  EXPECT_EQ(stall->signal, StallSignal::metrics);
  EXPECT_EQ(stall->in_flight, 3);
  EXPECT_EQ(stall->tokens, 12345.0);
  EXPECT_EQ(stall->still_for, Seconds{60});
}

TEST(Liveness, MetricsModeSendsNoProbeAndCatchesTheWedgedRequest) {
  Liveness liveness(metrics_only(), t0);
  ASSERT_TRUE(liveness.look(t0 + 30s).metrics);
  EXPECT_FALSE(liveness.on_metrics(sample(0, 100), t0 + 30s));  // idle: no probe in this mode
  ASSERT_TRUE(liveness.look(t0 + 60s).metrics);
  EXPECT_FALSE(liveness.on_metrics(sample(0, 100), t0 + 60s));
  EXPECT_FALSE(liveness.stalled(t0 + 600s));  // idle for long: nothing in flight, no stall
  // A request arrives and wedges: the clock starts when it is first seen in flight, not when
  // the counter last moved minutes ago.
  liveness.look(t0 + 630s);
  liveness.on_metrics(sample(1, 100), t0 + 630s);
  EXPECT_FALSE(liveness.stalled(t0 + 660s));
  liveness.look(t0 + 660s);
  liveness.on_metrics(sample(1, 100), t0 + 660s);
  EXPECT_FALSE(liveness.stalled(t0 + 689s));
  auto stall = liveness.stalled(t0 + 690s);
  ASSERT_TRUE(stall);
  EXPECT_EQ(stall->signal, StallSignal::metrics);
  EXPECT_EQ(stall->in_flight, 1);
}

TEST(Liveness, AMetricsPageThatStopsAnsweringKeepsTheLastReading) {
  Liveness liveness(metrics_only(), t0);
  liveness.look(t0 + 30s);
  liveness.on_metrics(sample(2, 50), t0 + 30s);
  liveness.look(t0 + 60s);
  liveness.on_metrics(std::nullopt, t0 + 60s);
  EXPECT_TRUE(liveness.stalled(t0 + 90s));
}

TEST(Liveness, AnExpositionWithoutTheCounterGivesNoMetricsStall) {
  Liveness liveness(metrics_only(), t0);
  for (auto now = t0 + 30s; now < t0 + 600s; now += 30s) {
    liveness.look(now);
    liveness.on_metrics(MetricsSample{.in_flight = 5, .tokens = std::nullopt}, now);
    EXPECT_FALSE(liveness.stalled(now));
  }
}

TEST(Liveness, ACounterThatGoesDownWasResetAndCountsAsMovement) {
  Liveness liveness(metrics_only(), t0);
  liveness.look(t0 + 30s);
  liveness.on_metrics(sample(2, 5000), t0 + 30s);
  liveness.look(t0 + 60s);
  liveness.on_metrics(sample(2, 10), t0 + 60s);
  EXPECT_FALSE(liveness.stalled(t0 + 90s));
  EXPECT_TRUE(liveness.stalled(t0 + 120s));
}

}  // namespace
}  // namespace gl
