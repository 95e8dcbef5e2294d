// SPDX-License-Identifier: Apache-2.0
#pragma once
// systemd's manager over D-Bus, behind a narrow interface: the CLI's lifecycle commands use it,
// tests can stand in for it. The real one speaks sd-bus (manager.cpp is the only file that
// includes it).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "systemd/bus_property.hpp"
#include "util/error.hpp"

namespace gl {

enum class ManagerScope { system, user };

// Up, or on its way up (ActiveState=): what `up` restarts rather than starts, and what a group
// takes down with a failed rank.
inline bool is_running_state(std::string_view active_state) {
  return active_state == "active" || active_state == "activating" || active_state == "reloading";
}

struct UnitStatus {
  std::string name;
  std::string load_state;    // loaded, not-found, ...
  std::string active_state;  // active, activating, failed, ...
  std::string sub_state;     // running, start, auto-restart, ...
  std::string result;        // success, exit-code, signal, timeout, watchdog, oom-kill, ...
  std::string status_text;   // STATUS= from the unit's main process
  std::string fragment_path;
  // DropInPaths: the drop-ins systemd read for the unit (`systemctl edit`'s among them), in the
  // order it applied them.
  std::vector<std::string> drop_in_paths{};
  uint32_t main_pid = 0;
  uint32_t restarts = 0;           // NRestarts
  int32_t exec_main_code = 0;      // CLD_EXITED (1), CLD_KILLED (2), CLD_DUMPED (3)
  int32_t exec_main_status = 0;    // exit status or signal number
  uint64_t active_enter_usec = 0;  // realtime, 0 when never active
  uint64_t active_exit_usec = 0;   // realtime the unit last left the active state
  uint64_t state_change_usec = 0;  // realtime of the last state change
  uint64_t main_start_usec = 0;    // realtime the current (or last) main process started
  uint64_t main_exit_usec = 0;     // realtime the last main process exited (ExecMainExitTimestamp)
  // WatchdogTimestamp (org.freedesktop.systemd1.Service; systemd src/core/dbus-service.c, v252):
  // realtime of the last WATCHDOG=1 the service sent, or of its start finishing (READY=1 for
  // Type=notify; service.c's service_enter_start_post resets it too); 0 when never.
  uint64_t watchdog_usec = 0;
  // ExecStart= of a service as the manager loaded it (its drop-ins applied): the first command's
  // argv, argv[0] included; empty for a unit that is not a loaded service.
  std::vector<std::string> exec_start{};

  bool running() const { return is_running_state(active_state); }
  // The main process sent READY=1: active, or still activating in start-post, where systemd
  // (service.c, service_enter_start_post, v252) runs ExecStartPost= (record-start) only after a
  // Type=notify service's READY=1.
  bool ready() const {
    return active_state == "active" || (active_state == "activating" && sub_state == "start-post");
  }
};

// A command run once as a transient service (`gpulaunch exec`): Type=exec, with the caller's
// stdin, stdout and stderr (as `systemd-run --pipe`). CollectMode=inactive: systemd removes it
// once it ended well, and keeps a failed one until reset_failed, so its exit status can be read.
// (systemd-run pins the unit with AddRef= instead, which needs the bus daemon's sender names;
// root talks to the manager's private socket, which has none.)
struct TransientService {
  std::string unit;  // NAME.service
  std::string description;
  std::vector<std::string> argv;        // ExecStart=; argv[0] an absolute path
  std::vector<BusProperty> properties;  // unit/transient's, from the service's unit
  int stdin_fd = 0, stdout_fd = 1, stderr_fd = 2;
};

// One change EnableUnitFiles/DisableUnitFiles made: "symlink" (`file` now links to `source`) or
// "unlink" (`file` removed), as systemctl prints them.
struct UnitFileChange {
  std::string type;
  std::string file;
  std::string source;
};

class SystemdManager {
 public:
  virtual ~SystemdManager() = default;
  virtual Result<void> reload() = 0;
  // "StartUnit", "RestartUnit", "StopUnit": returns the job's object path.
  virtual Result<std::string> enqueue(std::string_view method, std::string_view unit) = 0;
  virtual Result<UnitStatus> status(std::string_view unit) = 0;
  virtual Result<std::vector<std::string>> list_units(std::string_view pattern) = 0;
  // StartTransientUnit: returns the start job's object path.
  virtual Result<std::string> start_transient(const TransientService& service) = 0;
  // ResetFailedUnit: forgets a failed unit (a failed transient one is then removed).
  virtual Result<void> reset_failed(std::string_view unit) = 0;
  // EnableUnitFiles / DisableUnitFiles (`systemctl enable/disable`): the links the unit's
  // [Install] section asks for, under /etc (or /run where `runtime`), so the boot starts it (or
  // no longer does). The manager sees them at the next reload().
  virtual Result<std::vector<UnitFileChange>> set_enabled(std::string_view unit, bool enabled,
                                                          bool runtime) = 0;
  // Processes signals (JobRemoved, PropertiesChanged) for up to `timeout`; returns early once
  // something arrived.
  virtual Result<void> wait(std::chrono::milliseconds timeout) = 0;
  // The result JobRemoved reported for `job` ("done", "failed", "timeout", ...), once it has.
  virtual std::optional<std::string> job_result(const std::string& job) const = 0;
};

// As root on the system manager, the private socket /run/systemd/private (what systemctl uses; it
// needs no D-Bus daemon), else the system or user bus.
Result<std::unique_ptr<SystemdManager>> connect_systemd(ManagerScope scope);

}  // namespace gl
