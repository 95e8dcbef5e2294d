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

// engine.image: what the unit's own processes get (`run` and podman, both root; the container
// gets the engine's variables from podman by name, plan/container_command). The engine's, minus
// the host-only ones (catalog/containers), with root's PATH and HOME: root's podman reads its
// configuration under $HOME and finds conmon and the OCI runtime on $PATH, so neither may name a
// place the engine can write.
std::vector<UnitVariable> container_unit_environment(const Profile& profile,
                                                     const LaunchPlan& plan);

}  // namespace gl
