// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every JIT or compile cache the engines use, as data: which variables pin it, where it goes
// under the profile's cache root, and whether it keys its entries on the toolkit and GPU
// (field-facts section 5). Add a cache by adding a row.

#include <span>
#include <string_view>
#include <vector>

namespace gl {

struct CacheVariable {
  std::string_view name;     // environment variable
  std::string_view subpath;  // below the cache's directory; "" for the directory itself
};

struct JitCache {
  std::string_view name;       // as profiles name it in [caches.paths]
  std::string_view directory;  // below the cache root, unless overridden
  std::vector<CacheVariable> variables;
  bool keys_itself;  // entries are keyed on toolkit/arch/driver: a changed fingerprint keeps it
  std::string_view note;
  // Where a killed JIT build leaves `*.lock` files that hang later starts: any directory below
  // the cache whose path ends with these components. "" when the cache leaves none.
  std::string_view lock_directory;
};

std::span<const JitCache> jit_caches();
const JitCache* find_jit_cache(std::string_view name);

}  // namespace gl
