// SPDX-License-Identifier: Apache-2.0
#include <sstream>

#include <fmt/core.h>
#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/profile_lookup.hpp"
#include "profile/toml_print.hpp"
#include "profile/validate.hpp"

namespace gl {

void add_show_command(CLI::App& app, CliContext& context) {
  auto* command =
      app.add_subcommand("show", "Print a profile with its parents and drop-ins merged");
  static std::string name;
  static bool json = false;
  command->add_option("profile", name, "Profile name or path to a .toml file")
      ->required()
      ->check(profile_argument_check());
  command->add_flag("--json", json, "Machine-readable output: the merged values and their files");
  command->callback([&context] {
    auto merged = load_merged_or_installed(context, name);
    if (!merged) {
      context.exit_code = report(merged.error(), kExitUsage);
      return;
    }
    if (auto valid = validate_profile(*merged); !valid) {
      context.exit_code = report(valid.error(), kExitUsage);
      return;
    }
    if (json) {
      std::ostringstream values;
      values << toml::json_formatter{merged->table};
      fmt::print("{}\n",
                 nlohmann::ordered_json{{"profile", merged->name},
                                        {"sources", merged->sources},
                                        {"values", nlohmann::ordered_json::parse(values.str())}}
                     .dump(2));
      return;
    }
    fmt::print("# profile '{}', merged from:\n", merged->name);
    for (const auto& file : merged->sources) fmt::print("#   {}\n", file);
    fmt::print("{}\n", print_toml(merged->table));
  });
}

}  // namespace gl
