// SPDX-License-Identifier: Apache-2.0
#include "catalog/node_requirements.hpp"

#include <array>

namespace gl {
namespace {

constexpr std::array kPeerMemoryModules{
    PeerMemoryModule{"nvidia_peermem",
                     "NVIDIA driver, kernel-open/nvidia-peermem (R470 and later)"},
    PeerMemoryModule{"nv_peer_mem", "Mellanox/nv_peer_memory (before nvidia_peermem)"},
};

constexpr std::array<std::string_view, 3> kNcclPeerMemoryFiles{
    "/sys/kernel/mm/memory_peers/nv_mem/version",
    "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
    "/sys/module/nvidia_peermem/version",
};

constexpr std::array<std::string_view, 2> kInfinibandDeviceAllow{
    "char-infiniband_verbs rw",
    "/dev/infiniband/rdma_cm rw",
};

constexpr std::array<std::string_view, 3> kWeightFileSuffixes{".safetensors", ".bin", ".gguf"};

}  // namespace

std::span<const PeerMemoryModule> peer_memory_modules() {
  return kPeerMemoryModules;
}

std::span<const std::string_view> nccl_peer_memory_files() {
  return kNcclPeerMemoryFiles;
}

std::span<const std::string_view> infiniband_device_allow() {
  return kInfinibandDeviceAllow;
}

std::string_view fit_context_flag(std::string_view engine_kind) {
  if (engine_kind == "sglang") return "--context-length";
  if (engine_kind == "vllm") return "--max-model-len";
  return "";
}

std::span<const std::string_view> weight_file_suffixes() {
  return kWeightFileSuffixes;
}

}  // namespace gl
