// SPDX-License-Identifier: Apache-2.0
// Liveness (server.liveness) under load, for every engine, on the private systemd
// (tests/integration/harness): an engine whose slots are all busy with long generations, with
// more requests queued than it has slots, keeps its service for three liveness timeouts; an
// engine that wedges is recorded `stalled` and restarted within interval + timeout + the
// restart delay. The load comes from this test: bounded requests (a fixed token count, curl's
// --max-time) to the engine's loopback port.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/mock_engine_suite.hpp"
#include "plan/launch_plan.hpp"

namespace {

namespace fs = std::filesystem;
using gpulaunch::testing::event_of;
using gpulaunch::testing::MockEngineHost;
using gpulaunch::testing::MockEngineSuite;
using namespace std::chrono_literals;

const std::string kGpulaunch = GL_GPULAUNCH_BINARY;

// The smallest interval and timeout a profile takes (profile/schema); none of these engines reads
// its metrics with a refresh floor here (SGLang's 30 s applies only with its metrics on).
constexpr int kInterval = 5;
constexpr int kTimeout = 10;
constexpr int kRestartDelay = 1;
const std::string kServer = "liveness = \"generate\"\nliveness_interval = \"" +
                            std::to_string(kInterval) + "s\"\nliveness_timeout = \"" +
                            std::to_string(kTimeout) + "s\"\n";
const std::string kRestart = "[restart]\ndelay = \"" + std::to_string(kRestartDelay) + "s\"\n";
// One mock step makes one token (mock_scheduler's MOCK_STEP_SECONDS default, 0.05 s): a long
// generation of 300 tokens holds its slot 15 s, longer than the liveness timeout.
constexpr int kLongTokens = 300;
constexpr int kSlots = 2;
constexpr int kClients = kSlots + 2;  // two more than slots: two requests always queued

// One engine of the suite: its kind, port, what it is started with and how a client asks it.
struct Engine {
  std::string name;
  std::string kind;  // the profile's engine.kind
  int port;
  std::vector<std::string> args;  // engine.args: the slots where the engine has them
  std::string load_variable;      // the mock's load-time variable
  std::string path;               // the generation endpoint a client posts to
  std::string token_field;        // its token count
  bool names_model;               // whether the body carries `model`
};

std::string body(const Engine& engine, int tokens) {
  nlohmann::json json;
  if (engine.names_model) json["model"] = "/models/mock";
  json["prompt"] = "hi";
  json[engine.token_field] = tokens;
  return json.dump();
}

// The HTTP status of one bounded request (0: none within `max_seconds`).
int post(const Engine& engine, int tokens, int max_seconds) {
  const std::string command = "curl -s -o /dev/null -w '%{http_code}' --max-time " +
                              std::to_string(max_seconds) +
                              " -H 'Content-Type: application/json' -d '" + body(engine, tokens) +
                              "' http://127.0.0.1:" + std::to_string(engine.port) + engine.path;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return 0;
  char code[8] = {};
  const size_t read = std::fread(code, 1, sizeof(code) - 1, pipe);
  pclose(pipe);
  return read ? std::atoi(code) : 0;
}

std::string get(int port, const std::string& path) {
  const std::string command =
      "curl -s --max-time 5 http://127.0.0.1:" + std::to_string(port) + path;
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  pclose(pipe);
  return out;
}

// The first sample of `metric` in a Prometheus exposition, or -1.
double metric_value(const std::string& text, const std::string& metric) {
  for (size_t at = text.find(metric); at != std::string::npos; at = text.find(metric, at + 1)) {
    if (at > 0 && text[at - 1] != '\n') continue;
    const size_t space = text.find(' ', at);
    if (space == std::string::npos) return -1;
    return std::atof(text.c_str() + space + 1);
  }
  return -1;
}

// `clients` threads each sending long requests, one after another, until stopped.
class Load {
 public:
  Load(const Engine& engine, int clients, int tokens) {
    for (int i = 0; i < clients; ++i)
      threads_.emplace_back([this, engine, tokens] {
        while (!stop_) {
          const int code = post(engine, tokens, 90);
          (code == 200 ? answered_ : failed_)++;
        }
      });
  }
  ~Load() { stop(); }
  // No new requests; those in flight finish.
  void request_stop() { stop_ = true; }
  void stop() {
    request_stop();
    for (auto& thread : threads_)
      if (thread.joinable()) thread.join();
  }
  int answered() const { return answered_; }
  int failed() const { return failed_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> answered_{0};
  std::atomic<int> failed_{0};
  std::vector<std::thread> threads_;
};

class LivenessLoad : public MockEngineSuite<LivenessLoad> {
 public:
  static MockEngineHost* new_host() {
    return new MockEngineHost(fs::path(GL_BINARY_DIR) / "liveness-load-work", kGpulaunch,
                              GL_SOURCE_DIR);
  }

 protected:
  static std::string wedge_file(const std::string& name) {
    return (host().work() / (name + ".wedge")).string();
  }

  static void write_profile(const Engine& engine, const std::string& env = "") {
    std::string args;
    for (const auto& arg : engine.args) args += (args.empty() ? "\"" : ", \"") + arg + "\"";
    std::ofstream(host().work() / "profiles" / (engine.name + ".toml"))
        << "[engine]\nkind = \"" << engine.kind
        << "\"\n"
        // llama-server is a program (mock/install.sh puts it in the venv's bin); the rest are
        // Python packages run from the venv.
        << (engine.kind == "llamacpp"
                ? "executable = \"" + (host().work() / "venv/bin/llama-server").string()
                : "venv = \"" + (host().work() / "venv").string())
        << "\"\nargs = [" << args << "]\n"
        << "[model]\npath = \"/models/mock\"\n[server]\nport = " << engine.port << "\n"
        << kServer << kRestart << "[env]\n"
        << engine.load_variable << " = \"1\"\nMOCK_WEDGE_FILE = \"" << wedge_file(engine.name)
        << "\"\n"
        << env;
  }

  // A `run` option's value in seconds as the installed unit's ExecStart passes it
  // ("--liveness-interval=5"), or -1.
  static int unit_seconds(const std::string& name, std::string_view option) {
    const auto unit =
        host().systemd().exec({"cat", "/run/systemd/system/gpulaunch-" + name + ".service"});
    const std::string key = "\"" + std::string(option) + "=";
    const size_t at = unit.out.find(key);
    return at == std::string::npos ? -1 : std::atoi(unit.out.c_str() + at + key.size());
  }

  static nlohmann::json stalls(const std::string& name) {
    nlohmann::json found = nlohmann::json::array();
    for (const auto& event : events_of(name))
      if (event["class"] == "stalled") found.push_back(event);
    return found;
  }

  static std::string diagnosis(const std::string& name) {
    return status_of(name).dump(2) + "\n" + events_of(name).dump(2) + "\n" +
           gpulaunch("logs " + name + " -n 60").out;
  }
};

// Every engine takes kSlots requests at a time and queues the rest: SGLang's
// --max-running-requests, vLLM's --max-num-seqs, llama.cpp's --parallel, trtllm-serve's
// --max_batch_size.
Engine sglang(const std::string& name, int port) {
  return {name,
          "sglang",
          port,
          {"--max-running-requests", std::to_string(kSlots)},
          "MOCK_SGLANG_LOAD_SECONDS",
          "/v1/completions",
          "max_tokens",
          true};
}
Engine vllm(const std::string& name, int port) {
  return {name,
          "vllm",
          port,
          {"--max-num-seqs", std::to_string(kSlots)},
          "MOCK_VLLM_LOAD_SECONDS",
          "/v1/completions",
          "max_tokens",
          true};
}
Engine llamacpp(const std::string& name, int port) {
  return {name,
          "llamacpp",
          port,
          {"--parallel", std::to_string(kSlots)},
          "MOCK_LLAMACPP_LOAD_SECONDS",
          "/completion",
          "n_predict",
          false};
}
Engine trtllm(const std::string& name, int port) {
  return {name,
          "trtllm",
          port,
          {"--max_batch_size", std::to_string(kSlots)},
          "MOCK_TRTLLM_LOAD_SECONDS",
          "/v1/completions",
          "max_tokens",
          true};
}

// Every engine saturated with long generations for three timeouts: none is restarted, none has a
// stop in its history, and each still answers a generation. trtllm-serve's probe waits in its
// queue for longer than the timeout; its iteration statistics (the options file gpulaunch
// passes) vouch for it.
TEST_F(LivenessLoad, SaturatedEnginesAreNeverRestarted) {
  struct Case {
    Engine engine;
    int tokens;
  };
  const std::vector<Case> cases = {{sglang("busysglang", 31401), kLongTokens},
                                   {vllm("busyvllm", 31402), kLongTokens},
                                   {llamacpp("busyllama", 31403), kLongTokens},
                                   {trtllm("busytrtllm", 31404), kLongTokens}};
  for (const auto& c : cases) {
    write_profile(c.engine);
    fs::remove(wedge_file(c.engine.name));
    auto up = gpulaunch("up " + c.engine.name + " --runtime --force");
    ASSERT_EQ(up.exit_code, 0) << up.out;
  }
  std::vector<std::unique_ptr<Load>> loads;
  for (const auto& c : cases) loads.push_back(std::make_unique<Load>(c.engine, kClients, c.tokens));
  // Mid-way, the load is what it should be: every slot busy and requests queued beyond them.
  std::this_thread::sleep_for(std::chrono::seconds(kTimeout));
  const std::string llama_metrics = get(31403, "/metrics");
  EXPECT_EQ(metric_value(llama_metrics, "llamacpp:requests_processing"), kSlots) << llama_metrics;
  EXPECT_GE(metric_value(llama_metrics, "llamacpp:requests_deferred"), 1) << llama_metrics;
  const std::string vllm_metrics = get(31402, "/metrics");
  EXPECT_EQ(metric_value(vllm_metrics, "vllm:num_requests_running"), kSlots) << vllm_metrics;
  EXPECT_GE(metric_value(vllm_metrics, "vllm:num_requests_waiting"), 1) << vllm_metrics;
  std::this_thread::sleep_for(std::chrono::seconds(2 * kTimeout));

  // Each still generates: one short request, queued behind the long ones where there are slots.
  for (auto& load : loads) load->request_stop();
  std::map<std::string, std::future<int>> answers;
  for (const auto& c : cases)
    answers[c.engine.name] =
        std::async(std::launch::async, [engine = c.engine] { return post(engine, 1, 60); });
  for (auto& c : cases) {
    EXPECT_EQ(answers[c.engine.name].get(), 200) << c.engine.name;
    auto status = status_of(c.engine.name);
    EXPECT_EQ(status["state"], "active") << diagnosis(c.engine.name);
    EXPECT_EQ(status["restarts"], 0) << diagnosis(c.engine.name);
    // Nothing stopped: the history holds the one start and no stop of any class.
    const auto events = events_of(c.engine.name);
    ASSERT_EQ(events.size(), 1u) << diagnosis(c.engine.name);
    EXPECT_EQ(events[0]["class"], "started") << diagnosis(c.engine.name);
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    loads[i]->stop();
    std::printf("%s: %d long requests answered under load, %d failed\n",
                cases[i].engine.name.c_str(), loads[i]->answered(), loads[i]->failed());
    EXPECT_GT(loads[i]->answered(), 0) << cases[i].engine.name;
    EXPECT_EQ(loads[i]->failed(), 0) << cases[i].engine.name;
  }
  for (const auto& c : cases) gpulaunch("down " + c.engine.name + " --runtime --purge");
}

// Each engine wedged while serving (mock_scheduler's MOCK_WEDGE_FILE: health and metrics answer,
// generation hangs, tokens stop with requests in flight): a `stalled` stop and a restart within
// interval + timeout + the restart delay of the wedge, plus the grace `run` gives the engine to
// write its stacks (kStallDumpGrace) and a slack for this slow shared machine (record-exit's
// journal reads, systemd's restart job, this test's polling).
TEST_F(LivenessLoad, WedgedEnginesAreRestartedAsStalled) {
  const std::vector<Engine> engines = {sglang("wedgesglang", 31411), vllm("wedgevllm", 31412),
                                       llamacpp("wedgellama", 31413), trtllm("wedgetrtllm", 31414)};
  for (const auto& engine : engines) {
    write_profile(engine);
    fs::remove(wedge_file(engine.name));
    auto up = gpulaunch("up " + engine.name + " --runtime --force");
    ASSERT_EQ(up.exit_code, 0) << up.out;
    ASSERT_EQ(status_of(engine.name).value("restarts", -1), 0);
  }
  // The bound from the units' own settings (the plan may raise a timeout to an engine's floor).
  int interval = 0;
  int timeout = 0;
  for (const auto& engine : engines) {
    interval = std::max(interval, unit_seconds(engine.name, gl::kRunLivenessIntervalOption));
    timeout = std::max(timeout, unit_seconds(engine.name, gl::kRunLivenessTimeoutOption));
    EXPECT_EQ(unit_seconds(engine.name, gl::kRunLivenessIntervalOption), kInterval) << engine.name;
    EXPECT_EQ(unit_seconds(engine.name, gl::kRunLivenessTimeoutOption), kTimeout) << engine.name;
  }
  std::this_thread::sleep_for(std::chrono::seconds(interval + 1));  // each probed healthy once
  const auto bound = std::chrono::seconds(interval + timeout + kRestartDelay);
  const auto slack = 5s;
  const auto limit = bound + gl::kStallDumpGrace + slack;
  // Every engine wedged at once; each restart timed from its own wedge.
  std::vector<std::future<std::chrono::milliseconds>> restarts;
  for (const auto& engine : engines)
    restarts.push_back(std::async(std::launch::async, [name = engine.name, limit] {
      const auto wedged_at = std::chrono::steady_clock::now();
      std::ofstream(wedge_file(name)) << "wedge\n";
      const bool stalled =
          eventually([&] { return !stalls(name).empty(); },
                     std::chrono::duration_cast<std::chrono::seconds>(limit) + 30s);
      fs::remove(wedge_file(name));  // the restart serves
      if (!stalled) return std::chrono::milliseconds::max();
      eventually([&] { return status_of(name).value("restarts", 0) >= 1; }, 30s);
      return std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - wedged_at);
    }));
  for (size_t i = 0; i < engines.size(); ++i) {
    const std::string& name = engines[i].name;
    const auto took = restarts[i].get();
    ASSERT_NE(took, std::chrono::milliseconds::max()) << "no stalled stop\n" << diagnosis(name);
    std::printf(
        "%s: wedge -> restart %lld ms (bound %lld s + %lld s dump grace + %lld s slack)\n",
        name.c_str(), static_cast<long long>(took.count()), static_cast<long long>(bound.count()),
        static_cast<long long>(gl::kStallDumpGrace.count()), static_cast<long long>(slack.count()));
    EXPECT_LE(took, limit) << diagnosis(name);
    auto status = status_of(name);
    EXPECT_EQ(status["last_class"], "stalled") << diagnosis(name);
    EXPECT_EQ(status.value("restarts", 0), 1) << diagnosis(name);
    const auto event = event_of(events_of(name), "stalled");
    EXPECT_NE(event.value("evidence", "").find("gpulaunch: stalled: no forward progress"),
              std::string::npos)
        << event.dump(2);
    EXPECT_EQ(event["action"], "restart after " + std::to_string(kRestartDelay) + "s")
        << event.dump(2);
  }
  // The restarted engines serve again.
  for (const auto& engine : engines) {
    EXPECT_TRUE(eventually([&] { return status_of(engine.name).value("state", "") == "active"; }))
        << diagnosis(engine.name);
    EXPECT_EQ(post(engine, 1, 30), 200) << engine.name;
    gpulaunch("down " + engine.name + " --runtime --purge");
  }
}

}  // namespace
