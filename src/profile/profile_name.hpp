// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a profile name may be. A name becomes a file name (NAME.toml), a unit name
// (gpulaunch-NAME.service) and a directory root writes under /var/lib/gpulaunch, so every command
// that takes one checks it with this one rule before it builds a path from it.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace gl {

inline constexpr std::size_t kMaxProfileNameLength = 64;
inline constexpr std::string_view kProfileSuffix = ".toml";

// Letters, digits, '-', '_', '.'; not starting with '.' or '-'; at most 64 characters.
bool is_valid_profile_name(std::string_view name);
// The same, with the error that names `name` and the rule.
Result<void> check_profile_name(std::string_view name);

// True when a command-line argument is a path to a profile file rather than a name: it contains
// '/' or ends in ".toml".
bool is_profile_path(std::string_view argument);

// The profile a command-line argument stands for: the argument itself when it is a valid name,
// the file's stem when it is a path to NAME.toml with a valid NAME; an error naming the argument
// otherwise.
Result<std::string> profile_name_of(std::string_view name_or_path);

// The systemd unit of profile `name`: gpulaunch-NAME.service.
std::string unit_name_for(std::string_view name);
// The glob every such unit matches (for ListUnitsByPatterns), and the profile a unit is of:
// nullopt for a unit that is not a profile's.
std::string unit_name_pattern();
std::optional<std::string> profile_of_unit(std::string_view unit);

}  // namespace gl
