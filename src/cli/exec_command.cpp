// SPDX-License-Identifier: Apache-2.0
// `gpulaunch exec PROFILE -- CMD...`: CMD as a transient service with the installed service's
// environment, user and sandbox (cli/service_exec); exits with CMD's status.

#include <string>
#include <vector>

#include "cli/command_preamble.hpp"
#include "cli/context.hpp"
#include "cli/service_exec.hpp"

namespace gl {

void add_exec_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "exec",
      "Run a command as the profile's service runs: its environment, user and sandbox (root)");
  static ProfileArgs args;
  static std::vector<std::string> argv;
  add_profile_args(command, args,
                   {.node_rank_help = "Rank of this node in a multi-node profile (the rank its "
                                      "installed unit runs)",
                    .name_only = true});
  command->add_option("command", argv, "The command and its arguments, after --")->required();
  command->footer(
      "Exit status: the command's, 128 + a signal that ended it, or 125 when gpulaunch could not "
      "run it.");
  command->callback([&context] {
    ServiceExec request;
    request.what = "exec";
    request.unit_word = "exec";
    request.node_rank = args.node_rank;
    request.command = [](const Profile&, const LaunchOptions&) -> Result<std::vector<std::string>> {
      return argv;
    };
    context.exit_code = exec_in_service(args.profile, request);
  });
}

}  // namespace gl
