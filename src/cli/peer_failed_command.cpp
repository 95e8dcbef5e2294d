// SPDX-License-Identifier: Apache-2.0
// `peer-failed`, the command that receives a failing rank's notice (group/peer_notice): this
// rank's state and unit are read, supervise/group_policy decides, and the answer is printed.

#include <fmt/core.h>

#include "cli/context.hpp"
#include "cli/supervise.hpp"
#include "group/peer_notice.hpp"
#include "supervise/group_policy.hpp"
#include "supervise/step_down.hpp"
#include "systemd/manager.hpp"
#include "util/state_paths.hpp"
#include "util/terminal_text.hpp"

namespace gl {
namespace {

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
  const SupervisedProfile supervised = load_supervised(options.profile);
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
  const InvocationTimes times{static_cast<int64_t>(status->main_start_usec),
                              static_cast<int64_t>(status->active_enter_usec),
                              static_cast<int64_t>(status->active_exit_usec)};
  const PeerFailure failure{options.profile, options.from_rank, options.from_host,
                            Classification{*value, options.evidence, knob}, options.at_usec};
  const PeerRecord record =
      decide_peer_record(current.state, failure, local, times, supervised.restart, now,
                         max_gpu_level(supervised.kind), max_host_level(supervised.kind));
  const PeerDecision& decision = record.decision;
  if (record.save)
    if (auto saved = history.save(decision.outcome.state); !saved) return report(saved.error());
  for (const auto& event : record.events) {
    auto appended = history.append(event);
    if (!appended)
      fmt::print("gpulaunch peer-failed: {}\n", terminal_text(appended.error().message));
    else if (!appended->empty())
      fmt::print("gpulaunch peer-failed: {}\n", *appended);
  }
  if (decision.response != PeerResponse::none) {
    // Queued, not waited for: the engine may take a while to stop, and the failing rank's
    // ExecStopPost= is waiting for this answer.
    auto job = (*manager)->enqueue(
        decision.response == PeerResponse::restart ? "RestartUnit" : "StopUnit", unit);
    if (!job) return report(job.error());
  }
  fmt::print("{}{}\n", kPeerAnswerPrefix, decision.outcome.action);
  return 0;
}

}  // namespace

void add_group_commands(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      std::string(kPeerFailedCommand),
      "Another rank of this node's group failed: restart or stop with the group");
  command->group("");  // a failing rank's record-exit calls it over ssh
  static PeerFailedOptions options;
  command->add_option(std::string(kPeerProfileOption), options.profile, "Profile name")
      ->required()
      ->check(profile_name_check());
  command->add_option(std::string(kPeerFromRankOption), options.from_rank, "The failed rank")
      ->required();
  command->add_option(std::string(kPeerFromHostOption), options.from_host, "The failed rank's host")
      ->required();
  command
      ->add_option(std::string(kPeerClassOption), options.exit_class, "How its stop was classified")
      ->required();
  command->add_option(std::string(kPeerAtOption), options.at_usec, "When (realtime, microseconds)")
      ->required();
  command->add_option(std::string(kPeerEvidenceOption), options.evidence,
                      "The line that decided it");
  command->add_option(std::string(kPeerKnobOption), options.knob,
                      "What a CUDA OOM message said to change");
  command->callback([&context] { context.exit_code = peer_failed(options); });
}

}  // namespace gl
