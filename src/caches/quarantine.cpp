// SPDX-License-Identifier: Apache-2.0
#include "caches/quarantine.hpp"

#include <ctime>
#include <optional>
#include <system_error>

#include <fmt/core.h>

#include "caches/cache_records.hpp"
#include "caches/cache_state.hpp"
#include "caches/safe_remove.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

struct Confined {
  ConfinedRoot root;
  std::string relative;  // "" for a cache that is its own root
};

// The cache's confinement root, when it exists and gpulaunch may touch it.
Result<std::optional<Confined>> confine(const LaunchPlan& plan, const CacheTarget& target,
                                        const std::optional<CacheRecords>& records) {
  if (target.own_root) {
    GL_TRY(auto own, open_own_root(target));
    if (!own || !records) return std::optional<Confined>{};
    if (!check_created(*records, target, *own, plan.cache_root)) return std::optional<Confined>{};
    return std::optional<Confined>(Confined{std::move(*own), ""});
  }
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::symlink_status(plan.cache_root, error)))
    return std::optional<Confined>{};
  GL_TRY(auto root, ConfinedRoot::open(plan.cache_root));
  GL_TRY(const bool there, root.exists(target.relative));
  if (!there) return std::optional<Confined>{};
  return std::optional<Confined>(Confined{std::move(root), target.relative});
}

}  // namespace

std::string quarantine_leaf(std::string_view leaf, int64_t time_usec) {
  const std::time_t seconds = static_cast<std::time_t>(time_usec / 1'000'000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &tm);
  return fmt::format("{}{}{}", leaf, kQuarantinedInfix, stamp);
}

Result<std::vector<CachePlace>> movable_caches(const LaunchPlan& plan,
                                               const std::filesystem::path& records_directory) {
  GL_TRY(const auto targets, cache_targets(plan));
  GL_TRY(const auto records, CacheRecords::open_existing(records_directory));
  std::vector<CachePlace> places;
  for (const auto& target : targets) {
    GL_TRY(const auto confined, confine(plan, target, records));
    if (confined) places.push_back({target.location.name, target.location.directory});
  }
  return places;
}

Result<std::filesystem::path> quarantine_cache(const LaunchPlan& plan, std::string_view name,
                                               int64_t time_usec,
                                               const std::filesystem::path& records_directory) {
  GL_TRY(const auto targets, cache_targets(plan));
  for (const auto& target : targets) {
    if (target.location.name != name) continue;
    GL_TRY(const auto records, CacheRecords::open_existing(records_directory));
    GL_TRY(const auto confined, confine(plan, target, records));
    if (!confined)
      return failf(
          "Refusing to move cache '{}' at '{}' aside: it is missing, or gpulaunch did "
          "not create it",
          name, target.location.directory);
    const std::string leaf = std::filesystem::path(target.location.directory).filename().string();
    return confined->root.move_aside(confined->relative, quarantine_leaf(leaf, time_usec));
  }
  return failf("Unknown cache '{}'", name);
}

}  // namespace gl
