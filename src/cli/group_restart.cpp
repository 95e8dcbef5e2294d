// SPDX-License-Identifier: Apache-2.0
// `record-exit`'s notice to the other ranks and `peer-failed`, the command that receives it.

#include "cli/group_restart.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/core.h>

#include "cli/context.hpp"
#include "cli/supervise.hpp"
#include "group/remote.hpp"
#include "plan/launch_plan.hpp"
#include "supervise/group_policy.hpp"
#include "supervise/step_down.hpp"
#include "systemd/manager.hpp"
#include "util/duration.hpp"
#include "util/state_paths.hpp"

namespace gl {
namespace {

constexpr std::string_view kAnswerPrefix = "peer-failed: ";

// The line `peer-failed` printed for the notifier, or why there is none.
std::string answer_of(const RankResult& result) {
  if (!result.error.empty()) return "not told: " + result.error;
  std::istringstream lines(result.output);
  std::string line;
  std::string last;
  while (std::getline(lines, line))
    if (line.starts_with(kAnswerPrefix))
      return line.substr(kAnswerPrefix.size());
    else if (!line.empty())
      last = line;
  if (result.exit_code == 255)
    return "not told: ssh could not reach it (exit 255)" + (last.empty() ? "" : ": " + last);
  return fmt::format("not told: exit {}{}", result.exit_code, last.empty() ? "" : ": " + last);
}

struct PeerFailedOptions {
  std::string profile;
  long long from_rank = 0;
  std::string from_host;
  std::string exit_class;
  int64_t at_usec = 0;
  std::string evidence;
  std::string knob;  // cuda-oom: what the message said to change
};

int peer_failed(const PeerFailedOptions& options) {
  auto value = parse_exit_class(options.exit_class);
  if (!value)
    return report(Error{fmt::format("peer-failed: unknown stop class '{}'", options.exit_class)},
                  2);
  std::optional<MemoryKnob> knob;
  if (!options.knob.empty() && !(knob = parse_memory_knob(options.knob)))
    return report(Error{fmt::format("peer-failed: unknown memory knob '{}'", options.knob)}, 2);
  const SupervisedProfile supervised =
      load_supervised(options.profile, state_paths::snapshot_file(options.profile).string());
  const History history(options.profile);
  auto current = history.state_to_update();
  if (!current.problem.empty()) fmt::print("gpulaunch peer-failed: {}\n", current.problem);

  const std::string unit = unit_name_for(options.profile);
  auto manager = connect_systemd(ManagerScope::system);
  if (!manager) return report(manager.error());
  auto status = (*manager)->status(unit);
  if (!status) return report(status.error());
  LocalRank local;
  if (status->load_state == "loaded") {
    local.active_state = status->active_state;
    local.main_pid = status->main_pid;
    local.main_start_usec = status->main_start_usec;
  }

  const int64_t now = now_usec();
  // This rank's engine served until now: a long enough service forgives what came before, as its
  // own record-exit would at a stop (which then counts its service from here).
  SupervisorState state = current.state;
  std::optional<SupervisorEvent> stable_event;
  const InvocationTimes times{static_cast<int64_t>(status->main_start_usec),
                              static_cast<int64_t>(status->active_enter_usec),
                              static_cast<int64_t>(status->active_exit_usec)};
  const Seconds served =
      local.active_state == "active" ? served_for(times, state, now) : Seconds{0};
  if (auto stable = forgive_if_stable(state, served, supervised.restart, now)) {
    state = stable->state;
    stable_event =
        SupervisorEvent{now,
                        "stable",
                        fmt::format("served {} (restart.stable_after {})", format_duration(served),
                                    format_duration(supervised.restart.stable_after)),
                        stable->action,
                        state.gpu_level,
                        state.host_level};
  }
  // The notifier's clock says when the rank failed; this node cannot have heard of it before
  // that happened, whatever the clocks' disagreement.
  const PeerFailure failure{options.profile, options.from_rank, options.from_host,
                            Classification{*value, options.evidence, knob},
                            std::min(options.at_usec, now)};
  const PeerDecision decision =
      after_peer_failure(state, failure, local, supervised.restart, now,
                         max_gpu_level(supervised.kind), max_host_level(supervised.kind));
  if (decision.response != PeerResponse::none) {
    if (auto saved = history.save(decision.outcome.state); !saved) return report(saved.error());
    if (stable_event)
      if (auto appended = history.append(*stable_event); !appended)
        fmt::print("gpulaunch peer-failed: {}\n", appended.error().message);
  }
  auto appended = history.append(
      SupervisorEvent{now, std::string(exit_class_name(*value)),
                      rank_label(options.from_rank, options.from_host) + ": " + options.evidence,
                      decision.outcome.action, decision.outcome.state.gpu_level,
                      decision.outcome.state.host_level});
  if (!appended)
    fmt::print("gpulaunch peer-failed: {}\n", appended.error().message);
  else if (!appended->empty())
    fmt::print("gpulaunch peer-failed: {}\n", *appended);
  if (decision.response != PeerResponse::none) {
    // Queued, not waited for: the engine may take a while to stop, and the failing rank's
    // ExecStopPost= is waiting for this answer.
    auto job = (*manager)->enqueue(
        decision.response == PeerResponse::restart ? "RestartUnit" : "StopUnit", unit);
    if (!job) return report(job.error());
  }
  fmt::print("{}{}\n", kAnswerPrefix, decision.outcome.action);
  return 0;
}

}  // namespace

std::string notify_group(const std::string& profile, const NodesSettings& nodes, long long own_rank,
                         const Classification& stop, int64_t time_usec,
                         const std::string& ssh_program) {
  std::vector<std::vector<std::string>> notices(nodes.hosts.size());
  const std::string own_host = own_rank >= 0 && static_cast<size_t>(own_rank) < nodes.hosts.size()
                                   ? nodes.hosts[static_cast<size_t>(own_rank)]
                                   : std::string("?");
  for (size_t rank = 0; rank < nodes.hosts.size(); ++rank) {
    if (static_cast<long long>(rank) == own_rank) continue;
    notices[rank] = {"peer-failed",
                     "--profile=" + profile,
                     "--from-rank=" + std::to_string(own_rank),
                     "--from-host=" + own_host,
                     "--class=" + std::string(exit_class_name(stop.value)),
                     "--at=" + std::to_string(time_usec),
                     "--evidence=" + stop.evidence};
    // The same step on every rank: what the engine's message said to lower.
    if (stop.knob) notices[rank].push_back("--knob=" + std::string(memory_knob_name(*stop.knob)));
  }
  // The remote gpulaunch runs as root: with a clean environment, whatever the ssh session sets.
  NodesSettings clean = nodes;
  clean.gpulaunch = std::string(kCleanEnvProgram);
  for (auto& notice : notices)
    if (!notice.empty())
      notice.insert(notice.begin(),
                    {"-i", "PATH=" + std::string(kRootHelperPath), nodes.gpulaunch});
  auto results =
      run_on_all_ranks(clean, ssh_program, notices,
                       std::chrono::duration_cast<std::chrono::milliseconds>(kGroupNoticeTimeout));
  std::string answers;
  for (const auto& result : results) {
    if (result.skipped) continue;
    if (!answers.empty()) answers += "; ";
    answers += rank_label(result.rank, result.host) + ": " + answer_of(result);
  }
  return answers;
}

void add_group_commands(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "peer-failed", "Another rank of this node's group failed: restart or stop with the group");
  command->group("");  // a failing rank's record-exit calls it over ssh
  static PeerFailedOptions options;
  command->add_option("--profile", options.profile, "Profile name")
      ->required()
      ->check(profile_name_check());
  command->add_option("--from-rank", options.from_rank, "The failed rank")->required();
  command->add_option("--from-host", options.from_host, "The failed rank's host")->required();
  command->add_option("--class", options.exit_class, "How its stop was classified")->required();
  command->add_option("--at", options.at_usec, "When (realtime, microseconds)")->required();
  command->add_option("--evidence", options.evidence, "The line that decided it");
  command->add_option("--knob", options.knob, "What a CUDA OOM message said to change");
  command->callback([&context] { context.exit_code = peer_failed(options); });
}

}  // namespace gl
