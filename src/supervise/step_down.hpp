#pragma once
// The step-down ladder: an engine argv with its memory knobs lowered `gpu_level` steps (after
// CUDA OOMs) and its concurrency lowered `host_level` steps (after host OOMs), within bounds.
// A knob missing from the argv is inserted, starting from the engine's own default.

#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace gl {

struct StepBounds {
  double fraction_step = 0.05;
  double fraction_floor = 0.5;
  long long concurrency_floor = 8;
  long long graph_bs_floor = 1;
  long long default_concurrency = 256;  // vLLM's --max-num-seqs; SGLang sizes its own
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
