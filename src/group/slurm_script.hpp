// SPDX-License-Identifier: Apache-2.0
#pragma once
// A profile's group as a Slurm batch job (`gpulaunch render --slurm`): the sbatch script, one
// `srun --kill-on-bad-exit=1` step running `gpulaunch run --foreground` on every node of the
// allocation, and the numbers it is built on (the per-job port offset, the signal's margin, how
// many steps and requeues follow an exit 75). Text only: nothing here runs Slurm. Option
// semantics are Debian 12's slurm-wlm 22.05.8 (sbatch(1), srun(1), scontrol(1), slurm.conf(5),
// and src/srun/libsrun/srun_job.c's signal forwarding at slurm-22-05-8-1).

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

// Jobs sharing a node must not listen on the same ports: each job moves the profile's
// server.port and rendezvous port by (SLURM_JOB_ID mod kSlurmPortSlots) * kSlurmPortStride. Two
// jobs on one node collide only when their IDs differ by a multiple of kSlurmPortSlots; the
// stride leaves an engine the ports just above its own (SGLang and vLLM take port+1.. for their
// internal sockets where told a base).
inline constexpr long long kSlurmPortSlots = 200;
inline constexpr long long kSlurmPortStride = 10;
inline constexpr long long kSlurmPortSpan = (kSlurmPortSlots - 1) * kSlurmPortStride;

// `--signal=B:TERM@N`: N is the drain plus this, the time `run` needs around the engine's drain
// (stopping the bridge, recording the stop) and srun's forwarding. sbatch(1): the signal may come
// up to 60 s earlier than asked, never later.
inline constexpr std::chrono::seconds kSlurmSignalMargin{15};

// Requeues (`scontrol requeue`) a job may make of itself when its allocation's steps keep ending
// with 75, counted by SLURM_RESTART_COUNT.
inline constexpr long long kSlurmMaxRequeues = 2;

// The exit codes of `run --foreground` the script acts on (slurmrun's agreed table).
inline constexpr int kForegroundRetry = 75;   // EX_TEMPFAIL: a new step or a requeue may serve
inline constexpr int kForegroundRefused = 2;  // usage, configuration, check gate: never requeued

struct SlurmScriptOptions {
  std::string gpulaunch_binary;  // on every node
  std::string version;           // gpulaunch's, in the header
  // A `gpulaunch cache export` archive on the submitting node: sbcast to every node, imported
  // before the engine starts.
  std::optional<std::string> cache_archive;
  // `#SBATCH --gpus-per-node=` with the profile's GPUs a node; off where the cluster schedules
  // no GPUs as GRES (the profile's [gpus] then pick them on each node).
  bool gres = true;
};

// The script, or why the profile cannot run as one job (its ports leave no room for the offset).
Result<std::string> render_slurm_script(const Profile& profile, const SlurmScriptOptions& options);

// KillWait from `scontrol show config`'s text ("KillWait                = 30 sec"); nullopt when
// the line is absent or unreadable.
std::optional<std::chrono::seconds> parse_kill_wait(std::string_view show_config);

// The render-time warning when the cluster kills (KillWait after the SIGTERM of a cancel) before
// the engine's drain is over; nullopt when KillWait covers it.
std::optional<std::string> kill_wait_warning(const Profile& profile,
                                             std::chrono::seconds kill_wait);

}  // namespace gl
