// SPDX-License-Identifier: Apache-2.0
#pragma once
// `check NAME` on a node where NAME is already serving judges the node as the service sees it:
// a port that the service's own processes hold, and nothing else does, is its own, not a
// conflict. Anything another process holds stays a conflict.

#include <string>

#include "facts/facts.hpp"
#include "facts/node_fs.hpp"
#include "systemd/manager.hpp"
#include "util/error.hpp"

namespace gl {

// The cgroup of `unit` as its main process sees it: /proc/MAIN_PID/cgroup's path, cut after the
// unit's own component (a delegated unit's engine runs in a cgroup below it); "" when the text
// names no such component.
std::string unit_cgroup(std::string_view proc_pid_cgroup, std::string_view unit);

// Marks each taken port in `facts` that only `unit`'s processes hold (PortFact::held_by_service).
// A unit that is not running, or the manager's failure to answer, marks nothing.
void see_as_service(Facts& facts, SystemdManager& manager, const NodeFs& node,
                    const std::string& unit);

}  // namespace gl
