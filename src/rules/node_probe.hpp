// SPDX-License-Identifier: Apache-2.0
#pragma once
// The facts a profile's check needs, gathered on this node.

#include "facts/environment.hpp"
#include "facts/facts.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"

namespace gl {

Facts probe_node_for(const Profile& profile, const LaunchPlan& plan, const ShellEnvironment& shell);
// The same with what only this host's journal and service manager say (Xid lines since boot, the
// Fabric Manager's state): the check `up` runs before a start.
Facts probe_node_for_start(const Profile& profile, const LaunchPlan& plan,
                           const ShellEnvironment& shell);

}  // namespace gl
