// SPDX-License-Identifier: Apache-2.0
#include "run/readiness.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace gl {

std::chrono::milliseconds serving_probe_interval(
    std::optional<std::chrono::microseconds> watchdog) {
  using std::chrono::milliseconds;
  if (!watchdog) return milliseconds{10000};
  return std::max(std::chrono::duration_cast<milliseconds>(*watchdog / 4), milliseconds{100});
}

Readiness::Readiness(ReadinessConfig config, Clock::time_point started)
    : config_(config), started_(started), deadline_(started + config.ready_timeout) {
  publish_status();
}

void Readiness::on_output_line(std::string_view line, Clock::time_point now) {
  if (ready_) return;
  auto update = parse_progress_line(line);
  if (!update) return;
  const bool advanced = update->phase != phase_ || (update->percent && update->percent != percent_);
  if (update->phase != phase_) percent_.reset();
  phase_ = update->phase;
  if (update->percent) percent_ = update->percent;
  if (!advanced) return;
  if (deadline_ - now < config_.progress_grace) {
    deadline_ = now + config_.progress_grace;
    // systemd's own start timeout, a minute behind ours so our message comes first.
    auto extend = std::chrono::duration_cast<std::chrono::microseconds>(deadline_ - now) +
                  std::chrono::minutes(1);
    notifications_.push_back(fmt::format("EXTEND_TIMEOUT_USEC={}", extend.count()));
  }
  publish_status();
}

void Readiness::on_health(std::optional<int> http_status, Clock::time_point, bool feed_watchdog) {
  const bool good = http_status == 200;
  if (!ready_ && config_.ready_on_generation) {
    if (good && !health_ok_) {
      health_ok_ = true;
      publish_status();
    }
    return;
  }
  if (ready_ && !feed_watchdog) return;
  on_answer(good);
}

bool Readiness::awaiting_generation() const {
  return !ready_ && config_.ready_on_generation && health_ok_;
}

void Readiness::on_generation(bool generated, Clock::time_point) {
  if (generated && awaiting_generation()) on_answer(true);
}

void Readiness::on_rendezvous(bool joined, Clock::time_point) {
  on_answer(joined);
}

void Readiness::on_answer(bool good) {
  if (!good) return;
  if (!ready_) {
    ready_ = true;
    phase_ = Phase::serving;
    percent_.reset();
    publish_status();
    notifications_.push_back("READY=1");
    return;
  }
  notifications_.push_back("WATCHDOG=1");
}

std::string Readiness::status_text() const {
  // A headless rank serves no requests itself: what it does once ready is hold its place.
  if (ready_ && config_.headless) return std::string(kHeadlessJoinedStatus);
  if (awaiting_generation()) return std::string(kWaitingForGenerationStatus);
  std::string text{phase_name(phase_)};
  if (percent_) text += fmt::format(" {}%", *percent_);
  return text;
}

void Readiness::publish_status() {
  std::string text = status_text();
  if (text == last_status_) return;
  last_status_ = text;
  notifications_.push_back("STATUS=" + text);
}

std::vector<std::string> Readiness::take_notifications() {
  std::vector<std::string> taken;
  taken.swap(notifications_);
  return taken;
}

}  // namespace gl
