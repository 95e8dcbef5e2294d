// SPDX-License-Identifier: Apache-2.0
#pragma once
// Lock files a killed JIT build or download leaves behind (FlashInfer's cached_ops/tmp/*.lock,
// and the <file>.lock beside each cubin it downloads) make the next start wait. One is stale when
// no process holds a lock on it.

#include <string>
#include <string_view>
#include <vector>

#include "caches/safe_remove.hpp"
#include "util/error.hpp"

namespace gl {

// Whether some open file description holds a lock on the file `fd` refers to: an flock(2) lock
// (Python's filelock, which FlashInfer uses) or a POSIX/OFD record lock (fcntl).
Result<bool> lock_is_held(int fd);

struct LockSweep {
  std::vector<std::string> removed;  // relative to the root
  std::vector<std::string> held;     // kept: a live process holds them
};

// Removes the `*.lock` files no process holds in every directory below `cache` (relative to
// the root) whose path ends with `lock_directory` ("cached_ops/tmp"), or in any directory below
// it for kLocksAnywhere (catalog/jit_caches).
Result<LockSweep> remove_stale_locks(const ConfinedRoot& root, std::string_view cache,
                                     std::string_view lock_directory);

}  // namespace gl
