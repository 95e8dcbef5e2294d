// SPDX-License-Identifier: Apache-2.0
#pragma once
// Profile -> unit file model. A pure function: the same profile and options give the same
// bytes on every node.

#include <string>

#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "unit/unit_file.hpp"

namespace gl {

struct RenderOptions {
  std::string gpulaunch_binary = "/usr/bin/gpulaunch";  // ExecStart's bridge
  std::string version;                                  // for the header
  // A user manager (`up --user`) runs its units as the invoking user and cannot switch to
  // another: no User=/RemoveIPC=, the profile's own uid is a system-manager rule.
  bool user_manager = false;
};

// `plan` is make_launch_plan(profile, ...) for the rank the unit is for.
UnitFile render_unit(const Profile& profile, const LaunchPlan& plan, const RenderOptions& options);

}  // namespace gl
