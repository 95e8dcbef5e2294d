// SPDX-License-Identifier: Apache-2.0
#include "rules/sandbox_checks.hpp"

#include <fmt/core.h>

#include "catalog/nvidia_devices.hpp"
#include "catalog/sandbox_allowances.hpp"
#include "facts/sandbox_probe.hpp"
#include "util/text_join.hpp"

namespace gl {
namespace {

// What the oneshot would run: each nvidia-modprobe call, joined with "&&".
std::string modprobe_commands(const NvidiaNodesFact& nodes) {
  std::vector<std::string> commands;
  for (const auto& call : nvidia_modprobe_calls(nodes))
    commands.push_back(fmt::format("{} {}", kNvidiaModprobe, join(call, " ")));
  return join(commands, " && ");
}

// A multi-node profile on a driver that registers IMEX channels (multi-node NVLink's memory
// sharing, CUDA's fabric handles) without channel 0 in /dev, where nvidia-modprobe cannot make it
// (its -i lived only in 550.54.14-565.x): the engine's cross-node imports fail.
void check_imex_channel(const Profile& profile, const Facts& facts,
                        std::vector<Finding>& findings) {
  if (!facts.nvidia_nodes || profile.parallelism.nodes < 2) return;
  const auto& nodes = *facts.nvidia_nodes;
  const auto gap = imex_channel_gap(nodes);
  if (!gap) return;
  const std::string major = nodes.imex_major ? std::to_string(*nodes.imex_major) : "MAJOR";
  findings.push_back(
      {Severity::warning,
       "nvidia-imex-channel-missing",
       fmt::format("the driver registers IMEX channels but {} is missing and {}: memory shared "
                   "over multi-node NVLink (CUDA fabric handles) fails for this {}-node profile",
                   kImexChannel0Node, *gap, profile.parallelism.nodes),
       fmt::format("the driver makes no channel node unless loaded with {} (its nv-reg.h); "
                   "the node's administrator grants channels",
                   kImexChannel0Option),
       {{std::string(kProcDevices), fmt::format("{} {}", major, kImexChannelsMajorName)},
        {std::string(kNvidiaModprobe), !nodes.modprobe_installed        ? std::string("missing")
                                       : nodes.modprobe_version.empty() ? std::string("installed")
                                                                        : nodes.modprobe_version}},
       fmt::format("echo 'options nvidia {}' > /etc/modprobe.d/nvidia-imex-channel0.conf and "
                   "reboot (the driver then makes channel 0, mode 0666: every process on the node "
                   "shares it); or for this boot only: mkdir -p /dev/nvidia-caps-imex-channels && "
                   "mknod -m 0666 {} c {} 0",
                   kImexChannel0Option, kImexChannel0Node, major)});
}

// pidfd_getfd passes the kernel's ptrace-attach check: Yama's scope 1 allows it only on a
// descendant, so the engine's sibling ranks (tensor-parallel workers) still cannot take each
// other's fds; 2 and 3 refuse it without CAP_SYS_PTRACE, which the unit never has.
void check_yama(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                std::vector<Finding>& findings) {
  if (!facts.sandbox || !facts.sandbox->ptrace_scope || *facts.sandbox->ptrace_scope < 1) return;
  if (profile.gpus_per_node() < 2) return;
  bool planned = false;
  for (const auto* allowance : plan.sandbox) planned = planned || allowance->name == "pidfd_getfd";
  if (!planned) return;
  const int scope = *facts.sandbox->ptrace_scope;
  findings.push_back(
      {Severity::warning,
       "yama-refuses-pidfd-getfd",
       fmt::format("Yama's ptrace_scope is {}: the engine's {} ranks cannot take each other's "
                   "fds with pidfd_getfd, so CUDA IPC of expandable segments, UCX's VMM "
                   "transfers and DeepEP fail (\"pidfd_getfd: Operation not permitted\")",
                   scope, profile.gpus_per_node()),
       "pidfd_getfd needs PTRACE_MODE_ATTACH on the target; Yama's scope 1 grants it only to an "
       "ancestor, 2 and 3 only with CAP_SYS_PTRACE",
       {{std::string(kYamaPtraceScope), std::to_string(scope)}},
       scope == 3 ? std::string("scope 3 cannot be lowered before a reboot: set "
                                "kernel.yama.ptrace_scope = 0 in /etc/sysctl.d/ and reboot, or "
                                "leave PYTORCH_CUDA_ALLOC_CONF without expandable_segments")
                  : std::string("sysctl kernel.yama.ptrace_scope=0 and keep it in "
                                "/etc/sysctl.d/60-gpulaunch-ptrace.conf (each profile's own "
                                "uid keeps other users' processes out of reach), or leave "
                                "PYTORCH_CUDA_ALLOC_CONF without expandable_segments")});
}

}  // namespace

// The driver is loaded but a node it has is missing, and nothing on this node would create it
// before the engine starts: the engine's sandbox cannot (NoNewPrivileges=yes, no capabilities).
void check_device_nodes(const Facts& facts, std::vector<Finding>& findings) {
  if (!facts.nvidia_nodes) return;
  const auto& nodes = *facts.nvidia_nodes;
  if (!nodes.driver_loaded || nodes.missing.empty()) return;
  if (nodes.modprobe_installed && nodes.devices_unit_installed) return;
  std::vector<std::string> minors;
  for (int minor : nodes.minors) minors.push_back(std::to_string(minor));
  std::vector<std::string> fixes;
  if (!nodes.modprobe_installed)
    fixes.push_back(fmt::format("apt install nvidia-modprobe ({})", kNvidiaModprobe));
  if (!nodes.devices_unit_installed)
    fixes.push_back(fmt::format("install gpulaunch's {} ({}, shipped in the package)",
                                kNvidiaDevicesUnit, kNvidiaDevicesUnitPath));
  findings.push_back(
      {Severity::error,
       "nvidia-device-nodes-missing",
       fmt::format("the NVIDIA driver is loaded but {} missing, and nothing creates {} before the "
                   "engine starts: CUDA fails with \"unknown error\" or \"no CUDA-capable device\"",
                   join(nodes.missing, ", ") + (nodes.missing.size() == 1 ? " is" : " are"),
                   nodes.missing.size() == 1 ? "it" : "them"),
       fmt::format("the engine's unit cannot create device nodes (NoNewPrivileges=yes, no "
                   "capabilities, DeviceAllow= fixed at start); {} must run {} before it",
                   kNvidiaDevicesUnit, kNvidiaModprobe),
       {{std::string(kProcDevices),
         nodes.uvm_registered ? std::string(kUvmMajorName) : "no " + std::string(kUvmMajorName)},
        {"GPU minors", minors.empty() ? "(none)" : join(minors, " ")},
        {"missing", join(nodes.missing, ", ")},
        {std::string(kNvidiaModprobe), nodes.modprobe_installed ? "installed" : "missing"},
        {std::string(kNvidiaDevicesUnit), nodes.devices_unit_installed ? "installed" : "missing"}},
       fmt::format("{}; now: {}", join(fixes, ", "), modprobe_commands(nodes))});
}

void check_sandbox(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                   std::vector<Finding>& findings) {
  check_device_nodes(facts, findings);
  check_imex_channel(profile, facts, findings);
  check_yama(profile, plan, facts, findings);
}

}  // namespace gl
