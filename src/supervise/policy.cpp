// SPDX-License-Identifier: Apache-2.0
#include "supervise/policy.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "catalog/journal_messages.hpp"
#include "util/duration.hpp"

namespace gl {

long long failed_starts(const SupervisorState& state) {
  return std::max(0LL, state.consecutive_failures - state.failures_at_last_serve);
}

Seconds backoff_delay(long long consecutive_failures, const RestartSettings& settings) {
  if (consecutive_failures <= 0) return Seconds{0};
  Seconds delay = settings.delay;
  for (long long i = 1; i < consecutive_failures && delay < settings.max_delay; ++i) delay *= 2;
  return std::min(delay, settings.max_delay);
}

StartDecision decide_start(const SupervisorState& state, const RestartSettings& settings) {
  StartDecision decision;
  const long long failed = failed_starts(state);
  if (settings.budget > 0 && failed >= settings.budget) {
    decision.stay_down = true;
    decision.reason =
        fmt::format("crash loop: {} failures in a row (budget {}), last {}", failed,
                    settings.budget, state.last_class.empty() ? "unknown" : state.last_class);
    return decision;
  }
  decision.delay = backoff_delay(state.consecutive_failures, settings);
  if (decision.delay.count() > 0 && failed > 0)
    decision.reason =
        fmt::format("backing off {} after {} (failure {} of {})", format_duration(decision.delay),
                    state.last_class, failed, settings.budget);
  else if (decision.delay.count() > 0)
    decision.reason = fmt::format(
        "backing off {} after {} ({} failure(s) in a row, the last after serving: not counted "
        "toward the budget)",
        format_duration(decision.delay), state.last_class, state.consecutive_failures);
  return decision;
}

StartDecision decide_start_without_history(const std::optional<std::string>& unrecorded,
                                           const std::string& unreadable,
                                           const RestartSettings& settings) {
  StartDecision decision;
  if (unrecorded) {
    decision.stay_down = true;
    decision.reason = fmt::format(
        "history unrecorded: a stop could not be recorded ({}), so the crash-loop budget cannot "
        "count",
        *unrecorded);
    return decision;
  }
  decision.delay = settings.max_delay;
  decision.reason = fmt::format("supervisor state unreadable ({}): backing off {}, the longest",
                                unreadable, format_duration(decision.delay));
  return decision;
}

StopOutcome after_stop(SupervisorState state, const Classification& stop,
                       const RestartSettings& settings, int64_t now_usec, int max_gpu_level,
                       int max_host_level, std::optional<Seconds> served) {
  StopOutcome outcome;
  std::string step;
  // A start that served past the probation served: the failures before it no longer count
  // toward the budget, whatever ends it.
  const bool served_past_probation = served && *served >= settings.probation;
  if (counts_as_failure(stop.value)) {
    ++state.consecutive_failures;
    if (served_past_probation) ++state.deaths_after_serving;
    state.last_failure_usec = now_usec;
    state.last_class = std::string(exit_class_name(stop.value));
    const MemoryKnob knob = stop.knob.value_or(MemoryKnob::mem_fraction);
    if (stop.value == ExitClass::cuda_oom && knob == MemoryKnob::kv_cache_room) {
      step =
          "; no step-down: the GPU memory share leaves no room for the KV cache (raise "
          "engine.mem_fraction, or spread the model over more GPUs)";
    } else if (settings.step_down && stop.value == ExitClass::cuda_oom &&
               knob == MemoryKnob::max_requests) {
      if (state.host_level < max_host_level)
        step = fmt::format("; step down to concurrency level {}", ++state.host_level);
      else
        step = "; concurrency already at its floor";
    } else if (settings.step_down && stop.value == ExitClass::cuda_oom) {
      if (state.gpu_level < max_gpu_level)
        step = fmt::format("; step down to GPU memory level {}", ++state.gpu_level);
      else
        step = "; GPU memory knobs already at their floor";
    }
    if (settings.step_down && stop.value == ExitClass::host_oom) {
      if (state.host_level < max_host_level)
        step = fmt::format("; step down to concurrency level {}", ++state.host_level);
      else
        step = "; concurrency already at its floor";
    }
  } else if (stop.value != ExitClass::budget &&
             !(stop.value == ExitClass::clean && state.consecutive_failures > 0)) {
    // A clean stop between failures (the group restarting this rank, an operator's stop) keeps
    // the failure the next start backs off from.
    state.last_class = std::string(exit_class_name(stop.value));
  }
  if (served_past_probation) state.failures_at_last_serve = state.consecutive_failures;

  // A terminal class's action is its row's (exit_class.cpp): systemd will not restart it.
  if (stop.value == ExitClass::clean)
    outcome.action = "none (stopped cleanly)";
  else if (auto stay_down = stay_down_action(stop.value))
    outcome.action = std::string(*stay_down);
  else if (settings.policy == "no")
    outcome.action = "stay down: restart.policy = no" + step;
  else if (settings.budget > 0 && failed_starts(state) >= settings.budget)
    outcome.action =
        fmt::format("stay down: crash-loop budget of {} failures spent{}", settings.budget, step);
  else if (counts_as_failure(stop.value) && served_past_probation) {
    // Never given up on: it served, so it restarts with the backoff, however often it dies.
    outcome.keeps_dying = settings.budget > 0 && state.consecutive_failures >= settings.budget;
    outcome.action = fmt::format(
        "restart after {} (after serving {}: not counted toward the crash-loop budget; {} "
        "failure(s) in a row){}{}",
        format_duration(backoff_delay(state.consecutive_failures, settings)),
        format_duration(*served), state.consecutive_failures, step,
        outcome.keeps_dying
            ? fmt::format("; keeps dying: {} failures in a row (restart.budget {}), {} after "
                          "serving",
                          state.consecutive_failures, settings.budget, state.deaths_after_serving)
            : "");
  } else
    outcome.action =
        fmt::format("restart after {}{}",
                    format_duration(backoff_delay(state.consecutive_failures, settings)), step);
  outcome.state = state;
  return outcome;
}

StopOutcome after_stable(SupervisorState state, int64_t now_usec) {
  StopOutcome outcome;
  std::vector<std::string> parts;
  if (state.consecutive_failures > 0)
    parts.push_back(fmt::format("forgive {} failure(s)", state.consecutive_failures));
  state.consecutive_failures = 0;
  state.failures_at_last_serve = 0;
  state.deaths_after_serving = 0;
  state.last_stable_usec = now_usec;
  if (state.gpu_level > 0)
    parts.push_back(fmt::format("step up to GPU memory level {}", --state.gpu_level));
  if (state.host_level > 0)
    parts.push_back(fmt::format("step up to concurrency level {}", --state.host_level));
  for (size_t i = 0; i < parts.size(); ++i) outcome.action += (i ? "; " : "") + parts[i];
  if (outcome.action.empty()) outcome.action = "none";
  outcome.state = state;
  return outcome;
}

}  // namespace gl

namespace gl {

std::optional<Seconds> served_since_ready(const InvocationTimes& times, int64_t now_usec) {
  if (times.active_enter_usec <= 0 || times.active_enter_usec < times.main_start_usec)
    return std::nullopt;
  // An exit stamped at the enter itself ended this invocation too (an older one's is earlier).
  const int64_t end =
      times.active_exit_usec >= times.active_enter_usec ? times.active_exit_usec : now_usec;
  return Seconds{std::max<int64_t>(0, end - times.active_enter_usec) / 1'000'000};
}

Seconds served_for(const InvocationTimes& times, const SupervisorState& state, int64_t now_usec) {
  if (times.active_enter_usec <= 0 || times.active_enter_usec < times.main_start_usec)
    return Seconds{0};
  const int64_t end =
      times.active_exit_usec > times.active_enter_usec ? times.active_exit_usec : now_usec;
  const int64_t start =
      std::max({times.active_enter_usec, state.last_failure_usec, state.last_stable_usec});
  if (end <= start) return Seconds{0};
  return Seconds{(end - start) / 1'000'000};
}

std::optional<StopOutcome> forgive_if_stable(const SupervisorState& state, Seconds served,
                                             const RestartSettings& settings, int64_t now_usec) {
  if (settings.stable_after.count() <= 0 || served < settings.stable_after) return std::nullopt;
  if (state.consecutive_failures == 0 && state.gpu_level == 0 && state.host_level == 0)
    return std::nullopt;
  return after_stable(state, now_usec);
}

std::optional<StableService> stable_service(const SupervisorState& state, Seconds served,
                                            const RestartSettings& settings, int64_t now_usec) {
  auto stable = forgive_if_stable(state, served, settings, now_usec);
  if (!stable) return std::nullopt;
  return StableService{
      stable->state,
      SupervisorEvent{now_usec, std::string(kStableMessage),
                      fmt::format("served {} (restart.stable_after {})", format_duration(served),
                                  format_duration(settings.stable_after)),
                      stable->action, stable->state.gpu_level, stable->state.host_level}};
}

std::string forgiveness_outlook(const SupervisorState& state, Seconds served, bool serving,
                                const RestartSettings& settings) {
  if (state.consecutive_failures == 0 && state.gpu_level == 0 && state.host_level == 0) return "";
  if (settings.stable_after.count() <= 0) return "never forgiven (restart.stable_after is 0)";
  if (!serving)
    return fmt::format("forgiven one level at a stop after serving {}",
                       format_duration(settings.stable_after));
  if (served >= settings.stable_after)
    return fmt::format("served {}: forgiven one level at the next stop", format_duration(served));
  return fmt::format("forgiven one level at a stop after {} more serving",
                     format_duration(settings.stable_after - served));
}

}  // namespace gl
