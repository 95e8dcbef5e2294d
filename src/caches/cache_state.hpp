// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where each cache of a launch plan lives relative to its confinement root, whether gpulaunch may
// touch it, and its state against the fingerprint stamp (cache_records) the caches were filled
// under.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caches/cache_records.hpp"
#include "caches/fingerprint.hpp"
#include "caches/safe_remove.hpp"
#include "catalog/jit_caches.hpp"
#include "plan/launch_plan.hpp"
#include "util/error.hpp"

namespace gl {

// A cache of the plan and where removals of it are confined: the cache root, or, for a
// directory the profile moved outside the root, that directory itself.
struct CacheTarget {
  CacheLocation location;
  const JitCache* entry = nullptr;  // its catalog row
  bool own_root = false;
  std::string relative;  // below the cache root; "" when own_root
};

// Refuses a cache directory that is the root or contains it: clearing it would take the root.
Result<std::vector<CacheTarget>> cache_targets(const LaunchPlan& plan);

// `directory` confined (caches/confined_root), or nullopt when it does not exist.
Result<std::optional<ConfinedRoot>> open_if_present(const std::string& directory);

// The cache's own root, or nullopt when its directory does not exist.
Result<std::optional<ConfinedRoot>> open_own_root(const CacheTarget& target);

// Whether gpulaunch may use and clear `root`, the own root of `target`: only a directory it
// created and recorded in `records` (same path, device and inode). The error says why not.
Result<void> check_created(const CacheRecords& records, const CacheTarget& target,
                           const ConfinedRoot& root, const std::string& cache_root);

Result<TreeUsage> cache_usage(const ConfinedRoot& root, const CacheTarget& target);

// foreign: a directory outside the cache root that gpulaunch did not create; never touched.
enum class CacheState { current, stale, empty, missing, foreign };
std::string_view cache_state_name(CacheState state);

// Whether `target`'s entries are stale now that the fingerprint is `now`, under a stamp whose
// fields were `before` (nullptr: no stamp for this root, so every cache that does not key
// itself is, unless its entries are checked when read). nullopt: not stale (it keys itself, or
// none of the facts it depends on changed); otherwise why, "fingerprint changed:
// flashinfer_version 0.6.17 -> 0.6.18", or "" without a stamp.
std::optional<std::string> stale_because(const CacheTarget& target,
                                         const std::vector<FingerprintField>* before,
                                         const std::vector<FingerprintField>& now);

// A cache that keys itself is current whatever the stamp says; one that does not is current
// only under a stamp whose facts it depends on are the present ones.
CacheState classify(const TreeUsage& usage, bool keys_itself, bool stamp_matches);

struct CacheStatus {
  std::string name;
  std::string path;
  bool keys_itself = false;
  TreeUsage usage;
  CacheState state = CacheState::missing;
  std::vector<std::string> stale_on;  // the catalog's, for one that does not key itself
  // Copies a poisoned-cache quarantine moved aside beside it (caches/quarantine), oldest first.
  std::vector<std::string> quarantined = {};
};

struct CacheReport {
  std::string root;
  std::string fingerprint;             // of the inputs given
  std::optional<std::string> stamped;  // for this root in the records now
  std::string change;                  // what differs, when the stamp does not match
  std::vector<CacheStatus> caches;
};

// Looks only: creates, removes and stamps nothing. `records` is the profile's
// state_paths::cache_stamp_directory (a parameter, so tests use their own).
Result<CacheReport> inspect_caches(const LaunchPlan& plan, const FingerprintInputs& inputs,
                                   const std::filesystem::path& records);

}  // namespace gl
