// SPDX-License-Identifier: Apache-2.0
#pragma once
// The toolkit a JIT library picks in a given environment, in FlashInfer's order
// (flashinfer/jit/cpp_ext.py get_cuda_path, FlashInfer v0.6.18rc7; torch/utils/cpp_extension.py
// _find_cuda_home): $CUDA_HOME, $CUDA_PATH, two levels above `which nvcc` (links not followed),
// /usr/local/cuda. And the compiler FlashInfer runs there: $FLASHINFER_NVCC when set (its
// version gate still asks $cuda_home/bin/nvcc), wrapped by $FLASHINFER_NVCC_LAUNCHER.

#include <optional>
#include <string>

#include "facts/environment.hpp"
#include "facts/facts.hpp"

namespace gl {

struct JitPick {
  std::string root;                      // "" when nothing was found
  std::string how;                       // "CUDA_HOME", "`which nvcc` = /usr/bin/nvcc", ...
  const ToolkitFact* toolkit = nullptr;  // the probed toolkit at root, when facts have it
  // FlashInfer's compiler: "" = root/bin/nvcc, else the program FLASHINFER_NVCC names (its
  // first word: ninja hands the value to a shell) and the toolkit facts have for it, if any.
  std::string nvcc_override;
  const ToolkitFact* compiler = nullptr;
  std::optional<std::string> launcher;  // FLASHINFER_NVCC_LAUNCHER's program, as written

  bool usable() const { return toolkit && toolkit->nvcc_exists && toolkit->version(); }
  // The toolkit whose nvcc compiles: the override's when set, else the root's.
  const ToolkitFact* compiling() const { return nvcc_override.empty() ? toolkit : compiler; }
};

JitPick pick_jit_toolkit(const EnvironmentVariables& environment, const Facts& facts);

}  // namespace gl
