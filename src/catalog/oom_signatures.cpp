// SPDX-License-Identifier: Apache-2.0
#include "catalog/oom_signatures.hpp"

#include <array>
#include <vector>

#include "catalog/engines.hpp"
#include "util/name_table.hpp"

namespace gl {

std::span<const OomSignature> cuda_oom_signatures() {
  // Each engine's own lines first (catalog/engines), then what torch and the CUDA runtime print
  // for any of them: first match wins, so the specific advice comes before the generic error.
  static const std::vector<OomSignature> kSignatures = [] {
    std::vector<OomSignature> all;
    for (const EngineRow& row : engine_rows())
      all.insert(all.end(), row.oom.begin(), row.oom.end());
    // c10/cuda/CUDACachingAllocator.cpp, the caching allocator's malloc: when cudaMalloc
    // fails even after freeing its cache it raises c10::OutOfMemoryError, "CUDA out of
    // memory. Tried to allocate ..." (read in indexed copies of pytorch/pytorch, the newest
    // with "GPU N has a total capacity of"; commit not pinned). Which Python name the traceback
    // shows (torch.OutOfMemoryError or torch.cuda.OutOfMemoryError) depends on the release.
    for (std::string_view text :
         {"torch.OutOfMemoryError: CUDA out of memory",
          "torch.cuda.OutOfMemoryError: CUDA out of memory",
          // The CUDA runtime's text for cudaErrorMemoryAllocation after "CUDA error: ".
          "CUDA error: out of memory",
          // cuBLAS could not allocate its workspace, typically while CUDA graphs are captured:
          // torch reports "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(
          // handle)`" (aten/src/ATen/cuda/CublasHandlePool.cpp, pytorch/pytorch 2.9), and
          // SGLang counts it as an OOM of the capture (cuda_graph_backend_utils, f438a11).
          "CUBLAS_STATUS_ALLOC_FAILED"})
      all.push_back(OomSignature{text, MemoryKnob::mem_fraction});
    for (const ConfigErrorSignature& error : engine_config_errors())
      all.push_back(OomSignature{error.text, MemoryKnob::kv_cache_room});
    return all;
  }();
  return kSignatures;
}

std::span<const ConfigErrorSignature> engine_config_errors() {
  static const std::vector<ConfigErrorSignature> kErrors = [] {
    std::vector<ConfigErrorSignature> all;
    for (const EngineRow& row : engine_rows())
      all.insert(all.end(), row.config_errors.begin(), row.config_errors.end());
    return all;
  }();
  return kErrors;
}

std::span<const std::string_view> not_oom_markers() {
  static const std::vector<std::string_view> kMarkers = [] {
    std::vector<std::string_view> all;
    for (const EngineRow& row : engine_rows())
      all.insert(all.end(), row.not_oom.begin(), row.not_oom.end());
    return all;
  }();
  return kMarkers;
}

namespace {
constexpr NameTable<MemoryKnob, 4> kKnobNames{{
    {MemoryKnob::mem_fraction, "mem-fraction"},
    {MemoryKnob::max_requests, "max-requests"},
    {MemoryKnob::cuda_graph_max_bs, "cuda-graph-max-bs"},
    {MemoryKnob::kv_cache_room, "kv-cache-room"},
}};
}  // namespace

std::string_view memory_knob_name(MemoryKnob knob) {
  return name_in(kKnobNames, knob, "mem-fraction");
}

std::optional<MemoryKnob> parse_memory_knob(std::string_view name) {
  return value_in(kKnobNames, name);
}

}  // namespace gl
