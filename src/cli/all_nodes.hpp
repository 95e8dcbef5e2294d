// SPDX-License-Identifier: Apache-2.0
#pragma once
// `up|status|down PROFILE --all-nodes`: the same command on every host of a multi-node profile,
// over the system's ssh, with one report per node.

#include <string>

#include <CLI/CLI.hpp>

#include "profile/profile.hpp"

namespace gl {

struct AllNodesOptions {
  std::string ssh = "/usr/bin/ssh";
  bool force = false;        // up: start despite check errors
  bool purge = false;        // down: remove the unit files too
  bool no_rollback = false;  // up: each rank keeps a changed unit that fails, as it failed
};

int up_all_nodes(const Profile& profile, const AllNodesOptions& options);
// `up --all-nodes --dry-run [--json]`: every rank's `up --node-rank N --dry-run --json`, nothing
// changed anywhere; exit 0, 1 where a rank would refuse on its check, 2 where one did not answer.
int up_all_nodes_dry_run(const Profile& profile, const AllNodesOptions& options, bool json);
int status_all_nodes(const Profile& profile, const AllNodesOptions& options);
// `status --all-nodes --json`: every rank's `status --json` object, side by side.
int status_all_nodes_json(const Profile& profile, const AllNodesOptions& options);
int down_all_nodes(const Profile& profile, const AllNodesOptions& options);
// The group together: every rank stopped, then every rank brought up (a multi-node engine
// cannot take a rank back into a running group).
int restart_all_nodes(const Profile& profile, const AllNodesOptions& options);

struct CliContext;
// Hidden `rendezvous-probe`, what up|restart --all-nodes run on every rank before a start.
void add_rendezvous_probe_command(CLI::App& app, CliContext& context);

}  // namespace gl
