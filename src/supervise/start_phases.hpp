// SPDX-License-Identifier: Apache-2.0
#pragma once
// The lines `run` prints as a start moves from phase to phase, and the timeline root's
// `record-start` (ExecStartPost=) builds back from them and their journal timestamps. The text
// is spelled here once: `run` prints it, `record-start` reads it, the journal fields follow it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/engines.hpp"
#include "supervise/start_timeline.hpp"
#include "util/duration.hpp"

namespace gl {

// One change: a phase begins (the one before it, if any, has ended), a phase ends (nothing
// named follows yet), or the start is ready (READY=1: the phase in progress ends).
struct PhaseMark {
  enum class Kind { begins, ends, ready };
  Kind kind = Kind::begins;
  Phase phase = Phase::process;  // for `ready`: the phase that was in progress
  bool operator==(const PhaseMark&) const = default;
};

// "gpulaunch: start phase weights begins", "gpulaunch: start phase weights ends",
// "gpulaunch: start phase health ends: ready".
std::string phase_line(const PhaseMark& mark);
// The mark a phase line carries; nullopt for any other line.
std::optional<PhaseMark> parse_phase_line(std::string_view line);

// A start holds at most this many spans; a flapping engine's further changes are dropped (the
// history keeps each start in one bounded line).
inline constexpr size_t kMaxStartSpans = 32;

struct TimedLine {
  int64_t realtime_usec = 0;
  std::string_view text;
};

// The last start in `lines` (an invocation's journal, oldest first): from its `process begins`
// line to its ready line (ready_usec 0 when none came). A span still open at the end has
// end_usec 0.
StartTimeline timeline_from_lines(const std::vector<TimedLine>& lines);

// How long each span took (an open one until the ready time), in order; and the whole start.
Seconds span_duration(const StartPhaseSpan& span, int64_t ready_usec);
// "ready in 4m12s: weights 1m40s, jit_compile 1m55s, cuda_graphs 22s, health 3s" (each phase's
// spans summed, in the order it first appears; the process phase left out when under a second).
std::string describe_start(const StartTimeline& timeline);

}  // namespace gl
