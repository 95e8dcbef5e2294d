// SPDX-License-Identifier: Apache-2.0
#pragma once
// The step-down ladder: an engine argv with its memory knobs lowered `gpu_level` steps (after
// CUDA OOMs) and its concurrency lowered `host_level` steps (after host OOMs), within bounds.
// A knob missing from the argv is inserted, starting from the engine's own default on the unit's
// GPUs (catalog/engines' knob_default); one the engine sizes itself is lowered only where the
// argv sets it.

#include <optional>
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
  // "--mem-fraction-static 0.907 -> 0.857 (from SGLang default for 143771 MiB GPUs ...)"; a
  // knob the argv set says "(from engine.args)".
  std::vector<std::string> changes;
};

// The most steps that can still change something for `kind` on any GPU: counted from the largest
// default the engine has (EngineKnob::default_ceiling), as record-exit does not know the GPUs;
// on smaller defaults the last steps stay at the floor.
int max_gpu_level(EngineKind kind, const StepBounds& bounds = {});
int max_host_level(EngineKind kind, const StepBounds& bounds = {});

// `gpus`: the unit's GPUs, which the engine's defaults depend on (unknown: the engine's own
// fallback for that case). `engine_version`: the installed release (`run`'s --engine-version);
// a knob the argv lacks is inserted in the spelling that release takes (catalog/engines'
// spell_flag), the conservative one where it is unknown.
SteppedArgv step_down(std::vector<std::string> argv, EngineKind kind, int gpu_level, int host_level,
                      const GpuContext& gpus = {}, const StepBounds& bounds = {},
                      const std::optional<std::string>& engine_version = std::nullopt);

// What step_down does to each of an engine's knobs, for the manual: whether it is lowered, after
// which kind of OOM, and whether an unset knob is inserted from the engine's own default or
// lowered only where engine.args sets it. Read from the same rules step_down applies.
enum class KnobStep { untouched, from_default, where_set };
enum class KnobTrigger { gpu_oom, host_oom };
struct KnobPolicy {
  std::string_view key;   // the profile's key ("engine.mem_fraction"), or "context" (engine.args)
  std::string_view flag;  // the engine's spelling
  KnobStep step;
  KnobTrigger trigger;
};
// The knobs the engine has a flag for, in the manual's order: each key of catalog/engine_knobs
// (its KnobStepDown), then the context.
std::vector<KnobPolicy> knob_policies(EngineKind kind);

}  // namespace gl
