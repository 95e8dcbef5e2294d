// SPDX-License-Identifier: Apache-2.0
#include "supervise/record_exit.hpp"

#include <fmt/core.h>

#include "supervise/group_policy.hpp"

namespace gl {

StopDecision record_exit(StopInput input, const StopGroup& group, const History& history,
                         SystemdManager* manager, Journal* journal, Timekeeper& clock,
                         StopActions& actions) {
  auto current = history.state_to_update();
  if (!current.problem.empty()) actions.warning(current.problem);
  // The last stop before this one: a crash through a cache it already quarantined counts.
  if (auto recent = history.events(50); !recent)
    input.events_unreadable = recent.error().message;
  else if (const SupervisorEvent* previous = previous_stop_event(*recent))
    input.previous_stop = *previous;
  const RestartSettings restart = input.restart;
  StopDecision decision = decide_stop(current.state, std::move(input), manager, journal, clock);
  if (decision.stable_action) actions.stable(*decision.stable_action);

  // Act: the cache the crash ran through, moved aside before anything is recorded.
  if (decision.quarantine) {
    auto moved =
        actions.quarantine(decision.quarantine->cache.name, decision.events.back().time_usec);
    if (moved)
      apply_quarantine(decision, moved->string(), restart);
    else
      note_quarantine_failed(decision, moved.error().message);
  }
  SupervisorEvent& event = decision.events.back();
  actions.classified(decision.stop, event);
  if (decision.keeps_dying) actions.keeps_dying(decision.stop, event);

  // Record the state first: the next start decides from it.
  StopRecord record(history);
  record.save(decision.state);
  // Amend: a group restarts together, and the event says what the other ranks answered.
  if (group.ranks > 1 && group_must_know(decision.stop.value)) {
    if (group.rank < 0)
      event.action +=
          "; the other ranks were not told (the unit predates group restarts: "
          "run `gpulaunch up --all-nodes` again)";
    else
      event.action += "; the group: " + actions.tell_group(decision.stop, event.time_usec);
    actions.group_told(event.action);
  }
  for (const auto& line : record.finish(decision.events)) actions.error(line);
  return decision;
}

}  // namespace gl
