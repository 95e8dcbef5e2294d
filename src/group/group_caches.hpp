// SPDX-License-Identifier: Apache-2.0
#pragma once
// The group's cache step before a start: every rank's caches read (`cache NAME --json`),
// compared (caches/cache_agreement), and those that differ cleared on every rank, so that no
// rank starts from a cache another lacks.

#include "group/group_output.hpp"
#include "group/remote.hpp"
#include "profile/profile.hpp"

namespace gl {

// False (said why, naming the rank) when a rank's caches could not be read or cleared.
bool ranks_agree_on_caches(const Profile& profile, RankRunner& runner, GroupOutput& output);

}  // namespace gl
