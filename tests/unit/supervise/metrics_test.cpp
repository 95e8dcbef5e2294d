// SPDX-License-Identifier: Apache-2.0
#include "supervise/metrics.hpp"

#include <sys/stat.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../temp_dir.hpp"
#include "supervise/metrics_file.hpp"

using gl::testing::TempDir;

namespace gl {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kNow = 1'767'225'600'000'000;  // 2026-01-01T00:00:00Z

// A profile that serves after a CUDA OOM, with the last start's phases and two caches.
ProfileMetricsInput serving() {
  ProfileMetricsInput in;
  in.profile = "k26-ar";
  in.unit.name = "gpulaunch-k26-ar.service";
  in.unit.load_state = "loaded";
  in.unit.active_state = "active";
  in.unit.watchdog_usec = static_cast<uint64_t>(kNow - 7'250'000);
  in.state.consecutive_failures = 1;
  in.state.gpu_level = 1;
  in.state.host_level = 0;
  in.state.stops_by_class[ExitClass::cuda_oom] = 2;
  in.state.stops_by_class[ExitClass::clean] = 1;
  StartTimeline start;
  start.process_start_usec = kNow - 300'000'000;
  start.ready_usec = kNow - 100'000'000;
  start.phases = {
      {Phase::process, kNow - 300'000'000, kNow - 290'000'000},
      {Phase::weights, kNow - 290'000'000, kNow - 200'000'000},
      {Phase::jit_compile, kNow - 200'000'000, kNow - 150'000'000},
      {Phase::cuda_graphs, kNow - 150'000'000, kNow - 120'500'000},
      {Phase::jit_compile, kNow - 120'500'000, kNow - 110'000'000},  // came back
      {Phase::health, kNow - 110'000'000, 0},                        // open at READY=1: ends there
  };
  in.state.last_start = start;
  CacheStatus flashinfer;
  flashinfer.name = "flashinfer";
  flashinfer.state = CacheState::stale;
  flashinfer.usage = {.exists = true, .is_directory = true, .bytes = 4096, .entries = 2};
  CacheStatus triton;
  triton.name = "triton";
  triton.state = CacheState::missing;
  in.caches = std::vector<CacheStatus>{flashinfer, triton};
  in.now_usec = kNow;
  return in;
}

TEST(Metrics, AServingProfileHasEveryFamilyWithItsExactLines) {
  EXPECT_EQ(
      metrics_text({serving()}),
      R"(# HELP gpulaunch_up 1 while the profile's unit is up (ActiveState active, activating or reloading)
# TYPE gpulaunch_up gauge
gpulaunch_up{profile="k26-ar"} 1
# HELP gpulaunch_ready 1 while the engine serves (run sent READY=1: ActiveState active, or activating in start-post)
# TYPE gpulaunch_ready gauge
gpulaunch_ready{profile="k26-ar"} 1
# HELP gpulaunch_stops_total Engine stops record-exit classified, by class, since the history began
# TYPE gpulaunch_stops_total counter
gpulaunch_stops_total{profile="k26-ar",class="clean"} 1
gpulaunch_stops_total{profile="k26-ar",class="host-oom"} 0
gpulaunch_stops_total{profile="k26-ar",class="cuda-oom"} 2
gpulaunch_stops_total{profile="k26-ar",class="hang"} 0
gpulaunch_stops_total{profile="k26-ar",class="start-timeout"} 0
gpulaunch_stops_total{profile="k26-ar",class="config-error"} 0
gpulaunch_stops_total{profile="k26-ar",class="setup-failure"} 0
gpulaunch_stops_total{profile="k26-ar",class="crash-loop"} 0
gpulaunch_stops_total{profile="k26-ar",class="gpu-residue"} 0
gpulaunch_stops_total{profile="k26-ar",class="stalled"} 0
gpulaunch_stops_total{profile="k26-ar",class="crash"} 0
# HELP gpulaunch_consecutive_failures Failures in a row since the engine last served restart.stable_after, whether it served before each or not; the backoff grows with it
# TYPE gpulaunch_consecutive_failures gauge
gpulaunch_consecutive_failures{profile="k26-ar"} 1
# HELP gpulaunch_failed_starts Starts in a row that failed to serve (never ready, or died within restart.probation of ready): at restart.budget the service stays down
# TYPE gpulaunch_failed_starts gauge
gpulaunch_failed_starts{profile="k26-ar"} 1
# HELP gpulaunch_deaths_after_serving Deaths after serving past restart.probation since the engine last served restart.stable_after: each is restarted, forever; alert when it keeps growing
# TYPE gpulaunch_deaths_after_serving gauge
gpulaunch_deaths_after_serving{profile="k26-ar"} 0
# HELP gpulaunch_gpu_step_down_level Steps taken down on the engine's GPU memory knobs after CUDA OOMs
# TYPE gpulaunch_gpu_step_down_level gauge
gpulaunch_gpu_step_down_level{profile="k26-ar"} 1
# HELP gpulaunch_host_step_down_level Steps taken down on the engine's concurrency after host or request OOMs
# TYPE gpulaunch_host_step_down_level gauge
gpulaunch_host_step_down_level{profile="k26-ar"} 0
# HELP gpulaunch_last_start_duration_seconds From the engine's process start to READY=1, in the last start that became ready
# TYPE gpulaunch_last_start_duration_seconds gauge
gpulaunch_last_start_duration_seconds{profile="k26-ar"} 200.000
# HELP gpulaunch_last_start_ready_time_seconds When the last start that became ready sent READY=1, in seconds since the epoch
# TYPE gpulaunch_last_start_ready_time_seconds gauge
gpulaunch_last_start_ready_time_seconds{profile="k26-ar"} 1767225500.000
# HELP gpulaunch_last_start_phase_seconds Time spent in each phase of the last start that became ready
# TYPE gpulaunch_last_start_phase_seconds gauge
gpulaunch_last_start_phase_seconds{profile="k26-ar",phase="process"} 10.000
gpulaunch_last_start_phase_seconds{profile="k26-ar",phase="weights"} 90.000
gpulaunch_last_start_phase_seconds{profile="k26-ar",phase="jit_compile"} 60.500
gpulaunch_last_start_phase_seconds{profile="k26-ar",phase="cuda_graphs"} 29.500
gpulaunch_last_start_phase_seconds{profile="k26-ar",phase="health"} 10.000
# HELP gpulaunch_seconds_since_progress Seconds since run last fed systemd's watchdog (a health answer while the liveness signal showed progress or an idle engine) or the start became ready; only while the unit is active
# TYPE gpulaunch_seconds_since_progress gauge
gpulaunch_seconds_since_progress{profile="k26-ar"} 7.250
# HELP gpulaunch_cache_state 1 for each of the profile's caches, labelled with its state (current, stale, empty, missing, foreign)
# TYPE gpulaunch_cache_state gauge
gpulaunch_cache_state{profile="k26-ar",cache="flashinfer",state="stale"} 1
gpulaunch_cache_state{profile="k26-ar",cache="triton",state="missing"} 1
# HELP gpulaunch_cache_size_bytes Apparent size of each of the profile's caches
# TYPE gpulaunch_cache_size_bytes gauge
gpulaunch_cache_size_bytes{profile="k26-ar",cache="flashinfer"} 4096
)");
}

// Stopped by `down`: up and ready 0, the counters kept; no progress age (no watchdog runs), and
// nothing about a start that never became ready or caches nobody could look at.
TEST(Metrics, AStoppedProfileKeepsItsCountersAndDropsWhatNoLongerHolds) {
  ProfileMetricsInput in = serving();
  in.unit.active_state = "inactive";
  in.state.last_start->ready_usec = 0;
  in.caches.reset();
  const std::string text = metrics_text({in});
  EXPECT_NE(text.find("gpulaunch_up{profile=\"k26-ar\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpulaunch_ready{profile=\"k26-ar\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpulaunch_stops_total{profile=\"k26-ar\",class=\"cuda-oom\"} 2\n"),
            std::string::npos)
      << text;
  for (const char* absent : {"gpulaunch_seconds_since_progress", "gpulaunch_last_start",
                             "gpulaunch_cache_state", "gpulaunch_cache_size_bytes"})
    EXPECT_EQ(text.find(absent), std::string::npos) << absent << "\n" << text;
}

TEST(Metrics, AStartingUnitIsUpButNotReady) {
  ProfileMetricsInput in = serving();
  in.unit.active_state = "activating";
  in.unit.sub_state = "start";
  const std::string text = metrics_text({in});
  EXPECT_NE(text.find("gpulaunch_up{profile=\"k26-ar\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("gpulaunch_ready{profile=\"k26-ar\"} 0\n"), std::string::npos);
  EXPECT_EQ(text.find("gpulaunch_seconds_since_progress"), std::string::npos);
}

// record-start writes the file from ExecStartPost=, after READY=1 but before systemd calls the
// unit active: the engine serves.
TEST(Metrics, AUnitInStartPostIsReady) {
  ProfileMetricsInput in = serving();
  in.unit.active_state = "activating";
  in.unit.sub_state = "start-post";
  const std::string text = metrics_text({in});
  EXPECT_NE(text.find("gpulaunch_ready{profile=\"k26-ar\"} 1\n"), std::string::npos) << text;
}

// Several profiles in one text (`gpulaunch metrics` without a profile): each family's HELP and
// TYPE once, its samples together.
TEST(Metrics, EachFamilyOnceAcrossProfiles) {
  ProfileMetricsInput other = serving();
  other.profile = "qwen";
  const std::string text = metrics_text({serving(), other});
  for (const auto& family : metric_families()) {
    const std::string_view name = family.name;
    const std::string help = "# HELP " + std::string(name) + " ";
    const size_t first = text.find(help);
    ASSERT_NE(first, std::string::npos) << name;
    EXPECT_EQ(text.find(help, first + 1), std::string::npos) << name;
  }
  EXPECT_NE(text.find("gpulaunch_up{profile=\"k26-ar\"} 1\ngpulaunch_up{profile=\"qwen\"} 1\n"),
            std::string::npos)
      << text;
}

TEST(Metrics, LabelValuesAreEscapedAndNoSampleHasATimestamp) {
  ProfileMetricsInput in = serving();
  (*in.caches)[0].name = "a\"b\\c\nd";
  const std::string text = metrics_text({in});
  EXPECT_NE(text.find(R"(cache="a\"b\\c\nd",state="stale"} 1)"), std::string::npos) << text;
  // node_exporter's textfile collector refuses a file whose samples carry timestamps: every
  // sample line is NAME{LABELS} VALUE, nothing after.
  const std::regex sample_line(R"(^gpulaunch_[a-z_]+\{[^}]*\} -?[0-9.]+$)");
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.starts_with("# ")) continue;
    EXPECT_TRUE(std::regex_match(line, sample_line)) << line;
  }
}

TEST(Metrics, CountersEndInTotalAndGaugesDoNot) {
  const std::string text = metrics_text({serving()});
  const std::regex type_line(R"(# TYPE (\S+) (\S+))");
  for (std::sregex_iterator it(text.begin(), text.end(), type_line), end; it != end; ++it) {
    const std::string name = (*it)[1], type = (*it)[2];
    EXPECT_EQ(type == "counter", name.ends_with("_total")) << name;
  }
}

// The shipped dashboard (/usr/share/gpulaunch/grafana/gpulaunch.json): valid JSON, and every
// metric a query names is one the exporter emits.
TEST(Metrics, TheGrafanaDashboardQueriesOnlyMetricsTheExporterEmits) {
  std::ifstream in(fs::path(GL_SOURCE_DIR) / "packaging/grafana/gpulaunch.json");
  ASSERT_TRUE(in);
  const auto dashboard = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(dashboard.is_discarded());
  std::set<std::string> emitted;
  for (const auto& family : metric_families()) emitted.emplace(family.name);
  std::set<std::string> queried;
  size_t exprs = 0;
  const std::regex metric(R"(gpulaunch_[a-z_]+)");
  auto scan = [&](const std::string& text) {
    for (std::sregex_iterator it(text.begin(), text.end(), metric), end; it != end; ++it)
      queried.insert(it->str());
  };
  for (const auto& panel : dashboard.at("panels"))
    for (const auto& target : panel.at("targets")) {
      scan(target.at("expr").get<std::string>());
      ++exprs;
    }
  for (const auto& variable : dashboard.at("templating").at("list"))
    if (variable.contains("definition")) scan(variable.at("definition").get<std::string>());
  EXPECT_GE(exprs, 7u);
  for (const auto& name : queried) EXPECT_TRUE(emitted.contains(name)) << name;
  // Every family is on the dashboard.
  for (const auto& name : emitted) EXPECT_TRUE(queried.contains(name)) << name;
}

TEST(MetricsFile, WrittenWholeWithTheProfilesNameAndRemovedAtUninstall) {
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  auto written = write_metrics_file(dir.path(), "k26-ar", "gpulaunch_up{profile=\"k26-ar\"} 1\n");
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_TRUE(written->done);
  const fs::path file = dir.path() / "gpulaunch_k26-ar.prom";
  EXPECT_EQ(written->path, file.string());
  std::ifstream read(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(read), {}),
            "gpulaunch_up{profile=\"k26-ar\"} 1\n");
  struct stat info {};
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0644u);  // node_exporter's own user reads it
  // Nothing else left beside it (the temporary was renamed).
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
  auto removed = remove_metrics_file(dir.path(), "k26-ar");
  ASSERT_TRUE(removed) << removed.error().message;
  EXPECT_TRUE(removed->done);
  EXPECT_FALSE(fs::exists(file));
}

TEST(MetricsFile, NoDirectoryMeansNoNodeExporterAndNothingWritten) {
  TempDir dir;
  auto written = write_metrics_file(dir.path() / "node-exporter", "k26-ar", "x 1\n");
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_FALSE(written->done);
  EXPECT_EQ(written->note, "'" + (dir.path() / "node-exporter").string() +
                               "' does not exist (node_exporter is not installed); not writing '" +
                               (dir.path() / "node-exporter/gpulaunch_k26-ar.prom").string() + "'");
  EXPECT_FALSE(fs::exists(dir.path() / "node-exporter"));
}

TEST(MetricsFile, ADirectoryOthersCanWriteOrALinkIsRefused) {
  TempDir dir;
  const fs::path open = dir.path() / "open";
  fs::create_directory(open);
  ::chmod(open.c_str(), 0775);
  auto written = write_metrics_file(open, "k26-ar", "x 1\n");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().message,
            "Refusing to write metrics into '" + open.string() +
                "': it is owned by uid 0 (mode 0775); only a directory root alone can write is "
                "used");
  const fs::path theirs = dir.path() / "theirs";
  fs::create_directory(theirs);
  ::chmod(theirs.c_str(), 0755);
  ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  EXPECT_FALSE(write_metrics_file(theirs, "k26-ar", "x 1\n"));
  const fs::path real = dir.path() / "real";
  fs::create_directory(real);
  ::chmod(real.c_str(), 0755);
  fs::create_directory_symlink(real, dir.path() / "link");
  EXPECT_FALSE(write_metrics_file(dir.path() / "link", "k26-ar", "x 1\n"));
  EXPECT_TRUE(fs::is_empty(real));
  EXPECT_TRUE(fs::is_empty(open));
}

}  // namespace
}  // namespace gl
