// SPDX-License-Identifier: Apache-2.0
#pragma once
// The descriptor-relative steps ConfinedRoot (caches/safe_remove) is built from: names split and
// checked, directories opened and listed without following a link or leaving the mount, trees
// measured, visited and removed, trash directories, ownership handed over entry by entry. Only
// safe_remove.cpp and confined_create.cpp include it; everyone else uses ConfinedRoot.

#include <sys/stat.h>
#include <sys/types.h>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "caches/safe_remove.hpp"
#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace gl::confined_walk {

// Measuring, digesting and handing over a tree stop this deep (one descriptor a level);
// removal has no depth bound (remove_at).
inline constexpr int kMaxDepth = 256;

inline constexpr std::string_view kNotFollowed =
    "it is a symbolic link or not a directory; not followed";

std::string join(const std::string& prefix, const std::string& name);
// "a/b/c" as its components; '..', '.', empty and absolute paths refused.
Result<std::vector<std::string>> split_relative(std::string_view relative);
// A path as compared with homes and system directories: normal, without a trailing '/'.
std::string normal_text(const std::filesystem::path& path);

Result<UniqueFd> open_directory_at(int dir_fd, const std::string& name, const std::string& shown);
Result<std::vector<std::string>> list_names(int dir_fd, const std::string& shown);
Result<struct stat> stat_at(int dir_fd, const std::string& name, const std::string& shown);
Result<void> check_same_mount(const struct stat& info, dev_t parent_device,
                              const std::string& shown);
Result<void> sync_directory(int fd, const std::string& shown);
Result<BirthTime> birth_of(int fd, const std::string& shown);

// Removes `name` in `dir_fd`, any depth, never following a link or crossing a mount.
Result<void> remove_at(int dir_fd, const std::string& name, dev_t parent_device,
                       const std::string& shown, RemovedTree& removed);
Result<void> add_usage(int dir_fd, const std::string& shown, dev_t device, int depth,
                       std::uint64_t max_entries, TreeUsage& usage);
Result<void> visit_files(int dir_fd, const std::string& relative, const std::string& shown,
                         dev_t device, int depth,
                         const std::function<void(const std::string&)>& visit);

// A fresh .trash-LABEL-RANDOM directory in `dir_fd`, entered.
struct Trash {
  std::string name;
  UniqueFd fd;
};
Result<Trash> make_trash(int dir_fd, const std::string& label, const std::string& shown);

// The directory holding a relative path's last component, and that component.
struct Parent {
  UniqueFd dir;
  std::string leaf;
};
Result<UniqueFd> open_parts(int root_fd, const std::vector<std::string>& parts, size_t count,
                            const ConfinedRoot& root);
Result<Parent> open_parent(int root_fd, std::string_view relative, const ConfinedRoot& root);
// The parent of `relative` below the root, or (for "") the root's own parent.
Result<Parent> parent_of(int root_fd, std::string_view relative, const ConfinedRoot& root);
// A single name in a directory: no '/', not "." or "..", not empty.
bool plain_leaf(std::string_view leaf);

// The failure says the entry is missing (ENOENT)...
bool missing(const Error& error);
// ...or that there is nothing below it to look at (missing, a link or a file).
bool nothing_below(const Error& error);

Result<UniqueFd> make_directory_at(int parent_fd, const std::string& name,
                                   const DirectoryOwner* owner, const std::string& shown,
                                   bool& created);
Result<void> change_owner_at(int dir_fd, const std::string& name, uid_t from,
                             const DirectoryOwner& to, dev_t device, int depth,
                             const std::string& shown, std::uint64_t& changed);

}  // namespace gl::confined_walk
