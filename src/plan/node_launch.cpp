// SPDX-License-Identifier: Apache-2.0
#include "plan/node_launch.hpp"

#include <fmt/core.h>

#include "facts/node_os.hpp"
#include "facts/python_env.hpp"
#include "facts/routes.hpp"
#include "facts/sandbox_probe.hpp"

namespace gl {

NodeLaunch node_launch_options(const Profile& profile, long long node_rank, const NodeFs& node) {
  NodeLaunch launch;
  LaunchOptions& options = launch.options;
  options.node_rank = node_rank;
  // The launcher follows the engine installed in the venv, as the lock records it under
  // node.python.engine.
  if (profile.engine.venv)
    options.engine_version =
        installed_engine_version(node, profile.engine.kind, *profile.engine.venv);
  // InfiniBand opens its devices and unlimited memlock to the unit (a file read, no probe).
  options.infiniband = !probe_infiniband(node).devices.empty();
  // gdrdrv, xpmem and a running MPS daemon open to the unit (catalog/sandbox_allowances).
  const SandboxFact sandbox = probe_sandbox(node);
  options.sandbox = SandboxNode{sandbox.devices, sandbox.mps_daemon};
  // NCCL and Gloo on the interface the kernel routes rank 0's rendezvous through.
  if (profile.parallelism.nodes > 1 && profile.parallelism.dist_init_addr) {
    const auto host = split_host_port(*profile.parallelism.dist_init_addr).first;
    auto interface = probe_route_interface(node, host);
    if (interface)
      options.socket_interface = *interface;
    else
      launch.warnings.push_back(
          fmt::format("NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME left to NCCL and Gloo: {}",
                      interface.error().message));
  }
  return launch;
}

NodePlan node_launch_plan(const Profile& profile, long long node_rank, const NodeFs& node) {
  NodeLaunch launch = node_launch_options(profile, node_rank, node);
  LaunchPlan plan = make_launch_plan(profile, launch.options);
  return NodePlan{std::move(launch), std::move(plan)};
}

}  // namespace gl
