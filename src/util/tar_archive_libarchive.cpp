// SPDX-License-Identifier: Apache-2.0
// The one file that includes libarchive's headers: the module `gpulaunch-archive.so`, which
// `util/tar_archive` loads when an archive is read or written (util/tar_archive_module.hpp).
#include "util/tar_archive_module.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <limits>
#include <utility>

namespace gl {
namespace {

std::string why(struct archive* archive) {
  const char* text = archive_error_string(archive);
  return text ? text : "unknown libarchive error";
}

std::string kind_name(mode_t type, const char* hardlink) {
  if (hardlink) return "hard link";
  switch (type) {
    case AE_IFREG:
      return "regular file";
    case AE_IFDIR:
      return "directory";
    case AE_IFLNK:
      return "symbolic link";
    case AE_IFCHR:
      return "character device";
    case AE_IFBLK:
      return "block device";
    case AE_IFIFO:
      return "FIFO";
    case AE_IFSOCK:
      return "socket";
    default:
      return "member of unknown type";
  }
}

struct Writer {
  struct archive* archive = nullptr;
  std::string shown;
  ~Writer() {
    if (archive) archive_write_free(archive);
  }
};

Result<void*> writer_open(int fd, std::string shown) {
  auto state = std::make_unique<Writer>();
  state->shown = std::move(shown);
  state->archive = archive_write_new();
  if (!state->archive) return failf("Failed to write '{}': out of memory", state->shown);
  if (archive_write_set_format_pax_restricted(state->archive) != ARCHIVE_OK)
    return failf("Failed to write '{}': {}", state->shown, why(state->archive));
  // ARCHIVE_WARN here means libarchive would run the zstd program: never.
  if (archive_write_add_filter_zstd(state->archive) != ARCHIVE_OK)
    return failf("Failed to write '{}': this libarchive has no built-in zstd", state->shown);
  // No padding after the compressed stream: libarchive pads the last block of an output that is
  // not a regular file (a pipe into `cache import -`) with zeros, which zstd reads as a bad frame.
  if (archive_write_set_bytes_in_last_block(state->archive, 1) != ARCHIVE_OK ||
      archive_write_open_fd(state->archive, fd) != ARCHIVE_OK)
    return failf("Failed to write '{}': {}", state->shown, why(state->archive));
  return static_cast<void*>(state.release());
}

Result<void> writer_add_file(void* writer, std::string_view path, std::uint64_t size,
                             bool executable) {
  auto* self = static_cast<Writer*>(writer);
  if (size > static_cast<std::uint64_t>(std::numeric_limits<la_int64_t>::max()))
    return failf("Failed to write '{}': '{}' is too large", self->shown, path);
  struct archive_entry* entry = archive_entry_new();
  if (!entry) return failf("Failed to write '{}': out of memory", self->shown);
  const std::string name(path);
  archive_entry_set_pathname(entry, name.c_str());
  archive_entry_set_filetype(entry, AE_IFREG);
  archive_entry_set_perm(entry, executable ? 0755 : 0644);
  archive_entry_set_size(entry, static_cast<la_int64_t>(size));
  archive_entry_set_mtime(entry, 0, 0);
  archive_entry_set_uid(entry, 0);
  archive_entry_set_gid(entry, 0);
  const int status = archive_write_header(self->archive, entry);
  archive_entry_free(entry);
  if (status != ARCHIVE_OK)
    return failf("Failed to write '{}': member '{}': {}", self->shown, path, why(self->archive));
  return {};
}

Result<void> writer_write_data(void* writer, std::span<const char> data) {
  auto* self = static_cast<Writer*>(writer);
  while (!data.empty()) {
    const la_ssize_t written = archive_write_data(self->archive, data.data(), data.size());
    if (written <= 0) return failf("Failed to write '{}': {}", self->shown, why(self->archive));
    data = data.subspan(static_cast<std::size_t>(written));
  }
  return {};
}

Result<void> writer_finish(void* writer) {
  auto* self = static_cast<Writer*>(writer);
  if (archive_write_close(self->archive) != ARCHIVE_OK)
    return failf("Failed to write '{}': {}", self->shown, why(self->archive));
  return {};
}

void writer_free(void* writer) {
  delete static_cast<Writer*>(writer);
}

struct Reader {
  struct archive* archive = nullptr;
  std::string shown;
  ~Reader() {
    if (archive) archive_read_free(archive);
  }
};

Result<void*> reader_open(int fd, std::string shown) {
  auto state = std::make_unique<Reader>();
  state->shown = std::move(shown);
  state->archive = archive_read_new();
  if (!state->archive) return failf("Failed to read '{}': out of memory", state->shown);
  if (archive_read_support_format_tar(state->archive) != ARCHIVE_OK)
    return failf("Failed to read '{}': {}", state->shown, why(state->archive));
  // ARCHIVE_WARN: only through the zstd program, which is never run.
  if (archive_read_support_filter_zstd(state->archive) != ARCHIVE_OK)
    return failf("Failed to read '{}': this libarchive has no built-in zstd", state->shown);
  if (archive_read_open_fd(state->archive, fd, 64 * 1024) != ARCHIVE_OK)
    return failf("Failed to read '{}': {}", state->shown, why(state->archive));
  return static_cast<void*>(state.release());
}

Result<std::optional<ArchiveMember>> reader_next(void* reader) {
  auto* self = static_cast<Reader*>(reader);
  struct archive_entry* entry = nullptr;
  const int status = archive_read_next_header(self->archive, &entry);
  if (status == ARCHIVE_EOF) return std::optional<ArchiveMember>{};
  // A warning (an unknown pax keyword, a character-set conversion) is not trusted either.
  if (status != ARCHIVE_OK)
    return failf("Failed to read '{}': {}", self->shown, why(self->archive));
  ArchiveMember member;
  const char* path = archive_entry_pathname(entry);
  if (!path) return failf("Failed to read '{}': a member has no name", self->shown);
  member.path = path;
  const char* hardlink = archive_entry_hardlink(entry);
  const mode_t type = archive_entry_filetype(entry);
  member.kind_name = kind_name(type, hardlink);
  if (!hardlink && type == AE_IFREG)
    member.kind = MemberKind::file;
  else if (!hardlink && type == AE_IFDIR)
    member.kind = MemberKind::directory;
  if (archive_entry_size_is_set(entry) && archive_entry_size(entry) > 0)
    member.size = static_cast<std::uint64_t>(archive_entry_size(entry));
  member.executable = (archive_entry_perm(entry) & 0111) != 0;
  return std::optional<ArchiveMember>(std::move(member));
}

Result<std::size_t> reader_read_data(void* reader, std::span<char> buffer) {
  auto* self = static_cast<Reader*>(reader);
  const la_ssize_t got = archive_read_data(self->archive, buffer.data(), buffer.size());
  if (got < 0) return failf("Failed to read '{}': {}", self->shown, why(self->archive));
  return static_cast<std::size_t>(got);
}

Result<std::optional<TarReader::Block>> reader_read_block(void* reader) {
  using Block = TarReader::Block;
  auto* self = static_cast<Reader*>(reader);
  const void* data = nullptr;
  std::size_t size = 0;
  la_int64_t offset = 0;
  const int status = archive_read_data_block(self->archive, &data, &size, &offset);
  if (status == ARCHIVE_EOF) return std::optional<Block>{};
  if (status != ARCHIVE_OK || offset < 0)
    return failf("Failed to read '{}': {}", self->shown, why(self->archive));
  return std::optional<Block>(
      Block{static_cast<std::uint64_t>(offset), {static_cast<const char*>(data), size}});
}

void reader_free(void* reader) {
  delete static_cast<Reader*>(reader);
}

constexpr TarArchiveModule kModule{
    .version = kTarArchiveModuleVersion,
    .writer_open = writer_open,
    .writer_add_file = writer_add_file,
    .writer_write_data = writer_write_data,
    .writer_finish = writer_finish,
    .writer_free = writer_free,
    .reader_open = reader_open,
    .reader_next = reader_next,
    .reader_read_data = reader_read_data,
    .reader_read_block = reader_read_block,
    .reader_free = reader_free,
};

}  // namespace
}  // namespace gl

extern "C" __attribute__((visibility("default"))) const gl::TarArchiveModule*
gpulaunch_tar_archive_module() {
  return &gl::kModule;
}
