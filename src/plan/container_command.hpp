// SPDX-License-Identifier: Apache-2.0
#pragma once
// An engine from an OCI image (engine.image): the `podman run` that `run` starts in place of a
// venv's program, followed by the engine's own argv (catalog/containers says why each flag).
// The container's --user is the engine's account, which only the node knows: `run` adds it at
// start (container_user_argument), so the unit reads the same on every node.

#include <string>
#include <string_view>
#include <vector>

#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

// podman run ... IMAGE, without --user: the assigned GPUs as CDI devices, the plan's environment by
// name (minus what only the host's engines use), the cache root, the engine's home, caches kept
// elsewhere and a local model mounted at their own paths.
std::vector<std::string> container_command(const Profile& profile, const LaunchPlan& plan);

// Whether `name` is the host's alone and never reaches the container (catalog/containers).
bool container_host_only(std::string_view name);

// Whether the container gets `name` by value in its command rather than from the unit's
// environment, which holds root's (catalog/containers).
bool container_by_value(std::string_view name);

// The container command `argv` (after step-down) with --user=UID:GID after "podman run": what
// `run` starts. Refused when `argv` is not a container command.
Result<std::vector<std::string>> with_container_user(std::vector<std::string> argv, unsigned uid,
                                                     unsigned gid);

}  // namespace gl
