// SPDX-License-Identifier: Apache-2.0
#include "cli/command_preamble.hpp"

#include "cli/profile_lookup.hpp"
#include "profile/validate.hpp"
#include "util/try.hpp"

namespace gl {

CLI::Option* add_profile_args(CLI::App* command, ProfileArgs& args, const ProfileArgParts& parts) {
  command
      ->add_option("profile", args.profile,
                   parts.name_only ? "Profile name (installed with `gpulaunch up`)"
                                   : "Profile name or path to a .toml file")
      ->required()
      ->check(parts.name_only ? profile_name_check() : profile_argument_check());
  if (parts.node_rank)
    command->add_option("--node-rank", args.node_rank, parts.node_rank_help)
        ->check(CLI::Range(0LL, 1023LL));
  if (!parts.all_nodes) return nullptr;
  auto* all = command->add_flag("--all-nodes", args.all_nodes, parts.all_nodes_help);
  command->add_option("--ssh", args.ssh, "ssh client for --all-nodes (default /usr/bin/ssh)");
  return all;
}

Result<void> check_node_rank(const Profile& profile, long long node_rank) {
  if (node_rank >= profile.parallelism.nodes)
    return failf("--node-rank {} is outside profile '{}', which spans {} node(s)", node_rank,
                 profile.name, profile.parallelism.nodes);
  return {};
}

Result<Profile> load_for_rank(const CliContext& context, const ProfileArgs& args) {
  GL_TRY(auto profile, load_profile_or_installed(context, args.profile));
  GL_TRY_VOID(check_node_rank(profile, args.node_rank));
  return profile;
}

}  // namespace gl
