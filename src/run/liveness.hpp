// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether a serving engine still makes forward progress (server.liveness), as a pure state
// machine beside run/readiness: generation probe answers, metrics samples and the clock go in;
// "look now (metrics, probe)", "feed the watchdog?" and "stalled: StallReport" come out.
// bridge.cpp asks the engine and feeds the answers in.
//
// Rules: one look per interval; a look reads the metrics where the engine has them and sends
// the generation probe ("generate") only when no probe is out and the token counter did not
// move since the last look. A probe that got no 2xx within the timeout, with no progress
// since it was sent, fails; the failure lasting a timeout is a stall (signal generate).
// Requests in flight while the token counter stood still for a timeout is a stall (signal
// metrics), a probe still queued behind them or not. Tokens that keep moving are never a stall,
// however slow a request or a probe.

#include <chrono>
#include <optional>

#include "catalog/engines.hpp"
#include "run/readiness.hpp"
#include "supervise/stall_report.hpp"

namespace gl {

struct LivenessConfig {
  LivenessMode mode = LivenessMode::health;
  std::chrono::seconds interval{30};
  std::chrono::seconds timeout{60};
  bool has_probe = false;  // a generation probe to send
  // A metrics endpoint with a token counter, and an in-flight gauge or not (without one the
  // counter only vouches for a probe that waits behind it).
  bool has_metrics = false;
};

// One read of the engine's metrics; a value is nullopt when the exposition lacks it.
struct MetricsSample {
  std::optional<double> in_flight;
  std::optional<double> tokens;
};

class Liveness {
 public:
  // `serving_since`: when the engine became ready; the first look is an interval later.
  Liveness(LivenessConfig config, Clock::time_point serving_since);

  // Whether any liveness signal runs ("generate" or "metrics" with a probe or metrics).
  bool active() const;

  struct Look {
    bool metrics = false;  // read the metrics, then on_metrics() says whether to probe
    bool probe = false;    // send the generation probe now (no metrics to read first)
  };
  // When the next look is due, or a stall could be declared: wake up then.
  Clock::time_point next_wakeup() const;
  // At or after next_wakeup(): what to ask now (nothing when only a deadline woke us).
  Look look(Clock::time_point now);
  // The metrics answer of a look (nullopt: no 200 answer); returns whether to send the probe.
  bool on_metrics(const std::optional<MetricsSample>& sample, Clock::time_point now);
  // The probe was sent / its result: a 2xx answer (true), or another status or none within the
  // timeout (false).
  void on_probe_sent(Clock::time_point now);
  void on_probe(bool generated, Clock::time_point now);

  // Health 200 feeds systemd's watchdog only while this holds: no failed probe unanswered by
  // progress, and no stall.
  bool feed_watchdog() const;
  // The stall, once one of the rules says so (and from then on).
  std::optional<StallReport> stalled(Clock::time_point now);

 private:
  std::optional<Clock::time_point> metrics_deadline() const;
  std::optional<Clock::time_point> generate_deadline() const;
  void progress(Clock::time_point now);
  StallReport report(StallSignal signal, Clock::time_point since, Clock::time_point now) const;

  LivenessConfig config_;
  Clock::time_point next_look_;
  Clock::time_point last_progress_;
  // Metrics.
  std::optional<double> tokens_;
  std::optional<double> in_flight_;
  Clock::time_point tokens_moved_at_{};
  std::optional<Clock::time_point> in_flight_since_;
  bool moved_since_look_ = false;
  // Generation probe.
  std::optional<Clock::time_point> probe_sent_at_;
  std::optional<Clock::time_point> failing_since_;
  std::optional<StallReport> stall_;
};

}  // namespace gl
