// SPDX-License-Identifier: Apache-2.0
#pragma once
// A command run as an installed profile's service runs: a transient service with the unit's
// environment, user and sandbox (unit/transient, from the same unit model `up` renders, with the
// node's launch options and the installed unit's drop-ins), the caller's pipes or files as its
// stdin, stdout and stderr, but never root's terminal: a terminal stdin becomes /dev/null, a
// terminal stdout or stderr a pipe that gpulaunch copies to it, so the command cannot read what
// root types nor act on root's tty. Ctrl-C (or SIGTERM, a hang-up) stops the transient unit.
// `exec` and `warm --compile` run through it.

#include <functional>
#include <string>
#include <vector>

#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

// gpulaunch's own failure, apart from any status the command may exit with (as env(1) and
// `docker run`).
inline constexpr int kServiceExecFailed = 125;

struct ServiceExec {
  std::string what;       // the subcommand, in messages ("exec", "warm --compile")
  std::string unit_word;  // in the transient unit's name: gpulaunch-NAME-WORD-PID.service
  // The command, from the installed profile and the plan its unit was rendered from.
  std::function<Result<std::vector<std::string>>(const Profile&, const LaunchOptions&)> command;
  // Refused while the profile's service is up or on its way up (the command needs its port or
  // GPUs).
  bool refuse_while_running = false;
  // Root brings the profile's caches up to date first, as the unit's ExecStartPre= does, so what
  // the command writes there is kept by the next start.
  bool prepare_caches = false;
  // The rank of a multi-node profile this node's unit runs (`exec --node-rank`): the plan is
  // node_launch_plan's for it, as `up` rendered the unit.
  long long node_rank = 0;
};

// The command's exit status, 128 + the signal that stopped it or ended gpulaunch's wait, or
// kServiceExecFailed with the reason on stderr.
int exec_in_service(const std::string& name, const ServiceExec& request);

}  // namespace gl
