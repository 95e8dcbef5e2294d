// SPDX-License-Identifier: Apache-2.0
#pragma once
// The only way profile text becomes a TOML table: size cap, a guard against inputs that crash
// Debian's toml++ 3.3.0, then the parser, with its errors located.

#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "util/error.hpp"

namespace gl {

inline constexpr size_t kMaxProfileBytes = 256 * 1024;
// toml++ recurses once per dotted key part: ~30,000 parts overflow a 1 MiB stack.
inline constexpr size_t kMaxDotsPerLine = 128;

// Rejects what toml++ 3.3.0 cannot survive, with the location of the first offending byte.
Result<void> guard_toml_text(std::string_view text, const std::string& path);

Result<toml::table> parse_toml(std::string_view text, const std::string& path);

// "a string", "an integer", ...: what a node is, for error messages.
std::string_view toml_type_name(const toml::node& node);

// "path:line:col" of a node toml++ parsed; `fallback` when it has no source (defaults).
Location location_of(const toml::node& node, const Location& fallback);

}  // namespace gl
