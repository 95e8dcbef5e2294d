// SPDX-License-Identifier: Apache-2.0
#pragma once
// `up|status|down|restart NAME --all-nodes`: the same command on every rank of a multi-node
// profile, in the order a group needs (check everywhere, then stop a changed running group
// together, test the rendezvous, agree on caches, start every rank at once), with one line per
// rank. The ranks are reached through a RankRunner, the report goes to a GroupOutput; the return
// value is the command's exit code.

#include <chrono>
#include <string>
#include <vector>

#include "group/group_output.hpp"
#include "group/remote.hpp"
#include "profile/profile.hpp"

namespace gl {

// How long a quick command (check, status, a dry run, cache) may take on a rank.
inline constexpr std::chrono::milliseconds kRankCallLimit = std::chrono::minutes(5);

struct GroupOptions {
  bool force = false;        // up: start despite check errors
  bool purge = false;        // down: remove the unit files too
  bool no_rollback = false;  // up: each rank keeps a changed unit that fails, as it failed
};

// `args` for every rank of the profile.
std::vector<std::vector<std::string>> same_for_every_rank(const Profile& profile,
                                                          const std::vector<std::string>& args);

int up_group(const Profile& profile, const GroupOptions& options, RankRunner& runner,
             GroupOutput& output);
// `up --all-nodes --dry-run [--json]`: every rank's `up --node-rank N --dry-run --json`, nothing
// changed anywhere; exit 0, 1 where a rank would refuse on its check, 2 where one did not answer.
int up_group_dry_run(const Profile& profile, const GroupOptions& options, bool json,
                     RankRunner& runner, GroupOutput& output);
int status_group(const Profile& profile, RankRunner& runner, GroupOutput& output);
// `status --all-nodes --json`: every rank's `status --json` object, side by side.
int status_group_json(const Profile& profile, RankRunner& runner, GroupOutput& output);
int down_group(const Profile& profile, const GroupOptions& options, RankRunner& runner,
               GroupOutput& output);
// The group together: every rank stopped, then every rank brought up (a multi-node engine
// cannot take a rank back into a running group).
int restart_group(const Profile& profile, RankRunner& runner, GroupOutput& output);

}  // namespace gl
