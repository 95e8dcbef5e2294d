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
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "run/rendezvous.hpp"
#include "supervise/exit_status.hpp"

namespace gl::bridge_detail {

// A line ends at '\n' or '\r': tqdm redraws progress bars with carriage returns. A longer run
// of bytes without either ends after kMaxOutputLine bytes, before a UTF-8 character rather than
// inside one, so the engine can never fill the buffer and stop the reading.
//
// tqdm writes each update as one write(2) of "\r" + the bar, and the bar's end only when the next
// update's "\r" comes, a shard later, which may be minutes into a long load (or after the
// deadline it should have pushed back). So after a '\r', the bytes that have arrived are an
// update of their own: each update becomes one line, read when it is written. The journal gets
// every update as a line, not only each bar's last: its timestamps show the pace of a load that
// may stall, a follower of `logs -f` sees it move, and a loader updates once per shard.
struct LineEnd {
  bool after_carriage_return = false;

  template <class Iterator>
  std::pair<Iterator, bool> operator()(Iterator begin, Iterator end) const {
    Iterator char_start = begin;
    std::size_t length = 0;
    for (Iterator it = begin; it != end; ++it, ++length) {
      const auto byte = static_cast<unsigned char>(*it);
      const bool continuation = (byte & 0xC0) == 0x80;
      if (length == kMaxOutputLine)
        return {continuation && char_start != begin ? char_start : it, true};
      if (byte == '\n' || byte == '\r') return {++it, true};
      if (!continuation) char_start = it;
    }
    if (after_carriage_return && begin != end) return {end, true};
    // "Partial match at begin": asio's next search starts from the line's first byte again
    // rather than from the new data only, so `length` counts the whole line.
    return {begin, false};
  }
};

}  // namespace gl::bridge_detail

template <>
struct boost::asio::is_match_condition<gl::bridge_detail::LineEnd> : std::true_type {};

namespace gl {
namespace {

using bridge_detail::LineEnd;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace bp = boost::process;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

struct Url {
  std::string host;
  std::string port;
  std::string target;
};

std::optional<Url> parse_url(std::string_view text) {
  constexpr std::string_view scheme = "http://";
  if (!text.starts_with(scheme)) return std::nullopt;
  text.remove_prefix(scheme.size());
  auto slash = text.find('/');
  std::string_view authority = text.substr(0, slash);
  Url url{"", "80", slash == std::string_view::npos ? "/" : std::string(text.substr(slash))};
  if (authority.starts_with('[')) {  // [v6]:port
    auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    url.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size() && authority[close + 1] == ':')
      url.port = std::string(authority.substr(close + 2));
  } else {
    auto colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) url.port = std::string(authority.substr(colon + 1));
  }
  if (url.host.empty()) return std::nullopt;
  return url;
}

// One GET with a deadline; calls `done` with the HTTP status, or nullopt when nothing answered.
class HealthProbe : public std::enable_shared_from_this<HealthProbe> {
 public:
  HealthProbe(asio::io_context& io, const Url& url, std::chrono::milliseconds timeout,
              std::function<void(std::optional<int>)> done)
      : resolver_(io), stream_(io), url_(url), timeout_(timeout), done_(std::move(done)) {}

  void start() {
    request_ = {http::verb::get, url_.target, 11};
    request_.set(http::field::host, url_.host);
    request_.set(http::field::user_agent, "gpulaunch");
    stream_.expires_after(timeout_);
    resolver_.async_resolve(url_.host, url_.port,
                            [self = shared_from_this()](beast::error_code error, auto results) {
                              if (error) return self->finish(std::nullopt);
                              self->connect(results);
                            });
  }

 private:
  void connect(const tcp::resolver::results_type& results) {
    stream_.async_connect(results, [self = shared_from_this()](beast::error_code error, auto) {
      if (error) return self->finish(std::nullopt);
      http::async_write(self->stream_, self->request_,
                        [self](beast::error_code write_error, size_t) {
                          if (write_error) return self->finish(std::nullopt);
                          self->read();
                        });
    });
  }

  void read() {
    http::async_read(stream_, buffer_, response_,
                     [self = shared_from_this()](beast::error_code error, size_t) {
                       if (error) return self->finish(std::nullopt);
                       self->finish(self->response_.result_int());
                     });
  }

  void finish(std::optional<int> status) {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    if (done_) std::exchange(done_, nullptr)(status);
  }

  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  Url url_;
  std::chrono::milliseconds timeout_;
  std::function<void(std::optional<int>)> done_;
  http::request<http::empty_body> request_;
  beast::flat_buffer buffer_;
  http::response<http::string_body> response_;
};

class Bridge {
 public:
  Bridge(const BridgeOptions& options, Notifier& notifier,
         const std::function<void(std::string_view)>& print)
      : options_(options),
        notifier_(notifier),
        print_(print),
        readiness_(options.readiness, Clock::now()) {
    // Installed before the engine exists, so no SIGCHLD is missed. SIGABRT is systemd's
    // watchdog signal (WatchdogSignal= default).
    signals_.add(SIGCHLD);
    signals_.add(SIGABRT);
  }

  int run() {
    auto url = parse_url(options_.health_url);
    if (!url)
      return exit_with(fmt::format("invalid health URL '{}'", options_.health_url), kExitConfig);
    url_ = *url;
    if (options_.argv.empty()) return exit_with("no engine command line after '--'", kExitConfig);
    if (!spawn()) return exit_with("the engine could not be started", kExitConfig);
    if (options_.rendezvous)
      say(fmt::format("headless rank: ready once the engine holds a connection to rank 0 at {}{}",
                      rendezvous_text(*options_.rendezvous),
                      options_.rendezvous->any_port ? " (any port)" : ""));
    flush_notifications();
    read_output();
    watch_signals();
    schedule_probe(0ms);
    io_.run();
    return exit_status();
  }

 private:
  void say(std::string_view message) { print_(fmt::format("{}{}", kRunLinePrefix, message)); }

  // The verdict, `run`'s last line: record-exit knows the output is complete once it is in.
  int exit_with(std::string_view why, int status) {
    print_(run_verdict_line(why, status));
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
      say(fmt::format("Failed to start '{}': {}", options_.argv.front(), error.message()));
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
        [this](beast::error_code error, size_t size) {
          if (error) {
            if (output_.size() > 0)
              emit_line(std::string(asio::buffers_begin(output_.data()),
                                    asio::buffers_end(output_.data())));
            output_eof_ = true;
            maybe_finish();
            return;
          }
          std::string line(asio::buffers_begin(output_.data()),
                           asio::buffers_begin(output_.data()) + static_cast<std::ptrdiff_t>(size));
          output_.consume(size);
          const char terminator = line.empty() ? '\0' : line.back();
          if (terminator == '\r') after_carriage_return_ = true;
          if (terminator == '\n') after_carriage_return_ = false;
          while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
          // tqdm pads a shorter update with spaces, which a bar format ending in '\n' leaves before
          // the next '\r': nothing to pass on.
          const bool blank = line.find_first_not_of(' ') == std::string::npos;
          if (!line.empty() && !(terminator == '\r' && blank)) emit_line(line);
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
    if (before != Phase::waiting_for_health && readiness_.phase() == Phase::waiting_for_health &&
        !readiness_.ready()) {
      fast_probes_until_ = Clock::now() + 60s;
      schedule_probe(0ms);
    }
  }

  void watch_signals() {
    signals_.async_wait([this](beast::error_code error, int signal) {
      if (error) return;
      if (signal == SIGCHLD) {
        reap();
      } else if (signal == SIGABRT) {
        // systemd's watchdog fired: the engine stopped answering while alive. Waiting for it
        // to exit on SIGTERM would only delay the restart.
        say("watchdog expired: the engine stopped answering health checks; killing it");
        notifier_.notify("STATUS=watchdog expired, killing the engine");
        kill_group(SIGKILL);
        forced_exit_ = kExitSignalBase + SIGABRT;
        forced_why_ = "the watchdog expired";
      } else {
        say(fmt::format("received {}, stopping the engine", strsignal(signal)));
        notifier_.notify("STOPPING=1");
        stopping_ = true;
        if (pid_ > 0) ::kill(pid_, signal);
        arm_kill_timer(options_.stop_timeout);
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
      kill_timer_.cancel();
      // Workers may keep the output pipe open; do not wait for them long.
      drain_timer_.expires_after(1s);
      drain_timer_.async_wait([this](beast::error_code error) {
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
    finished_ = true;
    // The engine's workers share its process group; none may outlive it holding GPU memory.
    kill_group(SIGKILL);
    signals_.cancel();
    drain_timer_.cancel();
    probe_timer_.cancel();
    stable_timer_.cancel();
    io_.stop();
  }

  // Serving for `stable_after` forgives earlier failures (the supervisor's business).
  void arm_stable_timer() {
    if (!options_.on_stable || options_.stable_after.count() <= 0) return;
    stable_timer_.expires_after(options_.stable_after);
    stable_timer_.async_wait([this](beast::error_code error) {
      if (error || engine_ended_ || stopping_) return;
      if (auto message = options_.on_stable(); !message.empty()) say(message);
    });
  }

  void kill_group(int signal) {
    if (pid_ > 0) ::kill(-pid_, signal);
  }

  void arm_kill_timer(std::chrono::seconds after) {
    kill_timer_.expires_after(after);
    kill_timer_.async_wait([this](beast::error_code error) {
      if (error || engine_ended_) return;
      say("the engine did not stop in time; killing it");
      kill_group(SIGKILL);
    });
  }

  void schedule_probe(std::chrono::milliseconds delay) {
    if (engine_ended_) return;
    probe_timer_.expires_after(delay);
    probe_timer_.async_wait([this](beast::error_code error) {
      if (error || engine_ended_) return;
      if (readiness_.deadline_passed(Clock::now()) && !stopping_) {
        say(options_.rendezvous
                ? fmt::format("the engine did not join rank 0 at {} in time (last phase: {}); "
                              "stopping it",
                              rendezvous_text(*options_.rendezvous), readiness_.status_text())
                : fmt::format(
                      "the engine did not answer 200 on {} in time (last phase: {}); stopping it",
                      options_.health_url, readiness_.status_text()));
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
      auto probe =
          std::make_shared<HealthProbe>(io_, url_, options_.probe_timeout,
                                        [this](std::optional<int> status) { on_health(status); });
      probe->start();
    });
  }

  void on_health(std::optional<int> status) {
    if (engine_ended_) return;
    const bool was_ready = readiness_.ready();
    readiness_.on_health(status, Clock::now());
    if (!was_ready && readiness_.ready()) {
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_);
      say(fmt::format("engine is serving: {} answered 200 after {:.1f}s", options_.health_url,
                      elapsed.count() / 1000.0));
      arm_stable_timer();
    }
    if (was_ready) {
      const bool healthy = status == 200;
      if (!healthy && last_healthy_)
        say(status ? fmt::format("health check answered {}", *status)
                   : std::string("health check got no answer"));
      if (healthy && !last_healthy_) say("health check answers 200 again");
      last_healthy_ = healthy;
    }
    flush_notifications();
    schedule_probe(readiness_.ready() ? serving_probe_interval(notifier_.watchdog_interval())
                   : Clock::now() < fast_probes_until_ ? kFastProbeInterval
                                                       : options_.probe_interval);
  }

  // Rank 0's addresses, resolved until they resolve (a name may not resolve before the network
  // is up); then the engine's process group's sockets against them.
  bool probe_rendezvous() {
    const Rendezvous& rendezvous = *options_.rendezvous;
    if (rendezvous_addresses_.empty()) {
      beast::error_code error;
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
                      rendezvous_text(*options_.rendezvous), elapsed.count() / 1000.0));
      arm_stable_timer();
    }
    if (was_ready) {
      if (!joined && last_healthy_)
        say(fmt::format("the engine holds no connection to rank 0 at {} any more",
                        rendezvous_text(*options_.rendezvous)));
      if (joined && !last_healthy_) say("the engine holds its connection to rank 0 again");
      last_healthy_ = joined;
    }
    flush_notifications();
    schedule_probe(readiness_.ready() ? serving_probe_interval(notifier_.watchdog_interval())
                   : Clock::now() < fast_probes_until_ ? kFastProbeInterval
                                                       : options_.probe_interval);
  }

  void flush_notifications() {
    for (const auto& line : readiness_.take_notifications()) notifier_.notify(line);
  }

  int exit_status() {
    if (forced_exit_) return exit_with(forced_why_, *forced_exit_);
    if (stopping_) return exit_with("engine stopped", 0);
    int code = exit_status_for_engine(wait_status_, saw_usage_error_);
    if (WIFSIGNALED(wait_status_))
      return exit_with(fmt::format("engine was killed by signal {} ({})", WTERMSIG(wait_status_),
                                   strsignal(WTERMSIG(wait_status_))),
                       code);
    if (code == kExitConfig)
      return exit_with("engine rejected its command line (a configuration error, not retried)",
                       code);
    return exit_with(fmt::format("engine exited with status {}", code), code);
  }

  const BridgeOptions& options_;
  Notifier& notifier_;
  const std::function<void(std::string_view)>& print_;
  Readiness readiness_;
  Clock::time_point started_ = Clock::now();
  Url url_;
  asio::io_context io_;
  bp::async_pipe pipe_{io_};
  // Never full: LineEnd completes a read at kMaxOutputLine bytes.
  asio::streambuf output_{4 * kMaxOutputLine};
  asio::signal_set signals_{io_, SIGTERM, SIGINT, SIGHUP};
  asio::steady_timer probe_timer_{io_};
  asio::steady_timer kill_timer_{io_};
  asio::steady_timer drain_timer_{io_};
  asio::steady_timer stable_timer_{io_};
  pid_t pid_ = -1;
  int wait_status_ = 0;
  bool engine_ended_ = false;
  bool output_eof_ = false;
  bool finished_ = false;
  bool stopping_ = false;
  bool saw_usage_error_ = false;
  bool after_carriage_return_ = false;  // the last line ended with '\r': a tqdm stream
  bool last_healthy_ = true;
  std::optional<int> forced_exit_;
  std::string forced_why_;                         // the verdict's reason for forced_exit_
  std::vector<std::string> rendezvous_addresses_;  // rank 0's, resolved once
  Clock::time_point fast_probes_until_{};
  static constexpr std::chrono::milliseconds kFastProbeInterval{50};
};

}  // namespace

int run_bridge(const BridgeOptions& options, Notifier& notifier,
               const std::function<void(std::string_view)>& print) {
  Bridge bridge(options, notifier, print);
  return bridge.run();
}

}  // namespace gl
