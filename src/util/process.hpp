// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs an external program (nvcc, nvidia-smi, ssh, diff) and captures what it prints. The one
// place that starts processes, so a hung tool cannot hang gpulaunch: every run has a timeout.

#include <sys/types.h>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace gl {

struct ProcessOutput {
  int exit_code = 0;
  std::string out;  // stdout; stderr is discarded (tools print banners there)
};

// `program` is a path; nothing is looked up on PATH here. Fails when the program cannot be
// started or does not finish within `timeout` (it is then killed).
Result<ProcessOutput> run_process(const std::string& program, const std::vector<std::string>& args,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Two runs of `program` joined by a pipe: the first's stdout is the second's stdin, through
// this process's pipe only (no shell, nothing written to disk). Each gets /dev/null for what it
// does not take from the other; the first's stderr and the second's stdout are captured.
struct PipelineOutput {
  int source_exit = -1;
  std::string source_err;
  int target_exit = -1;
  std::string target_out;
};
// Fails when either cannot be started or both have not ended within `timeout` (both are then
// killed).
Result<PipelineOutput> run_pipeline(const std::string& program,
                                    const std::vector<std::string>& source_args,
                                    const std::vector<std::string>& target_args,
                                    std::chrono::milliseconds timeout);

// An account a program runs as instead of root.
struct Identity {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
};

// The account a program someone else could have written runs as when gpulaunch is root: the
// profile's service user, or nobody when there is none or it is root.
Result<Identity> unprivileged_identity(const std::optional<std::string>& service_user);

// For programs root does not trust (an nvcc in a venv, nvidia-smi found on a PATH): when
// gpulaunch runs as root, the child drops to `identity` (setgroups, setgid, setuid) before exec,
// and a failed drop ends the child before exec; it always starts with PATH=/usr/bin:/bin as its
// whole environment, in "/", with the timeout.
Result<ProcessOutput> run_unprivileged(
    const std::string& program, const std::vector<std::string>& args,
    const std::optional<std::string>& service_user,
    std::chrono::milliseconds timeout = std::chrono::seconds(10));

// How many child processes this process has started so far (benchmarks and tests show that a
// warm `check` starts none).
unsigned long long processes_started();

}  // namespace gl
