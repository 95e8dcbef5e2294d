// SPDX-License-Identifier: Apache-2.0
#include "supervise/unit_transition.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "catalog/journal_messages.hpp"
#include "rules/check.hpp"
#include "util/try.hpp"

namespace gl {
std::string describe_state(const UnitStatus& status) {
  if (status.load_state != "loaded") return status.load_state;
  std::string text = fmt::format("{} ({})", status.active_state, status.sub_state);
  if (status.result != "success" && !status.result.empty()) {
    text += fmt::format(", last result: {}", status.result);
    if (status.exec_main_code == 1)
      text += fmt::format(", exit status {}", status.exec_main_status);
    if (status.exec_main_code == 2 || status.exec_main_code == 3)
      text += fmt::format(", signal {}", status.exec_main_status);
  }
  return text;
}

std::string_view job_method(UnitAction action) {
  switch (action) {
    case UnitAction::start:
      return "StartUnit";
    case UnitAction::restart:
      return "RestartUnit";
    case UnitAction::none:
      break;
  }
  return {};
}

UpTransition decide_up(std::string_view installed, std::string_view rendered,
                       const UnitStatus& before, std::string_view path) {
  UpTransition transition;
  transition.running = before.running();
  transition.install = installed != rendered;
  transition.changed = !installed.empty() && installed != rendered;
  if (!transition.install && before.active_state == "active" && before.fragment_path == path)
    transition.action = UnitAction::none;
  else if (transition.running && transition.install)
    transition.action = UnitAction::restart;
  else
    transition.action = UnitAction::start;
  return transition;
}

CheckGate gate_on_check(std::vector<Finding> findings, const UpTransition& transition, bool force) {
  CheckGate gate;
  if (transition.running)
    std::erase_if(findings, [](const Finding& finding) { return finding.code == kPortTakenCode; });
  gate.errors = std::count_if(findings.begin(), findings.end(), [](const Finding& finding) {
    return finding.severity == Severity::error;
  });
  gate.refuse = gate.errors > 0 && !force;
  gate.findings = std::move(findings);
  return gate;
}

Result<StartWatch> watch_start(
    SystemdManager& manager, Timekeeper& clock, const std::string& job, const std::string& unit,
    std::chrono::seconds limit,
    const std::function<void(const std::string& phase, std::chrono::steady_clock::duration)>&
        on_phase) {
  // systemd enforces the start timeout (which `run` extends while loading progresses); this limit
  // only guards against a manager that stops telling us anything.
  const auto started = clock.steady_now();
  auto last_change = started;
  std::string last_phase;
  for (;;) {
    GL_TRY_VOID(manager.wait(std::chrono::milliseconds(250)));
    GL_TRY(auto status, manager.status(unit));
    std::string phase = status.status_text.empty()
                            ? status.active_state + " (" + status.sub_state + ")"
                            : status.status_text;
    const auto now = clock.steady_now();
    if (on_phase) on_phase(phase, now - started);
    if (phase != last_phase) {
      last_phase = phase;
      last_change = now;
    }
    if (auto result = manager.job_result(job)) return StartWatch{*result, status};
    if (now - last_change > limit) return StartWatch{std::nullopt, status};
  }
}

Result<std::string> wait_for_job(SystemdManager& manager, Timekeeper& clock, const std::string& job,
                                 std::chrono::seconds limit) {
  const auto deadline = clock.steady_now() + limit;
  while (clock.steady_now() < deadline) {
    GL_TRY_VOID(manager.wait(std::chrono::milliseconds(250)));
    if (auto result = manager.job_result(job)) return *result;
  }
  return failf("Failed to wait for job '{}': still running after {}s", job, limit.count());
}

Result<std::vector<std::string>> start_at_boot(SystemdManager& manager, const std::string& unit,
                                               bool enabled, bool runtime) {
  GL_TRY(const auto changes, manager.set_enabled(unit, enabled, runtime));
  std::vector<std::string> lines;
  for (const auto& change : changes) {
    if (change.type == "symlink")
      lines.push_back(fmt::format("Created symlink {} -> {}.", change.file, change.source));
    else if (change.type == "unlink")
      lines.push_back(fmt::format("Removed \"{}\".", change.file));
    else
      lines.push_back(fmt::format("{} {} {}", change.type, change.file, change.source));
  }
  return lines;
}

Result<UnitStop> stop_unit(SystemdManager& manager, Timekeeper& clock, const std::string& unit,
                           std::chrono::seconds limit) {
  GL_TRY(auto status, manager.status(unit));
  UnitStop stop;
  stop.before = status;
  if (status.load_state != "loaded" || status.active_state == "inactive" ||
      status.active_state == "failed")
    return stop;
  stop.was_running = true;
  GL_TRY(auto job, manager.enqueue("StopUnit", unit));
  GL_TRY(auto result, wait_for_job(manager, clock, job, limit));
  stop.job_result = result;
  return stop;
}

Result<void> reset_crash_loop(const History& history, const std::string& why, Timekeeper& clock) {
  GL_TRY_VOID(history.clear_unrecorded());
  auto current = history.state_to_update();
  if (current.state.consecutive_failures == 0 && current.problem.empty()) return {};
  SupervisorState state = current.state;
  const long long forgiven = state.consecutive_failures;
  state.consecutive_failures = 0;
  state.failures_at_last_serve = 0;
  state.deaths_after_serving = 0;
  GL_TRY_VOID(history.save(state));
  GL_TRY_VOID(history.append(SupervisorEvent{
      clock.now_usec(), std::string(kOperatorResetMessage), why,
      current.problem.empty() ? fmt::format("forgave {} failure(s); starting again", forgiven)
                              : "replaced a bad history (" + current.problem + "); starting again",
      state.gpu_level, state.host_level}));
  return {};
}

}  // namespace gl
