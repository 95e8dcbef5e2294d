// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulaunch --help` as an operator reads it: the commands in groups (lifecycle, inspect, fleet and
// caches), each with one example, in the command's own --help and, one per group, at the end of
// gpulaunch's. One table; a visible command missing from it stays under CLI11's "Subcommands:",
// which the CLI test refuses.

#include <CLI/CLI.hpp>

namespace gl {

// Sets each visible subcommand's group and example footer, and the top-level examples.
void group_commands(CLI::App& app);

}  // namespace gl
