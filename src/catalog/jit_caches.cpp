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
      // apache/tvm-ffi python/tvm_ffi/cpp/extension.py, _hash_sources (commit 2ff3eae): a build is
      // found by a hash of the sources and the caller's extra flags only; the -gencode target it
      // detects from nvidia-smi and the nvcc under CUDA_HOME are not in it. TVM_FFI_CACHE_DIR,
      // default ~/.cache/tvm-ffi, is where its JIT builds go (as FlashInfer and SGLang call it).
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
      // sgl-project/sglang python/sglang/srt/environ.py, class Envs: SGLANG_CACHE_DIR defaults to
      // ~/.cache/sglang and SGLANG_JIT_CACHE_DIR (JIT kernel builds), unset by default, resolves to
      // ~/.cache/sglang/jit. Read in a recent copy through the code index, commit not recorded (the
      // indexed sgl-project commit 21ff4b0 predates both). The unit sets both, so "jit" below
      // SGLANG_CACHE_DIR is gpulaunch's layout, not SGLang's default.
      {"sglang",
       "sglang",
       {{"SGLANG_CACHE_DIR", ""}, {"SGLANG_JIT_CACHE_DIR", "jit"}},
       false,
       "keying unverified: treated as not keyed",
       ""},
      // triton-lang/triton python/triton/compiler/compiler.py, compile(): the on-disk key hashes
      // triton's own version, the source, the backend hash, the options and the cache-invalidating
      // env vars; third_party/nvidia/backend/compiler.py, CUDABackend.hash (commit 2b43145): the
      // backend hash is the ptxas version and the target capability, so toolkit and arch key it.
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
       "",
       {},
       false},
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
      // pytorch/pytorch torch/_inductor/runtime/cache_dir_utils.py, cache_dir() (commit 9a48faa):
      // TORCHINDUCTOR_CACHE_DIR, default <tmpdir>/torchinductor_<user>; Triton kernels it compiles
      // go to <dir>/triton/<device> unless TRITON_CACHE_DIR is set. The "keyed by toolkit and arch"
      // note (the FX graph cache's system key) was not re-read for this comment.
      {"inductor",
       "torchinductor",
       {{"TORCHINDUCTOR_CACHE_DIR", ""}},
       true,
       "keyed by toolkit and arch",
       ""},
      // deepseek-ai/DeepGEMM csrc/jit/compiler.hpp, Compiler::build (commit 6439a3d):
      // DG_JIT_CACHE_DIR
      // (default $HOME/.deep_gemm); each kernel is cache/kernel.<name>.<hash>, hashed over the
      // name,
      // a digest of DeepGEMM's headers, the compiler signature (NVCC or NVRTC major.minor) and the
      // flags, which carry --gpu-architecture=sm_<arch>a. sgl-project/sglang
      // python/sglang/srt/environ.py (commit 21ff4b0): SGLANG_DG_CACHE_DIR, default
      // ~/.cache/deep_gemm, the directory SGLang hands DeepGEMM as DG_JIT_CACHE_DIR.
      {"deep-gemm",
       "deep_gemm",
       {{"DG_JIT_CACHE_DIR", ""}, {"SGLANG_DG_CACHE_DIR", ""}},
       true,
       "keyed by toolkit and arch",
       ""},
      // NVIDIA/cutlass python/CuTeDSL/cutlass/base_dsl/cache_helpers.py,
      // get_default_generated_ir_path (commit 30221d6, the nvidia-cutlass-dsl package): the CuTe
      // DSL's compiled kernels go to CUTE_DSL_CACHE_DIR, default $TMPDIR (else
      // tempfile.gettempdir())/<user>/cutlass_python_cache, which PrivateTmp=yes empties at every
      // start. FlashInfer's, SGLang's and FlashAttention 4's CuTe DSL kernels compile through it.
      // How an entry is keyed was not read: treated as not keyed.
      {"cute-dsl",
       "cute_dsl",
       {{"CUTE_DSL_CACHE_DIR", ""}},
       false,
       "keying unverified: treated as not keyed; its default lives in the temp dir, which "
       "PrivateTmp=yes empties at every start",
       ""},
      // vllm-project/vllm vllm/envs.py, environment_variables["VLLM_CACHE_ROOT"] (commit f218f9c):
      // default <XDG_CACHE_HOME or ~/.cache>/vllm. The "config and code hash" keying of its
      // torch.compile cache was not re-read for this comment.
      {"vllm", "vllm", {{"VLLM_CACHE_ROOT", ""}}, true, "keyed by config and code hash", ""},
      // NVIDIA CUDA C++ Programming Guide, "Just-in-Time Compilation" and "CUDA Environment
      // Variables", as restated in RAPIDS cuVS "Advanced Topics / Just-in-Time Compilation"
      // (docs.rapids.ai/api/cuvs/stable): CUDA_CACHE_PATH moves the driver's JIT compute cache
      // (default ~/.nv/ComputeCache), and an on-disk entry is valid until the driver is upgraded.
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
