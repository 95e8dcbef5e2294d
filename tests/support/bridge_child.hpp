// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bridge (run/bridge) with a real engine child under /bin/sh, and a Notifier that keeps what
// it sent and when: for the bridge's fast cases (tests/unit/run/bridge_test.cpp) and its cases in
// real time (tests/integration/io/bridge_io_test.cpp).

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "run/bridge.hpp"
#include "systemd/notify.hpp"

namespace gl::test {

class RecordingNotifier : public Notifier {
 public:
  void notify(std::string_view state) override {
    states.emplace_back(state);
    times.push_back(std::chrono::steady_clock::now());
  }
  std::optional<std::chrono::microseconds> watchdog_interval() override { return std::nullopt; }
  std::vector<std::string> states;
  std::vector<std::chrono::steady_clock::time_point> times;
};

struct BridgeRun {
  int exit_status = -1;
  std::vector<std::string> engine_lines;  // without the bridge's own "gpulaunch: " lines
  std::vector<std::string> notifications;
  std::vector<std::chrono::steady_clock::duration> notified_after;  // since the bridge started
  std::string last_line;                                            // whoever printed it
};

// `script` runs under /bin/sh; `timeout` ends it should the bridge stop reading (a wedged engine
// `script` runs under /bin/sh; `timeout` ends it should the bridge stop reading (a wedged engine
// blocks on its full pipe forever), so a regression fails instead of hanging the suite.
inline BridgeRun run_engine(const std::string& script) {
  BridgeOptions options;
  options.health_url = "http://127.0.0.1:1/health";  // nothing answers: the engine just ends
  options.argv = {"/usr/bin/timeout", "20", "/bin/sh", "-c", script};
  RecordingNotifier notifier;
  BridgeRun run;
  const std::function<void(std::string_view)> print = [&run](std::string_view line) {
    if (!line.starts_with("gpulaunch: ")) run.engine_lines.emplace_back(line);
    run.last_line = line;
  };
  const auto started = std::chrono::steady_clock::now();
  run.exit_status = run_bridge(options, notifier, print);
  run.notifications = notifier.states;
  for (auto time : notifier.times) run.notified_after.push_back(time - started);
  return run;
}

}  // namespace gl::test
