// SPDX-License-Identifier: Apache-2.0
#pragma once
// One start of an engine as phases with their times, from the engine's own start-up lines as
// `run` saw them. Shared by the history (kept per start), `status`, `events --json`, `up`'s
// breakdown and the Prometheus metrics; the phase names are spelled here once and are the
// values of the metrics' `phase` label.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/engines.hpp"
#include "catalog/journal_messages.hpp"

namespace gl {

// "process", "weights", "jit_compile", "torch_compile", "cuda_graphs", "health".
std::string_view start_phase_name(Phase phase);
std::optional<Phase> start_phase_from_name(std::string_view name);

struct StartPhaseSpan {
  Phase phase = Phase::process;
  int64_t begin_usec = 0;  // realtime
  int64_t end_usec = 0;    // realtime; 0 while the phase has not ended
};

struct StartTimeline {
  int64_t process_start_usec = 0;      // realtime: the engine's process started
  int64_t ready_usec = 0;              // realtime: READY=1; 0 when the start never became ready
  std::vector<StartPhaseSpan> phases;  // in order; a phase may appear more than once
};

// The kind of the history event that records a start that became ready (with its timeline).
inline constexpr std::string_view kStartedEventKind = kStartedMessage;

}  // namespace gl
