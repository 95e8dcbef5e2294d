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

// The program a command-line value such as FLASHINFER_NVCC runs: its first word (ninja hands
// the value to a shell).
std::string first_word(std::string_view value);
// Where a shell looks for `program`: itself when it names a path, else each PATH directory.
std::vector<std::string> program_candidates(const EnvironmentVariables& variables,
                                            const std::string& program);

// The variables of the shell gpulaunch runs in that decide which toolkit a JIT library finds.
struct ShellEnvironment {
  EnvironmentVariables variables;

  static ShellEnvironment current();
};

}  // namespace gl
