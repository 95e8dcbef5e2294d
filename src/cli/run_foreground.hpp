// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulaunch run --foreground NAME [--node-rank N] [--state-dir DIR]`: the supervision a unit
// gets, in one process run by an ordinary user (a Slurm step, a container's entrypoint, a
// terminal), with no systemd. The loop is run/foreground's; this wires it to the node.

#include <string>

#include "cli/context.hpp"
#include "profile/profile.hpp"
#include "run/foreground.hpp"
#include "supervise/start_gate.hpp"

namespace gl {

struct ForegroundArgs {
  bool on = false;
  long long node_rank = 0;
  std::string state_dir;  // empty: ${XDG_STATE_HOME:-$HOME/.local/state}/gpulaunch/NAME
  // A `cache export` archive that seeds caches not current at the start (render --slurm's sbcast).
  std::string cache_archive;
  // Forgive an earlier run's crash-loop failures before the first start (step-down levels stay).
  bool reset_crash_loop = false;
};

// The exit status a scheduler keys on (cli/exit_status: 0, 1, 2 or 75).
int foreground_exit_status(ForegroundEnd end);

int run_foreground_command(const CliContext& context, const std::string& profile,
                           const ForegroundArgs& args);

// The unit's GPUs (CUDA_VISIBLE_DEVICES as the plan pins it) as supervise/start_gate asks about
// them: their compute processes through NVML, and the engine's defaults on them for a step-down.
GpuHolders unit_gpu_holders(const ParallelismSettings& parallelism);

}  // namespace gl
