// SPDX-License-Identifier: Apache-2.0
// `gpulaunch run`'s I/O: the engine under Boost.Process, its output, signals, timers and HTTP on
// one Boost.Asio loop, driving run/engine_bridge's decisions (BridgeIo, BridgeEvents).
#include "run/bridge.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <memory>
#include <optional>
#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "run/engine_bridge.hpp"
#include "run/output_lines.hpp"
#include "run/rendezvous.hpp"
#include "util/http_client.hpp"

// The engine's output is read a line at a time (run/output_lines).
template <>
struct boost::asio::is_match_condition<gl::LineEnd> : std::true_type {};

namespace gl {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process;
using tcp = asio::ip::tcp;

static_assert(static_cast<size_t>(BridgeTimer::cache) == 5, "a timer each in AsioBridgeIo");

class AsioBridgeIo final : public BridgeIo {
 public:
  explicit AsioBridgeIo(int stop_signal_fd) {
    signals_.add(SIGCHLD);
    signals_.add(SIGABRT);
    if (stop_signal_fd < 0) {
      for (int stop : {SIGTERM, SIGINT, SIGHUP}) signals_.add(stop);
    } else {
      // A duplicate: the descriptor closes it, the caller keeps its own.
      stop_signals_.emplace(io_, ::dup(stop_signal_fd));
    }
  }

  Clock::time_point now() override { return Clock::now(); }

  Result<pid_t> spawn(const std::vector<std::string>& argv) override {
    std::error_code error;
    std::vector<std::string> args(argv.begin() + 1, argv.end());
    // Its own process group: a hung engine and all its workers can be killed together.
    bp::child child(
        bp::exe = argv.front(), bp::args = args, (bp::std_out & bp::std_err) > pipe_,
        bp::std_in < bp::null, bp::extend::on_exec_setup = [](auto&) { ::setpgid(0, 0); }, error);
    if (error) return fail(error.message());
    const pid_t pid = child.id();
    child.detach();  // reaped by waitpid below, on SIGCHLD
    return pid;
  }

  void send_signal(pid_t pid, int signal) override { ::kill(pid, signal); }

  void close_output() override { pipe_.close(); }

  void arm(BridgeTimer timer, Clock::time_point at) override {
    auto& armed = timer_of(timer);
    armed.expires_at(at);
    armed.async_wait([this, timer](boost::system::error_code error) {
      if (!error) events_->on_timer(timer);
    });
  }

  void cancel(BridgeTimer timer) override { timer_of(timer).cancel(); }

  void http(const HttpUrl& url, const std::string& target, const std::string& body,
            std::chrono::milliseconds timeout, const std::string& api_key,
            std::function<void(HttpAnswer)> done) override {
    start_http_exchange(io_, url, HttpRequest{target, body, timeout, api_key}, std::move(done));
  }

  std::vector<std::string> resolve(const std::string& host, long long port) override {
    std::vector<std::string> addresses;
    boost::system::error_code error;
    tcp::resolver resolver(io_);
    auto results = resolver.resolve(host, std::to_string(port), error);
    if (error) return addresses;
    for (const auto& entry : results) {
      auto address = entry.endpoint().address();
      if (address.is_v6() && address.to_v6().is_v4_mapped())
        address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
      addresses.push_back(address.to_string());
    }
    return addresses;
  }

  bool holds_connection(pid_t group, const std::vector<std::string>& addresses,
                        std::optional<int> port) override {
    return gl::holds_connection(group_socket_inodes(group), addresses, port);
  }

  void stop() override { io_.stop(); }

  // Runs the loop until the bridge stops it.
  void run(BridgeEvents& events) {
    events_ = &events;
    read_output();
    watch_signals();
    read_stop_signals();
    io_.run();
  }

 private:
  asio::steady_timer& timer_of(BridgeTimer timer) { return timers_[static_cast<size_t>(timer)]; }

  // One line, one progress update, or one piece of a longer line at a time: each becomes one
  // journal line and goes through the progress parsing like any other.
  void read_output() {
    asio::async_read_until(
        pipe_, output_, LineEnd{after_carriage_return_},
        [this](boost::system::error_code error, size_t size) {
          if (error) {
            if (output_.size() > 0)
              events_->on_output_line(std::string(asio::buffers_begin(output_.data()),
                                                  asio::buffers_end(output_.data())));
            events_->on_output_end();
            return;
          }
          std::string line(asio::buffers_begin(output_.data()),
                           asio::buffers_begin(output_.data()) + static_cast<std::ptrdiff_t>(size));
          output_.consume(size);
          if (auto passed = take_line(std::move(line), after_carriage_return_))
            events_->on_output_line(*passed);
          read_output();
        });
  }

  void watch_signals() {
    signals_.async_wait([this](boost::system::error_code error, int signal) {
      if (error) return;
      if (signal == SIGCHLD) {
        int status = 0;
        pid_t reaped;
        while ((reaped = ::waitpid(-1, &status, WNOHANG)) > 0)
          events_->on_child_exit(reaped, status);
      } else {
        events_->on_signal(signal);
      }
      watch_signals();
    });
  }

  // The caller's stop signals, a byte each (BridgeOptions::stop_signal_fd).
  void read_stop_signals() {
    if (!stop_signals_) return;
    stop_signals_->async_read_some(asio::buffer(&stop_signal_, 1),
                                   [this](boost::system::error_code error, size_t size) {
                                     if (error || size == 0) return;
                                     events_->on_signal(stop_signal_);
                                     read_stop_signals();
                                   });
  }

  asio::io_context io_;
  BridgeEvents* events_ = nullptr;
  std::optional<asio::posix::stream_descriptor> stop_signals_;
  unsigned char stop_signal_ = 0;
  bp::async_pipe pipe_{io_};
  // Never full: LineEnd completes a read at kMaxOutputLine bytes.
  asio::streambuf output_{4 * kMaxOutputLine};
  bool after_carriage_return_ = false;  // the last line ended with '\r': a tqdm stream
  // Installed before the engine exists, so no SIGCHLD is missed. SIGABRT is systemd's watchdog
  // signal (WatchdogSignal= default).
  asio::signal_set signals_{io_};
  std::array<asio::steady_timer, 6> timers_{asio::steady_timer{io_}, asio::steady_timer{io_},
                                            asio::steady_timer{io_}, asio::steady_timer{io_},
                                            asio::steady_timer{io_}, asio::steady_timer{io_}};
};

}  // namespace

int run_bridge(const BridgeOptions& options, Notifier& notifier,
               const std::function<void(std::string_view)>& print, const BridgeLog& log) {
  AsioBridgeIo io(options.stop_signal_fd);
  EngineBridge bridge(options, io, notifier, print, log);
  if (auto failed = bridge.start()) return *failed;
  io.run(bridge);
  return bridge.finish_status();
}

}  // namespace gl
