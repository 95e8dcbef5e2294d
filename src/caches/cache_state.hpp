#pragma once
// Where each cache of a launch plan lives relative to its confinement root, the fingerprint
// stamp that says which toolkit and GPUs the caches were filled for, and the state that follows.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caches/fingerprint.hpp"
#include "caches/safe_remove.hpp"
#include "catalog/jit_caches.hpp"
#include "plan/launch_plan.hpp"
#include "util/error.hpp"

namespace gl {

// In the cache root; a leading dot keeps it apart from the cache directories.
inline constexpr std::string_view kStampName = ".gpulaunch-fingerprint";

struct Stamp {
  std::string hash;  // fingerprint_hex
  std::vector<FingerprintField> fields;
};

std::string stamp_text(const FingerprintInputs& inputs);
// nullopt for text that is not a stamp: treated like no stamp, so the caches count as stale.
std::optional<Stamp> parse_stamp(std::string_view text);

// nullopt when there is no stamp or it is unreadable as one.
Result<std::optional<Stamp>> read_stamp(const std::filesystem::path& cache_root);
Result<void> write_stamp(const std::filesystem::path& cache_root, const FingerprintInputs& inputs);

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

// The cache's own root, or nullopt when its directory does not exist.
Result<std::optional<ConfinedRoot>> open_own_root(const CacheTarget& target);

Result<TreeUsage> cache_usage(const ConfinedRoot& root, const CacheTarget& target);

enum class CacheState { current, stale, empty, missing };
std::string_view cache_state_name(CacheState state);

// A cache that keys itself is current whatever the stamp says; one that does not is current
// only under a stamp of the present fingerprint.
CacheState classify(const TreeUsage& usage, bool keys_itself, bool stamp_matches);

struct CacheStatus {
  std::string name;
  std::string path;
  bool keys_itself = false;
  TreeUsage usage;
  CacheState state = CacheState::missing;
};

struct CacheReport {
  std::string root;
  std::string fingerprint;             // of the inputs given
  std::optional<std::string> stamped;  // in the root now
  std::string change;                  // what differs, when the stamp does not match
  std::vector<CacheStatus> caches;
};

// Looks only: creates, removes and stamps nothing.
Result<CacheReport> inspect_caches(const LaunchPlan& plan, const FingerprintInputs& inputs);

}  // namespace gl
