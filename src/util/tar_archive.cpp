// SPDX-License-Identifier: Apache-2.0
// TarWriter and TarReader over the libarchive half in `gpulaunch-archive.so`, loaded the first
// time an archive is opened (util/tar_archive_module.hpp says why).
#include "util/tar_archive.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "util/safe_file.hpp"
#include "util/shared_library.hpp"
#include "util/tar_archive_module.hpp"
#include "util/try.hpp"
#include "util/unique_fd.hpp"

namespace gl {
namespace {

constexpr const char* kModuleFile = "lib/gpulaunch/gpulaunch-archive.so";

// Beside the running binary as installed (/usr/bin/gpulaunch -> /usr/lib/gpulaunch/...), or the
// build tree's for a binary inside it (the tests, the benches, the fuzzers).
Result<std::filesystem::path> module_path() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return failf("cannot find the running binary: {}", error.message());
  const std::filesystem::path build = GPULAUNCH_BUILD_DIR;
  const auto inside = self.lexically_relative(build);
  if (!inside.empty() && *inside.begin() != "..") return build / kModuleFile;
  return self.parent_path().parent_path() / kModuleFile;
}

// Root loads only what only root could have put there: the file opened without following a link,
// a regular file owned by root and writable by no one else, on a path no other user can replace.
Result<const TarArchiveModule*> load_module() {
  GL_TRY(const auto path, module_path());
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return failf("'{}' cannot be opened: {}", path.string(), std::strerror(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode))
    return failf("'{}' is not a regular file", path.string());
  if (::geteuid() == 0) {
    if (info.st_uid != 0 || (info.st_mode & (S_IWGRP | S_IWOTH)) != 0)
      return failf("'{}' is owned by uid {} (mode {:04o}): root loads only its own modules",
                   path.string(), info.st_uid, info.st_mode & 07777);
    if (auto reason = replaceable_reason(path)) return failf("{}", *reason);
  }
  // The descriptor checked is the file loaded.
  const std::string by_fd = "/proc/self/fd/" + std::to_string(fd.get());
  GL_TRY(auto library, SharedLibrary::open(by_fd, path.string()));
  auto* entry = library.symbol<const TarArchiveModule*()>(kTarArchiveModuleSymbol);
  const TarArchiveModule* module = entry ? entry() : nullptr;
  if (!module || module->version != kTarArchiveModuleVersion)
    return failf("'{}' is from another build of gpulaunch (reinstall the package)", path.string());
  std::move(library).keep();
  return module;  // kept loaded for the process's life
}

Result<const TarArchiveModule*> archive_module(std::string_view shown) {
  static const Result<const TarArchiveModule*> loaded = load_module();
  if (!loaded)
    return failf("Cannot open '{}' (the archive module): {}", shown, loaded.error().message);
  return *loaded;
}

}  // namespace

struct TarWriter::State {
  const TarArchiveModule* module = nullptr;
  void* writer = nullptr;
  ~State() {
    if (writer) module->writer_free(writer);
  }
};

TarWriter::TarWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
TarWriter::TarWriter(TarWriter&&) noexcept = default;
TarWriter& TarWriter::operator=(TarWriter&&) noexcept = default;
TarWriter::~TarWriter() = default;

Result<TarWriter> TarWriter::open(int fd, std::string shown) {
  auto state = std::make_unique<State>();
  GL_TRY(state->module, archive_module(shown));
  GL_TRY(state->writer, state->module->writer_open(fd, std::move(shown)));
  return TarWriter(std::move(state));
}

Result<void> TarWriter::add_file(std::string_view path, std::uint64_t size, bool executable) {
  return state_->module->writer_add_file(state_->writer, path, size, executable);
}

Result<void> TarWriter::write_data(std::span<const char> data) {
  return state_->module->writer_write_data(state_->writer, data);
}

Result<void> TarWriter::finish() {
  return state_->module->writer_finish(state_->writer);
}

struct TarReader::State {
  const TarArchiveModule* module = nullptr;
  void* reader = nullptr;
  ~State() {
    if (reader) module->reader_free(reader);
  }
};

TarReader::TarReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
TarReader::TarReader(TarReader&&) noexcept = default;
TarReader& TarReader::operator=(TarReader&&) noexcept = default;
TarReader::~TarReader() = default;

Result<TarReader> TarReader::open(int fd, std::string shown) {
  auto state = std::make_unique<State>();
  GL_TRY(state->module, archive_module(shown));
  GL_TRY(state->reader, state->module->reader_open(fd, std::move(shown)));
  return TarReader(std::move(state));
}

Result<std::optional<ArchiveMember>> TarReader::next() {
  return state_->module->reader_next(state_->reader);
}

Result<std::size_t> TarReader::read_data(std::span<char> buffer) {
  return state_->module->reader_read_data(state_->reader, buffer);
}

Result<std::optional<TarReader::Block>> TarReader::read_block() {
  return state_->module->reader_read_block(state_->reader);
}

}  // namespace gl
