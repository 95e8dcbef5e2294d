// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the engine unit's sandbox depends on, read as files under the node's root: the optional
// devices and the MPS daemon catalog/sandbox_allowances opens, Yama's ptrace scope, and the
// NVIDIA device nodes with what would create them at boot (catalog/nvidia_devices).

#include <string>
#include <vector>

#include "catalog/sandbox_allowances.hpp"
#include "facts/facts.hpp"
#include "facts/node_fs.hpp"

namespace gl {

SandboxFact probe_sandbox(const NodeFs& node);
NvidiaNodesFact probe_nvidia_nodes(const NodeFs& node);

// nvidia-modprobe's arguments that create every node `fact` says the driver has: -u, -c per
// GPU minor, -f per MIG capability, -i for IMEX channels.
std::vector<std::string> nvidia_modprobe_args(const NvidiaNodesFact& fact);

}  // namespace gl
