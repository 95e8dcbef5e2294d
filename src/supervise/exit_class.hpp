// SPDX-License-Identifier: Apache-2.0
#pragma once
// Why an engine stopped, from what systemd hands ExecStopPost= and the journal of that
// invocation. A pure function, so every rule has a table test.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/oom_signatures.hpp"
#include "supervise/stall_report.hpp"

namespace gl {

// A new class: its row in exit_class.cpp's table (name, failure, the stay-down text that makes it
// terminal), CONTRIBUTING's "An exit class" names the rest.
enum class ExitClass {
  clean,          // stopped on request, or the engine exited 0
  host_oom,       // the kernel's OOM killer, in the unit's cgroup
  cuda_oom,       // the engine ran out of GPU memory and said so
  hang,           // the watchdog fired
  start_timeout,  // never served within the ready timeout
  config_error,   // exit 78: the same start fails the same way; never retried
  setup_failure,  // is_setup_failure(): systemd could not set up the sandbox; not retried
  budget,         // exit 79: `run` refused to start, the crash-loop budget is spent
  residue,        // exit 80: GPU memory still held by other processes
  stalled,        // exit 81: answered, but no forward progress (server.liveness); retried
  crash,          // anything else
};

std::string_view exit_class_name(ExitClass value);
std::optional<ExitClass> parse_exit_class(std::string_view name);
// Every class, in the enum's order (the history's per-class counters, the metrics' class label).
std::vector<ExitClass> all_exit_classes();
// Failures count against the crash-loop budget and grow the backoff.
bool counts_as_failure(ExitClass value);
// systemd will not restart these (RestartPreventExitStatus=).
bool is_terminal(ExitClass value);
// A terminal class's action, as its event names it ("stay down: ..."); nullopt for the others.
std::optional<std::string_view> stay_down_action(ExitClass value);

struct StopReport {
  std::string unit;                // gpulaunch-NAME.service
  std::string service_result;      // $SERVICE_RESULT: success, exit-code, signal, oom-kill, ...
  std::string exit_code;           // $EXIT_CODE: exited, killed, dumped
  std::string exit_status;         // $EXIT_STATUS: a number or a signal name (KILL)
  std::vector<std::string> lines;  // the invocation's own output
  std::vector<std::string> kernel_lines;  // kernel messages since the invocation started
  std::string cgroup_oom_kill;  // non-empty: the cgroup's v1 oom_kill counter grew (the evidence)
};

struct Classification {
  ExitClass value = ExitClass::crash;
  std::string evidence;                // the one line that decided it
  std::optional<MemoryKnob> knob;      // cuda_oom: what the message says to lower
  std::optional<StallReport> stall{};  // stalled: what `run`'s stall line says was seen
  // stalled: the stall line's journal cursor (classify_invocation's); the thread dump follows it
  std::string journal_cursor{};
};

Classification classify_stop(const StopReport& report);

// True when `line` is the kernel's oom-kill summary for `unit`'s cgroup. The cgroup path may
// carry a prefix (a nested manager: /gpulaunch-harness.N/system.slice/UNIT), so the suffix counts.
bool is_kernel_oom_kill_of(std::string_view line, std::string_view unit);

}  // namespace gl
