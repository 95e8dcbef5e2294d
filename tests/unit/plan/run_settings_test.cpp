// SPDX-License-Identifier: Apache-2.0
#include "plan/run_settings.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "profile/memory_source.hpp"
#include "profile/validate.hpp"

namespace gl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Every setting away from the value `run` assumes when it is absent.
RunSettings everything_set() {
  RunSettings settings;
  settings.profile = "k26-ar";
  settings.snapshot = "/var/lib/gpulaunch/snapshots/k26-ar.toml";
  settings.health_url = "http://127.0.0.1:30000/health";
  settings.ready_timeout = Seconds{900};
  settings.progress_grace = Seconds{120};
  settings.health_timeout = Seconds{23};
  settings.drain_timeout = Seconds{600};
  settings.engine_version = "0.5.6";
  settings.rendezvous = Rendezvous{"fd00::1", 5000, true};
  settings.liveness = LivenessMode::metrics;
  settings.liveness_interval = Seconds{10};
  settings.liveness_timeout = Seconds{90};
  settings.probe_path = "/v1/completions";
  settings.probe_body = R"({"prompt": "a b", "max_tokens": 1})";
  settings.metrics_path = "/metrics";
  settings.metrics_format = MetricsFormat::iteration_stats;
  settings.in_flight_metric = "sglang:num_running_reqs";
  settings.tokens_metric = "iter";
  settings.engine_options_path = "/var/lib/gpulaunch/home/k26-ar/options.yaml";
  settings.engine_options_text = "enable_iter_perf_stats: true\n";
  settings.rank0_watches = true;
  settings.api_key_credential = "engine-api-key";
  settings.api_key_variable = "VLLM_API_KEY";
  settings.ready = ReadyOn::generate;
  settings.container_user = "gpulaunch-k26-ar";
  settings.engine_argv = {"/opt/venv/bin/python", "-m", "sglang.launch_server", "--port", "30000"};
  return settings;
}

TEST(RunSettings, EverySettingReadsBackAsItWasWritten) {
  const RunSettings written = everything_set();
  auto read = parse_run_settings(run_settings_argv(written));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, written);
  EXPECT_EQ(run_settings_argv(*read), run_settings_argv(written));
}

// An engine argument that looks like one of run's options stays the engine's.
TEST(RunSettings, TheEnginesArgumentsAfterTheSeparatorAreNeverRunsOwn) {
  RunSettings written = everything_set();
  written.engine_argv = {"/bin/engine", "--liveness=off", "--profile", "x", "--"};
  auto read = parse_run_settings(run_settings_argv(written));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->engine_argv, written.engine_argv);
  EXPECT_EQ(read->liveness, LivenessMode::metrics);
}

// What an older unit passes is all a default unit passes: the rest keeps run's defaults.
TEST(RunSettings, ASettingAtItsDefaultIsNotWritten) {
  RunSettings written;
  written.profile = "k26";
  written.snapshot = "/s.toml";
  written.health_url = "http://127.0.0.1:8000/health";
  written.engine_argv = {"/bin/engine"};
  EXPECT_THAT(run_settings_argv(written),
              ElementsAre("--profile=k26", "--snapshot=/s.toml",
                          "--health-url=http://127.0.0.1:8000/health", "--ready-timeout=1200",
                          "--health-timeout=5", "--drain-timeout=80", "--", "/bin/engine"));
  auto read =
      parse_run_settings({"--profile=k26", "--snapshot=/s.toml",
                          "--health-url=http://127.0.0.1:8000/health", "--", "/bin/engine"});
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, written);
}

TEST(RunSettings, UnitsOfEarlierVersionsStillPassTheirEngineKind) {
  auto read = parse_run_settings(
      {"--profile=k26", "--engine=sglang", "--health-url=http://h:1/health", "--", "/bin/e"});
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->profile, "k26");
}

TEST(RunSettings, ABadValueNamesTheOptionAndWhatItTakes) {
  const auto error = [](std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), {"--profile=k26", "--health-url=http://h:1/health"});
    arguments.insert(arguments.end(), {"--", "/bin/e"});
    auto read = parse_run_settings(arguments);
    return read ? std::string("<accepted>") : read.error().message;
  };
  EXPECT_THAT(error({"--ready-timeout=0"}),
              HasSubstr("--ready-timeout: expected whole seconds from 1 to 86400, got '0'"));
  EXPECT_THAT(error({"--liveness-timeout=60s"}), HasSubstr("got '60s'"));
  EXPECT_THAT(error({"--liveness=sometimes"}),
              HasSubstr("invalid --liveness 'sometimes': expected one of generate, metrics, "
                        "health, off"));
  EXPECT_THAT(error({"--rendezvous=10.0.0.1"}),
              HasSubstr("invalid --rendezvous '10.0.0.1': expected HOST:PORT"));
  EXPECT_THAT(error({"--ready=sometimes"}), HasSubstr("expected health or generate"));
  EXPECT_THAT(error({"--liveness-metrics-format=json"}),
              HasSubstr("expected prometheus or iteration-stats"));
  EXPECT_THAT(error({"--no-such-setting=1"}), HasSubstr("--no-such-setting"));
  EXPECT_EQ(parse_run_settings({"--profile=../etc", "--health-url=u", "--", "/bin/e"})
                .error()
                .message.find("Failed to read run's options"),
            0u);
  EXPECT_FALSE(parse_run_settings({"--profile=k26", "--health-url=u"}))
      << "the engine's command line is required";
}

// The unit's ExecStart= carries exactly what the plan decided, for each liveness shape.
TEST(RunSettings, ThePlanReachesRunWhole) {
  MemorySource source(std::map<std::string, std::string>{{"/p/k26.toml", R"(
[engine]
kind = "sglang"
venv = "/opt/venv"
[model]
path = "/m"
[server]
port = 30000
liveness = "generate"
liveness_interval = "20s"
liveness_timeout = "90s"
drain_timeout = "45s"
)"}});
  auto profile = load_profile(source, "k26");
  ASSERT_TRUE(profile) << profile.error().message;
  const LaunchPlan plan = make_launch_plan(*profile);
  const RunSettings settings = run_settings(*profile, plan);
  EXPECT_EQ(settings.liveness, LivenessMode::generate);
  EXPECT_EQ(settings.liveness_interval, Seconds{20});
  EXPECT_EQ(settings.liveness_timeout, Seconds{90});
  EXPECT_EQ(settings.drain_timeout, Seconds{45});
  EXPECT_EQ(settings.probe_path, plan.liveness.probe_path);
  EXPECT_EQ(settings.engine_argv, plan.argv);
  auto read = parse_run_settings(run_settings_argv(settings));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, settings);
}

}  // namespace
}  // namespace gl
