// SPDX-License-Identifier: Apache-2.0
#include "util/safe_file.hpp"
#include "util/errno_text.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

namespace gl {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::vector<std::string> components(const std::filesystem::path& path) {
  std::vector<std::string> parts;
  for (const auto& part : path.relative_path()) {
    const std::string text = part.string();
    if (text.empty() || text == ".") continue;
    parts.push_back(text);
  }
  return parts;
}

// Who but root could change an object with this owner and mode.
std::optional<std::string> writable_by_others(const std::string& shown, const struct stat& info,
                                              bool is_parent, uid_t owner = 0) {
  const bool sticky = (info.st_mode & S_ISVTX) != 0;
  // A user's own directory may sit below root's (/home, /tmp), never below another user's.
  if (info.st_uid != owner && !(is_parent && info.st_uid == 0))
    return fmt::format("'{}' is owned by uid {} (mode {:04o})", shown, info.st_uid,
                       info.st_mode & 07777);
  // A sticky directory lets others create entries but not replace root's (the /tmp rule).
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !(is_parent && sticky && S_ISDIR(info.st_mode)))
    return fmt::format("'{}' is {}-writable (mode {:04o})", shown,
                       (info.st_mode & S_IWOTH) ? "world" : "group", info.st_mode & 07777);
  return std::nullopt;
}

std::string temporary_name(std::string_view name) {
  static std::mt19937_64 generator{std::random_device{}()};
  return fmt::format(".{}.{:016x}.tmp", name, generator());
}

}  // namespace

Result<void> write_all(int fd, std::string_view content, const std::string& shown) {
  while (!content.empty()) {
    ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return fail_errno(errno, "Failed to write '{}': {}", shown, errno_text(errno));
    }
    content.remove_prefix(static_cast<size_t>(written));
  }
  return {};
}

bool exists_no_follow(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::exists(std::filesystem::symlink_status(path, error));
}

Result<UniqueFd> open_directory_nofollow(const std::filesystem::path& directory) {
  if (!directory.is_absolute())
    return failf("Failed to open '{}': not an absolute path", directory.string());
  UniqueFd current(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!current) return fail_errno(errno, "Failed to open '/': {}", errno_text(errno));
  std::filesystem::path reached = "/";
  for (const auto& part : components(directory)) {
    reached /= part;
    if (part == "..") return failf("Refusing to open '{}': it contains '..'", directory.string());
    int fd = ::openat(current.get(), part.c_str(),
                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      int error = errno;
      if (error == ELOOP || error == ENOTDIR) {
        struct stat info {};
        if (::fstatat(current.get(), part.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0)
          return failf("Refusing to open '{}': '{}' is {}", directory.string(), reached.string(),
                       kind_of(info.st_mode));
      }
      return fail_errno(error, "Failed to open '{}': {}", reached.string(), errno_text(error));
    }
    current = UniqueFd(fd);
  }
  return current;
}

namespace {

Result<UniqueFd> open_owned_directory(const std::filesystem::path& directory, uid_t owner,
                                      mode_t mode) {
  if (!directory.is_absolute())
    return failf("Failed to open '{}': not an absolute path", directory.string());
  UniqueFd current(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!current) return fail_errno(errno, "Failed to open '/': {}", errno_text(errno));
  std::filesystem::path reached = "/";
  const auto parts = components(directory);
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& part = parts[i];
    reached /= part;
    if (part == "..") return failf("Refusing to open '{}': it contains '..'", directory.string());
    const bool created = ::mkdirat(current.get(), part.c_str(), mode) == 0;
    if (!created && errno != EEXIST)
      return fail_errno(errno, "Failed to create '{}': {}", reached.string(), errno_text(errno));
    int fd = ::openat(current.get(), part.c_str(),
                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      int error = errno;
      if (error == ELOOP || error == ENOTDIR)
        return failf("Refusing to use '{}': it is not a directory (a link or a file)",
                     reached.string());
      return fail_errno(error, "Failed to open '{}': {}", reached.string(), errno_text(error));
    }
    UniqueFd next(fd);
    struct stat info {};
    if (::fstat(next.get(), &info) != 0)
      return fail_errno(errno, "Failed to stat '{}': {}", reached.string(), errno_text(errno));
    // The caller's umask (a unit's UMask=0027) must not make root's state unreadable to others.
    if (created && (info.st_mode & 07777) != mode) {
      if (::fchmod(next.get(), mode) != 0)
        return fail_errno(errno, "Failed to set the mode of '{}': {}", reached.string(),
                          errno_text(errno));
      info.st_mode = (info.st_mode & ~07777) | mode;
    }
    if (auto reason = writable_by_others(reached.string(), info, i + 1 < parts.size(), owner))
      return failf("Refusing to keep {} state in '{}': {}",
                   owner == 0 ? std::string("root's") : fmt::format("uid {}'s", owner),
                   directory.string(), *reason);
    current = std::move(next);
  }
  return current;
}

}  // namespace

Result<UniqueFd> open_root_owned_directory(const std::filesystem::path& directory, mode_t mode) {
  return open_owned_directory(directory, 0, mode);
}

Result<UniqueFd> open_user_owned_directory(const std::filesystem::path& directory, uid_t owner,
                                           mode_t mode) {
  return open_owned_directory(directory, owner, mode);
}

namespace {

// read_regular_at and read_regular_head_at: the whole file within `limit`, or its first `limit`
// bytes.
Result<std::optional<FileRead>> read_regular(int directory_fd, std::string_view name, size_t limit,
                                             bool head, const std::string& shown) {
  const std::string entry(name);
  UniqueFd fd(
      ::openat(directory_fd, entry.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    int error = errno;
    if (error == ENOENT) return std::optional<FileRead>{};
    if (error == ELOOP) return failf("Refusing to read '{}': it is a symbolic link", shown);
    return fail_errno(error, "Failed to open '{}': {}", shown, errno_text(error));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown, errno_text(errno));
  if (!S_ISREG(info.st_mode))
    return failf("Refusing to read '{}': it is {}", shown, kind_of(info.st_mode));
  if (!head && static_cast<size_t>(info.st_size) > limit)
    return failf("Refusing to read '{}': it is {} bytes, over the limit of {}", shown, info.st_size,
                 limit);
  FileRead read{{}, info.st_uid, info.st_mode};
  // Sized once: a growing string copied at each doubling cost a quarter of `check --node` on a
  // real 1.1 MB cuda.h.
  read.content.resize(std::min(static_cast<size_t>(info.st_size), limit) + 1);
  size_t have = 0;
  for (;;) {
    const size_t room =
        head ? std::min(read.content.size(), limit) - have : read.content.size() - have;
    if (room == 0) {
      if (head) break;
      read.content.resize(read.content.size() * 2);  // it grew since the fstat
      continue;
    }
    ssize_t got = ::read(fd.get(), read.content.data() + have, room);
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail_errno(errno, "Failed to read '{}': {}", shown, errno_text(errno));
    }
    if (got == 0) break;
    have += static_cast<size_t>(got);
    if (!head && have > limit)  // it grew while we read it
      return failf("Refusing to read '{}': it grew over the limit of {} bytes", shown, limit);
  }
  read.content.resize(have);
  return std::optional<FileRead>{std::move(read)};
}

}  // namespace

Result<std::optional<FileRead>> read_regular_at(int directory_fd, std::string_view name,
                                                size_t max_bytes, const std::string& shown) {
  return read_regular(directory_fd, name, max_bytes, false, shown);
}

Result<std::optional<FileRead>> read_regular_head_at(int directory_fd, std::string_view name,
                                                     size_t head_bytes, const std::string& shown) {
  return read_regular(directory_fd, name, head_bytes, true, shown);
}

Result<std::optional<FileRead>> read_regular_nofollow(const std::filesystem::path& path,
                                                      size_t max_bytes) {
  auto directory = open_directory_nofollow(path.parent_path());
  if (!directory) {
    // A missing parent means a missing file; anything else (a link on the way) is refused.
    if (directory.error().errno_value == ENOENT) return std::optional<FileRead>{};
    return std::unexpected(directory.error());
  }
  return read_regular_at(directory->get(), path.filename().string(), max_bytes, path.string());
}

namespace {

Result<void> write_whole_at(int directory_fd, std::string_view name, std::string_view content,
                            mode_t mode, const std::string& shown, bool replace) {
  const std::string temp = temporary_name(name);
  UniqueFd fd(::openat(directory_fd, temp.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd)
    return fail_errno(errno, "Failed to create a temporary file for '{}': {}", shown,
                      errno_text(errno));
  auto discard = [&](Error error) -> Result<void> {
    ::unlinkat(directory_fd, temp.c_str(), 0);
    return std::unexpected(std::move(error));
  };
  if (::fchmod(fd.get(), mode) != 0)
    return discard({fmt::format("Failed to set the mode of '{}': {}", shown, errno_text(errno))});
  if (auto written = write_all(fd.get(), content, shown); !written) return discard(written.error());
  if (::fsync(fd.get()) != 0)
    return discard({fmt::format("Failed to sync '{}': {}", shown, errno_text(errno))});
  if (::close(fd.release()) != 0)
    return discard({fmt::format("Failed to close '{}': {}", shown, errno_text(errno))});
  const std::string target(name);
  if (!replace) {
    if (::renameat2(directory_fd, temp.c_str(), directory_fd, target.c_str(), RENAME_NOREPLACE) !=
        0) {
      int error = errno;
      if (error == EEXIST)
        return discard({fmt::format("Refusing to write '{}': it exists already", shown)});
      return discard({fmt::format("Failed to create '{}': {}", shown, errno_text(error))});
    }
  } else if (::renameat(directory_fd, temp.c_str(), directory_fd, target.c_str()) != 0) {
    int error = errno;
    // A directory planted at the name cannot be renamed over: say so.
    return discard({fmt::format("Failed to replace '{}': {}", shown, errno_text(error))});
  }
  ::fsync(directory_fd);  // best effort: the rename is already visible
  return {};
}

}  // namespace

Result<void> write_atomically_at(int directory_fd, std::string_view name, std::string_view content,
                                 mode_t mode, const std::string& shown) {
  return write_whole_at(directory_fd, name, content, mode, shown, true);
}

Result<void> create_atomically_at(int directory_fd, std::string_view name, std::string_view content,
                                  mode_t mode, const std::string& shown) {
  return write_whole_at(directory_fd, name, content, mode, shown, false);
}

Result<void> append_at(int directory_fd, std::string_view name, std::string_view line, mode_t mode,
                       const std::string& shown) {
  const std::string entry(name);
  UniqueFd fd(::openat(directory_fd, entry.c_str(),
                       O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode));
  if (!fd) {
    int error = errno;
    if (error == ELOOP) return failf("Refusing to append to '{}': it is a symbolic link", shown);
    return fail_errno(error, "Failed to open '{}': {}", shown, errno_text(error));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown, errno_text(errno));
  if (!S_ISREG(info.st_mode))
    return failf("Refusing to append to '{}': it is {}", shown, kind_of(info.st_mode));
  if (info.st_nlink > 1)
    return failf("Refusing to append to '{}': it has {} hard links", shown, info.st_nlink);
  // Created under the caller's umask: give it the mode asked for.
  if (info.st_uid == ::geteuid() && (info.st_mode & 07777) != mode && ::fchmod(fd.get(), mode) != 0)
    return fail_errno(errno, "Failed to set the mode of '{}': {}", shown, errno_text(errno));
  ssize_t written = ::write(fd.get(), line.data(), line.size());
  int error = errno;
  if (written != static_cast<ssize_t>(line.size())) {
    // A partial line (disk full) would corrupt the next one: cut it back off. Where even that
    // fails, the error names both, so the reader knows the file's last line is cut short.
    if (written > 0 && ::ftruncate(fd.get(), info.st_size) != 0)
      return failf(
          "Failed to append to '{}': short write (disk full?), and the partial line "
          "could not be cut off: {}",
          shown, errno_text(errno));
    return failf("Failed to append to '{}': {}", shown,
                 written < 0 ? errno_text(error) : "short write (disk full?)");
  }
  if (::fsync(fd.get()) != 0)
    return fail_errno(errno, "Failed to sync '{}': {}", shown, errno_text(errno));
  return {};
}

Result<void> remove_regular_at(int directory_fd, std::string_view name,
                               const std::filesystem::path& shown) {
  const std::string entry(name);
  if (::unlinkat(directory_fd, entry.c_str(), 0) != 0 && errno != ENOENT)
    return fail_errno(errno, "Failed to remove '{}': {}", shown.string(), errno_text(errno));
  return {};
}

std::optional<std::string> user_writable_reason(const std::filesystem::path& path) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error).lexically_normal();
  if (error) return fmt::format("'{}' cannot be resolved: {}", path.string(), error.message());
  // The object itself first (as a link if it is one), then every directory above it.
  struct stat info {};
  if (::lstat(absolute.c_str(), &info) == 0) {
    if (S_ISLNK(info.st_mode)) {
      if (info.st_uid != 0)
        return fmt::format("'{}' is a link owned by uid {}", absolute.string(), info.st_uid);
      auto target = std::filesystem::canonical(absolute, error);
      if (error) return fmt::format("'{}' is a dangling link", absolute.string());
      if (auto reason = user_writable_reason(target)) return reason;
    } else if (auto reason = writable_by_others(absolute.string(), info, false)) {
      return reason;
    }
  }
  for (auto parent = absolute.parent_path();; parent = parent.parent_path()) {
    if (::lstat(parent.c_str(), &info) == 0) {
      if (S_ISLNK(info.st_mode)) {
        auto target = std::filesystem::canonical(parent, error);
        if (error) return fmt::format("'{}' is a dangling link", parent.string());
        if (info.st_uid != 0)
          return fmt::format("'{}' is a link owned by uid {}", parent.string(), info.st_uid);
        if (auto reason = user_writable_reason(target)) return reason;
      } else if (auto reason = writable_by_others(parent.string(), info, true)) {
        return reason;
      }
    }
    if (parent == parent.root_path() || parent.empty()) break;
  }
  return std::nullopt;
}

std::optional<std::string> replaceable_reason(const std::filesystem::path& path,
                                              const std::filesystem::path& root) {
  if (!path.is_absolute()) return fmt::format("'{}' is not an absolute path", path.string());
  UniqueFd current(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  struct stat holder {};
  if (!current || ::fstat(current.get(), &holder) != 0)
    return fmt::format("'{}' cannot be opened: {}", root.string(), errno_text(errno));
  std::filesystem::path reached = "/";
  for (const auto& part : components(path.lexically_normal())) {
    if (part == "..") return fmt::format("'{}' climbs with '..'", path.string());
    const std::filesystem::path held_in = reached;
    reached /= part;
    // The directory holding the entry decides who can rename it away and put a link there.
    if (holder.st_uid != 0)
      return fmt::format("'{}' is owned by uid {} (mode {:04o}), who can replace '{}'",
                         held_in.string(), holder.st_uid, holder.st_mode & 07777, reached.string());
    const bool shared = (holder.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    const bool sticky = (holder.st_mode & S_ISVTX) != 0;
    if (shared && !sticky)
      return (holder.st_mode & S_IWOTH)
                 ? fmt::format("'{}' is world-writable (mode {:04o}): any user can replace '{}'",
                               held_in.string(), holder.st_mode & 07777, reached.string())
                 : fmt::format(
                       "'{}' is group-writable (gid {}, mode {:04o}): that group can "
                       "replace '{}'",
                       held_in.string(), holder.st_gid, holder.st_mode & 07777, reached.string());
    UniqueFd next(::openat(current.get(), part.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!next) {
      if (errno == ENOENT) return std::nullopt;
      return fmt::format("'{}' cannot be opened: {}", reached.string(), errno_text(errno));
    }
    struct stat info {};
    if (::fstat(next.get(), &info) != 0)
      return fmt::format("'{}' cannot be read: {}", reached.string(), errno_text(errno));
    if (S_ISLNK(info.st_mode))
      return fmt::format("'{}' is a symbolic link (owned by uid {}), which root would follow",
                         reached.string(), info.st_uid);
    // A sticky directory (/tmp) lets an entry's own owner rename it.
    if (shared && info.st_uid != 0)
      return fmt::format(
          "'{}' is owned by uid {} in the shared sticky '{}' (mode {:04o}), so "
          "that user can replace it",
          reached.string(), info.st_uid, held_in.string(), holder.st_mode & 07777);
    holder = info;
    current = std::move(next);
  }
  return std::nullopt;
}

}  // namespace gl
