// SPDX-License-Identifier: Apache-2.0
// A stop drains, on a real systemd 252 booted privately (tests/integration/harness): `down` of the
// mock SGLang with a request in flight lets that request finish (the engine's own SIGTERM drain,
// which `run` forwards and waits for within server.drain_timeout), and an engine that ignores
// SIGTERM is SIGKILLed by `run` once the drain time and its grace are over, before the unit's
// TimeoutStopSec= would have systemd do it.

#include <chrono>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/mock_engine_suite.hpp"
#include "plan/launch_plan.hpp"
#include "util/state_paths.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::ExecResult;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;

class Drain : public MockEngineSuite<Drain> {
 public:
  static MockEngineHost* new_host() {
    return new MockEngineHost(fs::path(GL_BINARY_DIR) / "drain-work", kGpulaunch, GL_SOURCE_DIR);
  }

 protected:
  static ExecResult in_host(const std::string& command) {
    return host().systemd().exec({"sh", "-c", command + " 2>&1"});
  }
  // What the mock's SIGTERM handler saw and did (mock_scheduler's MOCK_DRAIN_REPORT, by default
  // in its HOME, the engine's own directory).
  static nlohmann::json drain_report(const std::string& name) {
    auto text = host().systemd().exec(
        {"cat", (gl::state_paths::engine_home(name) / "mock-drain.json").string()});
    return nlohmann::json::parse(text.out, nullptr, false);
  }
};

// Python, run inside the harness: one generation request in flight, then `gpulaunch down` one
// second into it; prints the request's HTTP status, when it ended and how long `down` took (seconds
// from `down`'s start), and `down`'s exit status, as JSON.
std::string request_then_down(const std::string& gpulaunch, int port, const std::string& name) {
  return "import json, subprocess, threading, time, urllib.request, urllib.error\n"
         "result = {}\n"
         "def ask():\n"
         "    body = json.dumps({'text': 'drain', 'sampling_params': {'max_new_tokens': 1}})\n"
         "    request = urllib.request.Request('http://127.0.0.1:" +
         std::to_string(port) +
         "/generate', data=body.encode())\n"
         "    try:\n"
         "        with urllib.request.urlopen(request, timeout=60) as answer:\n"
         "            result['status'] = answer.status\n"
         "    except urllib.error.HTTPError as error:\n"
         "        result['status'] = error.code\n"
         "    except Exception as error:\n"
         "        result['status'] = repr(error)\n"
         "    result['request_ended'] = time.monotonic() - started[0]\n"
         "started = [time.monotonic()]\n"
         "client = threading.Thread(target=ask)\n"
         "client.start()\n"
         "time.sleep(1)\n"
         "started[0] = time.monotonic()\n"
         "down = subprocess.run(" +
         nlohmann::json(
             std::vector<std::string>{gpulaunch, "-P", "PROFILES", "down", name, "--runtime"})
             .dump() +
         ", capture_output=True, text=True)\n"
         "result['down_seconds'] = time.monotonic() - started[0]\n"
         "result['down_exit'] = down.returncode\n"
         "result['down_out'] = down.stdout + down.stderr\n"
         "client.join(60)\n"
         "print(json.dumps(result))\n";
}

// The mock takes 4 s for a generation (MOCK_SLOW_SECONDS); `down` comes 1 s into it. SIGTERM
// reaches `run`, which forwards it: the mock refuses new work, finishes the request and exits 0
// (SGLang's sigterm_watchdog), and only then does the stop job end.
TEST_F(Drain, DownLetsTheRequestInFlightFinish) {
  const int port = 31301;
  host().write_profile("drained", port, "drain_timeout = \"20s\"\n[restart]\npolicy = \"no\"\n",
                       "MOCK_SLOW_SECONDS = \"4\"\nMOCK_DRAIN_POLL_SECONDS = \"0.2\"\n");
  auto up = gpulaunch("up drained --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  std::string script = request_then_down(kGpulaunch, port, "drained");
  script.replace(script.find("PROFILES"), 8, (host().work() / "profiles").string());
  auto ran = host().systemd().exec({"/usr/bin/python3", "-c", script});
  auto result = nlohmann::json::parse(ran.out, nullptr, false);
  ASSERT_TRUE(result.is_object()) << ran.out;
  EXPECT_EQ(result["status"], 200) << result.dump(2);
  EXPECT_EQ(result["down_exit"], 0) << result.dump(2);
  // The request needed about 3 s more when `down` began; `down` waited for it.
  EXPECT_GE(result["down_seconds"].get<double>(), 2.0) << result.dump(2);
  EXPECT_LE(result["request_ended"].get<double>(), result["down_seconds"].get<double>())
      << result.dump(2);
  const auto report = drain_report("drained");
  ASSERT_TRUE(report.is_object()) << gpulaunch("logs drained -n 60").out;
  EXPECT_EQ(report["mode"], "drain") << report.dump();
  EXPECT_EQ(report["signal"], 15) << report.dump();
  EXPECT_GE(report["finished"].get<int>(), 1) << report.dump();
  EXPECT_EQ(report["aborted"], 0) << report.dump();
  const auto logs = gpulaunch("logs drained -n 80").out;
  EXPECT_NE(logs.find("stopping the engine: in-flight requests get 20s to finish"),
            std::string::npos)
      << logs;
  // SGLang's own line as its drain logs it (tokenizer_manager.py sigterm_watchdog).
  EXPECT_NE(logs.find("Gracefully exiting... Remaining number of requests 0."), std::string::npos)
      << logs;
  EXPECT_EQ(logs.find("did not stop within"), std::string::npos) << logs;
  gpulaunch("down drained --runtime --purge");
}

// An engine that ignores SIGTERM: `run` SIGKILLs its process group once drain_timeout (1 s) and
// kStopKillGrace have passed, well before TimeoutStopSec=, and the stop still completes.
TEST_F(Drain, AnEngineThatIgnoresSigtermIsKilledAfterTheDrainTime) {
  const int port = 31302;
  host().write_profile("stubborn", port, "drain_timeout = \"1s\"\n[restart]\npolicy = \"no\"\n",
                       "MOCK_SIGTERM = \"ignore\"\n");
  auto up = gpulaunch("up stubborn --runtime --force");
  ASSERT_EQ(up.exit_code, 0) << up.out;
  const auto kill_after = gl::Seconds{1} + gl::kStopKillGrace;
  const auto timeout_stop = kill_after + gl::kStopTimeoutMargin;
  EXPECT_EQ(in_host("systemctl show -p TimeoutStopUSec --value gpulaunch-stubborn.service").out,
            std::to_string(timeout_stop.count()) + "s\n");
  const auto started = std::chrono::steady_clock::now();
  auto down = gpulaunch("down stubborn --runtime");
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(down.exit_code, 0) << down.out;
  EXPECT_GE(took, kill_after - std::chrono::seconds(1));
  EXPECT_LT(took, timeout_stop - std::chrono::seconds(5));
  EXPECT_EQ(drain_report("stubborn")["mode"], "ignore");
  const auto logs = gpulaunch("logs stubborn -n 80").out;
  EXPECT_NE(logs.find("the engine did not stop within " + std::to_string(kill_after.count()) +
                      "s of SIGTERM; killing it"),
            std::string::npos)
      << logs;
  // Nothing of the engine is left: its port is free again.
  EXPECT_NE(in_host("/usr/bin/python3 -c \"import socket; socket.create_connection(('127.0.0.1', " +
                    std::to_string(port) + "), timeout=2)\"")
                .exit_code,
            0);
  gpulaunch("down stubborn --runtime --purge");
}

}  // namespace
