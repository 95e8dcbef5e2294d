// SPDX-License-Identifier: Apache-2.0
#pragma once
// What of this node a unit's plan depends on, read as `up` installs the unit, so that `exec` and
// `warm --compile`, which build the same unit again for a transient service, run the command
// line and sandbox the service has: the engine release in the venv (its dist-info, read as a
// file: root runs nothing from the venv), InfiniBand, the optional devices and MPS daemon, and
// the interface a multi-node group's rendezvous is routed through.

#include <string>
#include <vector>

#include "engines/engine_argv.hpp"
#include "facts/node_fs.hpp"

namespace gl {

struct NodeLaunch {
  LaunchOptions options;
  // What could not be read, for the caller to say: the plan goes on without it.
  std::vector<std::string> warnings;
};

NodeLaunch node_launch_options(const Profile& profile, long long node_rank, const NodeFs& node);

}  // namespace gl
