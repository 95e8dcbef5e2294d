// SPDX-License-Identifier: Apache-2.0
#include "group/peer_notice.hpp"

#include <sstream>

#include <fmt/core.h>

#include "catalog/oom_signatures.hpp"
#include "group/rank_answers.hpp"
#include "plan/launch_plan.hpp"

namespace gl {
namespace {

std::string option(std::string_view name, std::string_view value) {
  return fmt::format("{}={}", name, value);
}

// The line `peer-failed` printed for the notifier, or why there is none.
std::string answer_of(const RankResult& result) {
  if (!result.error.empty()) return "not told: " + result.error;
  std::istringstream lines(result.output);
  std::string line;
  std::string last;
  while (std::getline(lines, line))
    if (line.starts_with(kPeerAnswerPrefix))
      return line.substr(kPeerAnswerPrefix.size());
    else if (!line.empty())
      last = line;
  if (result.exit_code == 255)
    return "not told: ssh could not reach it (exit 255)" + (last.empty() ? "" : ": " + last);
  return fmt::format("not told: exit {}{}", result.exit_code, last.empty() ? "" : ": " + last);
}

}  // namespace

NodesSettings notice_nodes(const NodesSettings& nodes) {
  NodesSettings clean = nodes;
  clean.gpulaunch = std::string(kCleanEnvProgram);
  return clean;
}

std::string notify_group(const std::string& profile, const NodesSettings& nodes, long long own_rank,
                         const Classification& stop, int64_t time_usec, RankRunner& runner) {
  std::vector<std::vector<std::string>> notices(nodes.hosts.size());
  const std::string own_host = own_rank >= 0 && static_cast<size_t>(own_rank) < nodes.hosts.size()
                                   ? nodes.hosts[static_cast<size_t>(own_rank)]
                                   : std::string("?");
  for (size_t rank = 0; rank < nodes.hosts.size(); ++rank) {
    if (static_cast<long long>(rank) == own_rank) continue;
    // The remote program is env (notice_nodes): it runs gpulaunch with root's PATH alone.
    notices[rank] = {"-i",
                     "PATH=" + std::string(kRootHelperPath),
                     nodes.gpulaunch,
                     std::string(kPeerFailedCommand),
                     option(kPeerProfileOption, profile),
                     option(kPeerFromRankOption, std::to_string(own_rank)),
                     option(kPeerFromHostOption, own_host),
                     option(kPeerClassOption, exit_class_name(stop.value)),
                     option(kPeerAtOption, std::to_string(time_usec)),
                     option(kPeerEvidenceOption, stop.evidence)};
    // The same step on every rank: what the engine's message said to lower.
    if (stop.knob) notices[rank].push_back(option(kPeerKnobOption, memory_knob_name(*stop.knob)));
  }
  std::string answers;
  for (const auto& result : runner.run(notices, kGroupNoticeTimeout)) {
    if (result.skipped) continue;
    if (!answers.empty()) answers += "; ";
    answers += rank_label(result) + ": " + answer_of(result);
  }
  return answers;
}

}  // namespace gl
