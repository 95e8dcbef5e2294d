// SPDX-License-Identifier: Apache-2.0
#pragma once
// The restart policy as pure functions of the history, the profile's [restart] section and the
// clock: systemd 252 has no RestartSteps=, so the growing delay, the crash-loop budget and the
// step-down ladder live here, and `run` and `record-exit` only apply what these decide.

#include <cstdint>
#include <optional>
#include <string>

#include "profile/profile.hpp"
#include "supervise/exit_class.hpp"
#include "supervise/history.hpp"

namespace gl {

// Starts in a row that failed to serve (never ready, or died within restart.probation of
// READY=1): what restart.budget counts. A start that served past the probation ends the run.
long long failed_starts(const SupervisorState& state);

// 0 after no failure; then delay, 2*delay, 4*delay, ... capped at max_delay.
Seconds backoff_delay(long long consecutive_failures, const RestartSettings& settings);

struct StartDecision {
  bool stay_down = false;  // the crash-loop budget is spent
  Seconds delay{0};        // wait this long before starting the engine
  std::string reason;      // for STATUS= and the log
};

StartDecision decide_start(const SupervisorState& state, const RestartSettings& settings);

// A start when the history cannot be trusted: `unrecorded` (record-exit could not record a stop)
// stays down, so a full disk cannot turn the crash-loop budget off; an unreadable state (which
// only root can fix, at the next stop) waits the longest backoff and starts at the profile's own
// settings.
StartDecision decide_start_without_history(const std::optional<std::string>& unrecorded,
                                           const std::string& unreadable,
                                           const RestartSettings& settings);

struct StopOutcome {
  SupervisorState state;
  std::string action;  // what happens next, in words, for the event
  // A death after serving past restart.probation while the failures in a row reached
  // restart.budget: restarted anyway, and said loudly (the journal's keeps-dying entry).
  bool keeps_dying = false;
};

// Folds one classified stop into the state: counts failures, takes a step down the ladder for
// an OOM (within `max_gpu_level` / `max_host_level`). `served` is how long the stopped
// invocation served from READY=1 (served_since_ready), nullopt when it never became ready. A
// failure within restart.probation of READY=1 (or before it) is a failed start and counts toward
// restart.budget; a later one is not counted and restarts after the backoff, whatever the
// budget, and the action says "after serving 14min". Failures in a row and the backoff count
// both; the step-down applies to both.
StopOutcome after_stop(SupervisorState state, const Classification& stop,
                       const RestartSettings& settings, int64_t now_usec, int max_gpu_level,
                       int max_host_level, std::optional<Seconds> served = std::nullopt);

// The engine served for `stable_after`: failures are forgiven and the ladder goes up one step.
StopOutcome after_stable(SupervisorState state, int64_t now_usec);

// systemd's timestamps of the invocation that is stopping (or running), realtime microseconds.
struct InvocationTimes {
  int64_t main_start_usec = 0;    // ExecMainStartTimestamp: `run` started
  int64_t active_enter_usec = 0;  // ActiveEnterTimestamp: READY=1, the model served
  int64_t active_exit_usec = 0;   // ActiveExitTimestamp: it stopped serving
};

// How long the invocation served from READY=1 to when it stopped serving (or to `now` while it
// still serves); nullopt when it never became ready (no ActiveEnterTimestamp of its own). What
// restart.probation is measured against.
std::optional<Seconds> served_since_ready(const InvocationTimes& times, int64_t now_usec);

// How long the invocation served since the history last changed: from READY=1 (or a failure or
// forgiveness recorded later, e.g. another rank's) to when it stopped serving, or to `now` while
// it still serves. Zero when it never became ready (a stale ActiveEnterTimestamp from an earlier
// invocation predates this one's main process).
Seconds served_for(const InvocationTimes& times, const SupervisorState& state, int64_t now_usec);

// At a stop (record-exit, peer-failed), before the stop itself is folded in: an invocation that
// served for restart.stable_after forgives the failures before it and steps up one level.
// nullopt when it did not serve that long or there is nothing to forgive.
std::optional<StopOutcome> forgive_if_stable(const SupervisorState& state, Seconds served,
                                             const RestartSettings& settings, int64_t now_usec);

// forgive_if_stable's answer with the "stable" event that records it, as both record-exit and
// peer-failed append it: the state forgiven, and the event naming how long it served.
struct StableService {
  SupervisorState state;
  SupervisorEvent event;
};
std::optional<StableService> stable_service(const SupervisorState& state, Seconds served,
                                            const RestartSettings& settings, int64_t now_usec);

// For `status`: when the current levels and failures will be forgiven, in words ("" when there
// is nothing to forgive).
std::string forgiveness_outlook(const SupervisorState& state, Seconds served, bool serving,
                                const RestartSettings& settings);

}  // namespace gl
