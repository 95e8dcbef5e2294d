// SPDX-License-Identifier: Apache-2.0
#pragma once
// The commands engines ship that fill their compiled caches without serving (issue 31): `warm
// --compile` runs an engine's step as its service would, so the first start finds the kernels
// built. One row per engine that has one upstream; the others say why they have none.

#include <string_view>
#include <vector>

#include "catalog/engines.hpp"

namespace gl {

struct PrecompileStep {
  EngineKind kind;
  std::string_view module;  // run as `VENV_PYTHON -m MODULE` followed by the service's flags
  // The flag that bounds the step's own wait for its server, in seconds, and its default.
  std::string_view timeout_flag;
  long long default_timeout_seconds;
  std::vector<std::string_view> caches;  // the catalog/jit_caches rows it fills
  std::string_view finished_line;        // what it prints once the kernels are built
  // What it holds while it runs: the service cannot run beside it.
  std::string_view holds;
  std::string_view source;  // the upstream file and version this was read from
};

// The step for `kind`; nullptr where the catalog names none (no_precompile_reason says why).
const PrecompileStep* precompile_step(EngineKind kind);
std::string_view no_precompile_reason(EngineKind kind);

}  // namespace gl
