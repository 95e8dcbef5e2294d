// SPDX-License-Identifier: Apache-2.0
#pragma once
// Environment variables as a value: the unit's pinned environment and the invoking shell's are
// both evaluated the way a JIT library would read them.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gl {

using EnvironmentVariables = std::vector<std::pair<std::string, std::string>>;

// The value of `name`, nullopt when unset or empty (FlashInfer treats "" as unset).
std::optional<std::string> lookup(const EnvironmentVariables& variables, std::string_view name);
// PATH split into its directories, empty entries dropped.
std::vector<std::string> path_directories(const EnvironmentVariables& variables);

// The variables of the shell gpulaunch runs in that decide which toolkit a JIT library finds.
struct ShellEnvironment {
  EnvironmentVariables variables;

  static ShellEnvironment current();
};

}  // namespace gl
