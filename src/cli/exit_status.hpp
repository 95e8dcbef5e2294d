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
// `run --foreground` (a Slurm step, a container): the engine or its group may serve if started
// again, elsewhere or later: the crash-loop budget is spent, a rank of a multi-node group died
// (the group restarts together), or other processes hold the node's GPUs (EX_TEMPFAIL,
// sysexits.h). `run --foreground` exits 0 when it stopped on request (drained) or the engine
// exited 0; 1 when the engine stopped for a reason a requeue would repeat (a stay-down class,
// restart.policy = no); 2 for usage, a configuration error (the profile, the check gate, the
// engine's own) that must never be requeued; 70 as every command. The sbatch script `render
// --slurm` writes keys its requeue on these.
inline constexpr int kExitTempFail = 75;
// An exception reached main(): a bug in gpulaunch (EX_SOFTWARE), reported rather than a crash.
inline constexpr int kExitInternal = 70;

}  // namespace gl
