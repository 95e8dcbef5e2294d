// SPDX-License-Identifier: Apache-2.0
// gpulaunch up/status/down/run against a real systemd 252, booted privately in its own PID and
// mount namespaces (tests/integration/harness), with the mock SGLang as the engine.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "facts/python_env.hpp"
#include "harness/mock_engine_suite.hpp"
#include "plan/launch_plan.hpp"
#include "profile/validate.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::ExecResult;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;
using namespace std::chrono_literals;

// Not under /tmp: the private systemd mounts its own /tmp.
const fs::path kWork = fs::path(GL_BINARY_DIR) / "lifecycle-work";
const std::string kGpulaunch = GL_GPULAUNCH_BINARY;

class Lifecycle : public MockEngineSuite<Lifecycle> {
 public:
  static MockEngineHost* new_host() { return new MockEngineHost(kWork, kGpulaunch, GL_SOURCE_DIR); }

 protected:
  // A model path with a space: it must reach the engine as one argument.
  static void write_profile(const std::string& name, int port, const std::string& extra,
                            const std::string& env = "") {
    host().write_profile(name, port, extra, env, "/models/mock model");
  }

  // Polls `status --json` until `done(status)` or the limit; the last status.
  template <class Predicate>
  static nlohmann::json wait_for(const std::string& name, Predicate done,
                                 std::chrono::seconds limit = 60s) {
    nlohmann::json status;
    eventually(
        [&] {
          status = status_of(name);
          return !status.empty() && done(status);
        },
        limit);
    return status;
  }
};

TEST_F(Lifecycle, UpWaitsUntilServingThenStatusThenDown) {
  write_profile("basic", 31001, "");
  set_mode("basic", "normal");
  auto up = gpulaunch("up basic --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  EXPECT_NE(up.out.find("loading weights"), std::string::npos) << up.out;
  EXPECT_TRUE(std::regex_search(
      up.out, std::regex("ready: basic serves at http://127.0.0.1:31001 after [0-9.]+s")))
      << up.out;
  // Ready means serving: the health endpoint answers 200 at this point.
  auto health = host().systemd().exec({"python3", "-c",
                                       "import urllib.request;print(urllib.request.urlopen("
                                       "'http://127.0.0.1:31001/health').status)"});
  EXPECT_EQ(health.out, "200\n");

  // Up across a reboot too (--runtime: until the next one): the unit is enabled where it lives.
  EXPECT_NE(up.out.find("Created symlink /run/systemd/system/multi-user.target.wants/"
                        "gpulaunch-basic.service -> /run/systemd/system/gpulaunch-basic.service."),
            std::string::npos)
      << up.out;
  EXPECT_EQ(host().systemd().exec({"systemctl", "is-enabled", "gpulaunch-basic.service"}).out,
            "enabled-runtime\n");

  auto status = status_of("basic");
  EXPECT_EQ(status["state"], "active");
  EXPECT_EQ(status["phase"], "serving");
  EXPECT_GT(status["main_pid"].get<int>(), 0);
  EXPECT_EQ(status["restarts"], 0);

  // The overview: one row for the profile, none for the device oneshot; the detail adds the
  // endpoint and the unit's last journal lines.
  auto overview = gpulaunch("status");
  EXPECT_EQ(overview.exit_code, 0) << overview.out;
  EXPECT_TRUE(std::regex_search(
      overview.out, std::regex("\nbasic +sglang +active +[0-9]+s ago +0 +- +31001 +0 +serving\n")))
      << overview.out;
  EXPECT_EQ(overview.out.find("nvidia-devices"), std::string::npos) << overview.out;
  auto detail = gpulaunch("status basic");
  EXPECT_EQ(detail.exit_code, 0) << detail.out;
  EXPECT_NE(detail.out.find("  endpoint: http://127.0.0.1:31001\n"), std::string::npos)
      << detail.out;
  EXPECT_NE(detail.out.find("  gpus:     0\n"), std::string::npos) << detail.out;

  auto again = gpulaunch("up basic --runtime --force");
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.out.find("running and unchanged: nothing to do"), std::string::npos) << again.out;
  EXPECT_EQ(status_of("basic")["main_pid"], status["main_pid"]);

  auto down = gpulaunch("down basic --runtime --purge");
  EXPECT_EQ(down.exit_code, 0) << down.out;
  EXPECT_NE(down.out.find("stopped gpulaunch-basic.service"), std::string::npos) << down.out;
  EXPECT_NE(down.out.find("Removed \"/run/systemd/system/multi-user.target.wants/"
                          "gpulaunch-basic.service\"."),
            std::string::npos)
      << down.out;
  EXPECT_NE(down.out.find("removed /run/systemd/system/gpulaunch-basic.service"),
            std::string::npos);
  auto gone = gpulaunch("status basic");
  EXPECT_EQ(gone.exit_code, 3);
  EXPECT_NE(gone.out.find("is not installed"), std::string::npos) << gone.out;
  // --purge removed what gpulaunch wrote, the snapshot among it: `check --all` and the overview
  // no longer see the profile.
  EXPECT_NE(down.out.find("removed /var/lib/gpulaunch/snapshots/basic.toml (the installed "
                          "profile)\n"),
            std::string::npos)
      << down.out;
  EXPECT_NE(down.out.find("removed /var/lib/gpulaunch/basic (history, supervisor state"),
            std::string::npos)
      << down.out;
  EXPECT_NE(
      host().systemd().exec({"test", "-e", "/var/lib/gpulaunch/snapshots/basic.toml"}).exit_code,
      0);
  auto all = gpulaunch("check --all");
  EXPECT_EQ(all.out.find("basic"), std::string::npos) << all.out;
  EXPECT_EQ(gpulaunch("status").out.find("\nbasic "), std::string::npos);
}

// These machines have no GPU: `check` finds no driver, and `up` must refuse unless forced.
TEST_F(Lifecycle, UpRefusesWhenTheCheckFindsErrorsUnlessForced) {
  write_profile("gated", 31007, "");
  set_mode("gated", "normal");
  auto refused = gpulaunch("up gated --runtime");
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.out.find("error[no-nvidia-driver]"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("Refusing to start gpulaunch-gated.service: the check found"),
            std::string::npos)
      << refused.out;
  EXPECT_NE(gpulaunch("status gated").exit_code, 0);  // nothing was installed
  auto forced = gpulaunch("up gated --runtime --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.out;
  EXPECT_NE(forced.out.find("WARNING: --force: starting gpulaunch-gated.service DESPITE"),
            std::string::npos)
      << forced.out;
  gpulaunch("down gated --runtime --purge");
}

TEST_F(Lifecycle, AChangedProfileShowsTheDiffAndRestarts) {
  write_profile("changes", 31002, "");
  set_mode("changes", "normal");
  ASSERT_EQ(gpulaunch("up changes --runtime --force").exit_code, 0);
  const int first_pid = status_of("changes")["main_pid"];
  write_profile("changes", 31002, "", "EXTRA_SETTING = \"2\"\n");
  auto up = gpulaunch("up changes --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  EXPECT_NE(up.out.find("+Environment=\"EXTRA_SETTING=2\""), std::string::npos) << up.out;
  EXPECT_NE(up.out.find("restarting gpulaunch-changes.service"), std::string::npos) << up.out;
  auto status = status_of("changes");
  EXPECT_EQ(status["state"], "active");
  EXPECT_NE(status["main_pid"].get<int>(), first_pid);
  // Each start checks the JIT caches against the node; the node did not change in between.
  auto logs = gpulaunch("logs changes -n 400");
  EXPECT_NE(logs.out.find("gpulaunch: JIT caches current (fingerprint "), std::string::npos)
      << logs.out;
  gpulaunch("down changes --runtime --purge");
}

TEST_F(Lifecycle, AnEngineThatNeverTurnsHealthyFailsAtTheReadyTimeout) {
  write_profile("stuck", 31003, "ready_timeout = \"4s\"\n[restart]\npolicy = \"no\"\n");
  set_mode("stuck", "never-ready");
  auto up = gpulaunch("up stuck --runtime --force");
  EXPECT_EQ(up.exit_code, 1) << up.out;
  EXPECT_NE(up.out.find("Failed to start gpulaunch-stuck.service: job failed"), std::string::npos)
      << up.out;
  EXPECT_NE(up.out.find("did not answer 200 on http://127.0.0.1:31003/health in time"),
            std::string::npos)
      << up.out;
  EXPECT_NE(up.out.find("exit status 75"), std::string::npos) << up.out;
  // The wait says its deadline; the tail gives the engine's lines, the probes' answers counted.
  EXPECT_NE(up.out.find("waiting for ready: "), std::string::npos) << up.out;
  EXPECT_NE(up.out.find("s of 4s: "), std::string::npos) << up.out;
  EXPECT_NE(up.out.find("(gpulaunch's /health probe: "), std::string::npos) << up.out;
  EXPECT_EQ(up.out.find("\"GET /health HTTP/1.1\" 503"), std::string::npos) << up.out;
  // `restart` says the same as `up` (issue 46): its progress, the failure and the tail.
  auto restart = gpulaunch("restart stuck");
  EXPECT_EQ(restart.exit_code, 1) << restart.out;
  EXPECT_NE(restart.out.find("restarting gpulaunch-stuck.service"), std::string::npos)
      << restart.out;
  EXPECT_NE(restart.out.find("waiting for ready: "), std::string::npos) << restart.out;
  EXPECT_NE(restart.out.find("Failed to start gpulaunch-stuck.service: job failed"),
            std::string::npos)
      << restart.out;
  EXPECT_NE(restart.out.find("last lines of gpulaunch-stuck.service:"), std::string::npos)
      << restart.out;
  EXPECT_NE(restart.out.find("did not answer 200 on http://127.0.0.1:31003/health in time"),
            std::string::npos)
      << restart.out;
  EXPECT_NE(restart.out.find("(gpulaunch's /health probe: "), std::string::npos) << restart.out;
  gpulaunch("down stuck --runtime --purge");
}

TEST_F(Lifecycle, ACrashingEngineIsRestartedBySystemd) {
  write_profile("crashy", 31004, "[restart]\ndelay = \"1s\"\n",
                "MOCK_SGLANG_CRASH_AFTER = \"2\"\n");
  set_mode("crashy", "crash");
  ASSERT_EQ(gpulaunch("up crashy --runtime --force").exit_code, 0);
  set_mode("crashy", "normal");  // the restart comes back healthy
  auto status = wait_for("crashy", [](const nlohmann::json& s) {
    return s["restarts"].get<int>() >= 1 && s["state"] == "active";
  });
  EXPECT_GE(status["restarts"].get<int>(), 1) << status.dump();
  EXPECT_EQ(status["state"], "active");
  auto logs = gpulaunch("logs crashy -n 200");
  EXPECT_NE(logs.out.find("engine was killed by signal 11"), std::string::npos) << logs.out;
  gpulaunch("down crashy --runtime --purge");
}

TEST_F(Lifecycle, AHungEngineIsRestartedByTheWatchdog) {
  // The mock's /health answers at once, so it says its own bound is 1 s (as a real SGLang would
  // be told): the probe then waits 5 s, and WatchdogSec is 25 s rather than SGLang's 115.
  // Liveness "health": the watchdog alone (a generation probe would catch the hang as a stall
  // first, with WatchdogSec raised above its timeout; supervise_test covers that).
  write_profile("hung", 31005,
                "watchdog = \"3s\"\nliveness = \"health\"\n[restart]\ndelay = \"1s\"\n",
                "MOCK_SGLANG_HANG_AFTER = \"1\"\nSGLANG_HEALTH_CHECK_TIMEOUT = \"1\"\n");
  set_mode("hung", "hang");
  ASSERT_EQ(gpulaunch("up hung --runtime --force").exit_code, 0);
  set_mode("hung", "normal");
  auto status = wait_for(
      "hung",
      [](const nlohmann::json& s) {
        return s["restarts"].get<int>() >= 1 && s["state"] == "active";
      },
      120s);
  EXPECT_GE(status["restarts"].get<int>(), 1) << status.dump();
  auto logs = gpulaunch("logs hung -n 300");
  EXPECT_NE(logs.out.find("watchdog expired: the engine stopped answering health checks"),
            std::string::npos)
      << logs.out;
  EXPECT_NE(logs.out.find("Watchdog timeout"), std::string::npos) << logs.out;
  gpulaunch("down hung --runtime --purge");
}

// Current SGLang's loader writes a tqdm bar that redraws one line with carriage returns; `run`
// reads each update as it comes (STATUS= and `up` show the percentage) and the journal gets each
// update as a line of its own.
TEST_F(Lifecycle, TqdmProgressWithCarriageReturnsReachesStatusAndTheJournalLineByLine) {
  write_profile("tqdm", 31008, "", "MOCK_SGLANG_PROGRESS = \"tqdm\"\n");
  set_mode("tqdm", "normal");
  auto up = gpulaunch("up tqdm --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  EXPECT_NE(up.out.find("loading weights"), std::string::npos) << up.out;
  auto logs = gpulaunch("logs tqdm -n 400");
  EXPECT_EQ(logs.out.find('\r'), std::string::npos) << "a carriage return reached the journal";
  // 0/8 .. 8/8 and tqdm's closing redraw: each on a journal line of its own.
  constexpr std::string_view kBar = "Multi-thread loading shards:";
  int updates = 0;
  std::istringstream lines(logs.out);
  for (std::string line; std::getline(lines, line);) {
    auto at = line.find(kBar);
    if (at == std::string::npos) continue;
    ++updates;
    EXPECT_EQ(line.find(kBar, at + 1), std::string::npos) << line;
  }
  EXPECT_GE(updates, 9) << logs.out;
  EXPECT_NE(logs.out.find("Multi-thread loading shards:  25% Completed | 2/8"), std::string::npos)
      << logs.out;
  gpulaunch("down tqdm --runtime --purge");
}

TEST_F(Lifecycle, HostileArgumentsReachTheEngineByteForByte) {
  const std::string hostile = "hostile 100% $HOME ${PATH} $$; \\\"q\\\" \\\\back naïve 模型 ;";
  // The profile's [engine] table gets its args from a drop-in.
  write_profile("hostile", 31006, "");
  fs::create_directories(kWork / "profiles/hostile.toml.d");
  std::ofstream(kWork / "profiles/hostile.toml.d/10-args.toml")
      << "[engine]\nargs = [\"--served-model-name\", \"" << hostile
      << "\", \"--revision\", \"%n%% ;\", \"--trust-remote-code\"]\n";
  set_mode("hostile", "normal");
  auto up = gpulaunch("up hostile --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;

  gl::DirectorySource source({kWork / "profiles"});
  auto profile = gl::load_profile(source, "hostile");
  ASSERT_TRUE(profile) << profile.error().message;
  // `up` picks the launcher from the venv's installed version: the mock's (0.5.6+mock) has
  // `sglang serve`.
  const auto version =
      gl::installed_engine_version(gl::NodeFs(), profile->engine.kind, *profile->engine.venv);
  ASSERT_TRUE(version);
  const auto expected = gl::make_launch_plan(*profile, gl::LaunchOptions{0, version}).argv;
  ASSERT_GE(expected.size(), 2u);
  EXPECT_EQ(expected[1], "serve");
  EXPECT_NE(std::find(expected.begin(), expected.end(),
                      "hostile 100% $HOME ${PATH} $$; \"q\" \\back naïve 模型 ;"),
            expected.end());
  EXPECT_EQ(host().recorded_argv("hostile"), expected);
  gpulaunch("down hostile --runtime --purge");
}

// Not systemd-in-a-namespace: systemd-analyze scores the rendered unit file offline.
TEST(Hardening, K26UnitScoresAtMost2Point5AndKeepsTheGpusReachable) {
  const fs::path dir = kWork / "security";
  fs::create_directories(dir);
  const std::string unit = (dir / "gpulaunch-k26-ar.service").string();
  const std::string render = "'" + kGpulaunch + "' -P '" + std::string(GL_SOURCE_DIR) +
                             "/profiles' render k26-ar > '" + unit + "'";
  ASSERT_EQ(std::system(render.c_str()), 0);
  const std::string report = (dir / "security.txt").string();
  // Its exit status is the exposure verdict, not a failure to run: the score is read below.
  [[maybe_unused]] const int analyzed = std::system(
      ("systemd-analyze security --offline=yes '" + unit + "' > '" + report + "' 2>&1").c_str());
  std::ifstream in(report);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch match;
  ASSERT_TRUE(
      std::regex_search(text, match, std::regex("Overall exposure level for [^:]+: ([0-9.]+)")))
      << text;
  const double score = std::stod(match[1]);
  std::printf("systemd-analyze security: gpulaunch-k26-ar.service exposure %.1f\n", score);
  EXPECT_LE(score, 2.5);
  std::ifstream unit_in(unit);
  std::string unit_text((std::istreambuf_iterator<char>(unit_in)),
                        std::istreambuf_iterator<char>());
  EXPECT_NE(unit_text.find("DevicePolicy=closed\n"), std::string::npos);
  EXPECT_NE(unit_text.find("DeviceAllow=char-nvidia* rw\n"), std::string::npos);
  EXPECT_EQ(unit_text.find("PrivateDevices=yes"), std::string::npos);
}

}  // namespace
