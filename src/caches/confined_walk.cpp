// SPDX-License-Identifier: Apache-2.0
#include "caches/confined_walk.hpp"

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

#include "util/errno_text.hpp"
#include "util/try.hpp"

namespace gl::confined_walk {

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "/" + name;
}

Result<std::vector<std::string>> split_relative(std::string_view relative) {
  std::vector<std::string> parts;
  if (relative.empty()) return parts;
  if (relative.front() == '/')
    return failf("Refusing path '{}': it must be relative to the cache root", relative);
  size_t start = 0;
  for (;;) {
    size_t slash = relative.find('/', start);
    std::string_view part = relative.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..")
      return failf("Refusing path '{}': it could resolve outside the cache root", relative);
    parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

Result<UniqueFd> open_directory_at(int dir_fd, const std::string& name, const std::string& shown) {
  int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) return UniqueFd(fd);
  int error = errno;
  if (error == ELOOP || error == ENOTDIR)
    return fail_errno(error, "Failed to open '{}': {}", shown, kNotFollowed);
  return fail_errno(error, "Failed to open '{}': {}", shown, errno_text(error));
}

Result<std::vector<std::string>> list_names(int dir_fd, const std::string& shown) {
  int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail_errno(errno, "Failed to open '{}': {}", shown, errno_text(errno));
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    int error = errno;
    ::close(fd);
    return fail_errno(error, "Failed to list '{}': {}", shown, errno_text(error));
  }
  // Names first, changes after: POSIX leaves readdir unspecified while entries are removed.
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
    errno = 0;
  }
  int error = errno;
  ::closedir(dir);
  if (error != 0) return fail_errno(error, "Failed to list '{}': {}", shown, errno_text(error));
  return names;
}

Result<struct stat> stat_at(int dir_fd, const std::string& name, const std::string& shown) {
  struct stat info {};
  if (::fstatat(dir_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown, errno_text(errno));
  return info;
}

Result<void> check_same_mount(const struct stat& info, dev_t parent_device,
                              const std::string& shown) {
  if (info.st_dev != parent_device)
    return failf("Refusing to enter '{}': it is another filesystem mounted inside the cache",
                 shown);
  return {};
}

// Removes `name` in `dir_fd`: a file or symlink is unlinked, never followed; a directory is
// emptied through its own descriptor first. Iterative, so any depth is removed: one frame per
// level, and descriptors are kept only for the deepest kRemoveOpenLevels of them. A level whose
// descriptor was dropped is opened again from the nearest kept ancestor by name, no link
// followed, each step checked to be the directory that was entered (device and inode): a tree
// renamed while it is removed is refused, never followed elsewhere.
constexpr size_t kRemoveOpenLevels = 64;

Result<void> remove_at(int dir_fd, const std::string& name, dev_t parent_device,
                       const std::string& shown, RemovedTree& removed) {
  struct Frame {
    std::string name;
    FileIdentity identity;
    UniqueFd fd;
    std::vector<std::string> pending;
  };
  std::vector<Frame> frames;
  size_t open_count = 0;
  // shown for the entry `leaf` in frame `depth` (depth -1: the tree itself); built only for a
  // message, as a deep tree's paths would be quadratic to keep.
  const auto shown_at = [&](size_t levels) {
    std::string text = shown;
    for (size_t i = 1; i < levels && i < frames.size(); ++i) text += "/" + frames[i].name;
    return text;
  };
  const auto fd_of = [&](size_t level) { return level == 0 ? dir_fd : frames[level - 1].fd.get(); };
  const auto trim = [&] {
    for (size_t i = 0; open_count > kRemoveOpenLevels && i < frames.size(); ++i)
      if (frames[i].fd.get() >= 0) {
        frames[i].fd = UniqueFd();
        --open_count;
      }
  };
  const auto open_checked = [&](int parent, Frame& frame, size_t level) -> Result<void> {
    GL_TRY(auto fd, open_directory_at(parent, frame.name, shown_at(level + 1)));
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0)
      return fail_errno(errno, "Failed to stat '{}': {}", shown_at(level + 1), errno_text(errno));
    if (FileIdentity{info.st_dev, info.st_ino} != frame.identity)
      return failf("Failed to remove '{}': it was moved while it was removed", shown_at(level + 1));
    frame.fd = std::move(fd);
    ++open_count;
    return {};
  };
  // Makes frames[level - 1] (the directory at that level) open again.
  const auto reopen = [&](size_t level) -> Result<void> {
    size_t kept = level - 1;
    while (kept > 0 && frames[kept - 1].fd.get() < 0) --kept;
    for (size_t i = kept; i < level; ++i) {
      GL_TRY_VOID(open_checked(fd_of(i), frames[i], i));
      // Only the deepest levels stay open; the walk holds two descriptors above them.
      if (i > kept && level - i > kRemoveOpenLevels) {
        frames[i - 1].fd = UniqueFd();
        --open_count;
      }
    }
    trim();
    return {};
  };
  const auto enter = [&](int parent, const std::string& child, const struct stat& info,
                         size_t level) -> Result<void> {
    frames.push_back({child, {info.st_dev, info.st_ino}, UniqueFd(), {}});
    GL_TRY_VOID(open_checked(parent, frames.back(), level));
    GL_TRY(frames.back().pending, list_names(frames.back().fd.get(), shown_at(level + 1)));
    trim();
    return {};
  };
  const auto take = [&](int parent, const std::string& child, size_t level,
                        dev_t device) -> Result<void> {
    const std::string child_shown = level == 0 ? shown : shown_at(level) + "/" + child;
    GL_TRY(auto info, stat_at(parent, child, child_shown));
    if (S_ISDIR(info.st_mode)) {
      GL_TRY_VOID(check_same_mount(info, device, child_shown));
      return enter(parent, child, info, level);
    }
    if (::unlinkat(parent, child.c_str(), 0) != 0)
      return fail_errno(errno, "Failed to remove '{}': {}", child_shown, errno_text(errno));
    removed.bytes += static_cast<std::uint64_t>(info.st_size);
    ++removed.entries;
    return {};
  };
  GL_TRY_VOID(take(dir_fd, name, 0, parent_device));
  while (!frames.empty()) {
    const size_t level = frames.size();
    if (frames.back().fd.get() < 0) GL_TRY_VOID(reopen(level));
    Frame& top = frames.back();
    if (!top.pending.empty()) {
      const std::string child = std::move(top.pending.back());
      top.pending.pop_back();
      GL_TRY_VOID(take(top.fd.get(), child, level, top.identity.device));
      continue;
    }
    const std::string leaf = top.name;
    const std::string top_shown = shown_at(level);
    top.fd = UniqueFd();
    --open_count;
    frames.pop_back();
    if (level > 1 && frames.back().fd.get() < 0) GL_TRY_VOID(reopen(level - 1));
    if (::unlinkat(fd_of(level - 1), leaf.c_str(), AT_REMOVEDIR) != 0)
      return fail_errno(errno, "Failed to remove '{}': {}", top_shown, errno_text(errno));
    ++removed.entries;
  }
  return {};
}

Result<void> add_usage(int dir_fd, const std::string& shown, dev_t device, int depth,
                       std::uint64_t max_entries, TreeUsage& usage) {
  if (depth >= kMaxDepth)
    return failf("Failed to measure '{}': nested deeper than {} directories", shown, kMaxDepth);
  GL_TRY(auto names, list_names(dir_fd, shown));
  for (const auto& name : names) {
    if (usage.entries >= max_entries) {
      usage.truncated = true;
      return {};
    }
    auto info = stat_at(dir_fd, name, shown + "/" + name);
    if (!info) {
      if (info.error().errno_value == ENOENT) continue;  // gone meanwhile
      return std::unexpected(info.error());
    }
    ++usage.entries;
    if (!S_ISDIR(info->st_mode)) {
      usage.bytes += static_cast<std::uint64_t>(info->st_size);
    } else if (info->st_dev == device) {  // another mount is not the cache's to count
      GL_TRY(auto child, open_directory_at(dir_fd, name, shown + "/" + name));
      GL_TRY_VOID(
          add_usage(child.get(), shown + "/" + name, device, depth + 1, max_entries, usage));
    }
  }
  return {};
}

Result<void> visit_files(int dir_fd, const std::string& relative, const std::string& shown,
                         dev_t device, int depth,
                         const std::function<void(const std::string&)>& visit) {
  if (depth >= kMaxDepth) return {};
  GL_TRY(auto names, list_names(dir_fd, shown));
  for (const auto& name : names) {
    struct stat info {};
    if (::fstatat(dir_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(info.st_mode)) {
      visit(join(relative, name));
    } else if (S_ISDIR(info.st_mode) && info.st_dev == device && !name.starts_with(kTrashPrefix)) {
      auto child = open_directory_at(dir_fd, name, shown + "/" + name);
      if (!child) continue;  // replaced by a symlink meanwhile: not ours to look into
      GL_TRY_VOID(visit_files(child->get(), join(relative, name), shown + "/" + name, device,
                              depth + 1, visit));
    }
  }
  return {};
}

std::string random_suffix() {
  static std::mt19937_64 generator{std::random_device{}()};
  return fmt::format("{:012x}", generator() & 0xffffffffffffULL);
}

Result<Trash> make_trash(int dir_fd, const std::string& label, const std::string& shown) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = std::string(kTrashPrefix) + label + "-" + random_suffix();
    if (::mkdirat(dir_fd, name.c_str(), 0700) != 0) {
      if (errno == EEXIST) continue;
      return fail_errno(errno, "Failed to create '{}/{}': {}", shown, name, errno_text(errno));
    }
    GL_TRY(auto fd, open_directory_at(dir_fd, name, shown + "/" + name));
    return Trash{name, std::move(fd)};
  }
  return failf("Failed to create a trash directory in '{}': names exhausted", shown);
}

Result<void> sync_directory(int fd, const std::string& shown) {
  if (::fsync(fd) != 0)
    return fail_errno(errno, "Failed to sync '{}': {}", shown, errno_text(errno));
  return {};
}

std::string normal_text(const std::filesystem::path& path) {
  std::string text = path.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

// Opens the first `count` directories of `parts` below `root_fd`, none of them followed.
Result<UniqueFd> open_parts(int root_fd, const std::vector<std::string>& parts, size_t count,
                            const ConfinedRoot& root) {
  int fd = ::openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return fail_errno(errno, "Failed to open '{}': {}", root.shown(""), errno_text(errno));
  UniqueFd current(fd);
  std::string relative;
  for (size_t i = 0; i < count; ++i) {
    relative = join(relative, parts[i]);
    GL_TRY(auto next, open_directory_at(current.get(), parts[i], root.shown(relative)));
    current = std::move(next);
  }
  return current;
}

Result<Parent> open_parent(int root_fd, std::string_view relative, const ConfinedRoot& root) {
  GL_TRY(auto parts, split_relative(relative));
  if (parts.empty()) return failf("Refusing to remove the cache root '{}' itself", root.shown(""));
  GL_TRY(auto dir, open_parts(root_fd, parts, parts.size() - 1, root));
  return Parent{std::move(dir), parts.back()};
}

bool missing(const Error& error) {
  return error.errno_value == ENOENT;
}

// Missing, or a link or file where a directory was expected: nothing below it to look at.
bool nothing_below(const Error& error) {
  return missing(error) || error.errno_value == ELOOP || error.errno_value == ENOTDIR;
}

// A single name in a directory: no '/', not "." or "..", not empty.
bool plain_leaf(std::string_view leaf) {
  return !leaf.empty() && leaf != "." && leaf != ".." && leaf.find('/') == std::string_view::npos;
}

// The parent of `relative` below the root, or (for "") the root's own parent as the
// administrator laid it out, with the leaf to act on there.
Result<Parent> parent_of(int root_fd, std::string_view relative, const ConfinedRoot& root) {
  if (!relative.empty()) return open_parent(root_fd, relative, root);
  const std::filesystem::path parent = root.path().parent_path();
  int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return fail_errno(errno, "Failed to open '{}': {}", parent.string(), errno_text(errno));
  return Parent{UniqueFd(fd), root.path().filename().string()};
}

Result<BirthTime> birth_of(int fd, const std::string& shown) {
  struct statx info {};
  if (::statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_BTIME, &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown, errno_text(errno));
  if ((info.stx_mask & STATX_BTIME) == 0) return BirthTime{0};
  return static_cast<BirthTime>(info.stx_btime.tv_sec) * 1'000'000'000LL +
         static_cast<BirthTime>(info.stx_btime.tv_nsec);
}

// Creates `name` in `parent_fd` unless it is there, and enters it without following a link.
// What this process created must still be the directory it made (owned by it) when entered;
// then it goes to `owner` (none: it stays this process's).
Result<UniqueFd> make_directory_at(int parent_fd, const std::string& name,
                                   const DirectoryOwner* owner, const std::string& shown,
                                   bool& created) {
  constexpr mode_t kMode = 0755;
  created = ::mkdirat(parent_fd, name.c_str(), kMode) == 0;
  if (!created && errno != EEXIST)
    return fail_errno(errno, "Failed to create '{}': {}", shown, errno_text(errno));
  auto dir = open_directory_at(parent_fd, name, shown);
  if (!dir || !created) return dir;
  struct stat info {};
  if (::fstat(dir->get(), &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown, errno_text(errno));
  if (info.st_uid != ::geteuid())
    return failf("Refusing to use '{}': it was replaced while it was being created", shown);
  if (::fchmod(dir->get(), kMode) != 0)  // whatever the umask
    return fail_errno(errno, "Failed to set the mode of '{}': {}", shown, errno_text(errno));
  if (owner && (owner->uid != info.st_uid || owner->gid != info.st_gid) &&
      ::fchown(dir->get(), owner->uid, owner->gid) != 0)
    return fail_errno(errno, "Failed to set the owner of '{}': {}", shown, errno_text(errno));
  return dir;
}

// Changes `name` in `dir_fd` (a directory: its entries first) from `from` to `to`. Each entry is
// opened once without following a link (O_PATH|O_NOFOLLOW: a symlink is the link itself) and
// judged and changed through that descriptor, so a name swapped after the look (by another
// engine under the same uid) cannot redirect the change.
Result<void> change_owner_at(int dir_fd, const std::string& name, uid_t from,
                             const DirectoryOwner& to, dev_t device, int depth,
                             const std::string& shown, std::uint64_t& changed) {
  int raw = ::openat(dir_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (raw < 0) {
    if (errno == ENOENT) return {};  // gone since the listing
    return fail_errno(errno, "Failed to open '{}': {}", shown, errno_text(errno));
  }
  UniqueFd entry(raw);
  struct stat info {};
  if (::fstat(entry.get(), &info) != 0)
    return fail_errno(errno, "Failed to stat '{}': {}", shown, errno_text(errno));
  if (info.st_dev != device) return {};  // another filesystem: not ours to walk or change
  if (S_ISDIR(info.st_mode)) {
    if (depth >= kMaxDepth)
      return failf("Failed to change the owner of '{}': nested deeper than {} directories", shown,
                   kMaxDepth);
    GL_TRY(auto dir, open_directory_at(dir_fd, name, shown));
    struct stat opened {};
    if (::fstat(dir.get(), &opened) != 0 || opened.st_ino != info.st_ino ||
        opened.st_dev != info.st_dev)
      return failf("Failed to change the owner of '{}': it was replaced while it was read", shown);
    GL_TRY(auto names, list_names(dir.get(), shown));
    for (const auto& child : names)
      GL_TRY_VOID(change_owner_at(dir.get(), child, from, to, device, depth + 1,
                                  shown + "/" + child, changed));
  } else if (info.st_nlink > 1) {
    // A second name of a file elsewhere (a hard link the engine made) stays: changing it would
    // hand that other file, maybe another profile's under a shared user, to this one.
    return {};
  }
  if (info.st_uid != from) return {};
  if (::fchownat(entry.get(), "", to.uid, to.gid, AT_EMPTY_PATH) != 0)
    return fail_errno(errno, "Failed to change the owner of '{}': {}", shown, errno_text(errno));
  ++changed;
  return {};
}

}  // namespace gl::confined_walk
