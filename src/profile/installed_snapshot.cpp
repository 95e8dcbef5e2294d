// SPDX-License-Identifier: Apache-2.0
#include "profile/installed_snapshot.hpp"

#include "profile/validate.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"

namespace gl {

Result<std::optional<MergedProfile>> load_installed_merged(std::string_view name,
                                                           const std::filesystem::path& snapshot) {
  std::error_code error;
  if (snapshot.empty() ||
      !std::filesystem::exists(std::filesystem::symlink_status(snapshot, error)))
    return std::optional<MergedProfile>{};
  // Root acts on what the snapshot says: only a file no other user could have written.
  if (auto reason = user_writable_reason(snapshot))
    return failf("Refusing to use the profile snapshot '{}': {}", snapshot.string(), *reason);
  // The snapshot is the merged profile: nothing to search or extend.
  GL_TRY(auto merged, load_merged(DirectorySource({}), snapshot.string()));
  if (merged.name != name)
    return failf("Refusing to use the profile snapshot '{}': it is of profile '{}', not '{}'",
                 snapshot.string(), merged.name, name);
  return std::optional<MergedProfile>(std::move(merged));
}

Result<std::optional<Profile>> load_installed_profile(std::string_view name,
                                                      const std::filesystem::path& snapshot) {
  GL_TRY(auto merged, load_installed_merged(name, snapshot));
  if (!merged) return std::optional<Profile>{};
  GL_TRY(auto profile, validate_profile(*merged));
  return std::optional<Profile>(std::move(profile));
}

Result<std::optional<Profile>> load_installed_profile(std::string_view name) {
  return load_installed_profile(name, state_paths::snapshot_file(name));
}

}  // namespace gl
