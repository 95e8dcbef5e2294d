// SPDX-License-Identifier: Apache-2.0
#pragma once
// An engine from an OCI image (engine.image): the `podman run` that `run` starts in place of a
// venv's program, followed by the engine's own argv (catalog/containers says why each flag).
// The container's --user is the engine's account, which only the node knows: `run` adds it at
// start (container_user_argument), so the unit reads the same on every node.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plan/launch_plan.hpp"
#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

// podman run ... IMAGE, without --user: the assigned GPUs as CDI devices, container_environment by
// value, the API key's variable by name (`run` sets it from its credential), the cache root, the
// engine's home, caches kept elsewhere and a local model mounted at their own paths.
std::vector<std::string> container_command(const Profile& profile, const LaunchPlan& plan);

// What the container's engine gets, each by value in podman's command (--env=NAME=VALUE), never
// through the unit's environment, which is root's (unit/unit_environment's
// container_unit_environment): the plan's environment, the profile's [env] included, less what
// is the host's alone (catalog/pinned_variables), then each [secrets] entry's NAME_PATH.
// `gpulaunch env` prints it for an image profile.
std::vector<std::pair<std::string, std::string>> container_environment(const Profile& profile,
                                                                       const LaunchPlan& plan);

// The value the container command `argv` gives the container's variable `name` (its
// --env=NAME=VALUE before the image), or nullptr: `run` reads the caches it meters from there.
// The pointer is into `argv`'s word.
const char* container_variable(const std::vector<std::string>& argv, std::string_view name);

// The host paths the container command `argv` bind-mounts (each --volume=SOURCE:...), which root's
// podman resolves at every start: `check` and `run` refuse one a non-root user could replace
// (util/safe_file's replaceable_reason).
std::vector<std::string> container_mount_sources(const std::vector<std::string>& argv);

// Whether `name` is the host's alone and never reaches the container (catalog/containers).
bool container_host_only(std::string_view name);

// The container command `argv` (after step-down) with --user=UID:GID after "podman run": what
// `run` starts. Refused when `argv` is not a container command.
Result<std::vector<std::string>> with_container_user(std::vector<std::string> argv, unsigned uid,
                                                     unsigned gid);

}  // namespace gl
