// SPDX-License-Identifier: Apache-2.0
#pragma once
// Files root opens where a non-root user may have a hand: never through a link, never a FIFO or
// device (which could block or feed endless data), never more than a bound, and always from a
// directory fd that was itself reached without following a link. See SECURITY.md.

#include <sys/types.h>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace gl {

// Writes all of `content` to `fd` (retrying short writes); the error names `shown`.
Result<void> write_all(int fd, std::string_view content, const std::string& shown);

// Whether anything (a link included) is at `path`, its last component not followed.
bool exists_no_follow(const std::filesystem::path& path);

// Opens an absolute directory one component at a time from "/", each with
// O_NOFOLLOW|O_DIRECTORY: a symlink anywhere on the way is refused, not followed.
Result<UniqueFd> open_directory_nofollow(const std::filesystem::path& directory);

// Like open_directory_nofollow, creating missing components (mode `mode` whatever the umask,
// owned by the caller)
// and refusing any component on the way that a non-root user could write (see
// user_writable_reason): for directories root keeps its own state in.
Result<UniqueFd> open_root_owned_directory(const std::filesystem::path& directory,
                                           mode_t mode = 0755);

// The same for an ordinary user's own state (`run --foreground`'s state directory): the parents
// may be root's or `owner`'s and writable by no one else (a sticky one, /tmp, excepted); the
// directory itself must be `owner`'s and writable by no one else. Missing components are created
// with `mode` (0700: the XDG base directory rule).
Result<UniqueFd> open_user_owned_directory(const std::filesystem::path& directory, uid_t owner,
                                           mode_t mode = 0700);

// What read_regular_at found.
struct FileRead {
  std::string content;
  uid_t owner = 0;
  mode_t mode = 0;
};

// Reads `name` inside `directory_fd`: openat with O_NOFOLLOW|O_NONBLOCK, then fstat must say a
// regular file of at most `max_bytes`. nullopt when there is no such entry; an error names
// `shown` (the path as the user knows it) and what it is instead ("is a symbolic link", "is a
// FIFO", "is N bytes, over the limit").
Result<std::optional<FileRead>> read_regular_at(int directory_fd, std::string_view name,
                                                size_t max_bytes, const std::string& shown);

// As read_regular_at, opened and refused alike, but only the first `head_bytes` are read, of a
// file of any size (a header whose version line sits near its top).
Result<std::optional<FileRead>> read_regular_head_at(int directory_fd, std::string_view name,
                                                     size_t head_bytes, const std::string& shown);

// read_regular_at on the parent reached by open_directory_nofollow.
Result<std::optional<FileRead>> read_regular_nofollow(const std::filesystem::path& path,
                                                      size_t max_bytes);

// Replaces `name` in `directory_fd` whole: a fresh temporary (O_CREAT|O_EXCL|O_NOFOLLOW),
// write, fsync, renameat over `name`, fsync the directory. Whatever `name` was (a link, a
// FIFO) is replaced, never written through.
Result<void> write_atomically_at(int directory_fd, std::string_view name, std::string_view content,
                                 mode_t mode, const std::string& shown);

// The same for a file that must not exist yet: renameat2(RENAME_NOREPLACE), so whatever is at
// `name` (a file, a link planted meanwhile) stays and the write is refused.
Result<void> create_atomically_at(int directory_fd, std::string_view name, std::string_view content,
                                  mode_t mode, const std::string& shown);

// Appends `line` (one write(2), so concurrent appenders never interleave within it) to the
// regular file `name` in `directory_fd`, creating it with `mode` (set whatever the umask). A link,
// a non-regular file or a file with other hard links is refused.
Result<void> append_at(int directory_fd, std::string_view name, std::string_view line, mode_t mode,
                       const std::string& shown);

// Removes the entry `name` in `directory_fd` (not a directory; a link is removed, never followed).
// A missing entry is not an error.
Result<void> remove_regular_at(int directory_fd, std::string_view name,
                               const std::filesystem::path& shown);

// sudo's and sshd's StrictModes rule: a path is user-writable when it, or any directory above
// it, is owned by a non-root user or is group- or world-writable. A sticky world-writable
// directory (/tmp) does not taint the root-owned entries inside it. Links are judged as links
// (their target too, by resolving). nullopt when only root can change it; otherwise a reason
// naming the path, its owner and its mode, e.g. "'/home/u/venv' is owned by uid 1000 (mode
// 0755)". A path that does not exist is judged by its existing ancestors.
std::optional<std::string> user_writable_reason(const std::filesystem::path& path);

// Why a non-root user could make the absolute `path` name something else before root uses it by
// name (a bind mount's source, which root's podman resolves at every start): a symbolic link on
// the way or at the end (root would follow it), or an entry on the way in a directory a non-root
// user can write, which could replace it with a link: one owned by a non-root uid, group- or
// world-writable, or sticky and holding an entry a non-root uid owns. Walked from "/" one
// component at a time with O_PATH|O_NOFOLLOW, each judged on the fd it opened; what the path
// itself holds is not judged (a model may be a user's). nullopt when only root can; a missing
// path is judged as far as it exists. The reason names the path and who could, e.g. "'/home/u'
// is owned by uid 1000 (mode 0755), who can replace '/home/u/models'". Under `root` (a node's
// image, `--root`), `path` is the node's and judged below `root`, whose own parents are not.
std::optional<std::string> replaceable_reason(const std::filesystem::path& path,
                                              const std::filesystem::path& root = "/");

}  // namespace gl
