// SPDX-License-Identifier: Apache-2.0
#pragma once
// A finished job's GPUs given back (issue 47: the Slurm epilog's `gpulaunch release-gpus`): the
// compute processes still holding them that are the job's are sent SIGTERM, SIGKILL after a grace,
// and their memory is waited for, bounded. Whose a process is: its uid and the Slurm job its
// cgroup or environment names. Root's processes and another job's are never signalled; a process
// that names no job is the job's only when the job's GPUs are known (it holds one of them). The
// side effects (NVML, /proc, signals, the clock) come in as GpuReleaseIo.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "facts/gpu_probe.hpp"
#include "util/error.hpp"
#include "util/timekeeper.hpp"

namespace gl {

// What /proc says of a process holding GPU memory.
struct HolderProcess {
  uid_t uid = 0;                   // real uid; 0 also where the effective uid is root's
  std::optional<std::string> job;  // the Slurm job its cgroup ("/job_42/") or SLURM_JOB_ID names
  std::string name;                // comm, for the log
  unsigned long long start = 0;    // /proc/PID/stat starttime: the same process across calls
};

struct GpuReleaseIo {
  // The compute processes on the job's GPUs (every GPU where they are unknown).
  std::function<Result<std::vector<GpuProcessUse>>()> holders;
  std::function<std::optional<HolderProcess>(unsigned pid)> inspect;  // nullopt: gone, a zombie
  // Sends `signal` to pid when it is still the process that started at `start`; false: it is not.
  std::function<bool(unsigned pid, unsigned long long start, int signal)> send;
  Timekeeper& clock;
  std::function<void(const std::string&)> say;  // one line for the epilog's log
};

struct GpuReleaseInput {
  std::string job;         // SLURM_JOB_ID
  uid_t uid = 0;           // SLURM_JOB_UID
  bool gpus_known = true;  // the holders are on the job's own GPUs
  std::chrono::milliseconds grace{std::chrono::seconds(10)};  // SIGTERM -> SIGKILL
  std::chrono::milliseconds wait{std::chrono::seconds(30)};   // SIGKILL -> memory released
  std::chrono::milliseconds poll{std::chrono::milliseconds(200)};
  unsigned own_pid = 0;  // never a holder to end
};

inline constexpr int kReleaseOk = 0;
inline constexpr int kReleaseMemoryHeld = 1;   // the job's processes' memory outlived the wait
inline constexpr int kReleaseCouldNotRun = 2;  // NVML could not say who holds the GPUs

struct GpuRelease {
  int exit_code = kReleaseOk;
  std::vector<std::string> ended;       // "pid 4242 (python3) on GPU 0, 2048 MiB"
  std::vector<std::string> left_alone;  // "pid 17 (dcgm) on GPU 0: root's"
  std::string problem;                  // exit 1 or 2: one line, the scheduler's drain reason
};

// Why `process` is not the job's; nullopt: it is.
std::optional<std::string> not_the_jobs(const HolderProcess& process, const GpuReleaseInput& input);

GpuRelease release_job_gpus(const GpuReleaseInput& input, GpuReleaseIo& io);

}  // namespace gl
