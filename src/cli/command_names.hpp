// SPDX-License-Identifier: Apache-2.0
#pragma once
// The command words a user types, checked by name: the first word where a subcommand is expected
// that names none ("gpulaunch stauts", "gpulaunch gate recrod"), with the closest visible one.

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gl {

// "unknown command 'stauts'; did you mean 'status'?" (nested: "unknown 'gate' command 'recrod';
// did you mean 'record'?"), or nullopt when every command word on `args` (argv without argv[0])
// names a subcommand.
std::optional<std::string> unknown_command(CLI::App& app, const std::vector<std::string>& args);

}  // namespace gl
