// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

// The installed unit's cache upkeep before a start (`prepare-caches`, the unit's ExecStartPre=+),
// as root: the caches brought up to date with the node and created for the service user, each
// step a line on stdout. `warm --compile` runs it before the compile step for the same reason.
// `profile`: the installed snapshot (profile/installed_snapshot), read by the caller.
Result<void> prepare_profile_caches(const std::string& name, const Profile& profile,
                                    const std::string& state_root);

}  // namespace gl
