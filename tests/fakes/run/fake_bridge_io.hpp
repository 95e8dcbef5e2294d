// SPDX-License-Identifier: Apache-2.0
#pragma once
// run/engine_bridge's I/O on a clock the test moves: the engine is never started, timers fire in
// time order as the clock passes them, HTTP requests wait for the test's answer, and every signal
// and what else the bridge did is kept to be asserted.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "run/engine_bridge.hpp"

namespace gl::testing {

class FakeBridgeIo final : public BridgeIo {
 public:
  struct Request {
    std::string target;
    std::string body;
    std::chrono::milliseconds timeout;
    std::string api_key;
    std::function<void(HttpAnswer)> done;
  };
  struct Signal {
    pid_t pid;
    int signal;
    bool operator==(const Signal&) const = default;
  };

  Clock::time_point now() override { return clock; }
  Result<pid_t> spawn(const std::vector<std::string>& argv) override {
    spawned = argv;
    if (spawn_error) return fail(*spawn_error);
    return pid;
  }
  void send_signal(pid_t target, int signal) override { signals.push_back({target, signal}); }
  void close_output() override { output_closed = true; }
  void arm(BridgeTimer timer, Clock::time_point at) override { timers[timer] = at; }
  void cancel(BridgeTimer timer) override { timers.erase(timer); }
  void http(const HttpUrl&, const std::string& target, const std::string& body,
            std::chrono::milliseconds timeout, const std::string& api_key,
            std::function<void(HttpAnswer)> done) override {
    requests.push_back({target, body, timeout, api_key, std::move(done)});
  }
  std::vector<std::string> resolve(const std::string&, long long) override { return resolved; }
  bool holds_connection(pid_t, const std::vector<std::string>&, std::optional<int>) override {
    return connected;
  }
  void stop() override { stopped = true; }

  // Moves the clock by `by`, firing each timer due on the way at its time, earliest first.
  void advance(std::chrono::milliseconds by, BridgeEvents& events) {
    const auto end = clock + by;
    for (;;) {
      auto due = std::min_element(timers.begin(), timers.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      if (due == timers.end() || due->second > end) break;
      const BridgeTimer timer = due->first;
      clock = std::max(clock, due->second);
      timers.erase(due);
      events.on_timer(timer);
    }
    clock = end;
  }
  // Answers the oldest request still waiting for `target`; false when none waits.
  bool answer(const std::string& target, std::optional<int> status, std::string body = {}) {
    auto it = std::find_if(requests.begin(), requests.end(),
                           [&](const Request& request) { return request.target == target; });
    if (it == requests.end()) return false;
    auto done = std::move(it->done);
    requests.erase(it);
    done(HttpAnswer{status, std::move(body)});
    return true;
  }
  size_t waiting(const std::string& target) const {
    return static_cast<size_t>(
        std::count_if(requests.begin(), requests.end(),
                      [&](const Request& request) { return request.target == target; }));
  }
  bool sent(Signal signal) const {
    return std::find(signals.begin(), signals.end(), signal) != signals.end();
  }

  Clock::time_point clock = Clock::time_point{} + std::chrono::hours(1);
  pid_t pid = 4242;
  std::optional<std::string> spawn_error;
  std::vector<std::string> spawned;
  std::vector<Signal> signals;
  std::map<BridgeTimer, Clock::time_point> timers;
  std::vector<Request> requests;
  std::vector<std::string> resolved;
  bool connected = false;
  bool output_closed = false;
  bool stopped = false;
};

}  // namespace gl::testing
