// SPDX-License-Identifier: Apache-2.0
#pragma once
// The decisions of `gpulaunch run`'s bridge, apart from its I/O: when to probe, what each answer,
// output line, signal, timer and the engine's end mean, what to tell systemd and what to kill.
// Every side effect (the engine process, its output, signals, timers, HTTP, the clock, the
// sockets a headless rank holds) goes through BridgeIo: run/bridge.cpp drives it with Boost.Asio
// and Boost.Process, tests with tests/fakes/run/fake_bridge_io.hpp on a clock they move.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "run/bridge.hpp"
#include "run/liveness.hpp"
#include "run/readiness.hpp"
#include "util/error.hpp"
#include "util/http_client.hpp"
#include "util/http_url.hpp"

namespace gl {

// The bridge's timers; arming one that is armed moves it.
enum class BridgeTimer { probe, kill, drain, stable, liveness, cache };

class BridgeIo {
 public:
  virtual ~BridgeIo() = default;
  virtual Clock::time_point now() = 0;
  // The engine in its own process group, stdin /dev/null, stdout and stderr on one pipe whose
  // lines the I/O delivers (on_output_line); its pid.
  virtual Result<pid_t> spawn(const std::vector<std::string>& argv) = 0;
  // kill(2): a negative pid is a process group.
  virtual void send_signal(pid_t pid, int signal) = 0;
  // Stops reading the engine's output: workers that keep it open do not hold the end.
  virtual void close_output() = 0;
  virtual void arm(BridgeTimer timer, Clock::time_point at) = 0;
  virtual void cancel(BridgeTimer timer) = 0;
  // One exchange with the engine's HTTP server: a GET, or a POST of a JSON body; the API key as
  // "Authorization: Bearer KEY" where not empty. `done` runs on the loop, once.
  virtual void http(const HttpUrl& url, const std::string& target, const std::string& body,
                    std::chrono::milliseconds timeout, const std::string& api_key,
                    std::function<void(HttpAnswer)> done) = 0;
  // A name's addresses (textual, v4-mapped v6 as v4); empty where it does not resolve (yet).
  virtual std::vector<std::string> resolve(const std::string& host, long long port) = 0;
  // Whether a process of `group` holds a TCP connection to one of `addresses` (on `port`).
  virtual bool holds_connection(pid_t group, const std::vector<std::string>& addresses,
                                std::optional<int> port) = 0;
  // Ends the loop: the bridge has finished.
  virtual void stop() = 0;
};

// What the I/O tells the bridge.
class BridgeEvents {
 public:
  virtual ~BridgeEvents() = default;
  virtual void on_output_line(const std::string& line) = 0;
  // The output's end: every writer closed it (an EOF or a read error).
  virtual void on_output_end() = 0;
  // SIGABRT (systemd's watchdog), SIGTERM, SIGINT, SIGHUP.
  virtual void on_signal(int signal) = 0;
  // A child reaped after SIGCHLD, with its wait status.
  virtual void on_child_exit(pid_t pid, int wait_status) = 0;
  virtual void on_timer(BridgeTimer timer) = 0;
};

class EngineBridge final : public BridgeEvents {
 public:
  EngineBridge(const BridgeOptions& options, BridgeIo& io, Notifier& notifier,
               std::function<void(std::string_view)> print, BridgeLog log);

  // Starts the engine and the first probe; the exit status where it could not start.
  std::optional<int> start();
  // After the I/O stopped: the status `run` exits with, its verdict line said.
  int finish_status();
  bool finished() const { return finished_; }

  void on_output_line(const std::string& line) override;
  void on_output_end() override;
  void on_signal(int signal) override;
  void on_child_exit(pid_t pid, int wait_status) override;
  void on_timer(BridgeTimer timer) override;

 private:
  using Level = logging::Level;
  // What the kill timer does when it fires.
  enum class KillStep { none, stop_kill, stall_abort, stall_kill };

  void own_line(Level level, const std::string& line, const logging::Fields& fields = {});
  void say(std::string_view message, Level level = Level::info, const logging::Fields& fields = {});
  int exit_with(std::string_view why, int status);
  void measure_caches();
  void maybe_finish();
  void arm_stable_timer();
  void kill_group(int signal);
  void arm_kill_timer(std::chrono::seconds after);
  void schedule_probe(std::chrono::milliseconds delay);
  void probe();
  void on_health(std::optional<int> status);
  void on_serving();
  void send_ready_probe();
  void http_exchange(const std::string& target, const std::string& body,
                     std::chrono::milliseconds timeout, std::function<void(HttpAnswer)> done);
  void schedule_liveness();
  void liveness_step();
  void on_metrics(const HttpAnswer& answer);
  void send_liveness_probe();
  void after_liveness_event();
  void on_stall(const StallReport& report);
  bool probe_rendezvous();
  void on_rendezvous(bool joined);
  void flush_notifications();
  void next_probe();

  const BridgeOptions& options_;
  BridgeIo& io_;
  Notifier& notifier_;
  std::function<void(std::string_view)> print_;
  BridgeLog log_;
  Readiness readiness_;
  Clock::time_point started_;
  HttpUrl url_;
  pid_t pid_ = -1;
  int wait_status_ = 0;
  bool engine_ended_ = false;
  bool output_eof_ = false;
  bool finished_ = false;
  bool stopping_ = false;
  bool saw_usage_error_ = false;
  bool last_healthy_ = true;
  std::optional<Liveness> liveness_;  // from READY=1, where server.liveness runs a signal
  bool ready_probe_out_ = false;
  bool said_no_tokens_ = false;
  bool stalling_ = false;
  bool stall_grace_over_ = false;
  Clock::time_point stall_kill_at_{};
  bool output_closed_ = false;  // every writer closed the engine's output (not the drain timer)
  KillStep kill_step_ = KillStep::none;
  std::optional<int> forced_exit_;
  std::string forced_why_;                         // the verdict's reason for forced_exit_
  std::vector<std::string> rendezvous_addresses_;  // rank 0's, resolved once
  Clock::time_point fast_probes_until_{};
};

// How often a starting engine is probed once it printed that it is up.
inline constexpr std::chrono::milliseconds kFastProbeInterval{50};
// Between a stall's decision and its SIGABRT: the engine finishes answering a probe already sent.
inline constexpr std::chrono::milliseconds kStallQuiesce{200};

}  // namespace gl
