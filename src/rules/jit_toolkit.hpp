// SPDX-License-Identifier: Apache-2.0
#pragma once
// The toolkit a JIT library picks in a given environment, in FlashInfer's order
// (field-facts section 2): $CUDA_HOME, $CUDA_PATH, two levels above `which nvcc`, /usr/local/cuda.

#include <string>

#include "facts/environment.hpp"
#include "facts/facts.hpp"

namespace gl {

struct JitPick {
  std::string root;                      // "" when nothing was found
  std::string how;                       // "CUDA_HOME", "`which nvcc` = /usr/bin/nvcc", ...
  const ToolkitFact* toolkit = nullptr;  // the probed toolkit at root, when facts have it

  bool usable() const { return toolkit && toolkit->nvcc_exists && toolkit->version(); }
};

JitPick pick_jit_toolkit(const EnvironmentVariables& environment, const Facts& facts);

}  // namespace gl
