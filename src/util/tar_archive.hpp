// SPDX-License-Identifier: Apache-2.0
#pragma once
// A zstd-compressed POSIX tar archive (pax), written or read through libarchive on a descriptor
// the caller opened. Only the bytes of the archive are handled here: no member is ever written
// to or read from the filesystem by this code, so where members land (and whether a link or a
// device is acceptable) is the caller's decision. libarchive's external-program fallbacks are
// refused: reading or writing an archive never starts a process.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace gl {

// What a member is. Anything but a regular file or a directory (a symbolic or hard link, a
// device, a FIFO, a socket) is `other`, with its kind in `kind_name`.
enum class MemberKind { file, directory, other };

struct ArchiveMember {
  std::string path;  // as stored: the caller validates it
  MemberKind kind = MemberKind::other;
  std::string kind_name;  // "regular file", "directory", "symbolic link", "hard link", ...
  std::uint64_t size = 0;
  bool executable = false;  // any execute bit in the stored mode
};

class TarWriter {
 public:
  // Writes to `fd` (left open); `shown` names the archive in errors.
  static Result<TarWriter> open(int fd, std::string shown);
  TarWriter(TarWriter&&) noexcept;
  TarWriter& operator=(TarWriter&&) noexcept;
  ~TarWriter();

  // A regular file of `size` bytes, whose content follows through write_data. Every member gets
  // the same owner (0), time (0) and a mode of 0644 or 0755, so equal content gives an equal
  // archive.
  Result<void> add_file(std::string_view path, std::uint64_t size, bool executable);
  Result<void> write_data(std::span<const char> data);
  // Ends the archive (the end-of-archive blocks, the compressor's last frame).
  Result<void> finish();

 private:
  struct State;
  explicit TarWriter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

class TarReader {
 public:
  // Reads from `fd` (left open): tar (pax, ustar, GNU) compressed with zstd or not.
  static Result<TarReader> open(int fd, std::string shown);
  TarReader(TarReader&&) noexcept;
  TarReader& operator=(TarReader&&) noexcept;
  ~TarReader();

  // The next member's header; nullopt at the end of the archive.
  Result<std::optional<ArchiveMember>> next();
  // Up to `buffer.size()` bytes of the current member's content; 0 at its end.
  Result<std::size_t> read_data(std::span<char> buffer);
  // The current member's next piece of content at its offset in the file, as stored: a sparse
  // member's holes are skipped, never read or handed over as zeros; nullopt at its end. The
  // bytes stay valid until the next call.
  struct Block {
    std::uint64_t offset = 0;
    std::span<const char> data;
  };
  Result<std::optional<Block>> read_block();

 private:
  struct State;
  explicit TarReader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace gl
