// SPDX-License-Identifier: Apache-2.0
#pragma once
// The seam between `util/tar_archive` (in every binary) and its libarchive half, built as a
// module of its own (`gpulaunch-archive.so`) and loaded only when an archive is read or written.
// libarchive pulls zstd, lzma, bz2, lz4, libxml2, ICU, Nettle and libacl into a process: about
// 170 page faults at every start of every command, most of `check`'s time on a VM
// (bench/README.md, where check's time goes), for the two commands that use it. Both halves are
// built from one tree with one compiler, so C++ types cross the seam as they are.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "util/tar_archive.hpp"

namespace gl {

struct TarArchiveModule {
  // kTarArchiveModuleVersion of the build that made the module: a module left from another
  // build is refused, never called.
  int version = 0;
  Result<void*> (*writer_open)(int fd, std::string shown);
  Result<void> (*writer_add_file)(void* writer, std::string_view path, std::uint64_t size,
                                  bool executable);
  Result<void> (*writer_write_data)(void* writer, std::span<const char> data);
  Result<void> (*writer_finish)(void* writer);
  void (*writer_free)(void* writer);
  Result<void*> (*reader_open)(int fd, std::string shown);
  Result<std::optional<ArchiveMember>> (*reader_next)(void* reader);
  Result<std::size_t> (*reader_read_data)(void* reader, std::span<char> buffer);
  Result<std::optional<TarReader::Block>> (*reader_read_block)(void* reader);
  void (*reader_free)(void* reader);
};

// Bumped whenever TarArchiveModule, ArchiveMember or TarReader::Block change.
inline constexpr int kTarArchiveModuleVersion = 1;

// The module's one exported symbol.
inline constexpr const char* kTarArchiveModuleSymbol = "gpulaunch_tar_archive_module";

}  // namespace gl

extern "C" const gl::TarArchiveModule* gpulaunch_tar_archive_module();
