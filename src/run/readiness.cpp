// SPDX-License-Identifier: Apache-2.0
#include "run/readiness.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "util/byte_size.hpp"

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
  const bool advanced =
      update->phase != phase_ || update->ends || (update->percent && update->percent != percent_);
  if (update->phase != phase_) percent_.reset();
  phase_ = update->phase;
  if (update->percent) percent_ = update->percent;
  // Serving is the end of the start, not one of its phases.
  if (update->phase != Phase::serving) {
    if (update->ends)
      end_phase(update->phase);
    else
      begin_phase(update->phase);
  }
  if (!advanced) return;
  growth_status_.clear();
  note_progress(now);
  publish_status();
}

void Readiness::note_progress(Clock::time_point now) {
  if (deadline_ - now >= config_.progress_grace) return;
  deadline_ = now + config_.progress_grace;
  // systemd's own start timeout, a minute behind ours so our message comes first.
  auto extend = std::chrono::duration_cast<std::chrono::microseconds>(deadline_ - now) +
                std::chrono::minutes(1);
  notifications_.push_back(fmt::format("EXTEND_TIMEOUT_USEC={}", extend.count()));
}

void Readiness::begin_phase(Phase phase) {
  if (open_phase_ == phase) return;
  // A JIT session inside a phase the engine named: that phase resumes when the session ends.
  interrupted_.reset();
  if (phase == Phase::jit_compile && open_phase_ && open_phase_ != Phase::process)
    interrupted_ = open_phase_;
  open_phase_ = phase;
  marks_.push_back({PhaseMark::Kind::begins, phase});
}

void Readiness::end_phase(Phase phase) {
  if (open_phase_ == phase) {
    marks_.push_back({PhaseMark::Kind::ends, phase});
    open_phase_.reset();
    if (phase == Phase::jit_compile && interrupted_) begin_phase(*interrupted_);
  } else if (open_phase_ == Phase::jit_compile && interrupted_ == phase) {
    // The phase the JIT session ran inside ended: so did the session.
    marks_.push_back({PhaseMark::Kind::ends, Phase::jit_compile});
    open_phase_.reset();
    interrupted_.reset();
  }
}

void Readiness::on_cache_sizes(const std::vector<CacheSize>& sizes, Clock::time_point now) {
  if (ready_) return;
  if (!have_cache_baseline_) {
    have_cache_baseline_ = true;
    for (const auto& size : sizes) cache_baseline_[size.name] = cache_last_[size.name] = size.bytes;
    return;
  }
  const CacheSize* grown = nullptr;
  std::uint64_t largest = 0;
  for (const auto& size : sizes) {
    const std::uint64_t last = cache_last_[size.name];  // 0: not there before
    if (size.bytes > last && size.bytes - last > largest) {
      largest = size.bytes - last;
      grown = &size;
    }
    cache_last_[size.name] = size.bytes;
  }
  if (!grown) return;
  const std::uint64_t baseline = cache_baseline_[grown->name];
  growth_status_ = fmt::format("{}: {} +{}", phase_name(Phase::jit_compile), grown->name,
                               format_bytes(grown->bytes > baseline ? grown->bytes - baseline : 0));
  // Growth with no phase the engine named in progress is a JIT build of its own; inside one it
  // named (weights, graph capture, torch.compile) it is that phase's.
  if (!open_phase_ || open_phase_ == Phase::process) begin_phase(Phase::jit_compile);
  note_progress(now);
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
    growth_status_.clear();
    marks_.push_back({PhaseMark::Kind::ready, open_phase_.value_or(Phase::health)});
    open_phase_.reset();
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
  if (!ready_ && !growth_status_.empty()) return growth_status_;
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

std::vector<PhaseMark> Readiness::take_phase_marks() {
  std::vector<PhaseMark> taken;
  taken.swap(marks_);
  return taken;
}

std::vector<std::string> Readiness::take_notifications() {
  std::vector<std::string> taken;
  taken.swap(notifications_);
  return taken;
}

}  // namespace gl
