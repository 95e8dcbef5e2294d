// SPDX-License-Identifier: Apache-2.0
#include "caches/stale_locks.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <cerrno>
#include <cstring>

#include "catalog/jit_caches.hpp"
#include "util/errno_text.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

bool in_lock_directory(const std::string& relative, std::string_view lock_directory) {
  if (lock_directory == kLocksAnywhere) return true;
  auto slash = relative.rfind('/');
  if (slash == std::string::npos) return false;
  std::string_view directory(relative.data(), slash);
  return directory == lock_directory ||
         (directory.ends_with(lock_directory) &&
          directory[directory.size() - lock_directory.size() - 1] == '/');
}

}  // namespace

Result<bool> lock_is_held(int fd) {
  // flock locks belong to open file descriptions, so this fresh one conflicts with any holder,
  // in this process or another. Held by us, it also keeps a new flock user out while we decide.
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return true;
    return failf("Failed to test the lock: {}", errno_text(errno));
  }
  // Record locks do not see flock locks on Linux; ask about them separately. F_OFD_GETLK reports
  // a conflicting classic POSIX lock too, whoever holds it.
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  probe.l_start = 0;
  probe.l_len = 0;
  if (::fcntl(fd, F_OFD_GETLK, &probe) != 0)
    return failf("Failed to test the record lock: {}", errno_text(errno));
  return probe.l_type != F_UNLCK;
}

Result<LockSweep> remove_stale_locks(const ConfinedRoot& root, std::string_view cache,
                                     std::string_view lock_directory) {
  LockSweep sweep;
  if (lock_directory.empty()) return sweep;
  std::vector<std::string> candidates;
  GL_TRY_VOID(root.for_each_file(cache, [&](const std::string& relative) {
    if (relative.ends_with(".lock") && in_lock_directory(relative, lock_directory))
      candidates.push_back(relative);
  }));
  for (const auto& relative : candidates) {
    FileIdentity identity;
    auto file = root.open_file(relative, &identity);
    if (!file) continue;  // gone or replaced since the walk: nothing stale to remove
    auto held = lock_is_held(file->get());
    if (!held)
      return failf("Failed to test the lock on '{}': {}", root.shown(relative),
                   held.error().message);
    if (*held) {
      sweep.held.push_back(relative);
      continue;
    }
    // Unlinked while our flock is held, so no flock user can have taken it in between.
    GL_TRY(auto removed, root.remove_file_if_same(relative, identity));
    if (removed) sweep.removed.push_back(relative);
  }
  return sweep;
}

}  // namespace gl
