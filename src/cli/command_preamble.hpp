// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the commands about one profile begin with, written once and held as values (nix's
// commands keep their options as members of the command's struct): the profile argument, the
// rank of this node (--node-rank), and --all-nodes with its ssh client. A command's own options
// struct derives from ProfileArgs; add_profile_args puts the options on its command line, and
// load_for_rank loads the profile and checks the rank against it, with one wording.

#include <string>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

struct ProfileArgs {
  std::string profile;  // a name, or a path to a NAME.toml file
  long long node_rank = 0;
  bool all_nodes = false;
  std::string ssh = "/usr/bin/ssh";
};

// Which parts a command takes besides the profile.
struct ProfileArgParts {
  bool node_rank = true;
  bool all_nodes = false;  // --all-nodes and --ssh
  std::string all_nodes_help = "Every node of 'nodes.hosts', each over ssh";
  // The rank's help (gate: "a multi-node group gates through rank 0").
  std::string node_rank_help = "Rank of this node in a multi-node profile";
  // The profile argument's check: a name or a .toml path (profile_argument_check), or a name
  // only for commands about an installed profile (profile_name_check).
  bool name_only = false;
};

// Adds the options to `command`; returns --all-nodes (nullptr without it), for excludes().
CLI::Option* add_profile_args(CLI::App* command, ProfileArgs& args, const ProfileArgParts& parts);

// "--node-rank N is outside profile 'P', which spans K node(s)".
Result<void> check_node_rank(const Profile& profile, long long node_rank);

// The profile (the search path, else its installed snapshot: cli/profile_lookup), with
// --node-rank checked against it.
Result<Profile> load_for_rank(const CliContext& context, const ProfileArgs& args);

}  // namespace gl
