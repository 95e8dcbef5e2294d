// SPDX-License-Identifier: Apache-2.0
#pragma once
// SHA-256 for content identity (lockfiles): OpenSSL's, as lowercase hex.

#include <filesystem>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace gl {

// 64 hex digits.
std::string sha256_hex(std::string_view data);

// The file's content, streamed; "Failed to hash 'path': reason" when unreadable.
Result<std::string> sha256_file_hex(const std::filesystem::path& path);

// What is left to read from `fd`, streamed; `shown` names it in "Failed to hash 'shown': reason".
Result<std::string> sha256_fd_hex(int fd, std::string_view shown);

}  // namespace gl
