// SPDX-License-Identifier: Apache-2.0
#include "run/cache_meter.hpp"

#include <algorithm>

#include "caches/safe_remove.hpp"
#include "catalog/jit_caches.hpp"

namespace gl {
namespace {

class DirectoryCacheMeter : public CacheMeter {
 public:
  DirectoryCacheMeter(std::vector<CacheDirectory> directories, std::uint64_t max_entries)
      : directories_(std::move(directories)), max_entries_(max_entries) {}

  std::vector<CacheSize> measure() override {
    std::vector<CacheSize> sizes;
    for (const auto& cache : directories_) {
      // Opened afresh each time: the engine may create the directory, or replace it.
      auto root = ConfinedRoot::open(cache.directory);
      if (!root) {
        sizes.push_back({cache.name, 0});  // not there (yet), or refused: nothing grew
        continue;
      }
      auto usage = root->usage("", max_entries_);
      if (usage) sizes.push_back({cache.name, usage->bytes});
    }
    return sizes;
  }

 private:
  std::vector<CacheDirectory> directories_;
  std::uint64_t max_entries_;
};

}  // namespace

std::vector<CacheDirectory> compiling_cache_directories(
    const std::function<const char*(const char*)>& lookup) {
  std::vector<CacheDirectory> directories;
  for (const JitCache& cache : jit_caches()) {
    if (!cache.compiles) continue;
    for (const CacheVariable& variable : cache.variables) {
      if (!variable.subpath.empty()) continue;  // below a directory listed already
      const char* value = lookup(std::string(variable.name).c_str());
      if (!value || value[0] != '/') continue;
      const std::string directory(value);
      const bool seen = std::any_of(directories.begin(), directories.end(), [&](const auto& known) {
        return known.directory == directory;
      });
      if (!seen) directories.push_back({std::string(cache.name), directory});
    }
  }
  return directories;
}

std::unique_ptr<CacheMeter> directory_cache_meter(std::vector<CacheDirectory> directories,
                                                  std::uint64_t max_entries) {
  return std::make_unique<DirectoryCacheMeter>(std::move(directories), max_entries);
}

}  // namespace gl
