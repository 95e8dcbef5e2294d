// SPDX-License-Identifier: Apache-2.0
#pragma once
// The profile keys that become an engine flag (engine.mem_fraction, engine.max_requests, ...),
// one row each: the key, its type, bounds and help, the flag each engine takes for it, and what
// the supervisor does with it after an OOM. The schema, the profile's reader, its cross rules,
// the argv builders and the man page's ENGINES section all read this table, so a key passed
// through to the engine is one row here (CONTRIBUTING.md, "A pass-through engine key").

#include <span>
#include <string>
#include <string_view>

#include "catalog/engines.hpp"

namespace gl {

enum class KnobValue { number, integer };

// What supervise/step_down does with the knob (knob_policies; the man page says it per engine).
enum class KnobStepDown {
  never,         // passed through as set: the supervisor leaves it as it is
  memory_share,  // lowered after a CUDA OOM where the engine's share has a default
  with_share,    // lowered after a CUDA OOM beside the share (the CUDA graphs' batch)
  concurrency,   // lowered after a host OOM
};

// The flag one engine takes for a pass-through knob, and where that was read.
struct KnobFlag {
  EngineKind kind;
  std::string_view flag;
  std::string_view source;  // the upstream file and version
};

struct EngineKnobKey {
  std::string_view key;  // the profile's key: "engine.max_requests"
  KnobValue value;
  double low;
  double high;
  bool above_low;           // low itself is out (a memory share of 0)
  std::string_view sample;  // a valid value as TOML, for the schema's tests
  std::string_view help;
  KnobStepDown step_down;
  // A knob step-down lowers is spelled in the engine's row, beside the engine's default it steps
  // from (EngineRow's EngineKnob, which supervise/step_down reads); nullptr: `flags` spell it.
  const EngineKnob EngineRow::*row_knob = nullptr;
  std::span<const KnobFlag> flags{};
};

std::span<const EngineKnobKey> engine_knob_keys();
const EngineKnobKey* find_engine_knob_key(std::string_view key);

// The flag `kind` takes for the knob, in its current spelling (catalog/engines' flag_versions
// fits it to a release); empty: the engine has none, and the profile may not set the key.
std::string_view engine_knob_flag(const EngineKnobKey& knob, EngineKind kind);

// The value as the flag's argument: "0.5", "64".
std::string engine_knob_argument(const EngineKnobKey& knob, double value);

}  // namespace gl
