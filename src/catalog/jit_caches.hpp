// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every JIT, compile or download cache the engines use, as data: which variables pin it, where it
// goes under the profile's cache root, which of the node's facts its entries depend on without
// keying themselves on them, and where it leaves lock files (field-facts section 5; each row
// names the upstream file and version it was read from). Add a cache by adding a row.

#include <span>
#include <string_view>
#include <vector>

namespace gl {

struct CacheVariable {
  std::string_view name;     // environment variable
  std::string_view subpath;  // below the cache's directory; "" for the directory itself
};

// Where FlashInfer keeps the cubins it downloads, below FLASHINFER_WORKSPACE_BASE (the
// "flashinfer" cache), when neither FLASHINFER_CUBIN_DIR nor the flashinfer-cubin package names a
// directory (flashinfer/jit/env.py, _get_cubin_dir, fb28d72).
inline constexpr std::string_view kFlashinferCubinSubpath = ".cache/flashinfer/cubins";

// lock_directory for a cache that keeps `NAME.lock` beside each file, in any directory below it.
inline constexpr std::string_view kLocksAnywhere = "*";

struct JitCache {
  std::string_view name;       // as profiles name it in [caches.paths]
  std::string_view directory;  // below the cache root, unless overridden
  std::vector<CacheVariable> variables;
  bool keys_itself;  // entries are keyed on toolkit/arch/driver: a changed fingerprint keeps it
  std::string_view note;
  // Where a killed JIT build leaves `*.lock` files that hang later starts: any directory below
  // the cache whose path ends with these components, or kLocksAnywhere. "" when it leaves none.
  std::string_view lock_directory;
  // For a cache that does not key itself: the fingerprint facts (caches/fingerprint's field
  // names) whose change makes its entries stale. Empty: a change of any of them does.
  std::vector<std::string_view> stale_on = {};
  // Whether JIT or compile output lands here while an engine starts (`run` watches it grow, so
  // a silent first-use build is not taken for a hang). TRITON_HOME holds only dumps and
  // overrides the operator asked for.
  bool compiles = true;
};

std::span<const JitCache> jit_caches();
const JitCache* find_jit_cache(std::string_view name);

}  // namespace gl
