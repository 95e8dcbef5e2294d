// SPDX-License-Identifier: Apache-2.0
#include "catalog/precompile.hpp"

namespace gl {
namespace {

const std::vector<PrecompileStep>& steps() {
  static const std::vector<PrecompileStep> rows{
      // sgl-project/sglang python/sglang/compile_deep_gemm.py (commit 06c48ca): parses ServerArgs
      // (every launch_server flag) plus CompileArgs' --timeout (default 3600 s), forces
      // SGLANG_ENABLE_JIT_DEEPGEMM, starts its own server at the arguments' host and port with
      // dummy weights, CUDA graphs and torch.compile off and the compile-deep-gemm warm-up; rank 0
      // waits for /v1/models and sends one /generate, then it prints the line below, sleeps 10 s
      // and kills its server; a server not ready within --timeout raises TimeoutError (exit 1).
      // The kernels land in DG_JIT_CACHE_DIR.
      // --compile-mode (read for issue 42): sgl-project/sglang #5840 ("offline compile_deep_gemm
      // for PD", 2025-04-28) added it to CompileArgs with default "offline", which serves nothing,
      // prints no finished line, raises NotImplementedError for all but DeepseekV3ForCausalLM and
      // writes DG_CACHE_DIR; the PR was closed unmerged, and the copies holding the option
      // (commit 01117d9, and one defaulting to "online") are its branch's. Main at 06c48ca has
      // --timeout alone, and a release's run in sgl-project/sglang #8321 (2025-07-24) prints the
      // online path's lines ("Disable CUDA Graph and Torch Compile to save time...", "Begin
      // DeepGEMM Kernels compilation..."). No release read takes the option, so it is not passed:
      // on a release without it `--compile-mode online` exits 2 ("unrecognized arguments").
      {EngineKind::sglang,
       "sglang.compile_deep_gemm",
       "--timeout",
       3600,
       {"deep-gemm"},
       "DeepGEMM Kernels compilation finished successfully.",
       "the profile's port and GPUs (it serves the model itself while it compiles)",
       "sgl-project/sglang python/sglang/compile_deep_gemm.py @ 06c48ca"},
  };
  return rows;
}

}  // namespace

const PrecompileStep* precompile_step(EngineKind kind) {
  for (const auto& row : steps())
    if (row.kind == kind) return &row;
  return nullptr;
}

std::string_view no_precompile_reason(EngineKind kind) {
  switch (kind) {
    case EngineKind::sglang:
      return {};
    case EngineKind::vllm:
      return "vLLM fills its torch.compile and CUDA graph caches (VLLM_CACHE_ROOT) during a start "
             "and the catalog names no separate upstream command for it: start it once with "
             "`gpulaunch up`, or seed the caches from a node that did with `gpulaunch cache "
             "export` and `cache import`";
    case EngineKind::trtllm:
      return "trtllm-serve builds at start and the catalog names no separate upstream precompile "
             "command: start it once with `gpulaunch up`, or seed the caches with `gpulaunch "
             "cache export` and `cache import`";
    case EngineKind::llamacpp:
      return "llama-server compiles no kernels at start: there is nothing to precompile";
    case EngineKind::command:
      return "a command engine's compile step is its own: run it with `gpulaunch exec`";
  }
  return {};
}

}  // namespace gl
