// SPDX-License-Identifier: Apache-2.0
#include "caches/cache_state.hpp"

#include <system_error>

#include "caches/quarantine.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

std::string normal(const std::string& path) {
  std::string text = std::filesystem::path(path).lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

bool is_under(const std::string& path, const std::string& root) {
  return path.size() > root.size() && path.starts_with(root) &&
         (root == "/" || path[root.size()] == '/');
}

}  // namespace

Result<std::vector<CacheTarget>> cache_targets(const LaunchPlan& plan) {
  const std::string root = normal(plan.cache_root);
  std::vector<CacheTarget> targets;
  for (const auto& location : plan.caches) {
    CacheTarget target{location, find_jit_cache(location.name), false, {}};
    const std::string directory = normal(location.directory);
    target.location.directory = directory;
    if (directory == root || is_under(root, directory))
      return failf("Refusing cache '{}' at '{}': it contains the cache root '{}'", location.name,
                   directory, root);
    if (is_under(directory, root))
      target.relative = directory.substr(root.size() + 1);
    else
      target.own_root = true;
    targets.push_back(std::move(target));
  }
  return targets;
}

Result<std::optional<ConfinedRoot>> open_if_present(const std::string& directory) {
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::symlink_status(directory, error)))
    return std::optional<ConfinedRoot>{};
  GL_TRY(auto root, ConfinedRoot::open(directory));
  return std::optional<ConfinedRoot>(std::move(root));
}

Result<std::optional<ConfinedRoot>> open_own_root(const CacheTarget& target) {
  return open_if_present(target.location.directory);
}

Result<void> check_created(const CacheRecords& records, const CacheTarget& target,
                           const ConfinedRoot& root, const std::string& cache_root) {
  GL_TRY(const auto identity, root.identity());
  GL_TRY(const auto birth, root.birth());
  GL_TRY(const bool created, records.was_created(target.location.directory, identity, birth));
  if (!created)
    return failf(
        "Refusing to use cache directory '{}' (caches.paths.{}): gpulaunch did not create it "
        "and it is not under the cache root '{}'; remove it so gpulaunch creates its own, or "
        "point caches.paths.{} under the cache root",
        target.location.directory, target.location.name, cache_root, target.location.name);
  return {};
}

Result<TreeUsage> cache_usage(const ConfinedRoot& root, const CacheTarget& target) {
  GL_TRY(auto usage, root.usage(target.relative));
  if (target.own_root) {
    // Leftover trash in the directory is not cache content.
    auto trash = root.trash_in("");
    if (trash && !trash->empty()) {
      for (const auto& name : *trash) {
        auto part = root.usage(name);
        if (part) {
          usage.bytes -= std::min(usage.bytes, part->bytes);
          usage.entries -= std::min(usage.entries, part->entries + 1);
        }
      }
    }
  }
  return usage;
}

std::string_view cache_state_name(CacheState state) {
  switch (state) {
    case CacheState::current:
      return "current";
    case CacheState::stale:
      return "stale";
    case CacheState::empty:
      return "empty";
    case CacheState::missing:
      return "missing";
    case CacheState::foreign:
      return "foreign";
  }
  return "?";
}

std::optional<std::string> stale_because(const CacheTarget& target,
                                         const std::vector<FingerprintField>* before,
                                         const std::vector<FingerprintField>& now) {
  if (target.location.keys_itself) return std::nullopt;
  if (!before) {
    return std::string();
  }
  std::span<const std::string_view> facts;
  if (target.entry) facts = target.entry->stale_on;
  auto changes = describe_changes(*before, now, facts);
  if (changes.empty()) return std::nullopt;
  return "fingerprint changed: " + changes;
}

CacheState classify(const TreeUsage& usage, bool keys_itself, bool stamp_matches) {
  if (!usage.exists) return CacheState::missing;
  if (!usage.is_directory) return CacheState::stale;  // a file or symlink where a cache belongs
  if (usage.entries == 0) return CacheState::empty;
  return keys_itself || stamp_matches ? CacheState::current : CacheState::stale;
}

Result<CacheReport> inspect_caches(const LaunchPlan& plan, const FingerprintInputs& inputs,
                                   const std::filesystem::path& records_directory) {
  CacheReport report;
  report.root = normal(plan.cache_root);
  report.fingerprint = fingerprint_hex(fingerprint_hash(inputs));
  GL_TRY(auto targets, cache_targets(plan));
  GL_TRY(auto records, CacheRecords::open_existing(records_directory));

  std::optional<Stamp> stamp;
  std::error_code error;
  const bool root_exists =
      std::filesystem::exists(std::filesystem::symlink_status(report.root, error));
  std::optional<ConfinedRoot> root;
  if (root_exists) {
    GL_TRY(auto opened, ConfinedRoot::open(report.root));
    root.emplace(std::move(opened));
    if (records) {
      GL_TRY(auto read, records->stamp());
      if (read && read->root == report.root) stamp = std::move(read);
    }
    if (stamp) {
      report.stamped = stamp->hash;
      if (stamp->hash != report.fingerprint)
        report.change = describe_changes(stamp->fields, fingerprint_fields(inputs));
    } else {
      report.change = "no fingerprint stamp";
    }
  }
  const bool matches = report.stamped == report.fingerprint;
  const std::vector<FingerprintField> now = fingerprint_fields(inputs);
  for (const auto& target : targets) {
    CacheStatus status{target.location.name,        target.location.directory,
                       target.location.keys_itself, {},
                       CacheState::missing,         {}};
    if (target.entry)
      status.stale_on.assign(target.entry->stale_on.begin(), target.entry->stale_on.end());
    std::optional<ConfinedRoot> own;
    if (target.own_root) {
      GL_TRY(own, open_own_root(target));
      if (own && !(records && check_created(*records, target, *own, report.root))) {
        status.usage.exists = true;
        status.state = CacheState::foreign;  // not measured either: not gpulaunch's to walk
        report.caches.push_back(std::move(status));
        continue;
      }
    }
    const ConfinedRoot* confined =
        target.own_root ? (own ? &*own : nullptr) : (root ? &*root : nullptr);
    if (confined) {
      GL_TRY(status.usage, cache_usage(*confined, target));
      const std::string leaf = std::filesystem::path(target.location.directory).filename().string();
      GL_TRY(const auto copies,
             confined->names_beside(target.relative, leaf + std::string(kQuarantinedInfix)));
      for (const auto& copy : copies) status.quarantined.push_back(copy.string());
    }
    status.state =
        classify(status.usage, status.keys_itself,
                 matches || !stale_because(target, stamp ? &stamp->fields : nullptr, now));
    report.caches.push_back(std::move(status));
  }
  return report;
}

}  // namespace gl
