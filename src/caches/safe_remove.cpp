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

#include "catalog/system_directories.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// Measuring, digesting and handing over a tree stop this deep (one descriptor a level);
// removal has no depth bound (remove_at).
constexpr int kMaxDepth = 256;

constexpr std::string_view kNotFollowed = "it is a symbolic link or not a directory; not followed";

std::string errno_text(int error) {
  return std::strerror(error);
}

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
    return failf("Failed to open '{}': {}", shown, kNotFollowed);
  return failf("Failed to open '{}': {}", shown, errno_text(error));
}

Result<std::vector<std::string>> list_names(int dir_fd, const std::string& shown) {
  int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return failf("Failed to open '{}': {}", shown, errno_text(errno));
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    int error = errno;
    ::close(fd);
    return failf("Failed to list '{}': {}", shown, errno_text(error));
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
  if (error != 0) return failf("Failed to list '{}': {}", shown, errno_text(error));
  return names;
}

Result<struct stat> stat_at(int dir_fd, const std::string& name, const std::string& shown) {
  struct stat info {};
  if (::fstatat(dir_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0)
    return failf("Failed to stat '{}': {}", shown, errno_text(errno));
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
      return failf("Failed to stat '{}': {}", shown_at(level + 1), errno_text(errno));
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
      return failf("Failed to remove '{}': {}", child_shown, errno_text(errno));
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
      return failf("Failed to remove '{}': {}", top_shown, errno_text(errno));
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
      if (info.error().message.ends_with(errno_text(ENOENT))) continue;  // gone meanwhile
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

struct Trash {
  std::string name;
  UniqueFd fd;
};

Result<Trash> make_trash(int dir_fd, const std::string& label, const std::string& shown) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = std::string(kTrashPrefix) + label + "-" + random_suffix();
    if (::mkdirat(dir_fd, name.c_str(), 0700) != 0) {
      if (errno == EEXIST) continue;
      return failf("Failed to create '{}/{}': {}", shown, name, errno_text(errno));
    }
    GL_TRY(auto fd, open_directory_at(dir_fd, name, shown + "/" + name));
    return Trash{name, std::move(fd)};
  }
  return failf("Failed to create a trash directory in '{}': names exhausted", shown);
}

Result<void> sync_directory(int fd, const std::string& shown) {
  if (::fsync(fd) != 0) return failf("Failed to sync '{}': {}", shown, errno_text(errno));
  return {};
}

std::string own_home() {
  std::array<char, 4096> buffer{};
  struct passwd entry {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found &&
      found->pw_dir)
    return found->pw_dir;
  return {};
}

std::string normal_text(const std::filesystem::path& path) {
  std::string text = path.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
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
  const std::filesystem::path normal(normal_text(root));
  const std::string shown = normal.string();
  int parent = ::open(normal.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return failf("Failed to open '{}': {}", shown, errno_text(errno));
  UniqueFd parent_fd(parent);
  const std::string leaf = normal.filename().string();
  struct stat info {};
  if (::fstatat(parent_fd.get(), leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0)
    return failf("Failed to open '{}': {}", shown, errno_text(errno));
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
  if (!error)
    if (auto allowed = check_clearable(resolved); !allowed)
      return failf("{} (resolved from '{}')", allowed.error().message, shown);
  return ConfinedRoot(normal, std::move(fd));
}

std::string ConfinedRoot::shown(std::string_view relative) const {
  return relative.empty() ? path_.string() : path_.string() + "/" + std::string(relative);
}

namespace {

struct Parent {
  UniqueFd dir;
  std::string leaf;
};

// Opens the first `count` directories of `parts` below `root_fd`, none of them followed.
Result<UniqueFd> open_parts(int root_fd, const std::vector<std::string>& parts, size_t count,
                            const ConfinedRoot& root) {
  int fd = ::openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return failf("Failed to open '{}': {}", root.shown(""), errno_text(errno));
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
  return error.message.ends_with(errno_text(ENOENT));
}

// Missing, or a link or file where a directory was expected: nothing below it to look at.
bool nothing_below(const Error& error) {
  return missing(error) || error.message.ends_with(kNotFollowed);
}

}  // namespace

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
      return failf("Failed to stat '{}': {}", shown(relative), errno_text(errno));
    }
    usage.exists = true;
    if (!S_ISDIR(info.st_mode)) return usage;
    GL_TRY(auto opened, open_directory_at(parent->dir.get(), parent->leaf, shown(relative)));
    dir = std::move(opened);
  }
  struct stat info {};
  if (::fstat(dir.get(), &info) != 0)
    return failf("Failed to stat '{}': {}", shown(relative), errno_text(errno));
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
    return failf("Failed to stat '{}': {}", shown(relative), errno_text(errno));
  }
  GL_TRY(auto trash, make_trash(fd_.get(), parent.leaf, shown("")));
  if (::renameat(parent.dir.get(), parent.leaf.c_str(), trash.fd.get(), parent.leaf.c_str()) != 0) {
    int error = errno;
    ::unlinkat(fd_.get(), trash.name.c_str(), AT_REMOVEDIR);
    if (error == EXDEV && S_ISDIR(info.st_mode)) return clear_contents(relative);
    return failf("Failed to move '{}' aside: {}", shown(relative), errno_text(error));
  }
  if (S_ISDIR(info.st_mode)) {
    // The engine may run as another user than this process: keep the directory it can write.
    if (::mkdirat(parent.dir.get(), parent.leaf.c_str(), 0700) != 0)
      return failf("Failed to recreate '{}': {}", shown(relative), errno_text(errno));
    GL_TRY(auto fresh, open_directory_at(parent.dir.get(), parent.leaf, shown(relative)));
    if (::fchown(fresh.get(), info.st_uid, info.st_gid) != 0 && errno != EPERM)
      return failf("Failed to set the owner of '{}': {}", shown(relative), errno_text(errno));
    if (::fchmod(fresh.get(), info.st_mode & 07777) != 0)
      return failf("Failed to set the mode of '{}': {}", shown(relative), errno_text(errno));
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
    return failf("Failed to stat '{}': {}", shown(relative), errno_text(errno));
  struct stat info {};
  if (::fstatat(parent->dir.get(), parent->leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return RemovedTree{};
    return failf("Failed to stat '{}': {}", shown(relative), errno_text(errno));
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
    return failf("Failed to stat '{}': {}", shown(relative), errno_text(errno));
  }
  if (!S_ISREG(info.st_mode) || info.st_dev != expected.device || info.st_ino != expected.inode)
    return false;
  if (::unlinkat(parent.dir.get(), parent.leaf.c_str(), 0) != 0) {
    if (errno == ENOENT) return false;
    return failf("Failed to remove '{}': {}", shown(relative), errno_text(errno));
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
    return failf("Failed to stat '{}': {}", shown(relative), errno_text(errno));
  return visit_files(dir->get(), std::string(relative), shown(relative), info.st_dev, 0, visit);
}

Result<UniqueFd> ConfinedRoot::open_file(std::string_view relative, FileIdentity* identity) const {
  GL_TRY(auto parent, open_parent(fd_.get(), relative, *this));
  int fd = ::openat(parent.dir.get(), parent.leaf.c_str(),
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return failf("Failed to open '{}': {}", shown(relative), errno_text(errno));
  UniqueFd file(fd);
  struct stat info {};
  if (::fstat(file.get(), &info) != 0)
    return failf("Failed to stat '{}': {}", shown(relative), errno_text(errno));
  if (!S_ISREG(info.st_mode))
    return failf("Failed to open '{}': not a regular file", shown(relative));
  if (identity) *identity = {info.st_dev, info.st_ino};
  return file;
}

Result<void> ConfinedRoot::sync() const {
  return sync_directory(fd_.get(), shown(""));
}

namespace {

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
  if (fd < 0) return failf("Failed to open '{}': {}", parent.string(), errno_text(errno));
  return Parent{UniqueFd(fd), root.path().filename().string()};
}

}  // namespace

Result<std::filesystem::path> ConfinedRoot::move_aside(std::string_view relative,
                                                       std::string_view new_leaf) const {
  if (!plain_leaf(new_leaf))
    return failf("Refusing to move '{}' to '{}'", shown(relative), new_leaf);
  GL_TRY(auto parent, parent_of(fd_.get(), relative, *this));
  GL_TRY(auto info, stat_at(parent.dir.get(), parent.leaf, shown(relative)));
  if (!S_ISDIR(info.st_mode))
    return failf("Refusing to move '{}' aside: {}", shown(relative), kNotFollowed);
  struct stat root_info {};
  if (::fstat(fd_.get(), &root_info) != 0)
    return failf("Failed to stat '{}': {}", shown(""), errno_text(errno));
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
    return failf("Failed to move '{}' aside: {}", shown(relative), errno_text(errno));
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

namespace {

Result<BirthTime> birth_of(int fd, const std::string& shown) {
  struct statx info {};
  if (::statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_BTIME, &info) != 0)
    return failf("Failed to stat '{}': {}", shown, errno_text(errno));
  if ((info.stx_mask & STATX_BTIME) == 0) return BirthTime{0};
  return static_cast<BirthTime>(info.stx_btime.tv_sec) * 1'000'000'000LL +
         static_cast<BirthTime>(info.stx_btime.tv_nsec);
}

}  // namespace

Result<BirthTime> ConfinedRoot::birth() const {
  return birth_of(fd_.get(), shown(""));
}

Result<FileIdentity> ConfinedRoot::identity() const {
  struct stat info {};
  if (::fstat(fd_.get(), &info) != 0)
    return failf("Failed to stat '{}': {}", shown(""), errno_text(errno));
  return FileIdentity{info.st_dev, info.st_ino};
}

namespace {

// Creates `name` in `parent_fd` unless it is there, and enters it without following a link.
// What this process created must still be the directory it made (owned by it) when entered;
// then it goes to `owner` (none: it stays this process's).
Result<UniqueFd> make_directory_at(int parent_fd, const std::string& name,
                                   const DirectoryOwner* owner, const std::string& shown,
                                   bool& created) {
  constexpr mode_t kMode = 0755;
  created = ::mkdirat(parent_fd, name.c_str(), kMode) == 0;
  if (!created && errno != EEXIST)
    return failf("Failed to create '{}': {}", shown, errno_text(errno));
  auto dir = open_directory_at(parent_fd, name, shown);
  if (!dir || !created) return dir;
  struct stat info {};
  if (::fstat(dir->get(), &info) != 0)
    return failf("Failed to stat '{}': {}", shown, errno_text(errno));
  if (info.st_uid != ::geteuid())
    return failf("Refusing to use '{}': it was replaced while it was being created", shown);
  if (::fchmod(dir->get(), kMode) != 0)  // whatever the umask
    return failf("Failed to set the mode of '{}': {}", shown, errno_text(errno));
  if (owner && (owner->uid != info.st_uid || owner->gid != info.st_gid) &&
      ::fchown(dir->get(), owner->uid, owner->gid) != 0)
    return failf("Failed to set the owner of '{}': {}", shown, errno_text(errno));
  return dir;
}

}  // namespace

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
  return failf("Failed to stat '{}': {}", shown(relative), errno_text(errno));
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

namespace {

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
    return failf("Failed to open '{}': {}", shown, errno_text(errno));
  }
  UniqueFd entry(raw);
  struct stat info {};
  if (::fstat(entry.get(), &info) != 0)
    return failf("Failed to stat '{}': {}", shown, errno_text(errno));
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
    return failf("Failed to change the owner of '{}': {}", shown, errno_text(errno));
  ++changed;
  return {};
}

}  // namespace

Result<DirectoryOwner> ConfinedRoot::owner() const {
  struct stat info {};
  if (::fstat(fd_.get(), &info) != 0)
    return failf("Failed to stat '{}': {}", shown(""), errno_text(errno));
  return DirectoryOwner{info.st_uid, info.st_gid};
}

Result<std::uint64_t> ConfinedRoot::change_owner(uid_t from, const DirectoryOwner& to) const {
  struct stat info {};
  if (::fstat(fd_.get(), &info) != 0)
    return failf("Failed to stat '{}': {}", shown(""), errno_text(errno));
  std::uint64_t changed = 0;
  GL_TRY(auto names, list_names(fd_.get(), shown("")));
  for (const auto& child : names)
    GL_TRY_VOID(change_owner_at(fd_.get(), child, from, to, info.st_dev, 1, shown(child), changed));
  if (info.st_uid == from) {
    if (::fchown(fd_.get(), to.uid, to.gid) != 0)
      return failf("Failed to change the owner of '{}': {}", shown(""), errno_text(errno));
    ++changed;
  }
  return changed;
}

Result<UniqueFd> ConfinedRoot::create_file(std::string_view relative, mode_t mode,
                                           const DirectoryOwner& owner) const {
  GL_TRY(auto parent, open_parent(fd_.get(), relative, *this));
  int raw = ::openat(parent.dir.get(), parent.leaf.c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0777);
  if (raw < 0) return failf("Failed to create '{}': {}", shown(relative), errno_text(errno));
  UniqueFd file(raw);
  if (::fchmod(file.get(), mode & 0777) != 0)  // whatever the umask
    return failf("Failed to set the mode of '{}': {}", shown(relative), errno_text(errno));
  if (::fchown(file.get(), owner.uid, owner.gid) != 0)
    return failf("Failed to set the owner of '{}': {}", shown(relative), errno_text(errno));
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
    return failf("Failed to stat '{}': {}", shown(relative), errno_text(errno));
  if (exists && !S_ISDIR(info.st_mode))
    return failf("Refusing to replace '{}': {}", shown(relative), kNotFollowed);
  if (exists && relative.empty()) {
    GL_TRY(const auto opened, identity());
    if (FileIdentity{info.st_dev, info.st_ino} != opened)
      return failf("Refusing to replace '{}': it is no longer the directory that was opened",
                   shown(""));
  }
  if (::fchmod(sibling.root.fd_.get(), 0755) != 0)
    return failf("Failed to set the mode of '{}': {}", sibling.root.shown(""), errno_text(errno));
  if (::fchown(sibling.root.fd_.get(), owner.uid, owner.gid) != 0)
    return failf("Failed to set the owner of '{}': {}", sibling.root.shown(""), errno_text(errno));
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
    return failf("Failed to stat '{}': {}", where, errno_text(errno));
  struct stat info {};
  if (::fstatat(parent.dir.get(), leaf.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return RemovedTree{};
    return failf("Failed to stat '{}': {}", where, errno_text(errno));
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
      return failf("Failed to stat '{}': {}", existing.string(), errno_text(errno));
    missing.insert(missing.begin(), existing.filename().string());
    existing = existing.parent_path();
  }
  UniqueFd current(::open(existing.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!current) return failf("Failed to open '{}': {}", existing.string(), errno_text(errno));
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
    return failf("Failed to stat '{}': {}", normal.string(), errno_text(errno));
  GL_TRY(auto birth, birth_of(current.get(), normal.string()));
  return MadeDirectory{{info.st_dev, info.st_ino}, true, birth};
}

}  // namespace gl
