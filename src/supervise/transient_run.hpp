// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulaunch exec`'s wait: the transient service started over the manager's interface, followed
// until it ends (JobRemoved, then PropertiesChanged to inactive or failed), and its command's
// exit status read back (ExecMainCode/ExecMainStatus) as a shell reports it.

#include <functional>

#include "systemd/manager.hpp"
#include "util/error.hpp"

namespace gl {

// The command's status, or 128 + the signal that ended it. An error when the unit never ran the
// command (the job failed before it started) or vanished before its status was read. Once
// `interrupted` says so (the caller's Ctrl-C, SIGTERM or hang-up), the unit is stopped
// (StopUnit: systemd's SIGTERM to its command, SIGKILL after its stop timeout) and still waited
// for, so `exec` never returns while its command runs on.
Result<int> run_transient(SystemdManager& manager, const TransientService& service,
                          const std::function<bool()>& interrupted = {});

}  // namespace gl
