// SPDX-License-Identifier: Apache-2.0
#include "run/liveness.hpp"

#include <algorithm>
#include <cmath>

namespace gl {

Liveness::Liveness(LivenessConfig config, Clock::time_point serving_since)
    : config_(config), next_look_(serving_since + config.interval), last_progress_(serving_since) {}

bool Liveness::active() const {
  if (config_.mode == LivenessMode::generate) return config_.has_probe || config_.has_metrics;
  if (config_.mode == LivenessMode::metrics) return config_.has_metrics;
  return false;
}

std::optional<Clock::time_point> Liveness::metrics_deadline() const {
  // Requests in flight since in_flight_since_, tokens still since tokens_moved_at_: the later
  // of the two starts the clock (a request that just arrived has had no time to produce any).
  if (!config_.has_metrics || !tokens_ || !in_flight_ || *in_flight_ <= 0 || !in_flight_since_)
    return std::nullopt;
  return std::max(tokens_moved_at_, *in_flight_since_) + config_.timeout;
}

std::optional<Clock::time_point> Liveness::generate_deadline() const {
  std::optional<Clock::time_point> deadline;
  if (failing_since_) deadline = *failing_since_ + config_.timeout;
  if (probe_sent_at_ && last_progress_ < *probe_sent_at_) {
    const auto unanswered = *probe_sent_at_ + config_.timeout;
    deadline = deadline ? std::min(*deadline, unanswered) : unanswered;
  }
  return deadline;
}

Clock::time_point Liveness::next_wakeup() const {
  if (!active() || stall_) return Clock::time_point::max();
  Clock::time_point wakeup = next_look_;
  for (const auto& deadline : {metrics_deadline(), generate_deadline()})
    if (deadline) wakeup = std::min(wakeup, *deadline);
  return wakeup;
}

Liveness::Look Liveness::look(Clock::time_point now) {
  if (!active() || stall_ || now < next_look_) return {};
  next_look_ = now + config_.interval;
  if (config_.has_metrics) return {.metrics = true, .probe = false};
  const bool probe = config_.mode == LivenessMode::generate && config_.has_probe && !probe_sent_at_;
  return {.metrics = false, .probe = probe};
}

void Liveness::progress(Clock::time_point now) {
  last_progress_ = now;
  failing_since_.reset();
}

bool Liveness::on_metrics(const std::optional<MetricsSample>& sample, Clock::time_point now) {
  bool moved = false;
  if (sample && sample->tokens) {
    if (!tokens_) {
      tokens_moved_at_ = now;  // the first reading: still since now, as far as we know
    } else if (*sample->tokens != *tokens_) {
      // A counter only grows; one that went down was reset, which is movement too.
      tokens_moved_at_ = now;
      moved = true;
      progress(now);
    }
    tokens_ = sample->tokens;
  }
  if (sample) {
    in_flight_ = sample->in_flight;
    if (in_flight_ && *in_flight_ > 0) {
      if (!in_flight_since_) in_flight_since_ = now;
    } else {
      in_flight_since_.reset();
    }
  }
  // No probe while tokens move: the engine just proved it generates.
  return config_.mode == LivenessMode::generate && config_.has_probe && !probe_sent_at_ && !moved &&
         !stall_;
}

void Liveness::on_probe_sent(Clock::time_point now) {
  probe_sent_at_ = now;
}

void Liveness::on_probe(bool generated, Clock::time_point now) {
  if (!probe_sent_at_) return;
  const Clock::time_point sent = *probe_sent_at_;
  probe_sent_at_.reset();
  if (generated) return progress(now);
  // Tokens that moved after the probe went out answer for the engine; a probe that lost its
  // place behind them is no failure.
  if (last_progress_ >= sent) return;
  if (!failing_since_) failing_since_ = sent;
}

bool Liveness::feed_watchdog() const {
  return !stall_ && !failing_since_;
}

StallReport Liveness::report(StallSignal signal, Clock::time_point since,
                             Clock::time_point now) const {
  StallReport report;
  report.signal = signal;
  report.still_for = std::chrono::duration_cast<Seconds>(now - since);
  if (in_flight_) report.in_flight = std::llround(*in_flight_);
  report.tokens = tokens_;
  return report;
}

std::optional<StallReport> Liveness::stalled(Clock::time_point now) {
  if (stall_ || !active()) return stall_;
  if (auto deadline = metrics_deadline(); deadline && now >= *deadline)
    stall_ = report(StallSignal::metrics, tokens_moved_at_, now);
  else if (auto deadline = generate_deadline(); deadline && now >= *deadline)
    stall_ = report(StallSignal::generate, last_progress_, now);
  return stall_;
}

}  // namespace gl
