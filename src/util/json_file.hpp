// SPDX-License-Identifier: Apache-2.0
#pragma once
// JSON that comes from outside gpulaunch's own state: another node's facts, a lockfile handed
// over, two files to diff. Bounded in size and in nesting, so a hostile file gives a one-line
// error instead of an unbounded read, a hang or a stack overflow in code that walks the value.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/error.hpp"

namespace gl {

inline constexpr std::size_t kMaxJsonFileBytes = 16 << 20;
// Facts and locks nest 5 levels; anything this deep was not written by gpulaunch.
inline constexpr int kMaxJsonDepth = 64;

// Parses `text`, refusing syntax errors and values nested deeper than kMaxJsonDepth. `what`
// names the document in errors: "Failed to read {what}: ...". Json is nlohmann::json or
// nlohmann::ordered_json.
template <class Json>
Result<Json> parse_bounded_json(std::string_view text, std::string_view what);

// The text of a regular file of at most kMaxJsonFileBytes (util/atomic_file.hpp's read_file:
// FIFOs and devices refused without blocking).
Result<std::string> read_json_text(const std::filesystem::path& path);

}  // namespace gl
