// SPDX-License-Identifier: Apache-2.0
#include "run/foreground.hpp"

#include <fmt/core.h>

#include "catalog/exit_codes.hpp"
#include "profile/profile_name.hpp"
#include "supervise/exit_class.hpp"
#include "supervise/quarantine.hpp"

namespace gl {

std::string_view foreground_end_name(ForegroundEnd end) {
  switch (end) {
    case ForegroundEnd::stopped:
      return "stopped";
    case ForegroundEnd::stays_down:
      return "stays down";
    case ForegroundEnd::config_error:
      return "configuration error";
    case ForegroundEnd::retry_elsewhere:
      return "retry elsewhere";
  }
  return "?";
}

std::optional<ForegroundEnd> end_after_stop(ExitClass stop, const RestartSettings& restart,
                                            size_t ranks) {
  // The engine ended on its own with 0: restart.policy = always starts it again (a group through
  // the scheduler, which starts every rank together), as a unit's Restart=always would.
  if (stop == ExitClass::clean)
    return restart.policy == "always"
               ? (ranks > 1 ? std::optional(ForegroundEnd::retry_elsewhere) : std::nullopt)
               : std::optional(ForegroundEnd::stopped);
  if (stop == ExitClass::config_error) return ForegroundEnd::config_error;
  if (stop == ExitClass::budget || stop == ExitClass::residue)
    return ForegroundEnd::retry_elsewhere;
  if (is_terminal(stop) || restart.policy == "no") return ForegroundEnd::stays_down;
  // A multi-node engine cannot survive losing a rank: the group restarts together, each rank's
  // next start gated by the history this stop was recorded in.
  if (ranks > 1) return ForegroundEnd::retry_elsewhere;
  return std::nullopt;  // the next start's gate decides the budget, the backoff, the step-down
}

ForegroundEnd end_after_refused_start(int gate_status) {
  // The budget spent, or other processes holding the GPUs: this node, now, cannot serve.
  if (gate_status == kExitCrashLoop || gate_status == kExitGpuResidue)
    return ForegroundEnd::retry_elsewhere;
  return ForegroundEnd::config_error;
}

StopInput foreground_stop_input(const EngineRun& run, const ForegroundSettings& settings) {
  StopInput input;
  // What systemd hands ExecStopPost= when `run` exits with this status (systemd
  // src/core/service.c v252, service_set_main_exit_status): exited, the number, and the result.
  input.report.unit = unit_name_for(settings.profile);
  input.report.service_result = run.status == 0 ? "success" : "exit-code";
  input.report.exit_code = "exited";
  input.report.exit_status = std::to_string(run.status);
  input.report.lines = run.lines;
  input.cgroup_oom_kills = run.cgroup_oom_kills;
  input.restart = settings.restart;
  input.kind = settings.kind;
  input.caches = settings.caches;
  input.invocation = StoppingInvocation{run.times, run.ended_usec};
  return input;
}

namespace {

// The newest stop the history holds (a group's ranks share it): who recorded it is not kept, so
// a stop is known by its time, class and evidence together.
std::optional<SupervisorEvent> newest_stop(const History& history) {
  const auto events = history.events(50);
  if (!events) return std::nullopt;
  const SupervisorEvent* stop = previous_stop_event(*events);
  return stop ? std::optional(*stop) : std::nullopt;
}

bool same_stop(const std::optional<SupervisorEvent>& a, const std::optional<SupervisorEvent>& b) {
  if (!a || !b) return !a && !b;
  return a->time_usec == b->time_usec && a->kind == b->kind && a->evidence == b->evidence;
}

}  // namespace

ForegroundEnd run_foreground(const ForegroundSettings& settings, const History& history,
                             ForegroundIo& io) {
  const StopGroup group{settings.ranks, settings.rank};
  for (;;) {
    if (io.stop_requested()) return ForegroundEnd::stopped;
    const StartGate gate = io.gate(history);
    // A stop during the backoff or the wait for GPU memory: nothing runs, nothing to record.
    if (io.stop_requested()) {
      io.say(logging::Level::info, "stopped on request before the engine started");
      return ForegroundEnd::stopped;
    }
    if (gate.exit_code) return end_after_refused_start(*gate.exit_code);
    // A group's step ends on every rank at once (both ranks run out of GPU memory, or srun ends
    // the others after one exits): the first rank to record the stop speaks for the group, so
    // one stop counts once toward the budget and steps down one level.
    const auto stop_before = settings.ranks > 1 ? newest_stop(history) : std::nullopt;
    const EngineRun run = io.run_engine(gate);
    StopDecision decision;
    {
      const auto held = io.hold_history();
      if (settings.ranks > 1)
        if (const auto recorded = newest_stop(history); !same_stop(stop_before, recorded)) {
          io.say(logging::Level::info,
                 fmt::format("rank {}: the group's stop is recorded already ({}: {}); this "
                             "rank's end (status {}) is not counted again",
                             settings.rank, recorded->kind, recorded->evidence, run.status));
          if (io.stop_requested()) return ForegroundEnd::stopped;
          const auto stop = parse_exit_class(recorded->kind).value_or(ExitClass::crash);
          return end_after_stop(stop, settings.restart, settings.ranks)
              .value_or(ForegroundEnd::retry_elsewhere);
        }
      decision = record_exit(foreground_stop_input(run, settings), group, history, nullptr, nullptr,
                             io.clock(), io.actions());
    }
    io.recorded(history, decision);
    // Drained on request: whatever the engine's end was classified as, the stop was asked for.
    if (io.stop_requested()) return ForegroundEnd::stopped;
    if (auto end = end_after_stop(decision.stop.value, settings.restart, settings.ranks))
      return *end;
  }
}

}  // namespace gl
