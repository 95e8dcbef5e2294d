// SPDX-License-Identifier: Apache-2.0
#pragma once
// The environment the unit's engine gets, spelled once: render writes it as Environment= lines,
// `gpulaunch env` prints it as shell exports, and `gpulaunch exec` can start a command with it.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "profile/secret_files.hpp"

namespace gl {

struct UnitVariable {
  std::string name;
  // What the engine sees. For a [secrets] entry: the path of the credential's file, which
  // exists only while the unit runs; the secret's value is never part of the environment.
  std::string value;
  // A [secrets] entry's credential name (the unit writes the value as "%d/NAME").
  std::optional<std::string> credential;
};

// The launch plan's environment, then one NAME_PATH per [secrets] entry, in the unit's order.
std::vector<UnitVariable> unit_environment(const Profile& profile, const LaunchPlan& plan);

// engine.image: what the unit's own processes get (`run` and podman, both root):
// catalog/containers' kContainerUnitVariables alone, root's PATH and HOME among them, and the
// [secrets] entries' credentials. The engine's variables, the profile's [env] included, reach the
// container by value in podman's command (plan/container_command's container_environment), so
// none of them (LD_PRELOAD, CONTAINERS_CONF, TMPDIR) reaches a process of root's.
std::vector<UnitVariable> container_unit_environment(const Profile& profile,
                                                     const LaunchPlan& plan);

}  // namespace gl
