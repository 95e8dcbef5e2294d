// SPDX-License-Identifier: Apache-2.0
#include <fmt/core.h>

#include "cli/context.hpp"
#include "profile/toml_print.hpp"
#include "profile/validate.hpp"

namespace gl {

void add_show_command(CLI::App& app, CliContext& context) {
  auto* command =
      app.add_subcommand("show", "Print a profile with its parents and drop-ins merged");
  static std::string name;
  command->add_option("profile", name, "Profile name or path to a .toml file")
      ->required()
      ->check(profile_argument_check());
  command->callback([&context] {
    auto source = context.profile_source();
    auto merged = load_merged(source, name);
    if (!merged) {
      context.exit_code = report(merged.error());
      return;
    }
    if (auto valid = validate_profile(*merged); !valid) {
      context.exit_code = report(valid.error());
      return;
    }
    fmt::print("# profile '{}', merged from:\n", merged->name);
    for (const auto& file : merged->sources) fmt::print("#   {}\n", file);
    fmt::print("{}\n", print_toml(merged->table));
  });
}

}  // namespace gl
