// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a command finds the profile a user named: on the search path (or the .toml file given),
// else the snapshot `up` installed (profile/installed_snapshot), so a profile serving from its
// snapshot is found by every command, not only by those about an installed service. A name found
// in neither place is refused with the closest name of both.

#include <string>
#include <string_view>
#include <vector>

#include "cli/context.hpp"
#include "profile/loader.hpp"
#include "profile/profile.hpp"
#include "systemd/manager.hpp"
#include "util/error.hpp"

namespace gl {

// The profiles `up` installed on this node: NAME of each snapshot NAME.toml, sorted.
std::vector<std::string> installed_profile_names();

// Whether `name` is a profile on the search path, an installed one, or one with a history under
// /var/lib/gpulaunch; else "unknown profile
// 'x' (did you mean 'y'?): not on the search path (...) and not installed". A path to a .toml
// file is known when the file exists.
Result<void> check_known_profile(const CliContext& context, std::string_view name_or_path);

// check_known_profile, or a unit of the name that the `scope` manager knows (a service installed
// before snapshots, or whose profile file is gone): `down`, `restart`, `status` and `logs`. The
// manager is asked only for a name found in neither place; one that cannot be reached leaves
// check_known_profile's answer.
Result<void> check_known_service(const CliContext& context, std::string_view name,
                                 ManagerScope scope);

// The merged profile from the search path (or the file given); a name that is not there, from
// its installed snapshot; else check_known_profile's error.
Result<MergedProfile> load_merged_or_installed(const CliContext& context,
                                               std::string_view name_or_path);
// The same, validated.
Result<Profile> load_profile_or_installed(const CliContext& context, std::string_view name_or_path);

}  // namespace gl
