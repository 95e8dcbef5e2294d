// SPDX-License-Identifier: Apache-2.0
#pragma once
// What root's `record-start` (ExecStartPost=, after READY=1) decides about the start that just
// became ready: its timeline from `run`'s phase lines in the invocation's journal, the `started`
// event and the state to save. The journal and the clock come in as interfaces.

#include <string_view>

#include "supervise/history.hpp"
#include "systemd/journal.hpp"
#include "util/timekeeper.hpp"

namespace gl {

// journald may take the last lines from `run`'s output stream a moment after systemd saw
// READY=1: the journal is read again (every 200 ms, at most ten reads) until the ready line is
// in. Without it, the timeline ends at its last line (ready_usec 0). No journal, no invocation id
// or no phase line: a timeline with process_start_usec 0.
StartTimeline read_start_timeline(std::string_view invocation_id, Journal* journal,
                                  Timekeeper& clock);

struct StartRecord {
  SupervisorState state;  // with last_start set
  SupervisorEvent event;  // kStartedEventKind, with the timeline
};

// nullopt when the timeline holds no start.
std::optional<StartRecord> decide_start(SupervisorState state, const StartTimeline& timeline,
                                        int64_t now_usec);

}  // namespace gl
