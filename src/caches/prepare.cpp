#include "caches/prepare.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "caches/cache_state.hpp"
#include "caches/safe_remove.hpp"
#include "caches/stale_locks.hpp"
#include "util/atomic_file.hpp"
#include "util/did_you_mean.hpp"

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

Result<OpenCaches> open_caches(const LaunchPlan& plan, bool create_root) {
  auto targets = cache_targets(plan);
  if (!targets) return std::unexpected(targets.error());
  if (auto allowed = check_clearable(plan.cache_root); !allowed)
    return std::unexpected(allowed.error());
  if (create_root) {
    std::error_code error;
    std::filesystem::create_directories(plan.cache_root, error);
    if (error)
      return failf("Failed to create the cache root '{}': {}", plan.cache_root, error.message());
  }
  auto root = ConfinedRoot::open(plan.cache_root);
  if (!root) return std::unexpected(root.error());
  OpenCaches caches{std::move(*root), std::move(*targets), {}};
  for (const auto& target : caches.targets) {
    if (!target.own_root) {
      caches.own.emplace_back();
      continue;
    }
    auto own = open_own_root(target);
    if (!own) return std::unexpected(own.error());
    caches.own.push_back(std::move(*own));
  }
  return caches;
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
    auto trash = root.trash_in(relative);
    if (!trash) return std::unexpected(trash.error());
    for (const auto& name : *trash) {
      auto removed = root.remove(name);
      if (!removed) return std::unexpected(removed.error());
      recorder.add({root.shown(name), "left by an interrupted clear", removed->bytes});
    }
    return {};
  };
  if (auto done = sweep(caches.root, ""); !done) return done;
  for (size_t i = 0; i < caches.targets.size(); ++i)
    if (const ConfinedRoot* root = caches.confined(i))
      if (auto done = sweep(*root, caches.targets[i].relative); !done) return done;
  return {};
}

Result<RemovedTree> clear_one(const OpenCaches& caches, size_t i) {
  const ConfinedRoot* root = caches.confined(i);
  if (!root) return RemovedTree{};
  const auto& target = caches.targets[i];
  return target.own_root ? root->clear_contents("") : root->clear_directory(target.relative);
}

Result<void> remove_stamp(const ConfinedRoot& root) {
  auto removed = root.remove(kStampName);
  if (!removed) return std::unexpected(removed.error());
  return root.sync();
}

}  // namespace

Result<PrepareReport> prepare_caches(const LaunchPlan& plan, const FingerprintInputs& inputs,
                                     const RemovalSink& on_removal) {
  auto caches = open_caches(plan, true);
  if (!caches) return std::unexpected(caches.error());
  Recorder recorder(on_removal);
  PrepareReport report;
  report.fingerprint = fingerprint_hex(fingerprint_hash(inputs));
  if (auto swept = sweep_trash(*caches, recorder); !swept) return std::unexpected(swept.error());

  auto stamp = read_stamp(caches->root.path());
  if (!stamp) return std::unexpected(stamp.error());
  if (*stamp) report.previous = (*stamp)->hash;
  const bool matches = report.previous == report.fingerprint;
  if (!matches)
    report.change = *stamp
                        ? "fingerprint changed: " +
                              describe_changes((*stamp)->fields, fingerprint_fields(inputs))
                        : "no fingerprint stamp (first start, or an earlier clear was interrupted)";

  std::vector<size_t> stale;
  std::vector<bool> cleared(caches->targets.size(), false);
  for (size_t i = 0; !matches && i < caches->targets.size(); ++i) {
    const auto& target = caches->targets[i];
    const ConfinedRoot* root = caches->confined(i);
    if (!root) continue;
    auto usage = cache_usage(*root, target);
    if (!usage) return std::unexpected(usage.error());
    if (target.location.keys_itself) {
      if (usage->entries > 0)
        report.kept.push_back(target.location.name + ": keys its entries on what changed");
    } else if (classify(*usage, false, false) == CacheState::stale) {
      stale.push_back(i);
    }
  }
  if (!stale.empty()) {
    // No stamp while anything is half-cleared: a kill from here on means "stale" next start.
    if (auto removed = remove_stamp(caches->root); !removed)
      return std::unexpected(removed.error());
    for (size_t i : stale) {
      auto removed = clear_one(*caches, i);
      if (!removed) return std::unexpected(removed.error());
      cleared[i] = true;
      recorder.add({caches->targets[i].location.directory,
                    caches->targets[i].location.name + " does not key itself and " + report.change,
                    removed->bytes});
    }
  }
  if (!matches)
    if (auto written = write_stamp(caches->root.path(), inputs); !written)
      return std::unexpected(written.error());

  for (size_t i = 0; i < caches->targets.size(); ++i) {
    const auto& target = caches->targets[i];
    const ConfinedRoot* root = caches->confined(i);
    if (cleared[i] || !root || !target.entry || target.entry->lock_directory.empty()) continue;
    auto sweep = remove_stale_locks(*root, target.relative, target.entry->lock_directory);
    if (!sweep) return std::unexpected(sweep.error());
    for (const auto& lock : sweep->removed)
      recorder.add({root->shown(lock), "stale lock of a killed JIT build: no process holds it", 0});
    for (const auto& lock : sweep->held) report.held_locks.push_back(root->shown(lock));
  }
  report.removals = std::move(recorder.removals());
  return report;
}

Result<std::vector<Removal>> clear_caches(const LaunchPlan& plan,
                                          const std::vector<std::string>& names,
                                          const RemovalSink& on_removal) {
  std::vector<std::string> known;
  for (const auto& location : plan.caches) known.push_back(location.name);
  for (const auto& name : names)
    if (std::find(known.begin(), known.end(), name) == known.end())
      return failf("Unknown cache '{}'{}; known: {}", name, did_you_mean_suffix(name, known),
                   fmt::format("{}", fmt::join(known, ", ")));
  std::error_code missing_root;
  if (!std::filesystem::exists(std::filesystem::symlink_status(plan.cache_root, missing_root)))
    return std::vector<Removal>{};  // nothing was ever cached; creating the root is `up`'s job
  auto caches = open_caches(plan, false);
  if (!caches) return std::unexpected(caches.error());
  Recorder recorder(on_removal);
  if (auto swept = sweep_trash(*caches, recorder); !swept) return std::unexpected(swept.error());

  // The stamp goes while caches are half-cleared and comes back unchanged afterwards.
  const auto stamp_path = caches->root.path() / kStampName;
  std::optional<std::string> stamp;
  std::error_code error;
  if (std::filesystem::is_regular_file(std::filesystem::symlink_status(stamp_path, error))) {
    auto text = read_file(stamp_path, 64 * 1024);
    if (!text) return std::unexpected(text.error());
    stamp = std::move(*text);
  }
  if (auto removed = remove_stamp(caches->root); !removed) return std::unexpected(removed.error());
  for (size_t i = 0; i < caches->targets.size(); ++i) {
    const auto& name = caches->targets[i].location.name;
    if (!names.empty() && std::find(names.begin(), names.end(), name) == names.end()) continue;
    auto removed = clear_one(*caches, i);
    if (!removed) return std::unexpected(removed.error());
    if (removed->entries > 0 || removed->bytes > 0)
      recorder.add({caches->targets[i].location.directory, "cleared on demand", removed->bytes});
  }
  if (stamp)
    if (auto written = write_file_atomically(stamp_path, *stamp, 0644); !written)
      return std::unexpected(written.error());
  return std::move(recorder.removals());
}

}  // namespace gl
