// SPDX-License-Identifier: Apache-2.0
#pragma once
// The group side of supervision for multi-node profiles: a rank that failed tells every other
// rank over the system's ssh (`gpulaunch peer-failed` there), and each of them restarts or stops
// with the group. No agent of our own: the same gpulaunch on each node, as `up --all-nodes` uses.

#include <chrono>
#include <cstdint>
#include <string>

#include "profile/profile.hpp"
#include "supervise/exit_class.hpp"

namespace gl {

// How long the failing rank's ExecStopPost= waits for the other ranks' answers.
inline constexpr std::chrono::seconds kGroupNoticeTimeout{30};

// Tells every rank but `own_rank` that this rank stopped with `stop` at `time_usec`; returns what
// each answered, one "rank N (host): ..." clause per rank, "; "-separated, for the event.
std::string notify_group(const std::string& profile, const NodesSettings& nodes, long long own_rank,
                         const Classification& stop, int64_t time_usec,
                         const std::string& ssh_program);

}  // namespace gl
