// SPDX-License-Identifier: Apache-2.0
#pragma once
// How big the profile's compiling JIT caches are, for `run` to tell a silent first-use JIT build
// from a hang (run/readiness decides). The walk is the side effect, behind this interface: a
// bounded walk of each directory that follows no link and stays on its filesystem
// (caches/safe_remove's ConfinedRoot).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "run/readiness.hpp"

namespace gl {

struct CacheDirectory {
  std::string name;       // the catalog/jit_caches row
  std::string directory;  // absolute
};

// The directories the engine compiles into: each catalog/jit_caches row that holds JIT or
// compile output (JitCache::compiles), where the unit's environment (`lookup`, getenv's
// answer or null) pins it; an absolute path only, each directory once.
std::vector<CacheDirectory> compiling_cache_directories(
    const std::function<const char*(const char*)>& lookup);

class CacheMeter {
 public:
  virtual ~CacheMeter() = default;
  // The size of each directory that could be measured now (a missing one is 0 bytes).
  virtual std::vector<CacheSize> measure() = 0;
};

// At most this many entries are looked at per directory and measurement: a cache larger than
// that is measured in part (its first entries as the directory lists them).
inline constexpr std::uint64_t kMaxCacheMeterEntries = 100000;

std::unique_ptr<CacheMeter> directory_cache_meter(
    std::vector<CacheDirectory> directories, std::uint64_t max_entries = kMaxCacheMeterEntries);

}  // namespace gl
