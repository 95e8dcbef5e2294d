// SPDX-License-Identifier: Apache-2.0
#include "supervise/up_sequence.hpp"

#include <fmt/core.h>

#include "profile/toml_parse.hpp"
#include "util/atomic_file.hpp"
#include "util/duration.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// The snapshot `run` read before this `up`, for a rollback; "" when there was none.
// Read before anything is written, so a failure to read it changes nothing.
Result<std::string> previous_snapshot(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, error))) return std::string();
  return read_file(path, kMaxProfileBytes);
}

Result<void> write_in_place(const std::filesystem::path& path, std::string_view text) {
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error)
    return failf("Failed to create '{}': {}", path.parent_path().string(), error.message());
  return write_file_atomically(path, std::string(text));
}

// A changed unit that failed: kept as it failed (--no-rollback), or the previous one put back.
int keep_or_roll_back(const UpRequest& request, SystemdManager& manager, Timekeeper& clock,
                      const History& history, const PreviousUnit& previous,
                      std::chrono::seconds limit, UpFailure why, UpOutput& output) {
  if (request.no_rollback) {
    output.kept_failed(why);
    return 1;
  }
  output.rolling_back(why);
  auto rolled =
      roll_back(manager, clock, history,
                RollbackPlaces{request.unit, request.unit_file, request.snapshot}, previous, limit);
  if (rolled)
    output.rolled_back(*rolled);
  else
    output.rollback_failed(rolled.error());
  return 1;  // what the operator asked for did not happen
}

// The start (or restart) job enqueued and watched until it ends, as `up` and `restart` both say
// it: progress, then the failure or the time to ready. A start that did not become ready has its
// metrics written here (a ready one's were written by record-start's timer).
struct Watched {
  bool ready = false;
  std::string failure;  // when not ready
  int64_t started_usec = 0;
};

Result<Watched> start_and_watch(UnitAction action, const std::string& unit,
                                std::chrono::seconds limit, SystemdManager& manager,
                                Timekeeper& clock, UpActions& actions, UpOutput& output) {
  output.starting(action);
  const auto started = clock.steady_now();
  Watched watched_start;
  watched_start.started_usec = clock.now_usec();
  GL_TRY(const std::string job, manager.enqueue(job_method(action), unit));
  // Type=notify: the start job completes only when `run` has seen the health endpoint answer 200.
  auto watched =
      watch_start(manager, clock, job, unit, limit,
                  [&](const std::string& phase, std::chrono::steady_clock::duration elapsed) {
                    output.progress(phase, elapsed);
                  });
  output.watch_ended();
  watched_start.ready = watched && watched->job_result == "done";
  if (!watched_start.ready) actions.write_metrics();
  GL_TRY(const auto result, std::move(watched));
  if (!watched_start.ready) {
    watched_start.failure =
        result.job_result
            ? fmt::format("job {}; {}", *result.job_result, describe_state(result.last))
            : fmt::format("no progress for {}", format_duration(limit));
    output.start_failed(watched_start.failure);
    return watched_start;
  }
  output.ready(std::chrono::duration_cast<std::chrono::milliseconds>(clock.steady_now() - started));
  return watched_start;
}

// The start's phases, as record-start (ExecStartPost=, done before the job) kept them.
std::optional<StartTimeline> this_start(const History& history, int64_t started_usec) {
  if (auto recorded = history.state();
      recorded && recorded->last_start && recorded->last_start->process_start_usec >= started_usec)
    return *recorded->last_start;
  return std::nullopt;
}

}  // namespace

Result<int> run_restart(const RestartRequest& request, SystemdManager& manager, Timekeeper& clock,
                        const History& history, UpActions& actions, UpOutput& output) {
  // The documented way out of a crash loop: the operator says try again.
  if (auto reset = reset_crash_loop(history, "gpulaunch restart", clock); !reset)
    output.warning(reset.error().message);
  GL_TRY(const auto watched, start_and_watch(UnitAction::restart, request.unit,
                                             request.ready_window + request.stop_window, manager,
                                             clock, actions, output));
  if (!watched.ready) return 1;
  output.done(this_start(history, watched.started_usec));
  return 0;
}

Result<int> run_up(const UpRequest& request, const UpTransition& transition,
                   SystemdManager& manager, Timekeeper& clock, const History& history,
                   UpActions& actions, UpOutput& output) {
  // `up` means up after a reboot too: the unit's [Install] links, made where the unit lives.
  auto enable = [&]() -> Result<bool> {
    GL_TRY(const auto changes, start_at_boot(manager, request.unit, true, request.runtime));
    output.enabled(changes);
    return !changes.empty();
  };
  if (transition.action == UnitAction::none) {
    // An installation made before `up` enabled its unit gets its links now.
    GL_TRY(const bool enabled, enable());
    if (enabled) GL_TRY_VOID(manager.reload());
    output.unchanged();
    return 0;
  }
  // The check, before anything changes.
  const CheckGate check = gate_on_check(actions.check(), transition, request.force);
  output.checked(check);
  if (check.refuse) return 1;
  if (transition.changed) output.unit_changed(request.installed, request.rendered);

  GL_TRY_VOID(actions.prepare_state());
  GL_TRY(std::string snapshot_before, previous_snapshot(request.snapshot));
  PreviousUnit previous{request.installed, std::move(snapshot_before), transition.running, ""};
  GL_TRY_VOID(write_in_place(request.snapshot, request.snapshot_text));
  if (transition.install) GL_TRY_VOID(write_in_place(request.unit_file, request.rendered));
  GL_TRY(const bool enabled, enable());
  if (transition.install || enabled) GL_TRY_VOID(manager.reload());

  // Starting by hand is the operator's word: an earlier crash loop no longer holds it down.
  if (auto reset = reset_crash_loop(history, "gpulaunch up", clock); !reset)
    output.warning(reset.error().message);
  // A restart first stops the running engine, which drains.
  const std::chrono::seconds limit =
      request.ready_window +
      (transition.action == UnitAction::restart ? request.stop_window : std::chrono::seconds{0});
  GL_TRY(const auto watched,
         start_and_watch(transition.action, request.unit, limit, manager, clock, actions, output));
  if (!watched.ready) {
    previous.failure = watched.failure;
    if (!transition.changed) return 1;  // nothing to roll back to
    return keep_or_roll_back(request, manager, clock, history, previous, limit,
                             UpFailure::not_ready, output);
  }

  // A changed unit that serves must still answer as recorded (the upgrade gate).
  if (const auto gated = actions.gate(transition.changed); gated && gate_rolls_back(*gated)) {
    previous.failure = gated->summary();
    output.gate_failed(previous.failure);
    const int code = keep_or_roll_back(request, manager, clock, history, previous, limit,
                                       UpFailure::gate_failed, output);
    if (!request.no_rollback) actions.write_metrics();
    return code;
  }
  output.done(this_start(history, watched.started_usec));
  return 0;
}

}  // namespace gl
