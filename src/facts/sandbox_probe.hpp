// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the engine unit's sandbox depends on, read as files under the node's root: the optional
// devices and the MPS daemon catalog/sandbox_allowances opens, Yama's ptrace scope, and the
// NVIDIA device nodes with what would create them at boot (catalog/nvidia_devices).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/sandbox_allowances.hpp"
#include "facts/facts.hpp"
#include "facts/node_fs.hpp"

namespace gl {

SandboxFact probe_sandbox(const NodeFs& node);
// `driver_gpus`: how many GPUs a loaded driver listed (NVML), where the caller asked it. Where
// /proc/driver/nvidia does not show the driver loaded, its minors count those GPUs instead of
// NVIDIA's display controllers on the PCI bus, which are scanned only when no driver answered.
NvidiaNodesFact probe_nvidia_nodes(const NodeFs& node,
                                   std::optional<size_t> driver_gpus = std::nullopt);

// Whether the nodes need an answer only the installed nvidia-modprobe's --help gives (whether
// it can make IMEX channels); read_modprobe_help() puts that answer into `fact`.
bool needs_modprobe_help(const NvidiaNodesFact& fact);
void read_modprobe_help(NvidiaNodesFact& fact, std::string_view help);

// nvidia-modprobe's calls (arguments after the program) that make every node `fact` says the
// driver serves and /dev lacks, one per mode of its main(): "-c 255 -c N..." (the control node
// and each GPU's, loading nvidia), "-u -c 0" (nvidia-uvm and -tools, loading nvidia-uvm),
// "-f PATH..." (MIG capabilities), "-i 0:1" (IMEX channel 0) only where its --help lists it.
std::vector<std::vector<std::string>> nvidia_modprobe_calls(const NvidiaNodesFact& fact);

// Why IMEX channel 0, which the driver registers and /dev lacks, will not be made by
// nvidia-modprobe here; nullopt when it will be or nothing needs it.
std::optional<std::string> imex_channel_gap(const NvidiaNodesFact& fact);

}  // namespace gl
