// SPDX-License-Identifier: Apache-2.0
// Hidden `internal-catalog`: prints the journal catalog (catalog/journal_messages' table) that the
// package installs as /usr/lib/systemd/catalog/gpulaunch.catalog. A build step, like
// `internal-man`.

#include <fmt/core.h>

#include "catalog/journal_messages.hpp"
#include "cli/context.hpp"

namespace gl {

void add_catalog_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "internal-catalog", "Print the journal message catalog for journalctl -x (build step)");
  command->group("");  // hidden
  command->callback([&context] {
    fmt::print("{}", journal_catalog());
    context.exit_code = 0;
  });
}

}  // namespace gl
