// SPDX-License-Identifier: Apache-2.0
#pragma once
// Removal confined to one directory. The root is opened once, refusing a symlink and the
// directories no cache may be (/, homes, system directories); everything after works from its
// descriptor, one component at a time, never following a symlink or crossing a mount, so no
// removal can reach outside it whatever the tree below contains.

#include <sys/types.h>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"
#include "util/safe_file.hpp"

namespace gl {

// Refuses what system_directory_reason names (/, homes, /usr, /etc, /var/lib, ...) and the
// caller's own home; `path` must be absolute.
Result<void> check_clearable(const std::filesystem::path& path);

inline constexpr std::string_view kTrashPrefix = ".trash-";

struct TreeUsage {
  bool exists = false;
  bool is_directory = false;  // false for a missing path, a file or a symlink
  std::uint64_t bytes = 0;    // apparent size of everything below, symlinks not followed
  std::uint64_t entries = 0;  // files, symlinks and directories below
  bool truncated = false;     // the walk stopped at its entry bound: bytes and entries are partial
};

struct RemovedTree {
  std::uint64_t bytes = 0;
  std::uint64_t entries = 0;
};

struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

// Who a directory gpulaunch creates for the engine belongs to.
struct DirectoryOwner {
  uid_t uid = 0;
  gid_t gid = 0;
};

// When a directory was made, in nanoseconds since the epoch (statx's STATX_BTIME): tells a
// directory from a later one that got its inode number back. 0: the filesystem keeps none.
using BirthTime = long long;

struct MadeDirectory {
  FileIdentity identity;
  bool created = false;  // false: it was there already, and was left as it was
  BirthTime birth = 0;
};

// Creates the directory `path` (absolute) when it is missing, mode 0755, owned by `owner`; its
// missing parents are created root's (0755). The deepest existing ancestor is opened as the
// administrator laid it out (links followed, as ConfinedRoot::open does), everything below it
// is created and entered with no link followed, and the new directory is checked to be the one
// this process made before it is handed to `owner`. `path` and the directory it resolves to
// must pass check_clearable.
Result<MadeDirectory> make_cache_directory(const std::filesystem::path& path,
                                           const DirectoryOwner& owner);

// The room left on a filesystem (statvfs): bytes and inodes an unprivileged writer may still
// take, and its size. inodes_total is 0 where the filesystem does not count them (btrfs).
struct FreeSpace {
  std::uint64_t bytes_free = 0;
  std::uint64_t bytes_total = 0;
  std::uint64_t inodes_free = 0;
  std::uint64_t inodes_total = 0;
};

class ConfinedRoot {
 public:
  // Ancestors may be symlinks (they are the administrator's layout); the root itself may not,
  // and both the path as written and the directory it resolves to must pass check_clearable.
  static Result<ConfinedRoot> open(const std::filesystem::path& root);
  // One of gpulaunch's own directories (state_paths: /var/lib/gpulaunch/NAME,
  // /run/gpulaunch/NAME), which check_clearable refuses as a system tree: opened the same way
  // (the root itself never a link), without that check. Never for a path a profile names.
  static Result<ConfinedRoot> open_own(const std::filesystem::path& root);

  const std::filesystem::path& path() const { return path_; }
  // The device and inode of the directory that was opened.
  Result<FileIdentity> identity() const;
  // Its birth time; 0 where the filesystem keeps none.
  Result<BirthTime> birth() const;
  // The room left on the root's filesystem (fstatvfs of the open root).
  Result<FreeSpace> free_space() const;
  std::string shown(std::string_view relative) const;  // for messages: root/relative

  // `relative` is below the root: no "..", ".", empty components or leading '/'; "" is the root.
  // At most `max_entries` entries are looked at (a bounded walk, for `run`'s growth checks).
  Result<TreeUsage> usage(std::string_view relative, std::uint64_t max_entries = UINT64_MAX) const;

  // Replaces the directory at `relative` with an empty one of the same mode and owner: renamed
  // into a fresh `.trash-*` directory at the root in one step (so the cache is either whole or
  // empty), then deleted. Falls back to deleting in place when the rename crosses a mount.
  Result<RemovedTree> clear_directory(std::string_view relative) const;

  // Empties `relative` ("" for the root) but keeps it: entries are moved into a `.trash-*`
  // directory inside it, then deleted. Used when a cache directory is its own root.
  Result<RemovedTree> clear_contents(std::string_view relative) const;

  // `.trash-*` entries directly in `relative`: leftovers of an interrupted clear. None when
  // `relative` is missing, a link or a file.
  Result<std::vector<std::string>> trash_in(std::string_view relative) const;

  // Deletes the file, symlink or tree at `relative`, confined as above. Missing is not an error.
  Result<RemovedTree> remove(std::string_view relative) const;

  // Unlinks the file at `relative` only if it is still `expected`, so a file swapped in since it
  // was examined stays.
  Result<bool> remove_file_if_same(std::string_view relative, const FileIdentity& expected) const;

  // Calls `visit` with the relative path of every regular file below `relative`, in no set
  // order; symlinks, other mounts and `.trash-*` are skipped, and so is a `relative` that is
  // missing, a link or a file.
  Result<void> for_each_file(std::string_view relative,
                             const std::function<void(const std::string&)>& visit) const;

  // Opens a regular file read-only without following a symlink anywhere below the root.
  Result<UniqueFd> open_file(std::string_view relative, FileIdentity* identity = nullptr) const;

  // Whether anything (a link included, not followed) is at `relative`; cheap, unlike usage().
  Result<bool> exists(std::string_view relative) const;

  // Creates the missing directories of `relative` (mode 0755, owned by `owner`), none followed.
  // Something other than a directory on the way is refused.
  Result<void> make_directories(std::string_view relative, const DirectoryOwner& owner) const;

  // The root directory's owner.
  Result<DirectoryOwner> owner() const;

  // Hands everything at and below the root that `from` owns to `to` (uid and gid; a link itself,
  // never its target): what an engine made as the profile's previous user. Entries of any
  // other owner stay as they are, and so do files with more than one name (a hard link could
  // name a file outside); another filesystem mounted inside is not entered. Returns the number
  // of entries changed.
  Result<std::uint64_t> change_owner(uid_t from, const DirectoryOwner& to) const;

  // Renames the directory at `relative` to `new_leaf` in the same parent, in one rename that
  // replaces nothing, and makes it durable: a poisoned cache kept for inspection. "" moves the
  // root itself within its parent (a cache directory that is its own root), only while the name
  // still holds the directory this root opened. No link is followed; anything but a directory on
  // the same filesystem is refused. Returns the new path.
  Result<std::filesystem::path> move_aside(std::string_view relative,
                                           std::string_view new_leaf) const;

  // The names beside `relative` (in its parent directory; for "" the root's parent) that start
  // with `prefix`, as paths. None when the parent is missing.
  Result<std::vector<std::filesystem::path>> names_beside(std::string_view relative,
                                                          std::string_view prefix) const;

  // Makes the renames and unlinks done so far in the root durable.
  Result<void> sync() const;

  // Creates the regular file `relative` (its parent must exist; nothing on the way followed),
  // failing if anything is there already, with `mode` whatever the umask, owned by `owner`.
  // Returns it open for writing.
  Result<UniqueFd> create_file(std::string_view relative, mode_t mode,
                               const DirectoryOwner& owner) const;

  // A new, empty directory beside `relative` (in its parent, or for "" in the root's own parent
  // as the administrator laid it out), mode 0700 and this process's, so nobody else can enter
  // it while it is filled; named `.trash-LABEL-RANDOM`, so one left by a run cut short is swept
  // like a clear's leftovers. Its `root` confines everything done inside it.
  struct Sibling;
  Result<Sibling> make_sibling(std::string_view relative, std::string_view label) const;

  // Hands `sibling` to `owner` with mode 0755 (as make_cache_directory makes a cache) and puts it
  // at `relative` in one rename: exchanged with the directory there, which then sits at the
  // sibling's name, or moved there when nothing is. Refuses a link or anything but a directory at
  // `relative` (never written through), a sibling name that no longer holds the directory that
  // was made, and (for "") a root name that no longer holds the directory this root opened.
  // Returns whether something was exchanged (and now waits at the sibling's name).
  Result<bool> swap_in(std::string_view relative, const Sibling& sibling,
                       const DirectoryOwner& owner) const;

  // Deletes the tree at `name` beside `relative` (what swap_in left there), confined as remove().
  Result<RemovedTree> remove_beside(std::string_view relative, std::string_view name) const;

 private:
  static Result<ConfinedRoot> open_checked(const std::filesystem::path& root, bool clearable_only);
  ConfinedRoot(std::filesystem::path path, UniqueFd fd)
      : path_(std::move(path)), fd_(std::move(fd)) {}
  std::filesystem::path path_;
  UniqueFd fd_;
};

struct ConfinedRoot::Sibling {
  std::string name;   // in the parent of the directory it is beside
  ConfinedRoot root;  // the sibling itself
};

}  // namespace gl
