// SPDX-License-Identifier: Apache-2.0
#pragma once
// The drift check `verify` prints and `up --locked` refuses on.

#include <string>
#include <vector>

#include "facts/facts.hpp"
#include "lock/drift.hpp"
#include "lock/lockfile.hpp"
#include "plan/launch_plan.hpp"
#include "profile/loader.hpp"
#include "profile/profile.hpp"

namespace gl {

// The fields of this node (probed as `facts`, taking `plan`'s rank) that differ from the lock at
// `lock_path`.
Result<std::vector<FieldRow>> locked_drift(const std::string& lock_path,
                                           const MergedProfile& merged, const Profile& profile,
                                           const LaunchPlan& plan, const Facts& facts);

}  // namespace gl
