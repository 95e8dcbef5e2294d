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
#include "plan/launch_plan.hpp"

namespace gl {

struct NodeLaunch {
  LaunchOptions options;
  // What could not be read, for the caller to say: the plan goes on without it.
  std::vector<std::string> warnings;
};

NodeLaunch node_launch_options(const Profile& profile, long long node_rank, const NodeFs& node);

// The plan of the unit this node runs for `node_rank`: the launch options read from `node`, then
// make_launch_plan. `up` renders the unit from it, `env` prints its environment and `exec` starts
// its transient service from it: one derivation, so none of them pins what another leaves out.
struct NodePlan {
  NodeLaunch launch;
  LaunchPlan plan;
};
NodePlan node_launch_plan(const Profile& profile, long long node_rank, const NodeFs& node);

}  // namespace gl
