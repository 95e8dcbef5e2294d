// SPDX-License-Identifier: Apache-2.0
#include "supervise/start_gate.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/core.h>

#include "catalog/journal_messages.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/policy.hpp"
#include "supervise/step_down.hpp"
#include "util/duration.hpp"

namespace gl {
namespace {

// Reports who holds memory on the unit's GPUs and waits up to `limit` for them to let go; false
// when they still hold it.
bool wait_for_gpu_residue(StartGateIo& io, std::chrono::seconds limit) {
  const auto deadline = io.clock.steady_now() + limit;
  bool reported = false;
  for (;;) {
    auto processes = io.gpus.list();
    if (!processes) return true;  // no NVML here: nothing to check
    std::erase_if(*processes, [&](const GpuProcessUse& use) { return use.pid == io.gpus.own_pid; });
    if (processes->empty()) {
      if (reported) io.say("GPU memory released; starting the engine");
      return true;
    }
    if (!reported) {
      for (const auto& use : *processes)
        io.say(fmt::format("GPU residue: pid {} ({}) holds {} MiB on GPU {}", use.pid,
                           io.gpus.name_of(use.pid), use.used_mib, use.gpu));
      io.notifier.notify(fmt::format("STATUS=waiting for {} process(es) to release GPU memory",
                                     processes->size()));
      io.notifier.notify(
          fmt::format("EXTEND_TIMEOUT_USEC={}", (limit.count() + 120) * 1'000'000LL));
      reported = true;
    }
    if (io.clock.steady_now() >= deadline) {
      io.say(
          fmt::format("GPU memory still held after {}s; not starting into an OOM", limit.count()));
      return false;
    }
    io.clock.sleep(std::chrono::seconds(1));
  }
}

void tell(StartGateIo& io, std::string_view kind, const std::string& line) {
  if (io.event)
    io.event(kind, line);
  else
    io.say(line);
}

}  // namespace

StartGate gate_start(const StartGateInput& input, const History& history, StartGateIo& io) {
  StartGate gate;
  gate.argv = input.argv;
  auto unrecorded = history.unrecorded();
  auto state = history.state();
  StartDecision decision;
  std::optional<std::chrono::milliseconds> wait;  // unset: the whole delay
  if (!unrecorded || *unrecorded || !state) {
    std::optional<std::string> why;
    if (!unrecorded)
      why = unrecorded.error().message;
    else
      why = *unrecorded;
    decision = decide_start_without_history(why, state ? "" : state.error().message, input.restart);
    state = SupervisorState{};  // the profile's own settings: no step-down it cannot read
  } else {
    decision = decide_start(*state, input.restart);
    // The delay counts from the engine's end, which record-exit stamped (`run`'s exit), as
    // supervisord's does from the exit: record-exit itself, systemd's RestartSec= and this
    // start's own set-up have already spent part of it.
    if (state->last_failure_usec > 0 && decision.delay.count() > 0) {
      const auto spent = std::chrono::milliseconds(
          std::max<int64_t>(0, io.clock.now_usec() - state->last_failure_usec) / 1000);
      wait =
          std::max(std::chrono::milliseconds(0),
                   std::chrono::duration_cast<std::chrono::milliseconds>(decision.delay) - spent);
    }
  }
  if (decision.stay_down) {
    if (input.try_again.empty()) {
      tell(io, kCrashLoopStopMessage,
           fmt::format("{}; staying down. Fix the cause (`gpulaunch events {}`), then "
                       "`gpulaunch restart {}` to try again",
                       decision.reason, input.profile, input.profile));
      io.notifier.notify(fmt::format("STATUS={}; gpulaunch restart {} to try again",
                                     decision.reason, input.profile));
    } else {
      tell(io, kCrashLoopStopMessage,
           fmt::format("{}; staying down. Fix the cause, then {} to try again", decision.reason,
                       input.try_again));
      io.notifier.notify(
          fmt::format("STATUS={}; {} to try again", decision.reason, input.try_again));
    }
    gate.exit_code = kExitCrashLoop;
    return gate;
  }
  if (decision.delay.count() > 0) {
    tell(io, kBackOffMessage, decision.reason);
    io.notifier.notify("STATUS=" + decision.reason);
    // The start job's timeout keeps running while we wait: push it past wait + load.
    const long long extend = (decision.delay.count() + input.ready_timeout_s + 60) * 1'000'000LL;
    io.notifier.notify(fmt::format("EXTEND_TIMEOUT_USEC={}", extend));
    io.clock.sleep(wait.value_or(decision.delay));
  }
  if (!wait_for_gpu_residue(io, kResidueWait)) {
    gate.exit_code = kExitGpuResidue;
    return gate;
  }
  if (input.restart.step_down && (state->gpu_level > 0 || state->host_level > 0)) {
    const GpuContext gpus = io.gpus.describe ? io.gpus.describe() : GpuContext{};
    auto stepped = step_down(gate.argv, input.kind, state->gpu_level, state->host_level, gpus, {},
                             input.engine_version);
    for (const auto& change : stepped.changes)
      tell(io, kStepDownMessage,
           fmt::format("step-down (GPU memory level {}, concurrency level {}): {}",
                       state->gpu_level, state->host_level, change));
    gate.argv = std::move(stepped.argv);
  }
  gate.stable_after = std::chrono::duration_cast<Seconds>(input.restart.stable_after);
  // Forgiveness is root's, at the stop (record-exit reads how long this served from systemd).
  if (state->consecutive_failures != 0 || state->gpu_level != 0 || state->host_level != 0)
    gate.stable_message =
        fmt::format("served for restart.stable_after ({}): forgiven at the next stop",
                    format_duration(input.restart.stable_after));
  return gate;
}

}  // namespace gl
