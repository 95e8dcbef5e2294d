// SPDX-License-Identifier: Apache-2.0
#include "catalog/sandbox_allowances.hpp"

#include <array>

namespace gl {
namespace {

constexpr std::array kAllowances{
    SandboxAllowance{
        "pidfd_getfd", AllowanceWhen::always, "SystemCallFilter", "pidfd_getfd", "", "",
        "CUDA IPC of expandable segments takes a peer's memory fd with pidfd_getfd (PyTorch "
        "c10/cuda/CUDACachingAllocator.cpp, v2.9.0: \"pidfd_getfd: Operation not permitted\"); so "
        "do TensorRT-LLM's wide-EP all-to-all (v1.1.0), UCX >= 1.21 VMM transfers (NIXL), "
        "FlashInfer's multi-node NVLink buffers (0.5.0 to 0.6.15) and DeepEP's elastic buffers; "
        "@system-service does not hold it (systemd src/shared/seccomp-util.c, v252)",
        "a process may copy an fd out of another it could already ptrace-attach to (the same "
        "check process_vm_readv passes, which @system-service allows): no new reach",
        "pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp v2.9.0; systemd "
        "src/shared/seccomp-util.c v252"},
    SandboxAllowance{
        "gdrdrv", AllowanceWhen::node_has_device, "DeviceAllow", "/dev/gdrdrv rw", "/dev/gdrdrv",
        "",
        "gdrcopy's CPU mapping of GPU memory: TensorRT-LLM's MoE load balancer "
        "(\"HostAccessibleDeviceAllocator is not supported\"), NVSHMEM, UCX and NCCL use it",
        "one more driver's ioctls (gdrdrv maps only GPU memory the caller already owns)",
        "NVIDIA/gdrcopy src/gdrdrv/gdrdrv.c v2.5; NVIDIA/TensorRT-LLM "
        "cpp/tensorrt_llm/runtime/moeLoadBalancer v1.1.0"},
    SandboxAllowance{
        "xpmem", AllowanceWhen::node_has_device, "DeviceAllow", "/dev/xpmem rw", "/dev/xpmem", "",
        "cross-process memory attach UCX and Open MPI use for intra-node copies",
        "a process may map memory another process exported to it",
        "openucx/ucx src/uct/sm/mm/xpmem/mm_xpmem.c v1.21; hpc/xpmem kernel/xpmem_main.c v2.7"},
    SandboxAllowance{
        "mps", AllowanceWhen::mps_daemon, "BindPaths", "/tmp/nvidia-mps", "/tmp/nvidia-mps", "",
        "an MPS client finds the control daemon's pipes in CUDA_MPS_PIPE_DIRECTORY (default "
        "/tmp/nvidia-mps), which PrivateTmp=yes would hide",
        "the engine can talk to the node's MPS control daemon, as any CUDA client there can",
        "NVIDIA Multi-Process Service documentation, \"Environment Variables\" (CUDA 12.8)"},
    SandboxAllowance{
        "memlock", AllowanceWhen::engine_flag, "LimitMEMLOCK", "infinity", "", "--mlock",
        "llama.cpp --mlock locks the model in RAM (common/arg.cpp b6000) and only warns when "
        "RLIMIT_MEMLOCK refuses",
        "the engine can pin host memory up to its MemoryMax= (pinned pages are never swapped)",
        "ggml-org/llama.cpp common/arg.cpp, src/llama-mmap.cpp b6000"},
    SandboxAllowance{
        "ptrace", AllowanceWhen::profile_allows, "SystemCallFilter", "ptrace", "", "",
        "in-unit py-spy dump/top and gdb attach to the engine's processes",
        "an engine process may read and write the memory of any process it may ptrace (the "
        "unit's own; other units of the same user where Yama's ptrace_scope is 0)",
        "benfred/py-spy README (v0.4.0), \"ptrace permissions\""},
    SandboxAllowance{"perf_event_open", AllowanceWhen::profile_allows, "SystemCallFilter",
                     "perf_event_open", "", "",
                     "Nsight Systems CPU sampling and perf inside the unit",
                     "kernel performance counters and sampling (bounded by perf_event_paranoid)",
                     "NVIDIA Nsight Systems user guide, \"Linux Requirements\" (2025.3)"},
};

}  // namespace

std::span<const SandboxAllowance> sandbox_allowances() {
  return kAllowances;
}

const SandboxAllowance* sandbox_allowance(std::string_view name) {
  for (const auto& allowance : kAllowances)
    if (allowance.name == name) return &allowance;
  return nullptr;
}

std::vector<std::string> sandbox_allowance_names() {
  std::vector<std::string> names;
  for (const auto& allowance : kAllowances) names.emplace_back(allowance.name);
  return names;
}

}  // namespace gl
