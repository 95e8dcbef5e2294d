// SPDX-License-Identifier: Apache-2.0
#include "run/run_options.hpp"

#include <gtest/gtest.h>

namespace gl {
namespace {

RunSettings minimal() {
  RunSettings settings;
  settings.profile = "k26";
  settings.health_url = "http://127.0.0.1:30000/health";
  settings.engine_argv = {"/bin/engine"};
  return settings;
}

TEST(RunOptions, AStopDrainsThenKillsAfterTheGrace) {
  RunSettings settings = minimal();
  settings.drain_timeout = Seconds{45};
  settings.health_timeout = Seconds{23};
  auto options = bridge_options(settings);
  ASSERT_TRUE(options) << options.error().message;
  EXPECT_EQ(options->drain_timeout, Seconds{45});
  EXPECT_EQ(options->stop_timeout, Seconds{45} + kStopKillGrace);
  EXPECT_EQ(options->probe_timeout, Seconds{23});
  EXPECT_EQ(options->argv, settings.engine_argv);
}

// Without --progress-grace, progress pushes the deadline back by the ready timeout, at most 5 min.
TEST(RunOptions, ProgressGraceDefaultsToTheReadyTimeoutAtMostFiveMinutes) {
  RunSettings settings = minimal();
  settings.ready_timeout = Seconds{120};
  EXPECT_EQ(bridge_options(settings)->readiness.progress_grace, Seconds{120});
  settings.ready_timeout = Seconds{1200};
  EXPECT_EQ(bridge_options(settings)->readiness.progress_grace, Seconds{300});
  settings.progress_grace = Seconds{900};
  EXPECT_EQ(bridge_options(settings)->readiness.progress_grace, Seconds{900});
}

TEST(RunOptions, ReadyOnGenerationNeedsTheProbe) {
  RunSettings settings = minimal();
  settings.ready = ReadyOn::generate;
  auto refused = bridge_options(settings);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "--ready=generate needs --liveness-probe");
  settings.probe_path = "/health_generate";
  auto options = bridge_options(settings);
  ASSERT_TRUE(options);
  EXPECT_TRUE(options->readiness.ready_on_generation);
  EXPECT_TRUE(options->liveness.has_probe);
}

// Metrics vouch for progress only with the counter that moves.
TEST(RunOptions, MetricsCountOnlyWithTheirTokenCounter) {
  RunSettings settings = minimal();
  settings.liveness = LivenessMode::metrics;
  settings.metrics_path = "/metrics";
  EXPECT_FALSE(bridge_options(settings)->liveness.has_metrics);
  settings.tokens_metric = "vllm:generation_tokens_total";
  EXPECT_TRUE(bridge_options(settings)->liveness.has_metrics);
}

TEST(RunOptions, AHeadlessRankWaitsForItsRendezvous) {
  RunSettings settings = minimal();
  settings.rendezvous = Rendezvous{"10.0.0.1", 5000, false};
  auto options = bridge_options(settings);
  ASSERT_TRUE(options);
  EXPECT_TRUE(options->readiness.headless);
  ASSERT_TRUE(options->rendezvous);
  EXPECT_EQ(options->rendezvous->port, 5000);
  settings.rendezvous = Rendezvous{"", 0, true};  // --rendezvous-any-port alone
  EXPECT_EQ(bridge_options(settings).error().message,
            "--rendezvous-any-port needs --rendezvous=HOST:PORT");
}

}  // namespace
}  // namespace gl
