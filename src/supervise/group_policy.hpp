// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a rank of a multi-node group does when another rank failed: a multi-node engine cannot
// survive losing a rank (its collectives hang or abort), so the group restarts together. The
// failing node's `record-exit` tells every other rank over ssh; each rank folds the same
// classification into its own history, so backoff, crash-loop budget and step-down stay the same
// on every node. A pure function, so every case has a table test.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profile/profile.hpp"
#include "supervise/exit_class.hpp"
#include "supervise/history.hpp"
#include "supervise/policy.hpp"

namespace gl {

// The failing rank's classified stop, as its `record-exit` reports it.
struct PeerFailure {
  std::string profile;
  long long rank = 0;
  std::string host;
  Classification stop;
  int64_t time_usec = 0;  // realtime the failing rank's stop was classified
};

// This rank's unit, from the manager.
struct LocalRank {
  std::string active_state;      // active, activating, deactivating, failed, inactive, ...
  uint32_t main_pid = 0;         // 0: between processes (auto-restart, stopping)
  uint64_t main_start_usec = 0;  // realtime the current main process started
};

enum class PeerResponse {
  none,     // nothing to do here (not running, or already restarted since the failure)
  restart,  // restart this rank with the group
  stop,     // the failing rank stays down: so does this one
};

struct PeerDecision {
  PeerResponse response = PeerResponse::none;
  StopOutcome outcome;  // the state to save and the action, for the event
};

// Whether a stop on this rank must reach the other ranks: a failure, or a stop that keeps this
// rank down. A clean stop (the operator's, or the group's own restart) never does, so a group
// restart cannot echo back and forth.
bool group_must_know(ExitClass stop);

// A failure of another rank that happened at `failure.time_usec`. The engine this rank runs is
// part of the broken group only if it was started before then; one that started later (this
// rank failed too, or another rank's notice already restarted it) joins the new group, so one
// incident is counted once per rank. `served` is how long this rank's invocation served from
// READY=1 (nullopt: never ready): the ranks of a group start and become ready together, so each
// rank judges restart.probation from its own service, and counts the budget as the failing one.
PeerDecision after_peer_failure(SupervisorState state, const PeerFailure& failure,
                                const LocalRank& local, const RestartSettings& settings,
                                int64_t now_usec, int max_gpu_level, int max_host_level,
                                std::optional<Seconds> served = std::nullopt);

// All that `peer-failed` folds into this rank's history, before it restarts or stops its unit:
// an invocation that served restart.stable_after is forgiven first, as record-exit would at a
// stop (this rank's service counts until now), then the peer's failure is decided on.
struct PeerRecord {
  PeerDecision decision;
  bool save = false;  // decision.outcome.state replaces the history's (the rank responds)
  // To append, oldest first: the "stable" event where the rank responds and was forgiven, then
  // the peer's failure, naming the rank it came from.
  std::vector<SupervisorEvent> events;
};
PeerRecord decide_peer_record(const SupervisorState& state, const PeerFailure& failure,
                              const LocalRank& local, const InvocationTimes& times,
                              const RestartSettings& settings, int64_t now_usec, int max_gpu_level,
                              int max_host_level);

// "rank 1 (10.0.0.2)"
std::string rank_label(long long rank, const std::string& host);

}  // namespace gl
