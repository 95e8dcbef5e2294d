// SPDX-License-Identifier: Apache-2.0
#pragma once
// The exit statuses of the operator's commands, one scheme for all of them (systemctl's and the
// LSB init scripts'): the manual's EXIT STATUS and README's table list the same. `run` and the
// other commands systemd runs inside a unit exit with catalog/exit_codes' statuses instead, which
// the unit's RestartPreventExitStatus= and record-exit read.

namespace gl {

inline constexpr int kExitOk = 0;
// The command ran and the answer is no: a start failed, check found errors, verify drifted.
inline constexpr int kExitFailed = 1;
// Usage, or the command could not run: an unknown command, option or name (with did-you-mean),
// a bad value, a profile that does not load, a node that could not be read.
inline constexpr int kExitUsage = 2;
// `status NAME`: the service is installed (or known) but not running (LSB's "program is not
// running").
inline constexpr int kExitNotRunning = 3;
// An exception reached main(): a bug in gpulaunch (EX_SOFTWARE), reported rather than a crash.
inline constexpr int kExitInternal = 70;

}  // namespace gl
