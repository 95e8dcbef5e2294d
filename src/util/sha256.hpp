// SPDX-License-Identifier: Apache-2.0
#pragma once
// SHA-256 for content identity (lockfiles, cache digests): Nettle's, as lowercase hex.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
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

// The same identity taken from content that arrives in pieces (an archive's member as it
// streams), for a file of `size` bytes: add() takes data at an offset at or past everything added
// before, the bytes skipped being a hole. Each whole block that is not all zero is handed to
// `stored` (offset, bytes) once it is complete, so a caller writes exactly those and leaves the
// rest a hole. The value equals sha256_stored_hex of a file with that content.
class StoredHasher {
 public:
  using Sink = std::function<Result<void>(std::uint64_t offset, std::span<const char> block)>;
  StoredHasher(std::uint64_t size, Sink stored);
  StoredHasher(StoredHasher&&) noexcept;
  ~StoredHasher();
  // Refuses data before what was added already, or past `size`.
  Result<void> add(std::uint64_t offset, std::span<const char> data);
  // The last block handed over; the hex digest.
  Result<std::string> finish();

 private:
  Result<void> flush();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gl
