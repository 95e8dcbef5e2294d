// SPDX-License-Identifier: Apache-2.0
#pragma once
// A TOML table as text for people (`show`): floats as written, not at full precision.

#include <string>

#include <toml++/toml.h>

namespace gl {

// The table as toml++ prints it, each float in its shortest form that reads back as the same
// value: 0.85, not Debian's toml++ 3.3.0's 0.84999999999999998 (built without float to_chars).
std::string print_toml(const toml::table& table);

}  // namespace gl
