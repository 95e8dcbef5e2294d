// SPDX-License-Identifier: Apache-2.0
#include "catalog/jit_caches.hpp"

namespace gl {

std::span<const JitCache> jit_caches() {
  static const std::vector<JitCache> table{
      {"flashinfer",
       "flashinfer",
       {{"FLASHINFER_WORKSPACE_BASE", ""}},
       false,
       "keyed by FlashInfer version and arch only; a re-pointed toolkit leaves stale objects",
       "cached_ops/tmp"},
      {"tvm-ffi", "tvm-ffi", {{"TVM_FFI_CACHE_DIR", ""}}, false, "not keyed", ""},
      {"torch-extensions",
       "torch_extensions",
       {{"TORCH_EXTENSIONS_DIR", ""}},
       false,
       "keyed by torch's CUDA, not by nvcc",
       ""},
      {"sglang",
       "sglang",
       {{"SGLANG_CACHE_DIR", ""}, {"SGLANG_JIT_CACHE_DIR", "jit"}},
       false,
       "keying unverified: treated as not keyed",
       ""},
      {"triton", "triton", {{"TRITON_CACHE_DIR", ""}}, true, "keyed by toolkit and arch", ""},
      {"inductor",
       "torchinductor",
       {{"TORCHINDUCTOR_CACHE_DIR", ""}},
       true,
       "keyed by toolkit and arch",
       ""},
      {"deep-gemm",
       "deep_gemm",
       {{"DG_JIT_CACHE_DIR", ""}, {"SGLANG_DG_CACHE_DIR", ""}},
       true,
       "keyed by toolkit and arch",
       ""},
      {"vllm", "vllm", {{"VLLM_CACHE_ROOT", ""}}, true, "keyed by config and code hash", ""},
      {"cuda-compute",
       "nv-compute-cache",
       {{"CUDA_CACHE_PATH", ""}},
       true,
       "the driver invalidates it on upgrade",
       ""},
  };
  return table;
}

const JitCache* find_jit_cache(std::string_view name) {
  for (const auto& cache : jit_caches())
    if (cache.name == name) return &cache;
  return nullptr;
}

}  // namespace gl
