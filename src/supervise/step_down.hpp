// SPDX-License-Identifier: Apache-2.0
#pragma once
// The step-down ladder: an engine argv with its memory knobs lowered `gpu_level` steps (after
// CUDA OOMs) and its concurrency lowered `host_level` steps (after host OOMs), within bounds.
// A knob missing from the argv is inserted, starting from the engine's own default
// (catalog/engines); one the engine sizes itself is lowered only where the argv sets it.

#include <string>
#include <vector>

#include "catalog/engines.hpp"

namespace gl {

struct StepBounds {
  double fraction_step = 0.05;
  double fraction_floor = 0.5;
  long long concurrency_floor = 8;
  long long graph_bs_floor = 1;
  long long context_floor = 1024;  // tokens
  // Halvings of a knob the engine sizes itself (no default to count from): down to 1/8 of what
  // the profile set.
  int unknown_start_levels = 3;
};

struct SteppedArgv {
  std::vector<std::string> argv;
  std::vector<std::string> changes;  // "--mem-fraction-static 0.88 -> 0.83"
};

// The most steps that still change something for `kind`.
int max_gpu_level(EngineKind kind, const StepBounds& bounds = {});
int max_host_level(EngineKind kind, const StepBounds& bounds = {});

SteppedArgv step_down(std::vector<std::string> argv, EngineKind kind, int gpu_level, int host_level,
                      const StepBounds& bounds = {});

}  // namespace gl
