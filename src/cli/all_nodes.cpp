// SPDX-License-Identifier: Apache-2.0
// The --all-nodes commands: the group's steps (group/group_steps) over the system's ssh, their
// lines on stdout and their one error in the log.
#include "cli/all_nodes.hpp"

#include <cstdio>

#include <fmt/core.h>

#include "cli/context.hpp"
#include "group/group_steps.hpp"
#include "log/logger.hpp"
#include "util/terminal_text.hpp"

namespace gl {
namespace {

class PrintedGroupOutput final : public GroupOutput {
 public:
  void line(const std::string& text) override {
    // Ranks' lines carry their engines' texts (a rank's answers, its journal's lines): each line
    // escaped, the line breaks of a multi-line answer (a dry run's JSON) kept.
    fmt::print("{}\n", terminal_lines(text));
    // Each step's lines show before the next step's ssh calls, which may take minutes.
    std::fflush(stdout);
  }
  void error(const std::string& text) override { logging::error(text); }
};

bool has_nodes(const Profile& profile) {
  if (!profile.nodes.hosts.empty()) return true;
  report(
      Error{fmt::format("profile '{}' lists no hosts ('nodes.hosts', rank order): "
                        "--all-nodes needs them",
                        profile.name)});
  return false;
}

GroupOptions group_options(const AllNodesOptions& options) {
  return GroupOptions{options.force, options.purge, options.no_rollback};
}

// Runs `step` with the profile's ranks over ssh and the printed output; 2 without hosts.
template <typename Step>
int on_all_nodes(const Profile& profile, const AllNodesOptions& options, Step step) {
  if (!has_nodes(profile)) return 2;
  auto runner = ssh_rank_runner(profile.nodes, options.ssh);
  PrintedGroupOutput output;
  return step(*runner, output);
}

}  // namespace

int up_all_nodes(const Profile& profile, const AllNodesOptions& options) {
  return on_all_nodes(profile, options, [&](RankRunner& runner, GroupOutput& output) {
    return up_group(profile, group_options(options), runner, output);
  });
}

int up_all_nodes_dry_run(const Profile& profile, const AllNodesOptions& options, bool json) {
  return on_all_nodes(profile, options, [&](RankRunner& runner, GroupOutput& output) {
    return up_group_dry_run(profile, group_options(options), json, runner, output);
  });
}

int status_all_nodes_json(const Profile& profile, const AllNodesOptions& options) {
  return on_all_nodes(profile, options, [&](RankRunner& runner, GroupOutput& output) {
    return status_group_json(profile, runner, output);
  });
}

int status_all_nodes(const Profile& profile, const AllNodesOptions& options) {
  return on_all_nodes(profile, options, [&](RankRunner& runner, GroupOutput& output) {
    return status_group(profile, runner, output);
  });
}

int down_all_nodes(const Profile& profile, const AllNodesOptions& options) {
  return on_all_nodes(profile, options, [&](RankRunner& runner, GroupOutput& output) {
    return down_group(profile, group_options(options), runner, output);
  });
}

int restart_all_nodes(const Profile& profile, const AllNodesOptions& options) {
  return on_all_nodes(profile, options, [&](RankRunner& runner, GroupOutput& output) {
    return restart_group(profile, runner, output);
  });
}

}  // namespace gl
