// SPDX-License-Identifier: Apache-2.0
#pragma once
// A failing rank's notice to the rest of its group: record-exit runs `gpulaunch peer-failed` on
// every other rank over ssh and collects what each did. The command's options and the line its
// answer starts with are spelled here, for the sender and for the command that receives them.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "group/remote.hpp"
#include "profile/profile.hpp"
#include "supervise/exit_class.hpp"

namespace gl {

inline constexpr std::string_view kPeerFailedCommand = "peer-failed";
inline constexpr std::string_view kPeerProfileOption = "--profile";
inline constexpr std::string_view kPeerFromRankOption = "--from-rank";
inline constexpr std::string_view kPeerFromHostOption = "--from-host";
inline constexpr std::string_view kPeerClassOption = "--class";
inline constexpr std::string_view kPeerAtOption = "--at";
inline constexpr std::string_view kPeerEvidenceOption = "--evidence";
inline constexpr std::string_view kPeerKnobOption = "--knob";
// peer-failed's answer line, then what the rank does ("restart with the group: ...").
inline constexpr std::string_view kPeerAnswerPrefix = "peer-failed: ";

// How long the failing rank's ExecStopPost= waits for the other ranks' answers.
inline constexpr std::chrono::seconds kGroupNoticeTimeout{30};

// The nodes as the notice reaches them: the remote gpulaunch runs as root, so it starts with a
// clean environment (env -i, root's PATH), whatever the ssh session sets.
NodesSettings notice_nodes(const NodesSettings& nodes);

// Tells every rank but `own_rank` that this rank stopped with `stop` at `time_usec`, through
// `runner` (over notice_nodes); returns what each answered, one "rank N (host): ..." clause per
// rank, "; "-separated, for the event.
std::string notify_group(const std::string& profile, const NodesSettings& nodes, long long own_rank,
                         const Classification& stop, int64_t time_usec, RankRunner& runner);

}  // namespace gl
