// SPDX-License-Identifier: Apache-2.0
#pragma once
// Directories no JIT cache may be and no clear may touch, as data: the root, system trees,
// directories that hold more than one owner's data, and home directories. Pure (no filesystem
// access), so profile validation and removal share one list.

#include <optional>
#include <string>
#include <string_view>

namespace gl {

// Why `path` (absolute, lexically normal, no trailing '/') may hold no cache: "it is the root
// directory", "it is in the system directory '/usr'", "it is a system directory", "it is a home
// directory"; nullopt when it may.
std::optional<std::string> system_directory_reason(std::string_view path);

}  // namespace gl
