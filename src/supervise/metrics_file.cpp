// SPDX-License-Identifier: Apache-2.0
#include "supervise/metrics_file.hpp"

#include <sys/stat.h>
#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/core.h>

#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

constexpr mode_t kMetricsMode = 0644;  // node_exporter runs as its own user and reads it

// The directory, reached without following a link, and only when root alone can write in it
// (owned by root, no group or other write); nullopt when it does not exist. Only the directory
// itself is judged: Debian's prometheus package owns /var/lib/prometheus, and every write below is
// relative to this descriptor (a fresh O_EXCL temporary renamed over the name), so whoever owns a
// parent can move the directory but not make root write anywhere else.
Result<std::optional<UniqueFd>> open_textfile_directory(const std::filesystem::path& directory) {
  struct stat info {};
  if (::lstat(directory.c_str(), &info) != 0 && errno == ENOENT) return std::optional<UniqueFd>{};
  GL_TRY(auto fd, open_directory_nofollow(directory));
  if (::fstat(fd.get(), &info) != 0)
    return failf("Failed to stat '{}': {}", directory.string(), std::strerror(errno));
  if (info.st_uid != 0 || (info.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return failf(
        "Refusing to write metrics into '{}': it is owned by uid {} (mode {:04o}); only a "
        "directory root alone can write is used",
        directory.string(), info.st_uid, info.st_mode & 07777);
  return std::optional<UniqueFd>{std::move(fd)};
}

}  // namespace

Result<MetricsWrite> write_metrics_file(const std::filesystem::path& directory,
                                        std::string_view profile, std::string_view text) {
  MetricsWrite write;
  write.path = (directory / state_paths::metrics_file_name(profile)).string();
  GL_TRY(auto fd, open_textfile_directory(directory));
  if (!fd) {
    write.note =
        fmt::format("'{}' does not exist (node_exporter is not installed); not writing '{}'",
                    directory.string(), write.path);
    return write;
  }
  GL_TRY_VOID(write_atomically_at(fd->get(), state_paths::metrics_file_name(profile), text,
                                  kMetricsMode, write.path));
  write.done = true;
  return write;
}

Result<MetricsWrite> remove_metrics_file(const std::filesystem::path& directory,
                                         std::string_view profile) {
  MetricsWrite removal;
  removal.path = (directory / state_paths::metrics_file_name(profile)).string();
  GL_TRY(auto fd, open_textfile_directory(directory));
  if (!fd) return removal;
  GL_TRY_VOID(remove_regular_at(fd->get(), state_paths::metrics_file_name(profile), removal.path));
  removal.done = true;
  return removal;
}

}  // namespace gl
