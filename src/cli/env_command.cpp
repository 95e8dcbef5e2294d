// SPDX-License-Identifier: Apache-2.0
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/command_preamble.hpp"
#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "group/remote.hpp"
#include "log/logger.hpp"
#include "plan/container_command.hpp"
#include "plan/node_launch.hpp"
#include "profile/profile_name.hpp"
#include "unit/unit_environment.hpp"

namespace gl {

namespace {

struct EnvArgs : ProfileArgs {
  std::string root = "/";
  bool json = false;
};

}  // namespace

void add_env_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "env", "Print the environment the unit's engine gets, as POSIX shell exports");
  static EnvArgs args;
  add_profile_args(command, args, {});
  command->add_option("--root", args.root,
                      "Read the node (engine release, InfiniBand, routes) under this directory "
                      "instead of /");
  command->add_flag("--json", args.json,
                    "Machine-readable output: each variable, its value, its credential");
  command->callback([&context] {
    auto profile = load_for_rank(context, args);
    if (!profile) {
      context.exit_code = report(profile.error(), kExitUsage);
      return;
    }
    // The plan `up` renders this node's unit from (plan/node_launch): the environment is not
    // derived a second time.
    const NodePlan node = node_launch_plan(*profile, args.node_rank, NodeFs(args.root));
    for (const auto& warning : node.launch.warnings) logging::warning(warning);
    const std::string unit = unit_name_for(profile->name);
    if (args.json) {
      auto variables = nlohmann::ordered_json::array();
      for (const UnitVariable& variable : unit_environment(*profile, node.plan))
        variables.push_back(
            {{"name", variable.name},
             {"value", variable.value},
             {"credential", variable.credential ? nlohmann::ordered_json(*variable.credential)
                                                : nlohmann::ordered_json()}});
      fmt::print("{}\n",
                 nlohmann::ordered_json{
                     {"profile", profile->name}, {"unit", unit}, {"environment", variables}}
                     .dump(2));
      return;
    }
    fmt::print(
        "# The environment of {}'s engine, as its unit sets it (`eval \"$(gpulaunch env {})\"`).\n",
        unit, profile->name);
    fmt::print(
        "# systemd adds its own per start: INVOCATION_ID, NOTIFY_SOCKET, CREDENTIALS_DIRECTORY,\n"
        "# and USER, LOGNAME, SHELL for service.user.\n");
    // An image's engine gets its variables in podman's command; the unit's are root's own.
    if (profile->engine.image) {
      fmt::print(
          "# engine.image: the container's, each by value in podman's command (--env=); "
          "the unit's own environment is root's.\n");
      for (const auto& [name, value] : container_environment(*profile, node.plan))
        fmt::print("export {}={}\n", name, shell_quote(value));
      return;
    }
    for (const UnitVariable& variable : unit_environment(*profile, node.plan)) {
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
