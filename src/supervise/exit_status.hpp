#pragma once
// How `gpulaunch run` exits, so systemd's Result, RestartPreventExitStatus= and `events` can
// tell why the engine stopped. One table; the unit's RestartPreventExitStatus= comes from it.

#include <string_view>

namespace gl {

inline constexpr int kExitConfig = 78;        // EX_CONFIG: the same start would fail the same way
inline constexpr int kExitReadyTimeout = 75;  // EX_TEMPFAIL: never answered health in time
inline constexpr int kExitCrashLoop = 79;     // the crash-loop budget is spent: stay down
inline constexpr int kExitGpuResidue = 80;    // other processes kept holding the GPUs' memory
inline constexpr int kExitSignalBase = 128;   // engine killed by signal N: 128 + N

// Exit status for an engine that ended with `wait_status` (waitpid's), given whether it printed
// an argument-parsing error (argparse exits 2 with "error: unrecognized arguments").
int exit_status_for_engine(int wait_status, bool saw_usage_error);

// True for lines that mean the engine rejected its command line.
bool is_usage_error_line(std::string_view line);

}  // namespace gl
