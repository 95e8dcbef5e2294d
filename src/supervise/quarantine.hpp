// SPDX-License-Identifier: Apache-2.0
#pragma once
// A poisoned cache (vLLM #24915: a corrupt torch.compile cache crashes every restart until it is
// deleted): a crash whose Python traceback runs through a file inside one of the profile's
// caches. Pure: the invocation's journal lines, the caches gpulaunch may touch and the previous
// stop's event -> which cache to move aside, or none. `record-exit` does the move
// (caches/quarantine) and records the event built here.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caches/quarantine.hpp"
#include "catalog/journal_messages.hpp"
#include "supervise/history.hpp"

namespace gl {

// The history event of a quarantine; spelled here once.
inline constexpr std::string_view kCacheQuarantinedEventKind = kCacheQuarantinedMessage;

// One frame line of a Python traceback as CPython prints it (Lib/traceback.py,
// StackSummary.format_frame_summary, and Python/traceback.c's tb_displayline, 3.12):
// `  File "PATH", line N, in NAME`.
struct TracebackFrame {
  std::string path;
  long line = 0;
  std::string function;
  std::string text;  // the frame as printed, without the leading spaces
};

// The frame in `line`, which may have text before `File "` (the event's evidence does).
std::optional<TracebackFrame> parse_traceback_frame(std::string_view line);

struct QuarantineCandidate {
  CachePlace cache;
  TracebackFrame frame;  // the innermost frame inside the cache
};

// The cache whose directory holds the innermost frame of the stop's traceback lines (the
// deepest cache directory when two nest). None when no frame is inside a cache, or when
// `previous` (the profile's last stop event before this one, previous_stop_event) was itself a
// quarantine: the retry after one counts as usual, whichever cache it names (the same one was
// rebuilt and crashed again; naming each cache in turn cannot escape the crash-loop budget).
std::optional<QuarantineCandidate> decide_quarantine(const std::vector<std::string>& lines,
                                                     const std::vector<CachePlace>& places,
                                                     const SupervisorEvent* previous);

// The last event that ended an invocation or acted on one (stable and started events only
// report), or nullptr.
const SupervisorEvent* previous_stop_event(const std::vector<SupervisorEvent>& events);

// The event for a cache moved from `from` to `to`: evidence names the frame, action the copy.
// `restart_action` says what happens next ("restart at once, not counted toward the crash-loop
// budget", or why not).
SupervisorEvent quarantine_event(const QuarantineCandidate& candidate, std::string_view to,
                                 std::string_view restart_action, int64_t time_usec, int gpu_level,
                                 int host_level);

}  // namespace gl
