// SPDX-License-Identifier: Apache-2.0
#pragma once
// What up, down, restart and status share: where units go and how to wait for systemd.

#include <filesystem>
#include <string>

#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "systemd/manager.hpp"
#include "unit/placement.hpp"
#include "util/error.hpp"

namespace gl {

// Whether gpulaunch can start this profile's engine under `scope`: an engine.image profile runs
// under rootful podman, which a user manager cannot start.
Result<void> startable(const Profile& profile, ManagerScope scope);

// The unit file `up` would install for this profile and plan, rendered for this very binary.
std::string render_for_install(const Profile& profile, const LaunchPlan& plan, ManagerScope scope);

// This executable's absolute path: the installed one, or the build tree's when run from there.
std::string own_binary();

}  // namespace gl
