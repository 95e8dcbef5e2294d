// SPDX-License-Identifier: Apache-2.0
#include "supervise/group_policy.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "systemd/manager.hpp"

namespace gl {

bool group_must_know(ExitClass stop) {
  return stop != ExitClass::clean && (counts_as_failure(stop) || is_terminal(stop));
}

std::string rank_label(long long rank, const std::string& host) {
  return fmt::format("rank {} ({})", rank, host);
}

PeerDecision after_peer_failure(SupervisorState state, const PeerFailure& failure,
                                const LocalRank& local, const RestartSettings& settings,
                                int64_t now_usec, int max_gpu_level, int max_host_level,
                                std::optional<Seconds> served) {
  PeerDecision decision;
  decision.outcome.state = state;
  const std::string peer = rank_label(failure.rank, failure.host);
  if (!is_running_state(local.active_state)) {
    decision.outcome.action =
        fmt::format("none: this rank is {}, nothing to take down with {}",
                    local.active_state.empty() ? "not loaded" : local.active_state, peer);
    return decision;
  }
  if (local.main_pid == 0 || local.main_start_usec >= static_cast<uint64_t>(failure.time_usec)) {
    decision.outcome.action =
        fmt::format("none: this rank started again after {} failed; it joins the new group", peer);
    return decision;
  }
  if (is_terminal(failure.stop.value)) {
    decision.response = PeerResponse::stop;
    decision.outcome.action = fmt::format(
        "stop: the group cannot serve while {} stays down (`gpulaunch restart {} "
        "--all-nodes` once it is fixed)",
        peer, failure.profile);
    return decision;
  }
  if (!counts_as_failure(failure.stop.value)) {
    decision.outcome.action = fmt::format("none: {} stopped cleanly", peer);
    return decision;
  }
  decision.outcome = after_stop(std::move(state), failure.stop, settings, now_usec, max_gpu_level,
                                max_host_level, served);
  decision.response = settings.policy == "no" ? PeerResponse::stop : PeerResponse::restart;
  decision.outcome.action = fmt::format(
      "{} with the group: {}", decision.response == PeerResponse::stop ? "stop" : "restart",
      decision.outcome.action);
  return decision;
}

PeerRecord decide_peer_record(const SupervisorState& state, const PeerFailure& failure,
                              const LocalRank& local, const InvocationTimes& times,
                              const RestartSettings& settings, int64_t now_usec, int max_gpu_level,
                              int max_host_level) {
  SupervisorState current = state;
  const Seconds served =
      local.active_state == "active" ? served_for(times, current, now_usec) : Seconds{0};
  auto stable = stable_service(current, served, settings, now_usec);
  if (stable) current = stable->state;
  // The notifier's clock says when the rank failed; this node cannot have heard of it before
  // that happened, whatever the clocks' disagreement.
  PeerFailure heard = failure;
  heard.time_usec = std::min(failure.time_usec, now_usec);
  PeerRecord record;
  // The rank's own service until it heard of the failure decides restart.probation.
  const std::optional<Seconds> since_ready =
      local.active_state == "active" ? served_since_ready(times, now_usec) : std::nullopt;
  record.decision = after_peer_failure(current, heard, local, settings, now_usec, max_gpu_level,
                                       max_host_level, since_ready);
  record.save = record.decision.response != PeerResponse::none;
  if (record.save && stable) record.events.push_back(std::move(stable->event));
  const StopOutcome& outcome = record.decision.outcome;
  record.events.push_back(
      SupervisorEvent{now_usec, std::string(exit_class_name(failure.stop.value)),
                      rank_label(failure.rank, failure.host) + ": " + failure.stop.evidence,
                      outcome.action, outcome.state.gpu_level, outcome.state.host_level});
  return record;
}

}  // namespace gl
