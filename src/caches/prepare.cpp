// SPDX-License-Identifier: Apache-2.0
#include "caches/prepare.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "caches/cache_records.hpp"
#include "caches/cache_state.hpp"
#include "caches/safe_remove.hpp"
#include "caches/stale_locks.hpp"
#include "util/did_you_mean.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// The plan's caches with their confinement roots open, ready to measure and clear.
struct OpenCaches {
  ConfinedRoot root;
  std::vector<CacheTarget> targets;
  std::vector<std::optional<ConfinedRoot>> own;  // per target; set for existing own roots

  const ConfinedRoot* confined(size_t i) const {
    if (!targets[i].own_root) return &root;
    return own[i] ? &*own[i] : nullptr;
  }
};

// Opens the cache root and every cache's confinement root, refusing before anything changes
// when a cache directory outside the root exists that gpulaunch did not create. With `create`,
// the root and missing directories outside it are created for that owner, and those recorded
// in `records` (which `create` needs). No `records`: no directory outside the root is ours.
Result<std::optional<OpenCaches>> open_caches(const LaunchPlan& plan, const CacheRecords* records,
                                              const DirectoryOwner* create) {
  GL_TRY(auto targets, cache_targets(plan));
  GL_TRY_VOID(check_clearable(plan.cache_root));
  std::vector<std::optional<ConfinedRoot>> own_roots;
  for (const auto& target : targets) {
    own_roots.emplace_back();
    if (!target.own_root) continue;
    GL_TRY(auto own, open_own_root(target));
    if (own && !records)
      return failf(
          "Refusing to use cache directory '{}' (caches.paths.{}): there is no record "
          "that gpulaunch created it, and it is not under the cache root '{}'",
          target.location.directory, target.location.name, plan.cache_root);
    if (own) GL_TRY_VOID(check_created(*records, target, *own, plan.cache_root));
    own_roots.back() = std::move(own);
  }
  if (create) {
    GL_TRY_VOID(make_cache_directory(plan.cache_root, *create));
  } else if (std::error_code missing;
             !std::filesystem::exists(std::filesystem::symlink_status(plan.cache_root, missing))) {
    return std::optional<OpenCaches>{};  // nothing was ever cached; creating it is the start's
  }
  GL_TRY(auto root, ConfinedRoot::open(plan.cache_root));
  OpenCaches caches{std::move(root), std::move(targets), std::move(own_roots)};
  for (size_t i = 0; create && i < caches.targets.size(); ++i) {
    const auto& target = caches.targets[i];
    if (!target.own_root || caches.own[i]) continue;
    GL_TRY(const auto made, make_cache_directory(target.location.directory, *create));
    if (!made.created)
      return failf("Refusing to use cache directory '{}': it appeared while it was being created",
                   target.location.directory);
    GL_TRY_VOID(records->record_created({target.location.directory, made.identity, made.birth}));
    GL_TRY(auto own, ConfinedRoot::open(target.location.directory));
    if (auto same = own.identity(); !same || *same != made.identity)
      return failf("Refusing to use cache directory '{}': it was replaced while it was created",
                   target.location.directory);
    caches.own[i] = std::move(own);
  }
  return std::optional<OpenCaches>(std::move(caches));
}

class Recorder {
 public:
  explicit Recorder(const RemovalSink& sink) : sink_(sink) {}
  void add(Removal removal) {
    if (sink_) sink_(removal);
    removals_.push_back(std::move(removal));
  }
  std::vector<Removal>& removals() { return removals_; }

 private:
  const RemovalSink& sink_;
  std::vector<Removal> removals_;
};

// A clear that was killed leaves `.trash-*` in the root or in a cache directory; finish it.
Result<void> sweep_trash(const OpenCaches& caches, Recorder& recorder) {
  auto sweep = [&](const ConfinedRoot& root, std::string_view relative) -> Result<void> {
    GL_TRY(const auto trash, root.trash_in(relative));
    for (const auto& name : trash) {
      GL_TRY(const auto removed, root.remove(name));
      recorder.add({root.shown(name), "left by an interrupted clear", removed.bytes});
    }
    return {};
  };
  GL_TRY_VOID(sweep(caches.root, ""));
  for (size_t i = 0; i < caches.targets.size(); ++i)
    if (const ConfinedRoot* root = caches.confined(i))
      GL_TRY_VOID(sweep(*root, caches.targets[i].relative));
  return {};
}

Result<RemovedTree> clear_one(const OpenCaches& caches, size_t i) {
  const ConfinedRoot* root = caches.confined(i);
  if (!root) return RemovedTree{};
  const auto& target = caches.targets[i];
  return target.own_root ? root->clear_contents("") : root->clear_directory(target.relative);
}

// A stamp an older gpulaunch kept in the cache root is the engine's file now: never read, and
// removed confined like any cache content.
Result<void> remove_old_stamp(const OpenCaches& caches, Recorder& recorder) {
  GL_TRY(const auto removed, caches.root.remove(kOldStampName));
  if (removed.entries > 0)
    recorder.add({caches.root.shown(kOldStampName),
                  "fingerprint stamp of an older gpulaunch, not trusted: stamps are root's now",
                  removed.bytes});
  return {};
}

// The caches under the root that do not exist yet, made for the engine's user.
Result<void> make_missing(const OpenCaches& caches, const DirectoryOwner& owner) {
  for (const auto& target : caches.targets) {
    if (target.own_root) continue;
    GL_TRY(const bool exists, caches.root.exists(target.relative));
    if (exists) continue;  // a file or link there is the engine's and stays stale
    GL_TRY_VOID(caches.root.make_directories(target.relative, owner));
  }
  return {};
}

// The caches go to `owner` when the profile's user changed: the uid the records name (the cache
// root's own owner before there was a record) hands what it owns to the new one, under the root
// and in the directories outside it that gpulaunch created, confined like a clear.
Result<std::optional<OwnerChange>> move_to_owner(const OpenCaches& caches,
                                                 const CacheRecords& records,
                                                 const DirectoryOwner& owner) {
  GL_TRY(auto recorded, records.owner());
  GL_TRY(auto found, caches.root.owner());
  const uid_t previous = recorded ? recorded->uid : found.uid;
  std::optional<OwnerChange> change;
  if (previous != owner.uid) {
    change = OwnerChange{previous, owner, 0};
    GL_TRY(change->entries, caches.root.change_owner(previous, owner));
    for (size_t i = 0; i < caches.targets.size(); ++i) {
      if (!caches.targets[i].own_root || !caches.own[i]) continue;
      GL_TRY(auto moved, caches.own[i]->change_owner(previous, owner));
      change->entries += moved;
    }
  }
  if (!recorded || recorded->uid != owner.uid || recorded->gid != owner.gid)
    GL_TRY_VOID(records.write_owner(owner));
  return change;
}

}  // namespace

Result<PrepareReport> prepare_caches(const LaunchPlan& plan, const FingerprintInputs& inputs,
                                     const PrepareOptions& options, const RemovalSink& on_removal) {
  GL_TRY(auto records, CacheRecords::open(options.records));
  // A stamp that is not a plain file refuses before any change.
  GL_TRY(const auto stamp, records.stamp());
  GL_TRY(auto opened, open_caches(plan, &records, &options.owner));
  if (!opened) return failf("Failed to open the cache root '{}'", plan.cache_root);
  const OpenCaches* caches = &*opened;
  Recorder recorder(on_removal);
  PrepareReport report;
  report.fingerprint = fingerprint_hex(fingerprint_hash(inputs));
  GL_TRY_VOID(remove_old_stamp(*caches, recorder));
  GL_TRY_VOID(sweep_trash(*caches, recorder));
  GL_TRY(report.owner_change, move_to_owner(*caches, records, options.owner));

  const std::string root = caches->root.path().string();
  const bool other_root = stamp && stamp->root != root;
  if (stamp && !other_root) report.previous = stamp->hash;
  const bool matches = report.previous == report.fingerprint;
  if (!matches)
    report.change =
        report.previous
            ? "fingerprint changed: " + describe_changes(stamp->fields, fingerprint_fields(inputs))
        : other_root ? "the fingerprint stamp is for another cache root '" + stamp->root + "'"
                     : "no fingerprint stamp (first start, or an earlier clear was interrupted)";

  const std::vector<FingerprintField> now = fingerprint_fields(inputs);
  const std::vector<FingerprintField>* before = report.previous ? &stamp->fields : nullptr;
  std::vector<std::pair<size_t, std::string>> stale;  // with why
  std::vector<bool> cleared(caches->targets.size(), false);
  for (size_t i = 0; !matches && i < caches->targets.size(); ++i) {
    const auto& target = caches->targets[i];
    const ConfinedRoot* confined = caches->confined(i);
    if (!confined) continue;
    GL_TRY(const auto usage, cache_usage(*confined, target));
    const auto why = stale_because(target, before, now);
    if (!why) {
      if (usage.entries > 0)
        report.kept.push_back(target.location.name +
                              (target.location.keys_itself
                                   ? ": keys its entries on what changed"
                                   : ": its entries do not depend on what changed"));
    } else if (classify(usage, false, false) == CacheState::stale) {
      stale.emplace_back(i, target.location.name + " does not key itself and " +
                                (why->empty() ? report.change : *why));
    }
  }
  if (!stale.empty()) {
    // No stamp while anything is half-cleared: a kill from here on means "stale" next start.
    GL_TRY_VOID(records.remove_stamp());
    for (const auto& [i, why] : stale) {
      GL_TRY(const auto removed, clear_one(*caches, i));
      cleared[i] = true;
      recorder.add({caches->targets[i].location.directory, why, removed.bytes});
    }
  }
  if (!matches) GL_TRY_VOID(records.write_stamp(make_stamp(root, inputs)));
  GL_TRY_VOID(make_missing(*caches, options.owner));

  for (size_t i = 0; i < caches->targets.size(); ++i) {
    const auto& target = caches->targets[i];
    const ConfinedRoot* confined = caches->confined(i);
    if (cleared[i] || !confined || !target.entry || target.entry->lock_directory.empty()) continue;
    GL_TRY(const auto sweep,
           remove_stale_locks(*confined, target.relative, target.entry->lock_directory));
    for (const auto& lock : sweep.removed)
      recorder.add(
          {confined->shown(lock), "stale lock of a killed JIT build: no process holds it", 0});
    for (const auto& lock : sweep.held) report.held_locks.push_back(confined->shown(lock));
  }
  report.removals = std::move(recorder.removals());
  return report;
}

Result<std::vector<Removal>> clear_caches(const LaunchPlan& plan,
                                          const std::vector<std::string>& names,
                                          const std::filesystem::path& records_directory,
                                          const RemovalSink& on_removal) {
  std::vector<std::string> known;
  for (const auto& location : plan.caches) known.push_back(location.name);
  for (const auto& name : names)
    if (std::find(known.begin(), known.end(), name) == known.end())
      return failf("Unknown cache '{}'{}; known: {}", name, did_you_mean_suffix(name, known),
                   fmt::format("{}", fmt::join(known, ", ")));
  GL_TRY(auto records, CacheRecords::open_as_caller(records_directory));
  GL_TRY(auto opened, open_caches(plan, records ? &*records : nullptr, nullptr));
  if (!opened) return std::vector<Removal>{};
  const OpenCaches* caches = &*opened;
  Recorder recorder(on_removal);
  GL_TRY_VOID(remove_old_stamp(*caches, recorder));
  GL_TRY_VOID(sweep_trash(*caches, recorder));
  for (size_t i = 0; i < caches->targets.size(); ++i) {
    const auto& name = caches->targets[i].location.name;
    if (!names.empty() && std::find(names.begin(), names.end(), name) == names.end()) continue;
    GL_TRY(const auto removed, clear_one(*caches, i));
    if (removed.entries > 0 || removed.bytes > 0)
      recorder.add({caches->targets[i].location.directory, "cleared on demand", removed.bytes});
  }
  return std::move(recorder.removals());
}

}  // namespace gl
