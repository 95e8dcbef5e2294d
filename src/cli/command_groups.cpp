// SPDX-License-Identifier: Apache-2.0
#include "cli/command_groups.hpp"

#include <array>
#include <string>
#include <string_view>

#include <fmt/core.h>

namespace gl {
namespace {

constexpr std::string_view kLifecycle = "Lifecycle";
constexpr std::string_view kInspect = "Inspect";
constexpr std::string_view kFleet = "Fleet, caches and setup";

struct CommandGroup {
  std::string_view name;
  std::string_view group;
  std::string_view example;
};

// In the order --help lists them within a group.
constexpr std::array kCommands{
    CommandGroup{"up", kLifecycle, "gpulaunch up k26-ar"},
    CommandGroup{"down", kLifecycle, "gpulaunch down k26-ar --purge"},
    CommandGroup{"restart", kLifecycle, "gpulaunch restart k26-ar"},
    CommandGroup{"status", kLifecycle, "gpulaunch status"},
    CommandGroup{"logs", kLifecycle, "gpulaunch logs k26-ar -f"},
    CommandGroup{"events", kLifecycle, "gpulaunch events k26-ar"},
    CommandGroup{"exec", kLifecycle, "gpulaunch exec k26-ar -- nvidia-smi"},
    CommandGroup{"warm", kLifecycle, "gpulaunch warm k26-ar"},
    CommandGroup{"list", kInspect, "gpulaunch list"},
    CommandGroup{"show", kInspect, "gpulaunch show k26-ar"},
    CommandGroup{"check", kInspect, "gpulaunch check k26-ar"},
    CommandGroup{"render", kInspect, "gpulaunch render k26-ar"},
    CommandGroup{"env", kInspect, "gpulaunch env k26-ar"},
    CommandGroup{"facts", kInspect, "gpulaunch facts k26-ar --json"},
    CommandGroup{"diff", kInspect, "gpulaunch diff a.lock b.lock"},
    CommandGroup{"verify", kInspect, "gpulaunch verify k26-ar.lock"},
    CommandGroup{"lock", kInspect, "gpulaunch lock k26-ar -o k26-ar.lock"},
    CommandGroup{"init", kFleet, "gpulaunch init k26-ar"},
    CommandGroup{"cache", kFleet, "gpulaunch cache clear k26-ar"},
    CommandGroup{"gate", kFleet, "gpulaunch gate record k26-ar"},
    CommandGroup{"metrics", kFleet, "gpulaunch metrics"},
};

}  // namespace

void group_commands(CLI::App& app) {
  std::string examples = "Examples (each command's --help shows its own):";
  std::string_view last_group;
  for (const auto& command : kCommands) {
    // Only the commands built (main builds the one a command line names), without throwing.
    const auto found = app.get_subcommands(
        [&command](const CLI::App* sub) { return sub->get_name() == command.name; });
    if (found.empty()) continue;
    CLI::App* sub = found.front();
    sub->group(std::string(command.group));
    const std::string footer = sub->get_footer();
    sub->footer((footer.empty() ? "" : footer + "\n\n") +
                "Example: " + std::string(command.example));
    if (command.group != last_group)
      examples += fmt::format("\n  {:<32}# {}", command.example, command.group);
    last_group = command.group;
  }
  app.footer(examples);
}

}  // namespace gl
