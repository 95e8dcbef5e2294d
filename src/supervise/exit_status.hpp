// SPDX-License-Identifier: Apache-2.0
#pragma once
// How `gpulaunch run` exits, so systemd's Result, RestartPreventExitStatus= and `events` can
// tell why the engine stopped. The statuses themselves are catalog/exit_codes.hpp's table (the
// unit's RestartPreventExitStatus= is built from it too); this says which one an engine's end
// gets, and the verdict line `run` prints with it.

#include <optional>
#include <string>
#include <string_view>

#include "catalog/exit_codes.hpp"

namespace gl {

// Exit status for an engine that ended with `wait_status` (waitpid's), given whether it printed
// a line is_usage_error_line() holds for: a failure after one is the configuration error status.
// An engine that exits with one of gpulaunch's verdict statuses (catalog/exit_codes'
// is_verdict_status: 75, 78-81, 200-244) gets kExitEngineCrash: the engine cannot claim a spent
// budget, a configuration error or a set-up failure and so stop its restarts or its group.
int exit_status_for_engine(int wait_status, bool saw_usage_error);

// waitpid's status read: the signal that ended the process, or its exit code (nullopt: the
// other way).
std::optional<int> terminating_signal(int wait_status);
std::optional<int> exit_code_of(int wait_status);

// True for lines that mean the engine rejected its command line: argparse's errors ("error:
// unrecognized arguments"), and the engines' own configuration errors (config_error_fix).
bool is_usage_error_line(std::string_view line);
// The fix for an engine's configuration error (catalog/oom_signatures' engine_config_errors)
// when `line` is one.
std::optional<std::string_view> config_error_fix(std::string_view line);

// What `run` prints itself begins with this; the engine's lines pass through as they are.
inline constexpr std::string_view kRunLinePrefix = "gpulaunch: ";

// `run`'s verdict: its last line, after all of the engine's output, says why it exits and with
// which status ("gpulaunch: engine exited with status 1; exiting with 1"). `record-exit` reads
// the invocation's journal until the verdict is in: then the output is complete.
std::string run_verdict_line(std::string_view why, int status);
// The status a verdict line names; nullopt for any other line.
std::optional<int> parse_run_verdict(std::string_view line);

}  // namespace gl
