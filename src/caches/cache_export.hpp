// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulaunch cache export`: a profile's compiled caches as one archive another node can import
// (caches/cache_import), so it starts without compiling them again. Read as root from trees the
// engine writes, as the digests are (caches/cache_digest): through ConfinedRoot, no link
// followed, no other mount entered, regular files only.

#include <filesystem>
#include <string>
#include <vector>

#include "caches/archive_manifest.hpp"
#include "caches/cache_digest.hpp"
#include "caches/fingerprint.hpp"
#include "plan/launch_plan.hpp"
#include "util/error.hpp"

namespace gl {

// Writes to `fd` (`shown` names it in errors) a zstd-compressed tar archive: the manifest
// (caches/archive_manifest) first, then each cache's regular files under caches/NAME/. `names`
// picks caches (an unknown one is refused); empty: every cache that holds files. A cache
// gpulaunch did not make (outside the cache root, not recorded) or too large to digest is
// refused, and so is one whose content changed while it was written (its engine still running).
// `records` as inspect_caches takes it. Returns the manifest written.
Result<ArchiveManifest> export_caches(const LaunchPlan& plan, const std::string& profile,
                                      const FingerprintInputs& inputs,
                                      const std::filesystem::path& records,
                                      const std::vector<std::string>& names, int fd,
                                      const std::string& shown, const DigestLimits& limits = {});

}  // namespace gl
