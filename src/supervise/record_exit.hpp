// SPDX-License-Identifier: Apache-2.0
#pragma once
// record-exit's sequence (ExecStopPost=), out of cli/ as ninja's Builder is out of its main:
// decide the stop (record_stop's decide_stop, from the history's last stop), act on it (move a
// poisoned cache aside), amend its event with what was done, record it (state, then events, the
// unrecorded-stop marker on a failed write), notify a multi-node group. The acts and the lines go
// through StopActions; cli/ wires the real ones (caches/quarantine, group/peer_notice, the
// journal) and a test a fake, so each decision runs in milliseconds.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "supervise/exit_class.hpp"
#include "supervise/history.hpp"
#include "supervise/record_stop.hpp"
#include "systemd/journal.hpp"
#include "systemd/manager.hpp"
#include "util/error.hpp"
#include "util/timekeeper.hpp"

namespace gl {

class StopActions {
 public:
  virtual ~StopActions() = default;
  // Moves the cache named `cache` aside, the copy named by the stop's time; where it went.
  virtual Result<std::filesystem::path> quarantine(std::string_view cache, int64_t time_usec) = 0;
  // Tells the group's other ranks that this one stopped; what they answered, for the event.
  virtual std::string tell_group(const Classification& stop, int64_t time_usec) = 0;

  // What record-exit says, in order. A stable service's forgiveness; the stop's class and event
  // (cli/: a warning, an error or news by how the class restarts); a group's notice; a problem
  // that does not stop the record (a history that cannot be updated in place, a write that failed).
  virtual void stable(std::string_view action) = 0;
  virtual void classified(const Classification& stop, const SupervisorEvent& event) = 0;
  // A death after serving that is restarted although the failures in a row reached
  // restart.budget (StopDecision::keeps_dying): cli/ an error with its own MESSAGE_ID, to alert on.
  virtual void keeps_dying(const Classification& stop, const SupervisorEvent& event) = 0;
  virtual void group_told(std::string_view action) = 0;
  virtual void warning(std::string_view line) = 0;
  virtual void error(std::string_view line) = 0;
};

// Where the stopped rank stands in its group: `ranks` > 1 spans several nodes; `rank` is this
// node's (-1: a unit rendered before group restarts, which passes none).
struct StopGroup {
  size_t ranks = 1;
  long long rank = -1;
};

// `input` carries what systemd and the installed snapshot say (report, invocation, cgroup,
// restart settings, kind, the caches that may be moved aside); the history's last stop is read
// here. Returns the decision as recorded.
StopDecision record_exit(StopInput input, const StopGroup& group, const History& history,
                         SystemdManager* manager, Journal* journal, Timekeeper& clock,
                         StopActions& actions);

}  // namespace gl
