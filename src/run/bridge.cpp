// SPDX-License-Identifier: Apache-2.0
#include "run/bridge.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <memory>
#include <optional>
#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without it

#include <fmt/core.h>
#include <boost/asio.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "catalog/journal_messages.hpp"
#include "run/engine_verdict.hpp"
#include "run/iteration_stats.hpp"
#include "run/output_lines.hpp"
#include "run/prometheus_text.hpp"
#include "run/rendezvous.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/stall_report.hpp"
#include "supervise/start_phases.hpp"
#include "util/http_client.hpp"

// The engine's output is read a line at a time (run/output_lines).

template <>
struct boost::asio::is_match_condition<gl::LineEnd> : std::true_type {};

namespace gl {
namespace {

// Between a stall's decision and its SIGABRT: the engine finishes answering a probe already sent.
constexpr std::chrono::milliseconds kStallQuiesce{200};

namespace asio = boost::asio;
namespace bp = boost::process;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// A line's fields: the kind of event it says (catalog/journal_messages).
logging::Fields event(std::string_view kind, bool precedes_output = false) {
  logging::Fields fields;
  fields.kind = kind;
  fields.precedes_output = precedes_output;
  return fields;
}

class Bridge {
 public:
  Bridge(const BridgeOptions& options, Notifier& notifier,
         const std::function<void(std::string_view)>& print, const BridgeLog& log)
      : options_(options),
        notifier_(notifier),
        print_(print),
        log_(log),
        readiness_(options.readiness, Clock::now()) {
    // Installed before the engine exists, so no SIGCHLD is missed. SIGABRT is systemd's
    // watchdog signal (WatchdogSignal= default).
    signals_.add(SIGCHLD);
    signals_.add(SIGABRT);
  }

  int run() {
    auto url = parse_http_url(options_.health_url);
    if (!url)
      return exit_with(fmt::format("invalid health URL '{}'", options_.health_url), kExitConfig);
    url_ = *url;
    if (options_.argv.empty()) return exit_with("no engine command line after '--'", kExitConfig);
    if (!spawn()) return exit_with("the engine could not be started", kExitConfig);
    if (options_.rendezvous)
      say(fmt::format("headless rank: ready once the engine holds a connection to rank 0 at {}{}",
                      rendezvous_text(*options_.rendezvous),
                      options_.rendezvous->any_port ? " (any port)" : ""));
    measure_caches();
    flush_notifications();
    read_output();
    watch_signals();
    schedule_probe(0ms);
    io_.run();
    return exit_status();
  }

 private:
  using Level = logging::Level;

  void own_line(Level level, const std::string& line, const logging::Fields& fields = {}) {
    if (log_)
      log_(level, line, fields);
    else
      print_(line);
  }

  void say(std::string_view message, Level level = Level::info,
           const logging::Fields& fields = {}) {
    own_line(level, fmt::format("{}{}", kRunLinePrefix, message), fields);
  }

  // The verdict, `run`'s last line: record-exit knows the output is complete once it is in.
  int exit_with(std::string_view why, int status) {
    own_line(status == 0 ? Level::info : Level::warning, run_verdict_line(why, status));
    return status;
  }

  bool spawn() {
    std::error_code error;
    std::vector<std::string> args(options_.argv.begin() + 1, options_.argv.end());
    // Its own process group: a hung engine and all its workers can be killed together.
    bp::child child(
        bp::exe = options_.argv.front(), bp::args = args, (bp::std_out & bp::std_err) > pipe_,
        bp::std_in < bp::null, bp::extend::on_exec_setup = [](auto&) { ::setpgid(0, 0); }, error);
    if (error) {
      say(fmt::format("Failed to start '{}': {}", options_.argv.front(), error.message()),
          Level::error);
      return false;
    }
    pid_ = child.id();
    child.detach();  // reaped by waitpid below, on SIGCHLD
    say(fmt::format("started engine, pid {}; waiting for {}", pid_, options_.health_url));
    return true;
  }

  // One line, one progress update, or one piece of a longer line at a time: each becomes one
  // journal line and goes through the progress parsing like any other.
  void read_output() {
    asio::async_read_until(
        pipe_, output_, LineEnd{after_carriage_return_},
        [this](boost::system::error_code error, size_t size) {
          if (error) {
            if (output_.size() > 0)
              emit_line(std::string(asio::buffers_begin(output_.data()),
                                    asio::buffers_end(output_.data())));
            output_eof_ = true;
            output_closed_ = true;
            maybe_finish();
            return;
          }
          std::string line(asio::buffers_begin(output_.data()),
                           asio::buffers_begin(output_.data()) + static_cast<std::ptrdiff_t>(size));
          output_.consume(size);
          if (auto passed = take_line(std::move(line), after_carriage_return_)) emit_line(*passed);
          read_output();
        });
  }

  void emit_line(const std::string& line) {
    print_(line);
    if (is_usage_error_line(line)) saw_usage_error_ = true;
    const Phase before = readiness_.phase();
    readiness_.on_output_line(line, Clock::now());
    flush_notifications();
    // The engine says it is up: probe now and often, so READY=1 follows health 200 within a
    // fraction of a second without polling every 100 ms through a 20-minute load.
    if (before != Phase::health && readiness_.phase() == Phase::health && !readiness_.ready()) {
      fast_probes_until_ = Clock::now() + 60s;
      schedule_probe(0ms);
    }
  }

  // The JIT caches' sizes now, then again every interval until the engine is ready or gone.
  void measure_caches() {
    if (!options_.cache_meter || readiness_.ready() || engine_ended_) return;
    readiness_.on_cache_sizes(options_.cache_meter->measure(), Clock::now());
    flush_notifications();
    cache_timer_.expires_after(options_.cache_interval);
    cache_timer_.async_wait([this](boost::system::error_code error) {
      if (!error) measure_caches();
    });
  }

  void watch_signals() {
    signals_.async_wait([this](boost::system::error_code error, int signal) {
      if (error) return;
      if (signal == SIGCHLD) {
        reap();
      } else if (stalling_) {
        // A stop signal, or the watchdog, while the stall's dump runs: the kill is already on
        // its way, after the grace.
      } else if (signal == SIGABRT) {
        // systemd's watchdog fired: the engine stopped answering while alive. Waiting for it
        // to exit on SIGTERM would only delay the restart.
        say("watchdog expired: the engine stopped answering health checks; killing it",
            Level::error);
        notifier_.notify("STATUS=watchdog expired, killing the engine");
        kill_group(SIGKILL);
        forced_exit_ = kExitSignalBase + SIGABRT;
        forced_why_ = "the watchdog expired";
      } else {
        // The engine alone, not its group: its own handler drains in-flight requests and ends
        // its workers (vLLM's --shutdown-timeout, SGLang's sigterm_watchdog).
        // A second signal is passed on too, but does not move the kill further away.
        if (pid_ > 0) ::kill(pid_, signal);
        if (!stopping_) {
          say(fmt::format("received {}, stopping the engine: in-flight requests get {}s to finish",
                          strsignal(signal), options_.drain_timeout.count()));
          notifier_.notify("STOPPING=1");
          notifier_.notify(
              fmt::format("STATUS=draining for up to {}s", options_.drain_timeout.count()));
          stopping_ = true;
          arm_kill_timer(options_.stop_timeout);
        }
      }
      if (!engine_ended_) watch_signals();
    });
  }

  void reap() {
    int status = 0;
    pid_t reaped;
    while ((reaped = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (reaped != pid_) continue;
      engine_ended_ = true;
      wait_status_ = status;
      probe_timer_.cancel();
      liveness_timer_.cancel();
      cache_timer_.cancel();
      if (!stalling_) kill_timer_.cancel();
      // Workers may keep the output pipe open; do not wait for them long (after a stall, until
      // they had the grace to write their stacks).
      drain_timer_.expires_at(std::max(Clock::now() + 1s, stall_kill_at_ + 1s));
      drain_timer_.async_wait([this](boost::system::error_code error) {
        if (error) return;
        output_eof_ = true;
        pipe_.close();
        maybe_finish();
      });
      maybe_finish();
    }
  }

  void maybe_finish() {
    if (!engine_ended_ || !output_eof_ || finished_) return;
    // After a stall the workers may still be writing their stacks: the grace ends the group,
    // unless every process holding the output has closed it already (the dump is complete).
    if (stalling_ && !stall_grace_over_ && !output_closed_) return;
    finished_ = true;
    // The engine's workers share its process group; none may outlive it holding GPU memory.
    kill_group(SIGKILL);
    signals_.cancel();
    drain_timer_.cancel();
    probe_timer_.cancel();
    stable_timer_.cancel();
    liveness_timer_.cancel();
    cache_timer_.cancel();
    kill_timer_.cancel();
    io_.stop();
  }

  // Serving for `stable_after` forgives earlier failures (the supervisor's business).
  void arm_stable_timer() {
    if (!options_.on_stable || options_.stable_after.count() <= 0) return;
    stable_timer_.expires_after(options_.stable_after);
    stable_timer_.async_wait([this](boost::system::error_code error) {
      if (error || engine_ended_ || stopping_) return;
      if (auto message = options_.on_stable(); !message.empty())
        say(message, Level::info, event(kStableMessage));
    });
  }

  void kill_group(int signal) {
    if (pid_ > 0) ::kill(-pid_, signal);
  }

  void arm_kill_timer(std::chrono::seconds after) {
    kill_timer_.expires_after(after);
    kill_timer_.async_wait([this](boost::system::error_code error) {
      if (error || engine_ended_) return;
      say(stopping_ && !forced_exit_
              ? fmt::format("the engine did not stop within {}s of SIGTERM; killing it",
                            options_.stop_timeout.count())
              : std::string("the engine did not stop in time; killing it"),
          Level::warning);
      kill_group(SIGKILL);
    });
  }

  void schedule_probe(std::chrono::milliseconds delay) {
    if (engine_ended_) return;
    probe_timer_.expires_after(delay);
    probe_timer_.async_wait([this](boost::system::error_code error) {
      if (error || engine_ended_) return;
      if (readiness_.deadline_passed(Clock::now()) && !stopping_) {
        say(options_.rendezvous
                ? fmt::format("the engine did not join rank 0 at {} in time (last phase: {}); "
                              "stopping it",
                              rendezvous_text(*options_.rendezvous), readiness_.status_text())
                : fmt::format(
                      "the engine did not answer 200 on {} in time (last phase: {}); stopping it",
                      options_.health_url, readiness_.status_text()),
            Level::error);
        notifier_.notify("STATUS=ready timeout, stopping the engine");
        forced_exit_ = kExitReadyTimeout;
        forced_why_ = options_.rendezvous ? "the engine did not join rank 0 in time"
                                          : "the engine did not answer health in time";
        stopping_ = true;
        ::kill(pid_, SIGTERM);
        arm_kill_timer(10s);
        return;
      }
      if (options_.rendezvous) return on_rendezvous(probe_rendezvous());
      start_http_exchange(io_, url_, HttpRequest{url_.target, "", options_.probe_timeout, ""},
                          [this](HttpAnswer answer) { on_health(answer.status); });
    });
  }

  void on_health(std::optional<int> status) {
    if (engine_ended_ || stalling_) return;
    const bool was_ready = readiness_.ready();
    const bool was_awaiting = readiness_.awaiting_generation();
    readiness_.on_health(status, Clock::now(), !liveness_ || liveness_->feed_watchdog());
    if (!was_ready && readiness_.ready()) {
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_);
      say(fmt::format("engine is serving: {} answered 200 after {:.1f}s", options_.health_url,
                      elapsed.count() / 1000.0),
          Level::info, event(kReadyMessage));
      on_serving();
    }
    if (!was_awaiting && readiness_.awaiting_generation())
      say(fmt::format("{} answered 200; ready once {} generates a token", options_.health_url,
                      options_.probe_path));
    if (readiness_.awaiting_generation() && !ready_probe_out_) send_ready_probe();
    if (was_ready) {
      const bool healthy = status == 200;
      if (!healthy && last_healthy_)
        say(status ? fmt::format("health check answered {}", *status)
                   : std::string("health check got no answer"),
            Level::warning);
      if (healthy && !last_healthy_) say("health check answers 200 again");
      last_healthy_ = healthy;
    }
    flush_notifications();
    // "off": nothing watches a serving engine, its health included.
    if (readiness_.ready() && options_.liveness.mode == LivenessMode::off) return;
    schedule_probe(readiness_.ready() ? serving_probe_interval(notifier_.watchdog_interval())
                   : Clock::now() < fast_probes_until_ ? kFastProbeInterval
                                                       : options_.probe_interval);
  }

  // The engine serves: the stable period starts, and liveness where the profile asks for it.
  void on_serving() {
    arm_stable_timer();
    Liveness liveness(options_.liveness, Clock::now());
    if (!liveness.active()) return;
    liveness_ = liveness;
    say(fmt::format("liveness: {} every {}s, a stall after {}s without forward progress{}{}",
                    liveness_mode_name(options_.liveness.mode), options_.liveness.interval.count(),
                    options_.liveness.timeout.count(),
                    options_.liveness.has_metrics
                        ? (options_.in_flight_metric.empty()
                               ? fmt::format("; progress: {} of the iteration statistics from {}",
                                             options_.tokens_metric, options_.metrics_path)
                               : fmt::format("; {} and {} from {}", options_.in_flight_metric,
                                             options_.tokens_metric, options_.metrics_path))
                        : std::string(),
                    options_.liveness.has_probe && options_.liveness.mode == LivenessMode::generate
                        ? fmt::format("; probe {}", options_.probe_path)
                        : std::string()));
    schedule_liveness();
  }

  // READY=1 waits for a generation (server.ready = "generate"): one probe at a time.
  void send_ready_probe() {
    ready_probe_out_ = true;
    http_exchange(
        options_.probe_path, options_.probe_body, options_.liveness.timeout,
        [this](HttpAnswer answer) {
          ready_probe_out_ = false;
          if (engine_ended_ || stalling_) return;
          const bool generated = is_2xx(answer.status);
          if (!generated)
            say(answer.status ? fmt::format("first generation: {} answered {}", options_.probe_path,
                                            *answer.status)
                              : fmt::format("first generation: {} gave no answer within {}s",
                                            options_.probe_path, options_.liveness.timeout.count()),
                Level::warning);
          const bool was_ready = readiness_.ready();
          readiness_.on_generation(generated, Clock::now());
          if (!was_ready && readiness_.ready()) {
            auto elapsed =
                std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_);
            say(fmt::format("engine is serving: {} generated a token after {:.1f}s",
                            options_.probe_path, elapsed.count() / 1000.0),
                Level::info, event(kReadyMessage));
            on_serving();
          }
          flush_notifications();
        });
  }

  void http_exchange(const std::string& target, const std::string& body,
                     std::chrono::milliseconds timeout, std::function<void(HttpAnswer)> done) {
    // The probe and the metrics reads: the engine's API key guards them where it has one.
    start_http_exchange(io_, url_, HttpRequest{target, body, timeout, options_.api_key},
                        std::move(done));
  }

  void schedule_liveness() {
    if (!liveness_ || engine_ended_ || stalling_) return;
    const auto wakeup = liveness_->next_wakeup();
    if (wakeup == Clock::time_point::max()) return;
    liveness_timer_.expires_at(wakeup);
    liveness_timer_.async_wait([this](boost::system::error_code error) {
      if (error || engine_ended_ || stalling_ || stopping_) return;
      liveness_step();
    });
  }

  // Whatever is due now: a stall, or a look (metrics, then maybe the probe; or the probe).
  void liveness_step() {
    const auto now = Clock::now();
    if (auto stall = liveness_->stalled(now)) return on_stall(*stall);
    const Liveness::Look look = liveness_->look(now);
    if (look.metrics) {
      // A metrics read never waits longer than a look.
      http_exchange(options_.metrics_path, "",
                    std::min(options_.liveness.timeout, options_.liveness.interval),
                    [this](HttpAnswer answer) { on_metrics(answer); });
    } else if (look.probe) {
      send_liveness_probe();
    }
    schedule_liveness();
  }

  void on_metrics(const HttpAnswer& answer) {
    if (engine_ended_ || stalling_ || !liveness_) return;
    std::optional<MetricsSample> sample;
    if (answer.status == 200 && options_.metrics_format == MetricsFormat::iteration_stats) {
      // No iteration since the last read is no reading of the counter: it stands still.
      const IterationReading reading = read_iteration_stats(answer.body, options_.tokens_metric);
      sample = MetricsSample{std::nullopt, reading.last_iteration};
      if (!reading.parsed && !said_no_tokens_) {
        said_no_tokens_ = true;
        say(fmt::format("liveness: {} is not a JSON list of iteration statistics; the probe "
                        "alone watches the engine",
                        options_.metrics_path),
            Level::warning);
      }
    } else if (answer.status == 200) {
      sample = MetricsSample{options_.in_flight_metric.empty()
                                 ? std::nullopt
                                 : prometheus_sum(answer.body, options_.in_flight_metric),
                             prometheus_sum(answer.body, options_.tokens_metric)};
      if (!sample->tokens && !said_no_tokens_) {
        said_no_tokens_ = true;
        say(fmt::format("liveness: {} has no {}; the metrics signal waits for it",
                        options_.metrics_path, options_.tokens_metric),
            Level::warning);
      }
    }
    if (liveness_->on_metrics(sample, Clock::now())) send_liveness_probe();
    after_liveness_event();
  }

  void send_liveness_probe() {
    liveness_->on_probe_sent(Clock::now());
    http_exchange(options_.probe_path, options_.probe_body, options_.liveness.timeout,
                  [this](HttpAnswer answer) {
                    if (engine_ended_ || stalling_ || !liveness_) return;
                    const bool generated = is_2xx(answer.status);
                    const bool was_failing = !liveness_->feed_watchdog();
                    liveness_->on_probe(generated, Clock::now());
                    if (!generated && !was_failing && !liveness_->feed_watchdog())
                      say(answer.status
                              ? fmt::format("liveness: {} answered {}; the watchdog is no longer "
                                            "fed",
                                            options_.probe_path, *answer.status)
                              : fmt::format("liveness: {} gave no answer within {}s",
                                            options_.probe_path, options_.liveness.timeout.count()),
                          Level::warning);
                    if (was_failing && liveness_->feed_watchdog())
                      say("liveness: the engine generates again");
                    after_liveness_event();
                  });
  }

  void after_liveness_event() {
    if (auto stall = liveness_->stalled(Clock::now())) return on_stall(*stall);
    schedule_liveness();
  }

  // No forward progress: say so (record-exit reads the line; the dump follows it in the
  // journal), ask every engine process for its Python stacks, and kill the group after the
  // grace. The exit status says "stalled", whatever signal the engine then dies of.
  void on_stall(const StallReport& report) {
    if (stalling_ || engine_ended_) return;
    stalling_ = true;
    // Its thread dump follows in the engine's output: the line must be in the journal first.
    own_line(Level::error, stall_line(report), event(kStallMessage, true));
    notifier_.notify("STATUS=stalled: no forward progress, dumping stacks and killing the engine");
    forced_exit_ = kExitStalled;
    forced_why_ = fmt::format("the engine made no forward progress for {}s (signal {})",
                              report.still_for.count(), stall_signal_name(report.signal));
    probe_timer_.cancel();
    liveness_timer_.cancel();
    // No new probe goes out now; one the engine is still answering gets a moment to finish.
    // faulthandler reads every thread's frames while they run, and a thread mid-answer can
    // crash the dump before it reaches the wedged thread.
    stall_kill_at_ = Clock::now() + kStallQuiesce + options_.stall_dump_grace;
    kill_timer_.expires_after(kStallQuiesce);
    kill_timer_.async_wait([this](boost::system::error_code error) {
      if (error) return;
      if (engine_ended_) {
        stall_grace_over_ = true;
        return maybe_finish();
      }
      kill_group(SIGABRT);
      kill_timer_.expires_at(stall_kill_at_);
      kill_timer_.async_wait([this](boost::system::error_code error) {
        if (error) return;
        kill_group(SIGKILL);
        stall_grace_over_ = true;
        maybe_finish();
      });
    });
  }

  // Rank 0's addresses, resolved until they resolve (a name may not resolve before the network
  // is up); then the engine's process group's sockets against them.
  bool probe_rendezvous() {
    const Rendezvous& rendezvous = *options_.rendezvous;
    if (rendezvous_addresses_.empty()) {
      boost::system::error_code error;
      tcp::resolver resolver(io_);
      auto results = resolver.resolve(rendezvous.host, std::to_string(rendezvous.port), error);
      if (error) return false;
      for (const auto& entry : results) {
        auto address = entry.endpoint().address();
        if (address.is_v6() && address.to_v6().is_v4_mapped())
          address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
        rendezvous_addresses_.push_back(address.to_string());
      }
    }
    const std::optional<int> port =
        rendezvous.any_port ? std::nullopt : std::optional<int>(static_cast<int>(rendezvous.port));
    return holds_connection(group_socket_inodes(pid_), rendezvous_addresses_, port);
  }

  void on_rendezvous(bool joined) {
    if (engine_ended_) return;
    const bool was_ready = readiness_.ready();
    readiness_.on_rendezvous(joined, Clock::now());
    if (!was_ready && readiness_.ready()) {
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_);
      say(fmt::format("engine joined rank 0: it holds a connection to {} after {:.1f}s",
                      rendezvous_text(*options_.rendezvous), elapsed.count() / 1000.0),
          Level::info, event(kReadyMessage));
      arm_stable_timer();
    }
    if (was_ready) {
      if (!joined && last_healthy_)
        say(fmt::format("the engine holds no connection to rank 0 at {} any more",
                        rendezvous_text(*options_.rendezvous)),
            Level::warning);
      if (joined && !last_healthy_) say("the engine holds its connection to rank 0 again");
      last_healthy_ = joined;
    }
    flush_notifications();
    schedule_probe(readiness_.ready() ? serving_probe_interval(notifier_.watchdog_interval())
                   : Clock::now() < fast_probes_until_ ? kFastProbeInterval
                                                       : options_.probe_interval);
  }

  // sd_notify, and the start's phase changes as lines (root's record-start reads them back).
  void flush_notifications() {
    for (const auto& mark : readiness_.take_phase_marks()) {
      logging::Fields fields;
      fields.kind = kPhaseMessage;
      fields.phase = std::string(start_phase_name(mark.phase));
      own_line(Level::info, phase_line(mark), fields);
    }
    for (const auto& line : readiness_.take_notifications()) notifier_.notify(line);
  }

  int exit_status() {
    const EngineVerdict verdict =
        engine_verdict({wait_status_, saw_usage_error_, stopping_, forced_exit_, forced_why_});
    return exit_with(verdict.why, verdict.status);
  }

  const BridgeOptions& options_;
  Notifier& notifier_;
  const std::function<void(std::string_view)>& print_;
  const BridgeLog& log_;
  Readiness readiness_;
  Clock::time_point started_ = Clock::now();
  HttpUrl url_;
  asio::io_context io_;
  bp::async_pipe pipe_{io_};
  // Never full: LineEnd completes a read at kMaxOutputLine bytes.
  asio::streambuf output_{4 * kMaxOutputLine};
  asio::signal_set signals_{io_, SIGTERM, SIGINT, SIGHUP};
  asio::steady_timer probe_timer_{io_};
  asio::steady_timer kill_timer_{io_};
  asio::steady_timer drain_timer_{io_};
  asio::steady_timer stable_timer_{io_};
  asio::steady_timer liveness_timer_{io_};
  asio::steady_timer cache_timer_{io_};
  pid_t pid_ = -1;
  int wait_status_ = 0;
  bool engine_ended_ = false;
  bool output_eof_ = false;
  bool finished_ = false;
  bool stopping_ = false;
  bool saw_usage_error_ = false;
  bool after_carriage_return_ = false;  // the last line ended with '\r': a tqdm stream
  bool last_healthy_ = true;
  std::optional<Liveness> liveness_;  // from READY=1, where server.liveness runs a signal
  bool ready_probe_out_ = false;
  bool said_no_tokens_ = false;
  bool stalling_ = false;
  bool stall_grace_over_ = false;
  Clock::time_point stall_kill_at_{};
  bool output_closed_ = false;  // every writer closed the engine's output (not the drain timer)
  std::optional<int> forced_exit_;
  std::string forced_why_;                         // the verdict's reason for forced_exit_
  std::vector<std::string> rendezvous_addresses_;  // rank 0's, resolved once
  Clock::time_point fast_probes_until_{};
  static constexpr std::chrono::milliseconds kFastProbeInterval{50};
};

}  // namespace

int run_bridge(const BridgeOptions& options, Notifier& notifier,
               const std::function<void(std::string_view)>& print, const BridgeLog& log) {
  Bridge bridge(options, notifier, print, log);
  return bridge.run();
}

}  // namespace gl
