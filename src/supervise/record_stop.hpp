// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `record-exit` (ExecStopPost=) decides about the invocation that stopped: its class, from
// what systemd handed it, the invocation's journal and the unit cgroup's oom_kill counter; whether
// it served long enough to be forgiven (systemd's timestamps); the state and events to record.
// The manager, journal and clock come in as interfaces; cli/ reads the environment and prints.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.hpp"
#include "supervise/exit_class.hpp"
#include "supervise/history.hpp"
#include "supervise/policy.hpp"
#include "supervise/quarantine.hpp"
#include "supervise/stall_report.hpp"
#include "systemd/journal.hpp"
#include "systemd/manager.hpp"
#include "util/timekeeper.hpp"

namespace gl {

// Reads the invocation's lines and the kernel's oom-kill lines into `report` and classifies it.
// journald takes the last lines from the stream and the kernel a moment after the process ended,
// so an unexplained stop is read again (every 200 ms, six reads) before it is called a plain
// crash. Without a journal (or an invocation id) it classifies what `report` holds: what systemd
// said, and the lines the caller captured (`run --foreground`).
Classification classify_invocation(StopReport& report, std::string_view invocation_id,
                                   Journal* journal, Timekeeper& clock);

// The command that shows a stalled engine's thread dump: the unit's journal from the stall line
// at `cursor` (JournalEntry::cursor) on.
std::string thread_dump_command(std::string_view unit, std::string_view cursor);
// What a stall line says, for people: "no forward progress for 1m4s (token counter stopped, 3
// request(s) in flight, generation token counter at 12345)".
std::string describe_stall(const StallReport& stall);

// systemd's timestamps of the invocation that is stopping; zeros when the manager cannot say.
struct StoppingInvocation {
  InvocationTimes times;
  // ExecMainExitTimestamp (org.freedesktop.systemd1.Service; systemd src/core/dbus-service.c,
  // v252): when `run`, the main process, exited, a few milliseconds after its engine did.
  int64_t main_exit_usec = 0;
  // When the invocation ended: `run`'s exit where systemd says it for this invocation, else
  // `now_usec` (no manager, or a stop with no exit of its own).
  int64_t ended_at(int64_t now_usec) const;
};
StoppingInvocation stopping_invocation(SystemdManager* manager, const std::string& unit);

struct StopInput {
  StopReport report;                          // unit, SERVICE_RESULT, EXIT_CODE, EXIT_STATUS
  std::string invocation_id;                  // $INVOCATION_ID
  std::optional<long long> cgroup_oom_kills;  // the unit cgroup's counter now, when readable
  RestartSettings restart;
  EngineKind kind = EngineKind::command;
  // The caches gpulaunch may move aside (caches/quarantine's movable_caches), and the last stop
  // event before this one (previous_stop_event): a crash through a cache quarantines it.
  std::vector<CachePlace> caches{};
  std::optional<SupervisorEvent> previous_stop{};
  // Why the event history could not be read, when it could not: then whether the last stop
  // already quarantined is unknown, so nothing is moved aside and the stop counts (fail closed).
  std::optional<std::string> events_unreadable{};
  // Without systemd (`run --foreground`): the invocation's times as `run` saw them itself, and
  // `report.lines` holds the engine's last lines it captured, in place of the journal's.
  std::optional<StoppingInvocation> invocation{};
};

struct StopDecision {
  Classification stop;
  std::optional<std::string> stable_action;  // it served restart.stable_after: what was forgiven
  SupervisorState state;                     // to save
  std::vector<SupervisorEvent> events;       // to append, oldest first; the stop's own is last
  // A crash whose traceback runs through a cache: the cache to move aside before recording.
  // Until apply_quarantine, `state` and the events count it as usual (the move may fail).
  std::optional<QuarantineCandidate> quarantine;
  SupervisorState uncounted;  // the state as it would be if this stop did not count
  // It served past restart.probation and still the failures in a row reached restart.budget.
  bool keeps_dying = false;
};

// The cache was moved to `moved_to`: the stop does not count toward the crash-loop budget and
// backs off no further (the state before it), and its event becomes kCacheQuarantinedEventKind,
// naming the frame and the copy. Under restart.policy = no it still stays down.
void apply_quarantine(StopDecision& decision, std::string_view moved_to,
                      const RestartSettings& restart);
// The move failed: the stop counts as usual, and its event says why nothing was moved.
void note_quarantine_failed(StopDecision& decision, std::string_view why);

// `state` is the history's at the last stop; `manager` and `journal` may be null (unreachable).
StopDecision decide_stop(SupervisorState state, StopInput input, SystemdManager* manager,
                         Journal* journal, Timekeeper& clock);

// Root's writes at a stop, in order: the state (the next start decides from it), then the events.
// When a write fails the unrecorded-stop marker (a tmpfs) is left, so that the next start stays
// down instead of escaping the crash-loop budget; once all were written it is cleared.
class StopRecord {
 public:
  explicit StopRecord(const History& history) : history_(history) {}
  void save(const SupervisorState& state);
  // Appends the events and sets or clears the marker; the lines to report.
  std::vector<std::string> finish(const std::vector<SupervisorEvent>& events);

 private:
  const History& history_;
  std::vector<std::string> failures_;
};

}  // namespace gl
