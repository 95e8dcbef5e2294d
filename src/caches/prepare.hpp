// SPDX-License-Identifier: Apache-2.0
#pragma once
// What root does to the caches before each start (`gpulaunch prepare-caches`, the unit's
// ExecStartPre=+) and what `cache clear` does on demand: one code path, so both touch only what
// gpulaunch made. Library code: every removal is returned (and handed to `on_removal` as it
// happens, so a caller can log before a later step fails); nothing is printed.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "caches/fingerprint.hpp"
#include "caches/safe_remove.hpp"
#include "plan/launch_plan.hpp"
#include "util/error.hpp"

namespace gl {

struct Removal {
  std::string what;  // absolute path
  std::string why;
  std::uint64_t bytes = 0;
};

// The profile's user changed since the caches were last prepared (an upgrade to one user per
// profile, or a new service.user): what the caches were moved from and to.
struct OwnerChange {
  uid_t from = 0;
  DirectoryOwner to;
  std::uint64_t entries = 0;  // changed now; systemd may have moved CacheDirectory= itself first
};

struct PrepareReport {
  std::string fingerprint;              // stamped in the records now
  std::optional<std::string> previous;  // what the stamp said before, if there was one
  std::string change;                   // why the caches were stale; "" when they were not
  std::vector<Removal> removals;
  std::vector<std::string> kept;            // "triton: keys its entries on toolkit and arch", ...
  std::vector<std::string> held_locks;      // lock files a live process holds, left in place
  std::optional<OwnerChange> owner_change;  // set at the one start that moved them
};

using RemovalSink = std::function<void(const Removal&)>;

struct PrepareOptions {
  // Root's records about the caches: state_paths::cache_stamp_directory(NAME); tests give their
  // own.
  std::filesystem::path records;
  DirectoryOwner owner;  // of the directories it creates: the unit's User= (cache_owner)
};

// At each start, as root: refuses a cache directory outside the cache root that gpulaunch did
// not create (and touches nothing then); creates the cache root and missing cache directories
// for `owner`, recording those outside the root; removes a stamp an older gpulaunch left in the
// cache root and what an interrupted clear left; when the fingerprint differs from the stamp
// (or there is none, or it was for another root) clears every non-empty cache that does not key
// itself, with the stamp removed first and the new one written last, so a crash in between
// leaves no stamp and the next start clears again; removes lock files no process holds. An
// unchanged fingerprint clears nothing. When `owner` is not who the caches were last prepared
// for (root's owner record; without one, the cache root's owner), everything in them the
// previous uid owns is handed to `owner` first (ConfinedRoot::change_owner): the compiled
// kernels stay, since the user is no fingerprint input.
Result<PrepareReport> prepare_caches(const LaunchPlan& plan, const FingerprintInputs& inputs,
                                     const PrepareOptions& options,
                                     const RemovalSink& on_removal = {});

// Empties the named caches (all when `names` is empty), whatever the fingerprint, refusing as
// prepare_caches does. The stamp stays: an emptied cache is valid under any fingerprint, and a
// clear cut short leaves each entry whole or gone. `records` as in PrepareOptions; a non-root
// caller only reads them (CacheRecords::open_as_caller).
Result<std::vector<Removal>> clear_caches(const LaunchPlan& plan,
                                          const std::vector<std::string>& names,
                                          const std::filesystem::path& records,
                                          const RemovalSink& on_removal = {});

}  // namespace gl
