// SPDX-License-Identifier: Apache-2.0
#pragma once
// The facts a profile's check needs, gathered on this node.

#include "facts/environment.hpp"
#include "facts/facts.hpp"
#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"

namespace gl {

Facts probe_node_for(const Profile& profile, const LaunchPlan& plan, const ShellEnvironment& shell);

}  // namespace gl
