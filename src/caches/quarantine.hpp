// SPDX-License-Identifier: Apache-2.0
#pragma once
// Moving a poisoned cache aside (`record-exit`, as root) and finding the copies kept: only a
// cache gpulaunch may touch (cache_state: under the cache root, or a directory it created and
// recorded), renamed within its parent through directory fds by ConfinedRoot::move_aside, never
// deleted. Which cache, and when, is supervise/quarantine's decision.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "plan/launch_plan.hpp"
#include "util/error.hpp"

namespace gl {

// A cache of the plan that gpulaunch may move aside.
struct CachePlace {
  std::string name;       // the catalog's name: "inductor", "vllm", ...
  std::string directory;  // absolute, normal
};

// The infix that marks a quarantined copy beside its cache: `NAME.quarantined-YYYYmmddTHHMMSS`.
inline constexpr std::string_view kQuarantinedInfix = ".quarantined-";
// The copy's name for the directory named `leaf`, at `time_usec` (UTC).
std::string quarantine_leaf(std::string_view leaf, int64_t time_usec);

// The plan's caches that exist and that gpulaunch may touch; `records` is the profile's
// state_paths::cache_stamp_directory. A cache outside the root that it did not create is left
// out, as is everything when the cache root does not exist.
Result<std::vector<CachePlace>> movable_caches(const LaunchPlan& plan,
                                               const std::filesystem::path& records);

// Renames cache `name`'s directory to quarantine_leaf(its leaf, time_usec) beside it; the next
// start's prepare-caches creates it afresh for the engine. Returns the copy's path.
Result<std::filesystem::path> quarantine_cache(const LaunchPlan& plan, std::string_view name,
                                               int64_t time_usec,
                                               const std::filesystem::path& records);

}  // namespace gl
