// SPDX-License-Identifier: Apache-2.0
// Supervision against a real systemd 252 booted privately (tests/integration/harness), with the
// mock SGLang driven into each failure: record-exit classifies every stop from systemd's
// SERVICE_RESULT/EXIT_* and the invocation's journal, `run` backs off, steps down, stays down.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/mock_engine_suite.hpp"
#include "plan/launch_plan.hpp"
#include "util/state_paths.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::event_of;
using gpulaunch::testing::ExecResult;
using gpulaunch::testing::flag_value;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;
using namespace std::chrono_literals;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;
// Short enough for a test, long enough to see the delay grow.
const std::string kRestart = "[restart]\ndelay = \"1s\"\nmax_delay = \"4s\"\n";

class Supervise : public MockEngineSuite<Supervise> {
 public:
  static MockEngineHost* new_host() {
    return new MockEngineHost(fs::path(GL_BINARY_DIR) / "supervise-work", kGpulaunch,
                              GL_SOURCE_DIR);
  }

 protected:
  // Each boot has a fresh /var/lib/gpulaunch (a tmpfs in the harness), so no old history.
  static void write_profile(const std::string& name, int port, const std::string& extra,
                            const std::string& env = "") {
    host().write_profile(name, port, extra, env);
  }
};

// cgroup v1/hybrid: systemd says Result=signal or exit-code 137, never oom-kill; the kernel's
// oom-kill line (or the cgroup's counter) must be what tells.
TEST_F(Supervise, AHostOomUnderMemoryMaxIsClassifiedAsHostOom) {
  write_profile("hostoom", 31101, "[service]\nmemory_max = \"200M\"\n" + kRestart);
  set_mode("hostoom", "leak");
  auto up = gpulaunch("up hostoom --runtime --force");
  set_mode("hostoom", "normal");  // the restart comes back healthy
  ASSERT_EQ(up.exit_code, 0) << up.out;
  nlohmann::json events;
  ASSERT_TRUE(eventually([&] { return has_event(events = events_of("hostoom"), "host-oom"); }))
      << events.dump(2) << "\n"
      << gpulaunch("logs hostoom -n 100").out;
  const auto event = event_of(events, "host-oom");
  std::printf("host OOM evidence: %s\naction: %s\n", event["evidence"].get<std::string>().c_str(),
              event["action"].get<std::string>().c_str());
  EXPECT_NE(event["action"].get<std::string>().find("step down to concurrency level 1"),
            std::string::npos)
      << event.dump();
  // It comes back with less concurrency.
  ASSERT_TRUE(eventually([&] {
    auto s = status_of("hostoom");
    return s.value("restarts", 0) >= 1 && s.value("state", "") == "active";
  })) << status_of("hostoom").dump(2);
  EXPECT_EQ(flag_value(recorded_argv("hostoom"), "--max-running-requests"), "128");
  EXPECT_EQ(status_of("hostoom")["step_down"]["concurrency_level"], 1);
  gpulaunch("down hostoom --runtime --purge");
}

TEST_F(Supervise, ACudaOomComesBackWithALowerMemFraction) {
  write_profile("cudaoom", 31102, kRestart);
  set_mode("cudaoom", "cuda-oom");
  auto up = gpulaunch("up cudaoom --runtime --force");
  set_mode("cudaoom", "normal");
  EXPECT_NE(up.exit_code, 0) << up.out;  // the first start never served
  ASSERT_TRUE(eventually([&] {
    auto s = status_of("cudaoom");
    return s.value("restarts", 0) >= 1 && s.value("state", "") == "active";
  })) << status_of("cudaoom").dump(2);
  auto events = events_of("cudaoom");
  ASSERT_TRUE(has_event(events, "cuda-oom")) << events.dump(2);
  EXPECT_NE(event_of(events, "cuda-oom")["evidence"].get<std::string>().find(
                "torch.OutOfMemoryError: CUDA out of memory"),
            std::string::npos)
      << events.dump(2);
  // No NVML in the harness: SGLang's own share for GPUs it cannot measure, 0.95, is the baseline.
  EXPECT_EQ(flag_value(recorded_argv("cudaoom"), "--mem-fraction-static"), "0.9");
  auto status = status_of("cudaoom");
  EXPECT_EQ(status["step_down"]["gpu_memory_level"], 1) << status.dump(2);
  EXPECT_EQ(status["last_class"], "cuda-oom");
  auto logs = gpulaunch("logs cudaoom -n 200");
  EXPECT_NE(logs.out.find("step-down (GPU memory level 1, concurrency level 0): "
                          "--mem-fraction-static 0.95 -> 0.9 (from SGLang default 0.95 (GPU "
                          "memory unknown))"),
            std::string::npos)
      << logs.out;
  gpulaunch("down cudaoom --runtime --purge");
}

// A venv holding the mocks as these releases (mock/install.sh's MOCK_SGLANG_VERSION and
// MOCK_VLLM_VERSION): each accepts exactly its release's flags.
fs::path release_venv(MockEngineHost& host, const std::string& sglang, const std::string& vllm) {
  const fs::path venv = host.work() / ("venv-" + sglang + "-" + vllm);
  if (!fs::exists(venv / "bin" / "python")) {
    const std::string install = "MOCK_SGLANG_VERSION='" + sglang + "+mock' MOCK_VLLM_VERSION='" +
                                vllm + "+mock' bash '" + std::string(GL_SOURCE_DIR) +
                                "/mock/install.sh' '" + venv.string() + "' >/dev/null";
    EXPECT_EQ(std::system(install.c_str()), 0) << install;
  }
  return venv;
}

// One CUDA OOM on the engine of `kind` installed at `venv`: the restart steps down in the
// spelling that release takes, the engine accepts it and serves. The stepped-down argv as the
// mock recorded it.
std::vector<std::string> cuda_oom_and_back(MockEngineHost& host, const std::string& name,
                                           const std::string& kind, const fs::path& venv,
                                           int port) {
  const std::string mode_file = (host.work() / (name + ".mode")).string();
  const bool sglang = kind == "sglang";
  std::ofstream(host.work() / "profiles" / (name + ".toml"))
      << "[engine]\nkind = \"" << kind << "\"\nvenv = \"" << venv.string() << "\"\n"
      << "[model]\npath = \"/models/mock\"\n[server]\nport = " << port << "\n"
      << kRestart << "[env]\n"
      << (sglang ? "MOCK_SGLANG_LOAD_SECONDS" : "MOCK_VLLM_LOAD_SECONDS") << " = \"1\"\n"
      << (sglang ? "MOCK_SGLANG_MODE_FILE" : "MOCK_VLLM_MODE_FILE") << " = \"" << mode_file
      << "\"\n";
  std::ofstream(mode_file) << "cuda-oom";
  auto up = host.gpulaunch("up " + name + " --runtime --force");
  std::ofstream(mode_file) << "normal";
  EXPECT_NE(up.exit_code, 0) << up.out;  // the first start never served
  EXPECT_TRUE(MockEngineHost::eventually([&] {
    auto s = host.status_of(name);
    return s.value("restarts", 0) >= 1 && s.value("state", "") == "active";
  })) << host.status_of(name).dump(2)
      << host.gpulaunch("logs " + name + " -n 100").out;
  EXPECT_FALSE(event_of(host.events_of(name), "cuda-oom").empty()) << host.events_of(name).dump(2);
  const std::string file = sglang ? "mock-sglang-argv.json" : "mock-vllm-argv.json";
  auto recorded =
      host.systemd().exec({"cat", (gl::state_paths::engine_home(name) / file).string()});
  auto json = nlohmann::json::parse(recorded.out, nullptr, false);
  host.gpulaunch("down " + name + " --runtime --purge");
  return json.is_array() ? json.get<std::vector<std::string>>() : std::vector<std::string>{};
}

// SGLang before 0.5.15 has no --cuda-graph-max-bs-decode (argparse would exit 2 on it and the
// unit stay down as a configuration error): its step-down halves --cuda-graph-max-bs instead.
TEST_F(Supervise, ACudaOomOnAnOlderSglangStepsDownWithTheFlagsItHas) {
  const auto argv = cuda_oom_and_back(host(), "oldsglang", "sglang",
                                      release_venv(host(), "0.5.14", "0.18.0"), 31121);
  EXPECT_EQ(flag_value(argv, "--mem-fraction-static"), "0.9");
  EXPECT_EQ(flag_value(argv, "--cuda-graph-max-bs"), "80");
  EXPECT_FALSE(flag_value(argv, "--cuda-graph-max-bs-decode"));
}

TEST_F(Supervise, ACudaOomOnANewerSglangStepsDownWithItsPhaseSplitGraphFlag) {
  const auto argv = cuda_oom_and_back(host(), "newsglang", "sglang",
                                      release_venv(host(), "0.5.16", "0.18.0"), 31122);
  EXPECT_EQ(flag_value(argv, "--mem-fraction-static"), "0.9");
  EXPECT_EQ(flag_value(argv, "--cuda-graph-max-bs-decode"), "80");
  EXPECT_FALSE(flag_value(argv, "--cuda-graph-max-bs"));
}

// vLLM before 0.18.0 has no --shutdown-timeout: the unit leaves it out, and the restart after
// the OOM still starts; 0.18.0 gets it, and both get the lower --gpu-memory-utilization.
TEST_F(Supervise, ACudaOomOnAnOlderAndANewerVllmStepsDownWithTheFlagsEachHas) {
  const auto old_argv =
      cuda_oom_and_back(host(), "oldvllm", "vllm", release_venv(host(), "0.5.6", "0.10.2"), 31123);
  EXPECT_EQ(flag_value(old_argv, "--gpu-memory-utilization"), "0.87");
  EXPECT_FALSE(flag_value(old_argv, "--shutdown-timeout"));
  const auto new_argv =
      cuda_oom_and_back(host(), "newvllm", "vllm", release_venv(host(), "0.5.6", "0.18.0"), 31124);
  EXPECT_EQ(flag_value(new_argv, "--gpu-memory-utilization"), "0.87");
  EXPECT_EQ(flag_value(new_argv, "--shutdown-timeout"), "30");
}

TEST_F(Supervise, ACrashLoopStopsAtItsBudgetUntilRestarted) {
  write_profile("loop", 31103, kRestart + "budget = 3\n",
                "MOCK_SGLANG_CRASH_AFTER = \"1\"\nMOCK_SGLANG_CRASH_EXIT = \"3\"\n");
  set_mode("loop", "crash");
  gpulaunch("up loop --runtime --force");
  nlohmann::json events;
  ASSERT_TRUE(eventually([&] { return has_event(events = events_of("loop"), "crash-loop"); }, 90s))
      << events.dump(2);
  int crashes = 0;
  for (const auto& event : events) crashes += event["class"] == "crash";
  EXPECT_EQ(crashes, 3) << events.dump(2);
  auto status = status_of("loop");
  EXPECT_EQ(status["state"], "failed") << status.dump(2);
  EXPECT_EQ(status["consecutive_failures"], 3);
  const int restarts = status["restarts"];
  std::this_thread::sleep_for(4s);  // it stays down
  status = status_of("loop");
  EXPECT_EQ(status["restarts"], restarts);
  EXPECT_EQ(status["state"], "failed");
  auto logs = gpulaunch("logs loop -n 100");
  EXPECT_NE(logs.out.find("crash loop: 3 failures in a row (budget 3)"), std::string::npos)
      << logs.out;
  // The documented remedy.
  set_mode("loop", "normal");
  auto restart = gpulaunch("restart loop");
  EXPECT_EQ(restart.exit_code, 0) << restart.out;
  EXPECT_EQ(status_of("loop")["state"], "active");
  EXPECT_TRUE(has_event(events_of("loop"), "operator-reset"));
  gpulaunch("down loop --runtime --purge");
}

// Issue 44: the budget counts only starts that fail to serve. An engine that served past
// restart.probation before each death is restarted every time, after the backoff, and once the
// failures in a row reach the budget each death says loudly that it keeps dying.
TEST_F(Supervise, AnEngineThatDiesAfterServingIsNeverGivenUpOn) {
  write_profile("served", 31109, kRestart + "budget = 2\nprobation = \"1s\"\n",
                "MOCK_SGLANG_CRASH_AFTER = \"6\"\nMOCK_SGLANG_CRASH_EXIT = \"3\"\n");
  set_mode("served", "crash");
  gpulaunch("up served --runtime --force");
  nlohmann::json events;
  auto crashes = [&] {
    int count = 0;
    for (const auto& event : events = events_of("served")) count += event["class"] == "crash";
    return count;
  };
  ASSERT_TRUE(eventually([&] { return crashes() >= 3; }, 90s)) << events.dump(2);
  for (const auto& event : events) {
    if (event["class"] != "crash") continue;
    const std::string action = event["action"];
    EXPECT_NE(action.find("(after serving "), std::string::npos) << action;
    EXPECT_NE(action.find("not counted toward the crash-loop budget"), std::string::npos) << action;
  }
  EXPECT_FALSE(has_event(events, "crash-loop")) << events.dump(2);
  // Restarted after the third as after the first: never given up on.
  auto status = status_of("served");
  EXPECT_NE(status["state"], "failed") << status.dump(2);
  EXPECT_EQ(status["failed_starts"], 0) << status.dump(2);
  EXPECT_GE(status["consecutive_failures"], 3) << status.dump(2);
  EXPECT_GE(status["deaths_after_serving"], 3) << status.dump(2);
  // The last death's "after serving" stays in `status`, also once the engine serves again.
  const std::string shown = status.value("last_event", "") + status.value("last_stop", "");
  EXPECT_NE(shown.find("(after serving "), std::string::npos) << status.dump(2);
  EXPECT_NE(gpulaunch("logs served -n 200").out.find("keeps dying: "), std::string::npos);
  gpulaunch("down served --runtime --purge");
}

TEST_F(Supervise, AConfigurationErrorIsNotRetried) {
  std::ofstream(host().work() / "profiles/badflag.toml")
      << "[engine]\nkind = \"sglang\"\nvenv = \"" << (host().work() / "venv").string()
      << "\"\nargs = [\"--no-such-flag\"]\n[model]\npath = \"/models/mock\"\n[server]\nport = "
         "31104\n"
      << kRestart << "\n[env]\nMOCK_SGLANG_LOAD_SECONDS = \"1\"\n";
  auto up = gpulaunch("up badflag --runtime --force");
  EXPECT_NE(up.exit_code, 0) << up.out;
  nlohmann::json events;
  ASSERT_TRUE(eventually([&] { return has_event(events = events_of("badflag"), "config-error"); }))
      << events.dump(2);
  EXPECT_NE(event_of(events, "config-error")["evidence"].get<std::string>().find(
                "unrecognized arguments: --no-such-flag"),
            std::string::npos)
      << events.dump(2);
  std::this_thread::sleep_for(4s);
  auto status = status_of("badflag");
  EXPECT_EQ(status["restarts"], 0) << status.dump(2);
  EXPECT_EQ(status["state"], "failed");
  EXPECT_EQ(status["consecutive_failures"], 0);
  gpulaunch("down badflag --runtime --purge");
}

// Forgiveness is root's, at a stop: record-exit reads from systemd how long the invocation served
// (ActiveEnterTimestamp on) and, past restart.stable_after, steps up before it records the stop.
TEST_F(Supervise, TheLadderStepsBackUpAfterTheStablePeriod) {
  write_profile("ladder", 31105, kRestart + "stable_after = \"3s\"\n");
  set_mode("ladder", "cuda-oom");
  gpulaunch("up ladder --runtime --force");
  set_mode("ladder", "normal");
  // The first `status` that shows the restart serving, and when it was read (the private
  // systemd's clock is this machine's).
  const auto now_usec = [] {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  nlohmann::json status;
  int64_t read_from_usec = 0;
  int64_t read_until_usec = 0;
  ASSERT_TRUE(eventually([&] {
    read_from_usec = now_usec();
    status = status_of("ladder");
    read_until_usec = now_usec();
    return status.value("restarts", 0) >= 1 && status.value("state", "") == "active";
  })) << status.dump(2);
  EXPECT_EQ(status["step_down"]["gpu_memory_level"], 1) << status.dump(2);
  // Nothing is forgiven while it serves, and status says when it will be: it counts the serving
  // from systemd's ActiveEnterTimestamp (`since_usec`) to its own read, so a status read within
  // stable_after (3s) of the start says "at a stop after", a later one "at the next stop".
  // On a loaded machine even the first read can come past 3s.
  EXPECT_FALSE(has_event(events_of("ladder"), "stable"));
  const int64_t since_usec = status.value("since_usec", int64_t{0});
  const std::string outlook = status.value("forgiveness", "");
  const bool not_yet = outlook.find("forgiven one level at a stop after") != std::string::npos;
  const bool due = outlook.find("forgiven one level at the next stop") != std::string::npos;
  if (read_until_usec - since_usec < 3'000'000)
    EXPECT_TRUE(not_yet) << status.dump(2);
  else if (read_from_usec - since_usec >= 3'000'000)
    EXPECT_TRUE(due) << status.dump(2);
  else
    EXPECT_TRUE(not_yet || due) << status.dump(2);
  EXPECT_EQ(flag_value(recorded_argv("ladder"), "--mem-fraction-static"), "0.9");
  // Once it has served stable_after, status says it is forgiven at the next stop.
  ASSERT_TRUE(eventually([&] {
    status = status_of("ladder");
    return status.value("forgiveness", "").find("forgiven one level at the next stop") !=
           std::string::npos;
  })) << status.dump(2);
  EXPECT_EQ(status["step_down"]["gpu_memory_level"], 1) << status.dump(2);
  // The stop (here the operator's restart) is when it is forgiven; the next start uses the
  // profile's own settings again.
  ASSERT_EQ(gpulaunch("restart ladder").exit_code, 0);
  auto events = events_of("ladder");
  ASSERT_TRUE(has_event(events, "stable")) << events.dump(2);
  EXPECT_TRUE(has_event(events, "cuda-oom"));
  EXPECT_NE(
      event_of(events, "stable")["action"].get<std::string>().find("step up to GPU memory level 0"),
      std::string::npos)
      << events.dump(2);
  status = status_of("ladder");
  EXPECT_EQ(status["step_down"]["gpu_memory_level"], 0) << status.dump(2);
  EXPECT_EQ(status["consecutive_failures"], 0);
  EXPECT_EQ(flag_value(recorded_argv("ladder"), "--mem-fraction-static"), std::nullopt);
  gpulaunch("down ladder --runtime --purge");
}

// The engine as a service user: its HOME is its own directory, the history root's, and history
// keeps working across failures and a stable period. record-exit runs through `env -i` with
// systemd's ${SERVICE_RESULT} & co. expanded in its argv: the stops are still classified.
TEST_F(Supervise, WithAServiceUserHistoryKeepsWorkingAcrossFailuresAndStablePeriods) {
  auto added = host().systemd().exec(
      {"useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "glservice"});
  ASSERT_EQ(added.exit_code, 0) << added.out;
  write_profile("asuser", 31107,
                "[service]\nuser = \"glservice\"\n" + kRestart + "stable_after = \"3s\"\n");
  set_mode("asuser", "cuda-oom");
  gpulaunch("up asuser --runtime --force");
  nlohmann::json events;
  auto oom_count = [&] {
    events = events_of("asuser");
    int count = 0;
    for (const auto& event : events) count += event["class"] == "cuda-oom";
    return count;
  };
  // Two failures, then it serves (the third start waits a 2 s backoff first).
  ASSERT_TRUE(eventually([&] { return oom_count() >= 2; }, 90s)) << events.dump(2);
  set_mode("asuser", "normal");
  ASSERT_TRUE(eventually([&] { return status_of("asuser").value("state", "") == "active"; }, 90s))
      << status_of("asuser").dump(2) << gpulaunch("logs asuser -n 100").out;
  EXPECT_EQ(oom_count(), 2) << events.dump(2);
  EXPECT_EQ(flag_value(recorded_argv("asuser"), "--mem-fraction-static"), "0.85");
  auto status = status_of("asuser");
  EXPECT_EQ(status["consecutive_failures"], 2) << status.dump(2);
  EXPECT_EQ(status["step_down"]["gpu_memory_level"], 2);

  // The engine's directory is the service user's; the history's is root's alone.
  auto owners = host().systemd().exec(
      {"stat", "-c", "%U %a %n", "/var/lib/gpulaunch/asuser", "/var/lib/gpulaunch/asuser/engine",
       "/var/lib/gpulaunch/asuser/events.jsonl", "/var/lib/gpulaunch/asuser/supervisor.json"});
  EXPECT_EQ(owners.out,
            "root 755 /var/lib/gpulaunch/asuser\n"
            "glservice 755 /var/lib/gpulaunch/asuser/engine\n"
            "root 644 /var/lib/gpulaunch/asuser/events.jsonl\n"
            "root 644 /var/lib/gpulaunch/asuser/supervisor.json\n");

  // Past stable_after, a clean `down` counts: forgiven and one level up.
  std::this_thread::sleep_for(4s);
  gpulaunch("down asuser --runtime");
  events = events_of("asuser");
  ASSERT_TRUE(has_event(events, "stable")) << events.dump(2);
  EXPECT_EQ(event_of(events, "stable")["action"],
            "forgive 2 failure(s); step up to GPU memory level 1")
      << events.dump(2);
  ASSERT_TRUE(has_event(events, "clean")) << events.dump(2);
  EXPECT_EQ(event_of(events, "clean")["action"], "none (stopped cleanly)");
  status = status_of("asuser");
  EXPECT_EQ(status["consecutive_failures"], 0) << status.dump(2);
  EXPECT_EQ(status["step_down"]["gpu_memory_level"], 1);
  gpulaunch("down asuser --runtime --purge");
}

// A full disk: record-exit cannot record the crash, so it leaves a marker on /run (a tmpfs) and
// the next start stays down with exit 79 and says why, instead of restarting outside the
// crash-loop budget forever. The operator's restart, once there is room, clears it.
TEST_F(Supervise, AStopThatCannotBeRecordedKeepsTheServiceDown) {
  auto sh = [&](const std::string& command) {
    return host().systemd().exec({"sh", "-c", command});
  };
  ASSERT_EQ(sh("mkdir -p /var/lib/gpulaunch/full && "
               "mount -t tmpfs -o size=64k,mode=0755 gl-full /var/lib/gpulaunch/full")
                .exit_code,
            0);
  write_profile("full", 31108, kRestart);
  set_mode("full", "normal");
  ASSERT_EQ(gpulaunch("up full --runtime --force").exit_code, 0);
  sh("dd if=/dev/zero of=/var/lib/gpulaunch/full/filler bs=4k 2>/dev/null; true");
  const int pid = status_of("full").value("main_pid", 0);
  ASSERT_GT(pid, 0);
  sh("kill -SEGV " + std::to_string(pid));
  nlohmann::json status;
  ASSERT_TRUE(eventually([&] {
    status = status_of("full");
    return status.value("state", "") == "failed" && status["unrecorded"].is_string();
  })) << status.dump(2)
      << gpulaunch("logs full -n 60").out;
  EXPECT_NE(status["unrecorded"].get<std::string>().find("No space left on device"),
            std::string::npos)
      << status.dump(2);
  auto logs = gpulaunch("logs full -n 100").out;
  EXPECT_NE(logs.find("history unrecorded: a stop could not be recorded"), std::string::npos)
      << logs;
  const int restarts = status["restarts"];
  std::this_thread::sleep_for(3s);  // it stays down
  EXPECT_EQ(status_of("full")["restarts"], restarts);
  EXPECT_EQ(status_of("full")["state"], "failed");

  sh("rm -f /var/lib/gpulaunch/full/filler");
  auto restart = gpulaunch("restart full");
  EXPECT_EQ(restart.exit_code, 0) << restart.out;
  status = status_of("full");
  EXPECT_EQ(status["state"], "active") << status.dump(2);
  EXPECT_TRUE(status["unrecorded"].is_null()) << status.dump(2);
  gpulaunch("down full --runtime --purge");
  sh("umount /var/lib/gpulaunch/full");
}

// Another process still holds memory on the unit's GPU (the fake NVML, which `run` loads from the
// profile's toolkit, lists it): the start reports it by PID and waits instead of starting into an
// OOM, then starts the engine once the memory is released.
TEST_F(Supervise, AStartWaitsForGpuMemoryHeldByAnotherProcess) {
  const fs::path toolkit = host().work() / "residue-toolkit";
  fs::create_directories(toolkit / "lib64");
  fs::remove(toolkit / "lib64/libnvidia-ml.so.1");
  fs::create_symlink(fs::path(GL_FAKE_NVML_DIR) / "libnvidia-ml.so.1",
                     toolkit / "lib64/libnvidia-ml.so.1");
  const fs::path node = host().work() / "residue-nvml.txt";
  const std::string gpu =
      "driver 580.95.05\ncuda 13000\ngpu 9 0 143771 GPU-residue-0 NVIDIA H200\n";
  std::ofstream(node) << gpu << "process 0 4242 2048\n";
  write_profile("residue", 31106, "[toolkit]\ncuda_home = \"" + toolkit.string() + "\"\n",
                "GPULAUNCH_FAKE_NVML = \"" + node.string() + "\"\n");
  set_mode("residue", "normal");

  // While `up` waits, release the memory once the wait shows in the unit's status.
  std::string waiting_status;
  auto releaser = std::async(std::launch::async, [&] {
    const bool seen = eventually(
        [&] {
          waiting_status = status_of("residue").value("phase", "");
          return waiting_status.find("to release GPU memory") != std::string::npos;
        },
        90s);
    std::ofstream(node) << gpu;
    return seen;
  });
  auto up = gpulaunch("up residue --runtime --force");
  ASSERT_TRUE(releaser.get()) << "status never said it waits: '" << waiting_status << "'";
  EXPECT_EQ(waiting_status, "waiting for 1 process(es) to release GPU memory");
  EXPECT_EQ(up.exit_code, 0) << up.out;
  auto logs = gpulaunch("logs residue -n 200").out;
  EXPECT_NE(logs.find("GPU residue: pid 4242 ("), std::string::npos) << logs;
  EXPECT_NE(logs.find(") holds 2048 MiB on GPU 0"), std::string::npos) << logs;
  EXPECT_NE(logs.find("GPU memory released; starting the engine"), std::string::npos) << logs;
  EXPECT_EQ(status_of("residue")["state"], "active");
  gpulaunch("down residue --runtime --purge");
}

// Liveness (server.liveness): an engine that answers /health but no longer generates. Small
// intervals so that each test takes well under a minute; the restart delay is kRestart's 1 s.
constexpr int kLivenessInterval = 5;  // seconds: the smallest the profile allows
constexpr int kLivenessTimeout = 10;  // likewise
constexpr int kRestartDelay = 1;
const std::string kLiveness = "liveness_interval = \"" + std::to_string(kLivenessInterval) +
                              "s\"\nliveness_timeout = \"" + std::to_string(kLivenessTimeout) +
                              "s\"\n";

// A vLLM profile for the mock vLLM (the host's write_profile writes SGLang ones).
void write_vllm_profile(MockEngineHost& host, const std::string& name, int port,
                        const std::string& server, const std::string& env) {
  std::ofstream(host.work() / "profiles" / (name + ".toml"))
      << "[engine]\nkind = \"vllm\"\nvenv = \"" << (host.work() / "venv").string() << "\"\n"
      << "[model]\npath = \"/models/mock\"\n[server]\nport = " << port << "\n"
      << server << kRestart << "[env]\nMOCK_VLLM_LOAD_SECONDS = \"1\"\n"
      << env;
}

std::string wedge_file(MockEngineHost& host, const std::string& name) {
  return (host.work() / (name + ".wedge")).string();
}

// The engine wedges (the mock's trigger file) while serving: `run` must see no forward progress,
// dump every Python thread into the journal and exit 81, record-exit classify it `stalled` with
// the journal cursor of the stall line, and systemd restart it, all within interval + timeout +
// the restart delay (and a margin: the dump's grace, the kill and record-exit's journal reads).
void expect_a_wedge_restarted_as_stalled(MockEngineHost& host, const std::string& name) {
  const std::string unit = "gpulaunch-" + name + ".service";
  fs::remove(wedge_file(host, name));
  auto up = host.gpulaunch("up " + name + " --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  ASSERT_EQ(host.status_of(name).value("restarts", -1), 0);
  std::this_thread::sleep_for(std::chrono::seconds(kLivenessInterval + 1));  // probed healthy once
  const auto wedged_at = std::chrono::steady_clock::now();
  std::ofstream(wedge_file(host, name)) << "wedge\n";
  nlohmann::json events;
  ASSERT_TRUE(MockEngineHost::eventually(
      [&] { return !event_of(events = host.events_of(name), "stalled").empty(); }, 60s))
      << events.dump(2) << "\n"
      << host.gpulaunch("logs " + name + " -n 80").out;
  fs::remove(wedge_file(host, name));  // the restart serves
  ASSERT_TRUE(MockEngineHost::eventually([&] {
    auto s = host.status_of(name);
    return s.value("restarts", 0) >= 1;
  })) << host.status_of(name).dump(2);
  const auto restarted_after = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - wedged_at);
  const auto bound = std::chrono::seconds(kLivenessInterval + kLivenessTimeout + kRestartDelay);
  // The margin: the grace `run` gives every engine process to write its stacks before SIGKILL,
  // then record-exit's journal read, systemd's restart job and this loop's polling.
  const auto margin = gl::kStallDumpGrace + 3s;
  std::printf("%s: wedge -> restart %lld ms (bound %lld s + %lld s margin)\n", name.c_str(),
              static_cast<long long>(restarted_after.count()),
              static_cast<long long>(bound.count()), static_cast<long long>(margin.count()));
  EXPECT_LE(restarted_after, bound + margin);

  const auto event = event_of(events, "stalled");
  std::printf("stalled evidence: %s\naction: %s\n", event["evidence"].get<std::string>().c_str(),
              event["action"].get<std::string>().c_str());
  EXPECT_NE(event["evidence"].get<std::string>().find("gpulaunch: stalled: no forward progress"),
            std::string::npos)
      << event.dump(2);
  EXPECT_EQ(event["action"], "restart after 1s") << event.dump(2);
  ASSERT_TRUE(event["stall"].is_object()) << event.dump(2);
  ASSERT_TRUE(event["journal_cursor"].is_string()) << event.dump(2);
  const std::string cursor = event["journal_cursor"];
  EXPECT_EQ(event["thread_dump"], "journalctl -u " + unit + " --cursor='" + cursor + "'");
  // The journal from the stall line on holds faulthandler's dump of every Python thread.
  auto dump = host.systemd().exec(
      {"journalctl", "-u", unit, "--cursor=" + cursor, "-o", "cat", "-n", "all", "--no-pager"});
  EXPECT_EQ(dump.out.rfind("gpulaunch: stalled: ", 0), 0u) << dump.out.substr(0, 2000);
  EXPECT_NE(dump.out.find("Fatal Python error: Aborted"), std::string::npos) << dump.out;
  EXPECT_NE(dump.out.find("(most recent call first):"), std::string::npos) << dump.out;
  EXPECT_NE(dump.out.find("Thread 0x"), std::string::npos) << dump.out;
  EXPECT_NE(dump.out.find("in wait_for_gpu_kernel"), std::string::npos) << dump.out;

  // Once the restart is ready, record-start's `started` event follows the stall's: `status`
  // still shows the stall and its thread dump.
  nlohmann::json status;
  ASSERT_TRUE(MockEngineHost::eventually([&] {
    status = host.status_of(name);
    return status.value("last_event", "").starts_with("started: ");
  })) << status.dump(2);
  EXPECT_EQ(status["last_stop"], "stalled: restart after 1s") << status.dump(2);
  EXPECT_EQ(status["last_class"], "stalled") << status.dump(2);
  EXPECT_EQ(status["consecutive_failures"], 1) << status.dump(2);
  EXPECT_EQ(status["thread_dump"], event["thread_dump"]) << status.dump(2);
  auto text = host.gpulaunch("events " + name).out;
  EXPECT_NE(text.find("threads:  journalctl -u " + unit + " --cursor='"), std::string::npos)
      << text;
  host.gpulaunch("down " + name + " --runtime --purge");
}

// vLLM: /health is a flag read, so only the token counter (in flight, not moving) or the
// /v1/completions probe can tell.
TEST_F(Supervise, AWedgedVllmIsRestartedAsStalledWithItsThreadDump) {
  write_vllm_profile(host(), "wedgevllm", 31111, "liveness = \"metrics\"\n" + kLiveness,
                     "MOCK_WEDGE_FILE = \"" + wedge_file(host(), "wedgevllm") + "\"\n");
  expect_a_wedge_restarted_as_stalled(host(), "wedgevllm");
}

// SGLang: the generation probe (/health_generate or /generate) hangs while /health answers.
TEST_F(Supervise, AWedgedSglangIsRestartedAsStalledWithItsThreadDump) {
  write_profile("wedgesglang", 31112, "liveness = \"generate\"\n" + kLiveness + kRestart,
                "MOCK_WEDGE_FILE = \"" + wedge_file(host(), "wedgesglang") + "\"\n");
  set_mode("wedgesglang", "normal");
  expect_a_wedge_restarted_as_stalled(host(), "wedgesglang");
}

// Busy, not wedged: every request takes longer than liveness_timeout while the token counter
// keeps moving. It is never restarted.
TEST_F(Supervise, ASlowButProgressingEngineIsNotRestarted) {
  // vLLM's default, "generate": metrics read every interval, the probe only while tokens stand.
  write_vllm_profile(host(), "slowvllm", 31113, kLiveness,
                     "MOCK_SLOW_SECONDS = \"" + std::to_string(kLivenessTimeout + 3) +
                         "\"\nMOCK_BACKGROUND_REQUESTS = \"2\"\n");
  auto up = gpulaunch("up slowvllm --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  std::this_thread::sleep_for(std::chrono::seconds(2 * (kLivenessInterval + kLivenessTimeout)));
  auto status = status_of("slowvllm");
  EXPECT_EQ(status["state"], "active") << status.dump(2);
  EXPECT_EQ(status["restarts"], 0) << status.dump(2);
  EXPECT_FALSE(has_event(events_of("slowvllm"), "stalled"))
      << events_of("slowvllm").dump(2) << gpulaunch("logs slowvllm -n 60").out;
  gpulaunch("down slowvllm --runtime --purge");
}

// server.ready = "generate": /health answers at once, but the first generation only works
// MOCK_GENERATE_FAILS_FOR seconds later; READY=1 (the unit active, `up` returning) waits for it.
TEST_F(Supervise, ReadyGenerateDelaysReadyUntilAGenerationWorks) {
  constexpr int kFailsFor = 6;
  const fs::path ready_file = gl::state_paths::engine_home("lateready") / "health-200-at";
  write_profile("lateready", 31114, "ready = \"generate\"\n" + kLiveness,
                "MOCK_GENERATE_FAILS_FOR = \"" + std::to_string(kFailsFor) +
                    "\"\nMOCK_SGLANG_READY_FILE = \"" + ready_file.string() + "\"\n");
  set_mode("lateready", "normal");
  auto up = gpulaunch("up lateready --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  auto health_at = host().systemd().exec({"cat", ready_file.string()});
  // ActiveEnterTimestamp in whole seconds since the epoch, whatever the manager's time zone.
  auto active_at = host().systemd().exec(
      {"sh", "-c",
       "date -d \"$(systemctl show -P ActiveEnterTimestamp gpulaunch-lateready.service)\" +%s"});
  ASSERT_FALSE(health_at.out.empty());
  ASSERT_EQ(active_at.exit_code, 0) << active_at.out;
  const double health = std::stod(health_at.out);
  const double active = std::stod(active_at.out);
  std::printf("/health 200 at %.3f, active at %.0f: READY %.1f s after health\n", health, active,
              active - health);
  EXPECT_GE(active - health, kFailsFor - 1.5);
  EXPECT_EQ(status_of("lateready")["state"], "active");
  gpulaunch("down lateready --runtime --purge");
}

}  // namespace
