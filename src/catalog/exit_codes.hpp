// SPDX-License-Identifier: Apache-2.0
#pragma once
// The exit statuses systemd reads from a gpulaunch unit's main process, as one table: `run`'s
// own (sysexits.h where one fits) and systemd's set-up failures. `run` exits with them,
// `record-exit` classifies by them, and the unit's RestartPreventExitStatus= is built from them.
// Below unit/ and supervise/, which both read it.

#include <vector>

namespace gl {

inline constexpr int kExitConfig = 78;        // EX_CONFIG: the same start would fail the same way
inline constexpr int kExitReadyTimeout = 75;  // EX_TEMPFAIL: never answered health in time
inline constexpr int kExitCrashLoop = 79;     // the crash-loop budget is spent: stay down
inline constexpr int kExitGpuResidue = 80;    // other processes kept holding the GPUs' memory
// The engine answered but made no forward progress (server.liveness): `run` dumped its threads
// and killed it. Restarted like a crash (supervise/stall_report has what was seen).
inline constexpr int kExitStalled = 81;
inline constexpr int kExitSignalBase = 128;  // engine killed by signal N: 128 + N

// systemd's own statuses for a unit whose sandbox or environment it could not set up (EXIT_CHDIR
// 200 ... EXIT_BPF 244): systemd src/shared/exit-status.c, v252, "200…244 systemd's private error
// codes". A retry sets up the same sandbox the same way.
inline constexpr int kFirstSetupFailure = 200;
inline constexpr int kLastSetupFailure = 244;
bool is_setup_failure(int status);

// One of the statuses above that decide something (run's own, systemd's set-up failures): only
// gpulaunch's decisions may exit with them, never the engine's own exit (supervise/exit_status).
bool is_verdict_status(int status);
// What `run` exits with instead when the engine itself exits with a verdict status: a crash.
inline constexpr int kExitEngineCrash = 1;

// Whether systemd must not restart after the main process exited with `status`: run's statuses
// marked so, and the set-up failures.
bool prevents_restart(int status);

// RestartPreventExitStatus= values, ascending: run's statuses that prevent a restart, and
// systemd's set-up failures listed one by one (systemd 252 rejects a range such as "200-244").
std::vector<int> run_restart_prevent_statuses();
std::vector<int> setup_failure_statuses();

}  // namespace gl
