// SPDX-License-Identifier: Apache-2.0
// ConfinedRoot's creating half: directories made and entered without following a link, files
// created, ownership handed over, a sibling swapped in; and make_cache_directory. The removing
// and reading half is safe_remove.cpp; the descriptor-relative steps both use, confined_walk.
#include "caches/safe_remove.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include <fmt/core.h>

#include "caches/confined_walk.hpp"
#include "util/errno_text.hpp"
#include "util/try.hpp"

namespace gl {

using namespace confined_walk;

Result<bool> ConfinedRoot::exists(std::string_view relative) const {
  auto parent = open_parent(fd_.get(), relative, *this);
  if (!parent) {
    if (nothing_below(parent.error())) return false;
    return std::unexpected(parent.error());
  }
  struct stat info {};
  if (::fstatat(parent->dir.get(), parent->leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0)
    return true;
  if (errno == ENOENT) return false;
  return fail_errno(errno, "Failed to stat '{}': {}", shown(relative), errno_text(errno));
}

Result<FreeSpace> ConfinedRoot::free_space() const {
  struct statvfs info {};
  if (::fstatvfs(fd_.get(), &info) != 0)
    return fail_errno(errno, "Failed to read the free space of '{}': {}", shown(""),
                      errno_text(errno));
  return FreeSpace{static_cast<std::uint64_t>(info.f_bavail) * info.f_frsize,
                   static_cast<std::uint64_t>(info.f_blocks) * info.f_frsize,
                   static_cast<std::uint64_t>(info.f_favail),
                   static_cast<std::uint64_t>(info.f_files)};
}

Result<void> ConfinedRoot::make_directories(std::string_view relative,
                                            const DirectoryOwner& owner) const {
  GL_TRY(auto parts, split_relative(relative));
  GL_TRY(auto current, open_parts(fd_.get(), parts, 0, *this));
  std::string reached;
  for (const auto& part : parts) {
    reached = join(reached, part);
    bool created = false;
    GL_TRY(auto next, make_directory_at(current.get(), part, &owner, shown(reached), created));
    current = std::move(next);
  }
  return {};
}

Result<DirectoryOwner> ConfinedRoot::owner() const {
  struct stat info {};
  if (::fstat(fd_.get(), &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown(""), errno_text(errno));
  return DirectoryOwner{info.st_uid, info.st_gid};
}

Result<std::uint64_t> ConfinedRoot::change_owner(uid_t from, const DirectoryOwner& to) const {
  struct stat info {};
  if (::fstat(fd_.get(), &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown(""), errno_text(errno));
  std::uint64_t changed = 0;
  GL_TRY(auto names, list_names(fd_.get(), shown("")));
  for (const auto& child : names)
    GL_TRY_VOID(change_owner_at(fd_.get(), child, from, to, info.st_dev, 1, shown(child), changed));
  if (info.st_uid == from) {
    if (::fchown(fd_.get(), to.uid, to.gid) != 0)
      return fail_errno(errno, "Failed to change the owner of '{}': {}", shown(""),
                        errno_text(errno));
    ++changed;
  }
  return changed;
}

Result<UniqueFd> ConfinedRoot::create_file(std::string_view relative, mode_t mode,
                                           const DirectoryOwner& owner) const {
  GL_TRY(auto parent, open_parent(fd_.get(), relative, *this));
  int raw = ::openat(parent.dir.get(), parent.leaf.c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0777);
  if (raw < 0)
    return fail_errno(errno, "Failed to create '{}': {}", shown(relative), errno_text(errno));
  UniqueFd file(raw);
  if (::fchmod(file.get(), mode & 0777) != 0)  // whatever the umask
    return fail_errno(errno, "Failed to set the mode of '{}': {}", shown(relative),
                      errno_text(errno));
  if (::fchown(file.get(), owner.uid, owner.gid) != 0)
    return fail_errno(errno, "Failed to set the owner of '{}': {}", shown(relative),
                      errno_text(errno));
  return file;
}

Result<ConfinedRoot::Sibling> ConfinedRoot::make_sibling(std::string_view relative,
                                                         std::string_view label) const {
  GL_TRY(auto parent, parent_of(fd_.get(), relative, *this));
  const std::filesystem::path directory = std::filesystem::path(shown(relative)).parent_path();
  GL_TRY(auto trash, make_trash(parent.dir.get(), std::string(label), directory.string()));
  return Sibling{trash.name, ConfinedRoot(directory / trash.name, std::move(trash.fd))};
}

Result<bool> ConfinedRoot::swap_in(std::string_view relative, const Sibling& sibling,
                                   const DirectoryOwner& owner) const {
  GL_TRY(auto parent, parent_of(fd_.get(), relative, *this));
  GL_TRY(const auto made, sibling.root.identity());
  GL_TRY(const auto there, stat_at(parent.dir.get(), sibling.name, sibling.root.shown("")));
  if (FileIdentity{there.st_dev, there.st_ino} != made)
    return failf("Refusing to use '{}': it was replaced after it was made", sibling.root.shown(""));
  struct stat info {};
  const bool exists =
      ::fstatat(parent.dir.get(), parent.leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0;
  if (!exists && errno != ENOENT)
    return fail_errno(errno, "Failed to stat '{}': {}", shown(relative), errno_text(errno));
  if (exists && !S_ISDIR(info.st_mode))
    return fail_errno(ENOTDIR, "Refusing to replace '{}': {}", shown(relative), kNotFollowed);
  if (exists && relative.empty()) {
    GL_TRY(const auto opened, identity());
    if (FileIdentity{info.st_dev, info.st_ino} != opened)
      return failf("Refusing to replace '{}': it is no longer the directory that was opened",
                   shown(""));
  }
  if (::fchmod(sibling.root.fd_.get(), 0755) != 0)
    return fail_errno(errno, "Failed to set the mode of '{}': {}", sibling.root.shown(""),
                      errno_text(errno));
  if (::fchown(sibling.root.fd_.get(), owner.uid, owner.gid) != 0)
    return fail_errno(errno, "Failed to set the owner of '{}': {}", sibling.root.shown(""),
                      errno_text(errno));
  // Everything below is on disk before the name points at it.
  GL_TRY_VOID(sync_directory(sibling.root.fd_.get(), sibling.root.shown("")));
  if (::renameat2(parent.dir.get(), sibling.name.c_str(), parent.dir.get(), parent.leaf.c_str(),
                  exists ? RENAME_EXCHANGE : RENAME_NOREPLACE) != 0)
    return failf("Failed to move '{}' to '{}': {}", sibling.root.shown(""), shown(relative),
                 errno_text(errno));
  GL_TRY_VOID(sync_directory(parent.dir.get(), shown(relative)));
  return exists;
}

Result<RemovedTree> ConfinedRoot::remove_beside(std::string_view relative,
                                                std::string_view name) const {
  if (!plain_leaf(name)) return failf("Refusing to remove '{}' beside '{}'", name, shown(relative));
  GL_TRY(auto parent, parent_of(fd_.get(), relative, *this));
  const std::string leaf(name);
  const std::string where = (std::filesystem::path(shown(relative)).parent_path() / leaf).string();
  struct stat parent_info {};
  if (::fstat(parent.dir.get(), &parent_info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", where, errno_text(errno));
  struct stat info {};
  if (::fstatat(parent.dir.get(), leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return RemovedTree{};
    return fail_errno(errno, "Failed to stat '{}': {}", where, errno_text(errno));
  }
  RemovedTree removed;
  GL_TRY_VOID(remove_at(parent.dir.get(), leaf, parent_info.st_dev, where, removed));
  return removed;
}

Result<MadeDirectory> make_cache_directory(const std::filesystem::path& path,
                                           const DirectoryOwner& owner) {
  GL_TRY_VOID(check_clearable(path));
  const std::filesystem::path normal(normal_text(path));
  struct stat info {};
  if (::lstat(normal.c_str(), &info) == 0) {
    GL_TRY(auto root, ConfinedRoot::open(normal));  // refuses a link or a file at `path`
    GL_TRY(auto identity, root.identity());
    return MadeDirectory{identity, false};
  }
  // The missing components, leaf last, below the deepest ancestor that exists.
  std::vector<std::string> missing{normal.filename().string()};
  std::filesystem::path existing = normal.parent_path();
  while (::lstat(existing.c_str(), &info) != 0) {
    if (errno != ENOENT)
      return fail_errno(errno, "Failed to stat '{}': {}", existing.string(), errno_text(errno));
    missing.insert(missing.begin(), existing.filename().string());
    existing = existing.parent_path();
  }
  UniqueFd current(::open(existing.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!current)
    return fail_errno(errno, "Failed to open '{}': {}", existing.string(), errno_text(errno));
  // Links above were followed: where the new directory will really be must pass the same check.
  std::error_code error;
  auto resolved =
      std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(current.get()), error);
  if (!error) {
    for (const auto& part : missing) resolved /= part;
    if (auto allowed = check_clearable(resolved); !allowed)
      return failf("{} (resolved from '{}')", allowed.error().message, normal.string());
  }
  std::filesystem::path reached = existing;
  for (size_t i = 0; i < missing.size(); ++i) {
    reached /= missing[i];
    const bool leaf = i + 1 == missing.size();
    bool created = false;
    GL_TRY(auto next, make_directory_at(current.get(), missing[i], leaf ? &owner : nullptr,
                                        reached.string(), created));
    current = std::move(next);
    if (leaf && !created)
      return failf("Refusing to use '{}': it appeared while it was being created",
                   reached.string());
  }
  if (::fstat(current.get(), &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", normal.string(), errno_text(errno));
  GL_TRY(auto birth, birth_of(current.get(), normal.string()));
  return MadeDirectory{{info.st_dev, info.st_ino}, true, birth};
}

}  // namespace gl
