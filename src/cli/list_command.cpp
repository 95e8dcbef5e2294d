// SPDX-License-Identifier: Apache-2.0
#include <filesystem>

#include <fmt/core.h>

#include "cli/context.hpp"

namespace gl {

void add_list_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("list", "List profiles and the file each comes from");
  command->callback([&context] {
    auto entries = context.profile_source().list();
    size_t width = 4;
    for (const auto& entry : entries) width = std::max(width, entry.name.size());
    fmt::print("{:<{}}  {}\n", "NAME", width, "FILE");
    for (const auto& entry : entries) {
      std::error_code ignored;
      auto file = std::filesystem::absolute(entry.path, ignored).lexically_normal();
      fmt::print("{:<{}}  {}\n", entry.name, width, file.string());
      for (const auto& shadowed : entry.shadows) {
        auto hidden = std::filesystem::absolute(shadowed, ignored).lexically_normal();
        fmt::print("{:<{}}    (shadows {})\n", "", width, hidden.string());
      }
    }
  });
}

}  // namespace gl
