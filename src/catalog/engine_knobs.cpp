// SPDX-License-Identifier: Apache-2.0
#include "catalog/engine_knobs.hpp"

#include <array>
#include <cmath>

#include <fmt/core.h>

namespace gl {
namespace {

// Rows are built by assignment: g++ 12 warns about members a designated initializer leaves out.
constexpr EngineKnobKey knob(std::string_view key, KnobValue value, double low, double high,
                             bool above_low, std::string_view sample, std::string_view help,
                             KnobStepDown step_down, const EngineKnob EngineRow::*row_knob,
                             std::span<const KnobFlag> flags = {}) {
  EngineKnobKey row{};
  row.key = key;
  row.value = value;
  row.low = low;
  row.high = high;
  row.above_low = above_low;
  row.sample = sample;
  row.help = help;
  row.step_down = step_down;
  row.row_knob = row_knob;
  row.flags = flags;
  return row;
}

// In the order the argv builders pass them and the man page names them. The memory and
// concurrency knobs are spelled in each engine's row (catalog/engines.cpp, with their sources),
// where step-down reads them beside the engine's defaults.
const std::array kKnobs{
    knob("engine.mem_fraction", KnobValue::number, 0, 1, true, "0.5",
         "GPU memory fraction (the engine's flag under ENGINES)", KnobStepDown::memory_share,
         &EngineRow::mem_fraction),
    knob("engine.max_requests", KnobValue::integer, 1, 1'000'000, false, "64",
         "Concurrent requests (the engine's flag under ENGINES)", KnobStepDown::concurrency,
         &EngineRow::max_requests),
    knob("engine.cuda_graph_max_bs", KnobValue::integer, 1, 4096, false, "32",
         "Largest CUDA graph batch (the engine's flag under ENGINES)", KnobStepDown::with_share,
         &EngineRow::cuda_graph_max_bs),
};

}  // namespace

std::span<const EngineKnobKey> engine_knob_keys() {
  return kKnobs;
}

const EngineKnobKey* find_engine_knob_key(std::string_view key) {
  for (const auto& row : kKnobs)
    if (row.key == key) return &row;
  return nullptr;
}

std::string_view engine_knob_flag(const EngineKnobKey& knob, EngineKind kind) {
  if (knob.row_knob) return (engine_row(kind).*knob.row_knob).flag;
  for (const auto& flag : knob.flags)
    if (flag.kind == kind) return flag.flag;
  return {};
}

std::string engine_knob_argument(const EngineKnobKey& knob, double value) {
  if (knob.value == KnobValue::integer) return std::to_string(std::llround(value));
  return fmt::format("{}", value);
}

}  // namespace gl
