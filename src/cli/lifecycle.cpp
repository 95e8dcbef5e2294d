// SPDX-License-Identifier: Apache-2.0
#include "cli/lifecycle.hpp"

#include <fmt/core.h>

#include "gpulaunch_version.hpp"
#include "unit/render.hpp"

namespace gl {

std::string own_binary() {
  std::error_code error;
  auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("/usr/bin/gpulaunch") : self.string();
}

Result<void> startable(const Profile& profile, ManagerScope scope) {
  if (profile.engine.image && scope == ManagerScope::user)
    return failf(
        "Failed to start profile '{}' under the user manager: engine.image runs under rootful "
        "podman; bring it up with the system manager (without --user)",
        profile.name);
  return {};
}

std::string render_for_install(const Profile& profile, const LaunchPlan& plan, ManagerScope scope) {
  RenderOptions options;
  options.user_manager = scope == ManagerScope::user;
  options.gpulaunch_binary = own_binary();
  options.version = GPULAUNCH_VERSION;
  return render_unit(profile, plan, options).to_text();
}

}  // namespace gl
