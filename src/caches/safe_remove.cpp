// SPDX-License-Identifier: Apache-2.0
#include "caches/safe_remove.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include <fmt/core.h>

#include "caches/confined_walk.hpp"
#include "catalog/system_directories.hpp"
#include "util/errno_text.hpp"
#include "util/try.hpp"

namespace gl {

using namespace confined_walk;

namespace {

std::string own_home() {
  std::array<char, 4096> buffer{};
  struct passwd entry {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found &&
      found->pw_dir)
    return found->pw_dir;
  return {};
}

}  // namespace

Result<void> check_clearable(const std::filesystem::path& path) {
  if (!path.is_absolute())
    return failf("Refusing to clear '{}': not an absolute path", path.string());
  const std::string text = normal_text(path);
  if (auto reason = system_directory_reason(text))
    return failf("Refusing to clear '{}': {}", path.string(), *reason);
  const char* home_variable = std::getenv("HOME");
  if (text == own_home() || (home_variable && *home_variable && text == normal_text(home_variable)))
    return failf("Refusing to clear '{}': it is a home directory", path.string());
  return {};
}

Result<ConfinedRoot> ConfinedRoot::open(const std::filesystem::path& root) {
  GL_TRY_VOID(check_clearable(root));
  return open_checked(root, true);
}

Result<ConfinedRoot> ConfinedRoot::open_own(const std::filesystem::path& root) {
  if (!root.is_absolute())
    return failf("Refusing to clear '{}': not an absolute path", root.string());
  return open_checked(root, false);
}

Result<ConfinedRoot> ConfinedRoot::open_checked(const std::filesystem::path& root,
                                                bool clearable_only) {
  const std::filesystem::path normal(normal_text(root));
  const std::string shown = normal.string();
  int parent = ::open(normal.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return fail_errno(errno, "Failed to open '{}': {}", shown, errno_text(errno));
  UniqueFd parent_fd(parent);
  const std::string leaf = normal.filename().string();
  struct stat info {};
  if (::fstatat(parent_fd.get(), leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0)
    return fail_errno(errno, "Failed to open '{}': {}", shown, errno_text(errno));
  if (S_ISLNK(info.st_mode)) {
    std::array<char, 4096> target{};
    ssize_t length = ::readlinkat(parent_fd.get(), leaf.c_str(), target.data(), target.size() - 1);
    return failf(
        "Failed to open cache root '{}': it is a symbolic link to '{}'; name the real "
        "directory instead",
        shown, length > 0 ? std::string(target.data(), static_cast<size_t>(length)) : "?");
  }
  GL_TRY(auto fd, open_directory_at(parent_fd.get(), leaf, shown));
  // Ancestors were followed: the directory they lead to must pass the same check.
  std::error_code error;
  auto resolved = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd.get()), error);
  if (!error && clearable_only)
    if (auto allowed = check_clearable(resolved); !allowed)
      return failf("{} (resolved from '{}')", allowed.error().message, shown);
  return ConfinedRoot(normal, std::move(fd));
}

std::string ConfinedRoot::shown(std::string_view relative) const {
  return relative.empty() ? path_.string() : path_.string() + "/" + std::string(relative);
}

Result<TreeUsage> ConfinedRoot::usage(std::string_view relative, std::uint64_t max_entries) const {
  GL_TRY(auto parts, split_relative(relative));
  TreeUsage usage;
  UniqueFd dir;
  if (parts.empty()) {
    GL_TRY(auto opened, open_parts(fd_.get(), parts, 0, *this));
    dir = std::move(opened);
  } else {
    auto parent = open_parent(fd_.get(), relative, *this);
    if (!parent)
      return missing(parent.error()) ? Result<TreeUsage>(usage) : std::unexpected(parent.error());
    struct stat info {};
    if (::fstatat(parent->dir.get(), parent->leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return usage;
      return fail_errno(errno, "Failed to stat '{}': {}", shown(relative), errno_text(errno));
    }
    usage.exists = true;
    if (!S_ISDIR(info.st_mode)) return usage;
    GL_TRY(auto opened, open_directory_at(parent->dir.get(), parent->leaf, shown(relative)));
    dir = std::move(opened);
  }
  struct stat info {};
  if (::fstat(dir.get(), &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown(relative), errno_text(errno));
  usage.exists = true;
  usage.is_directory = true;
  GL_TRY_VOID(add_usage(dir.get(), shown(relative), info.st_dev, 0, max_entries, usage));
  return usage;
}

Result<RemovedTree> ConfinedRoot::clear_directory(std::string_view relative) const {
  GL_TRY(auto parent, open_parent(fd_.get(), relative, *this));
  struct stat info {};
  if (::fstatat(parent.dir.get(), parent.leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return RemovedTree{};
    return fail_errno(errno, "Failed to stat '{}': {}", shown(relative), errno_text(errno));
  }
  GL_TRY(auto trash, make_trash(fd_.get(), parent.leaf, shown("")));
  if (::renameat(parent.dir.get(), parent.leaf.c_str(), trash.fd.get(), parent.leaf.c_str()) != 0) {
    int error = errno;
    ::unlinkat(fd_.get(), trash.name.c_str(), AT_REMOVEDIR);
    if (error == EXDEV && S_ISDIR(info.st_mode)) return clear_contents(relative);
    return fail_errno(error, "Failed to move '{}' aside: {}", shown(relative), errno_text(error));
  }
  if (S_ISDIR(info.st_mode)) {
    // The engine may run as another user than this process: keep the directory it can write.
    if (::mkdirat(parent.dir.get(), parent.leaf.c_str(), 0700) != 0)
      return fail_errno(errno, "Failed to recreate '{}': {}", shown(relative), errno_text(errno));
    GL_TRY(auto fresh, open_directory_at(parent.dir.get(), parent.leaf, shown(relative)));
    if (::fchown(fresh.get(), info.st_uid, info.st_gid) != 0 && errno != EPERM)
      return fail_errno(errno, "Failed to set the owner of '{}': {}", shown(relative),
                        errno_text(errno));
    if (::fchmod(fresh.get(), info.st_mode & 07777) != 0)
      return fail_errno(errno, "Failed to set the mode of '{}': {}", shown(relative),
                        errno_text(errno));
  }
  // Durable before deleting: after a crash the cache is empty and the trash is swept next time.
  GL_TRY_VOID(sync_directory(parent.dir.get(), shown(relative)));
  GL_TRY_VOID(sync_directory(fd_.get(), shown("")));
  RemovedTree removed;
  struct stat root_info {};
  ::fstat(fd_.get(), &root_info);
  GL_TRY_VOID(remove_at(fd_.get(), trash.name, root_info.st_dev, shown(trash.name), removed));
  if (removed.entries > 0) --removed.entries;  // the trash directory itself
  if (S_ISDIR(info.st_mode) && removed.entries > 0) --removed.entries;  // the cache directory
  return removed;
}

Result<RemovedTree> ConfinedRoot::clear_contents(std::string_view relative) const {
  GL_TRY(auto parts, split_relative(relative));
  auto dir = open_parts(fd_.get(), parts, parts.size(), *this);
  if (!dir) {
    if (missing(dir.error())) return RemovedTree{};
    return std::unexpected(dir.error());
  }
  GL_TRY(auto names, list_names(dir->get(), shown(relative)));
  RemovedTree removed;
  if (names.empty()) return removed;
  GL_TRY(auto trash, make_trash(dir->get(), "contents", shown(relative)));
  for (const auto& name : names) {
    if (name.starts_with(kTrashPrefix)) continue;
    if (::renameat(dir->get(), name.c_str(), trash.fd.get(), name.c_str()) != 0)
      return failf("Failed to move '{}' aside: {}", shown(join(std::string(relative), name)),
                   errno_text(errno));
  }
  GL_TRY_VOID(sync_directory(dir->get(), shown(relative)));
  struct stat info {};
  ::fstat(dir->get(), &info);
  const std::string trash_path = shown(join(std::string(relative), trash.name));
  GL_TRY_VOID(remove_at(dir->get(), trash.name, info.st_dev, trash_path, removed));
  if (removed.entries > 0) --removed.entries;  // the trash directory itself
  return removed;
}

Result<std::vector<std::string>> ConfinedRoot::trash_in(std::string_view relative) const {
  GL_TRY(auto parts, split_relative(relative));
  auto dir = open_parts(fd_.get(), parts, parts.size(), *this);
  if (!dir) {
    if (nothing_below(dir.error())) return std::vector<std::string>{};
    return std::unexpected(dir.error());
  }
  GL_TRY(auto names, list_names(dir->get(), shown(relative)));
  std::vector<std::string> trash;
  for (const auto& name : names)
    if (name.starts_with(kTrashPrefix)) trash.push_back(join(std::string(relative), name));
  return trash;
}

Result<RemovedTree> ConfinedRoot::remove(std::string_view relative) const {
  auto parent = open_parent(fd_.get(), relative, *this);
  if (!parent) {
    if (missing(parent.error())) return RemovedTree{};
    return std::unexpected(parent.error());
  }
  struct stat parent_info {};
  if (::fstat(parent->dir.get(), &parent_info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown(relative), errno_text(errno));
  struct stat info {};
  if (::fstatat(parent->dir.get(), parent->leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return RemovedTree{};
    return fail_errno(errno, "Failed to stat '{}': {}", shown(relative), errno_text(errno));
  }
  RemovedTree removed;
  GL_TRY_VOID(
      remove_at(parent->dir.get(), parent->leaf, parent_info.st_dev, shown(relative), removed));
  return removed;
}

Result<bool> ConfinedRoot::remove_file_if_same(std::string_view relative,
                                               const FileIdentity& expected) const {
  GL_TRY(auto parent, open_parent(fd_.get(), relative, *this));
  struct stat info {};
  if (::fstatat(parent.dir.get(), parent.leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return false;
    return fail_errno(errno, "Failed to stat '{}': {}", shown(relative), errno_text(errno));
  }
  if (!S_ISREG(info.st_mode) || info.st_dev != expected.device || info.st_ino != expected.inode)
    return false;
  if (::unlinkat(parent.dir.get(), parent.leaf.c_str(), 0) != 0) {
    if (errno == ENOENT) return false;
    return fail_errno(errno, "Failed to remove '{}': {}", shown(relative), errno_text(errno));
  }
  return true;
}

Result<void> ConfinedRoot::for_each_file(
    std::string_view relative, const std::function<void(const std::string&)>& visit) const {
  GL_TRY(auto parts, split_relative(relative));
  auto dir = open_parts(fd_.get(), parts, parts.size(), *this);
  if (!dir) {
    if (nothing_below(dir.error())) return {};
    return std::unexpected(dir.error());
  }
  struct stat info {};
  if (::fstat(dir->get(), &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown(relative), errno_text(errno));
  return visit_files(dir->get(), std::string(relative), shown(relative), info.st_dev, 0, visit);
}

Result<UniqueFd> ConfinedRoot::open_file(std::string_view relative, FileIdentity* identity) const {
  GL_TRY(auto parent, open_parent(fd_.get(), relative, *this));
  int fd = ::openat(parent.dir.get(), parent.leaf.c_str(),
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return fail_errno(errno, "Failed to open '{}': {}", shown(relative), errno_text(errno));
  UniqueFd file(fd);
  struct stat info {};
  if (::fstat(file.get(), &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown(relative), errno_text(errno));
  if (!S_ISREG(info.st_mode))
    return failf("Failed to open '{}': not a regular file", shown(relative));
  if (identity) *identity = {info.st_dev, info.st_ino};
  return file;
}

Result<void> ConfinedRoot::sync() const {
  return sync_directory(fd_.get(), shown(""));
}

Result<std::filesystem::path> ConfinedRoot::move_aside(std::string_view relative,
                                                       std::string_view new_leaf) const {
  if (!plain_leaf(new_leaf))
    return failf("Refusing to move '{}' to '{}'", shown(relative), new_leaf);
  GL_TRY(auto parent, parent_of(fd_.get(), relative, *this));
  GL_TRY(auto info, stat_at(parent.dir.get(), parent.leaf, shown(relative)));
  if (!S_ISDIR(info.st_mode))
    return fail_errno(ENOTDIR, "Refusing to move '{}' aside: {}", shown(relative), kNotFollowed);
  struct stat root_info {};
  if (::fstat(fd_.get(), &root_info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown(""), errno_text(errno));
  if (relative.empty()) {
    // The name may have been swapped since the root was opened: move only the same directory.
    if (info.st_dev != root_info.st_dev || info.st_ino != root_info.st_ino)
      return failf("Refusing to move '{}' aside: it is no longer the directory that was opened",
                   shown(""));
  } else {
    GL_TRY_VOID(check_same_mount(info, root_info.st_dev, shown(relative)));
  }
  const std::string leaf(new_leaf);
  if (::renameat2(parent.dir.get(), parent.leaf.c_str(), parent.dir.get(), leaf.c_str(),
                  RENAME_NOREPLACE) != 0)
    return fail_errno(errno, "Failed to move '{}' aside: {}", shown(relative), errno_text(errno));
  const std::filesystem::path moved = std::filesystem::path(shown(relative)).parent_path() / leaf;
  GL_TRY_VOID(sync_directory(parent.dir.get(), moved.parent_path().string()));
  return moved;
}

Result<std::vector<std::filesystem::path>> ConfinedRoot::names_beside(
    std::string_view relative, std::string_view prefix) const {
  std::vector<std::filesystem::path> found;
  auto parent = parent_of(fd_.get(), relative, *this);
  if (!parent) {
    if (nothing_below(parent.error())) return found;
    return std::unexpected(parent.error());
  }
  const std::filesystem::path directory = std::filesystem::path(shown(relative)).parent_path();
  GL_TRY(auto names, list_names(parent->dir.get(), directory.string()));
  for (const auto& name : names)
    if (name.starts_with(prefix)) found.push_back(directory / name);
  std::sort(found.begin(), found.end());
  return found;
}

Result<BirthTime> ConfinedRoot::birth() const {
  return birth_of(fd_.get(), shown(""));
}

Result<FileIdentity> ConfinedRoot::identity() const {
  struct stat info {};
  if (::fstat(fd_.get(), &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown(""), errno_text(errno));
  return FileIdentity{info.st_dev, info.st_ino};
}

}  // namespace gl
