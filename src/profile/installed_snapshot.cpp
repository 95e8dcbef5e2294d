// SPDX-License-Identifier: Apache-2.0
#include "profile/installed_snapshot.hpp"

#include "profile/validate.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"

namespace gl {

Result<std::optional<Profile>> load_installed_profile(std::string_view name,
                                                      const std::filesystem::path& snapshot) {
  std::error_code error;
  if (snapshot.empty() ||
      !std::filesystem::exists(std::filesystem::symlink_status(snapshot, error)))
    return std::optional<Profile>{};
  // Root acts on what the snapshot says: only a file no other user could have written.
  if (auto reason = user_writable_reason(snapshot))
    return failf("Refusing to use the profile snapshot '{}': {}", snapshot.string(), *reason);
  // The snapshot is the merged profile: nothing to search or extend.
  GL_TRY(auto profile, load_profile(DirectorySource({}), snapshot.string()));
  if (profile.name != name)
    return failf("Refusing to use the profile snapshot '{}': it is of profile '{}', not '{}'",
                 snapshot.string(), profile.name, name);
  return std::optional<Profile>(std::move(profile));
}

Result<std::optional<Profile>> load_installed_profile(std::string_view name) {
  return load_installed_profile(name, state_paths::snapshot_file(name));
}

}  // namespace gl
