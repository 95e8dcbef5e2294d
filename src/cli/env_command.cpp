// SPDX-License-Identifier: Apache-2.0
#include <fmt/core.h>

#include "cli/context.hpp"
#include "group/remote.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile_name.hpp"
#include "profile/validate.hpp"
#include "unit/unit_environment.hpp"

namespace gl {

void add_env_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "env", "Print the environment the unit's engine gets, as POSIX shell exports");
  static std::string name;
  static long long node_rank = 0;
  command->add_option("profile", name, "Profile name or path to a .toml file")
      ->required()
      ->check(profile_argument_check());
  command->add_option("--node-rank", node_rank, "Rank of this node in a multi-node profile")
      ->check(CLI::Range(0LL, 1023LL));
  command->callback([&context] {
    auto profile = load_profile(context.profile_source(), name);
    if (!profile) {
      context.exit_code = report(profile.error());
      return;
    }
    if (node_rank >= profile->parallelism.nodes) {
      context.exit_code =
          report(Error{fmt::format("--node-rank {} is outside profile '{}', which spans {} node(s)",
                                   node_rank, profile->name, profile->parallelism.nodes)});
      return;
    }
    // The same plan the unit is rendered from: the environment is not derived a second time.
    const LaunchPlan plan = make_launch_plan(*profile, LaunchOptions{node_rank, std::nullopt});
    const std::string unit = unit_name_for(profile->name);
    fmt::print(
        "# The environment of {}'s engine, as its unit sets it (`eval \"$(gpulaunch env {})\"`).\n",
        unit, profile->name);
    fmt::print(
        "# systemd adds its own per start: INVOCATION_ID, NOTIFY_SOCKET, CREDENTIALS_DIRECTORY,\n"
        "# and USER, LOGNAME, SHELL for service.user.\n");
    for (const UnitVariable& variable : unit_environment(*profile, plan)) {
      if (variable.credential)
        fmt::print(
            "# [secrets] {}: a systemd credential; its value is never printed, and this file "
            "exists only while the unit runs.\n",
            *variable.credential);
      fmt::print("export {}={}\n", variable.name, shell_quote(variable.value));
    }
  });
}

}  // namespace gl
