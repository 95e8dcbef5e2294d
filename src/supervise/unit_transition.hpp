// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `up`, `down` and `restart` decide about a profile's unit and do to it through the systemd
// manager: leave an unchanged running unit alone, restart a running one whose unit changed, start
// one that is not running; refuse on the check's errors (a port taken by someone else, not by our
// own running engine); stop only what runs; the operator's start ends a crash loop. cli/ prints.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/finding.hpp"
#include "supervise/history.hpp"
#include "systemd/manager.hpp"
#include "util/timekeeper.hpp"

namespace gl {

enum class UnitAction { none, start, restart };

// "active (running)", "failed (exit-code, status 78)", ...
std::string describe_state(const UnitStatus& status);

// "StartUnit", "RestartUnit" (the manager's method); empty for none.
std::string_view job_method(UnitAction action);

struct UpTransition {
  UnitAction action = UnitAction::start;
  bool install = false;  // write the rendered unit, then reload the manager
  bool changed = false;  // an installed unit is replaced: show what changed
  bool running = false;  // active, activating or reloading before `up`
};

// `installed`: the unit file's text now ("" when there is none); `rendered`: what `up` would
// install at `path`; `before`: the unit as the manager has it.
UpTransition decide_up(std::string_view installed, std::string_view rendered,
                       const UnitStatus& before, std::string_view path);

struct CheckGate {
  std::vector<Finding> findings;  // to show
  long long errors = 0;
  bool refuse = false;  // errors and no --force
};

// The check before anything changes. Our own running engine holds the port: not a conflict.
CheckGate gate_on_check(std::vector<Finding> findings, const UpTransition& transition, bool force);

// `up`'s wait for the start job: Type=notify, so it completes once `run` reported READY=1.
// `on_phase` sees the unit's STATUS= (or its state) and the time since the start at every poll.
struct StartWatch {
  std::optional<std::string> job_result;  // nullopt: nothing changed for `limit`
  UnitStatus last;
};
Result<StartWatch> watch_start(
    SystemdManager& manager, Timekeeper& clock, const std::string& job, const std::string& unit,
    std::chrono::seconds limit,
    const std::function<void(const std::string& phase, std::chrono::steady_clock::duration)>&
        on_phase);

// Waits for a job to finish, up to `limit`; returns its result ("done", "failed", ...).
Result<std::string> wait_for_job(SystemdManager& manager, Timekeeper& clock, const std::string& job,
                                 std::chrono::seconds limit);

// `down`: stops the unit when it runs.
struct UnitStop {
  bool was_running = false;
  std::string job_result;  // when it was running
  UnitStatus before;
};
Result<UnitStop> stop_unit(SystemdManager& manager, Timekeeper& clock, const std::string& unit,
                           std::chrono::seconds limit);

// The operator's word (`up`, `restart`) ends a crash loop: failures are forgiven (the step-down
// levels stay) and an operator-reset event says so. Nothing is written when there is nothing to
// forgive.
Result<void> reset_crash_loop(const History& history, const std::string& why, Timekeeper& clock);

// Whether the boot starts the unit (its [Install] links: `up` enables what it starts, `down`
// disables what it stops, so a reboot brings back exactly what the operator left up). Returns
// what changed, one line each as systemctl says it; the manager sees it at the next reload.
Result<std::vector<std::string>> start_at_boot(SystemdManager& manager, const std::string& unit,
                                               bool enabled, bool runtime);

}  // namespace gl
