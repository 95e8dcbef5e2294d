#pragma once
// The restart policy as pure functions of the history, the profile's [restart] section and the
// clock: systemd 252 has no RestartSteps=, so the growing delay, the crash-loop budget and the
// step-down ladder live here, and `run` and `record-exit` only apply what these decide.

#include <cstdint>
#include <string>

#include "profile/profile.hpp"
#include "supervise/exit_class.hpp"
#include "supervise/history.hpp"

namespace gl {

// 0 after no failure; then delay, 2*delay, 4*delay, ... capped at max_delay.
Seconds backoff_delay(long long consecutive_failures, const RestartSettings& settings);

struct StartDecision {
  bool stay_down = false;  // the crash-loop budget is spent
  Seconds delay{0};        // wait this long before starting the engine
  std::string reason;      // for STATUS= and the log
};

StartDecision decide_start(const SupervisorState& state, const RestartSettings& settings);

struct StopOutcome {
  SupervisorState state;
  std::string action;  // what happens next, in words, for the event
};

// Folds one classified stop into the state: counts failures, takes a step down the ladder for
// an OOM (within `max_gpu_level` / `max_host_level`).
StopOutcome after_stop(SupervisorState state, const Classification& stop,
                       const RestartSettings& settings, int64_t now_usec, int max_gpu_level,
                       int max_host_level);

// The engine served for `stable_after`: failures are forgiven and the ladder goes up one step.
StopOutcome after_stable(SupervisorState state, int64_t now_usec);

}  // namespace gl
