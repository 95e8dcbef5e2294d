// SPDX-License-Identifier: Apache-2.0
#include "supervise/rollback.hpp"

#include <fmt/core.h>

#include "catalog/journal_messages.hpp"
#include "supervise/unit_transition.hpp"
#include "util/atomic_file.hpp"
#include "util/try.hpp"

namespace gl {

Result<Rollback> roll_back(SystemdManager& manager, Timekeeper& clock, const History& history,
                           const RollbackPlaces& places, const PreviousUnit& previous,
                           std::chrono::seconds limit) {
  Rollback rollback;
  GL_TRY_VOID(write_file_atomically(places.unit_file, previous.unit_text));
  if (previous.snapshot_text.empty()) {
    std::error_code ignored;
    std::filesystem::remove(places.snapshot, ignored);
  } else {
    GL_TRY_VOID(write_file_atomically(places.snapshot, previous.snapshot_text));
  }
  GL_TRY_VOID(manager.reload());
  // The failed version's stops are not the previous version's: its budget starts afresh.
  if (auto reset = reset_crash_loop(history, "gpulaunch up: rollback", clock); !reset)
    rollback.warnings.push_back(reset.error().message);
  const auto levels = history.state();
  if (auto appended = history.append(SupervisorEvent{
          clock.now_usec(), std::string(kRolledBackMessage), previous.failure,
          previous.was_running ? "previous unit and profile snapshot restored; restarting it"
                               : "previous unit and profile snapshot restored; left stopped",
          levels ? levels->gpu_level : 0, levels ? levels->host_level : 0});
      !appended)
    rollback.warnings.push_back(appended.error().message);
  if (!previous.was_running) {
    GL_TRY_VOID(stop_unit(manager, clock, places.unit, limit));
    return rollback;
  }
  const auto started = clock.steady_now();
  GL_TRY(const std::string job, manager.enqueue(job_method(UnitAction::restart), places.unit));
  GL_TRY(const StartWatch watched,
         watch_start(manager, clock, job, places.unit, limit, [](auto&&...) {}));
  if (watched.job_result != "done")
    return failf("the previous unit did not become ready either: {}",
                 watched.job_result ? "job " + *watched.job_result : std::string("no progress"));
  rollback.restarted = true;
  rollback.ready_after =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock.steady_now() - started);
  return rollback;
}

}  // namespace gl
