// SPDX-License-Identifier: Apache-2.0
#include "run/engine_bridge.hpp"

#include <signal.h>

#include <cstring>

#include <fmt/core.h>

#include "catalog/exit_codes.hpp"
#include "catalog/journal_messages.hpp"
#include "run/engine_verdict.hpp"
#include "run/iteration_stats.hpp"
#include "run/output_lines.hpp"
#include "run/prometheus_text.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/stall_report.hpp"
#include "supervise/start_phases.hpp"

namespace gl {
namespace {

using namespace std::chrono_literals;

// A line's fields: the kind of event it says (catalog/journal_messages).
logging::Fields event(std::string_view kind, bool precedes_output = false) {
  logging::Fields fields;
  fields.kind = kind;
  fields.precedes_output = precedes_output;
  return fields;
}

}  // namespace

EngineBridge::EngineBridge(const BridgeOptions& options, BridgeIo& io, Notifier& notifier,
                           std::function<void(std::string_view)> print, BridgeLog log)
    : options_(options),
      io_(io),
      notifier_(notifier),
      print_(std::move(print)),
      log_(std::move(log)),
      readiness_(options.readiness, io.now()),
      started_(io.now()) {}

std::optional<int> EngineBridge::start() {
  auto url = parse_http_url(options_.health_url);
  if (!url)
    return exit_with(fmt::format("invalid health URL '{}'", options_.health_url), kExitConfig);
  url_ = *url;
  if (options_.argv.empty()) return exit_with("no engine command line after '--'", kExitConfig);
  auto pid = io_.spawn(options_.argv);
  if (!pid) {
    say(fmt::format("Failed to start '{}': {}", options_.argv.front(), pid.error().message),
        Level::error);
    return exit_with("the engine could not be started", kExitConfig);
  }
  pid_ = *pid;
  say(fmt::format("started engine, pid {}; waiting for {}", pid_, options_.health_url));
  if (options_.rendezvous)
    say(fmt::format("headless rank: ready once the engine holds a connection to rank 0 at {}{}",
                    rendezvous_text(*options_.rendezvous),
                    options_.rendezvous->any_port ? " (any port)" : ""));
  measure_caches();
  flush_notifications();
  schedule_probe(0ms);
  return std::nullopt;
}

int EngineBridge::finish_status() {
  const EngineVerdict verdict =
      engine_verdict({wait_status_, saw_usage_error_, stopping_, forced_exit_, forced_why_});
  return exit_with(verdict.why, verdict.status);
}

void EngineBridge::own_line(Level level, const std::string& line, const logging::Fields& fields) {
  if (log_)
    log_(level, line, fields);
  else
    print_(line);
}

void EngineBridge::say(std::string_view message, Level level, const logging::Fields& fields) {
  own_line(level, fmt::format("{}{}", kRunLinePrefix, message), fields);
}

// The verdict, `run`'s last line: record-exit knows the output is complete once it is in.
int EngineBridge::exit_with(std::string_view why, int status) {
  own_line(status == 0 ? Level::info : Level::warning, run_verdict_line(why, status));
  return status;
}

void EngineBridge::on_output_line(const std::string& line) {
  print_(line);
  if (is_usage_error_line(line)) saw_usage_error_ = true;
  const Phase before = readiness_.phase();
  readiness_.on_output_line(line, io_.now());
  flush_notifications();
  // The engine says it is up: probe now and often, so READY=1 follows health 200 within a
  // fraction of a second without polling every 100 ms through a 20-minute load.
  if (before != Phase::health && readiness_.phase() == Phase::health && !readiness_.ready()) {
    fast_probes_until_ = io_.now() + 60s;
    schedule_probe(0ms);
  }
}

void EngineBridge::on_output_end() {
  output_eof_ = true;
  output_closed_ = true;
  maybe_finish();
}

// The JIT caches' sizes now, then again every interval until the engine is ready or gone.
void EngineBridge::measure_caches() {
  if (!options_.cache_meter || readiness_.ready() || engine_ended_) return;
  readiness_.on_cache_sizes(options_.cache_meter->measure(), io_.now());
  flush_notifications();
  io_.arm(BridgeTimer::cache, io_.now() + options_.cache_interval);
}

void EngineBridge::on_signal(int signal) {
  if (engine_ended_) return;
  if (stalling_) {
    // A stop signal, or the watchdog, while the stall's dump runs: the kill is already on its
    // way, after the grace.
  } else if (signal == SIGABRT) {
    // systemd's watchdog fired: the engine stopped answering while alive. Waiting for it to exit
    // on SIGTERM would only delay the restart.
    say("watchdog expired: the engine stopped answering health checks; killing it", Level::error);
    notifier_.notify("STATUS=watchdog expired, killing the engine");
    kill_group(SIGKILL);
    forced_exit_ = kExitSignalBase + SIGABRT;
    forced_why_ = "the watchdog expired";
  } else {
    // The engine alone, not its group: its own handler drains in-flight requests and ends its
    // workers (vLLM's --shutdown-timeout, SGLang's sigterm_watchdog). A second signal is passed
    // on too, but does not move the kill further away.
    if (pid_ > 0) io_.send_signal(pid_, signal);
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
}

void EngineBridge::on_child_exit(pid_t pid, int wait_status) {
  if (pid != pid_ || engine_ended_) return;
  engine_ended_ = true;
  wait_status_ = wait_status;
  io_.cancel(BridgeTimer::probe);
  io_.cancel(BridgeTimer::liveness);
  io_.cancel(BridgeTimer::cache);
  if (!stalling_) io_.cancel(BridgeTimer::kill);
  // Workers may keep the output pipe open; do not wait for them long (after a stall, until they
  // had the grace to write their stacks).
  io_.arm(BridgeTimer::drain, std::max(io_.now() + 1s, stall_kill_at_ + 1s));
  maybe_finish();
}

void EngineBridge::on_timer(BridgeTimer timer) {
  switch (timer) {
    case BridgeTimer::probe:
      if (!engine_ended_) probe();
      return;
    case BridgeTimer::cache:
      measure_caches();
      return;
    case BridgeTimer::drain:
      output_eof_ = true;
      io_.close_output();
      maybe_finish();
      return;
    case BridgeTimer::stable:
      if (engine_ended_ || stopping_) return;
      if (auto message = options_.on_stable(); !message.empty())
        say(message, Level::info, event(kStableMessage));
      return;
    case BridgeTimer::liveness:
      if (engine_ended_ || stalling_ || stopping_) return;
      liveness_step();
      return;
    case BridgeTimer::kill:
      break;
  }
  switch (std::exchange(kill_step_, KillStep::none)) {
    case KillStep::none:
      return;
    case KillStep::stop_kill:
      if (engine_ended_) return;
      say(stopping_ && !forced_exit_
              ? fmt::format("the engine did not stop within {}s of SIGTERM; killing it",
                            options_.stop_timeout.count())
              : std::string("the engine did not stop in time; killing it"),
          Level::warning);
      kill_group(SIGKILL);
      return;
    case KillStep::stall_abort:
      if (engine_ended_) {
        stall_grace_over_ = true;
        return maybe_finish();
      }
      kill_group(SIGABRT);
      kill_step_ = KillStep::stall_kill;
      io_.arm(BridgeTimer::kill, stall_kill_at_);
      return;
    case KillStep::stall_kill:
      kill_group(SIGKILL);
      stall_grace_over_ = true;
      maybe_finish();
      return;
  }
}

void EngineBridge::maybe_finish() {
  if (!engine_ended_ || !output_eof_ || finished_) return;
  // After a stall the workers may still be writing their stacks: the grace ends the group,
  // unless every process holding the output has closed it already (the dump is complete).
  if (stalling_ && !stall_grace_over_ && !output_closed_) return;
  finished_ = true;
  // The engine's workers share its process group; none may outlive it holding GPU memory.
  kill_group(SIGKILL);
  for (BridgeTimer timer : {BridgeTimer::drain, BridgeTimer::probe, BridgeTimer::stable,
                            BridgeTimer::liveness, BridgeTimer::cache, BridgeTimer::kill})
    io_.cancel(timer);
  io_.stop();
}

// Serving for `stable_after` forgives earlier failures (the supervisor's business).
void EngineBridge::arm_stable_timer() {
  if (!options_.on_stable || options_.stable_after.count() <= 0) return;
  io_.arm(BridgeTimer::stable, io_.now() + options_.stable_after);
}

void EngineBridge::kill_group(int signal) {
  if (pid_ > 0) io_.send_signal(-pid_, signal);
}

void EngineBridge::arm_kill_timer(std::chrono::seconds after) {
  kill_step_ = KillStep::stop_kill;
  io_.arm(BridgeTimer::kill, io_.now() + after);
}

void EngineBridge::schedule_probe(std::chrono::milliseconds delay) {
  if (engine_ended_) return;
  io_.arm(BridgeTimer::probe, io_.now() + delay);
}

void EngineBridge::probe() {
  if (readiness_.deadline_passed(io_.now()) && !stopping_) {
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
    io_.send_signal(pid_, SIGTERM);
    arm_kill_timer(10s);
    return;
  }
  if (options_.rendezvous) return on_rendezvous(probe_rendezvous());
  io_.http(url_, url_.target, "", options_.probe_timeout, "",
           [this](HttpAnswer answer) { on_health(answer.status); });
}

// The next health (or rendezvous) probe: at the watchdog's pace while serving, often while the
// engine says it is coming up, at the profile's interval otherwise.
void EngineBridge::next_probe() {
  schedule_probe(readiness_.ready() ? serving_probe_interval(notifier_.watchdog_interval())
                 : io_.now() < fast_probes_until_ ? kFastProbeInterval
                                                  : options_.probe_interval);
}

void EngineBridge::on_health(std::optional<int> status) {
  if (engine_ended_ || stalling_) return;
  const bool was_ready = readiness_.ready();
  const bool was_awaiting = readiness_.awaiting_generation();
  readiness_.on_health(status, io_.now(), !liveness_ || liveness_->feed_watchdog());
  if (!was_ready && readiness_.ready()) {
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(io_.now() - started_);
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
  next_probe();
}

// The engine serves: the stable period starts, and liveness where the profile asks for it.
void EngineBridge::on_serving() {
  arm_stable_timer();
  Liveness liveness(options_.liveness, io_.now());
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
void EngineBridge::send_ready_probe() {
  ready_probe_out_ = true;
  http_exchange(options_.probe_path, options_.probe_body, options_.liveness.timeout,
                [this](HttpAnswer answer) {
                  ready_probe_out_ = false;
                  if (engine_ended_ || stalling_) return;
                  const bool generated = is_2xx(answer.status);
                  if (!generated)
                    say(answer.status
                            ? fmt::format("first generation: {} answered {}", options_.probe_path,
                                          *answer.status)
                            : fmt::format("first generation: {} gave no answer within {}s",
                                          options_.probe_path, options_.liveness.timeout.count()),
                        Level::warning);
                  const bool was_ready = readiness_.ready();
                  readiness_.on_generation(generated, io_.now());
                  if (!was_ready && readiness_.ready()) {
                    auto elapsed =
                        std::chrono::duration_cast<std::chrono::milliseconds>(io_.now() - started_);
                    say(fmt::format("engine is serving: {} generated a token after {:.1f}s",
                                    options_.probe_path, elapsed.count() / 1000.0),
                        Level::info, event(kReadyMessage));
                    on_serving();
                  }
                  flush_notifications();
                });
}

void EngineBridge::http_exchange(const std::string& target, const std::string& body,
                                 std::chrono::milliseconds timeout,
                                 std::function<void(HttpAnswer)> done) {
  // The probe and the metrics reads: the engine's API key guards them where it has one.
  io_.http(url_, target, body, timeout, options_.api_key, std::move(done));
}

void EngineBridge::schedule_liveness() {
  if (!liveness_ || engine_ended_ || stalling_) return;
  const auto wakeup = liveness_->next_wakeup();
  if (wakeup == Clock::time_point::max()) return;
  io_.arm(BridgeTimer::liveness, wakeup);
}

// Whatever is due now: a stall, or a look (metrics, then maybe the probe; or the probe).
void EngineBridge::liveness_step() {
  const auto now = io_.now();
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

void EngineBridge::on_metrics(const HttpAnswer& answer) {
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
  if (liveness_->on_metrics(sample, io_.now())) send_liveness_probe();
  after_liveness_event();
}

void EngineBridge::send_liveness_probe() {
  liveness_->on_probe_sent(io_.now());
  http_exchange(options_.probe_path, options_.probe_body, options_.liveness.timeout,
                [this](HttpAnswer answer) {
                  if (engine_ended_ || stalling_ || !liveness_) return;
                  const bool generated = is_2xx(answer.status);
                  const bool was_failing = !liveness_->feed_watchdog();
                  liveness_->on_probe(generated, io_.now());
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

void EngineBridge::after_liveness_event() {
  if (auto stall = liveness_->stalled(io_.now())) return on_stall(*stall);
  schedule_liveness();
}

// No forward progress: say so (record-exit reads the line; the dump follows it in the journal),
// ask every engine process for its Python stacks, and kill the group after the grace. The exit
// status says "stalled", whatever signal the engine then dies of.
void EngineBridge::on_stall(const StallReport& report) {
  if (stalling_ || engine_ended_) return;
  stalling_ = true;
  // Its thread dump follows in the engine's output: the line must be in the journal first.
  own_line(Level::error, stall_line(report), event(kStallMessage, true));
  notifier_.notify("STATUS=stalled: no forward progress, dumping stacks and killing the engine");
  forced_exit_ = kExitStalled;
  forced_why_ = fmt::format("the engine made no forward progress for {}s (signal {})",
                            report.still_for.count(), stall_signal_name(report.signal));
  io_.cancel(BridgeTimer::probe);
  io_.cancel(BridgeTimer::liveness);
  // No new probe goes out now; one the engine is still answering gets a moment to finish.
  // faulthandler reads every thread's frames while they run, and a thread mid-answer can crash
  // the dump before it reaches the wedged thread.
  stall_kill_at_ = io_.now() + kStallQuiesce + options_.stall_dump_grace;
  kill_step_ = KillStep::stall_abort;
  io_.arm(BridgeTimer::kill, io_.now() + kStallQuiesce);
}

// Rank 0's addresses, resolved until they resolve (a name may not resolve before the network is
// up); then the engine's process group's sockets against them.
bool EngineBridge::probe_rendezvous() {
  const Rendezvous& rendezvous = *options_.rendezvous;
  if (rendezvous_addresses_.empty())
    rendezvous_addresses_ = io_.resolve(rendezvous.host, rendezvous.port);
  if (rendezvous_addresses_.empty()) return false;
  const std::optional<int> port =
      rendezvous.any_port ? std::nullopt : std::optional<int>(static_cast<int>(rendezvous.port));
  return io_.holds_connection(pid_, rendezvous_addresses_, port);
}

void EngineBridge::on_rendezvous(bool joined) {
  if (engine_ended_) return;
  const bool was_ready = readiness_.ready();
  readiness_.on_rendezvous(joined, io_.now());
  if (!was_ready && readiness_.ready()) {
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(io_.now() - started_);
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
  next_probe();
}

// sd_notify, and the start's phase changes as lines (root's record-start reads them back).
void EngineBridge::flush_notifications() {
  for (const auto& mark : readiness_.take_phase_marks()) {
    logging::Fields fields;
    fields.kind = kPhaseMessage;
    fields.phase = std::string(start_phase_name(mark.phase));
    own_line(Level::info, phase_line(mark), fields);
  }
  for (const auto& line : readiness_.take_notifications()) notifier_.notify(line);
}

}  // namespace gl
