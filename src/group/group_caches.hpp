// SPDX-License-Identifier: Apache-2.0
#pragma once
// The group's cache step before a start: every rank's caches read (`cache NAME --json`),
// compared (caches/cache_agreement); a cache that differs is seeded from the rank whose copy was
// compiled for the facts every rank shares (`cache export NAME CACHE... -o -` there streamed
// into `cache import NAME -` on each rank that differs, both as root over the group's ssh), and
// what no rank's matches, or what could not be seeded, is cleared on every rank, so that no rank
// starts from a cache another lacks.

#include "group/group_output.hpp"
#include "group/remote.hpp"
#include "profile/profile.hpp"

namespace gl {

// False (said why, naming the rank) when a rank's caches could not be read or cleared. Says per
// cache what was kept, seeded from where into which ranks, or cleared.
bool ranks_agree_on_caches(const Profile& profile, RankRunner& runner, GroupOutput& output);

}  // namespace gl
