// SPDX-License-Identifier: Apache-2.0
#pragma once
// The profile `up` installed: its merged snapshot (state_paths::snapshot_file), which root acts on
// for an installed profile (`run`, prepare-caches, record-exit, exec, metrics, check --all). It is
// loaded and trusted here only: no snapshot is no profile (nullopt), one another user could have
// written (or a link through such a place) is refused, one of another profile is refused. Callers
// load it once per process and pass the Profile on.

#include <filesystem>
#include <optional>
#include <string_view>

#include "profile/loader.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

Result<std::optional<Profile>> load_installed_profile(std::string_view name,
                                                      const std::filesystem::path& snapshot);
// The same snapshot as read, before validation: for the commands that print or lock the profile's
// text (`lock`, `show`).
Result<std::optional<MergedProfile>> load_installed_merged(std::string_view name,
                                                           const std::filesystem::path& snapshot);
// At state_paths::snapshot_file(name).
Result<std::optional<Profile>> load_installed_profile(std::string_view name);

}  // namespace gl
