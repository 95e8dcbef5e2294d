// SPDX-License-Identifier: Apache-2.0
#pragma once
// SHA-256 for content identity (lockfiles): OpenSSL's, as lowercase hex.

#include <cstdint>
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

// A file's content identity that never reads its holes: SHA-256 over, for each 64 KiB block
// (kStoredBlock) at offset O that is not all zero, O as 8 little-endian bytes then the block.
// Holes are found with SEEK_DATA/SEEK_HOLE and skipped unread, so a 60 GiB sparse file costs
// what it stores; a hole and written zeros hash alike, so a sparse copy equals a dense one.
// `read` is the bytes read (at most the allocated extents rounded out to whole blocks).
inline constexpr std::uint64_t kStoredBlock = 64 * 1024;
struct StoredDigest {
  std::string sha256;
  std::uint64_t read = 0;
};
Result<StoredDigest> sha256_stored_hex(int fd, std::uint64_t size, std::string_view shown);

}  // namespace gl
