// SPDX-License-Identifier: Apache-2.0
// `record-start` (ExecStartPost=): the phases of the start that just became ready, from this
// invocation's journal into root's history (the decisions are supervise/record_start's). The unit
// runs it as its own small executable, gpulaunch-record-start (cli/record_start_main.cpp), because
// it holds the start job and `up` waits on the job; `gpulaunch record-start` stays for units
// rendered before.

#include "cli/record_start.hpp"

#include <cstdlib>

#include <fmt/core.h>

#include "catalog/journal_messages.hpp"
#include "log/logger.hpp"
#include "supervise/history.hpp"
#include "supervise/record_start.hpp"
#include "systemd/journal.hpp"
#include "util/timekeeper.hpp"

namespace gl {

// Wires record-start's decision (supervise/record_start) to the invocation systemd names, the
// real journal and clock, and root's history. Never fails the unit (its ExecStartPost= line has
// `-` too): whatever goes wrong is a line in the journal and exit 0.
int record_start(const std::string& name) {
  const char* invocation = std::getenv("INVOCATION_ID");
  auto journal = open_journal();
  Timekeeper& clock = system_timekeeper();
  const StartTimeline timeline =
      read_start_timeline(invocation ? invocation : "", journal ? journal->get() : nullptr, clock);
  if (timeline.process_start_usec == 0) {  // nothing to record: the history is not touched
    logging::info(fmt::format(
        "gpulaunch record-start: no start phases in this invocation's journal{}; nothing "
        "recorded",
        journal ? "" : " (" + journal.error().message + ")"));
    return 0;
  }
  const History history(name);
  auto current = history.state_to_update();
  if (!current.problem.empty())
    logging::warning(fmt::format("gpulaunch record-start: {}", current.problem));
  auto decision = decide_start(current.state, timeline, clock.now_usec());
  if (!decision) return 0;
  logging::Fields started;
  started.kind = kStartedEventKind;
  logging::info(fmt::format("gpulaunch: start: {}", decision->event.evidence), started);
  if (auto saved = history.save(decision->state); !saved)
    logging::warning(fmt::format("gpulaunch record-start: {}", saved.error().message));
  if (auto appended = history.append(decision->event); !appended)
    logging::warning(fmt::format("gpulaunch record-start: {}", appended.error().message));
  else if (!appended->empty())
    logging::warning(fmt::format("gpulaunch record-start: {}", *appended));
  // No metrics write here: this command holds the start job (and `up`) until it exits, and walking
  // the caches for them cost ~30 ms; asking the metrics unit to run at once cost ~20 ms of the
  // same (bench/up_ready_bench.sh). The package's metrics timer writes the ready start's phases
  // within its 15 s, as it writes every serving profile's.
  return 0;
}

}  // namespace gl
