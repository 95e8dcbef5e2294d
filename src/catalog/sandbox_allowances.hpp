// SPDX-License-Identifier: Apache-2.0
#pragma once
// What real GPU stacks need from the engine unit's sandbox beyond systemd's @system-service and
// the NVIDIA devices (issue 26): each syscall, device, limit and path the unit opens, when it
// opens it, why, what it costs in exposure, and the upstream source it was read from. One table:
// unit/render writes the lines from it for every engine, profile/ checks `service.allow` names
// against it, `check` and the man page and SECURITY.md describe it. Pure data.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gl {

// When the unit carries an allowance.
enum class AllowanceWhen {
  always,           // every engine unit
  node_has_device,  // the node has `node_path` (a device node), or the profile lists the name
  mps_daemon,       // an MPS control daemon's pipe directory (`node_path`) exists on the node
  engine_flag,      // engine.args holds `engine_flag` (or the profile lists the name)
  profile_allows,   // only when the profile lists the name in service.allow
};

struct SandboxAllowance {
  std::string_view name;  // what service.allow and `check` call it
  AllowanceWhen when;
  std::string_view directive;    // the [Service] key
  std::string_view value;        // its value
  std::string_view node_path;    // node_has_device, mps_daemon: what says the node has it
  std::string_view engine_flag;  // engine_flag: the engine argument that needs it
  std::string_view reason;
  std::string_view exposure;  // what opening it costs
  std::string_view source;    // upstream file and version it was read from
};

std::span<const SandboxAllowance> sandbox_allowances();
const SandboxAllowance* sandbox_allowance(std::string_view name);
// The names service.allow accepts, in table order.
std::vector<std::string> sandbox_allowance_names();

// What the node offers that optional rows depend on (facts: SandboxFact; `render` flags).
struct SandboxNode {
  std::vector<std::string> devices;  // names of node_has_device rows whose node_path exists
  bool mps_daemon = false;
};

// The MPS pipe directory clients read (CUDA_MPS_PIPE_DIRECTORY; NVIDIA MPS documentation,
// "Environment variables", default /tmp/nvidia-mps): PrivateTmp= would hide it.
inline constexpr std::string_view kMpsPipeDirectory = "/tmp/nvidia-mps";
inline constexpr std::string_view kMpsPipeVariable = "CUDA_MPS_PIPE_DIRECTORY";

// Yama's ptrace scope (Documentation/admin-guide/LSM/Yama.rst, kernel 6.1): 1 and above
// refuse PTRACE_MODE_ATTACH to a non-descendant, the check pidfd_getfd and process_vm_readv pass
// (kernel/pid.c pidfd_getfd -> ptrace_may_access(PTRACE_MODE_ATTACH_REALCREDS)).
inline constexpr std::string_view kYamaPtraceScope = "/proc/sys/kernel/yama/ptrace_scope";

}  // namespace gl
