// SPDX-License-Identifier: Apache-2.0
#include "catalog/jit_caches.hpp"

namespace gl {

std::span<const JitCache> jit_caches() {
  static const std::vector<JitCache> table{
      // flashinfer/jit/env.py and jit/cubin_loader.py (flashinfer main fb28d72, after v0.6.18rc7):
      // the JIT objects under .cache/flashinfer/<version>/<arch>/cached_ops, locks in its tmp/;
      // downloaded cubins in .cache/flashinfer/cubins (kFlashinferCubinSubpath) with a
      // <file>.lock beside each, but only where neither FLASHINFER_CUBIN_DIR nor the
      // flashinfer-cubin package names a directory: the unit never sets FLASHINFER_CUBIN_DIR,
      // which would hide the package SGLang installs with FlashInfer.
      {"flashinfer",
       "flashinfer",
       {{"FLASHINFER_WORKSPACE_BASE", ""}},
       false,
       "keyed by FlashInfer version and arch only; a re-pointed toolkit leaves stale objects; "
       "holds the cubins FlashInfer downloads when no flashinfer-cubin package is installed",
       kLocksAnywhere},
      {"tvm-ffi", "tvm-ffi", {{"TVM_FFI_CACHE_DIR", ""}}, false, "not keyed", ""},
      // torch/utils/cpp_extension.py, _get_build_directory (torch 2.9): the py<XY>_cu<CUDA>
      // subdirectory is added to torch's default root only; under TORCH_EXTENSIONS_DIR, which
      // the unit always sets, an extension is <dir>/<name>, rebuilt on changed sources and flags.
      {"torch-extensions",
       "torch_extensions",
       {{"TORCH_EXTENSIONS_DIR", ""}},
       false,
       "not keyed: TORCH_EXTENSIONS_DIR drops torch's py/cu subdirectory, and a rebuild follows "
       "changed sources and flags, never a changed nvcc",
       ""},
      {"sglang",
       "sglang",
       {{"SGLANG_CACHE_DIR", ""}, {"SGLANG_JIT_CACHE_DIR", "jit"}},
       false,
       "keying unverified: treated as not keyed",
       ""},
      {"triton", "triton", {{"TRITON_CACHE_DIR", ""}}, true, "keyed by toolkit and arch", ""},
      // python/triton/knobs.py, cache_knobs (triton main, 00c7dbd): TRITON_HOME (default ~) holds
      // .triton/cache, .triton/dump and .triton/override; TRITON_CACHE_DIR, pinned above, moves
      // the cache alone. Pinned so dumps and overrides stay out of the engine's HOME; what is
      // there is the operator's (TRITON_KERNEL_DUMP/OVERRIDE), never cleared for a new node.
      {"triton-home",
       "triton_home",
       {{"TRITON_HOME", ""}},
       true,
       "kernel dumps and overrides the operator asked for; compiled kernels go to TRITON_CACHE_DIR",
       ""},
      // tilelang/env.py and cache/kernel_cache.py (tile-ai/tilelang v0.1.13-82-ga35008a4): kernels
      // under <dir>/<tilelang version>/<platform>, keyed on the kernel's source, target string
      // ("auto" unless given) and pass configs, not on nvcc or the GPU. SGLang compiles its DSA
      // (sparse attention) kernels through it.
      {"tilelang",
       "tilelang",
       {{"TILELANG_CACHE_DIR", ""}},
       false,
       "keyed by TileLang's version and the kernel, not by nvcc or the GPU",
       "",
       {"toolkit_path", "toolkit_version", "gpu_archs"}},
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
