// SPDX-License-Identifier: Apache-2.0
#pragma once
// Who the cache directories gpulaunch creates belong to: the unit's User= and Group= (the
// profile's service user, profile/service_user, and service.group).

#include "caches/safe_remove.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

// From the system's user and group databases; an unknown name is an error.
Result<DirectoryOwner> cache_owner(const Profile& profile);

}  // namespace gl
