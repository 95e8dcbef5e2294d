// SPDX-License-Identifier: Apache-2.0
#pragma once
// What NCCL, RDMA and the engines need from the node besides its GPUs and toolkit (issue 16, the
// OS side of the node preflight): where each fact is read, the thresholds `check` holds it to,
// and the upstream source of each. Pure data.

#include <span>
#include <string_view>

namespace gl {

// InfiniBand devices the kernel knows (one directory entry each: "mlx5_0").
inline constexpr std::string_view kInfinibandClassDirectory = "/sys/class/infiniband";
// Loaded modules, one line each, the name first ("nvidia_peermem 16384 0 - Live ...").
inline constexpr std::string_view kModulesFile = "/proc/modules";

// A peer-memory client: what lets an RDMA NIC read and write GPU memory (GPUDirect RDMA).
struct PeerMemoryModule {
  std::string_view module;  // its name in /proc/modules and for modprobe
  std::string_view source;
};
// nvidia_peermem ships with the NVIDIA driver (kernel-open/nvidia-peermem, since R470) and
// replaced Mellanox's nv_peer_mem (Mellanox/nv_peer_memory), which older nodes still load.
std::span<const PeerMemoryModule> peer_memory_modules();
// The files NCCL itself tests to decide that GPUDirect RDMA works over InfiniBand (NVIDIA/nccl
// src/transport/net_ib.cc, ibGdrSupportInitOnce, at 48bb7fe): nv_peer_mem's two and
// nvidia_peermem's. Without any of them, and without DMA-BUF (NCCL >= 2.19, open kernel modules),
// NCCL stages every transfer through host memory: NVIDIA/nccl #1676 measured all-reduce fall from
// about 180 to 10 GB/s.
std::span<const std::string_view> nccl_peer_memory_files();
inline constexpr std::string_view kPeerMemoryIssue = "NVIDIA/nccl #1676";
// Where the fix makes the module load at every boot.
inline constexpr std::string_view kModulesLoadFile = "/etc/modules-load.d/nvidia-peermem.conf";

// What the unit adds on a node with InfiniBand: the verbs devices NCCL's IB transport opens
// (/dev/infiniband/uverbsN, "infiniband_verbs" in /proc/devices: drivers/infiniband/core/
// uverbs_main.c) and the RDMA connection manager KV-transfer libraries use (/dev/infiniband/
// rdma_cm, a misc device), as DeviceAllow= entries under DevicePolicy=closed.
std::span<const std::string_view> infiniband_device_allow();
// The device group DeviceAllow= must name for NCCL to open a verbs device.
inline constexpr std::string_view kInfinibandVerbsGroup = "char-infiniband_verbs";
// RDMA registers (pins) memory against RLIMIT_MEMLOCK; NCCL's documentation runs containers with
// `--ulimit memlock=-1` (NCCL user guide, troubleshooting, "Runtime and MPI issues": Docker).
inline constexpr std::string_view kRdmaMemlock = "infinity";

// The interface NCCL's bootstrap and socket transport use (NCCL user guide, "Environment
// Variables", NCCL_SOCKET_IFNAME; NCCL 2.27) and Gloo's, which torch.distributed's CPU groups and
// vLLM's and SGLang's control planes use (PyTorch docs/source/distributed.rst, "Choosing the
// network interface to use", GLOO_SOCKET_IFNAME; v2.9.0). Unset, NCCL takes the first interface
// by its own preference order, and Gloo binds the address the host's name resolves to, or
// loopback when it does not resolve (torch/csrc/distributed/c10d/GlooDeviceFactory.hpp,
// makeDefaultDevice; v2.9.0): ranks then wait for each other until the collective times out.
inline constexpr std::string_view kNcclSocketInterfaceVariable = "NCCL_SOCKET_IFNAME";
inline constexpr std::string_view kGlooSocketInterfaceVariable = "GLOO_SOCKET_IFNAME";

// NCCL's shared-memory transport (its buffers are files in /dev/shm; NCCL_BUFFSIZE is 4 MiB per
// connection and channel, so a segment is "4194660 bytes" in NCCL's own error): "NCCL WARN Error:
// failed to extend /dev/shm/nccl-03v824 to 4194660 bytes" when the filesystem is too small, and
// NCCL fails to initialise. The size NCCL's documentation gives containers: `--shm-size=1g` (NCCL
// user guide, troubleshooting, "Runtime and MPI issues": Shared memory, Docker); Docker's own
// default is 64 MiB.
inline constexpr std::string_view kShmDirectory = "/dev/shm";
inline constexpr unsigned long long kNcclShmMinimumBytes = 1ULL << 30;
inline constexpr std::string_view kNcclShmSource =
    "NCCL user guide, troubleshooting: \"Runtime and MPI issues\", Shared memory (--shm-size=1g)";

// Model fit (`check`'s model-does-not-fit): the weights plus one request's KV cache at the
// model's full context must fit in the memory share the engine takes on the GPUs holding one copy
// of the model. The KV cache is counted at 2 bytes an element, the engines' default ("auto":
// the model's bf16/fp16, SGLang --kv-cache-dtype, vLLM --kv-cache-dtype); an fp8 cache halves it.
// vLLM refuses to start without room for one request of --max-model-len ("To serve at least one
// request with the model's max seq len ...", vllm/v1/core/kv_cache_utils.py); SGLang starts with
// less but caps the context to what fits.
inline constexpr unsigned long long kKvCacheElementBytes = 2;
// The flag in engine.args that sets the context the KV budget counts, where the engine's row has
// none of its own (catalog/engines' context knob): SGLang's --context-length
// (python/sglang/srt/server_args.py), vLLM's --max-model-len (vllm/engine/arg_utils.py).
std::string_view fit_context_flag(std::string_view engine_kind);
// The checkpoint's own index (huggingface_hub's sharded safetensors layout) and the weight files
// summed without one.
inline constexpr std::string_view kSafetensorsIndex = "model.safetensors.index.json";
std::span<const std::string_view> weight_file_suffixes();  // ".safetensors", ".bin", ".gguf"
inline constexpr std::string_view kModelConfig = "config.json";

}  // namespace gl
